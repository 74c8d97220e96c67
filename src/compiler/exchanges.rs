//! Turns selected session events into the zoned layout's history: turns as
//! messages, tool calls as assistant messages with their calls, each call
//! followed by its result, paired by `call_id`.

use std::borrow::Cow;
use std::rc::Rc;

use serde_json::Value;

use crate::compiler::processor::SessionWrites;
use crate::media::cost::MediaPricing;
use crate::media::MediaPart;
use crate::normalize::summary::summarize_text;
use crate::session::render::{self, render, Rendered};
use crate::session::{EventLog, TOOL_CALL, TOOL_ERROR, TOOL_TIMEOUT};
use crate::wire::names::{provider_call_id, provider_tool_name};
use crate::working_context::{has_text, ProviderFormat, EMPTY_OUTPUT};
use crate::working_context::{
    reasoning_tokens, zoned_message_tokens, ArtifactRef, HistoryMessage, Shared, ToolCallPart,
};

/// Characters of a masked output's summary.
const MASK_SUMMARY_CHARS: usize = 200;

/// The reasoning the event at `position` holds to send back (`reasoning`,
/// as the runner records it, when it is `{ format, items }`), only when the
/// event is in the current turn (after the newest user input): providers
/// ask for the reasoning of the tool loop under way and drop the rest. And
/// only when the compile's `format` sends it (its own format's; any,
/// without a format): what a request will not carry is not counted.
fn reasoning_at(log: &EventLog, position: usize, format: Option<ProviderFormat>) -> Option<Value> {
    if log.last_user_input_position().is_some_and(|u| position < u) {
        return None;
    }
    let r = log.events().get(position)?.data.get("reasoning")?;
    let named = r.get("format")?.as_str()?;
    if format.is_some_and(|f| f.as_str() != named) {
        return None;
    }
    r.get("items")?.is_array().then(|| r.clone())
}

/// Whether a compile in `format` sends a call's thought signature (only
/// Gemini's requests carry one; without a format it is counted).
fn sends_signatures(format: Option<ProviderFormat>) -> bool {
    format.is_none_or(|f| f == ProviderFormat::Gemini)
}

/// A tool result's content when its output is in an artifact store.
pub(crate) fn artifact_content(r: &ArtifactRef) -> String {
    format!(
        "[artifact {} ({} bytes), use the handle to retrieve] {}",
        r.handle, r.size_bytes, r.summary
    )
}

/// A tool result's content when compaction masked its output.
fn masked_content(event_id: &str, bytes: usize, summary: &str) -> String {
    format!("[output masked to save context: {bytes} bytes, kept in session event {event_id}] {summary}")
}

/// The largest turn the session keeps to share (see
/// [`EventLog::keep_message`]): a larger one (a pasted file) is built for
/// each compile, so that a text the attacher may move to the store is not
/// held twice for the session's life.
const KEEP_TURN_BYTES: usize = 16 * 1024;

/// The largest inline tool result the session keeps to share: below the
/// attacher's default threshold (1,024 bytes), so that a result the attacher
/// externalises (and a kept copy would then never serve) is not kept.
const KEEP_RESULT_BYTES: usize = 1023;

/// The conversation turn at `position` as a history message (`None` when
/// the event there is not one), with its media priced by `pricing` and
/// the `reasoning` it sends back. A turn with neither is the session's own
/// shared message (see [`EventLog::keep_message`]), built once.
pub(crate) fn shared_turn(
    log: &EventLog,
    position: usize,
    pricing: &MediaPricing,
    reasoning: Option<Value>,
) -> Option<Shared> {
    // Built before: the event has no media (nor gains any), the message
    // none of its event's data to read again.
    if reasoning.is_none() {
        if let Some(m) = log.built_message(position) {
            return Some(m);
        }
    }
    let event = log.events().get(position)?;
    let media = priced_media(&event.data, pricing);
    let turn = || {
        let Some(Rendered::Message { role, content }) = render(&event.kind, &event.data) else {
            return None;
        };
        let mut m = HistoryMessage::new(role, content);
        m.event_id = Some(event.event_id.clone());
        m.tokens = Some(log.rendered_tokens(position));
        m.position = Some(position);
        Some(m)
    };
    let mut m = turn()?;
    if reasoning.is_none() && media.is_empty() && m.content.len() <= KEEP_TURN_BYTES {
        return Some(log.keep_message(position, m));
    }
    // With media, the text names each part too: counted whole.
    m.tokens = media.is_empty().then(|| {
        log.rendered_tokens(position) + reasoning_tokens(reasoning.as_ref(), log.counter())
    });
    m.reasoning = reasoning;
    m.media = media;
    Some(Rc::new(m))
}

/// How a tool outcome appears as a tool result.
pub(crate) struct Outcome {
    pub(crate) content: String,
    pub(crate) is_error: bool,
    pub(crate) artifact: Option<ArtifactRef>,
    pub(crate) masked: bool,
    /// The images and files the outcome carries (none once masked).
    pub(crate) media: Vec<MediaPart>,
}

