//! Errors with stable codes, shared by every binding.

use std::fmt;

/// A stable, machine-readable error code. The JS binding exposes it as
/// `error.code` and the component binding as the `code` of its error record, so
/// hosts can branch on it without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// A token budget that is zero, negative or not a number.
    InvalidBudget,
    /// A token count or estimate that is negative, fractional or not a number.
    InvalidTokenCount,
    /// Any other argument that does not have the documented shape.
    InvalidArgument,
    /// Data that cannot be represented as JSON (functions, cycles, NaN, ...).
    NotSerializable,
    /// A session export that cannot be imported; the message names the field.
    InvalidSessionImport,
    /// A JSON Schema that cannot be compiled (or a resource that cannot be added).
    InvalidSchema,
    /// A stored artifact whose content no longer hashes to its id.
    ArtifactIntegrity,
    /// A stored artifact is missing one of its chunks; it is never returned
    /// truncated.
    ArtifactIncomplete,
    /// An artifact store backend failed.
    StoreFailed,
    /// The backend refused a write for lack of space (IndexedDB's
    /// `QuotaExceededError`); nothing of the write was kept.
    StoreQuotaExceeded,
    /// The database cannot be opened or upgraded while another connection
    /// holds it open at an older version.
    StoreBlocked,
    /// The database connection was closed (deleted, upgraded elsewhere, or
    /// closed by the browser or by `close()`).
    StoreClosed,
    /// The backend does not exist in this host (e.g. IndexedDB in Node).
    StoreUnavailable,
    /// The backend cannot do what was asked (e.g. listing on a key-value store
    /// without `list`).
    StoreUnsupported,
    /// A key-value store returned a value of a type it must not return.
    StoreInvalidValue,
    /// Stored data is malformed (a record that does not parse, a session
    /// segment that does not match its digest, a missing segment).
    StoreCorrupt,
    /// A saved session changed under a save (another writer saved it since
    /// the save read its head); nothing was overwritten.
    StoreConflict,
    /// A backend operation did not settle within the store's timeout.
    StoreTimeout,
    /// A memory store backend failed.
    MemoryFailed,
    /// A context processor failed; the message names the processor.
    ProcessorFailed,
    /// The budget cannot hold even an empty context.
    BudgetTooSmall,
    /// The session is borrowed by a running compile and cannot be changed now.
    SessionBusy,
}

impl ErrorCode {
    /// The code as the stable upper-snake-case string used by every binding.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidBudget => "INVALID_BUDGET",
            ErrorCode::InvalidTokenCount => "INVALID_TOKEN_COUNT",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::NotSerializable => "NOT_SERIALIZABLE",
            ErrorCode::InvalidSessionImport => "INVALID_SESSION_IMPORT",
            ErrorCode::InvalidSchema => "INVALID_SCHEMA",
            ErrorCode::ArtifactIntegrity => "ARTIFACT_INTEGRITY",
            ErrorCode::ArtifactIncomplete => "ARTIFACT_INCOMPLETE",
            ErrorCode::StoreFailed => "STORE_FAILED",
            ErrorCode::StoreQuotaExceeded => "STORE_QUOTA_EXCEEDED",
            ErrorCode::StoreBlocked => "STORE_BLOCKED",
            ErrorCode::StoreClosed => "STORE_CLOSED",
            ErrorCode::StoreUnavailable => "STORE_UNAVAILABLE",
            ErrorCode::StoreUnsupported => "STORE_UNSUPPORTED",
            ErrorCode::StoreInvalidValue => "STORE_INVALID_VALUE",
            ErrorCode::StoreCorrupt => "STORE_CORRUPT",
            ErrorCode::StoreConflict => "STORE_CONFLICT",
            ErrorCode::StoreTimeout => "STORE_TIMEOUT",
            ErrorCode::MemoryFailed => "MEMORY_FAILED",
            ErrorCode::ProcessorFailed => "PROCESSOR_FAILED",
            ErrorCode::BudgetTooSmall => "BUDGET_TOO_SMALL",
            ErrorCode::SessionBusy => "SESSION_BUSY",
        }
    }
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
