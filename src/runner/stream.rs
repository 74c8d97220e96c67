//! Streamed replies: the chunks each provider's streaming API yields, read
//! into the pieces a UI shows as they come ([`StreamDelta`]) and the whole
//! [`ModelReply`] the runner records when the stream ends.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::runner::model::{read_arguments, ModelReply, Reasoning, RequestedToolCall};
use crate::session::ModelUsage;
use crate::wire::ProviderFormat;

/// The stream shapes a runner reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    /// OpenAI Chat Completions chunks (`choices[].delta`).
    OpenAi,
    /// OpenAI Responses events (`response.output_text.delta`, …).
    OpenAiResponses,
    /// Anthropic Messages events (`content_block_delta`, …).
    Anthropic,
    /// Gemini `generateContentStream` chunks (`candidates[].content.parts`).
    Gemini,
    /// Vercel AI SDK `fullStream` parts (`text-delta`, `tool-call`, …).
    AiSdk,
    /// Plain text pieces.
    Text,
}

const ANTHROPIC_EVENTS: &[&str] = &[
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "ping",
];

const AI_SDK_PARTS: &[&str] = &[
    "text-delta",
    "text-start",
    "text-end",
    "tool-call",
    "tool-input-start",
    "tool-input-delta",
    "tool-input-end",
    "tool-result",
    "tool-error",
    "start",
    "start-step",
    "finish-step",
    "finish",
    "reasoning-start",
    "reasoning-delta",
    "reasoning-end",
    "source",
    "file",
    "raw",
    "abort",
];

impl StreamFormat {
    /// Every stream format.
    pub const ALL: [StreamFormat; 6] = [
        StreamFormat::OpenAi,
        StreamFormat::OpenAiResponses,
        StreamFormat::Anthropic,
        StreamFormat::Gemini,
        StreamFormat::AiSdk,
        StreamFormat::Text,
    ];

    /// The format's name: `openai`, `openai-responses`, `anthropic`,
    /// `gemini`, `ai-sdk` or `text`.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamFormat::OpenAi => "openai",
            StreamFormat::OpenAiResponses => "openai-responses",
            StreamFormat::Anthropic => "anthropic",
            StreamFormat::Gemini => "gemini",
            StreamFormat::AiSdk => "ai-sdk",
            StreamFormat::Text => "text",
        }
    }

    /// Parses a format's name.
    pub fn parse(name: &str) -> Result<StreamFormat> {
        crate::error::one_of(
            &StreamFormat::ALL,
            StreamFormat::as_str,
            name,
            "streamFormat",
        )
    }

    /// The format a chunk is in, when it tells.
    pub fn recognise(chunk: &Value) -> Option<StreamFormat> {
        if chunk.is_string() {
            return Some(StreamFormat::Text);
        }
        if chunk.get("choices").is_some() {
            return Some(StreamFormat::OpenAi);
        }
        if chunk.get("candidates").is_some() || chunk.get("usageMetadata").is_some() {
            return Some(StreamFormat::Gemini);
        }
        let kind = chunk.get("type").and_then(Value::as_str)?;
        if kind.starts_with("response.") {
            Some(StreamFormat::OpenAiResponses)
        } else if ANTHROPIC_EVENTS.contains(&kind) {
            Some(StreamFormat::Anthropic)
        } else if AI_SDK_PARTS.contains(&kind) {
            Some(StreamFormat::AiSdk)
        } else {
            None
        }
    }
}

/// A piece of a streamed reply, as it comes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum StreamDelta {
    /// More of the reply's text.
    Text {
        /// The new text.
        text: String,
    },
    /// More of a tool call's arguments (JSON text), or the whole call when
    /// the format sends it whole.
    ToolCall {
        /// The call's id, as the provider gave it.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments' JSON text added.
        #[serde(rename = "argumentsDelta")]
        arguments_delta: String,
    },
}

