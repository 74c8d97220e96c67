//! `TokenBudget` and the token-counting functions for JS.

use context_compiler_js::error::{JsResult, Thrown};
use wasm_bindgen::prelude::*;

use context_compiler::budget::TokenBudget as CoreBudget;
use context_compiler::error::{Error, ErrorCode};
use context_compiler::tokens::{
    estimate_tokens as seed_estimate, DefaultTokenCounter, TokenCounter,
};
use context_compiler_js::convert::{count, describe, string, MAX_SAFE_INTEGER};
use context_compiler_js::error::to_js_error;

/// The token budget tracker.
#[wasm_bindgen]
pub struct TokenBudget {
    inner: CoreBudget,
}

/// A positive safe integer budget, or `INVALID_BUDGET`.
pub(crate) fn positive_budget(value: &JsValue) -> JsResult<u64> {
    match value.as_f64() {
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= MAX_SAFE_INTEGER => Ok(n as u64),
        _ => Err(Thrown::from(Error::new(
            ErrorCode::InvalidBudget,
            format!(
                "max_tokens must be a positive integer of at most 2^53 - 1 (got {})",
                describe(value)
            ),
        ))),
    }
}

#[wasm_bindgen]
impl TokenBudget {
    /// A budget of `maxTokens`, which must be a positive integer.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = maxTokens, unchecked_param_type = "number")] max_tokens: JsValue,
    ) -> JsResult<TokenBudget> {
        let max = positive_budget(&max_tokens)?;
        Ok(TokenBudget {
            inner: CoreBudget::new(max as i64)?,
        })
    }

    /// Records `tokens` (a non-negative integer) as consumed.
    pub fn consume(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "number")] tokens: JsValue,
    ) -> JsResult<()> {
        let n = count(&tokens, "tokens", ErrorCode::InvalidTokenCount)?.ok_or_else(|| {
            to_js_error(Error::new(
                ErrorCode::InvalidTokenCount,
                "tokens is required",
            ))
        })?;
        self.inner.consume(n);
        Ok(())
    }

    /// Tokens left; negative once overspent.
    pub fn remaining(&self) -> f64 {
        self.inner.remaining() as f64
    }

    /// Whether consumption is within the maximum.
    #[wasm_bindgen(js_name = isWithinBudget)]
    pub fn is_within_budget(&self) -> bool {
        self.inner.is_within_budget()
    }

    /// Tokens beyond the maximum.
    pub fn overflow(&self) -> f64 {
        self.inner.overflow() as f64
    }

    /// The maximum.
    #[wasm_bindgen(getter, js_name = maxTokens)]
    pub fn max_tokens(&self) -> f64 {
        self.inner.max_tokens() as f64
    }

    /// Tokens consumed so far.
    #[wasm_bindgen(getter)]
    pub fn consumed(&self) -> f64 {
        self.inner.consumed() as f64
    }
}

/// Tokens of `text` under the default counter (calibrated on o200k_base).
#[wasm_bindgen(js_name = countTokens)]
pub fn count_tokens(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> JsResult<f64> {
    let text = string(&text, "text")?;
    Ok(DefaultTokenCounter.count(&text) as f64)
}

/// `countTokens` of the string js/api.js wrote into the text buffer
/// (`text_len` bytes of it); other values go to [`count_tokens`].
#[wasm_bindgen(js_name = __countTokensBuffered, skip_typescript)]
pub fn count_tokens_buffered(text_len: u32) -> JsResult<f64> {
    Ok(crate::record_buffers::with_text_bytes(text_len, |bytes| {
        DefaultTokenCounter.count_utf8(bytes).map(|n| n as f64)
    })?)
}

/// The estimate: `ceil(words × 1.3)`.
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> JsResult<f64> {
    let text = string(&text, "text")?;
    Ok(seed_estimate(&text) as f64)
}
