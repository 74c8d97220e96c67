//! The model the turn runner calls, as a trait the host implements, and the
//! replies it understands: text, tool calls, or both.

use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::session::ModelUsage;
use crate::tools::{AbortSignal, ToolChoice, ToolSpec};
use crate::wire::ProviderFormat;
pub use crate::wire::{Reasoning, ResponseMeta};
use crate::working_context::WorkingContext;

/// One model call of a run.
pub struct ModelRequest<'a> {
    /// The compiled context to send.
    pub context: &'a WorkingContext,
    /// The tools the model may call.
    pub tools: &'a [ToolSpec],
    /// Which of them it may or must call, when the run says.
    pub tool_choice: Option<&'a ToolChoice>,
    /// The step of the run (0 for the first call).
    pub step: usize,
    /// Raised when the runner stops waiting (the run was cancelled).
    pub signal: &'a AbortSignal,
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestedToolCall {
    /// The provider's id of the call (`id`, `toolCallId`, `call_id`), when
    /// the reply gave one.
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// Its arguments, or why they could not be read (e.g. a model's
    /// malformed JSON): then the call is recorded as a `tool_error` without
    /// running the tool, so the model sees what went wrong.
    pub arguments: std::result::Result<Value, String>,
    /// The call's thought signature (Gemini's `thoughtSignature`), which
    /// the provider asks back with the call in the same turn.
    pub signature: Option<String>,
}

/// What the model answered: text, tool calls, or both.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    /// The answer's text (empty when there is none).
    pub text: String,
    /// The tool calls it asks for, run before the next model call.
    pub tool_calls: Vec<RequestedToolCall>,
    /// What the provider reported the call cost, recorded by the runner
    /// as a `model_usage` event.
    pub usage: Option<ModelUsage>,
    /// Reasoning the provider asks back with this turn.
    pub reasoning: Option<Reasoning>,
    /// The `compaction` block an Anthropic reply carried (the latest, as it
    /// came), recorded before the reply as a `provider_compaction` event.
    pub compaction: Option<Box<Value>>,
    /// What the provider's response said of itself (its id, model and
    /// finish reasons), for the model call's span.
    pub response: ResponseMeta,
}

/// Joins a model's content blocks, or reads plain content: a string, `null`,
/// or an array of `{ type: "text", text }` / `{ type: "tool_use" | "tool-call",
/// ... }` blocks (Anthropic's and the AI SDK's shapes).
fn read_content(
    content: &Value,
    calls: &mut Vec<RequestedToolCall>,
    thinking: &mut Vec<Value>,
    compaction: &mut Option<Box<Value>>,
) -> Result<String> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        Value::Array(blocks) => {
            let mut text = String::new();
            for (i, block) in blocks.iter().enumerate() {
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        text.push_str(block.get("text").and_then(Value::as_str).unwrap_or(""))
                    }
                    Some("tool_use" | "tool-call" | "tool_call") => {
                        calls.push(read_call(block, &format!("content[{i}]"))?)
                    }
                    Some("thinking" | "redacted_thinking") => thinking.push(block.clone()),
                    Some("compaction") => *compaction = Some(Box::new(block.clone())),
                    _ => {}
                }
            }
            Ok(text)
        }
        other => Err(bad_reply(format!(
            "content must be a string, null or an array of blocks (got {})",
            kind_of(other)
        ))),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn bad_reply(message: String) -> Error {
    Error::new(
        ErrorCode::ModelFailed,
        format!("the model's reply is not usable: {message}"),
    )
}