/// A tool call being streamed.
#[derive(Debug, Default)]
struct StreamedCall {
    /// How the format addresses it (an index, an item or block id).
    key: String,
    id: String,
    name: String,
    /// The arguments' JSON text so far.
    arguments: String,
    /// The arguments, when the format sends them whole.
    whole: Option<Value>,
    complete: bool,
    /// Gemini's thought signature on the call's part.
    signature: Option<String>,
}

/// Reads a streamed reply chunk by chunk.
#[derive(Debug, Default)]
pub struct StreamReader {
    format: Option<StreamFormat>,
    text: String,
    calls: Vec<StreamedCall>,
    /// The provider's usage fields, merged as they come.
    usage: Map<String, Value>,
    /// Reasoning to send back: Anthropic's thinking blocks by block index,
    /// Responses' reasoning items.
    reasoning: Vec<(String, Value)>,
    /// Anthropic's `compaction` block by its block index, filled by its
    /// deltas.
    compaction: Option<(String, Value)>,
}

fn text_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn failed(format: StreamFormat, chunk: &Value) -> Error {
    let message = chunk
        .pointer("/error/message")
        .or_else(|| chunk.get("error"))
        .or_else(|| chunk.pointer("/response/error/message"))
        .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_string))
        .unwrap_or_else(|| chunk.to_string());
    Error::new(
        ErrorCode::ModelFailed,
        format!("the model's {} stream failed: {message}", format.as_str()),
    )
}

impl StreamReader {
    /// A reader of `format`, or of the format the first telling chunk is in.
    pub fn new(format: Option<StreamFormat>) -> Self {
        StreamReader {
            format,
            ..StreamReader::default()
        }
    }

    /// The text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Reads one chunk; returns the pieces it adds. A chunk that says the
    /// stream failed, or one whose format cannot be told before any other
    /// did, is [`ErrorCode::ModelFailed`]; other chunks a format sends
    /// (pings, reasoning, metadata) add nothing.
    pub fn push(&mut self, chunk: &Value) -> Result<Vec<StreamDelta>> {
        let format = match self.format {
            Some(f) => f,
            None => {
                let f = StreamFormat::recognise(chunk).ok_or_else(|| {
                    Error::new(
                        ErrorCode::ModelFailed,
                        format!(
                            "cannot tell which provider's stream this chunk is from (name it with streamFormat): {}",
                            truncate(&chunk.to_string())
                        ),
                    )
                })?;
                self.format = Some(f);
                f
            }
        };
        let mut out = Vec::new();
        match format {
            StreamFormat::Text => {
                if let Some(t) = chunk.as_str() {
                    self.add_text(t, &mut out);
                }
            }
            StreamFormat::OpenAi => self.openai(chunk, &mut out),
            StreamFormat::OpenAiResponses => self.responses(chunk, &mut out)?,
            StreamFormat::Anthropic => self.anthropic(chunk, &mut out)?,
            StreamFormat::Gemini => self.gemini(chunk, &mut out),
            StreamFormat::AiSdk => self.ai_sdk(chunk, &mut out)?,
        }
        Ok(out)
    }

    fn add_text(&mut self, text: &str, out: &mut Vec<StreamDelta>) {
        if !text.is_empty() {
            self.text.push_str(text);
            out.push(StreamDelta::Text {
                text: text.to_string(),
            });
        }
    }

    /// The call addressed by `key`, started when new.
    fn call(&mut self, key: &str) -> &mut StreamedCall {
        let at = match self.calls.iter().position(|c| c.key == key) {
            Some(i) => i,
            None => {
                self.calls.push(StreamedCall {
                    key: key.to_string(),
                    ..StreamedCall::default()
                });
                self.calls.len() - 1
            }
        };
        &mut self.calls[at]
    }

