//! What a provider's reply carries besides its answer, in the provider's
//! own terms: the reasoning it asks back, and what the response says of
//! itself.

use serde_json::Value;

use crate::wire::ProviderFormat;

/// Reasoning a provider asks back with the assistant turn while its tool
/// loop runs: Anthropic's `thinking` / `redacted_thinking` blocks (signed)
/// or OpenAI Responses' `reasoning` items, as the provider gave them.
#[derive(Debug, Clone, PartialEq)]
pub struct Reasoning {
    /// The format whose requests carry it back.
    pub format: ProviderFormat,
    /// The provider's blocks or items, unchanged.
    pub items: Vec<Value>,
}

impl Reasoning {
    /// As event data: `{ format, items }`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "format": self.format.as_str(), "items": self.items })
    }

    /// Reads `{ format, items }` (the shape [`Reasoning::to_json`] writes);
    /// `None` for anything else or no items.
    pub fn from_json(value: &Value) -> Option<Reasoning> {
        let format = ProviderFormat::parse(value.get("format")?.as_str()?).ok()?;
        let items = value.get("items")?.as_array()?.clone();
        (!items.is_empty()).then_some(Reasoning { format, items })
    }
}

/// What a provider's response says of itself, as far as the reply shows it
/// (each text cut to [`ResponseMeta::MAX_CHARS`] characters, at most
/// [`ResponseMeta::MAX_REASONS`] finish reasons: it is evidence, not truth).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResponseMeta {
    /// The response's id (`id`, Gemini's `responseId`, the AI SDK's
    /// `response.id`).
    pub id: Option<String>,
    /// The model that answered (`model`, Gemini's `modelVersion`, the AI
    /// SDK's `response.modelId`).
    pub model: Option<String>,
    /// Why it stopped, as the provider says it (each choice's
    /// `finish_reason`, Anthropic's `stop_reason`, each Gemini candidate's
    /// `finishReason`, the Responses API's `status`, the AI SDK's
    /// `finishReason`).
    pub finish_reasons: Vec<String>,
}

impl ResponseMeta {
    /// Characters of each text kept.
    pub const MAX_CHARS: usize = 256;
    /// Finish reasons kept.
    pub const MAX_REASONS: usize = 8;

    /// Reads a reply in any shape [`crate::runner::ModelReply::from_json`] takes.
    pub fn from_json(reply: &Value) -> ResponseMeta {
        let text = |v: Option<&Value>| -> Option<String> {
            let s = v?.as_str().filter(|s| !s.is_empty())?;
            Some(s.chars().take(Self::MAX_CHARS).collect())
        };
        let response = reply.get("response");
        let id = text(reply.get("id"))
            .or_else(|| text(reply.get("responseId")))
            .or_else(|| text(response.and_then(|r| r.get("id"))));
        let model = text(reply.get("model"))
            .or_else(|| text(reply.get("modelVersion")))
            .or_else(|| text(response.and_then(|r| r.get("modelId"))));
        let mut finish_reasons: Vec<String> = Vec::new();
        let listed = |key: &str, inner: &str| -> Vec<String> {
            reply
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| text(c.get(inner)))
                .collect()
        };
        finish_reasons.extend(listed("choices", "finish_reason"));
        finish_reasons.extend(listed("candidates", "finishReason"));
        for key in ["stop_reason", "finishReason", "finish_reason"] {
            let value = reply.get(key);
            // The AI SDK's finishReason may be `{ unified, raw }`.
            let value = value.and_then(|v| v.get("unified")).or(value);
            finish_reasons.extend(text(value));
        }
        if reply.get("object").and_then(Value::as_str) == Some("response") {
            finish_reasons.extend(text(reply.get("status")));
        }
        finish_reasons.truncate(Self::MAX_REASONS);
        ResponseMeta {
            id,
            model,
            finish_reasons,
        }
    }
}
