//! Structural redaction of parsed JSON.

use serde_json::Value;

use super::{is_placeholder, is_secret_key, redact, Finding};

/// Redacts `value` in place: values under secret-looking keys (at any depth)
/// become `"[REDACTED:secret-key]"`, and every string is redacted as text.
/// Keys and everything else are kept. Returns the findings, with JSON
/// Pointer paths.
pub fn redact_json(value: &mut Value) -> Vec<Finding> {
    let mut findings = Vec::new();
    walk(value, &mut String::new(), &mut findings);
    findings
}

fn pointer_segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn walk(value: &mut Value, path: &mut String, findings: &mut Vec<Finding>) {
    match value {
        Value::String(s) => {
            let r = redact(s);
            if !r.findings.is_empty() {
                findings.extend(r.findings.into_iter().map(|f| Finding {
                    path: Some(path.clone()),
                    ..f
                }));
                *s = r.text;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                walk(item, path, findings);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                let len = path.len();
                path.push('/');
                path.push_str(&pointer_segment(key));
                let secret_scalar = match &*item {
                    Value::String(s) => !is_placeholder(s),
                    Value::Number(_) => true,
                    _ => false,
                };
                if secret_scalar && is_secret_key(key) {
                    let original = match &*item {
                        Value::String(s) => s.len(),
                        other => other.to_string().len(),
                    };
                    findings.push(Finding {
                        rule: "secret-key".into(),
                        path: Some(path.clone()),
                        start: 0,
                        end: original,
                    });
                    *item = Value::String("[REDACTED:secret-key]".into());
                } else {
                    walk(item, path, findings);
                }
                path.truncate(len);
            }
        }
        _ => {}
    }
}
