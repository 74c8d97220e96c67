//! Provider request shapes: OpenAI Chat Completions, OpenAI Responses,
//! Anthropic Messages, Gemini `generateContent` and the Vercel AI SDK's
//! `ModelMessage[]`, rendered from a context's messages.
//!
//! Every tool call is followed by its result and every result follows its
//! call, in every format: the compiler only ever lays tool exchanges out as
//! an assistant message with its calls followed by one result per call.

use serde_json::{json, Map, Value};

use std::borrow::Cow;
use std::rc::Rc;

use crate::message::MessageMut;
use crate::wire::names::{
    is_provider_name, provider_call_id, provider_tool_name, PROVIDER_NAME_MAX,
};
use crate::wire::ProviderFormat;
use crate::working_context::{has_text, media_parts, HistoryMessage, LayoutPart, Shared};
use crate::zones::Zone;

/// A tool result's content when the tool returned nothing (or only
/// whitespace): providers refuse empty text.
pub const EMPTY_OUTPUT: &str = "(no output)";

/// What [`prepare`] changes in `m`: its text, its names (`None` when `m`
/// is left out).
pub(crate) fn preparing(m: &HistoryMessage) -> Option<(bool, bool)> {
    if m.role != "system" && !m.renders() {
        return None;
    }
    let text_changes = if m.is_tool_result() {
        !has_text(&m.content)
    } else {
        m.role != "system" && !m.content.is_empty() && !has_text(&m.content)
    };
    let names_change = m
        .tool_call_id
        .as_deref()
        .is_some_and(|id| !is_provider_name(id))
        || m.tool_name.as_deref().is_some_and(|n| !is_provider_name(n))
        || m.tool_calls
            .iter()
            .any(|c| !is_provider_name(&c.id) || !is_provider_name(&c.name));
    Some((text_changes, names_change))
}

/// `m` as every format renders it, or `None` when it is left out: a
/// message whose text is empty or only whitespace, with no tool calls, is
/// left out (system messages stay), an assistant's whitespace-only text
/// beside its calls is dropped, an empty tool result says so, and tool
/// names and call ids are ones providers take (see
/// [`crate::wire::names`]). Borrowed when nothing changes.
pub(crate) fn prepare(m: &HistoryMessage) -> Option<Cow<'_, HistoryMessage>> {
    let (text_changes, names_change) = preparing(m)?;
    if !text_changes && !names_change {
        return Some(Cow::Borrowed(m));
    }
    let mut m = m.clone();
    if text_changes {
        m.content = if m.is_tool_result() {
            EMPTY_OUTPUT.to_string()
        } else {
            String::new()
        };
    }
    if let Some(id) = &m.tool_call_id {
        m.tool_call_id = Some(provider_call_id(id).into_owned());
    }
    if let Some(name) = &m.tool_name {
        m.tool_name = Some(provider_tool_name(name).into_owned());
    }
    for c in &mut m.tool_calls {
        c.id = provider_call_id(&c.id).into_owned();
        c.name = provider_tool_name(&c.name).into_owned();
    }
    m.tokens = None;
    Some(Cow::Owned(m))
}

/// A context message as the renderers read it: shared with the context's
/// history (no copy), beside the zone it is in.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    /// The message.
    pub(crate) message: Shared,
    /// Its zone (the renderers place cache marks by it).
    pub(crate) zone: Option<Zone>,
}

impl Placed {
    /// `message` in its own zone.
    pub(crate) fn own(message: HistoryMessage) -> Placed {
        Placed {
            zone: message.zone,
            message: Rc::new(message),
        }
    }
}

impl std::ops::Deref for Placed {
    type Target = HistoryMessage;

    fn deref(&self) -> &HistoryMessage {
        &self.message
    }
}

impl MessageMut for Placed {
    fn message(&self) -> &HistoryMessage {
        &self.message
    }

    fn message_mut(&mut self) -> &mut HistoryMessage {
        Rc::make_mut(&mut self.message)
    }
}

/// `messages` as every format renders them (see [`prepare`]), each kept
/// as it is unless preparing changes it.
pub(crate) fn prepared(messages: Vec<Placed>) -> Vec<Placed> {
    messages
        .into_iter()
        .filter_map(|m| match prepare(&m)? {
            Cow::Borrowed(_) => Some(m),
            Cow::Owned(changed) => Some(Placed {
                message: Rc::new(changed),
                zone: m.zone,
            }),
        })
        .collect()
}

