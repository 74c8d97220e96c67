//! Sessions feeding the bus: a session observer
//! that emits `message_received` for each `user_input` and `turn_completed`
//! for each `assistant_output`, carrying the text, the episode and the user.

use std::rc::Rc;

use serde_json::{json, Map, Value};

use super::{BusEvent, EventBus};
use crate::session::render::data_text;
use crate::session::{SessionEvent, SessionObserver, ASSISTANT_OUTPUT, USER_INPUT};

/// Who a fed session's events are about.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedOptions {
    /// The agent on the events (`agent` when empty).
    pub agent_id: String,
    /// The user, as `user_id` (phase I).
    pub user_id: Option<String>,
    /// The user's display name, as `user_display_name`.
    pub user_display_name: Option<String>,
    /// The episode, as `episode_id` (the monitor defaults it to the session id).
    pub episode_id: Option<String>,
}

/// The text of a conversation event: a string as is, else its `text` or
/// `content` field, else the payload as JSON.
fn text_of(data: &Value) -> String {
    ["text", "content"]
        .iter()
        .find_map(|k| data.get(*k).and_then(Value::as_str))
        .map(str::to_string)
        .unwrap_or_else(|| data_text(data).into_owned())
}

/// The bus event a session event feeds, if any: `message_received` for a
/// `user_input`, `turn_completed` for an `assistant_output`, stamped with
/// the session event's time.
pub fn feed_event(
    options: &FeedOptions,
    session_id: &str,
    event: &SessionEvent,
) -> Option<BusEvent> {
    let (event_type, text_key) = match event.kind.as_str() {
        USER_INPUT => ("message_received", "text"),
        ASSISTANT_OUTPUT => ("turn_completed", "response"),
        _ => return None,
    };
    let mut data = Map::new();
    data.insert(text_key.into(), json!(text_of(&event.data)));
    data.insert("event_id".into(), json!(event.event_id));
    for (key, value) in [
        ("user_id", &options.user_id),
        ("user_display_name", &options.user_display_name),
        ("episode_id", &options.episode_id),
    ] {
        if let Some(v) = value {
            data.insert(key.into(), json!(v));
        }
    }
    let agent = if options.agent_id.is_empty() {
        "agent"
    } else {
        options.agent_id.as_str()
    };
    Some(BusEvent::new(
        event_type,
        agent,
        Some(session_id.to_string()),
        data,
        event.timestamp,
    ))
}

/// An observer that feeds `bus` from a session (set it with
/// [`crate::Session::set_observer`]). Only user input and assistant output
/// are emitted (see [`feed_event`]); a full queue drops the event as any
/// emit does.
pub fn session_feed(bus: &EventBus, options: FeedOptions) -> SessionObserver {
    let bus = bus.clone();
    Rc::new(move |session_id: &str, event: &SessionEvent| {
        if let Some(e) = feed_event(&options, session_id, event) {
            bus.emit(e);
        }
    })
}
