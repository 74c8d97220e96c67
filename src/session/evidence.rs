//! The seed's evidence pack view of a session.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One evidence entry: what happened, in which phase, with what data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidenceEntry {
    /// The event's timestamp in milliseconds.
    pub timestamp: f64,
    /// The session event kind that produced this entry.
    pub phase: String,
    /// The evidence kind (`input`, `source`, `tool_call`, `output`, `error`, `decision`).
    pub kind: String,
    /// The event's data.
    pub data: Value,
}

/// The evidence of a session, in the seed's EvidencePack shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidencePack {
    /// The session this evidence belongs to.
    pub session_id: String,
    /// One entry per session event, in order.
    pub entries: Vec<EvidenceEntry>,
}

/// Maps a session event kind to its evidence kind, as the seed does; unknown
/// kinds are `output`.
pub fn evidence_kind(kind: &str) -> &'static str {
    match kind {
        "user_input" => "input",
        "memory_hit" => "source",
        "tool_call" => "tool_call",
        "tool_error" | "tool_timeout" => "error",
        "guard_decision" => "decision",
        _ => "output",
    }
}
