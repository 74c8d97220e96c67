//! `WorkingContext` for JS.

use wasm_bindgen::prelude::*;

use crate::js::convert::{from_js, to_js};
use crate::js::error::to_js_error;
use crate::working_context::WorkingContext as CoreContext;

/// The compiled, budget-aware context (the seed's WorkingContext).
#[wasm_bindgen]
pub struct WorkingContext {
    pub(crate) inner: CoreContext,
}

fn js<T: serde::Serialize + ?Sized>(v: &T) -> Result<JsValue, JsValue> {
    to_js(v).map_err(to_js_error)
}

#[wasm_bindgen]
impl WorkingContext {
    /// Builds a context from its fields (`systemPrompt` required; lists
    /// default to empty, `tokenCount` and `budget` to 0).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "WorkingContextInit")] init: JsValue,
    ) -> Result<WorkingContext, JsValue> {
        Ok(WorkingContext {
            inner: from_js(&init, "WorkingContext").map_err(to_js_error)?,
        })
    }

    /// The system prompt.
    #[wasm_bindgen(getter, js_name = systemPrompt)]
    pub fn system_prompt(&self) -> String {
        self.inner.system_prompt.clone()
    }

    /// Conversation history.
    #[wasm_bindgen(getter, unchecked_return_type = "HistoryMessage[]")]
    pub fn history(&self) -> Result<JsValue, JsValue> {
        js(&self.inner.history)
    }

    /// Recalled memories.
    #[wasm_bindgen(getter, js_name = memoryHits, unchecked_return_type = "MemoryHit[]")]
    pub fn memory_hits(&self) -> Result<JsValue, JsValue> {
        js(&self.inner.memory_hits)
    }

    /// Artifact references.
    #[wasm_bindgen(getter, js_name = artifactRefs, unchecked_return_type = "ArtifactRef[]")]
    pub fn artifact_refs(&self) -> Result<JsValue, JsValue> {
        js(&self.inner.artifact_refs)
    }

    /// Inline tool results.
    #[wasm_bindgen(getter, js_name = toolResults, unchecked_return_type = "ToolResult[]")]
    pub fn tool_results(&self) -> Result<JsValue, JsValue> {
        js(&self.inner.tool_results)
    }

    /// What the compiler dropped or truncated to fit the budget.
    #[wasm_bindgen(getter, unchecked_return_type = "DroppedItem[]")]
    pub fn dropped(&self) -> Result<JsValue, JsValue> {
        js(&self.inner.dropped)
    }

    /// Tokens of the context (after a compile: the exact count of `toMessages()`).
    #[wasm_bindgen(getter, js_name = tokenCount)]
    pub fn token_count(&self) -> f64 {
        self.inner.token_count as f64
    }

    /// The budget.
    #[wasm_bindgen(getter)]
    pub fn budget(&self) -> f64 {
        self.inner.budget as f64
    }

    /// Whether `tokenCount <= budget`.
    #[wasm_bindgen(js_name = isWithinBudget)]
    pub fn is_within_budget(&self) -> bool {
        self.inner.is_within_budget()
    }

    /// Tokens beyond the budget.
    pub fn overflow(&self) -> f64 {
        self.inner.overflow() as f64
    }

    /// Provider messages: the system message (prompt, memories, artifact
    /// handles, tool results), then the history.
    #[wasm_bindgen(js_name = toMessages, unchecked_return_type = "Message[]")]
    pub fn to_messages(&self) -> Result<JsValue, JsValue> {
        js(&self.inner.to_messages())
    }

    /// The context as a plain object (used by `JSON.stringify`).
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "WorkingContextData")]
    pub fn to_json(&self) -> Result<JsValue, JsValue> {
        js(&self.inner)
    }
}
