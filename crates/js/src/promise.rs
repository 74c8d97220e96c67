//! Calling JS callbacks that may return a value or a promise.

use std::future::Future;

use js_sys::{Function, Promise};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use crate::error::{thrown_message, to_js_error};
use crate::executor;
use context_compiler::error::{Error, ErrorCode};

/// Calls `f` with `args` on `this` and awaits the result if it is a promise
/// (or any thenable); a plain value is returned at once. A synchronous throw or a rejection — of an `Error` or
/// of anything else — becomes an error with `code` and `what` in its message.
pub async fn call_and_await(
    f: &Function,
    this: &JsValue,
    args: &[JsValue],
    code: ErrorCode,
    what: &str,
) -> Result<JsValue, Error> {
    call_and_await_mapped(f, this, args, |e, how| {
        Error::new(code, format!("{what} {how}: {}", thrown_message(e)))
    })
    .await
}

/// [`call_and_await`] with the error made by `error(thrown, how)`, where
/// `how` is `"threw"` or `"rejected"`.
pub async fn call_and_await_mapped(
    f: &Function,
    this: &JsValue,
    args: &[JsValue],
    error: impl Fn(&JsValue, &str) -> Error,
) -> Result<JsValue, Error> {
    let array: js_sys::Array = args.iter().collect();
    let returned = f.apply(this, &array).map_err(|e| error(&e, "threw"))?;
    if !is_thenable(&returned) {
        // A synchronous answer needs no promise machinery.
        return Ok(returned);
    }
    settled_on_drop(Promise::resolve(&returned))
        .await
        .map_err(|e| error(&e, "rejected"))
}

/// Whether `value` is a promise or any object with a `then` method.
fn is_thenable(value: &JsValue) -> bool {
    (value.is_object() || value.is_function())
        && js_sys::Reflect::get(value, &"then".into()).is_ok_and(|t| t.is_function())
}

/// Resolves the promise it holds when dropped.
struct ResolveOnDrop(Function);

impl Drop for ResolveOnDrop {
    fn drop(&mut self) {
        // Resolving a settled promise does nothing.
        let _ = self.0.call0(&JsValue::UNDEFINED);
    }
}

/// Awaits `promise`; if the wait is abandoned (a timeout won a race), a
/// guard settles what is awaited anyway, since a `JsFuture` whose promise
/// never settles keeps its callbacks, and all they hold, alive for good.
async fn settled_on_drop(promise: Promise) -> Result<JsValue, JsValue> {
    let mut resolve = None;
    let guard = Promise::new(&mut |r, _| resolve = Some(r));
    let _guard = resolve.map(ResolveOnDrop);
    JsFuture::from(Promise::race(&js_sys::Array::of2(&promise, &guard))).await
}

/// Runs `fut` and returns a promise of its value; its error rejects the
/// promise as a JS `Error` with a stable code.
pub fn spawn<F>(fut: F) -> Promise
where
    F: Future<Output = Result<JsValue, Error>> + 'static,
{
    executor::spawn(async move { fut.await.map_err(to_js_error) })
}

/// `value` when it is a function (called with `this` undefined), or its
/// method `name` bound to it; `None` when it is neither.
pub fn callable(value: &JsValue, name: &str) -> Option<(JsValue, Function)> {
    use wasm_bindgen::JsCast;
    if let Some(f) = value.dyn_ref::<Function>() {
        return Some((JsValue::UNDEFINED, f.clone()));
    }
    if !value.is_object() {
        return None;
    }
    let method = js_sys::Reflect::get(value, &name.into()).ok()?;
    method
        .dyn_into::<Function>()
        .ok()
        .map(|f| (value.clone(), f))
}

/// Checks that `value` is an object (not a function) with every method in
/// `names`; otherwise `INVALID_ARGUMENT` saying `shape` and what was wrong.
pub fn require_methods(value: &JsValue, names: &[&str], shape: &str) -> Result<(), Error> {
    if value.is_function() || !value.is_object() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{shape} (got {})", crate::convert::describe(value)),
        ));
    }
    for name in names {
        require_callable(value, name, &format!("{shape} (no {name})"))?;
    }
    Ok(())
}

/// Like [`callable`], but an `INVALID_ARGUMENT` error saying `expected` when
/// `value` is neither a function nor an object with the method.
pub fn require_callable(
    value: &JsValue,
    name: &str,
    expected: &str,
) -> Result<(JsValue, Function), Error> {
    callable(value, name).ok_or_else(|| Error::new(ErrorCode::InvalidArgument, expected))
}
