//! The host's side of a tool call.

use async_trait::async_trait;
use serde_json::Value;

use crate::tools::AbortSignal;

/// What a tool returned: text, or any JSON value (serialised before
/// normalisation).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// Raw text (JSON text is parsed by the normaliser).
    Text(String),
    /// A structured value.
    Json(Value),
}

impl ToolOutput {
    /// The output as text: JSON values serialised.
    pub fn into_text(self) -> String {
        match self {
            ToolOutput::Text(s) => s,
            ToolOutput::Json(v) => v.to_string(),
        }
    }
}

/// Why a tool call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolFailure {
    /// The tool failed (threw, rejected, returned an error); the message.
    Failed(String),
    /// The bridge itself enforced the deadline and gave up (a host that runs
    /// the tool synchronously, such as a wasmtime host); the message. The
    /// handler records it as a `tool_timeout`, like its own deadline.
    TimedOut(String),
}

impl From<String> for ToolFailure {
    fn from(message: String) -> Self {
        ToolFailure::Failed(message)
    }
}

/// Executes tools for the handler (an MCP client, a function table, a host
/// import...). Single-threaded: no `Send` bound.
#[async_trait(?Send)]
pub trait ToolBridge {
    /// Runs `name` with `arguments`. `signal` is raised when the handler
    /// gives up (timeout): a well-behaved tool stops then. `deadline_ms` is
    /// the call's timeout, for bridges that enforce it themselves.
    async fn execute(
        &self,
        name: &str,
        arguments: &Value,
        signal: &AbortSignal,
        deadline_ms: f64,
    ) -> Result<ToolOutput, ToolFailure>;
}