/// Renders `messages` (a context's messages with zones) in `format`. A
/// part the provider would refuse (too large, too many) is sent as its
/// reference line, saying why (see [`super::media_limits`]).
pub(crate) fn render(messages: Vec<Placed>, format: ProviderFormat) -> Value {
    let mut messages = prepared(messages);
    super::media_limits::keep_within(&mut messages, format, false);
    match format {
        ProviderFormat::OpenAi => openai(messages),
        ProviderFormat::Anthropic => anthropic(&messages),
        ProviderFormat::AiSdk => ai_sdk(&messages),
        ProviderFormat::OpenAiResponses => openai_responses(&messages),
        ProviderFormat::Gemini => gemini(&messages),
        ProviderFormat::Plain => Value::Array(
            messages
                .iter()
                .map(|m| {
                    let content = media_parts::text_with_references(&m.content, m.media.iter());
                    json!({"role": m.role, "content": content})
                })
                .collect(),
        ),
    }
}

/// Chat Completions messages of `messages`, one each when none carries
/// media (see [`super::render_each`]).
pub(crate) fn openai_each(messages: Vec<Placed>) -> Vec<Value> {
    match openai(messages) {
        Value::Array(rendered) => rendered,
        _ => Vec::new(),
    }
}

/// The reasoning items `m` carries for `format` (none for another's).
fn reasoning_items(m: &HistoryMessage, format: ProviderFormat) -> impl Iterator<Item = Value> + '_ {
    m.reasoning
        .as_ref()
        .filter(|r| r.get("format").and_then(Value::as_str) == Some(format.as_str()))
        .and_then(|r| r.get("items").and_then(Value::as_array))
        .into_iter()
        .flatten()
        .cloned()
}

/// How many leading messages are system messages (the system prompt part
/// of a request).
fn leading_system(messages: &[Placed]) -> usize {
    messages
        .iter()
        .take_while(|m| m.role == "system" && !m.is_tool_result())
        .count()
}

/// A Chat Completions user message's content: its text, or text and
/// media parts.
fn openai_user_content(m: &HistoryMessage) -> Value {
    if m.media.is_empty() {
        return json!(m.content);
    }
    let mut parts = Vec::new();
    if !m.content.is_empty() {
        parts.push(text_block(&m.content));
    }
    parts.extend(m.media.iter().map(media_parts::openai));
    Value::Array(parts)
}

/// Whether Chat Completions leaves `m` out: a system message with no text
/// (no prompt, no system message; an empty one is sent by no one).
pub(crate) fn openai_omits(m: &HistoryMessage) -> bool {
    m.role == "system" && !has_text(&m.content) && m.media.is_empty()
}

/// Chat Completions messages (see [`openai_omits`]).
/// A `tool` message carries text only: the
/// images and files of a turn's tool results follow its last result in a
/// user message, and each result says so. The messages' texts move into
/// the request.
fn openai(messages: Vec<Placed>) -> Value {
    let mut out: Vec<Value> = Vec::with_capacity(messages.len());
    let mut carried: Vec<Value> = Vec::new();
    let results: Vec<bool> = messages.iter().map(|m| m.is_tool_result()).collect();
    for (i, m) in messages.into_iter().enumerate() {
        if openai_omits(&m) {
            continue;
        }
        if let Some(id) = &m.tool_call_id {
            let (send, keep) = media_parts::sendable(&m.media);
            let mut content = media_parts::text_with_references(&m.content, keep.into_iter());
            for part in send {
                content.push_str(&format!(
                    "\n{} (in the user message after the tool results)",
                    part.reference()
                ));
                carried.push(media_parts::openai(part));
            }
            out.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
            let last_result = results.get(i + 1).is_none_or(|next| !next);
            if last_result && !carried.is_empty() {
                let mut parts = vec![text_block("[images and files from the tool results above]")];
                parts.append(&mut carried);
                out.push(json!({"role": "user", "content": parts}));
            }
            continue;
        }
        out.push(openai_message(m));
    }
    Value::Array(out)
}

