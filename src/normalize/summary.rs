//! Summaries of tool outputs that fit a character limit: JSON by its shape,
//! text by its head and tail.

use serde_json::Value;

/// At most `max` characters of `text`: the whole text when it fits, else its
/// head and tail around an elision mark saying how much was left out.
pub fn summarize_text(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let mark_len = |omitted: usize| format!(" … [{omitted} chars omitted] … ").chars().count();
    // Reserve room for the mark (its digits depend on what is omitted).
    let room = max.saturating_sub(mark_len(total));
    let head_n = room * 2 / 3;
    let tail_n = room - head_n;
    let head: String = text.chars().take(head_n).collect();
    let tail: String = text.chars().skip(total - tail_n).collect();
    let omitted = total - head_n - tail_n;
    let out = format!("{head} … [{omitted} chars omitted] … {tail}");
    if out.chars().count() <= max {
        out
    } else {
        out.chars().take(max).collect()
    }
}

/// At most `max` characters describing `value`'s shape: keys, array lengths
/// and a few values, never a serialisation cut mid-token.
pub fn summarize_json(value: &Value, max: usize) -> String {
    let detail = if max >= 1000 { 3 } else { 1 };
    let mut out = String::new();
    describe(value, detail, max, &mut out);
    if out.chars().count() > max {
        out = out.chars().take(max.saturating_sub(1)).collect::<String>() + "…";
    }
    out
}

fn short_string(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        format!("{s:?}")
    } else {
        format!("{:?}…", s.chars().take(n).collect::<String>())
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn describe(value: &Value, depth: usize, max: usize, out: &mut String) {
    if out.len() > max * 4 {
        return;
    }
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => out.push_str(&value.to_string()),
        Value::String(s) => out.push_str(&short_string(s, if depth > 1 { 80 } else { 30 })),
        Value::Array(items) => {
            let kinds: Vec<&str> = items.iter().map(kind).collect();
            let same = kinds.windows(2).all(|w| w[0] == w[1]);
            match items.first() {
                None => out.push_str("[]"),
                Some(first) if depth == 0 => {
                    out.push_str(&format!(
                        "[{} {}s]",
                        items.len(),
                        if same { kind(first) } else { "mixed item" }
                    ));
                }
                Some(first) => {
                    out.push_str(&format!("[{} items", items.len()));
                    if same {
                        out.push_str(&format!(" of {}, first: ", kind(first)));
                        describe(first, depth - 1, max, out);
                    }
                    out.push(']');
                }
            }
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if out.chars().count() > max {
                    out.push_str(&format!("… +{} keys", map.len() - i));
                    break;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                if depth == 0 {
                    out.push_str(kind(v));
                } else {
                    describe(v, depth - 1, max, out);
                }
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_keeps_head_and_tail() {
        let text = format!("START {} END", "x".repeat(10_000));
        let s = summarize_text(&text, 200);
        assert!(s.chars().count() <= 200);
        assert!(s.starts_with("START"));
        assert!(s.ends_with("END"));
        assert!(s.contains("chars omitted"));
        assert_eq!(summarize_text("short", 200), "short");
        let cjk = "日本語".repeat(1000);
        assert!(summarize_text(&cjk, 200).chars().count() <= 200);
    }

    #[test]
    fn json_describes_shape() {
        let v = json!({"status": "ok", "count": 120, "items": (0..120).map(|i| json!({"id": i, "name": format!("n{i}")})).collect::<Vec<_>>()});
        let concise = summarize_json(&v, 200);
        assert!(concise.chars().count() <= 200, "{concise}");
        assert!(concise.contains("status: \"ok\""), "{concise}");
        assert!(concise.contains("[120 objects]"), "{concise}");
        let detailed = summarize_json(&v, 2000);
        assert!(
            detailed.contains("120 items of object, first: {id: 0, name: \"n0\"}"),
            "{detailed}"
        );
        let wide = json!((0..500)
            .map(|i| (format!("key{i}"), json!(i)))
            .collect::<serde_json::Map<_, _>>());
        assert!(summarize_json(&wide, 200).chars().count() <= 200);
        assert_eq!(summarize_json(&json!(42), 200), "42");
    }
}
