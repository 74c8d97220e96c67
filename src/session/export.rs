//! Export and import of a whole session as JSON.
//!
//! The format is `{"format": SESSION_FORMAT, "version": 1, "sessionId": ...,
//! "events": [...]}`. Export then import then export gives the same bytes.
//! Import checks everything before building anything: a malformed document is
//! an error naming the offending field, never a partial session.

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;

use serde_json::{Map, Value};

use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::session::log::{EventLog, SessionEvent};
use crate::session::usage::MAX_SAFE_INTEGER;
use crate::session::Session;
use crate::tokens::TokenCounter;

/// The `format` tag of a session export.
pub const SESSION_FORMAT: &str = "agent-context-compiler/session";
const VERSION: u64 = 1;
/// The latest instant a JavaScript `Date` holds (year 275760), in ms: a
/// later timestamp would pin every event recorded after the import.
const MAX_TIMESTAMP_MS: f64 = 8.64e15;

fn invalid(path: &str, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::InvalidSessionImport, format!("{path}: {what}"))
}

impl Session {
    /// Exports the whole session as compact JSON.
    pub fn export_json(&self) -> String {
        let doc = serde_json::json!({
            "format": SESSION_FORMAT,
            "version": VERSION,
            "sessionId": self.session_id,
            "events": self.event_log.all_events(),
        });
        doc.to_string()
    }

    /// Imports a session exported by [`Session::export_json`], with the given
    /// clock, token counter and id seed for the events appended afterwards.
    pub fn import_json(
        json: &str,
        clock: Rc<dyn Clock>,
        counter: Rc<dyn TokenCounter>,
        seed: u64,
    ) -> Result<Session> {
        let doc: Value = serde_json::from_str(json)
            .map_err(|e| invalid("$", format!("not valid JSON ({e})")))?;
        let root = doc
            .as_object()
            .ok_or_else(|| invalid("$", "expected an object"))?;
        check_keys(root, "$", &["format", "version", "sessionId", "events"])?;
        match root.get("format").and_then(Value::as_str) {
            Some(SESSION_FORMAT) => {}
            _ => {
                return Err(invalid(
                    "$.format",
                    format!("expected \"{SESSION_FORMAT}\""),
                ))
            }
        }
        match root.get("version").and_then(Value::as_u64) {
            Some(VERSION) => {}
            _ => {
                return Err(invalid(
                    "$.version",
                    format!("unsupported version (expected {VERSION})"),
                ))
            }
        }
        let session_id = match root.get("sessionId").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => id.to_string(),
            _ => return Err(invalid("$.sessionId", "expected a non-empty string")),
        };
        if let Err(e) = crate::session::check_session_id(&session_id) {
            return Err(invalid("$.sessionId", e.message()));
        }
        let raw_events = root
            .get("events")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid("$.events", "expected an array"))?;

        let events = parse_events(raw_events, "$.events")?;
        Session::from_events(session_id, events, clock, counter, seed)
    }

    /// A session with the given id and events (already validated, e.g. by a
    /// store that kept them), with the given clock, token counter and id seed
    /// for the events appended afterwards.
    /// Fails when the token counter cannot count them.
    pub(crate) fn from_events(
        session_id: String,
        events: Vec<SessionEvent>,
        clock: Rc<dyn Clock>,
        counter: Rc<dyn TokenCounter>,
        seed: u64,
    ) -> Result<Session> {
        let mut log = EventLog::with_env(clock, counter, seed);
        for event in events {
            let estimate = event.token_estimate;
            log.push(event, Some(estimate))?;
        }
        log.resume_ids_after_import();
        Ok(Session {
            session_id,
            event_log: log,
            observer: None,
            recall: Default::default(),
            last_compiled_tokens: Cell::default(),
            saved_prefix: Cell::default(),
            sync_pace: Cell::default(),
        })
    }
}

/// Parses and checks a list of exported events: every field's shape, unique
/// ids, timestamps that never decrease. Errors name `path[i].field`.
pub fn parse_events(raw_events: &[Value], path: &str) -> Result<Vec<SessionEvent>> {
    let mut events = Vec::with_capacity(raw_events.len());
    let mut ids = HashSet::with_capacity(raw_events.len());
    let mut last_ts = 0.0f64;
    for (i, raw) in raw_events.iter().enumerate() {
        let path = format!("{path}[{i}]");
        let event = parse_event(raw, &path)?;
        if !ids.insert(event.event_id.clone()) {
            return Err(invalid(&format!("{path}.eventId"), "duplicate event id"));
        }
        if event.timestamp < last_ts {
            return Err(invalid(
                &format!("{path}.timestamp"),
                "timestamps must not decrease along the log",
            ));
        }
        last_ts = event.timestamp;
        events.push(event);
    }
    Ok(events)
}

fn check_keys(obj: &Map<String, Value>, path: &str, allowed: &[&str]) -> Result<()> {
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(invalid(path, format!("unknown field \"{key}\"")));
        }
    }
    for key in allowed {
        if !obj.contains_key(*key) {
            return Err(invalid(path, format!("missing field \"{key}\"")));
        }
    }
    Ok(())
}

fn parse_event(raw: &Value, path: &str) -> Result<SessionEvent> {
    let obj = raw
        .as_object()
        .ok_or_else(|| invalid(path, "expected an object"))?;
    check_keys(
        obj,
        path,
        &["eventId", "timestamp", "kind", "data", "tokenEstimate"],
    )?;
    let event_id = match obj.get("eventId").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => {
            return Err(invalid(
                &format!("{path}.eventId"),
                "expected a non-empty string",
            ))
        }
    };
    let timestamp = match obj.get("timestamp").and_then(Value::as_f64) {
        Some(t) if (0.0..=MAX_TIMESTAMP_MS).contains(&t) => t,
        _ => {
            return Err(invalid(
                &format!("{path}.timestamp"),
                "expected milliseconds since the epoch, from 0 to 8.64e15 (the range of a JavaScript Date)",
            ))
        }
    };
    let kind = match obj.get("kind").and_then(Value::as_str) {
        Some(k) if !k.is_empty() => k.to_string(),
        _ => {
            return Err(invalid(
                &format!("{path}.kind"),
                "expected a non-empty string",
            ))
        }
    };
    let token_estimate = match obj.get("tokenEstimate").and_then(Value::as_u64) {
        Some(t) if t <= MAX_SAFE_INTEGER => t,
        _ => {
            return Err(invalid(
                &format!("{path}.tokenEstimate"),
                "expected a non-negative integer",
            ))
        }
    };
    Ok(SessionEvent {
        event_id,
        timestamp,
        kind,
        data: obj.get("data").cloned().unwrap_or(Value::Null),
        token_estimate,
    })
}
