//! How events appear in a compiled context: conversation turns become history
//! messages, tool outcomes become tool results or artifact references.

use serde_json::Value;

use crate::session::log::{
    ASSISTANT_OUTPUT, PHASE_RESULT, TOOL_ERROR, TOOL_SUCCESS, TOOL_TIMEOUT, USER_INPUT,
};
use crate::working_context::ArtifactRef;

/// The rendered form of an event that can enter a context.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rendered {
    /// A conversation turn.
    Message { role: String, content: String },
    /// A tool outcome shown inline.
    ToolOutcome { tool: String, result: String },
    /// A tool outcome already externalised (its data carries a handle).
    Artifact(ArtifactRef),
}

impl Rendered {
    /// The text whose tokens the event costs in a context.
    pub(crate) fn text(&self) -> &str {
        match self {
            Rendered::Message { content, .. } => content,
            Rendered::ToolOutcome { result, .. } => result,
            Rendered::Artifact(r) => &r.summary,
        }
    }
}

fn str_field<'a>(data: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| data.get(*k).and_then(Value::as_str))
}

/// The text of an arbitrary payload: a string as is, anything else as JSON.
pub(crate) fn data_text(data: &Value) -> String {
    match data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn field_text(data: &Value, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| data.get(*k))
        .filter(|v| !v.is_null())
        .map(data_text)
}

/// Renders an event for a context, or `None` for kinds that never enter one
/// (tool calls, guard decisions, artifact records, custom kinds).
pub(crate) fn render(kind: &str, data: &Value) -> Option<Rendered> {
    match kind {
        USER_INPUT | ASSISTANT_OUTPUT | PHASE_RESULT => {
            let default_role = if kind == USER_INPUT {
                "user"
            } else {
                "assistant"
            };
            let role = str_field(data, &["role"])
                .unwrap_or(default_role)
                .to_string();
            let content = match data {
                Value::String(s) => s.clone(),
                _ => field_text(data, &["content", "text"]).unwrap_or_else(|| data_text(data)),
            };
            Some(Rendered::Message { role, content })
        }
        TOOL_SUCCESS | TOOL_ERROR | TOOL_TIMEOUT => {
            let tool = str_field(data, &["tool", "tool_name", "toolName", "name"])
                .unwrap_or("unknown")
                .to_string();
            if kind == TOOL_SUCCESS {
                if let Some(handle) = str_field(data, &["handle", "artifact_id", "artifactId"]) {
                    return Some(Rendered::Artifact(ArtifactRef {
                        handle: handle.to_string(),
                        summary: str_field(data, &["summary"]).unwrap_or("").to_string(),
                        size_bytes: data.get("size_bytes").and_then(Value::as_u64).unwrap_or(0),
                        source: format!("tool:{tool}"),
                        event_id: None,
                        tokens: None,
                    }));
                }
            }
            let result = match kind {
                TOOL_SUCCESS => field_text(data, &["result", "output"]).unwrap_or_default(),
                TOOL_ERROR => format!(
                    "error: {}",
                    field_text(data, &["error", "message"])
                        .unwrap_or_else(|| "unknown error".into())
                ),
                _ => format!(
                    "timeout: {}",
                    field_text(data, &["error", "message"]).unwrap_or_else(|| "timed out".into())
                ),
            };
            Some(Rendered::ToolOutcome { tool, result })
        }
        _ => None,
    }
}

/// Reads an `artifact_stored` record that names the tool outcome it
/// externalised (`event_id`), as the [`crate::compiler::ArtifactAttacher`] writes it.
pub(crate) fn externalized_ref(data: &Value) -> Option<(String, ArtifactRef)> {
    let source_event = str_field(data, &["event_id"])?.to_string();
    let handle = str_field(data, &["handle"])?.to_string();
    Some((
        source_event.clone(),
        ArtifactRef {
            handle,
            summary: str_field(data, &["summary"]).unwrap_or("").to_string(),
            size_bytes: data.get("size_bytes").and_then(Value::as_u64).unwrap_or(0),
            source: str_field(data, &["source"]).unwrap_or("").to_string(),
            event_id: Some(source_event),
            tokens: None,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_take_role_and_content() {
        let r = render("user_input", &json!({"text": "hi"})).unwrap();
        assert_eq!(
            r,
            Rendered::Message {
                role: "user".into(),
                content: "hi".into()
            }
        );
        let r = render("phase_result", &json!({"content": "ok"})).unwrap();
        assert_eq!(
            r,
            Rendered::Message {
                role: "assistant".into(),
                content: "ok".into()
            }
        );
        let r = render("user_input", &json!("plain")).unwrap();
        assert_eq!(r.text(), "plain");
    }

    #[test]
    fn tool_outcomes_render_results_errors_and_timeouts() {
        let r = render("tool_success", &json!({"tool": "calc", "result": {"x": 1}})).unwrap();
        assert_eq!(
            r,
            Rendered::ToolOutcome {
                tool: "calc".into(),
                result: "{\"x\":1}".into()
            }
        );
        let r = render("tool_error", &json!({"tool_name": "f", "error": "boom"})).unwrap();
        assert_eq!(r.text(), "error: boom");
        let r = render("tool_timeout", &json!({"tool": "slow"})).unwrap();
        assert_eq!(r.text(), "timeout: timed out");
        assert!(render("tool_call", &json!({})).is_none());
    }
}
