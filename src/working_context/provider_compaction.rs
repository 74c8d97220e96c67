//! A provider's own compaction in a compiled context: what it costs and
//! where the request sends it (see [`crate::session::provider_compaction`]).
//! Anthropic: the `compaction` block first in the conversation (an
//! assistant message's first block), with the beta the request needs;
//! OpenAI Responses: the `compact` output's items first in `input`.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::session::provider_compaction::ANTHROPIC_COMPACTION_BETA;
use crate::tokens::TokenCounter;
use crate::wire::ProviderFormat;

/// The provider compaction a context sends in place of the turns before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderCompaction {
    /// The format it is sent in (`anthropic` or `openai-responses`).
    pub format: String,
    /// The `provider_compaction` event it was recorded as.
    pub event_id: String,
    /// That event's position in the log: the turns before it are folded.
    pub position: usize,
    /// What is sent, as it came.
    pub items: Vec<Value>,
    /// What it costs in the budget: the counter's count of its JSON (the
    /// summary's text and the encrypted content alike), with a message's
    /// overhead.
    pub tokens: u64,
}

/// The counter's count of `items` as sent, with a message's overhead.
pub(crate) fn items_tokens(items: &[Value], counter: &dyn TokenCounter) -> u64 {
    counter.count(&Value::Array(items.to_vec()).to_string()) + counter.message_overhead()
}

impl ProviderCompaction {
    /// Whether it is sent in `format`.
    pub fn is_for(&self, format: ProviderFormat) -> bool {
        self.format == format.as_str()
    }

    /// Puts it into `request` (rendered in `format`) where that provider
    /// takes it; a request in another format is left as it is.
    pub(crate) fn send(&self, request: &mut Value, format: ProviderFormat) {
        if !self.is_for(format) {
            return;
        }
        match format {
            ProviderFormat::Anthropic => {
                if let Some(Value::Array(messages)) = request.get_mut("messages") {
                    let first_is_assistant = messages.first().is_some_and(|m| {
                        m.get("role").and_then(Value::as_str) == Some("assistant")
                    });
                    match messages.first_mut().and_then(|m| m.get_mut("content")) {
                        Some(Value::Array(blocks)) if first_is_assistant => {
                            blocks.splice(0..0, self.items.iter().cloned());
                        }
                        _ => {
                            messages.insert(0, json!({"role": "assistant", "content": self.items}))
                        }
                    }
                }
                if let Value::Object(map) = request {
                    map.insert("betas".into(), json!([ANTHROPIC_COMPACTION_BETA]));
                }
            }
            ProviderFormat::OpenAiResponses => {
                if let Some(Value::Array(input)) = request.get_mut("input") {
                    input.splice(0..0, self.items.iter().cloned());
                }
            }
            _ => {}
        }
    }
}
