//! How events appear in a compiled context: conversation turns become history
//! messages, tool outcomes become tool results or artifact references.

use std::borrow::Cow;

use serde_json::Value;

use crate::artifacts::ArtifactRef;
use crate::json_text::member;
use crate::session::kinds::{
    ARTIFACT_STORED, ASSISTANT_OUTPUT, PHASE_RESULT, TOOL_ERROR, TOOL_SUCCESS, TOOL_TIMEOUT,
    USER_INPUT,
};
use crate::tokens::TokenCounter;

/// The rendered form of an event that can enter a context.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rendered<'a> {
    /// A conversation turn.
    Message {
        role: Cow<'a, str>,
        content: Cow<'a, str>,
    },
    /// A tool outcome shown inline.
    ToolOutcome {
        tool: Cow<'a, str>,
        result: Cow<'a, str>,
    },
    /// A tool outcome already externalised (its data carries a handle).
    Artifact(ArtifactRef),
}

impl Rendered<'_> {
    /// The text whose tokens the event costs in a context.
    pub(crate) fn text(&self) -> &str {
        match self {
            Rendered::Message { content, .. } => content,
            Rendered::ToolOutcome { result, .. } => result,
            Rendered::Artifact(r) => &r.summary,
        }
    }
}

impl<'a> Rendered<'a> {
    /// [`Rendered::text`], borrowed from the event's data where it is there.
    pub(crate) fn into_text(self) -> Cow<'a, str> {
        match self {
            Rendered::Message { content, .. } => content,
            Rendered::ToolOutcome { result, .. } => result,
            Rendered::Artifact(r) => Cow::Owned(r.summary),
        }
    }
}

fn str_field<'a>(data: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| member(data, k).and_then(Value::as_str))
}

/// The text of an arbitrary payload: a string as is, anything else as JSON.
pub(crate) fn data_text(data: &Value) -> Cow<'_, str> {
    match data {
        Value::String(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

fn field_text<'a>(data: &'a Value, keys: &[&str]) -> Option<Cow<'a, str>> {
    keys.iter()
        .find_map(|k| member(data, k))
        .filter(|v| !v.is_null())
        .map(data_text)
}

/// Renders an event for a context, or `None` for kinds that never enter one
/// (tool calls, guard decisions, artifact records, custom kinds).
pub(crate) fn render<'a>(kind: &str, data: &'a Value) -> Option<Rendered<'a>> {
    match kind {
        USER_INPUT | ASSISTANT_OUTPUT | PHASE_RESULT => {
            let default_role = if kind == USER_INPUT {
                "user"
            } else {
                "assistant"
            };
            let role = Cow::Borrowed(str_field(data, &["role"]).unwrap_or(default_role));
            let content = match data {
                Value::String(s) => Cow::Borrowed(s.as_str()),
                _ => field_text(data, &["content", "text"]).unwrap_or_else(|| data_text(data)),
            };
            Some(Rendered::Message { role, content })
        }
        TOOL_SUCCESS | TOOL_ERROR | TOOL_TIMEOUT => {
            let tool =
                str_field(data, &["tool", "tool_name", "toolName", "name"]).unwrap_or("unknown");
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
                TOOL_ERROR => Cow::Owned(format!(
                    "error: {}",
                    field_text(data, &["error", "message"])
                        .unwrap_or(Cow::Borrowed("unknown error"))
                )),
                _ => Cow::Owned(format!(
                    "timeout: {}",
                    field_text(data, &["error", "message"]).unwrap_or(Cow::Borrowed("timed out"))
                )),
            };
            Some(Rendered::ToolOutcome {
                tool: Cow::Borrowed(tool),
                result,
            })
        }
        _ => None,
    }
}

/// The `call_id` a tool outcome names.
pub(crate) fn call_id_of(data: &Value) -> Option<&str> {
    str_field(data, &["call_id", "callId", "tool_call_id"]).filter(|id| !id.is_empty())
}

/// The id a `tool_call` event's outcome names it by: the provider's id when
/// the call was recorded with one, else the event's own.
pub(crate) fn call_key<'a>(event_id: &'a str, data: &'a Value) -> &'a str {
    call_id_of(data).unwrap_or(event_id)
}

