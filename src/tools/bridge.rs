//! The host's side of a tool call.

use async_trait::async_trait;
use serde_json::Value;

use crate::media::sniff_mime;
use crate::tools::AbortSignal;

/// What a tool returned: text, or any JSON value (serialised before
/// normalisation).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// Raw text (JSON text is parsed by the normaliser).
    Text(String),
    /// A structured value.
    Json(Value),
    /// Bytes (a file read, a screenshot): text when they are UTF-8 (NUL
    /// bytes included: `/proc/<pid>/environ`, `find -print0`), normalised
    /// and redacted like any text; otherwise kept whole in the artifact
    /// store, never in a prompt (and never as base64).
    Bytes(Vec<u8>),
}

/// A tool's output once its bytes are told apart: text (or JSON) for the
/// normaliser, or binary content.
pub enum ToolContent {
    /// Text, to normalise.
    Text(String),
    /// Binary content and its sniffed MIME type.
    Binary {
        /// The bytes.
        bytes: Vec<u8>,
        /// The MIME type their first bytes say (`application/octet-stream`
        /// when they say nothing known).
        mime_type: &'static str,
    },
}

impl ToolOutput {
    /// The output as text or binary content: JSON values serialised, bytes
    /// that are UTF-8 as text (NUL bytes included: text that a tool
    /// separated with them is still text, and is redacted as such).
    pub fn into_content(self) -> ToolContent {
        match self {
            ToolOutput::Text(s) => ToolContent::Text(s),
            ToolOutput::Json(v) => ToolContent::Text(v.to_string()),
            ToolOutput::Bytes(bytes) => match String::from_utf8(bytes) {
                Ok(text) => ToolContent::Text(text),
                Err(e) => binary(e.into_bytes()),
            },
        }
    }
}

fn binary(bytes: Vec<u8>) -> ToolContent {
    let mime_type = sniff_mime(&bytes);
    ToolContent::Binary { bytes, mime_type }
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
