//! The providers' own compaction, kept as it came: Anthropic's `compaction`
//! block (beta [`ANTHROPIC_COMPACTION_BETA`]) and the output of OpenAI's
//! `responses.compact` (the user messages, then one `compaction` item).
//!
//! Each is a `provider_compaction` event `{ format, items }`, never redacted
//! (Anthropic's signature covers the block's content), never rendered as a
//! turn (so no other format, search or span sees it). A compile in its
//! format sends the latest one in place of the turns before it.

use serde_json::{json, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::session::kinds::PROVIDER_COMPACTION;
use crate::session::{EventLog, Session};
use crate::wire::ProviderFormat;

/// The `anthropic-beta` a request carrying a `compaction` block needs (the
/// SDK's `client.beta.messages.create({ betas })`).
pub const ANTHROPIC_COMPACTION_BETA: &str = "compact-2026-01-12";

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

fn is_compaction(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("compaction")
}

/// The items a provider's compaction `output` is sent back as, checked:
/// Anthropic's `compaction` block (given alone, or as the latest in a
/// message's `content`); the `output` of a Responses `compact` call (or
/// that array), whose only `compaction` item is its last and whose other
/// items are messages. [`ErrorCode::InvalidArgument`] otherwise, and for
/// the formats whose providers do not compact.
pub fn compaction_items(format: ProviderFormat, output: &Value) -> Result<Vec<Value>> {
    match format {
        ProviderFormat::Anthropic => {
            let block = if is_compaction(output) {
                Some(output)
            } else {
                output
                    .get("content")
                    .and_then(Value::as_array)
                    .and_then(|blocks| blocks.iter().rev().find(|b| is_compaction(b)))
            };
            match block {
                Some(b) if b.is_object() => Ok(vec![b.clone()]),
                _ => Err(invalid(
                    "an anthropic compaction must be a `compaction` block or a message whose content holds one".into(),
                )),
            }
        }
        ProviderFormat::OpenAiResponses => {
            let items = output
                .get("output")
                .unwrap_or(output)
                .as_array()
                .ok_or_else(|| {
                    invalid("an openai-responses compaction must be the output of responses.compact (an object with `output`, or that array)".into())
                })?;
            let compactions = items.iter().filter(|i| is_compaction(i)).count();
            let last_is = items.last().is_some_and(is_compaction);
            if compactions != 1 || !last_is {
                return Err(invalid(format!(
                    "a responses.compact output ends with its one `compaction` item (got {compactions}, {} last)",
                    if last_is { "one" } else { "none" }
                )));
            }
            if let Some(i) = items[..items.len() - 1]
                .iter()
                .position(|i| i.get("type").and_then(Value::as_str) != Some("message"))
            {
                return Err(invalid(format!(
                    "a responses.compact output holds messages before its compaction item (item {i} is not one)"
                )));
            }
            Ok(items.clone())
        }
        other => Err(invalid(format!(
            "only anthropic and openai-responses compact on the provider's side (got {})",
            other.as_str()
        ))),
    }
}

/// The data of the `provider_compaction` event recording `output` in
/// `format` (see [`compaction_items`]).
pub fn event_data(format: ProviderFormat, output: &Value) -> Result<Value> {
    let items = compaction_items(format, output)?;
    Ok(json!({ "format": format.as_str(), "items": items }))
}

/// A recorded provider compaction.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCompaction<'a> {
    /// Its event's position in the log.
    pub position: usize,
    /// Its event's id.
    pub event_id: &'a str,
    /// The format it is sent in (`None`: a name this build does not know).
    pub format: Option<ProviderFormat>,
    /// What is sent, as it came.
    pub items: &'a [Value],
}

/// Every provider compaction `log` holds, oldest first.
pub fn recorded(log: &EventLog) -> Vec<RecordedCompaction<'_>> {
    log.events()
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == PROVIDER_COMPACTION)
        .map(|(position, e)| RecordedCompaction {
            position,
            event_id: &e.event_id,
            format: e
                .data
                .get("format")
                .and_then(Value::as_str)
                .and_then(|f| ProviderFormat::parse(f).ok()),
            items: e
                .data
                .get("items")
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice),
        })
        .collect()
}

impl Session {
    /// Records a provider's own compaction as it came (nothing redacted):
    /// the output of OpenAI's `responses.compact` in `openai-responses`, or
    /// an Anthropic `compaction` block (or the message holding one) a
    /// host's own loop received, in `anthropic`. A compile in that format
    /// sends the latest one in place of the turns recorded before it; other
    /// formats leave it out. Returns the event's id;
    /// [`ErrorCode::InvalidArgument`] for an output that is not one (see
    /// [`compaction_items`]).
    pub fn record_provider_compaction(
        &mut self,
        output: &Value,
        format: ProviderFormat,
    ) -> Result<String> {
        let data = event_data(format, output)?;
        let event = self.record_as_given(PROVIDER_COMPACTION.to_string(), data, None)?;
        Ok(event.event_id.clone())
    }
}
