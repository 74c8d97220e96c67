//! The spans a run and a compile emit, after OpenTelemetry's GenAI
//! semantic conventions: `invoke_agent` for a turn, `chat {model}` for a
//! model call, `execute_tool {name}` for a tool call, each under the turn,
//! and `compile_context` for a compile, with the `gen_ai.*` attributes
//! and the library's own `agent_context_compiler.*` ones (budget, zones,
//! compaction level, cache prefix, recall). Text (messages, replies,
//! arguments, results) only when the trace asks for content, and then
//! redacted.

use serde_json::{json, Value};

use super::{Attribute, Attributes, Span, SpanKind, TraceOptions, Tracer};
use crate::error::Result;
use crate::normalize::redact::{redact, redact_json};
use crate::session::ModelUsage;
use crate::tools::{ToolEvent, ToolEventKind};
use crate::wire::ProviderFormat;
use crate::wire::ResponseMeta;
use crate::working_context::WorkingContext;

/// `gen_ai.operation.name`: `invoke_agent`, `chat`, `execute_tool`.
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.request.model`: the model's name, when the run has one.
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// `gen_ai.conversation.id`: the session's id.
pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// `gen_ai.usage.input_tokens`, as the provider reported it.
pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// `gen_ai.usage.output_tokens`, as the provider reported it.
pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// `gen_ai.usage.cache_read.input_tokens`: input tokens the provider's
/// prompt cache served.
pub const CACHE_READ_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
/// `gen_ai.tool.name`.
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.tool.call.id`: the provider's id of the call, else its event's.
pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `gen_ai.tool.type`: always `function`.
pub const TOOL_TYPE: &str = "gen_ai.tool.type";
/// `gen_ai.input.messages` (content only): the messages sent, redacted.
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// `gen_ai.output.messages` (content only): the reply, redacted.
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// `gen_ai.tool.call.arguments` (content only), redacted.
pub const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// `gen_ai.tool.call.result` (content only), redacted.
pub const TOOL_RESULT: &str = "gen_ai.tool.call.result";

/// `gen_ai.provider.name`: who serves the model.
pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
/// `gen_ai.agent.name`: the agent a turn runs.
pub const AGENT_NAME: &str = "gen_ai.agent.name";
/// `gen_ai.response.id`: the provider's id of the response.
pub const RESPONSE_ID: &str = "gen_ai.response.id";
/// `gen_ai.response.model`: the model that answered.
pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
/// `gen_ai.response.finish_reasons`: why the response stopped.
pub const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";

/// The compile span's name.
pub const COMPILE_SPAN: &str = "compile_context";

/// The `gen_ai.provider.name` a request in `format` goes to, when the
/// format names one (the AI SDK's and the plain format do not).
pub fn provider_of(format: Option<ProviderFormat>) -> Option<&'static str> {
    match format? {
        ProviderFormat::OpenAi | ProviderFormat::OpenAiResponses => Some("openai"),
        ProviderFormat::Anthropic => Some("anthropic"),
        ProviderFormat::Gemini => Some("gcp.gemini"),
        ProviderFormat::AiSdk | ProviderFormat::Plain => None,
    }
}

/// The trace's provider name: the one given, else `format`'s.
fn provider(trace: &TraceOptions, format: Option<ProviderFormat>) -> Option<&str> {
    trace.provider.as_deref().or_else(|| provider_of(format))
}

/// A turn's span: `invoke_agent` (`invoke_agent {name}` for a named
/// agent), under the host's current span.
pub fn start_turn(
    trace: &TraceOptions,
    session_id: &str,
    model: Option<&str>,
    format: Option<ProviderFormat>,
    budget: u64,
) -> Box<dyn Span> {
    let mut attributes: Attributes = vec![
        (OPERATION_NAME, "invoke_agent".into()),
        (CONVERSATION_ID, session_id.into()),
        ("agent_context_compiler.budget", budget.into()),
    ];
    if let Some(model) = model {
        attributes.push((REQUEST_MODEL, model.into()));
    }
    if let Some(provider) = provider(trace, format) {
        attributes.push((PROVIDER_NAME, provider.into()));
    }
    let name = match &trace.agent_name {
        Some(agent) => {
            attributes.push((AGENT_NAME, agent.as_str().into()));
            format!("invoke_agent {agent}")
        }
        None => "invoke_agent".to_string(),
    };
    trace
        .tracer
        .start_span(&name, SpanKind::Internal, attributes, None)
}

