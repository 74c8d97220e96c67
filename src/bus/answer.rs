//! Asking the injected model, and reading JSON out of its answer: the
//! whole answer, or the part inside a markdown code fence.

use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::llm::{Llm, LlmOptions};

/// A handler's failure (`HANDLER_FAILED`).
pub(crate) fn failed(message: String) -> Error {
    Error::new(ErrorCode::HandlerFailed, message)
}

/// Asks `llm`, then reads the answer with `parse`; `who` names the asker and
/// `shape` what `parse` wants in the `HANDLER_FAILED` errors.
async fn ask<T>(
    llm: &dyn Llm,
    prompt: &str,
    max_tokens: u64,
    who: &str,
    shape: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<T> {
    let answer = llm
        .complete(prompt, LlmOptions { max_tokens })
        .await
        .map_err(|e| failed(format!("{who}: the model failed: {}", e.message())))?;
    parse(&answer).ok_or_else(|| {
        let head: String = answer.chars().take(80).collect();
        failed(format!(
            "{who}: the model's answer is not {shape}: {head:?}"
        ))
    })
}

/// Asks `llm` for a JSON object.
pub(crate) async fn ask_object(
    llm: &dyn Llm,
    prompt: &str,
    max_tokens: u64,
    who: &str,
) -> Result<Map<String, Value>> {
    ask(
        llm,
        prompt,
        max_tokens,
        who,
        "a JSON object",
        parse_json_object,
    )
    .await
}

/// Asks `llm` for a JSON array (or an object with `facts`).
pub(crate) async fn ask_array(
    llm: &dyn Llm,
    prompt: &str,
    max_tokens: u64,
    who: &str,
) -> Result<Vec<Value>> {
    ask(
        llm,
        prompt,
        max_tokens,
        who,
        "a JSON array",
        parse_json_array,
    )
    .await
}

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

/// The field `key` of an answered object when it is a string with
/// something besides whitespace, trimmed.
pub(crate) fn text_field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
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
