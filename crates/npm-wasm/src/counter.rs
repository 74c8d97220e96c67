//! A token counter the host passes as `tokenCounter`: a function
//! `(text) => number`, or an object `{ count(text), messageOverhead? }`
//! (the shape of the exact tokenizers, js/tokenizers.js). A count it cannot
//! make (it throws, or answers anything but a non-negative number, e.g. a
//! promise) is answered with the default counter's meanwhile and reported
//! through [`TokenCounter::take_failure`], so the call that counted fails
//! with `TOKEN_COUNTER_FAILED` before it keeps anything.

use std::cell::RefCell;

use js_sys::{Function, Promise};
use wasm_bindgen::{JsCast, JsValue};

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::tokens::{DefaultTokenCounter, TokenCounter};
use context_compiler_js::convert::{count, describe, MAX_SAFE_INTEGER};
use context_compiler_js::error::thrown_message;
use context_compiler_js::promise::callable;

/// A counter calling back into JS.
pub(crate) struct JsTokenCounter {
    this: JsValue,
    count: Function,
    overhead: u64,
    failure: RefCell<Option<Error>>,
}

impl JsTokenCounter {
    /// The counter `value` describes, if it is a function or an object with
    /// a `count` method (`None` for anything else); `messageOverhead` must
    /// be a non-negative integer.
    pub(crate) fn from_value(value: &JsValue, what: &str) -> Result<Option<JsTokenCounter>> {
        let Some((this, count_fn)) = callable(value, "count") else {
            return Ok(None);
        };
        let overhead = if this.is_undefined() {
            None
        } else {
            let v = js_sys::Reflect::get(&this, &"messageOverhead".into()).map_err(|_| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!("{what}.messageOverhead could not be read"),
                )
            })?;
            count(
                &v,
                &format!("{what}.messageOverhead"),
                ErrorCode::InvalidArgument,
            )?
        };
        Ok(Some(JsTokenCounter {
            this,
            count: count_fn,
            overhead: overhead.unwrap_or(0),
            failure: RefCell::new(None),
        }))
    }

    fn fail(&self, message: String) {
        let mut failure = self.failure.borrow_mut();
        if failure.is_none() {
            *failure = Some(Error::new(ErrorCode::TokenCounterFailed, message));
        }
    }
}

impl TokenCounter for JsTokenCounter {
    fn count(&self, text: &str) -> u64 {
        match self.count.call1(&self.this, &JsValue::from_str(text)) {
            Ok(v) => match v.as_f64() {
                Some(n) if (0.0..=MAX_SAFE_INTEGER).contains(&n) => return n.ceil() as u64,
                _ if v.is_instance_of::<Promise>() => self.fail(
                    "tokenCounter returned a promise: a counter must answer synchronously".into(),
                ),
                _ => self.fail(format!(
                    "tokenCounter returned {} instead of a non-negative number",
                    describe(&v)
                )),
            },
            Err(e) => self.fail(format!("tokenCounter threw: {}", thrown_message(&e))),
        }
        DefaultTokenCounter.count(text)
    }

    fn message_overhead(&self) -> u64 {
        self.overhead
    }

    fn take_failure(&self) -> Option<Error> {
        self.failure.borrow_mut().take()
    }
}