/// A Chat Completions message other than a tool result; a message of text
/// alone moves its text into the request.
fn openai_message(m: Placed) -> Value {
    if m.media.is_empty() && m.tool_calls.is_empty() {
        let (role, content) = match Rc::try_unwrap(m.message) {
            Ok(m) => (m.role, m.content),
            Err(m) => (m.role.clone(), m.content.clone()),
        };
        let mut object = serde_json::Map::with_capacity(2);
        object.insert("role".into(), Value::String(role));
        object.insert("content".into(), Value::String(content));
        return Value::Object(object);
    }
    let m = &m;
    if m.role == "assistant" && !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments.to_string()},
                })
            })
            .collect();
        let content = if m.content.is_empty() {
            Value::Null
        } else {
            Value::from(m.content.as_str())
        };
        return json!({"role": "assistant", "content": content, "tool_calls": calls});
    }
    if m.role == "user" {
        return json!({"role": "user", "content": openai_user_content(m)});
    }
    let content = media_parts::text_with_references(&m.content, m.media.iter());
    json!({"role": m.role, "content": content})
}

/// Tool input must be an object for Anthropic; anything else is wrapped.
fn object_input(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::Null => json!({}),
        other => json!({ "value": other }),
    }
}

/// Whether an Anthropic content block is a thinking block (signed or
/// redacted).
fn is_thinking(block: &Value) -> bool {
    matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

/// A JSON object of `pairs`, in their order, the values moved in (the
/// `json!` macro serialises a value it is given again: a deep copy).
fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    let mut map = Map::with_capacity(N);
    for (key, value) in pairs {
        map.insert(key.to_string(), value);
    }
    Value::Object(map)
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn anthropic(messages: &[Placed]) -> Value {
    let lead = leading_system(messages);
    let mut system: Vec<Value> = Vec::new();
    // Breakpoints: (message index or None for system, block index).
    let mut system_zone_end = None;
    for m in &messages[..lead] {
        if !m.content.is_empty() {
            system.push(text_block(&m.content));
            if m.zone == Some(Zone::System) {
                system_zone_end = Some(system.len() - 1);
            }
        }
    }

    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    // Where each source message's last block landed.
    let mut landed: Vec<Option<(usize, usize)>> = vec![None; messages.len()];
    for (i, m) in messages.iter().enumerate().skip(lead) {
        let (role, blocks) = if let Some(id) = &m.tool_call_id {
            let content = if m.media.is_empty() {
                json!(m.content)
            } else {
                let mut blocks = vec![text_block(&m.content)];
                blocks.extend(m.media.iter().map(media_parts::anthropic));
                Value::Array(blocks)
            };
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": id,
                "content": content,
            });
            if m.is_error {
                block["is_error"] = Value::Bool(true);
            }
            ("user", vec![block])
        } else if m.role == "assistant" {
            // Signed thinking first, as Anthropic asks it back.
            let mut blocks: Vec<Value> = reasoning_items(m, ProviderFormat::Anthropic).collect();
            if !m.content.is_empty() {
                blocks.push(text_block(&m.content));
            }
            for c in &m.tool_calls {
                blocks.push(json!({
                    "type": "tool_use",
                    "id": c.id,
                    "name": c.name,
                    "input": object_input(&c.arguments),
                }));
            }
            ("assistant", blocks)
        } else {
            // user, and system text after the conversation started.
            let mut blocks = if m.content.is_empty() {
                Vec::new()
            } else {
                vec![text_block(&m.content)]
            };
            blocks.extend(m.media.iter().map(media_parts::anthropic));
            ("user", blocks)
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last_role, last_blocks)) if last_role == role => {
                // Merged into the previous assistant message (a phase
                // result, a reply before this one): its thinking blocks go
                // after the ones there and before any other block, as
                // Anthropic requires; marks already placed move with them.
                let at = last_blocks.iter().take_while(|b| is_thinking(b)).count();
                let thinking: Vec<Value> =
                    blocks.iter().filter(|b| is_thinking(b)).cloned().collect();
                let moved = thinking.len();
                if moved > 0 && at < last_blocks.len() {
                    let idx = out.len() - 1;
                    for (m, b) in landed.iter_mut().flatten() {
                        if *m == idx && *b >= at {
                            *b += moved;
                        }
                    }
                    let last_blocks = &mut out[idx].1;
                    last_blocks.splice(at..at, thinking);
                    last_blocks.extend(blocks.into_iter().filter(|b| !is_thinking(b)));
                } else {
                    last_blocks.extend(blocks);
                }
            }
            _ => out.push((role.to_string(), blocks)),
        }
        let idx = out.len() - 1;
        landed[i] = Some((idx, out[idx].1.len() - 1));
    }

    // Cache breakpoints at the ends of the stable parts, at most four: the
    // leading system blocks (the host's SYSTEM and PERSISTENT text), the
    // memory message (pinned memories and the compaction summary), WORKING,
    // and the conversation before the per-turn tail; then the end of the
    // SYSTEM zone alone if one is left.
    let last_of = |pred: &dyn Fn(&Placed) -> bool| {
        messages
            .iter()
            .enumerate()
            .skip(lead)
            .filter(|(_, m)| pred(m))
            .filter_map(|(i, _)| landed[i])
            .next_back()
    };
    let memory_end = last_of(&|m| m.part == Some(LayoutPart::Memory));
    let working_end = last_of(&|m| m.zone != Some(Zone::Recent));
    let tail_is_last = messages
        .last()
        .is_some_and(|m| m.part == Some(LayoutPart::Tail));
    let conversation_end = if tail_is_last && messages.len() > lead {
        let n = messages.len() - 1;
        messages[lead..n]
            .iter()
            .enumerate()
            .filter_map(|(k, _)| landed[lead + k])
            .next_back()
    } else {
        landed.iter().flatten().copied().next_back()
    };
    let mut message_marks: Vec<(usize, usize)> = memory_end
        .into_iter()
        .chain(working_end)
        .chain(conversation_end)
        .collect();
    message_marks.dedup();
    let mut budget = 4usize;
    let last_system = system.len().checked_sub(1);
    if let Some(i) = last_system {
        system[i]["cache_control"] = json!({"type": "ephemeral"});
        budget -= 1;
    }
    for (m, b) in message_marks {
        if budget > 0 {
            out[m].1[b]["cache_control"] = json!({"type": "ephemeral"});
            budget -= 1;
        }
    }
    if let Some(i) = system_zone_end.filter(|&i| Some(i) != last_system) {
        if budget > 0 {
            system[i]["cache_control"] = json!({"type": "ephemeral"});
        }
    }

    let mut request = Map::new();
    if !system.is_empty() {
        request.insert("system".into(), Value::Array(system));
    }
    request.insert(
        "messages".into(),
        Value::Array(
            out.into_iter()
                .map(|(role, content)| {
                    object([
                        ("role", Value::String(role)),
                        ("content", Value::Array(content)),
                    ])
                })
                .collect(),
        ),
    );
    Value::Object(request)
}

