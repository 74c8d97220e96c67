//! Core errors as real JS `Error` objects with a stable `code`.

use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};

use context_compiler::error::Error;
use context_compiler::error::ErrorCode;

/// Converts a core error into a JS `Error` whose `name` is
/// `ContextCompilerError` and whose `code` is the stable error code.
pub fn to_js_error(e: Error) -> JsValue {
    let err = js_sys::Error::new(e.message());
    err.set_name("ContextCompilerError");
    let _ = Reflect::set(&err, &"code".into(), &e.code().as_str().into());
    err.into()
}

/// What an exported method throws: a JS `Error` made from a core error
/// (see [`to_js_error`]), or a value a JS callback threw, passed on. `?`
/// turns either into it.
pub struct Thrown(JsValue);

/// The result of an exported method that throws.
pub type JsResult<T> = std::result::Result<T, Thrown>;

impl From<Error> for Thrown {
    fn from(e: Error) -> Thrown {
        Thrown(to_js_error(e))
    }
}

impl From<JsValue> for Thrown {
    fn from(value: JsValue) -> Thrown {
        Thrown(value)
    }
}

impl From<Thrown> for JsValue {
    fn from(thrown: Thrown) -> JsValue {
        thrown.0
    }
}

/// The message of anything a JS callback threw or rejected with.
pub fn thrown_message(value: &JsValue) -> String {
    if value.dyn_ref::<js_sys::Error>().is_some() {
        // Read through `Reflect`, which catches: a `message` getter may throw.
        return match js_sys::Reflect::get(value, &"message".into()) {
            Ok(m) => m
                .as_string()
                .unwrap_or_else(|| "an Error without a string message".into()),
            Err(_) => "an Error whose message could not be read".into(),
        };
    }
    if let Some(s) = value.as_string() {
        return s;
    }
    if value.is_undefined() {
        return "undefined".into();
    }
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "a value that is not an Error".to_string())
}

/// A core error for what a call into JS threw: an error carrying one of our
/// codes (thrown by another of the package's modules, or by host code that
/// uses them) keeps its code and message; anything else is `fallback`,
/// its message prefixed with `what`.
pub fn from_thrown(value: &JsValue, fallback: ErrorCode, what: &str) -> Error {
    let code = Reflect::get(value, &"code".into())
        .ok()
        .and_then(|c| c.as_string())
        .and_then(|c| ErrorCode::parse(&c));
    match code {
        Some(code) if value.is_object() => Error::new(code, thrown_message(value)),
        _ => Error::new(fallback, format!("{what}: {}", thrown_message(value))),
    }
}