/// Reads one tool call: `{ name, arguments | args | input }` or OpenAI's
/// `{ function: { name, arguments: "<json>" } }`.
fn read_call(call: &Value, at: &str) -> Result<RequestedToolCall> {
    let source = call
        .get("function")
        .filter(|f| f.is_object())
        .unwrap_or(call);
    let name = ["name", "toolName"]
        .iter()
        .find_map(|k| source.get(*k).and_then(Value::as_str))
        .filter(|n| !n.is_empty())
        .ok_or_else(|| bad_reply(format!("{at} has no tool name")))?;
    let raw = ["arguments", "args", "input"]
        .iter()
        .find_map(|k| source.get(*k))
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let signature = ["thoughtSignature", "thought_signature"]
        .iter()
        .find_map(|k| call.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    let id = ["id", "toolCallId", "call_id"]
        .iter()
        .find_map(|k| call.get(*k).and_then(Value::as_str))
        .filter(|id| !id.is_empty())
        .map(str::to_string);
    Ok(RequestedToolCall {
        id,
        name: name.to_string(),
        arguments: read_arguments(raw),
        signature,
    })
}

/// A call's arguments: an object as given, or JSON text (OpenAI sends
/// arguments as text, and a model may get it wrong: then why it cannot be
/// read). Empty text is no arguments.
pub(crate) fn read_arguments(raw: Value) -> std::result::Result<Value, String> {
    match raw {
        Value::String(text) if text.trim().is_empty() => Ok(Value::Object(Map::new())),
        Value::String(text) => serde_json::from_str(&text)
            .map_err(|e| format!("the arguments are not valid JSON ({e}): {text}")),
        other => Ok(other),
    }
}

impl ModelReply {
    /// A reply with text only.
    pub fn text(text: impl Into<String>) -> Self {
        ModelReply {
            text: text.into(),
            ..ModelReply::default()
        }
    }

    /// Reads a reply in the shapes models give: a string; or an object with
    /// `content` (a string, `null`, or text / tool-use blocks) or `text`, and
    /// `toolCalls` or OpenAI's `tool_calls`, and optionally `usage` (or
    /// Gemini's `usageMetadata`) in any shape [`ModelUsage::from_json`]
    /// reads. The providers' own response objects are read too: a Chat
    /// Completion (`choices[0].message`), a Responses response (`output`
    /// items), an Anthropic message (`content` blocks), a Gemini
    /// `GenerateContentResponse` (`candidates[0].content.parts`) and the AI
    /// SDK's `generateText` result (`text`, `toolCalls`). Anything else, and a reply with neither text nor tool calls (nor a compaction block),
    /// is [`ErrorCode::ModelFailed`].
    pub fn from_json(reply: &Value) -> Result<ModelReply> {
        let mut read = ModelReply::read(reply)?;
        read.response = ResponseMeta::from_json(reply);
        Ok(read)
    }

    /// [`ModelReply::from_json`] but the response's own description.
    fn read(reply: &Value) -> Result<ModelReply> {
        if let Some(plain) = provider_response(reply) {
            return ModelReply::read(&plain);
        }
        let object = match reply {
            Value::String(s) if !s.is_empty() => return Ok(ModelReply::text(s.clone())),
            Value::String(_) => return Err(bad_reply("the reply is an empty string".into())),
            Value::Object(o) => o,
            other => {
                return Err(bad_reply(format!(
                    "expected a string or an object with content and toolCalls (got {})",
                    kind_of(other)
                )))
            }
        };
        let mut tool_calls = Vec::new();
        let mut thinking = Vec::new();
        let mut compaction = None;
        let text = match object.get("content").or_else(|| object.get("text")) {
            Some(content) => {
                read_content(content, &mut tool_calls, &mut thinking, &mut compaction)?
            }
            None => String::new(),
        };
        let reasoning = object
            .get("reasoning")
            .and_then(Reasoning::from_json)
            .or((!thinking.is_empty()).then_some(Reasoning {
                format: ProviderFormat::Anthropic,
                items: thinking,
            }));
        for key in ["toolCalls", "tool_calls"] {
            match object.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Array(calls)) => {
                    for (i, c) in calls.iter().enumerate() {
                        tool_calls.push(read_call(c, &format!("{key}[{i}]"))?);
                    }
                }
                Some(other) => {
                    return Err(bad_reply(format!(
                        "{key} must be an array (got {})",
                        kind_of(other)
                    )))
                }
            }
        }
        if !object.contains_key("content")
            && !object.contains_key("text")
            && !object.contains_key("toolCalls")
            && !object.contains_key("tool_calls")
        {
            return Err(bad_reply(
                "the object has none of content, text, toolCalls or tool_calls".into(),
            ));
        }
        if text.is_empty() && tool_calls.is_empty() && compaction.is_none() {
            return Err(bad_reply(
                "the reply has neither text nor tool calls (empty or null content and no calls)"
                    .into(),
            ));
        }
        let usage = match object.get("usage").or_else(|| object.get("usageMetadata")) {
            None | Some(Value::Null) => None,
            Some(u) => {
                Some(ModelUsage::from_json(u).map_err(|e| bad_reply(e.message().to_string()))?)
            }
        };
        Ok(ModelReply {
            text,
            tool_calls,
            usage,
            reasoning,
            compaction,
            response: ResponseMeta::default(),
        })
    }
}

