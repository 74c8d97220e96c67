//! The rules each provider checks a request against, as data: what
//! [`WorkingContext::to_provider_messages`](crate::WorkingContext::to_provider_messages)
//! renders must break none of them, whatever the session held (a greeting
//! first, whitespace-only replies, outcomes without their call, retried
//! calls, made-up tool names, oversized questions). The providers refuse a
//! request that breaks one; most peers learn these from their bug trackers.
//!
//! Each [`Violation`] names its rule (`anthropic.first_user`, ...), the JSON
//! pointer of what breaks it and why.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use crate::working_context::names::is_provider_name;
use crate::working_context::ProviderFormat;

/// Anthropic's limit on `cache_control` breakpoints in one request.
pub const ANTHROPIC_MAX_BREAKPOINTS: usize = 4;

/// A rule a request breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The rule, `<format>.<name>`.
    pub rule: &'static str,
    /// The JSON pointer of what breaks it.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Collects violations.
#[derive(Default)]
struct Report(Vec<Violation>);

impl Report {
    fn add(&mut self, rule: &'static str, path: String, message: impl Into<String>) {
        self.0.push(Violation {
            rule,
            path,
            message: message.into(),
        });
    }
}

fn has_text(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.trim().is_empty())
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// The rules `request`, in `format`'s shape, breaks (empty when it is one
/// the provider accepts).
pub fn check_request(request: &Value, format: ProviderFormat) -> Vec<Violation> {
    let mut r = Report::default();
    match format {
        ProviderFormat::OpenAi => openai(request, &mut r),
        ProviderFormat::Anthropic => anthropic(request, &mut r),
        ProviderFormat::AiSdk => ai_sdk(request, &mut r),
        ProviderFormat::Plain => plain(request, &mut r),
    }
    r.0
}

fn plain(request: &Value, r: &mut Report) {
    let Some(messages) = request.as_array() else {
        return r.add(
            "plain.shape",
            String::new(),
            "the request must be an array of messages",
        );
    };
    for (i, m) in messages.iter().enumerate() {
        if !m["role"].is_string() || !m["content"].is_string() {
            r.add(
                "plain.shape",
                format!("/{i}"),
                "a message is { role, content } with strings",
            );
        }
    }
}

/// The rule names of the pairing of calls and results in one format.
struct PairRules {
    /// A call not answered before the next message.
    unanswered: &'static str,
    /// A result that answers no call just made.
    orphan: &'static str,
    /// A call id used twice.
    duplicate: &'static str,
}

/// Tool calls must be answered by the results that follow them, and
/// results must answer a call just made: `calls_of(message)` gives an
/// assistant message's call ids, `results_of(message)` a result message's
/// answered ids (empty for other messages). Calls still open after the
/// last message are the model's own pending turn, which is allowed.
fn pairing(
    messages: &[Value],
    path: &str,
    rules: &PairRules,
    calls_of: &dyn Fn(&Value) -> Vec<String>,
    results_of: &dyn Fn(&Value) -> Vec<String>,
    r: &mut Report,
) {
    let mut open: Vec<String> = Vec::new();
    let mut seen_ids = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        let results = results_of(m);
        if results.is_empty() && !open.is_empty() {
            r.add(
                rules.unanswered,
                format!("{path}/{i}"),
                format!("calls {open:?} are not answered before this message"),
            );
            open.clear();
        }
        for id in &results {
            match open.iter().position(|o| o == id) {
                Some(k) => {
                    open.remove(k);
                }
                None => r.add(
                    rules.orphan,
                    format!("{path}/{i}"),
                    format!("a result for {id:?}, which no call just made"),
                ),
            }
        }
        for id in calls_of(m) {
            if !seen_ids.insert(id.clone()) {
                r.add(
                    rules.duplicate,
                    format!("{path}/{i}"),
                    format!("call id {id:?} is used twice"),
                );
            }
            open.push(id);
        }
    }
}

