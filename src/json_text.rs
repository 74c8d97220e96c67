//! JSON text of the library's values. Every piece of JSON the library
//! writes (results crossing to JavaScript, stored sessions and records,
//! component results) is written here: through a `serde_json::Value` by
//! `context_compiler_text::json`, so the module has one JSON writer,
//! compiled in the crate optimised for speed, while this crate is
//! optimised for size (see the workspace's `Cargo.toml`). The bindings write
//! their JSON here too, so a value reads the same through every binding.

use serde::Serialize;

/// The compact JSON text of `value`; fails as `serde_json` does (e.g. a
/// map whose keys are not strings).
pub fn to_json_text<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    context_compiler_text::json::to_text(&serde_json::to_value(value)?)
}

/// [`to_json_text`] of a value that is already a `serde_json::Value`,
/// written as it is (not copied into another `Value` first).
pub fn value_json_text(value: &serde_json::Value) -> serde_json::Result<String> {
    context_compiler_text::json::to_text(value)
}