/// The Vercel AI SDK's `{ instructions, messages }`, spread into
/// `generateText` / `streamText`: the leading system zones as
/// `SystemModelMessage[]` (the `ai` package refuses system messages among
/// `messages`), with Anthropic cache `providerOptions` at the ends of SYSTEM
/// and of the last leading zone; then the memory message (cache
/// `providerOptions` too), the conversation and the per-turn tail as
/// `ModelMessage[]`.
fn ai_sdk(messages: &[Placed]) -> Value {
    let lead = leading_system(messages);
    let mut instructions: Vec<Value> = messages[..lead]
        .iter()
        .filter(|m| !m.content.is_empty())
        .map(|m| json!({"role": "system", "content": m.content}))
        .collect();
    let cache = json!({"anthropic": {"cacheControl": {"type": "ephemeral"}}});
    let system_end = messages[..lead]
        .iter()
        .filter(|m| !m.content.is_empty())
        .enumerate()
        .filter(|(_, m)| m.zone == Some(Zone::System))
        .map(|(i, _)| i)
        .last();
    let marks = system_end
        .into_iter()
        .chain(instructions.len().checked_sub(1));
    for i in marks {
        instructions[i]["providerOptions"] = cache.clone();
    }
    let mut out: Vec<Value> = Vec::new();
    for m in &messages[lead..] {
        if let Some(id) = &m.tool_call_id {
            let output = if m.is_error || m.media.is_empty() {
                let kind = if m.is_error { "error-text" } else { "text" };
                let text = media_parts::text_with_references(&m.content, m.media.iter());
                json!({"type": kind, "value": text})
            } else {
                let mut value = vec![text_block(&m.content)];
                value.extend(m.media.iter().map(media_parts::ai_sdk_tool_output));
                json!({"type": "content", "value": value})
            };
            let part = json!({
                "type": "tool-result",
                "toolCallId": id,
                "toolName": m.tool_name.as_deref().unwrap_or("tool"),
                "output": output,
            });
            // Consecutive results share one tool message.
            if let Some(last) = out.last_mut().filter(|l| l["role"] == "tool") {
                if let Some(parts) = last["content"].as_array_mut() {
                    parts.push(part);
                    continue;
                }
            }
            out.push(json!({"role": "tool", "content": [part]}));
        } else if m.role == "assistant" && !m.tool_calls.is_empty() {
            let mut parts = Vec::new();
            if !m.content.is_empty() {
                parts.push(text_block(&m.content));
            }
            parts.extend(m.tool_calls.iter().map(|c| {
                json!({"type": "tool-call", "toolCallId": c.id, "toolName": c.name, "input": c.arguments})
            }));
            out.push(json!({"role": "assistant", "content": parts}));
        } else if m.role == "assistant" {
            let content = media_parts::text_with_references(&m.content, m.media.iter());
            out.push(json!({"role": "assistant", "content": content}));
        } else if !m.media.is_empty() {
            let mut parts = Vec::new();
            if !m.content.is_empty() {
                parts.push(text_block(&m.content));
            }
            parts.extend(m.media.iter().map(media_parts::ai_sdk));
            out.push(json!({"role": "user", "content": parts}));
        } else {
            // The layout's own user messages, and system text after the
            // conversation started: the AI SDK takes system text in
            // `instructions` only. The memory message ends a stable part.
            let mut message = json!({"role": "user", "content": m.content});
            if m.part == Some(LayoutPart::Memory) {
                message["providerOptions"] = cache.clone();
            }
            out.push(message);
        }
    }
    object([
        ("instructions", Value::Array(instructions)),
        ("messages", Value::Array(out)),
    ])
}

