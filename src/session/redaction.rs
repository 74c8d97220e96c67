//! What recording redacts: the fields of tool events that hold what a tool
//! returned or was given, whichever way they were recorded.

use serde_json::Value;

use crate::normalize::redact::{redact, redact_json};
use crate::session::kinds::{
    APPROVAL_DECIDED, APPROVAL_REQUESTED, TOOL_CALL, TOOL_ERROR, TOOL_SUCCESS, TOOL_TIMEOUT,
};

/// How [`crate::Session::record_with`] records an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordOptions {
    /// The event's token estimate; `None`: the session's counter counts it
    /// (after redaction).
    pub token_estimate: Option<u64>,
    /// Redact secrets in a tool event's output, error and arguments before
    /// it is recorded (see [`redact_event_data`]); default `true`. A caller
    /// that redacted them itself (the tool handler does) turns it off.
    pub redact: bool,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            token_estimate: None,
            redact: true,
        }
    }
}

impl RecordOptions {
    /// The default options with `token_estimate`.
    pub fn estimate(token_estimate: Option<u64>) -> Self {
        RecordOptions {
            token_estimate,
            ..RecordOptions::default()
        }
    }
}

/// The fields of a `kind` event that hold a tool's output, error or
/// arguments: every name the renderers read them by, and the summary shown
/// for an externalised output. Empty for other kinds.
fn tool_fields(kind: &str) -> &'static [&'static str] {
    match kind {
        TOOL_SUCCESS => &["result", "output", "summary"],
        TOOL_ERROR | TOOL_TIMEOUT => &["error", "message", "summary"],
        TOOL_CALL | APPROVAL_REQUESTED => &["arguments", "args", "input"],
        APPROVAL_DECIDED => &["arguments", "original_arguments", "reason"],
        _ => &[],
    }
}

/// Redacts secrets in a tool event's data, in place, as the tool handler
/// redacts what it records: `tool_success`'s result, `tool_error`'s and
/// `tool_timeout`'s error, `tool_call`'s arguments, an approval's arguments and reason (texts by the text rules,
/// JSON values by the JSON rules, which also look at keys), and the whole
/// data when it is a bare string. Other kinds are left as they are.
/// Returns how many secrets were redacted (0: the data is unchanged).
pub fn redact_event_data(kind: &str, data: &mut Value) -> usize {
    let fields = tool_fields(kind);
    if fields.is_empty() {
        return 0;
    }
    match data {
        Value::Object(map) => {
            let mut found = 0;
            for field in fields {
                if let Some(value) = map.get_mut(*field) {
                    found += redact_value(value);
                }
            }
            found
        }
        other => redact_value(other),
    }
}

/// Redacts `value`: a string by the text rules, anything else by the JSON
/// rules; how many secrets.
fn redact_value(value: &mut Value) -> usize {
    match value {
        Value::String(text) => {
            let redacted = redact(text);
            let found = redacted.findings.len();
            if found > 0 {
                *text = redacted.text;
            }
            found
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        other => redact_json(other).len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOKEN: &str = "sk-proj-4fGh8JkL2mN6pQ9rStUvWxYz0123456789abcdefAB";

    #[test]
    fn tool_fields_are_redacted_and_others_kept() {
        let mut success =
            json!({"tool": "env", "result": format!("OPENAI_API_KEY={TOKEN}"), "note": TOKEN});
        assert_eq!(redact_event_data(TOOL_SUCCESS, &mut success), 1);
        assert!(!success["result"].as_str().unwrap().contains(TOKEN));
        assert_eq!(success["note"], TOKEN, "only the tool's fields");
        let mut call =
            json!({"tool_name": "login", "arguments": {"api_key": "hunter2-very-secret"}});
        assert_eq!(redact_event_data(TOOL_CALL, &mut call), 1);
        assert_ne!(call["arguments"]["api_key"], "hunter2-very-secret");
        let mut error = json!(format!("failed with key {TOKEN}"));
        assert_eq!(redact_event_data(TOOL_ERROR, &mut error), 1);
        assert!(!error.as_str().unwrap().contains(TOKEN));
        let mut user = json!({"text": TOKEN});
        assert_eq!(redact_event_data("user_input", &mut user), 0);
        assert_eq!(user["text"], TOKEN);
        let mut clean = json!({"result": "all good", "output": 7});
        assert_eq!(redact_event_data(TOOL_SUCCESS, &mut clean), 0);
        assert_eq!(clean, json!({"result": "all good", "output": 7}));
    }
}
