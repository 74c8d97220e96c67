//! Conversions between JS values and JSON / core types, with clear errors.

use js_sys::{Array, Object, Reflect};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Number, Value};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use crate::text::js_string;
use context_compiler::error::{Error, ErrorCode, Result};

/// Deeper nesting than this is rejected (it also catches cycles early).
const MAX_DEPTH: usize = context_compiler::session::MAX_DATA_DEPTH;
/// Largest integer a JS number represents exactly.
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

fn not_json(path: &str, what: &str) -> Error {
    Error::new(
        ErrorCode::NotSerializable,
        format!("{path}: {what} cannot be represented as JSON"),
    )
}

/// Converts a JS value to JSON, failing with `NOT_SERIALIZABLE` (naming the
/// path) on functions, symbols, bigints, `NaN`/`Infinity`, `undefined` outside
/// object properties, cycles, `Map`/`Set`/binary data and nesting deeper than
/// 128. Object properties whose value is `undefined` are skipped, as
/// `JSON.stringify` does; objects with `toJSON` (e.g. `Date`) use it.
pub fn js_to_json(value: &JsValue, path: &str) -> Result<Value> {
    let mut stack = Vec::new();
    convert(value, path, 0, &mut stack, ErrorCode::NotSerializable)
}

/// Like [`js_to_json`], but a `NaN` or `Infinity` is `non_finite` (for data
/// made of counts, where it is a bad count rather than bad JSON).
pub fn js_to_json_counts(value: &JsValue, path: &str, non_finite: ErrorCode) -> Result<Value> {
    let mut stack = Vec::new();
    convert(value, path, 0, &mut stack, non_finite)
}

// Catching forms of `Array.isArray`, `Array.from`, `Object.keys` and
// `Object.values`: a `Proxy` whose trap throws (or a revoked one) must be an
// error here, not an exception unwinding through wasm.
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array(value: &JsValue) -> std::result::Result<bool, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Array, js_name = from)]
    fn array_from(value: &JsValue) -> std::result::Result<Array, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    fn object_keys(value: &Object) -> std::result::Result<Array, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Object, js_name = values)]
    fn object_values(value: &JsValue) -> std::result::Result<Array, JsValue>;
}

/// The items of `value` (a host's answer) copied into a plain array when it
/// is an array, `Ok(None)` when it is not; `Err` holds what a `Proxy`'s trap
/// threw.
pub fn array_items(value: &JsValue) -> std::result::Result<Option<Array>, JsValue> {
    if !is_array(value)? {
        return Ok(None);
    }
    array_from(value).map(Some)
}

/// The items of `value`, an argument, when it is an array (`Ok(None)` when
/// it is not); a `Proxy` whose trap throws (or a revoked one) is
/// `INVALID_ARGUMENT` naming `what`.
pub fn argument_items(value: &JsValue, what: &str) -> Result<Option<Array>> {
    array_items(value).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "{what} could not be read ({})",
                crate::error::thrown_message(&e)
            ),
        )
    })
}

/// The values of `value`'s own enumerable properties (`Object.values`);
/// `Err` holds what a `Proxy`'s trap threw.
pub fn own_values(value: &JsValue) -> std::result::Result<Array, JsValue> {
    object_values(value)
}