    /// Adds `delta` to the arguments of the call `key`.
    fn add_arguments(&mut self, key: &str, delta: &str, out: &mut Vec<StreamDelta>) {
        let call = self.call(key);
        call.arguments.push_str(delta);
        out.push(StreamDelta::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments_delta: delta.to_string(),
        });
    }

    /// A call the format sends whole.
    fn whole_call(
        &mut self,
        key: &str,
        id: &str,
        name: &str,
        args: Value,
        out: &mut Vec<StreamDelta>,
    ) {
        let call = self.call(key);
        call.id = id.to_string();
        call.name = name.to_string();
        call.whole = Some(args.clone());
        call.complete = true;
        out.push(StreamDelta::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments_delta: args.to_string(),
        });
    }

    fn merge_usage(&mut self, usage: Option<&Value>) {
        if let Some(Value::Object(fields)) = usage {
            for (k, v) in fields {
                if !v.is_null() {
                    self.usage.insert(k.clone(), v.clone());
                }
            }
        }
    }

    fn openai(&mut self, chunk: &Value, out: &mut Vec<StreamDelta>) {
        self.merge_usage(chunk.get("usage"));
        let Some(choice) = chunk.pointer("/choices/0") else {
            return;
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        self.add_text(text_of(delta, "content"), out);
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = call
                .get("index")
                .map_or_else(|| "0".into(), Value::to_string);
            let entry = self.call(&key);
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                entry.id = id.to_string();
            }
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                entry.name.push_str(name);
            }
            let arguments = call
                .pointer("/function/arguments")
                .and_then(Value::as_str)
                .unwrap_or("");
            self.add_arguments(&key, arguments, out);
        }
        // The calls are whole when the choice finishes.
        if choice.get("finish_reason").is_some_and(|r| !r.is_null()) {
            self.calls.iter_mut().for_each(|c| c.complete = true);
        }
    }

    fn responses(&mut self, event: &Value, out: &mut Vec<StreamDelta>) -> Result<()> {
        let item_id = text_of(event, "item_id").to_string();
        match text_of(event, "type") {
            "response.output_text.delta" => self.add_text(text_of(event, "delta"), out),
            "response.output_item.added" | "response.output_item.done" => {
                let item = event.get("item").unwrap_or(&Value::Null);
                if text_of(item, "type") == "reasoning"
                    && text_of(event, "type") == "response.output_item.done"
                {
                    self.reasoning
                        .push((text_of(item, "id").to_string(), item.clone()));
                }
                if text_of(item, "type") == "function_call" {
                    let key = text_of(item, "id").to_string();
                    let done = text_of(event, "type") == "response.output_item.done";
                    let call = self.call(&key);
                    call.id = text_of(item, "call_id").to_string();
                    call.name = text_of(item, "name").to_string();
                    if done {
                        call.arguments = text_of(item, "arguments").to_string();
                        call.complete = true;
                    }
                }
            }
            "response.function_call_arguments.delta" => {
                self.add_arguments(&item_id, text_of(event, "delta"), out)
            }
            "response.function_call_arguments.done" => {
                let call = self.call(&item_id);
                call.arguments = text_of(event, "arguments").to_string();
                call.complete = true;
            }
            "response.completed" | "response.incomplete" => {
                self.merge_usage(event.pointer("/response/usage"))
            }
            "response.failed" | "error" => {
                return Err(failed(StreamFormat::OpenAiResponses, event))
            }
            _ => {}
        }
        Ok(())
    }

    /// Appends `delta`'s `fields` (those that are text) to the compaction
    /// block at `key`.
    fn add_compaction(&mut self, key: &str, delta: &Value, fields: &[&str]) {
        let Some((_, Value::Object(block))) = self.compaction.as_mut().filter(|(k, _)| k == key)
        else {
            return;
        };
        for field in fields {
            let Some(more) = delta.get(*field).and_then(Value::as_str) else {
                continue;
            };
            match block.get_mut(*field) {
                Some(Value::String(text)) => text.push_str(more),
                _ => {
                    block.insert((*field).into(), Value::String(more.to_string()));
                }
            }
        }
    }

    fn anthropic(&mut self, event: &Value, out: &mut Vec<StreamDelta>) -> Result<()> {
        let key = event
            .get("index")
            .map_or_else(String::new, Value::to_string);
        match text_of(event, "type") {
            "message_start" => self.merge_usage(event.pointer("/message/usage")),
            "message_delta" => self.merge_usage(event.get("usage")),
            "content_block_start" => {
                let block = event.get("content_block").unwrap_or(&Value::Null);
                match text_of(block, "type") {
                    "text" => self.add_text(text_of(block, "text"), out),
                    "thinking" | "redacted_thinking" => self.reasoning.push((key, block.clone())),
                    "compaction" => self.compaction = Some((key, block.clone())),
                    "tool_use" => {
                        let call = self.call(&key);
                        call.id = text_of(block, "id").to_string();
                        call.name = text_of(block, "name").to_string();
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = event.get("delta").unwrap_or(&Value::Null);
                match text_of(delta, "type") {
                    "text_delta" => self.add_text(text_of(delta, "text"), out),
                    "input_json_delta" => {
                        self.add_arguments(&key, text_of(delta, "partial_json"), out)
                    }
                    "compaction_delta" => {
                        self.add_compaction(&key, delta, &["content", "encrypted_content"])
                    }
                    "signature_delta"
                        if self.compaction.as_ref().is_some_and(|(k, _)| *k == key) =>
                    {
                        self.add_compaction(&key, delta, &["signature"])
                    }
                    kind @ ("thinking_delta" | "signature_delta") => {
                        let field = if kind == "thinking_delta" {
                            "thinking"
                        } else {
                            "signature"
                        };
                        if let Some((_, Value::Object(block))) =
                            self.reasoning.iter_mut().find(|(k, _)| *k == key)
                        {
                            // Appended where it is, so a long thought
                            // costs what its length does.
                            let more = text_of(delta, field);
                            match block.get_mut(field) {
                                Some(Value::String(text)) => text.push_str(more),
                                _ => {
                                    block.insert(field.into(), Value::String(more.to_string()));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(call) = self.calls.iter_mut().find(|c| c.key == key) {
                    call.complete = true;
                }
            }
            "error" => return Err(failed(StreamFormat::Anthropic, event)),
            _ => {}
        }
        Ok(())
    }

    fn gemini(&mut self, chunk: &Value, out: &mut Vec<StreamDelta>) {
        self.merge_usage(chunk.get("usageMetadata"));
        let parts = chunk
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for part in &parts {
            if part.get("thought") == Some(&Value::Bool(true)) {
                continue;
            }
            if let Some(call) = part.get("functionCall") {
                let key = format!("g{}", self.calls.len());
                let id = text_of(call, "id");
                let args = call
                    .get("args")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                self.whole_call(&key, id, text_of(call, "name"), args, out);
                let signature = part.get("thoughtSignature").and_then(Value::as_str);
                self.call(&key).signature = signature.map(str::to_string);
            } else {
                self.add_text(text_of(part, "text"), out);
            }
        }
    }

    fn ai_sdk(&mut self, part: &Value, out: &mut Vec<StreamDelta>) -> Result<()> {
        match text_of(part, "type") {
            "text-delta" => {
                let text = part
                    .get("text")
                    .or_else(|| part.get("textDelta"))
                    .or_else(|| part.get("delta"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                self.add_text(text, out);
            }
            "tool-input-start" => {
                let key = text_of(part, "id").to_string();
                let call = self.call(&key);
                call.id = key.clone();
                call.name = text_of(part, "toolName").to_string();
            }
            "tool-input-delta" => {
                let key = text_of(part, "id").to_string();
                self.add_arguments(&key, text_of(part, "delta"), out);
            }
            "tool-call" => {
                let key = text_of(part, "toolCallId").to_string();
                let args = part
                    .get("input")
                    .or_else(|| part.get("args"))
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                let args = match args {
                    // The SDK's own stream sends the input as JSON text.
                    Value::String(text) => {
                        serde_json::from_str(&text).unwrap_or(Value::String(text))
                    }
                    other => other,
                };
                let streamed = self.calls.iter().any(|c| c.key == key);
                let name = text_of(part, "toolName").to_string();
                if streamed {
                    let call = self.call(&key);
                    call.whole = Some(args);
                    call.name = name;
                    call.complete = true;
                } else {
                    self.whole_call(&key, &key, &name, args, out);
                }
            }
            "finish-step" => self.merge_usage(part.get("usage")),
            "finish" => self.merge_usage(part.get("totalUsage").or_else(|| part.get("usage"))),
            "error" | "abort" => return Err(failed(StreamFormat::AiSdk, part)),
            _ => {}
        }
        Ok(())
    }

    /// Whether the call `c` arrived whole: the format said so, or (Chat
    /// Completions, whose servers may leave out the choice's finish) its
    /// arguments are a whole JSON value.
    fn whole(&self, c: &StreamedCall) -> bool {
        c.complete
            || (self.format == Some(StreamFormat::OpenAi)
                && (c.whole.is_some()
                    || serde_json::from_str::<Value>(&c.arguments).is_ok_and(|v| v.is_object())))
    }

    /// The name of a call the stream started and did not finish (a stream
    /// cut after the chunk naming a call, before its arguments): such a call
    /// must not run. `None` when every call arrived whole.
    pub fn unfinished_call(&self) -> Option<&str> {
        self.calls.iter().find(|c| !self.whole(c)).map(|c| {
            if c.name.is_empty() {
                "a tool"
            } else {
                c.name.as_str()
            }
        })
    }

    /// The whole reply, once the stream has ended: its text, its complete
    /// tool calls (a call the stream never finished is left out, so none
    /// is recorded without an outcome; see [`StreamReader::unfinished_call`]),
    /// and the usage it reported.
    pub fn finish(self) -> Result<ModelReply> {
        let whole: Vec<bool> = self.calls.iter().map(|c| self.whole(c)).collect();
        let usage = if self.usage.is_empty() {
            None
        } else {
            Some(
                ModelUsage::from_json(&Value::Object(self.usage)).map_err(|e| {
                    Error::new(
                        ErrorCode::ModelFailed,
                        format!("the stream's usage is not usable: {}", e.message()),
                    )
                })?,
            )
        };
        let tool_calls: Vec<RequestedToolCall> = self
            .calls
            .into_iter()
            .zip(whole)
            .filter(|(c, whole)| *whole && !c.name.is_empty())
            .map(|(c, _)| c)
            .map(|c| RequestedToolCall {
                id: (!c.id.is_empty()).then_some(c.id),
                signature: c.signature,
                name: c.name,
                arguments: match c.whole {
                    Some(args) => Ok(args),
                    None => read_arguments(Value::String(c.arguments)),
                },
            })
            .collect();
        if self.text.is_empty() && tool_calls.is_empty() && self.compaction.is_none() {
            return Err(Error::new(
                ErrorCode::ModelFailed,
                "the model's stream ended with neither text nor tool calls",
            ));
        }
        let reasoning = match self.format {
            _ if self.reasoning.is_empty() => None,
            Some(StreamFormat::Anthropic) => Some(ProviderFormat::Anthropic),
            Some(StreamFormat::OpenAiResponses) => Some(ProviderFormat::OpenAiResponses),
            _ => None,
        }
        .map(|format| Reasoning {
            format,
            items: self.reasoning.into_iter().map(|(_, item)| item).collect(),
        });
        Ok(ModelReply {
            text: self.text,
            tool_calls,
            usage,
            reasoning,
            compaction: self.compaction.map(|(_, block)| Box::new(block)),
            response: Default::default(),
        })
    }
}

fn truncate(text: &str) -> &str {
    match text.char_indices().nth(200) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}