/// A provider's own response object as the plain reply shape
/// `{ content, toolCalls, usage }`, when `reply` is one: a Chat Completion,
/// a Responses response or a Gemini `GenerateContentResponse` (reasoning and
/// thought parts are left out).
fn provider_response(reply: &Value) -> Option<Value> {
    let usage = reply
        .get("usage")
        .or_else(|| reply.get("usageMetadata"))
        .cloned()
        .unwrap_or(Value::Null);
    if let Some(choices) = reply.get("choices").and_then(Value::as_array) {
        let mut message = choices.first()?.get("message")?.clone();
        if let Value::Object(m) = &mut message {
            m.insert("usage".into(), usage);
        }
        return Some(message);
    }
    let mut reasoning = Value::Null;
    let (text, calls) = if let Some(output) = reply.get("output").and_then(Value::as_array) {
        let mut text = String::new();
        let mut calls = Vec::new();
        let items: Vec<Value> = output
            .iter()
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("reasoning"))
            .cloned()
            .collect();
        if !items.is_empty() {
            reasoning = serde_json::json!({ "format": "openai-responses", "items": items });
        }
        for item in output {
            match item.get("type").and_then(Value::as_str) {
                Some("message") => {
                    for part in item.get("content").and_then(Value::as_array).into_iter().flatten() {
                        if part.get("type").and_then(Value::as_str) == Some("output_text") {
                            text.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
                        }
                    }
                }
                Some("function_call") => calls.push(serde_json::json!({
                    "call_id": item.get("call_id").cloned().unwrap_or(Value::Null),
                    "name": item.get("name").cloned().unwrap_or(Value::Null),
                    "arguments": item.get("arguments").cloned().unwrap_or_else(|| Value::String(String::new())),
                })),
                _ => {}
            }
        }
        (text, calls)
    } else if let Some(candidates) = reply.get("candidates").and_then(Value::as_array) {
        let mut text = String::new();
        let mut calls = Vec::new();
        let parts = candidates
            .first()
            .and_then(|c| c.pointer("/content/parts"))
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            if part.get("thought") == Some(&Value::Bool(true)) {
                continue;
            }
            if let Some(call) = part.get("functionCall") {
                calls.push(serde_json::json!({
                    "id": call.get("id").cloned().unwrap_or(Value::Null),
                    "name": call.get("name").cloned().unwrap_or(Value::Null),
                    "args": call.get("args").cloned().unwrap_or_else(|| serde_json::json!({})),
                    "thoughtSignature": part.get("thoughtSignature").cloned().unwrap_or(Value::Null),
                }));
            } else if let Some(t) = part.get("text").and_then(Value::as_str) {
                text.push_str(t);
            }
        }
        (text, calls)
    } else {
        return None;
    };
    Some(serde_json::json!({
        "content": text, "toolCalls": calls, "usage": usage, "reasoning": reasoning,
    }))
}