/// The text of the leading system messages, joined by blank lines.
fn leading_text(messages: &[Placed]) -> String {
    messages[..leading_system(messages)]
        .iter()
        .filter(|m| !m.content.is_empty())
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// OpenAI Responses `{ instructions, input }`: the leading system zones as
/// the instructions (a stable prefix, which OpenAI caches automatically);
/// the memory message, the conversation and the per-turn tail as input
/// items: each message as a `message` item, an assistant's calls as
/// `function_call` items after its text, each result as a
/// `function_call_output` item; system text after the conversation started
/// (a host's) as a `developer` message.
fn openai_responses(messages: &[Placed]) -> Value {
    let lead = leading_system(messages);
    let mut input: Vec<Value> = Vec::new();
    for m in &messages[lead..] {
        if let Some(id) = &m.tool_call_id {
            let output = if m.media.is_empty() {
                json!(m.content)
            } else {
                let mut items = vec![json!({"type": "input_text", "text": m.content})];
                items.extend(m.media.iter().map(media_parts::openai_responses));
                Value::Array(items)
            };
            input.push(json!({"type": "function_call_output", "call_id": id, "output": output}));
            continue;
        }
        let role = match m.role.as_str() {
            "assistant" => "assistant",
            "user" => "user",
            _ => "developer",
        };
        if role == "assistant" {
            input.extend(reasoning_items(m, ProviderFormat::OpenAiResponses));
        }
        if role == "user" && !m.media.is_empty() {
            let mut content = Vec::new();
            if !m.content.is_empty() {
                content.push(json!({"type": "input_text", "text": m.content}));
            }
            content.extend(m.media.iter().map(media_parts::openai_responses));
            input.push(json!({"type": "message", "role": role, "content": content}));
        } else if !m.content.is_empty() || !m.media.is_empty() {
            let content = media_parts::text_with_references(&m.content, m.media.iter());
            input.push(json!({"type": "message", "role": role, "content": content}));
        }
        for c in &m.tool_calls {
            input.push(json!({
                "type": "function_call",
                "call_id": c.id,
                "name": c.name,
                "arguments": c.arguments.to_string(),
            }));
        }
    }
    let mut request = Map::new();
    let instructions = leading_text(messages);
    if !instructions.is_empty() {
        request.insert("instructions".into(), Value::String(instructions));
    }
    request.insert("input".into(), Value::Array(input));
    Value::Object(request)
}

/// Whether `name` is a function name Gemini takes: a letter or `_` first,
/// then letters, digits, `_`, `.`, `:` or `-`, at most 64 in all.
pub(crate) fn is_gemini_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.len() <= PROVIDER_NAME_MAX
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

/// `name` as Gemini takes it (see [`is_gemini_name`]): a name valid for the
/// other providers but starting with a digit or `-` is rewritten as a
/// made-up one is (`invalid_tool_<hash>`).
fn gemini_name(name: &str) -> Cow<'_, str> {
    if is_gemini_name(name) {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(format!(
            "{}{}",
            crate::wire::names::INVALID_TOOL_PREFIX,
            &crate::artifacts::content_id(name.as_bytes())[..8]
        ))
    }
}

