//! A language model written in JS: `async (prompt, { maxTokens }) => string`,
//! or an object with such a `complete` method.

use async_trait::async_trait;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::JsValue;

use crate::error::{Error, ErrorCode, Result};
use crate::js::convert::describe;
use crate::js::promise::{call_and_await, require_callable};
use crate::llm::{Llm, LlmOptions};

/// A JS function (or object with `complete`) as the core's [`Llm`].
pub(crate) struct JsLlm {
    this: JsValue,
    complete: Function,
}

impl JsLlm {
    /// Reads `value`; `what` names it in errors.
    pub(crate) fn from_js(value: &JsValue, what: &str) -> Result<JsLlm> {
        let (this, complete) = require_callable(
            value,
            "complete",
            &format!("{what} must be a function (prompt, {{ maxTokens }}) => string, or an object with complete()"),
        )?;
        Ok(JsLlm { this, complete })
    }
}

#[async_trait(?Send)]
impl Llm for JsLlm {
    async fn complete(&self, prompt: &str, options: LlmOptions) -> Result<String> {
        let opts = Object::new();
        let _ = Reflect::set(
            &opts,
            &"maxTokens".into(),
            &JsValue::from_f64(options.max_tokens as f64),
        );
        let out = call_and_await(
            &self.complete,
            &self.this,
            &[JsValue::from(prompt), opts.into()],
            ErrorCode::ProcessorFailed,
            "the summarizer",
        )
        .await?;
        out.as_string().ok_or_else(|| {
            Error::new(
                ErrorCode::ProcessorFailed,
                format!(
                    "the summarizer must return a string (got {})",
                    describe(&out)
                ),
            )
        })
    }
}