fn openai(request: &Value, r: &mut Report) {
    let Some(messages) = request.as_array() else {
        return r.add(
            "openai.shape",
            String::new(),
            "the request must be an array of messages",
        );
    };
    for (i, m) in messages.iter().enumerate() {
        let path = format!("/{i}");
        let role = m["role"].as_str().unwrap_or("");
        match role {
            "system" | "developer" | "user" => {
                if !m["content"].is_string() {
                    r.add("openai.content", path.clone(), "content must be a string");
                }
            }
            "assistant" => {
                let calls = items(&m["tool_calls"]);
                if !m["content"].is_string() && calls.is_empty() {
                    r.add(
                        "openai.content",
                        path.clone(),
                        "an assistant message needs content or tool_calls",
                    );
                }
                for (k, c) in calls.iter().enumerate() {
                    let at = format!("{path}/tool_calls/{k}");
                    if c["id"].as_str().is_none_or(|s| s.is_empty()) {
                        r.add(
                            "openai.call_id",
                            at.clone(),
                            "a tool call needs a non-empty id",
                        );
                    }
                    if !c["function"]["name"].as_str().is_some_and(is_provider_name) {
                        r.add(
                            "openai.tool_name",
                            at.clone(),
                            format!("{} is not ^[a-zA-Z0-9_-]{{1,64}}$", c["function"]["name"]),
                        );
                    }
                    let json = c["function"]["arguments"]
                        .as_str()
                        .is_some_and(|a| serde_json::from_str::<Value>(a).is_ok());
                    if !json {
                        r.add("openai.arguments", at, "arguments must be a string of JSON");
                    }
                }
            }
            "tool" => {
                if m["tool_call_id"].as_str().is_none_or(|s| s.is_empty()) {
                    r.add(
                        "openai.call_id",
                        path.clone(),
                        "a tool message needs its tool_call_id",
                    );
                }
                if !m["content"].is_string() {
                    r.add("openai.content", path.clone(), "content must be a string");
                }
            }
            other => r.add(
                "openai.role",
                path.clone(),
                format!("unknown role {other:?}"),
            ),
        }
    }
    pairing(
        messages,
        "",
        &PairRules {
            unanswered: "openai.call_answered",
            orphan: "openai.result_follows_call",
            duplicate: "openai.call_id_unique",
        },
        &|m| {
            items(&m["tool_calls"])
                .iter()
                .filter_map(|c| c["id"].as_str().map(str::to_string))
                .collect()
        },
        &|m| match (m["role"].as_str(), m["tool_call_id"].as_str()) {
            (Some("tool"), Some(id)) => vec![id.to_string()],
            _ => Vec::new(),
        },
        r,
    );
}

