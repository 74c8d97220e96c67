//! The evidence pack view of a session.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::kinds::{
    GUARD_DECISION, MEMORY_HIT, TOOL_CALL, TOOL_ERROR, TOOL_TIMEOUT, USER_INPUT,
};

/// One evidence entry: what happened, in which phase, with what data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct EvidenceEntry {
    /// The event's timestamp in milliseconds.
    pub timestamp: f64,
    /// The session event kind that produced this entry.
    pub phase: String,
    /// The evidence kind (`input`, `source`, `tool_call`, `output`, `error`, `decision`).
    pub kind: String,
    /// The event's data.
    #[cfg_attr(test, ts(as = "crate::typescript::Json"))]
    pub data: Value,
}

/// The evidence of a session, in the EvidencePack shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct EvidencePack {
    /// The session this evidence belongs to.
    pub session_id: String,
    /// One entry per session event, in order.
    pub entries: Vec<EvidenceEntry>,
}

/// Maps a session event kind to its evidence kind; unknown
/// kinds are `output`.
pub fn evidence_kind(kind: &str) -> &'static str {
    match kind {
        USER_INPUT => "input",
        MEMORY_HIT => "source",
        TOOL_CALL => "tool_call",
        TOOL_ERROR | TOOL_TIMEOUT => "error",
        GUARD_DECISION => "decision",
        _ => "output",
    }
}
