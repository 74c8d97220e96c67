//! Secret redaction for text and JSON.
//!
//! [`redact`] replaces every credential it finds with `[REDACTED:<rule>]` and
//! reports where it was. A keyword prefilter (one `aho-corasick` pass) decides
//! which rules run at all, so clean text costs one linear scan; the rules use
//! `regex`, which is linear-time (no backtracking). [`redact_json`] also
//! redacts by key name at any depth, keeping the keys.

mod json;
mod key_value;
mod keys;
mod literals;
mod rules;

use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;
use serde::{Deserialize, Serialize};

pub use json::redact_json;
pub use keys::{is_placeholder, is_secret_key};

/// Where a secret was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The rule that matched (e.g. `openai-api-key`, `secret-key-value`).
    pub rule: String,
    /// For JSON: the JSON Pointer of the string the secret was in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Byte offset of the secret's start in the original text (or string).
    pub start: usize,
    /// Byte offset just past the secret's end.
    pub end: usize,
}

/// Redacted text and what was removed from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Redaction {
    /// The text with every secret replaced by `[REDACTED:<rule>]`.
    pub text: String,
    /// One finding per replaced secret, in order.
    pub findings: Vec<Finding>,
}

struct Compiled {
    prefilter: AhoCorasick,
    /// For each prefilter pattern, the rule it enables (`usize::MAX`: key-value).
    keyword_rule: Vec<usize>,
    rules: Vec<Regex>,
    /// The key-value rule and the two comparison forms.
    key_value: [Regex; 3],
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let mut keywords = Vec::new();
        let mut keyword_rule = Vec::new();
        for (i, rule) in rules::RULES.iter().enumerate() {
            for k in rule.keywords {
                keywords.push(*k);
                keyword_rule.push(i);
            }
        }
        for k in rules::KEY_VALUE_KEYWORDS {
            keywords.push(*k);
            keyword_rule.push(usize::MAX);
        }
        // The patterns are constants checked by the tests: a failure here is a
        // bug in this file, not in any input.
        let prefilter = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&keywords)
            .expect("redaction keywords compile");
        let rules = rules::RULES
            .iter()
            .map(|r| Regex::new(r.pattern).expect("redaction rule compiles"))
            .collect();
        let key_value = [
            rules::KEY_VALUE_PATTERN,
            rules::KEY_COMPARED_PATTERN,
            rules::COMPARED_KEY_PATTERN,
        ]
        .map(|p| Regex::new(p).expect("key-value rule compiles"));
        Compiled {
            prefilter,
            keyword_rule,
            rules,
            key_value,
        }
    })
}

/// A candidate secret span.
pub(crate) struct Hit {
    rule: &'static str,
    start: usize,
    end: usize,
    /// What to write on both sides of the replacement: `"` where a JSON
    /// number becomes a string, escaped once per string it is nested in.
    quote: String,
}

/// How many JSON strings deep (JSON in a string in a string) escaped content
/// is decoded and scanned.
const MAX_NESTING: usize = 4;

/// Finds and replaces every secret in `text`.
///
/// JSON keeps its shape: a key rule ends at its value's end, a secret JSON
/// number becomes a string, and escaped strings (JSON inside JSON, escaped
/// key names, secrets holding `\"`) are decoded and scanned, their secrets
/// replaced in place. So valid JSON (a document, NDJSON lines, JSON in a
/// string) stays valid with every non-secret field unchanged.
pub fn redact(text: &str) -> Redaction {
    apply(text, hits(text, 0))
}

/// Every candidate secret in `text`, which is `depth` strings deep.
fn hits(text: &str, depth: usize) -> Vec<Hit> {
    let c = compiled();
    let mut enabled = vec![false; rules::RULES.len()];
    let mut key_value = false;
    // Where keywords start (but the bare "."), to tell which escaped
    // strings may hide something only their decoded form shows.
    let mut keyword_at = Vec::new();
    for m in c.prefilter.find_overlapping_iter(text) {
        match c.keyword_rule[m.pattern().as_usize()] {
            usize::MAX => key_value = true,
            i => enabled[i] = true,
        }
        if m.len() > 1 {
            keyword_at.push(m.start());
        }
    }
    keyword_at.sort_unstable();
    let mut found = Vec::new();
    for (i, rule) in rules::RULES.iter().enumerate() {
        if !enabled[i] {
            continue;
        }
        for caps in c.rules[i].captures_iter(text) {
            let Some(m) = caps.get(rule.group) else {
                continue;
            };
            if rule.id == "jwt" && !keys::is_jwt(m.as_str()) {
                continue;
            }
            if rule.group != 0 && is_placeholder(m.as_str()) {
                continue;
            }
            found.push(Hit {
                rule: rule.id,
                start: m.start(),
                end: m.end(),
                quote: String::new(),
            });
        }
    }
    let escapes = text.contains('\\');
    if !key_value && !escapes {
        return found;
    }
    let literals = literals::literals(text);
    // A key can name a secret only if it holds a key word, or hides one
    // behind escapes.
    let has_keyword = |l: &literals::Literal| {
        let first = keyword_at.partition_point(|&p| p <= l.open);
        keyword_at.get(first).is_some_and(|&p| p < l.close)
    };
    found.extend(key_value::quoted_key_hits(text, &literals, |l| {
        l.escaped || (key_value && has_keyword(l))
    }));
    if key_value {
        for re in &c.key_value {
            found.extend(key_value::pattern_hits(re, text, &literals));
        }
    }
    if escapes && depth < MAX_NESTING {
        // Decoding turns escapes into quotes, backslashes, slashes, control
        // characters or (`\u`) anything: a string needs its decoded form
        // scanned only if a keyword is already in it, or it has `\u` or `\/`.
        let worth_decoding = |l: &literals::Literal| {
            has_keyword(l) || {
                let raw = l.content(text);
                raw.contains("\\u") || raw.contains("\\/")
            }
        };
        for l in literals
            .iter()
            .filter(|l| l.escaped && !l.key && worth_decoding(l))
        {
            let (decoded, map) = literals::decode(l.content(text));
            let base = l.open + 1;
            found.extend(hits(&decoded, depth + 1).into_iter().map(|h| Hit {
                start: base + map[h.start],
                end: base + map[h.end],
                quote: literals::escape(&h.quote),
                ..h
            }));
        }
    }
    found
}

/// Replaces non-overlapping hits (earliest first, longer first on ties).
fn apply(text: &str, mut hits: Vec<Hit>) -> Redaction {
    hits.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out = String::with_capacity(text.len());
    let mut findings = Vec::new();
    let mut pos = 0;
    for h in hits {
        if h.start < pos || h.start == h.end {
            continue;
        }
        out.push_str(&text[pos..h.start]);
        out.push_str(&h.quote);
        out.push_str("[REDACTED:");
        out.push_str(h.rule);
        out.push(']');
        out.push_str(&h.quote);
        findings.push(Finding {
            rule: h.rule.to_string(),
            path: None,
            start: h.start,
            end: h.end,
        });
        pos = h.end;
    }
    out.push_str(&text[pos..]);
    Redaction {
        text: out,
        findings,
    }
}
