//! The `Event`: what flows through the bus.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};

/// An event on the bus: `{ type, agentId, sessionId, data, timestamp }` in
/// every binding. `data` keeps the payload keys (`episode_id`,
/// `transcript`, `idle_seconds`, ...) as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
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
    #[cfg_attr(test, ts(as = "crate::typescript::JsonObject"))]
    pub data: Map<String, Value>,
    /// When it was emitted, in milliseconds since the Unix epoch.
    pub timestamp: f64,
}

/// The error an event's `timestamp` that is not a finite number gets.
const BAD_TIMESTAMP: &str = "event.timestamp must be a finite number (ms since the Unix epoch)";

impl BusEvent {
    /// The `INVALID_ARGUMENT` error [`BusEvent::from_init`] returns for a
    /// `timestamp` that is not a finite number, for a binding that checks
    /// the number before its conversion to JSON (which has no infinities).
    pub fn bad_timestamp() -> Error {
        Error::new(ErrorCode::InvalidArgument, BAD_TIMESTAMP)
    }

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

    /// Reads what an emitter gives, `{ type, agentId, sessionId?, data?,
    /// timestamp? }` (`data` an object, `timestamp` in ms since the Unix
    /// epoch, by default `now`); anything else is
    /// [`ErrorCode::InvalidArgument`] naming the field.
    pub fn from_init(init: &Value, now: f64) -> Result<BusEvent> {
        let invalid = |m: &str| Error::new(ErrorCode::InvalidArgument, m.to_string());
        let object = init.as_object().ok_or_else(|| {
            invalid("the event must be an object { type, agentId, sessionId?, data? }")
        })?;
        let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_string);
        let event_type = text("type").ok_or_else(|| invalid("event.type must be a string"))?;
        let agent_id = text("agentId").ok_or_else(|| invalid("event.agentId must be a string"))?;
        let session_id = match object.get("sessionId") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(invalid("event.sessionId must be a string")),
        };
        let data = match object.get("data") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(d)) => d.clone(),
            Some(_) => return Err(invalid("event.data must be an object")),
        };
        let timestamp = match object.get("timestamp") {
            None | Some(Value::Null) => now,
            Some(t) => t
                .as_f64()
                .filter(|t| t.is_finite())
                .ok_or_else(|| invalid(BAD_TIMESTAMP))?,
        };
        Ok(BusEvent::new(
            event_type, agent_id, session_id, data, timestamp,
        ))
    }
}
