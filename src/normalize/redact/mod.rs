//! Secret redaction for text and JSON.
//!
//! [`redact`] replaces every credential it finds with `[REDACTED:<rule>]` and
//! reports where it was. A keyword prefilter (one `aho-corasick` pass) decides
//! which rules run at all, so clean text costs one linear scan; the rules use
//! `regex`, which is linear-time (no backtracking). [`redact_json`] also
//! redacts by key name at any depth, keeping the keys.

mod json;
mod keys;
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
struct Hit {
    rule: &'static str,
    start: usize,
    end: usize,
}

/// Finds and replaces every secret in `text`.
pub fn redact(text: &str) -> Redaction {
    let c = compiled();
    let mut enabled = vec![false; rules::RULES.len()];
    let mut key_value = false;
    for m in c.prefilter.find_overlapping_iter(text) {
        match c.keyword_rule[m.pattern().as_usize()] {
            usize::MAX => key_value = true,
            i => enabled[i] = true,
        }
    }
    let mut hits = Vec::new();
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
            hits.push(Hit {
                rule: rule.id,
                start: m.start(),
                end: m.end(),
            });
        }
    }
    if key_value {
        for re in &c.key_value {
            hits.extend(key_value_hits(re, text));
        }
    }
    apply(text, hits)
}

/// Key-value hits of `re` in `text`. Scanning resumes right after each value
/// taken (not after the whole match), so `a=1 password=x` finds both.
fn key_value_hits(re: &Regex, text: &str) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut pos = 0;
    while pos < text.len() {
        let Some(caps) = re.captures_at(text, pos) else {
            break;
        };
        let Some(whole) = caps.get(0) else { break };
        let Some((start, end)) = value_span(&caps) else {
            pos = next_pos(text, whole.start(), whole.end());
            continue;
        };
        pos = next_pos(text, whole.start(), end.max(start));
        let key = caps.name("key").map_or("", |k| k.as_str());
        if is_secret_key(key) && !is_placeholder(&text[start..end]) {
            hits.push(Hit {
                rule: "secret-key-value",
                start,
                end,
            });
        }
    }
    hits
}

/// Where to resume: past `end`, and always past `start` (no empty loops).
fn next_pos(text: &str, start: usize, end: usize) -> usize {
    let mut p = end.max(start + 1);
    while p < text.len() && !text.is_char_boundary(p) {
        p += 1;
    }
    p
}

/// The span of the value in a key-value match.
fn value_span(caps: &regex::Captures<'_>) -> Option<(usize, usize)> {
    if let Some(m) = caps.name("dq").or_else(|| caps.name("sq")) {
        return Some((m.start(), m.end()));
    }
    let bare = caps.name("bare")?;
    let sep = caps.name("sep").map_or("", |s| s.as_str());
    let raw = bare.as_str();
    // `=` values end at whitespace (log lines, env files); `:` values run to
    // the end of the line (YAML).
    let cut = if sep == ":" {
        raw.len()
    } else {
        raw.find(char::is_whitespace).unwrap_or(raw.len())
    };
    let value = raw[..cut]
        .trim_end()
        .trim_end_matches([',', ';', '`', '"', '\'']);
    Some((bare.start(), bare.start() + value.len()))
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
        out.push_str("[REDACTED:");
        out.push_str(h.rule);
        out.push(']');
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
