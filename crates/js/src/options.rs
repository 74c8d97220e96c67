//! Reading one typed option out of a constructor's options object: each
//! absent option (`undefined` / `null`) takes its default, and a value of
//! the wrong type or range is `INVALID_ARGUMENT` naming the option.

use wasm_bindgen::JsValue;

use crate::convert::{option, string};
use context_compiler::error::Result;

/// The numbers an option accepts, and how its error says so.
pub struct NumberRange {
    min: f64,
    max: f64,
    expected: &'static str,
}

/// A number from 0 to 1 (confidences, similarities).
pub const FRACTION: NumberRange = NumberRange {
    min: 0.0,
    max: 1.0,
    expected: "a number from 0 to 1",
};

/// A non-negative number.
pub const NON_NEGATIVE: NumberRange = NumberRange {
    min: 0.0,
    max: f64::MAX,
    expected: "a non-negative number",
};

/// A non-negative number of milliseconds.
pub const MILLIS: NumberRange = NumberRange {
    min: 0.0,
    max: f64::MAX,
    expected: "a non-negative number of milliseconds",
};

/// A number option within `range`.
pub fn number_option<T: AsRef<JsValue>>(
    options: &Option<T>,
    key: &str,
    default: f64,
    range: NumberRange,
) -> Result<f64> {
    crate::convert::typed_option(
        options,
        key,
        default,
        |v| v.as_f64().filter(|x| (range.min..=range.max).contains(x)),
        range.expected,
    )
}

/// A non-negative integer option.
pub fn usize_option<T: AsRef<JsValue>>(
    options: &Option<T>,
    key: &str,
    default: usize,
) -> Result<usize> {
    let v = option(options, key, "options")?;
    Ok(crate::convert::count(
        &v,
        &format!("options.{key}"),
        context_compiler::error::ErrorCode::InvalidArgument,
    )?
    .map_or(default, |n| n as usize))
}

/// The option `key`, read by `read` unless it is absent or `null`.
fn optional_read<T: AsRef<JsValue>>(
    options: &Option<T>,
    key: &str,
    read: fn(&JsValue, &str) -> Result<String>,
) -> Result<Option<String>> {
    let v = option(options, key, "options")?;
    if v.is_undefined() || v.is_null() {
        Ok(None)
    } else {
        read(&v, &format!("options.{key}")).map(Some)
    }
}

/// An optional string option.
pub fn optional_string<T: AsRef<JsValue>>(
    options: &Option<T>,
    key: &str,
) -> Result<Option<String>> {
    optional_read(options, key, string)
}

/// An optional session id option (see [`crate::convert::session_id`]).
pub fn optional_session_id<T: AsRef<JsValue>>(
    options: &Option<T>,
    key: &str,
) -> Result<Option<String>> {
    optional_read(options, key, crate::convert::session_id)
}

/// A string option with a default (a prompt, say).
pub fn string_option<T: AsRef<JsValue>>(
    options: &Option<T>,
    key: &str,
    default: &str,
) -> Result<String> {
    Ok(optional_string(options, key)?.unwrap_or_else(|| default.to_string()))
}
