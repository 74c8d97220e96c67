//! Secret redaction for text and JSON.
//!
//! [`redact`] replaces every credential it finds with `[REDACTED:<rule>]` and
//! reports where it was. One `aho-corasick` pass finds the rules' keywords;
//! each rule is then tried, anchored, only where its keywords say a match
//! could start ([`rules::Start`]), so clean text costs that one linear scan
//! and a keyword costs a few bytes of matching. The rules use `regex-lite`,
//! which is linear-time (no backtracking). [`redact_json`] also redacts by
//! key name at any depth, keeping the keys.

mod anchored;
mod json;
mod key_value;
mod keys;
mod literals;
mod pem;
mod rules;

#[cfg(test)]
mod equivalence;

use std::sync::OnceLock;

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{Input, MatchKind};
use serde::{Deserialize, Serialize};

use crate::order::{descending, sort_positions, sort_stable_by_key};

use anchored::{Anchored, AtStarts, Matches};
use rules::{Rule, Start};

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

/// Which rule a keyword belongs to.
#[derive(Clone, Copy)]
enum Owner {
    /// The rule at this index of [`rules::RULES`].
    Rule(usize),
    /// The key-value rules.
    KeyValue,
}

struct Compiled {
    /// The keywords as a DFA, the one automaton built in (`AhoCorasick`
    /// would link all three kinds it chooses between at run time).
    prefilter: DFA,
    /// For each prefilter pattern, its keyword and the rule it belongs to.
    keywords: Vec<(&'static str, Owner)>,
    /// Each rule's pattern, compiled the first time a keyword asks for it.
    rules: Vec<OnceLock<Anchored>>,
    /// The key-value rule and the two comparison forms.
    key_value: OnceLock<[Anchored; 3]>,
}

// The patterns are constants checked by the tests: a failure to compile one
// is a bug in rules.rs, not in any input.
fn compile(pattern: &str) -> Anchored {
    Anchored::new(pattern).expect("redaction rule compiles")
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let mut keywords = Vec::new();
        for (i, rule) in rules::RULES.iter().enumerate() {
            keywords.extend(rule.keywords.iter().map(|k| (*k, Owner::Rule(i))));
        }
        keywords.extend(
            rules::KEY_VALUE_KEYWORDS
                .iter()
                .map(|k| (*k, Owner::KeyValue)),
        );
        let prefilter = aho_corasick::dfa::Builder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(keywords.iter().map(|(k, _)| k))
            .expect("redaction keywords compile");
        Compiled {
            prefilter,
            keywords,
            rules: rules::RULES.iter().map(|_| OnceLock::new()).collect(),
            key_value: OnceLock::new(),
        }
    })
}

impl Compiled {
    fn rule(&self, i: usize) -> &Anchored {
        self.rules[i].get_or_init(|| compile(rules::RULES[i].pattern))
    }

    fn key_value(&self) -> &[Anchored; 3] {
        self.key_value.get_or_init(|| {
            [
                rules::KEY_VALUE_PATTERN,
                rules::KEY_COMPARED_PATTERN,
                rules::COMPARED_KEY_PATTERN,
            ]
            .map(compile)
        })
    }
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

/// Where the rule's match could start for its keyword `keyword` found at
/// byte `p` of `text`: pushed onto `out`.
fn starts_at_keyword(rule: &Rule, keyword: &str, text: &str, p: usize, out: &mut Vec<usize>) {
    let bytes = text.as_bytes();
    let case_sensitive = !rule.pattern.starts_with("(?i)");
    if case_sensitive && !text[p..].starts_with(keyword) {
        return;
    }
    if rule.near.is_some_and(|near| !near(bytes, p)) {
        return;
    }
    match rule.start {
        Start::Before(n) => out.push(p.saturating_sub(n)),
        Start::Span { class, min, max } => {
            let run = rules::run_before(bytes, p, max, class);
            let boundary = rule.pattern.starts_with(r"\b");
            out.extend(
                (min..=run)
                    .rev()
                    .map(|n| p - n)
                    .filter(|&s| !boundary || s == 0 || !rules::word_byte(bytes[s - 1])),
            );
        }
    }
}

/// The hits of one rule among its successive non-overlapping `matches`.
fn rule_hits(rule: &'static Rule, text: &str, mut matches: impl Matches) -> Vec<Hit> {
    let mut found = Vec::new();
    let mut pos = 0;
    while let Some(groups) = matches.next_from(text, pos) {
        pos = groups.whole().1.max(groups.whole().0 + 1);
        let Some((s, e)) = groups.get(rule.group) else {
            continue;
        };
        let secret = &text[s..e];
        if rule.id == "jwt" && !keys::is_jwt(secret) {
            continue;
        }
        if rule.group != 0 && is_placeholder(secret) {
            continue;
        }
        found.push(Hit {
            rule: rule.id,
            start: s,
            end: e,
            quote: String::new(),
        });
    }
    found
}

/// What one pass over a text's keywords tells.
struct Keywords {
    /// For each rule, where its matches could start.
    starts: Vec<Vec<usize>>,
    /// Where key words (`pass`, `token`, ...) are, in order.
    key_value_at: Vec<usize>,
    /// Where keywords start (but the bare "."), in order: which escaped
    /// strings may hide something only their decoded form shows.
    keyword_at: Vec<usize>,
}

fn keywords(text: &str) -> Keywords {
    let c = compiled();
    let mut k = Keywords {
        starts: vec![Vec::new(); rules::RULES.len()],
        key_value_at: Vec::new(),
        keyword_at: Vec::new(),
    };
    // An unanchored overlapping search with standard semantics, which the
    // DFA is built for: no error is possible.
    let found = c
        .prefilter
        .try_find_overlapping_iter(Input::new(text))
        .expect("the keyword DFA searches overlapping");
    for m in found {
        let (keyword, owner) = c.keywords[m.pattern().as_usize()];
        match owner {
            Owner::KeyValue => k.key_value_at.push(m.start()),
            Owner::Rule(i) => {
                starts_at_keyword(&rules::RULES[i], keyword, text, m.start(), &mut k.starts[i])
            }
        }
        if m.len() > 1 {
            k.keyword_at.push(m.start());
        }
    }
    sort_positions(&mut k.keyword_at);
    sort_positions(&mut k.key_value_at);
    k
}

/// Every candidate secret in `text`, which is `depth` strings deep.
fn hits(text: &str, depth: usize) -> Vec<Hit> {
    let c = compiled();
    let Keywords {
        starts,
        key_value_at,
        keyword_at,
    } = keywords(text);
    let mut found = Vec::new();
    for (i, starts) in starts.into_iter().enumerate() {
        if starts.is_empty() {
            continue;
        }
        let rule = &rules::RULES[i];
        if rule.id == rules::PEM_RULE {
            found.extend(rule_hits(rule, text, pem::PemMatches::new(starts)));
        } else {
            found.extend(rule_hits(rule, text, AtStarts::new(c.rule(i), starts)));
        }
    }
    let key_value = !key_value_at.is_empty();
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
        found.extend(key_value::flag_value_hits(text, &literals));
    }
    if key_value {
        found.extend(key_value::key_value_hits(
            c.key_value(),
            text,
            &key_value_at,
            &literals,
        ));
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
    sort_stable_by_key(&mut hits, |h| (h.start as u64, descending(h.end as u64)));
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