fn convert(
    v: &JsValue,
    path: &str,
    depth: usize,
    stack: &mut Vec<JsValue>,
    non_finite: ErrorCode,
) -> Result<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    if v.is_undefined() {
        return Err(not_json(path, "undefined"));
    }
    if let Some(b) = v.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(n) = v.as_f64() {
        if !n.is_finite() {
            let e = not_json(path, "a non-finite number (NaN or Infinity)");
            return Err(Error::new(non_finite, e.message().to_string()));
        }
        if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER {
            return Ok(Value::Number(Number::from(n as i64)));
        }
        return Ok(Number::from_f64(n)
            .map(Value::Number)
            .unwrap_or(Value::Null));
    }
    if let Some(s) = js_string(v) {
        return Ok(Value::String(s));
    }
    if v.is_function() {
        return Err(not_json(path, "a function"));
    }
    if v.is_symbol() {
        return Err(not_json(path, "a symbol"));
    }
    if v.is_bigint() {
        return Err(not_json(path, "a bigint"));
    }
    if !v.is_object() {
        return Err(not_json(path, "this value"));
    }
    if depth >= MAX_DEPTH {
        return Err(not_json(
            path,
            &format!("data nested deeper than {MAX_DEPTH} levels"),
        ));
    }
    if stack.iter().any(|a| Object::is(a, v)) {
        return Err(not_json(path, "a cyclic reference"));
    }
    if v.is_instance_of::<js_sys::Map>()
        || v.is_instance_of::<js_sys::Set>()
        || v.is_instance_of::<js_sys::ArrayBuffer>()
        || js_sys::ArrayBuffer::is_view(v)
        || v.is_instance_of::<js_sys::Promise>()
    {
        return Err(not_json(path, "a Map, Set, Promise or binary buffer"));
    }
    let to_json = Reflect::get(v, &"toJSON".into()).unwrap_or(JsValue::UNDEFINED);
    if let Some(f) = to_json.dyn_ref::<js_sys::Function>() {
        let replaced = f.call0(v).map_err(|e| {
            not_json(
                path,
                &format!(
                    "a value whose toJSON threw ({})",
                    crate::error::thrown_message(&e)
                ),
            )
        })?;
        stack.push(v.clone());
        let out = convert(&replaced, path, depth + 1, stack, non_finite);
        stack.pop();
        return out;
    }
    stack.push(v.clone());
    let trapped = |what: &str| not_json(path, &format!("an object whose {what} threw"));
    let out = if is_array(v).map_err(|_| trapped("type check"))? {
        let length = Reflect::get(v, &"length".into())
            .map_err(|_| trapped("length"))?
            .as_f64()
            .unwrap_or(0.0) as u32;
        let mut items = Vec::with_capacity(length.min(1 << 16) as usize);
        for i in 0..length {
            let item = Reflect::get_u32(v, i).map_err(|_| trapped("element getter"))?;
            items.push(convert(
                &item,
                &format!("{path}[{i}]"),
                depth + 1,
                stack,
                non_finite,
            )?);
        }
        Ok(Value::Array(items))
    } else {
        let obj: &Object = v.unchecked_ref();
        let mut map = Map::new();
        for key in object_keys(obj).map_err(|_| trapped("key listing"))?.iter() {
            let k = key.as_string().unwrap_or_default();
            let item = Reflect::get(obj, &key)
                .map_err(|_| not_json(path, "an object whose getter threw"))?;
            if item.is_undefined() {
                continue;
            }
            let child = convert(&item, &format!("{path}.{k}"), depth + 1, stack, non_finite)?;
            map.insert(k, child);
        }
        Ok(Value::Object(map))
    };
    stack.pop();
    out
}

/// Converts a serialisable value to a plain JS value (objects, not `Map`s).
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue> {
    // Through JSON text and `JSON.parse`, which defines every key as an own
    // property: a `__proto__` key in event data stays data instead of
    // becoming the object's prototype (an assignment would set it).
    let text = context_compiler::json_text::to_json_text(value)
        .map_err(|e| Error::new(ErrorCode::NotSerializable, e.to_string()))?;
    parse_js(&text)
}

/// [`to_js`] of a `serde_json::Value`, written as it is (a large rendered
/// request is not copied into another `Value` first).
pub fn value_to_js(value: &serde_json::Value) -> Result<JsValue> {
    let text = context_compiler::json_text::value_json_text(value)
        .map_err(|e| Error::new(ErrorCode::NotSerializable, e.to_string()))?;
    parse_js(&text)
}

/// JSON text the library wrote, as a JS value.
fn parse_js(text: &str) -> Result<JsValue> {
    js_sys::JSON::parse(text).map_err(|_| {
        Error::new(
            ErrorCode::NotSerializable,
            "the value could not be turned into a JavaScript value",
        )
    })
}

/// Converts a JS value to a core type through JSON; shape errors are
/// `INVALID_ARGUMENT` naming `what`.
pub fn from_js<T: DeserializeOwned>(value: &JsValue, what: &str) -> Result<T> {
    let json = js_to_json(value, what)?;
    serde_json::from_value(json)
        .map_err(|e| Error::new(ErrorCode::InvalidArgument, format!("{what}: {e}")))
}

/// Reads the property `key` of an options object (`undefined` when the
/// options are absent). Non-objects are an `INVALID_ARGUMENT` error.
pub fn option<T: AsRef<JsValue>>(options: &Option<T>, key: &str, what: &str) -> Result<JsValue> {
    let options = match options.as_ref().map(AsRef::as_ref) {
        Some(o) if !o.is_undefined() && !o.is_null() => o,
        _ => return Ok(JsValue::UNDEFINED),
    };
    check_options_object(options, what)?;
    Reflect::get(options, &key.into()).map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{what}.{key} could not be read"),
        )
    })
}

/// Checks that `options` (present: not `undefined` or `null`) is an options
/// object: an object that is neither an array nor a function.
fn check_options_object(options: &JsValue, what: &str) -> Result<()> {
    if options.is_object() && !js_sys::Array::is_array(options) && !options.is_function() {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::InvalidArgument,
        format!("{what} must be an object (got {})", describe(options)),
    ))
}

