//! The WebAssembly component (target `wasm32-wasip2`): only glue between
//! the WIT worlds in `wit/` and the core's public API. Built as it is, it is
//! the world `context-compiler`; with the `runner` feature, the world
//! `context-compiler-runner` (everything, and the turn runner calling the
//! host's model). The host's imports are synchronous, so the core's async
//! traits are driven by a trivial block-on.
#![deny(unsafe_code)]

mod artifact_store;
mod bus;
mod compiler;
mod context_window;
mod exec;
mod host;
mod normalizer;
#[cfg(feature = "runner")]
mod runner;
mod session_store;
mod sessions;
mod tools;

/// The code wit-bindgen generates from `wit/` (the only unsafe code in the
/// crate: the canonical ABI's lifting and lowering). Both worlds give the
/// interfaces they share the same paths.
#[allow(unsafe_code, missing_docs, clippy::all)]
mod bindings {
    #[cfg(not(feature = "runner"))]
    wit_bindgen::generate!({
        world: "context-compiler",
        path: "../../wit",
    });
    #[cfg(feature = "runner")]
    wit_bindgen::generate!({
        world: "context-compiler-runner",
        path: "../../wit",
    });

    use super::Component;
    export!(Component);
}

use bindings::exports::agent::context_compiler::types::{Error as WitError, ErrorCode as WitCode};

use context_compiler::error::{Error, ErrorCode};

/// The component's implementation of every exported interface.
struct Component;

/// Lets `?` turn a core error into the WIT error (see [`wit_error`]).
impl From<Error> for WitError {
    fn from(e: Error) -> WitError {
        wit_error(e)
    }
}

/// The WIT error of a core error: the same code, the same message.
pub(crate) fn wit_error(e: Error) -> WitError {
    let code = match e.code() {
        ErrorCode::InvalidBudget => WitCode::InvalidBudget,
        ErrorCode::InvalidTokenCount => WitCode::InvalidTokenCount,
        ErrorCode::InvalidArgument => WitCode::InvalidArgument,
        ErrorCode::NotSerializable => WitCode::NotSerializable,
        ErrorCode::InvalidSessionImport => WitCode::InvalidSessionImport,
        ErrorCode::InvalidSchema => WitCode::InvalidSchema,
        ErrorCode::ArtifactIntegrity => WitCode::ArtifactIntegrity,
        ErrorCode::ArtifactIncomplete => WitCode::ArtifactIncomplete,
        ErrorCode::StoreFailed => WitCode::StoreFailed,
        ErrorCode::StoreQuotaExceeded => WitCode::StoreQuotaExceeded,
        ErrorCode::StoreBlocked => WitCode::StoreBlocked,
        ErrorCode::StoreClosed => WitCode::StoreClosed,
        ErrorCode::StoreUnavailable => WitCode::StoreUnavailable,
        ErrorCode::StoreUnsupported => WitCode::StoreUnsupported,
        ErrorCode::StoreInvalidValue => WitCode::StoreInvalidValue,
        ErrorCode::StoreCorrupt => WitCode::StoreCorrupt,
        ErrorCode::StoreConflict => WitCode::StoreConflict,
        ErrorCode::StoreTimeout => WitCode::StoreTimeout,
        ErrorCode::MemoryFailed => WitCode::MemoryFailed,
        ErrorCode::ProcessorFailed => WitCode::ProcessorFailed,
        ErrorCode::BudgetTooSmall => WitCode::BudgetTooSmall,
        ErrorCode::SessionBusy => WitCode::SessionBusy,
        ErrorCode::HandlerFailed => WitCode::HandlerFailed,
        ErrorCode::HandlerTimeout => WitCode::HandlerTimeout,
        ErrorCode::ModelFailed => WitCode::ModelFailed,
        ErrorCode::TokenCounterFailed => WitCode::TokenCounterFailed,
        ErrorCode::GuardFailed => WitCode::GuardFailed,
        ErrorCode::Aborted => WitCode::Aborted,
        ErrorCode::StoreVersion => WitCode::StoreVersion,
    };
    WitError {
        code,
        message: e.message().to_string(),
    }
}

/// Parses a JSON argument; malformed JSON is `invalid-argument` naming it.
pub(crate) fn parse_json(text: &str, what: &str) -> Result<serde_json::Value, Error> {
    serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{what} is not valid JSON ({e})"),
        )
    })
}

/// Serialises a result document (the core's types always serialise).
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String, WitError> {
    context_compiler::json_text::to_json_text(value)
        .map_err(|e| wit_error(Error::new(ErrorCode::NotSerializable, e.to_string())))
}
