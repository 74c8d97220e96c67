//! An embedder written in JS: `async (texts, { role }) => number[][]` (or
//! typed arrays), or an object with such an `embed` method; `role` is
//! `"query"` or `"passage"`.

use async_trait::async_trait;
use js_sys::{Array, Float32Array, Function};
use wasm_bindgen::{JsCast, JsValue};

use crate::convert::{array_items, describe};
use crate::error::thrown_message;
use crate::promise::{call_and_await, require_callable};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::recall::embedder::{EmbedRole, Embedder};

/// A JS function (or object with `embed`) as the core's [`Embedder`].
pub struct JsEmbedder {
    this: JsValue,
    embed: Function,
}

impl JsEmbedder {
    /// Reads `value`; `what` names it in errors.
    pub fn from_js(value: &JsValue, what: &str) -> Result<JsEmbedder> {
        let (this, embed) = require_callable(
            value,
            "embed",
            &format!(
                "{what} must be a function (texts, {{ role }}) => number[][], or an object with embed()"
            ),
        )?;
        Ok(JsEmbedder { this, embed })
    }
}

fn bad(message: String) -> Error {
    Error::new(ErrorCode::ProcessorFailed, message)
}

#[async_trait(?Send)]
impl Embedder for JsEmbedder {
    async fn embed(&self, texts: &[String], role: EmbedRole) -> Result<Vec<Vec<f32>>> {
        let input: Array = texts.iter().map(|t| JsValue::from_str(t)).collect();
        let options = js_sys::Object::new();
        // Setting a property on a fresh plain object cannot throw.
        let _ = js_sys::Reflect::set(&options, &"role".into(), &role.as_str().into());
        let out = call_and_await(
            &self.embed,
            &self.this,
            &[input.into(), options.into()],
            ErrorCode::ProcessorFailed,
            "the embedder",
        )
        .await?;
        let trapped = |e: JsValue| {
            bad(format!(
                "the embedder's answer could not be read ({})",
                thrown_message(&e)
            ))
        };
        let Some(vectors) = array_items(&out).map_err(trapped)? else {
            return Err(bad(format!(
                "the embedder must return an array of vectors (got {})",
                describe(&out)
            )));
        };
        vectors
            .iter()
            .map(|v| {
                // Arrays of numbers and typed arrays; anything else in them
                // becomes NaN, which the core refuses.
                if v.is_instance_of::<js_sys::BigInt64Array>()
                    || v.is_instance_of::<js_sys::BigUint64Array>()
                    || v.is_instance_of::<js_sys::DataView>()
                {
                    // `new Float32Array` throws on BigInt elements.
                    Err(bad(format!(
                        "each vector the embedder returns must hold numbers (got {})",
                        describe(&v)
                    )))
                } else if js_sys::ArrayBuffer::is_view(&v) {
                    Ok(Float32Array::new(&v).to_vec())
                } else if let Some(items) = array_items(&v).map_err(trapped)? {
                    Ok(items
                        .iter()
                        .map(|x| x.as_f64().unwrap_or(f64::NAN) as f32)
                        .collect())
                } else {
                    Err(bad(format!(
                        "each vector the embedder returns must be an array of numbers (got {})",
                        describe(&v)
                    )))
                }
            })
            .collect()
    }
}