/// The tool name of a `tool_call` event.
pub(crate) fn call_name(data: &Value) -> &str {
    str_field(data, &["tool_name", "tool", "toolName", "name"]).unwrap_or("unknown")
}

/// The arguments of a `tool_call` event (`{}` when absent).
pub(crate) fn call_arguments(data: &Value) -> Value {
    ["arguments", "args", "input"]
        .iter()
        .find_map(|k| member(data, k))
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()))
}

/// An estimate of a `tool_call`'s tokens in a context: its name and arguments.
pub(crate) fn call_tokens(data: &Value, counter: &dyn TokenCounter) -> u64 {
    counter.count(call_name(data)) + counter.count(&call_arguments(data).to_string()) + 8
}

/// The tool name of an outcome event.
pub(crate) fn outcome_tool(data: &Value) -> &str {
    str_field(data, &["tool", "tool_name", "toolName", "name"]).unwrap_or("unknown")
}

/// The memory a pinned `memory_hit` event holds, `(key, content,
/// category)`: its `key` and `content` (both needed) and `category` (empty
/// when missing).
pub(crate) fn pinned_memory(data: &Value) -> Option<(&str, &str, &str)> {
    Some((
        str_field(data, &["key"])?,
        str_field(data, &["content"])?,
        str_field(data, &["category"]).unwrap_or(""),
    ))
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

/// The artifact ids the event `kind` with `data` names: its `handle` (an
/// `artifact_stored` record, an outcome externalised to a store), and the
/// artifacts of its image and file parts.
pub(crate) fn artifacts_named(kind: &str, data: &Value) -> Vec<String> {
    let mut named = Vec::new();
    if kind == ARTIFACT_STORED || matches!(kind, TOOL_SUCCESS | TOOL_ERROR | TOOL_TIMEOUT) {
        if let Some(handle) = str_field(data, &["handle", "artifact_id", "artifactId"]) {
            named.push(handle.to_string());
        }
    }
    if let Ok(parts) = crate::media::parts_of(data) {
        named.extend(parts.into_iter().filter_map(|p| p.artifact));
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_take_role_and_content() {
        let d1 = json!({"text": "hi"});
        let r = render("user_input", &d1).unwrap();
        assert_eq!(
            r,
            Rendered::Message {
                role: "user".into(),
                content: "hi".into()
            }
        );
        let d2 = json!({"content": "ok"});
        let r = render("phase_result", &d2).unwrap();
        assert_eq!(
            r,
            Rendered::Message {
                role: "assistant".into(),
                content: "ok".into()
            }
        );
        let d3 = json!("plain");
        let r = render("user_input", &d3).unwrap();
        assert_eq!(r.text(), "plain");
    }

    #[test]
    fn tool_outcomes_render_results_errors_and_timeouts() {
        let d4 = json!({"tool": "calc", "result": {"x": 1}});
        let r = render("tool_success", &d4).unwrap();
        assert_eq!(
            r,
            Rendered::ToolOutcome {
                tool: "calc".into(),
                result: "{\"x\":1}".into()
            }
        );
        let d5 = json!({"tool_name": "f", "error": "boom"});
        let r = render("tool_error", &d5).unwrap();
        assert_eq!(r.text(), "error: boom");
        let d6 = json!({"tool": "slow"});
        let r = render("tool_timeout", &d6).unwrap();
        assert_eq!(r.text(), "timeout: timed out");
        assert!(render("tool_call", &json!({})).is_none());
    }

    #[test]
    fn members_are_found_in_small_and_large_objects_alike() {
        for extra in [0, 7, 8, 40] {
            let mut data = serde_json::Map::new();
            for i in 0..extra {
                data.insert(format!("k{i}"), json!(i));
            }
            data.insert("content".into(), json!("found"));
            data.insert("role".into(), json!(7));
            let data = Value::Object(data);
            assert_eq!(member(&data, "content"), Some(&json!("found")), "{extra}");
            assert_eq!(member(&data, "absent"), None);
            assert_eq!(member(&data, "conten"), None);
            // A role that is not a string is not a role.
            assert_eq!(str_field(&data, &["role"]), None);
            assert_eq!(render("user_input", &data).unwrap().text(), "found");
        }
        assert_eq!(member(&json!(["content"]), "content"), None);
    }
}