/// The media parts of `data`, priced by `pricing` (parts that do not read
/// are left out: [`crate::session::EventLog`] refuses them when recorded).
pub(crate) fn priced_media(data: &Value, pricing: &MediaPricing) -> Vec<MediaPart> {
    let mut parts = crate::media::parts_of(data).unwrap_or_default();
    for p in &mut parts {
        p.tokens = Some(pricing.tokens(p));
    }
    parts
}

/// The tool result of the outcome at `position`: its artifact reference when
/// externalised (in the session or by this compile's `writes`), a summary
/// when `mask` is set, else its text.
pub(crate) fn outcome(
    log: &EventLog,
    position: usize,
    mask: bool,
    writes: &SessionWrites,
    pricing: &MediaPricing,
) -> Option<Outcome> {
    let event = log.events().get(position)?;
    let media = if mask {
        Vec::new()
    } else {
        priced_media(&event.data, pricing)
    };
    let is_error = event.kind == TOOL_ERROR || event.kind == TOOL_TIMEOUT;
    let known = log
        .externalized(&event.event_id)
        .cloned()
        .or_else(|| writes.externalized(&event.event_id));
    if let Some(mut r) = known {
        r.event_id = Some(event.event_id.clone());
        return Some(Outcome {
            content: artifact_content(&r),
            is_error,
            artifact: Some(r),
            masked: false,
            media,
        });
    }
    match render(&event.kind, &event.data)? {
        Rendered::Artifact(mut r) => {
            r.event_id = Some(event.event_id.clone());
            Some(Outcome {
                content: artifact_content(&r),
                is_error,
                artifact: Some(r),
                masked: false,
                media,
            })
        }
        Rendered::ToolOutcome { result, .. } if mask => {
            let summary = match event.data.get("summary").and_then(Value::as_str) {
                Some(s) => s.to_string(),
                None => summarize_text(&result, MASK_SUMMARY_CHARS),
            };
            Some(Outcome {
                content: masked_content(&event.event_id, result.len(), &summary),
                is_error,
                artifact: None,
                masked: true,
                media,
            })
        }
        Rendered::ToolOutcome { result, .. } => Some(Outcome {
            content: result.into_owned(),
            is_error,
            artifact: None,
            masked: false,
            media,
        }),
        Rendered::Message { .. } => None,
    }
}

/// Builds history from the events at `positions` (ascending). Tool calls
/// without an outcome yet are left out; an outcome whose call is not
/// selected (or was never recorded) gets its call synthesised, with the
/// recorded arguments when the call is in the log.
pub(crate) struct ExchangeBuilder<'a> {
    log: &'a EventLog,
    writes: &'a SessionWrites,
    masked_through: Option<usize>,
    pricing: &'a MediaPricing,
    out: Vec<Shared>,
    pending: Vec<Shared>,
    /// Whether the last item was a call or an assistant turn, so a next call
    /// joins the same assistant message.
    open_turn: bool,
}

impl<'a> ExchangeBuilder<'a> {
    pub(crate) fn new(
        log: &'a EventLog,
        writes: &'a SessionWrites,
        masked_through: Option<usize>,
        pricing: &'a MediaPricing,
    ) -> Self {
        ExchangeBuilder {
            log,
            writes,
            masked_through,
            pricing,
            out: Vec::new(),
            pending: Vec::new(),
            open_turn: false,
        }
    }

    fn flush(&mut self) {
        self.out.append(&mut self.pending);
    }

    /// Adds the conversation turn at `position` (nothing when the event
    /// there is not one).
    pub(crate) fn message(&mut self, position: usize) {
        let reasoning = reasoning_at(self.log, position, self.pricing.format);
        let Some(m) = shared_turn(self.log, position, self.pricing, reasoning) else {
            return;
        };
        self.flush();
        self.open_turn = m.role == "assistant";
        self.out.push(m);
    }

    /// Adds `call` (its name as recorded: `original_name`) with the outcome
    /// at `outcome_position`; the name and id become ones providers take.
    fn call(
        &mut self,
        mut call: ToolCallPart,
        original_name: &str,
        call_position: usize,
        outcome_position: usize,
    ) {
        call.name = provider_tool_name(original_name).into_owned();
        call.id = provider_call_id(&call.id).into_owned();
        let mask = self.masked_through.is_some_and(|m| outcome_position <= m);
        let kept = (call.name == original_name)
            .then(|| self.shared_result(&call, outcome_position, mask))
            .flatten();
        let result = match kept {
            Some(result) => result,
            None => {
                let Some(o) = outcome(self.log, outcome_position, mask, self.writes, self.pricing)
                else {
                    return;
                };
                self.result(&call, original_name, outcome_position, o)
            }
        };
        let joins = self.open_turn
            && self
                .out
                .last()
                .is_some_and(|m| m.role == "assistant" && !m.is_tool_result());
        if !joins {
            self.flush();
            let mut m = HistoryMessage::new("assistant", "");
            m.position = Some(call_position);
            self.out.push(Rc::new(m));
        }
        let reasoning = reasoning_at(self.log, call_position, self.pricing.format);
        if let Some(assistant) = self.out.last_mut() {
            let assistant = Rc::make_mut(assistant);
            assistant.tool_calls.push(call);
            assistant.tokens = None;
            if assistant.reasoning.is_none() {
                assistant.reasoning = reasoning;
            }
        }
        self.pending.push(result);
        self.open_turn = true;
    }