/// Checks `options` up front, for a call that may not read them: absent, or
/// an options object (see [`option`]).
pub fn options_arg<T: AsRef<JsValue>>(options: &Option<T>, what: &str) -> Result<()> {
    match options.as_ref().map(AsRef::as_ref) {
        Some(o) if !o.is_undefined() && !o.is_null() => check_options_object(o, what),
        _ => Ok(()),
    }
}

/// The option `key` of `options` converted by `convert` (`default` when
/// absent); a value `convert` refuses is an `INVALID_ARGUMENT` error saying
/// it must be `expected`.
pub fn typed_option<T, O: AsRef<JsValue>>(
    options: &Option<O>,
    key: &str,
    default: T,
    convert: impl FnOnce(&JsValue) -> Option<T>,
    expected: &str,
) -> Result<T> {
    let v = option(options, key, "options")?;
    if v.is_undefined() || v.is_null() {
        return Ok(default);
    }
    convert(&v).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("options.{key} must be {expected}"),
        )
    })
}

/// The boolean option `key` of `options` (`default` when absent); anything
/// but a boolean is an `INVALID_ARGUMENT` error.
pub fn bool_option<T: AsRef<JsValue>>(
    options: &Option<T>,
    key: &str,
    default: bool,
) -> Result<bool> {
    typed_option(options, key, default, JsValue::as_bool, "a boolean")
}

/// `n` as a count, when it is a non-negative safe integer.
pub fn whole(n: f64) -> Option<u64> {
    (n >= 0.0 && n.fract() == 0.0 && n <= MAX_SAFE_INTEGER).then_some(n as u64)
}

/// A non-negative safe integer (`undefined`/`null` give `None`); anything
/// else is an error with `code`.
pub fn count(value: &JsValue, what: &str, code: ErrorCode) -> Result<Option<u64>> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    match value.as_f64().and_then(whole) {
        Some(n) => Ok(Some(n)),
        None => Err(Error::new(
            code,
            format!(
                "{what} must be a non-negative integer (got {})",
                describe(value)
            ),
        )),
    }
}

/// Like [`count`], but `Infinity` means "no limit" (`usize::MAX`).
pub fn limit(value: &JsValue, what: &str, default: usize) -> Result<usize> {
    if value.as_f64() == Some(f64::INFINITY) {
        return Ok(usize::MAX);
    }
    Ok(count(value, what, ErrorCode::InvalidArgument)?.map_or(default, |n| n as usize))
}

/// A short description of a JS value for error messages.
pub fn describe(value: &JsValue) -> String {
    if let Some(n) = value.as_f64() {
        return n.to_string();
    }
    if let Some(s) = value.as_string() {
        let short: String = s.chars().take(40).collect();
        return format!("\"{short}\"");
    }
    value.js_typeof().as_string().unwrap_or_default()
}

/// A required string argument.
pub fn string(value: &JsValue, what: &str) -> Result<String> {
    js_string(value).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{what} must be a string (got {})", describe(value)),
        )
    })
}

/// A session id (argument `what`): a string, and well-formed: a lone UTF-16
/// surrogate would become U+FFFD and two ids one session. The stores check
/// the rest (`context_compiler::session::check_session_id`).
pub fn session_id(value: &JsValue, what: &str) -> Result<String> {
    let id = string(value, what)?;
    if value
        .dyn_ref::<js_sys::JsString>()
        .is_some_and(|s| !s.is_valid_utf16())
    {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{what} holds a lone surrogate: it is not well-formed Unicode"),
        ));
    }
    Ok(id)
}

/// Bytes from a `Uint8Array` (or any typed-array view), an `ArrayBuffer`, or
/// a string (encoded as UTF-8).
pub fn bytes(value: &JsValue, what: &str) -> Result<Vec<u8>> {
    if let Some(s) = js_string(value) {
        return Ok(s.into_bytes());
    }
    if let Some(buf) = value.dyn_ref::<js_sys::ArrayBuffer>() {
        return Ok(js_sys::Uint8Array::new(buf).to_vec());
    }
    if js_sys::ArrayBuffer::is_view(value) {
        let view: &js_sys::Object = value.unchecked_ref();
        let buffer = Reflect::get(view, &"buffer".into()).unwrap_or(JsValue::UNDEFINED);
        let offset = Reflect::get(view, &"byteOffset".into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0);
        let length = Reflect::get(view, &"byteLength".into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0);
        if let Some(buf) = buffer.dyn_ref::<js_sys::ArrayBuffer>() {
            return Ok(js_sys::Uint8Array::new_with_byte_offset_and_length(
                buf,
                offset as u32,
                length as u32,
            )
            .to_vec());
        }
    }
    Err(Error::new(
        ErrorCode::InvalidArgument,
        format!(
            "{what} must be a Uint8Array, an ArrayBuffer or a string (got {})",
            describe(value)
        ),
    ))
}
