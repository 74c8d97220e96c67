//! JSON text from a [`Value`], written here (optimised for speed) for the
//! core, which is optimised for size: the core turns its values into a
//! [`Value`] and hands them to [`to_text`], so the one JSON writer of the
//! module (string escaping included) is compiled in this crate.

use serde_json::Value;

/// The compact JSON text of `value`, as `serde_json::to_string` writes it.
///
/// # Errors
/// None in practice (a `Value` always has string keys and finite numbers);
/// serde_json's error is passed on rather than assumed away.
pub fn to_text(value: &Value) -> Result<String, serde_json::Error> {
    serde_json::to_string(value)
}

#[cfg(test)]
mod tests {
    use super::to_text;
    use serde_json::json;

    #[test]
    fn writes_compact_json_in_insertion_order_with_escapes() {
        let value = json!({"z": 1, "a": "line\n\"quoted\"\u{1}", "n": [1.5, null, true]});
        let text = to_text(&value).expect("a Value is always JSON");
        assert_eq!(
            text,
            r#"{"z":1,"a":"line\n\"quoted\"\u0001","n":[1.5,null,true]}"#
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).ok(),
            Some(value)
        );
    }
}
