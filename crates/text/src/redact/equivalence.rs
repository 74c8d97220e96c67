//! The anchored rule engine against a scan of the whole text (the `regex`
//! crate, ASCII mode, as `regex-lite` is): the same hits, rule by rule, on
//! real corpora and generated text dense with keywords and separators.

use proptest::prelude::*;

use super::anchored::{Groups, Matches};
use super::key_value::{key_value_hits, pattern_hits, Names};
use super::{compiled, keywords, literals, rule_hits, rules, Hit};

/// Successive leftmost matches of a whole-text scan.
struct FullScan(regex::bytes::Regex);

impl FullScan {
    fn new(pattern: &str) -> FullScan {
        FullScan(regex::bytes::Regex::new(&format!("(?-u){pattern}")).unwrap())
    }
}

impl Matches for FullScan {
    fn next_from(&mut self, text: &str, pos: usize) -> Option<Groups> {
        if pos > text.len() {
            return None;
        }
        let caps = self.0.captures_at(text.as_bytes(), pos)?;
        let spans = (0..caps.len())
            .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
            .collect();
        Some(Groups::from_spans(spans))
    }
}

fn spans(hits: Vec<Hit>) -> Vec<(&'static str, usize, usize)> {
    hits.into_iter().map(|h| (h.rule, h.start, h.end)).collect()
}

/// Asserts both engines find the same hits in `text`.
fn same_hits(text: &str) {
    let k = keywords(text);
    let c = compiled();
    for (i, starts) in k.starts.into_iter().enumerate() {
        let rule = &rules::RULES[i];
        let ours = if rule.id == rules::PEM_RULE {
            assert_eq!(
                rule.pattern,
                super::pem::pattern(),
                "pem.rs states the rule's pattern"
            );
            spans(rule_hits(rule, text, super::pem::PemMatches::new(starts)))
        } else {
            spans(rule_hits(
                rule,
                text,
                super::AtStarts::new(c.rule(i), starts),
            ))
        };
        let oracle = spans(rule_hits(rule, text, FullScan::new(rule.pattern)));
        assert_eq!(ours, oracle, "rule {} on {text:?}", rule.id);
    }
    let literals = literals::literals(text);
    let ours = spans(key_value_hits(
        c.key_value(),
        text,
        &k.key_value_at,
        &literals,
    ));
    let oracle: Vec<_> = [
        rules::KEY_VALUE_PATTERN,
        rules::KEY_COMPARED_PATTERN,
        rules::COMPARED_KEY_PATTERN,
    ]
    .iter()
    .zip(c.key_value())
    .flat_map(|(p, re)| {
        spans(pattern_hits(
            FullScan::new(p),
            &Names::of(re),
            text,
            &literals,
        ))
    })
    .collect();
    assert_eq!(ours, oracle, "key-value rules on {text:?}");
}

#[test]
fn same_hits_on_the_secret_corpus_and_the_sources() {
    let cases = include_str!("../../../../tests/fixtures/secrets/detect-secrets-cases.jsonl");
    for line in cases.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        same_hits(case["text"].as_str().unwrap());
    }
    same_hits(cases);
    same_hits(include_str!("../../../../README.md"));
    same_hits(include_str!("../../../../docs/tools.md"));
    same_hits(include_str!("../../../../docs/storage.md"));
    same_hits(include_str!("rules.rs"));
    same_hits(include_str!("keys.rs"));
    // Long runs before a keyword: a scheme, a key, a key of many key words.
    same_hits(&format!("{{{}db://u:p4ss@host", "ab+1.".repeat(1000)));
    same_hits(&format!("{}_password = hunter22", "x".repeat(3000)));
    // PEM headers without an END, with one far below, and a quote between.
    let headers = "k.pem:1:-----BEGIN RSA PRIVATE KEY-----\n".repeat(300);
    same_hits(&headers);
    same_hits(&format!("{headers}-----END RSA PRIVATE KEY-----"));
    same_hits(&format!("{headers}\"-----END RSA PRIVATE KEY-----"));
    same_hits(&format!(
        "{}=hunter22 \"a\" == {}",
        "token".repeat(2000),
        "key".repeat(500)
    ));
}

/// Pieces that make rules start, nearly match or match.
const PIECES: &[&str] = &[
    "sk-",
    "sk-ant-api03-",
    "sk-proj-",
    "SK",
    "sk",
    "AKIA",
    "akia",
    "AP",
    "ap",
    "AKC",
    "://",
    "https://",
    "@",
    ":",
    "=",
    "==",
    "!=",
    "===",
    "!==",
    ":=",
    "=>",
    "\"",
    "'",
    "\\",
    "\\\"",
    "\n",
    " ",
    "\t",
    "-u ",
    "--user ",
    "Bearer ",
    "bearer\t",
    "authorization: ",
    "Authorization=\"",
    "password",
    "PassWord",
    "Token",
    "api_key",
    "key",
    "secret",
    "auth",
    "pwd",
    "credential",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "-----BEGIN ",
    "-----END CERTIFICATE-----",
    "-----BEGIN EC PRIVATE KEY BLOCK-----",
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn",
    "\\n",
    "eyJ",
    ".",
    "é",
    "日本",
    "12345678",
    "1234567890",
    ":AA",
    "[0]",
    "[",
    "]",
    "hooks.slack.com/services/",
    "sk_live_",
    "_test_",
    "xoxb-",
    "SG.",
    "npm_",
    "pypi-AgE",
    "hf_",
    "GR1348941",
    "glpat-",
    "github_pat_",
    "ghp_",
    "AIza",
    "{",
    "}",
    ",",
    ";",
    "(",
    ")",
    "type ",
    "new ",
    "MTk4NjIyNDgzNDcxOTI1MjQ4",
    "abcdEF",
    "x9Y8z7W6v5U4",
    "0123456789abcdef0123456789ABCDEF",
    "Zm9vYmFy/+=",
    "-",
    "_",
    "user:pass@",
    "9",
    // Whole secrets, at the edges of their lengths.
    "12345678:AA0123456789abcdef0123456789ABCDEF",
    "1234567890:AA0123456789abcdef0123456789ABCDEFx",
    "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "NTk4NjIyNDgzNDcxOTI1MjQ4ab.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWsZnCjm1XVW",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop",
    "ghp_0123456789abcdef0123456789ABCDEFabcd",
    "x-api-key: ",
    "db://u:p4ss@h",
];

fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => proptest::sample::select(PIECES).prop_map(str::to_string),
        1 => "[A-Za-z0-9_./+=-]{1,40}",
        1 => proptest::collection::vec(proptest::sample::select(PIECES), 1..4)
            .prop_map(|p| p.concat().repeat(3)),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn same_hits_on_generated_text(text in text()) {
        same_hits(&text);
    }
}