/// What a finished turn adds to its span: the model calls made, why it
/// stopped, and the usage summed over its calls.
pub fn end_turn(span: &dyn Span, steps: usize, stop_reason: &str, usage: Option<&ModelUsage>) {
    let mut attributes: Attributes = vec![
        ("agent_context_compiler.steps", steps.into()),
        ("agent_context_compiler.stop_reason", stop_reason.into()),
    ];
    usage_attributes(usage, &mut attributes);
    span.set_attributes(attributes);
    span.end();
}

/// Marks `span` failed with the error's code and its message redacted
/// (a model's or a host's error can quote a request, and spans leave the
/// process with or without `traceContent`), then ends it.
pub fn fail(span: &dyn Span, code: &str, message: &str) {
    span.fail(code, &redact(message).text);
    span.end();
}

/// Ends `span` for `outcome`: `on_success` (which ends it) with the value,
/// or failed with the error's code and message.
pub fn close<T>(span: &dyn Span, outcome: &Result<T>, on_success: impl FnOnce(&T)) {
    match outcome {
        Ok(value) => on_success(value),
        Err(e) => fail(span, e.code().as_str(), e.message()),
    }
}

fn usage_attributes(usage: Option<&ModelUsage>, attributes: &mut Attributes) {
    if let Some(usage) = usage {
        attributes.push((INPUT_TOKENS, usage.input_tokens.into()));
        attributes.push((OUTPUT_TOKENS, usage.output_tokens.into()));
        attributes.push((CACHE_READ_TOKENS, usage.cached_input_tokens.into()));
    }
}

/// A compile's span, `compile_context`, under `parent` (the host's
/// current span when `None`).
pub fn start_compile(tracer: &dyn Tracer, parent: Option<&dyn Span>, budget: u64) -> Box<dyn Span> {
    tracer.start_span(
        COMPILE_SPAN,
        SpanKind::Internal,
        vec![("agent_context_compiler.budget", budget.into())],
        parent,
    )
}

/// What a compile's span says of its context: tokens in all and per zone,
/// messages, compaction level, what was dropped and recalled, and the
/// prompt prefix repeated from the previous compile (with the cause of the
/// first difference).
pub fn compile_attributes(ctx: &WorkingContext) -> Attributes {
    let zones = &ctx.zone_usage;
    let mut attributes: Attributes = vec![
        ("agent_context_compiler.tokens", ctx.token_count.into()),
        ("agent_context_compiler.target", ctx.budget.into()),
        ("agent_context_compiler.zone.system", zones.system.into()),
        (
            "agent_context_compiler.zone.persistent",
            zones.persistent.into(),
        ),
        ("agent_context_compiler.zone.working", zones.working.into()),
        ("agent_context_compiler.zone.recent", zones.recent.into()),
        (
            "agent_context_compiler.compaction_level",
            ctx.compaction_level.as_str().into(),
        ),
        ("agent_context_compiler.dropped", ctx.dropped.len().into()),
        (
            "agent_context_compiler.recall.turns",
            ctx.recalled.len().into(),
        ),
    ];
    if let Some(cache) = &ctx.cache {
        attributes.push((
            "agent_context_compiler.cache.prefix_tokens",
            cache.prefix_tokens.into(),
        ));
        attributes.push((
            "agent_context_compiler.cache.prefix_messages",
            cache.prefix_messages.into(),
        ));
        if let Some(miss) = &cache.miss {
            attributes.push((
                "agent_context_compiler.cache.miss_cause",
                miss.cause.as_str().into(),
            ));
            attributes.push((
                "agent_context_compiler.cache.miss_index",
                miss.message_index.into(),
            ));
        }
    }
    attributes
}

/// A model call's span, `chat {model}` (`chat` without a model name),
/// under the turn.
pub fn start_chat(
    trace: &TraceOptions,
    turn: &dyn Span,
    model: Option<&str>,
    format: Option<ProviderFormat>,
    step: usize,
    ctx: &WorkingContext,
) -> Box<dyn Span> {
    let mut attributes: Attributes = vec![
        (OPERATION_NAME, "chat".into()),
        ("agent_context_compiler.step", step.into()),
        ("agent_context_compiler.tokens", ctx.token_count.into()),
    ];
    if let Some(model) = model {
        attributes.push((REQUEST_MODEL, model.into()));
    }
    if let Some(provider) = provider(trace, format) {
        attributes.push((PROVIDER_NAME, provider.into()));
    }
    if trace.content {
        let messages: Vec<Value> = ctx
            .to_messages()
            .iter()
            .map(|m| json!({ "role": m.role, "parts": [text_part(&m.content)] }))
            .collect();
        attributes.push((INPUT_MESSAGES, Value::Array(messages).to_string().into()));
    }
    let name = match model {
        Some(model) => format!("chat {model}"),
        None => "chat".to_string(),
    };
    trace
        .tracer
        .start_span(&name, SpanKind::Client, attributes, Some(turn))
}