/// Gemini `{ systemInstruction, contents }`: the leading zones as the
/// system instruction's parts (one each); the conversation as `user` and
/// `model` contents, consecutive ones of a role merged (Gemini wants turns
/// to alternate); an assistant's calls as `functionCall` parts after its
/// text, their results as `functionResponse` parts of the next `user` turn
/// (`{ output }`, or `{ error }` for a failure), each with the call's id;
/// the memory message, the per-turn tail and later system text as user
/// text.
fn gemini(messages: &[Placed]) -> Value {
    let lead = leading_system(messages);
    let instruction: Vec<Value> = messages[..lead]
        .iter()
        .filter(|m| !m.content.is_empty())
        .map(|m| json!({"text": m.content}))
        .collect();
    let mut contents: Vec<(&str, Vec<Value>)> = Vec::new();
    for m in &messages[lead..] {
        let (role, parts) = if let Some(id) = &m.tool_call_id {
            let key = if m.is_error { "error" } else { "output" };
            let name = gemini_name(m.tool_name.as_deref().unwrap_or("tool"));
            let response = json!({"id": id, "name": name, "response": {key: m.content}});
            let mut parts = vec![json!({ "functionResponse": response })];
            // Its images and files follow it in the same user turn.
            parts.extend(m.media.iter().map(media_parts::gemini));
            ("user", parts)
        } else {
            let role = if m.role == "assistant" {
                "model"
            } else {
                "user"
            };
            let mut parts = Vec::new();
            if !m.content.is_empty() {
                parts.push(json!({"text": m.content}));
            }
            parts.extend(m.media.iter().map(media_parts::gemini));
            for c in &m.tool_calls {
                let call = json!({"id": c.id, "name": gemini_name(&c.name), "args": object_input(&c.arguments)});
                let mut part = json!({ "functionCall": call });
                if let Some(signature) = &c.signature {
                    part["thoughtSignature"] = json!(signature);
                }
                parts.push(part);
            }
            (role, parts)
        };
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some((last, last_parts)) if *last == role => last_parts.extend(parts),
            _ => contents.push((role, parts)),
        }
    }
    let mut request = Map::new();
    if !instruction.is_empty() {
        request.insert("systemInstruction".into(), json!({ "parts": instruction }));
    }
    request.insert(
        "contents".into(),
        Value::Array(
            contents
                .into_iter()
                .map(|(role, parts)| {
                    object([("role", Value::from(role)), ("parts", Value::Array(parts))])
                })
                .collect(),
        ),
    );
    Value::Object(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_and_inputs_are_objects() {
        for f in [
            "plain",
            "openai",
            "openai-responses",
            "anthropic",
            "gemini",
            "ai-sdk",
        ] {
            assert_eq!(ProviderFormat::parse(f).map(|f| f.as_str()).ok(), Some(f));
        }
        let refused = ProviderFormat::parse("bard").unwrap_err();
        assert_eq!(refused.code(), crate::error::ErrorCode::InvalidArgument);
        assert_eq!(
            refused.message(),
            "format must be \"plain\", \"openai\", \"openai-responses\", \"anthropic\", \"gemini\" or \"ai-sdk\" (got \"bard\")"
        );
        assert!(is_gemini_name("_a.b:c-d") && !is_gemini_name("1tool") && !is_gemini_name(""));
        assert!(gemini_name("-x").starts_with("invalid_tool_"));
        assert_eq!(object_input(&json!([1])), json!({"value": [1]}));
    }
}
