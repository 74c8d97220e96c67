//! Recording a model's reply in a session, as the runner does at each step
//! and as a loop of the host's own does with `Session::record_reply`.

use std::cell::RefCell;

use serde_json::{json, Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::normalize::redact::{redact, redact_json};
use crate::runner::{ModelReply, Reasoning, RequestedToolCall};
use crate::session::render::call_id_of;
use crate::session::{
    provider_compaction, record_shared, Session, SessionEvent, ASSISTANT_OUTPUT, MODEL_USAGE,
    PROVIDER_COMPACTION, TOOL_CALL, TOOL_ERROR,
};
use crate::tools::{ToolEvent, ToolEventKind};
use crate::wire::ProviderFormat;

/// Records `reply` in `session`: its usage as a `model_usage` event (with
/// `context_tokens`, the count of the context it answered; by default the
/// session's latest compile's), its `compaction` block as it came as a
/// `provider_compaction` event (see
/// [`crate::session::provider_compaction`]), then its text (with its reasoning) as an `assistant_output` when it has
/// text or asks for no tool. Returns the reasoning that goes with the
/// reply's first tool call instead (a reply of calls only), if any.
pub fn record_reply<'r>(
    session: &RefCell<Session>,
    reply: &'r ModelReply,
    context_tokens: Option<u64>,
) -> Result<Option<&'r Reasoning>> {
    if let Some(usage) = &reply.usage {
        let data = session
            .try_borrow()
            .map_err(|_| Error::new(ErrorCode::SessionBusy, "the session is being written to"))?
            .usage_event_data(usage, context_tokens);
        record_shared(session, MODEL_USAGE, data, None)?;
    }
    if let Some(block) = &reply.compaction {
        let data = provider_compaction::event_data(ProviderFormat::Anthropic, block)?;
        record_shared(session, PROVIDER_COMPACTION, data, None)?;
    }
    if has_text(reply) {
        let mut data = json!({ "text": reply.text });
        if let Some(r) = &reply.reasoning {
            data["reasoning"] = r.to_json();
        }
        record_shared(session, ASSISTANT_OUTPUT, data, None)?;
        return Ok(None);
    }
    Ok(reply.reasoning.as_ref())
}

/// Whether `reply` is recorded as an `assistant_output`: it has text, or
/// asks for no tool (and is not a provider's pause after compacting).
pub(crate) fn has_text(reply: &ModelReply) -> bool {
    !reply.text.is_empty() || (reply.tool_calls.is_empty() && !paused_for_compaction(reply))
}

/// Whether `reply` is a `compaction` block alone (Anthropic's
/// `pause_after_compaction`): the model is asked again, the block first.
pub(crate) fn paused_for_compaction(reply: &ModelReply) -> bool {
    reply.text.is_empty() && reply.tool_calls.is_empty() && reply.compaction.is_some()
}

/// What the `tool_call` event of the `index`th call of a reply notes
/// beside the call itself: the provider's id of it (`call_id`), its
/// thought signature, and on the first call the reasoning of a reply of
/// calls only.
pub fn call_notes(
    call: &RequestedToolCall,
    index: usize,
    reasoning: Option<&Reasoning>,
) -> Map<String, Value> {
    let mut notes = Map::new();
    if let Some(id) = call.id.as_deref().filter(|id| !id.is_empty()) {
        notes.insert("call_id".into(), json!(id));
    }
    if let Some(signature) = &call.signature {
        notes.insert("thought_signature".into(), json!(signature));
    }
    if let (0, Some(r)) = (index, reasoning) {
        notes.insert("reasoning".into(), r.to_json());
    }
    notes
}

/// Records a call that did not run (`why`, redacted) and its `tool_error`,
/// with `notes` on the call, paired by `call_id` as the handler pairs them
/// (the provider's id when `notes` has one, else the call event's).
pub fn refuse_call(
    session: &RefCell<Session>,
    call: &RequestedToolCall,
    why: &str,
    notes: Map<String, Value>,
) -> Result<ToolEvent> {
    let recorded = record_refused_call(session, call, notes)?;
    record_refusal(session, call, why, &recorded)
}

/// The first half of [`refuse_call`]: records the `tool_call` (arguments
/// redacted, with `notes`).
pub fn record_refused_call(
    session: &RefCell<Session>,
    call: &RequestedToolCall,
    notes: Map<String, Value>,
) -> Result<SessionEvent> {
    let mut arguments = match &call.arguments {
        Ok(v) => v.clone(),
        Err(_) => Value::Object(Default::default()),
    };
    redact_json(&mut arguments);
    let mut data = json!({"tool_name": call.name, "arguments": arguments});
    if let Value::Object(fields) = &mut data {
        fields.extend(notes);
    }
    record_shared(session, TOOL_CALL, data, None)
}

/// The second half of [`refuse_call`]: records the `tool_error` (`why`,
/// redacted) answering the `tool_call` `recorded`.
pub fn record_refusal(
    session: &RefCell<Session>,
    call: &RequestedToolCall,
    why: &str,
    recorded: &SessionEvent,
) -> Result<ToolEvent> {
    let arguments = crate::session::render::call_arguments(&recorded.data);
    let message = redact(why).text;
    let outcome = record_shared(
        session,
        TOOL_ERROR,
        json!({"tool": call.name, "call_id": call_id_of(&recorded.data).unwrap_or(&recorded.event_id), "latency_ms": 0.0, "error": message}),
        None,
    )?;
    Ok(ToolEvent {
        event_id: outcome.event_id,
        timestamp: outcome.timestamp,
        kind: ToolEventKind::Error,
        tool_name: call.name.clone(),
        arguments,
        result: None,
        error: Some(message),
        latency_ms: 0.0,
        normalized: None,
        artifact: None,
    })
}

/// Records a whole reply a loop of the host's own got (the host then runs
/// the calls itself): [`record_reply`], and each call whose arguments are
/// not JSON refused as the runner refuses it. Returns `{ text, toolCalls,
/// refused, usage }` (`usage` null when the reply had none): the calls to run, each `{ id?, name, arguments,
/// callOptions }` with the options a tool handler's `call` records the
/// provider's id, signature and reasoning by (`callId`,
/// `thoughtSignature`, `reasoning`), and the refused calls' `tool_error`
/// events.
pub fn record_host_reply(session: &RefCell<Session>, reply: &ModelReply) -> Result<Value> {
    let reasoning = record_reply(session, reply, None)?;
    let mut calls = Vec::new();
    let mut refused = Vec::new();
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let notes = call_notes(call, i, reasoning);
        match &call.arguments {
            Ok(arguments) => {
                let mut options = Map::new();
                for (note, key) in [
                    ("call_id", "callId"),
                    ("thought_signature", "thoughtSignature"),
                    ("reasoning", "reasoning"),
                ] {
                    if let Some(v) = notes.get(note) {
                        options.insert(key.into(), v.clone());
                    }
                }
                let mut out = json!({
                    "name": call.name,
                    "arguments": arguments,
                    "callOptions": options,
                });
                if let Some(id) = &call.id {
                    out["id"] = json!(id);
                }
                calls.push(out);
            }
            Err(why) => refused.push(refuse_call(session, call, why, notes)?),
        }
    }
    Ok(json!({
        "text": reply.text,
        "toolCalls": calls,
        "refused": refused,
        "usage": reply.usage,
    }))
}
