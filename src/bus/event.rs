//! The seed's `Event`: what flows through the bus.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An event on the bus: `{ type, agentId, sessionId, data, timestamp }` in
/// every binding. `data` keeps the seed's payload keys (`episode_id`,
/// `transcript`, `idle_seconds`, ...) as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BusEvent {
    /// The event type (`session_ended`, `turn_completed`, ...).
    #[serde(rename = "type")]
    pub event_type: String,
    /// The agent the event is about.
    pub agent_id: String,
    /// The session, when the event belongs to one.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The payload: a JSON object.
    #[serde(default)]
    pub data: Map<String, Value>,
    /// When it was emitted, in milliseconds since the Unix epoch.
    pub timestamp: f64,
}

impl BusEvent {
    /// An event stamped `timestamp` (ms).
    pub fn new(
        event_type: impl Into<String>,
        agent_id: impl Into<String>,
        session_id: Option<String>,
        data: Map<String, Value>,
        timestamp: f64,
    ) -> BusEvent {
        BusEvent {
            event_type: event_type.into(),
            agent_id: agent_id.into(),
            session_id,
            data,
            timestamp,
        }
    }
}
