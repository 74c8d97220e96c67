//! What a provider asks back with a tool call (its id, its thought
//! signature, the turn's reasoning), checked and noted on the call's
//! `tool_call` event by [`crate::tools::ToolInterruptHandler::call_noted`].

use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::wire::Reasoning;

/// The notes of one tool call, as a caller gives them.
#[derive(Debug, Clone, Default)]
pub struct CallNotes {
    /// The provider's id of the call, which its outcome is paired by.
    pub call_id: Option<String>,
    /// The call's thought signature (Gemini's `thoughtSignature`).
    pub thought_signature: Option<String>,
    /// The turn's reasoning, `{ format, items }`.
    pub reasoning: Option<Value>,
}

impl CallNotes {
    /// The notes as the `tool_call` event's extra data (`call_id`,
    /// `thought_signature`, `reasoning`); an empty id or reasoning that is
    /// not `{ format, items }` of a known format is
    /// [`ErrorCode::InvalidArgument`].
    pub fn into_map(self) -> Result<Map<String, Value>> {
        let invalid = |m: &str| Error::new(ErrorCode::InvalidArgument, m.to_string());
        let mut notes = Map::new();
        if let Some(id) = self.call_id {
            if id.is_empty() {
                return Err(invalid("options.callId must be a non-empty string"));
            }
            notes.insert("call_id".into(), Value::String(id));
        }
        if let Some(signature) = self.thought_signature {
            notes.insert("thought_signature".into(), Value::String(signature));
        }
        if let Some(reasoning) = self.reasoning {
            let reasoning = Reasoning::from_json(&reasoning).ok_or_else(|| {
                invalid("options.reasoning must be { format, items } with a known format and items")
            })?;
            notes.insert("reasoning".into(), reasoning.to_json());
        }
        Ok(notes)
    }
}
