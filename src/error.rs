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
    /// An artifact store backend failed.
    StoreFailed,
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
            ErrorCode::StoreFailed => "STORE_FAILED",
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
