//! Typed tool interaction events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::artifacts::ArtifactHandle;
use crate::clock::{Clock, IdRng};
use crate::normalize::aligner::NormalizedOutput;
use crate::session::{TOOL_CALL, TOOL_ERROR, TOOL_SUCCESS, TOOL_TIMEOUT};

/// The kind of a tool event (the CALL/SUCCESS/ERROR/TIMEOUT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ToolEventKind {
    /// The call started.
    #[serde(rename = "tool_call")]
    Call,
    /// The tool returned.
    #[serde(rename = "tool_success")]
    Success,
    /// The tool failed (threw, rejected, or the bridge failed).
    #[serde(rename = "tool_error")]
    Error,
    /// The tool did not answer before its deadline.
    #[serde(rename = "tool_timeout")]
    Timeout,
}

impl ToolEventKind {
    /// The session event kind string (`"tool_call"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolEventKind::Call => TOOL_CALL,
            ToolEventKind::Success => TOOL_SUCCESS,
            ToolEventKind::Error => TOOL_ERROR,
            ToolEventKind::Timeout => TOOL_TIMEOUT,
        }
    }
}

/// A typed tool interaction event (the fields, plus the artifact the
/// output was externalised to).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEvent {
    /// Time-sortable id (the id of the session event that recorded it, when recorded).
    pub event_id: String,
    /// Milliseconds since the epoch.
    pub timestamp: f64,
    /// What happened.
    pub kind: ToolEventKind,
    /// The tool's name.
    pub tool_name: String,
    /// The call's arguments.
    pub arguments: Value,
    /// The (redacted) output, on success.
    pub result: Option<String>,
    /// The failure's message, on error or timeout.
    pub error: Option<String>,
    /// Milliseconds from the call to its outcome.
    pub latency_ms: f64,
    /// The normalised output, on success.
    pub normalized: Option<NormalizedOutput>,
    /// Where the output was externalised, when it was large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<ArtifactHandle>,
}

/// The fields of [`ToolEvent::create`] (the keyword arguments).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolEventInit {
    /// What happened.
    pub kind: ToolEventKind,
    /// The tool's name.
    pub tool_name: String,
    /// The call's arguments (`{}` when absent).
    #[serde(default)]
    pub arguments: Option<Value>,
    /// The output, on success.
    #[serde(default)]
    pub result: Option<String>,
    /// The failure's message.
    #[serde(default)]
    pub error: Option<String>,
    /// Milliseconds from the call to its outcome.
    #[serde(default)]
    pub latency_ms: f64,
    /// The normalised output.
    #[serde(default)]
    pub normalized: Option<NormalizedOutput>,
}

impl ToolEvent {
    /// Creates an event stamped now, with a fresh time-sortable id.
    pub fn create(init: ToolEventInit, clock: &dyn Clock, rng: &mut IdRng) -> ToolEvent {
        let timestamp = clock.now_ms();
        let ms = if timestamp.is_finite() && timestamp > 0.0 {
            timestamp as u64
        } else {
            0
        };
        ToolEvent {
            event_id: format!("{ms:012x}-{:012x}", rng.next_u64() & 0xFFFF_FFFF_FFFF),
            timestamp,
            kind: init.kind,
            tool_name: init.tool_name,
            arguments: init
                .arguments
                .unwrap_or_else(|| Value::Object(Default::default())),
            result: init.result,
            error: init.error,
            latency_ms: init.latency_ms,
            normalized: init.normalized,
            artifact: None,
        }
    }
}
