//! Reading JSON out of a model's answer: the whole answer, or the part
//! inside a markdown code fence.

use serde_json::{Map, Value};

/// The answer without a surrounding ```` ```json ```` (or ```` ``` ````) fence.
fn unfence(answer: &str) -> &str {
    let trimmed = answer.trim();
    trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|s| s.trim_end().strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim()
}

/// The JSON object in a model's answer; anything else is `None`.
pub fn parse_json_object(answer: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str(unfence(answer)) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// The JSON array in a model's answer, or an answered object's `facts`
/// array; anything else is `None`.
pub fn parse_json_array(answer: &str) -> Option<Vec<Value>> {
    match serde_json::from_str(unfence(answer)) {
        Ok(Value::Array(items)) => Some(items),
        Ok(Value::Object(mut map)) => match map.remove("facts") {
            Some(Value::Array(items)) => Some(items),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_and_bare_answers_parse() {
        assert!(parse_json_object("```json\n{\"a\":1}\n```").is_some());
        assert!(parse_json_object(" {\"a\":1} ").is_some());
        assert!(parse_json_object("[1]").is_none());
        assert_eq!(
            parse_json_array("```\n[1,2]\n```").map(|v| v.len()),
            Some(2)
        );
        assert_eq!(
            parse_json_array("{\"facts\":[1]}").map(|v| v.len()),
            Some(1)
        );
        assert!(parse_json_array("{\"other\":[1]}").is_none());
        assert!(parse_json_array("Sure! Here are the facts").is_none());
    }
}
