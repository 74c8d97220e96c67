//! Errors with stable codes, shared by every binding.

use std::fmt;

/// Defines [`ErrorCode`], its strings and [`ErrorCode::ALL`] from one list,
/// the single source the bindings' lists are checked against
/// (`tests/error_codes.rs`: the WIT enum, the TypeScript union, docs/errors.md).
macro_rules! error_codes {
    ($($(#[doc = $doc:literal])* $variant:ident => $code:literal,)*) => {
        /// A stable, machine-readable error code. The JS binding exposes it as
        /// `error.code` and the component binding as the `code` of its error record, so
        /// hosts can branch on it without parsing messages.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[doc = $doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The code as the stable upper-snake-case string used by every binding.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $code,)*
                }
            }

            /// The code whose string is `code`, if there is one.
            pub fn parse(code: &str) -> Option<ErrorCode> {
                ErrorCode::ALL.iter().copied().find(|c| c.as_str() == code)
            }
        }
    };
}

error_codes! {
    /// A token budget that is zero, negative or not a number.
    InvalidBudget => "INVALID_BUDGET",
    /// A token count or estimate that is negative, fractional or not a number.
    InvalidTokenCount => "INVALID_TOKEN_COUNT",
    /// Any other argument that does not have the documented shape.
    InvalidArgument => "INVALID_ARGUMENT",
    /// Data that cannot be represented as JSON (functions, cycles, NaN, ...).
    NotSerializable => "NOT_SERIALIZABLE",
    /// A session export that cannot be imported; the message names the field.
    InvalidSessionImport => "INVALID_SESSION_IMPORT",
    /// A JSON Schema that cannot be compiled (or a resource that cannot be added).
    InvalidSchema => "INVALID_SCHEMA",
    /// A stored artifact whose content no longer hashes to its id.
    ArtifactIntegrity => "ARTIFACT_INTEGRITY",
    /// A stored artifact is missing one of its chunks; it is never returned
    /// truncated.
    ArtifactIncomplete => "ARTIFACT_INCOMPLETE",
    /// An artifact store backend failed.
    StoreFailed => "STORE_FAILED",
    /// The backend refused a write for lack of space (IndexedDB's
    /// `QuotaExceededError`); nothing of the write was kept.
    StoreQuotaExceeded => "STORE_QUOTA_EXCEEDED",
    /// The database cannot be opened or upgraded while another connection
    /// holds it open at an older version.
    StoreBlocked => "STORE_BLOCKED",
    /// The database connection was closed (deleted, upgraded elsewhere, or
    /// closed by the browser or by `close()`).
    StoreClosed => "STORE_CLOSED",
    /// The backend does not exist in this host (e.g. IndexedDB in Node).
    StoreUnavailable => "STORE_UNAVAILABLE",
    /// The backend cannot do what was asked (e.g. listing on a key-value store
    /// without `list`).
    StoreUnsupported => "STORE_UNSUPPORTED",
    /// A key-value store returned a value of a type it must not return.
    StoreInvalidValue => "STORE_INVALID_VALUE",
    /// Stored data is malformed (a record that does not parse, a session
    /// segment that does not match its digest, a missing segment).
    StoreCorrupt => "STORE_CORRUPT",
    /// A saved session changed under a save (another writer saved it since
    /// the save read its head); nothing was overwritten.
    StoreConflict => "STORE_CONFLICT",
    /// A backend operation did not settle within the store's timeout.
    StoreTimeout => "STORE_TIMEOUT",
    /// A memory store backend failed.
    MemoryFailed => "MEMORY_FAILED",
    /// A context processor failed; the message names the processor.
    ProcessorFailed => "PROCESSOR_FAILED",
    /// The budget cannot hold even an empty context.
    BudgetTooSmall => "BUDGET_TOO_SMALL",
    /// The session is borrowed by a running compile and cannot be changed now.
    SessionBusy => "SESSION_BUSY",
    /// An event-bus handler (or persister, or a run's `onDelta`) threw or
    /// rejected; the message names it.
    HandlerFailed => "HANDLER_FAILED",
    /// An event-bus handler did not settle within the bus's handler timeout.
    HandlerTimeout => "HANDLER_TIMEOUT",
    /// The turn runner's model threw, rejected or gave a reply that is not
    /// text or tool calls.
    ModelFailed => "MODEL_FAILED",
    /// A token counter the host supplied threw or did not answer a
    /// non-negative number; the call that counted was not carried out.
    TokenCounterFailed => "TOKEN_COUNTER_FAILED",
    /// The turn runner's input guard threw, rejected or gave no decision.
    GuardFailed => "GUARD_FAILED",
    /// A run was cancelled through its abort signal; what it recorded stays.
    Aborted => "ABORTED",
    /// Stored data written by a newer version of the library (a session
    /// head or SQL schema of a higher version than this one reads); nothing
    /// was read or written. The message names both versions.
    StoreVersion => "STORE_VERSION",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The library's error: a stable [`ErrorCode`] and a human-readable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

/// The one of `all` whose name (`name_of`) is `given`; otherwise
/// [`ErrorCode::InvalidArgument`] saying that `what` must be one of their
/// names, all listed.
pub(crate) fn one_of<T: Copy>(
    all: &[T],
    name_of: fn(T) -> &'static str,
    given: &str,
    what: &str,
) -> Result<T> {
    all.iter()
        .copied()
        .find(|v| name_of(*v) == given)
        .ok_or_else(|| {
            let names: Vec<String> = all.iter().map(|v| format!("{:?}", name_of(*v))).collect();
            let listed = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
                _ => names.join(""),
            };
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{what} must be {listed} (got {given:?})"),
            )
        })
}

impl Error {
    /// Creates an error with the given code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The human-readable message of this error.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Returns the same error with `prefix: ` put before its message.
    pub fn context(self, prefix: impl fmt::Display) -> Self {
        Error {
            code: self.code,
            message: format!("{prefix}: {}", self.message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for Error {}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;
