//! Structural redaction of parsed JSON.

use serde_json::Value;

use super::key_value::is_secret_flag;
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

/// Replaces every string (but placeholders) and number in `value` with
/// `"[REDACTED:secret-key]"`, keeping arrays' and objects' shapes.
fn redact_leaves(value: &mut Value, path: &mut String, findings: &mut Vec<Finding>) {
    match value {
        Value::String(s) if is_placeholder(s) => {}
        Value::String(_) | Value::Number(_) => {
            let original = match &*value {
                Value::String(s) => s.len(),
                other => other.to_string().len(),
            };
            findings.push(Finding {
                rule: "secret-key".into(),
                path: Some(path.clone()),
                start: 0,
                end: original,
            });
            *value = Value::String("[REDACTED:secret-key]".into());
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                under(path, &i.to_string(), |path| {
                    redact_leaves(item, path, findings)
                });
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                under(path, &pointer_segment(key), |path| {
                    redact_leaves(item, path, findings)
                });
            }
        }
        _ => {}
    }
}

/// Runs `f` with `segment` appended to the JSON Pointer `path`.
fn under(path: &mut String, segment: &str, f: impl FnOnce(&mut String)) {
    let len = path.len();
    path.push('/');
    path.push_str(segment);
    f(path);
    path.truncate(len);
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
            // In an argument list, the value after a secret flag
            // (`["--password", "hunter2"]`).
            let mut secret_next = false;
            for (i, item) in items.iter_mut().enumerate() {
                let flag = matches!(&*item, Value::String(s) if is_secret_flag(s));
                let value = matches!(&*item, Value::String(s) if !s.starts_with('-'));
                under(path, &i.to_string(), |path| {
                    if secret_next && value {
                        redact_leaves(item, path, findings);
                    } else {
                        walk(item, path, findings);
                    }
                });
                secret_next = flag;
            }
        }
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                under(path, &pointer_segment(key), |path| {
                    if is_secret_key(key) {
                        // Its value, or every value inside it (an array or
                        // object under a secret key: `"password": ["hunter2"]`).
                        redact_leaves(item, path, findings);
                    } else {
                        walk(item, path, findings);
                    }
                });
            }
        }
        _ => {}
    }
}