fn text_part(text: &str) -> Value {
    json!({ "type": "text", "content": redact(text).text })
}

/// A tool call the model asked for, as the chat span's content shows it.
pub struct CallSeen<'a> {
    /// The provider's id of the call.
    pub id: Option<&'a str>,
    /// The tool.
    pub name: &'a str,
    /// Its arguments, when they could be read.
    pub arguments: Option<&'a Value>,
}

/// Ends a model call's span with the provider's usage, what its response
/// said of itself (id, model, finish reasons), the number of tool calls
/// asked for and (content only) the reply.
pub fn end_chat(
    trace: &TraceOptions,
    span: &dyn Span,
    text: &str,
    calls: &[CallSeen<'_>],
    usage: Option<&ModelUsage>,
    response: &ResponseMeta,
) {
    let mut attributes: Attributes =
        vec![("agent_context_compiler.tool_calls", calls.len().into())];
    usage_attributes(usage, &mut attributes);
    if let Some(id) = &response.id {
        attributes.push((RESPONSE_ID, id.as_str().into()));
    }
    if let Some(model) = &response.model {
        attributes.push((RESPONSE_MODEL, model.as_str().into()));
    }
    if !response.finish_reasons.is_empty() {
        attributes.push((
            FINISH_REASONS,
            Attribute::Texts(response.finish_reasons.clone()),
        ));
    }
    if trace.content {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(text_part(text));
        }
        parts.extend(calls.iter().map(|call| {
            json!({
                "type": "tool_call",
                "id": call.id,
                "name": call.name,
                "arguments": call.arguments.map(redacted_json),
            })
        }));
        let reply = json!([{ "role": "assistant", "parts": parts }]);
        attributes.push((OUTPUT_MESSAGES, reply.to_string().into()));
    }
    span.set_attributes(attributes);
    span.end();
}

fn redacted_json(value: &Value) -> Value {
    let mut value = value.clone();
    redact_json(&mut value);
    value
}

/// A tool call's span, `execute_tool {name}`, under the turn.
pub fn start_tool(
    trace: &TraceOptions,
    turn: &dyn Span,
    name: &str,
    call_id: Option<&str>,
    arguments: Option<&Value>,
) -> Box<dyn Span> {
    let mut attributes: Attributes = vec![
        (OPERATION_NAME, "execute_tool".into()),
        (TOOL_NAME, name.into()),
        (TOOL_TYPE, "function".into()),
    ];
    if let Some(id) = call_id {
        attributes.push((TOOL_CALL_ID, id.into()));
    }
    if let (true, Some(arguments)) = (trace.content, arguments) {
        attributes.push((TOOL_ARGUMENTS, redacted_json(arguments).to_string().into()));
    }
    trace.tracer.start_span(
        &format!("execute_tool {name}"),
        SpanKind::Internal,
        attributes,
        Some(turn),
    )
}

/// Ends a tool call's span with its outcome: the event's kind, latency and
/// stored artifact; a failed or timed-out call marks the span failed.
/// (Content only: the result as recorded, which is already redacted.)
pub fn end_tool(trace: &TraceOptions, span: &dyn Span, event: &ToolEvent) {
    let mut attributes: Attributes = vec![
        (
            "agent_context_compiler.tool.outcome",
            event.kind.as_str().into(),
        ),
        (
            "agent_context_compiler.tool.latency_ms",
            Attribute::Int(event.latency_ms.round() as i64),
        ),
    ];
    if let Some(artifact) = &event.artifact {
        attributes.push((
            "agent_context_compiler.tool.artifact",
            artifact.artifact_id.as_str().into(),
        ));
    }
    if let (true, Some(result)) = (trace.content, &event.result) {
        attributes.push((TOOL_RESULT, redact(result).text.into()));
    }
    span.set_attributes(attributes);
    match event.kind {
        ToolEventKind::Error | ToolEventKind::Timeout => fail(
            span,
            event.kind.as_str(),
            event.error.as_deref().unwrap_or("the tool failed"),
        ),
        _ => span.end(),
    }
}
