//! Calling JS callbacks that may return a value or a promise.

use js_sys::{Function, Promise};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use crate::error::{Error, ErrorCode};
use crate::js::error::thrown_message;

/// Calls `f` with `args` on `this` and awaits the result if it is a promise
/// (or any thenable). A synchronous throw or a rejection — of an `Error` or
/// of anything else — becomes an error with `code` and `what` in its message.
pub(crate) async fn call_and_await(
    f: &Function,
    this: &JsValue,
    args: &[JsValue],
    code: ErrorCode,
    what: &str,
) -> Result<JsValue, Error> {
    let array: js_sys::Array = args.iter().collect();
    let returned = f
        .apply(this, &array)
        .map_err(|e| Error::new(code, format!("{what} threw: {}", thrown_message(&e))))?;
    JsFuture::from(Promise::resolve(&returned))
        .await
        .map_err(|e| Error::new(code, format!("{what} rejected: {}", thrown_message(&e))))
}
