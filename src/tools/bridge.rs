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

/// Executes tools for the handler (an MCP client, a function table, a host
/// import...). Single-threaded: no `Send` bound.
#[async_trait(?Send)]
pub trait ToolBridge {
    /// Runs `name` with `arguments`. `signal` is raised when the handler
    /// gives up (timeout): a well-behaved tool stops then. An `Err` carries
    /// the failure's message.
    async fn execute(
        &self,
        name: &str,
        arguments: &Value,
        signal: &AbortSignal,
    ) -> Result<ToolOutput, String>;
}