fn anthropic(request: &Value, r: &mut Report) {
    let mut breakpoints = 0;
    for (k, b) in items(&request["system"]).iter().enumerate() {
        if !has_text(&b["text"]) {
            r.add(
                "anthropic.text_non_whitespace",
                format!("/system/{k}"),
                "a system text block must hold non-whitespace text",
            );
        }
        breakpoints += usize::from(!b["cache_control"].is_null());
    }
    let Some(messages) = request["messages"].as_array() else {
        return r.add(
            "anthropic.shape",
            "/messages".into(),
            "messages must be an array",
        );
    };
    if messages.is_empty() {
        r.add(
            "anthropic.non_empty",
            "/messages".into(),
            "messages must not be empty",
        );
    }
    if messages.first().is_some_and(|m| m["role"] != "user") {
        r.add(
            "anthropic.first_user",
            "/messages/0".into(),
            "the first message must use the user role",
        );
    }
    for (i, m) in messages.iter().enumerate() {
        let path = format!("/messages/{i}");
        let role = m["role"].as_str().unwrap_or("");
        if role != "user" && role != "assistant" {
            r.add(
                "anthropic.role",
                path.clone(),
                format!("unknown role {role:?}"),
            );
        }
        if i > 0 && messages[i - 1]["role"] == m["role"] {
            r.add(
                "anthropic.alternation",
                path.clone(),
                "roles must alternate between user and assistant",
            );
        }
        let blocks = match &m["content"] {
            Value::String(s) => {
                if s.trim().is_empty() {
                    r.add(
                        "anthropic.non_empty",
                        path.clone(),
                        "content must not be empty",
                    );
                }
                continue;
            }
            Value::Array(blocks) => blocks,
            _ => {
                r.add(
                    "anthropic.non_empty",
                    path.clone(),
                    "content must be text or blocks",
                );
                continue;
            }
        };
        if blocks.is_empty() {
            r.add(
                "anthropic.non_empty",
                path.clone(),
                "content must not be empty",
            );
        }
        let mut after_other = false;
        for (k, b) in blocks.iter().enumerate() {
            let at = format!("{path}/content/{k}");
            breakpoints += usize::from(!b["cache_control"].is_null());
            match b["type"].as_str() {
                Some("text") => {
                    after_other = true;
                    if !has_text(&b["text"]) {
                        r.add(
                            "anthropic.text_non_whitespace",
                            at,
                            "a text block must hold non-whitespace text",
                        );
                    }
                }
                Some("tool_use") => {
                    after_other = true;
                    let id = b["id"].as_str().unwrap_or("");
                    if !is_provider_name(id) {
                        r.add(
                            "anthropic.tool_use_id",
                            at.clone(),
                            format!("{id:?} is not ^[a-zA-Z0-9_-]+$"),
                        );
                    }
                    if !b["name"].as_str().is_some_and(is_provider_name) {
                        r.add(
                            "anthropic.tool_name",
                            at.clone(),
                            format!("{} is not ^[a-zA-Z0-9_-]{{1,64}}$", b["name"]),
                        );
                    }
                    if !b["input"].is_object() {
                        r.add("anthropic.tool_input", at, "input must be an object");
                    }
                }
                Some("tool_result") => {
                    if after_other {
                        r.add(
                            "anthropic.tool_result_first",
                            at.clone(),
                            "tool_result blocks must come first in their message",
                        );
                    }
                    if role != "user" {
                        r.add(
                            "anthropic.role",
                            at,
                            "tool_result blocks belong in user messages",
                        );
                    }
                }
                other => r.add(
                    "anthropic.block",
                    at,
                    format!("unknown block type {other:?}"),
                ),
            }
        }
    }
    if breakpoints > ANTHROPIC_MAX_BREAKPOINTS {
        r.add(
            "anthropic.cache_breakpoints",
            String::new(),
            format!(
                "{breakpoints} cache_control breakpoints (at most {ANTHROPIC_MAX_BREAKPOINTS})"
            ),
        );
    }
    let blocks_of = |m: &Value, kind: &str, field: &str| -> Vec<String> {
        items(&m["content"])
            .iter()
            .filter(|b| b["type"] == kind)
            .filter_map(|b| b[field].as_str().map(str::to_string))
            .collect()
    };
    pairing(
        messages,
        "/messages",
        &PairRules {
            unanswered: "anthropic.tool_use_answered",
            orphan: "anthropic.tool_result_follows_use",
            duplicate: "anthropic.tool_use_id_unique",
        },
        &|m| blocks_of(m, "tool_use", "id"),
        &|m| blocks_of(m, "tool_result", "tool_use_id"),
        r,
    );
}