    /// The inline result of the outcome at `position` an earlier compile
    /// kept (see [`EventLog::keep_message`]), when it is still what `call`
    /// gets: not masked now, not externalised since, answering the same
    /// call id under the same name (one it was recorded under: a renamed
    /// call's result is never kept).
    fn shared_result(&self, call: &ToolCallPart, position: usize, mask: bool) -> Option<Shared> {
        if mask {
            return None;
        }
        let kept = self.log.built_message(position)?;
        let event_id = kept.event_id.as_deref()?;
        let same_call = kept.tool_call_id.as_deref() == Some(call.id.as_str())
            && kept.tool_name.as_deref() == Some(call.name.as_str());
        let externalized = self.log.externalized(event_id).is_some()
            || self.writes.externalized(event_id).is_some();
        (same_call && !externalized).then_some(kept)
    }

    /// The tool result `call` (its name as recorded: `original_name`) gets
    /// from the outcome at `position`, as `o` shows it; an inline result
    /// under the recorded name, without media, is kept to share.
    fn result(
        &self,
        call: &ToolCallPart,
        original_name: &str,
        position: usize,
        o: Outcome,
    ) -> Shared {
        // A tool name no provider takes is sent under a valid one; the
        // result says which name the model used.
        let output = if has_text(&o.content) {
            o.content
        } else {
            EMPTY_OUTPUT.to_string()
        };
        let renamed = call.name != original_name;
        let content = if renamed {
            format!("[called as {original_name:?}, not a valid tool name] {output}")
        } else {
            output
        };
        let mut result = HistoryMessage::new("tool", content);
        result.event_id = Some(self.log.events()[position].event_id.clone());
        result.tool_call_id = Some(call.id.clone());
        result.tool_name = Some(call.name.clone());
        result.is_error = o.is_error;
        result.artifact = o.artifact;
        result.masked = o.masked;
        result.position = Some(position);
        let inline = result.artifact.is_none() && !result.masked;
        if inline {
            // The inline result's text depends only on its event: count it once.
            let counter = self.log.counter();
            result.tokens = Some(
                self.log
                    .result_tokens(position, || zoned_message_tokens(&result, counter)),
            );
        }
        // With media, the text names each part too: counted whole.
        result.media = o.media;
        if !result.media.is_empty() {
            result.tokens = None;
        }
        let shares = inline
            && !renamed
            && result.media.is_empty()
            && result.content.len() <= KEEP_RESULT_BYTES;
        if shares && self.log.built_message(position).is_none() {
            self.log.keep_message(position, result)
        } else {
            Rc::new(result)
        }
    }

    /// Adds the `tool_call` event at `position` with its outcome (nothing
    /// when it has none yet).
    pub(crate) fn tool_call(&mut self, position: usize) {
        let event = &self.log.events()[position];
        let Some(outcome_position) = self.log.answer(position) else {
            return;
        };
        let id = self
            .log
            .wire_call_id(position)
            .unwrap_or(Cow::Borrowed(render::call_key(
                &event.event_id,
                &event.data,
            )));
        let name = render::call_name(&event.data);
        let call = ToolCallPart {
            id: id.into_owned(),
            name: String::new(),
            arguments: self.log.sent_arguments(position),
            signature: event
                .data
                .get("thought_signature")
                .and_then(Value::as_str)
                .filter(|_| sends_signatures(self.pricing.format))
                .map(str::to_string),
            event_id: Some(event.event_id.clone()),
        };
        self.call(call, name, position, outcome_position);
    }

    /// Adds the outcome at `position`, whose call is not among the selected
    /// events, with its call synthesised.
    pub(crate) fn orphan_outcome(&mut self, position: usize) {
        let event = &self.log.events()[position];
        let call_id = self.log.wire_call_id(position).map(Cow::into_owned);
        let recorded_call = self
            .log
            .call_of(position)
            .filter(|&p| self.log.events()[p].kind == TOOL_CALL);
        let name = render::outcome_tool(&event.data);
        let call = ToolCallPart {
            id: call_id.unwrap_or_else(|| format!("call_{}", event.event_id)),
            name: String::new(),
            arguments: recorded_call
                .map(|p| self.log.sent_arguments(p))
                .unwrap_or_else(|| Value::Object(Default::default())),
            signature: None,
            event_id: None,
        };
        self.call(call, name, position, position);
    }

    /// Marks that an outcome was seen: a call after it starts a new
    /// assistant message.
    pub(crate) fn outcome_seen(&mut self) {
        self.open_turn = false;
    }

    /// The history built.
    pub(crate) fn finish(mut self) -> Vec<Shared> {
        self.flush();
        self.out
    }
}
