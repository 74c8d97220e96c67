//! JSON text of the library's values. Every piece of JSON the library
//! writes (results crossing to JavaScript, stored sessions and records,
//! component results) is written here: through a `serde_json::Value` by
//! `context_compiler_text::json`, so the module has one JSON writer,
//! compiled in the crate optimised for speed, while this crate is
//! optimised for size (see the workspace's `Cargo.toml`). The bindings write
//! their JSON here too, so a value reads the same through every binding.
//! And the one way event data's members are read where it is hot
//! (`member`).

use serde::Serialize;
use serde_json::Value;

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

/// The member `key` of an object (`None` for other values). A small
/// object's members are compared in turn, which is cheaper than hashing
/// the key: event data mostly has a handful of members, and an event is
/// rendered each time it is recorded or compiled.
pub(crate) fn member<'a>(data: &'a Value, key: &str) -> Option<&'a Value> {
    let map = data.as_object()?;
    if map.len() <= 8 {
        map.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        map.get(key)
    }
}
