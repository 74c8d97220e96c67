//! A language model written in JS: `async (prompt, { maxTokens, signal }) =>
//! string`, or an object with such a `complete` method; and the options the
//! handlers that call it share.

use async_trait::async_trait;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use crate::convert::describe;
use crate::promise::{call_and_await, require_callable};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::llm::{Llm, LlmOptions};

/// A JS function (or object with `complete`) as the core's [`Llm`].
pub struct JsLlm {
    this: JsValue,
    complete: Function,
}

impl JsLlm {
    /// Reads `value`; `what` names it in errors.
    pub fn from_js(value: &JsValue, what: &str) -> Result<JsLlm> {
        let (this, complete) = require_callable(
            value,
            "complete",
            &format!("{what} must be a function (prompt, {{ maxTokens, signal }}) => string, or an object with complete()"),
        )?;
        Ok(JsLlm { this, complete })
    }
}

/// An `AbortController` if the host has one.
pub fn abort_controller() -> Option<JsValue> {
    let ctor = Reflect::get(&js_sys::global(), &"AbortController".into())
        .ok()?
        .dyn_into::<Function>()
        .ok()?;
    Reflect::construct(&ctor, &js_sys::Array::new()).ok()
}

/// Aborts `controller` with `reason` (nothing when it has no `abort`).
pub fn abort(controller: &JsValue, reason: &str) {
    if let Ok(f) = Reflect::get(controller, &"abort".into()).and_then(|f| f.dyn_into::<Function>())
    {
        let _ = f.call1(controller, &js_sys::Error::new(reason).into());
    }
}

/// Aborts the call's signal when the library stops waiting for it (a
/// handler timeout, a stopped loop) before it settled.
pub struct AbortOnDrop {
    controller: Option<JsValue>,
}

impl Default for AbortOnDrop {
    /// A fresh controller (none where the host has no `AbortController`).
    fn default() -> Self {
        AbortOnDrop {
            controller: abort_controller(),
        }
    }
}

impl AbortOnDrop {
    /// A fresh controller (none where the host has no `AbortController`).
    pub fn new() -> Self {
        Self::default()
    }

    /// The controller's signal, for the call's options (`undefined` without one).
    pub fn signal(&self) -> JsValue {
        self.controller.as_ref().map_or(JsValue::UNDEFINED, |c| {
            Reflect::get(c, &"signal".into()).unwrap_or(JsValue::UNDEFINED)
        })
    }

    /// The controller, to abort it earlier.
    pub fn controller(&self) -> Option<JsValue> {
        self.controller.clone()
    }

    /// The call settled: nothing to abort any more.
    pub fn settled(&mut self) {
        self.controller = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(c) = self.controller.take() {
            abort(&c, "the library stopped waiting for this model call");
        }
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
        let mut guard = AbortOnDrop::new();
        let _ = Reflect::set(&opts, &"signal".into(), &guard.signal());
        let out = call_and_await(
            &self.complete,
            &self.this,
            &[JsValue::from(prompt), opts.into()],
            ErrorCode::ProcessorFailed,
            "the model",
        )
        .await;
        guard.settled();
        let out = out?;
        out.as_string().ok_or_else(|| {
            Error::new(
                ErrorCode::ProcessorFailed,
                format!("the model must return a string (got {})", describe(&out)),
            )
        })
    }
}

/// `options.llm`, required.
pub fn llm_option<T: AsRef<JsValue>>(options: &Option<T>) -> Result<std::rc::Rc<dyn Llm>> {
    Ok(std::rc::Rc::new(JsLlm::from_js(
        &crate::convert::option(options, "llm", "options")?,
        "options.llm",
    )?))
}
