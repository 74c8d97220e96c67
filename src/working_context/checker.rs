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

use crate::session::provider_compaction::ANTHROPIC_COMPACTION_BETA;
use crate::wire::names::is_provider_name;
use crate::wire::ProviderFormat;
use crate::working_context::provider::is_gemini_name;

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
    check_request_for(request, format, None)
}

/// [`check_request`], and for a `model` the rules that depend on it
/// (Anthropic's minimum cacheable length).
pub fn check_request_for(
    request: &Value,
    format: ProviderFormat,
    model: Option<&str>,
) -> Vec<Violation> {
    let mut r = Report::default();
    match format {
        ProviderFormat::OpenAi => openai(request, &mut r),
        ProviderFormat::Anthropic => anthropic(request, model, &mut r),
        ProviderFormat::AiSdk => ai_sdk(request, &mut r),
        ProviderFormat::OpenAiResponses => openai_responses(request, &mut r),
        ProviderFormat::Gemini => gemini(request, &mut r),
        ProviderFormat::Plain => plain(request, &mut r),
    }
    for (rule, path, message) in crate::working_context::media_limits::check(request, format) {
        r.add(rule, path, message);
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

/// One turn of a request as pairing sees it: where it is, the call ids it
/// makes and the call ids it answers.
struct Turn {
    at: usize,
    calls: Vec<String>,
    results: Vec<String>,
}

impl Turn {
    fn new(at: usize, calls: Vec<String>, results: Vec<String>) -> Turn {
        Turn { at, calls, results }
    }
}

/// A function call's id, name and arguments (a string of JSON) as OpenAI
/// checks them; `rules` names the three rules in the format at hand.
fn call_fields(
    r: &mut Report,
    path: &str,
    rules: [&'static str; 3],
    (id, name, arguments): (&Value, &Value, &Value),
) {
    if id.as_str().is_none_or(str::is_empty) {
        r.add(
            rules[0],
            path.to_string(),
            "a tool call needs a non-empty id",
        );
    }
    if !name.as_str().is_some_and(is_provider_name) {
        r.add(
            rules[1],
            path.to_string(),
            format!("{name} is not ^[a-zA-Z0-9_-]{{1,64}}$"),
        );
    }
    let json = arguments
        .as_str()
        .is_some_and(|a| serde_json::from_str::<Value>(a).is_ok());
    if !json {
        r.add(
            rules[2],
            path.to_string(),
            "arguments must be a string of JSON",
        );
    }
}

/// The turns of `messages`: `calls_of(message)` gives an assistant
/// message's call ids, `results_of(message)` a result message's answered
/// ids (empty for other messages).
fn turns(
    messages: &[Value],
    calls_of: &dyn Fn(&Value) -> Vec<String>,
    results_of: &dyn Fn(&Value) -> Vec<String>,
) -> Vec<Turn> {
    messages
        .iter()
        .enumerate()
        .map(|(at, m)| Turn::new(at, calls_of(m), results_of(m)))
        .collect()
}

/// Tool calls must be answered by the results that follow them, and
/// results must answer a call just made. Calls still open after the last
/// turn are the model's own pending turn, which is allowed.
fn pairing(turns: Vec<Turn>, path: &str, rules: &PairRules, r: &mut Report) {
    let mut open: Vec<String> = Vec::new();
    let mut seen_ids = HashSet::new();
    for Turn {
        at: i,
        calls,
        results,
    } in turns
    {
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
        for id in calls {
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

/// A Chat Completions user message's content parts: text that is not
/// empty, an `image_url` with its `url`, a `file` with its data or id.
fn openai_user_parts(parts: &Value, path: &str, r: &mut Report) {
    let parts = items(parts);
    if parts.is_empty() {
        r.add(
            "openai.content",
            path.to_string(),
            "content must not be an empty array",
        );
    }
    for (k, p) in parts.iter().enumerate() {
        let at = format!("{path}/content/{k}");
        let ok = match p["type"].as_str() {
            Some("text") => p["text"].as_str().is_some_and(|t| !t.trim().is_empty()),
            Some("image_url") => p["image_url"]["url"]
                .as_str()
                .is_some_and(|u| !u.is_empty()),
            Some("file") => {
                p["file"]["file_data"].as_str().is_some() || p["file"]["file_id"].as_str().is_some()
            }
            _ => false,
        };
        if !ok {
            r.add(
                "openai.content_part",
                at,
                "a content part is non-empty text, an image_url with its url or a file with its data",
            );
        }
    }
}

/// An Anthropic image or document block's source: base64 with its media
/// type, or a URL.
fn anthropic_media(block: &Value, at: &str, r: &mut Report) {
    let source = &block["source"];
    let ok = match source["type"].as_str() {
        Some("base64") => {
            source["media_type"].as_str().is_some()
                && source["data"].as_str().is_some_and(|d| !d.is_empty())
        }
        Some("url") => source["url"].as_str().is_some_and(|u| !u.is_empty()),
        Some("file") => source["file_id"].as_str().is_some(),
        _ => false,
    };
    if !ok {
        r.add(
            "anthropic.media",
            at.to_string(),
            "a media block's source is base64 with its media_type and data, a url or a file",
        );
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
            "user" if m["content"].is_array() => openai_user_parts(&m["content"], &path, r),
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
                    call_fields(
                        r,
                        &format!("{path}/tool_calls/{k}"),
                        ["openai.call_id", "openai.tool_name", "openai.arguments"],
                        (
                            &c["id"],
                            &c["function"]["name"],
                            &c["function"]["arguments"],
                        ),
                    );
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
    let turns = turns(
        messages,
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
    );
    pairing(
        turns,
        "",
        &PairRules {
            unanswered: "openai.call_answered",
            orphan: "openai.result_follows_call",
            duplicate: "openai.call_id_unique",
        },
        r,
    );
}

/// The fewest tokens a prompt prefix needs before Anthropic caches it, by
/// model family (its published table), or `None` for a model it does not
/// name.
pub fn anthropic_min_cacheable(model: &str) -> Option<u64> {
    const TABLE: [(&str, u64); 9] = [
        ("claude-opus-4-5", 4096),
        ("claude-haiku-4-5", 4096),
        ("claude-3-5-haiku", 2048),
        ("claude-3-haiku", 2048),
        ("claude-opus-4", 1024),
        ("claude-sonnet-4", 1024),
        ("claude-3-7-sonnet", 1024),
        ("claude-3-5-sonnet", 1024),
        ("claude-3-opus", 1024),
    ];
    TABLE
        .iter()
        .find(|(family, _)| model.starts_with(family))
        .map(|&(_, tokens)| tokens)
}

/// Characters a token holds at most, for the estimate of a cached
/// prefix: generous, so a prefix found short is short by any tokenizer's
/// count of ordinary text.
const CHARS_PER_TOKEN: usize = 3;

/// A `cache_control` mark of an Anthropic request.
pub(crate) struct CacheMark {
    /// The marked block's JSON pointer.
    pub path: String,
    /// Whether its TTL is an hour.
    pub long: bool,
    /// Characters of the request up to and including the block.
    pub prefix_chars: usize,
}

impl CacheMark {
    /// Whether the prefix the mark ends is below `min` tokens even at the
    /// generous [`CHARS_PER_TOKEN`]: a mark the model would not cache.
    pub fn below(&self, min: u64) -> bool {
        ((self.prefix_chars / CHARS_PER_TOKEN) as u64) < min
    }
}

/// The request's `cache_control` marks in the order Anthropic caches
/// (tools, system, messages).
pub(crate) fn anthropic_cache_marks(request: &Value) -> Vec<CacheMark> {
    let mut marks = Vec::new();
    let mut prefix_chars = 0usize;
    let mut visit = |path: String, block: &Value, marks: &mut Vec<CacheMark>| {
        prefix_chars += block.to_string().len();
        let control = &block["cache_control"];
        if !control.is_null() {
            marks.push(CacheMark {
                path,
                long: control["ttl"] == "1h",
                prefix_chars,
            });
        }
    };
    for (k, t) in items(&request["tools"]).iter().enumerate() {
        visit(format!("/tools/{k}"), t, &mut marks);
    }
    for (k, b) in items(&request["system"]).iter().enumerate() {
        visit(format!("/system/{k}"), b, &mut marks);
    }
    for (i, m) in items(&request["messages"]).iter().enumerate() {
        for (k, b) in items(&m["content"]).iter().enumerate() {
            visit(format!("/messages/{i}/content/{k}"), b, &mut marks);
        }
    }
    marks
}

/// Anthropic's caching rules over the request's `cache_control` marks, in
/// the order it caches (tools, system, messages): at most four; a `1h`
/// mark never after a shorter one; and, for a `model` it names, no mark
/// before the prefix reaches the model's minimum cacheable length (the
/// mark would be wasted).
fn anthropic_caching(request: &Value, model: Option<&str>, r: &mut Report) {
    let marks = anthropic_cache_marks(request);
    if marks.len() > ANTHROPIC_MAX_BREAKPOINTS {
        r.add(
            "anthropic.cache_breakpoints",
            String::new(),
            format!(
                "{} cache_control breakpoints (at most {ANTHROPIC_MAX_BREAKPOINTS})",
                marks.len()
            ),
        );
    }
    let mut shorter_seen = false;
    for mark in &marks {
        if mark.long && shorter_seen {
            r.add(
                "anthropic.cache_ttl_order",
                mark.path.clone(),
                "a 1h cache_control comes after a shorter one (longer TTLs must come first)",
            );
        }
        shorter_seen |= !mark.long;
    }
    let Some(min) = model.and_then(anthropic_min_cacheable) else {
        return;
    };
    for mark in marks.iter().filter(|m| m.below(min)) {
        let most = mark.prefix_chars / CHARS_PER_TOKEN;
        r.add(
            "anthropic.cache_min_length",
            mark.path.clone(),
            format!("the prefix up to this breakpoint has about {most} tokens at most, below the {min} the model caches: the breakpoint is wasted"),
        );
    }
}

fn anthropic(request: &Value, model: Option<&str>, r: &mut Report) {
    anthropic_caching(request, model, r);
    for (k, b) in items(&request["system"]).iter().enumerate() {
        if !has_text(&b["text"]) {
            r.add(
                "anthropic.text_non_whitespace",
                format!("/system/{k}"),
                "a system text block must hold non-whitespace text",
            );
        }
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
    let compaction_first = messages
        .first()
        .is_some_and(|m| m["role"] == "assistant" && m["content"][0]["type"] == "compaction");
    if messages.first().is_some_and(|m| m["role"] != "user") && !compaction_first {
        r.add(
            "anthropic.first_user",
            "/messages/0".into(),
            "the first message must use the user role",
        );
    }
    let mut compactions = 0usize;
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
                Some(kind @ ("thinking" | "redacted_thinking")) => {
                    if role != "assistant" || after_other {
                        r.add(
                            "anthropic.thinking_first",
                            at.clone(),
                            "thinking blocks come first, in assistant messages only",
                        );
                    }
                    let field = if kind == "thinking" {
                        "signature"
                    } else {
                        "data"
                    };
                    if b[field].as_str().is_none_or(|s| s.is_empty()) {
                        r.add(
                            "anthropic.thinking_signed",
                            at,
                            format!("a {kind} block goes back as received, with its {field}"),
                        );
                    }
                }
                Some("compaction") => {
                    compactions += 1;
                    if compactions > 1 {
                        r.add(
                            "anthropic.compaction_one",
                            at.clone(),
                            "only the latest compaction block is sent",
                        );
                    } else if (i, k) != (0, 0) {
                        r.add(
                            "anthropic.compaction_first",
                            at.clone(),
                            "a compaction block is the first block of the conversation",
                        );
                    }
                    if !items(&request["betas"])
                        .iter()
                        .any(|b| b == ANTHROPIC_COMPACTION_BETA)
                    {
                        r.add(
                            "anthropic.compaction_beta",
                            at,
                            format!("a compaction block needs the beta {ANTHROPIC_COMPACTION_BETA} in betas"),
                        );
                    }
                }
                Some("image" | "document") => {
                    after_other = true;
                    if role != "user" {
                        r.add(
                            "anthropic.media",
                            at.clone(),
                            "image and document blocks belong in user messages",
                        );
                    }
                    anthropic_media(b, &at, r);
                }
                Some("tool_result") => {
                    if let Some(inner) = b["content"].as_array() {
                        for (j, c) in inner.iter().enumerate() {
                            let at = format!("{at}/content/{j}");
                            match c["type"].as_str() {
                                Some("text") if has_text(&c["text"]) => {}
                                Some("image" | "document") => anthropic_media(c, &at, r),
                                _ => r.add(
                                    "anthropic.tool_result_content",
                                    at,
                                    "a tool_result holds non-whitespace text, image and document blocks",
                                ),
                            }
                        }
                    }
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
    let blocks_of = |m: &Value, kind: &str, field: &str| -> Vec<String> {
        items(&m["content"])
            .iter()
            .filter(|b| b["type"] == kind)
            .filter_map(|b| b[field].as_str().map(str::to_string))
            .collect()
    };
    let turns = turns(messages, &|m| blocks_of(m, "tool_use", "id"), &|m| {
        blocks_of(m, "tool_result", "tool_use_id")
    });
    pairing(
        turns,
        "/messages",
        &PairRules {
            unanswered: "anthropic.tool_use_answered",
            orphan: "anthropic.tool_result_follows_use",
            duplicate: "anthropic.tool_use_id_unique",
        },
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
    let turns = turns(messages, &|m| parts_of(m, "tool-call"), &|m| {
        parts_of(m, "tool-result")
    });
    pairing(
        turns,
        "/messages",
        &PairRules {
            unanswered: "ai_sdk.call_answered",
            orphan: "ai_sdk.result_follows_call",
            duplicate: "ai_sdk.call_id_unique",
        },
        r,
    );
}

fn openai_responses(request: &Value, r: &mut Report) {
    if !(request["instructions"].is_null() || request["instructions"].is_string()) {
        r.add(
            "openai_responses.instructions",
            "/instructions".into(),
            "instructions must be a string",
        );
    }
    let Some(input) = request["input"].as_array() else {
        return r.add(
            "openai_responses.shape",
            String::new(),
            "the request must be { instructions?, input: [...] }",
        );
    };
    // Consecutive function calls are one turn of the model's.
    let mut turns: Vec<Turn> = Vec::new();
    let mut compactions = 0usize;
    for (i, item) in input.iter().enumerate() {
        let path = format!("/input/{i}");
        let kind = item["type"].as_str().unwrap_or("message");
        match kind {
            "compaction" => {
                compactions += 1;
                let only_users_before = input[..i].iter().all(|p| {
                    p["type"].as_str().unwrap_or("message") == "message" && p["role"] == "user"
                });
                if compactions > 1 {
                    r.add(
                        "openai_responses.compaction_one",
                        path,
                        "only the latest compaction item is sent",
                    );
                } else if !only_users_before {
                    r.add(
                        "openai_responses.compaction_first",
                        path,
                        "a compaction item comes after the user messages of its compact output and before anything else",
                    );
                }
            }
            "message" => {
                let role = item["role"].as_str().unwrap_or("");
                if !matches!(role, "user" | "assistant" | "system" | "developer") {
                    r.add(
                        "openai_responses.role",
                        path.clone(),
                        format!("unknown role {role:?}"),
                    );
                }
                let text_ok = match &item["content"] {
                    Value::String(s) => !s.trim().is_empty(),
                    Value::Array(parts) => {
                        !parts.is_empty()
                            && parts
                                .iter()
                                .all(|p| p["text"].is_null() || has_text(&p["text"]))
                    }
                    _ => false,
                };
                if !text_ok {
                    r.add(
                        "openai_responses.text_non_whitespace",
                        path,
                        "a message must hold non-whitespace text or parts",
                    );
                }
                turns.push(Turn::new(i, Vec::new(), Vec::new()));
            }
            "function_call" => {
                call_fields(
                    r,
                    &path,
                    [
                        "openai_responses.call_id",
                        "openai_responses.tool_name",
                        "openai_responses.arguments",
                    ],
                    (&item["call_id"], &item["name"], &item["arguments"]),
                );
                let id = item["call_id"].as_str().unwrap_or("");
                let previous_is_call = i > 0 && input[i - 1]["type"] == "function_call";
                match turns.last_mut() {
                    Some(turn) if previous_is_call => turn.calls.push(id.to_string()),
                    _ => turns.push(Turn::new(i, vec![id.to_string()], Vec::new())),
                }
            }
            "function_call_output" => {
                let id = item["call_id"].as_str().unwrap_or("");
                if id.is_empty() {
                    r.add(
                        "openai_responses.call_id",
                        path.clone(),
                        "a function_call_output needs the call_id it answers",
                    );
                }
                if !item["output"].is_string() && !item["output"].is_array() {
                    r.add(
                        "openai_responses.output",
                        path,
                        "output must be a string or a list of parts",
                    );
                }
                turns.push(Turn::new(i, Vec::new(), vec![id.to_string()]));
            }
            // Reasoning items and the like are the provider's own.
            _ => {}
        }
    }
    pairing(
        turns,
        "/input",
        &PairRules {
            unanswered: "openai_responses.call_answered",
            orphan: "openai_responses.output_follows_call",
            duplicate: "openai_responses.call_id_unique",
        },
        r,
    );
}

fn gemini(request: &Value, r: &mut Report) {
    for (k, p) in items(&request["systemInstruction"]["parts"])
        .iter()
        .enumerate()
    {
        if !has_text(&p["text"]) {
            r.add(
                "gemini.text_non_whitespace",
                format!("/systemInstruction/parts/{k}"),
                "a system instruction part must hold non-whitespace text",
            );
        }
    }
    let Some(contents) = request["contents"].as_array() else {
        return r.add(
            "gemini.shape",
            String::new(),
            "the request must be { systemInstruction?, contents: [...] }",
        );
    };
    if contents.is_empty() {
        r.add(
            "gemini.non_empty",
            "/contents".into(),
            "contents must not be empty",
        );
    }
    if contents.first().is_some_and(|c| c["role"] != "user") {
        r.add(
            "gemini.first_user",
            "/contents/0".into(),
            "the first content must be the user's",
        );
    }
    // A call's key: its id, or when it has none its name and the model turn
    // that made it (a response names its function only).
    let mut model_turn = 0;
    let key = |f: &Value, turn: usize| match f["id"].as_str() {
        Some(id) => id.to_string(),
        None => format!("{}#{turn}", f["name"].as_str().unwrap_or("")),
    };
    let mut turns: Vec<Turn> = Vec::new();
    for (i, c) in contents.iter().enumerate() {
        if c["role"] == "model" {
            model_turn = i;
        }
        let path = format!("/contents/{i}");
        let role = c["role"].as_str().unwrap_or("");
        if !matches!(role, "user" | "model") {
            r.add(
                "gemini.role",
                path.clone(),
                format!("unknown role {role:?}"),
            );
        }
        if i > 0 && contents[i - 1]["role"] == c["role"] {
            r.add(
                "gemini.alternating",
                path.clone(),
                "user and model contents must alternate",
            );
        }
        let parts = items(&c["parts"]);
        if parts.is_empty() {
            r.add("gemini.parts", path.clone(), "a content needs parts");
        }
        let mut turn = Turn::new(i, Vec::new(), Vec::new());
        for (k, p) in parts.iter().enumerate() {
            let at = format!("{path}/parts/{k}");
            if let Some(f) = p.get("functionCall") {
                if role != "model" {
                    r.add(
                        "gemini.call_role",
                        at.clone(),
                        "only the model calls functions",
                    );
                }
                if !f["name"].as_str().is_some_and(is_gemini_name) {
                    r.add(
                        "gemini.function_name",
                        at.clone(),
                        format!("{} is not ^[a-zA-Z_][a-zA-Z0-9_.:-]{{0,63}}$", f["name"]),
                    );
                }
                if !(f["args"].is_null() || f["args"].is_object()) {
                    r.add("gemini.args", at, "args must be an object");
                }
                turn.calls.push(key(f, model_turn));
            } else if let Some(f) = p.get("functionResponse") {
                if role != "user" {
                    r.add(
                        "gemini.response_role",
                        at.clone(),
                        "function responses are the user's",
                    );
                }
                if !f["response"].is_object() {
                    r.add("gemini.response", at, "response must be an object");
                }
                turn.results.push(key(f, model_turn));
            } else if p.get("text").is_some() {
                if !has_text(&p["text"]) {
                    r.add(
                        "gemini.text_non_whitespace",
                        at,
                        "a text part must hold non-whitespace text",
                    );
                }
            } else if p.get("inlineData").is_none() && p.get("fileData").is_none() {
                r.add(
                    "gemini.part",
                    at,
                    "a part holds text, a call, a response or data",
                );
            }
        }
        turns.push(turn);
    }
    pairing(
        turns,
        "/contents",
        &PairRules {
            unanswered: "gemini.call_answered",
            orphan: "gemini.response_follows_call",
            duplicate: "gemini.call_id_unique",
        },
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
        let user = json!({"role": "user", "content": [{"type": "text", "text": "q"}]});
        assert_eq!(
            rules(
                json!({"messages": [user, {"role": "assistant", "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "thinking", "thinking": "t", "signature": "s"}
                ]}]}),
                ProviderFormat::Anthropic
            ),
            ["anthropic.thinking_first"]
        );
        assert_eq!(
            rules(
                json!({"messages": [user, {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "t"},
                    {"type": "redacted_thinking", "data": ""},
                    {"type": "text", "text": "hi"}
                ]}]}),
                ProviderFormat::Anthropic
            ),
            ["anthropic.thinking_signed", "anthropic.thinking_signed"]
        );
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

    #[test]
    fn caching_rules_cover_tools_ttl_order_and_the_model_minimum() {
        let cached = |text: &str, ttl: Option<&str>| {
            let mut control = json!({"type": "ephemeral"});
            if let Some(ttl) = ttl {
                control["ttl"] = json!(ttl);
            }
            json!({"type": "text", "text": text, "cache_control": control})
        };
        let tool = json!({"name": "t", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}});
        let q = json!([{"role": "user", "content": "q"}]);
        // Tools' marks count among the four.
        let five = json!({"tools": [tool.clone(), tool.clone()], "system": [cached("a", None), cached("b", None), cached("c", None)], "messages": q});
        assert_eq!(
            rules(five, ProviderFormat::Anthropic),
            ["anthropic.cache_breakpoints"]
        );
        let order = json!({"system": [cached("a", None), cached("b", Some("1h"))], "messages": q});
        let found = check_request(&order, ProviderFormat::Anthropic);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].rule, found[0].path.as_str()),
            ("anthropic.cache_ttl_order", "/system/1")
        );
        let fine = json!({"system": [cached("a", Some("1h")), cached("b", None)], "messages": q});
        assert!(check_request(&fine, ProviderFormat::Anthropic).is_empty());
        // A short prefix wastes its mark on a model that caches from 1,024
        // tokens; a long one does not; a model not in the table is not judged.
        let short = json!({"system": [cached("You are helpful.", None)], "messages": q});
        let long = json!({"system": [cached(&"word ".repeat(2000), None)], "messages": q});
        let check = |req: &Value, model| {
            check_request_for(req, ProviderFormat::Anthropic, Some(model))
                .into_iter()
                .map(|v| v.rule)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            check(&short, "claude-sonnet-4-5-20250929"),
            ["anthropic.cache_min_length"]
        );
        assert!(check(&long, "claude-sonnet-4-5-20250929").is_empty());
        assert_eq!(
            check(&long, "claude-haiku-4-5"),
            ["anthropic.cache_min_length"]
        );
        assert!(check(&short, "some-other-model").is_empty());
        assert_eq!(
            anthropic_min_cacheable("claude-3-5-haiku-latest"),
            Some(2048)
        );
    }

    /// Each rule of the two formats, and a request that breaks it alone.
    #[test]
    fn each_responses_and_gemini_rule_is_found() {
        let user = json!({"type": "message", "role": "user", "content": "q"});
        let call = |id: &str, name: &str, args: &str| json!({"type": "function_call", "call_id": id, "name": name, "arguments": args});
        let output =
            |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "x"});
        let responses = |input: Vec<Value>| json!({"instructions": "s", "input": input});
        let cases = [
            (
                json!({"instructions": 7, "input": [user]}),
                "openai_responses.instructions",
            ),
            (json!({"instructions": "s"}), "openai_responses.shape"),
            (
                responses(vec![
                    json!({"type": "message", "role": "tool", "content": "q"}),
                ]),
                "openai_responses.role",
            ),
            (
                responses(vec![
                    json!({"type": "message", "role": "user", "content": " \n"}),
                ]),
                "openai_responses.text_non_whitespace",
            ),
            (
                responses(vec![user.clone(), call("", "t", "{}")]),
                "openai_responses.call_id",
            ),
            (
                responses(vec![user.clone(), call("c", "a.b", "{}"), output("c")]),
                "openai_responses.tool_name",
            ),
            (
                responses(vec![user.clone(), call("c", "t", "{"), output("c")]),
                "openai_responses.arguments",
            ),
            (
                responses(vec![
                    user.clone(),
                    call("c", "t", "{}"),
                    json!({"type": "function_call_output", "call_id": "c", "output": 3}),
                ]),
                "openai_responses.output",
            ),
            (
                responses(vec![user.clone(), call("c", "t", "{}"), user.clone()]),
                "openai_responses.call_answered",
            ),
            (
                responses(vec![user.clone(), output("c")]),
                "openai_responses.output_follows_call",
            ),
            (
                responses(vec![
                    user.clone(),
                    call("c", "t", "{}"),
                    call("c", "t", "{}"),
                    output("c"),
                    output("c"),
                ]),
                "openai_responses.call_id_unique",
            ),
        ];
        for (request, rule) in cases {
            assert_eq!(
                rules(request.clone(), ProviderFormat::OpenAiResponses),
                [rule],
                "{request}"
            );
        }
        // Consecutive calls are one turn; a reasoning item is the provider's.
        let fine = responses(vec![
            user.clone(),
            json!({"type": "reasoning", "summary": []}),
            call("a", "t", "{}"),
            call("b", "t", "{}"),
            output("a"),
            output("b"),
        ]);
        assert_eq!(
            rules(fine, ProviderFormat::OpenAiResponses),
            Vec::<&str>::new()
        );

        let text = |role: &str, t: &str| json!({"role": role, "parts": [{"text": t}]});
        let fcall = |id: &str, name: &str| json!({"role": "model", "parts": [{"functionCall": {"id": id, "name": name, "args": {}}}]});
        let fresp = |id: &str| json!({"role": "user", "parts": [{"functionResponse": {"id": id, "name": "t", "response": {"output": "x"}}}]});
        let gemini = |contents: Vec<Value>| json!({"systemInstruction": {"parts": [{"text": "s"}]}, "contents": contents});
        let q = text("user", "q");
        let cases = [
            (
                json!({"systemInstruction": {"parts": [{"text": ""}]}, "contents": [q]}),
                "gemini.text_non_whitespace",
            ),
            (
                json!({"systemInstruction": {"parts": [{"text": "s"}]}}),
                "gemini.shape",
            ),
            (gemini(vec![]), "gemini.non_empty"),
            (gemini(vec![text("model", "a")]), "gemini.first_user"),
            (
                gemini(vec![q.clone(), text("assistant", "a")]),
                "gemini.role",
            ),
            (gemini(vec![q.clone(), q.clone()]), "gemini.alternating"),
            (
                gemini(vec![json!({"role": "user", "parts": []})]),
                "gemini.parts",
            ),
            (
                gemini(vec![
                    json!({"role": "user", "parts": [{"text": "q"}, {"functionCall": {"id": "c", "name": "t", "args": {}}}]}),
                ]),
                "gemini.call_role",
            ),
            (
                gemini(vec![q.clone(), fcall("c", "1t"), fresp("c")]),
                "gemini.function_name",
            ),
            (
                gemini(vec![
                    q.clone(),
                    json!({"role": "model", "parts": [{"functionCall": {"id": "c", "name": "t", "args": [1]}}]}),
                    fresp("c"),
                ]),
                "gemini.args",
            ),
            (
                gemini(vec![
                    q.clone(),
                    json!({"role": "model", "parts": [{"functionCall": {"id": "c", "name": "t", "args": {}}}, {"functionResponse": {"id": "c", "name": "t", "response": {"output": "x"}}}]}),
                ]),
                "gemini.response_role",
            ),
            (
                gemini(vec![
                    q.clone(),
                    fcall("c", "t"),
                    json!({"role": "user", "parts": [{"functionResponse": {"id": "c", "name": "t", "response": "x"}}]}),
                ]),
                "gemini.response",
            ),
            (
                gemini(vec![json!({"role": "user", "parts": [{"video": 1}]})]),
                "gemini.part",
            ),
            (
                gemini(vec![q.clone(), fcall("c", "t"), q.clone()]),
                "gemini.call_answered",
            ),
            (
                gemini(vec![q.clone(), text("model", "a"), fresp("c")]),
                "gemini.response_follows_call",
            ),
            (
                gemini(vec![
                    q.clone(),
                    fcall("c", "t"),
                    fresp("c"),
                    fcall("c", "t"),
                    fresp("c"),
                ]),
                "gemini.call_id_unique",
            ),
        ];
        for (request, rule) in cases {
            // A response in the model's turn answers no call either.
            let found = rules(request.clone(), ProviderFormat::Gemini);
            assert!(
                found.contains(&rule) && found.len() <= 2,
                "{request}: {found:?}"
            );
        }
        // Without ids, calls pair with responses by name, turn by turn.
        let unnamed = gemini(vec![
            q.clone(),
            json!({"role": "model", "parts": [{"functionCall": {"name": "t", "args": {}}}]}),
            json!({"role": "user", "parts": [{"functionResponse": {"name": "t", "response": {}}}]}),
            json!({"role": "model", "parts": [{"functionCall": {"name": "t", "args": {}}}]}),
            json!({"role": "user", "parts": [{"functionResponse": {"name": "t", "response": {}}}]}),
        ]);
        assert_eq!(rules(unnamed, ProviderFormat::Gemini), Vec::<&str>::new());
    }
}