fn ai_sdk(request: &Value, r: &mut Report) {
    let (Some(instructions), Some(messages)) = (
        request["instructions"].as_array(),
        request["messages"].as_array(),
    ) else {
        return r.add(
            "ai_sdk.shape",
            String::new(),
            "the request must be { instructions, messages }",
        );
    };
    for (k, m) in instructions.iter().enumerate() {
        if m["role"] != "system" || !has_text(&m["content"]) {
            r.add(
                "ai_sdk.instructions",
                format!("/instructions/{k}"),
                "instructions are system messages with text",
            );
        }
    }
    if messages.is_empty() {
        r.add(
            "ai_sdk.non_empty",
            "/messages".into(),
            "messages must not be empty",
        );
    }
    if messages.first().is_some_and(|m| m["role"] != "user") {
        r.add(
            "ai_sdk.first_user",
            "/messages/0".into(),
            "the first message must be the user's (providers such as Anthropic need it)",
        );
    }
    for (i, m) in messages.iter().enumerate() {
        let path = format!("/messages/{i}");
        match m["role"].as_str() {
            Some("system") => r.add(
                "ai_sdk.no_system_in_messages",
                path.clone(),
                "system messages are not allowed in messages (use instructions)",
            ),
            Some("user") | Some("assistant") => {
                let text_ok = match &m["content"] {
                    Value::String(s) => !s.trim().is_empty(),
                    Value::Array(parts) => {
                        !parts.is_empty()
                            && parts
                                .iter()
                                .all(|p| p["type"] != "text" || has_text(&p["text"]))
                    }
                    _ => false,
                };
                if !text_ok {
                    r.add(
                        "ai_sdk.text_non_whitespace",
                        path.clone(),
                        "content must hold non-whitespace text or parts",
                    );
                }
                for (k, p) in items(&m["content"]).iter().enumerate() {
                    if p["type"] == "tool-call"
                        && !p["toolName"].as_str().is_some_and(is_provider_name)
                    {
                        r.add(
                            "ai_sdk.tool_name",
                            format!("{path}/content/{k}"),
                            format!("{} is not ^[a-zA-Z0-9_-]{{1,64}}$", p["toolName"]),
                        );
                    }
                }
            }
            Some("tool") => {}
            other => r.add(
                "ai_sdk.role",
                path.clone(),
                format!("unknown role {other:?}"),
            ),
        }
    }
    let parts_of = |m: &Value, kind: &str| -> Vec<String> {
        items(&m["content"])
            .iter()
            .filter(|p| p["type"] == kind)
            .filter_map(|p| p["toolCallId"].as_str().map(str::to_string))
            .collect()
    };
    pairing(
        messages,
        "/messages",
        &PairRules {
            unanswered: "ai_sdk.call_answered",
            orphan: "ai_sdk.result_follows_call",
            duplicate: "ai_sdk.call_id_unique",
        },
        &|m| parts_of(m, "tool-call"),
        &|m| parts_of(m, "tool-result"),
        r,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(request: Value, format: ProviderFormat) -> Vec<&'static str> {
        check_request(&request, format)
            .into_iter()
            .map(|v| v.rule)
            .collect()
    }

    #[test]
    fn each_rule_is_found() {
        assert_eq!(
            rules(
                json!({"messages": [{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}]}),
                ProviderFormat::Anthropic
            ),
            ["anthropic.first_user"]
        );
        assert_eq!(
            rules(
                json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "\n\n"}]}]}),
                ProviderFormat::Anthropic
            ),
            ["anthropic.text_non_whitespace"]
        );
        assert_eq!(
            rules(
                json!([{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "multi_tool_use.parallel", "arguments": "{}"}}]},
                       {"role": "tool", "tool_call_id": "c", "content": "x"}]),
                ProviderFormat::OpenAi
            ),
            ["openai.tool_name"]
        );
        assert_eq!(
            rules(
                json!([{"role": "tool", "tool_call_id": "c", "content": "x"}]),
                ProviderFormat::OpenAi
            ),
            ["openai.result_follows_call"]
        );
        assert_eq!(
            rules(
                json!({"instructions": [], "messages": [{"role": "system", "content": "s"}]}),
                ProviderFormat::AiSdk
            ),
            ["ai_sdk.first_user", "ai_sdk.no_system_in_messages"]
        );
        assert_eq!(
            rules(
                json!({"instructions": [], "messages": []}),
                ProviderFormat::AiSdk
            ),
            ["ai_sdk.non_empty"]
        );
        let five: Vec<Value> = (0..5)
            .map(|_| json!({"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}))
            .collect();
        assert_eq!(
            rules(
                json!({"system": five, "messages": [{"role": "user", "content": "q"}]}),
                ProviderFormat::Anthropic
            ),
            ["anthropic.cache_breakpoints"]
        );
        let twice = json!([
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}},
                {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "x"},
            {"role": "tool", "tool_call_id": "c", "content": "y"}]);
        assert_eq!(
            rules(twice, ProviderFormat::OpenAi),
            ["openai.call_id_unique"]
        );
    }
}
