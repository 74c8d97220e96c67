//! Fuzzing on stable Rust: property tests over generated hostile input for
//! every parser and entry point that takes outside data (`redact`, the
//! aligner, `import_json`, KV records). Invariants: no panic, spans in
//! bounds, what is exported imports back byte for byte, a damaged KV record
//! is an error, never a panic. `FUZZ_CASES` scales the run (default 512
//! cases a target; `npm test` runs the default, a few seconds).
//! Counterexamples proptest finds are kept in
//! `tests/fuzz_properties.proptest-regressions` and replayed first.
mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{block_on, session, StepClock};
use context_compiler::clock::SystemClock;
use context_compiler::kv::{KvArtifactStore, KvStoreOptions, MemoryKv};
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::normalize::redact::redact;
use context_compiler::session::{SessionEnv, SessionStore};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::{DefaultTokenCounter as Counter, Session};
use proptest::prelude::*;
use serde_json::{json, Value};

fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

/// Pieces the parsers care about: quotes, escapes, separators, brackets,
/// key words, token prefixes, PEM armour, non-ASCII and control characters.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\"".to_string()),
        Just("\\".to_string()),
        Just("\\\"".to_string()),
        Just("\\u00".to_string()),
        Just("\\ud800".to_string()),
        Just(":".to_string()),
        Just("=".to_string()),
        Just(",".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("\n".to_string()),
        Just("'".to_string()),
        Just("password".to_string()),
        Just("api_key".to_string()),
        Just("token".to_string()),
        Just("Bearer ".to_string()),
        Just("sk-".to_string()),
        Just("ghp_".to_string()),
        Just("eyJ".to_string()),
        Just("-----BEGIN RSA PRIVATE KEY-----".to_string()),
        Just("-----END RSA PRIVATE KEY-----".to_string()),
        Just("://".to_string()),
        Just("@".to_string()),
        Just("null".to_string()),
        Just("é😀\u{0}\u{7f}".to_string()),
        "[A-Za-z0-9_+/=.-]{1,40}",
        "\\PC{0,8}",
    ]
}

fn hostile_text() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..40).prop_map(|parts| parts.concat())
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        hostile_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(hostile_text(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn redact_never_panics_and_its_spans_are_in_bounds(text in hostile_text()) {
        let r = redact(&text);
        let mut last_end = 0;
        for f in &r.findings {
            prop_assert!(f.start < f.end && f.end <= text.len());
            prop_assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
            prop_assert!(f.start >= last_end, "findings overlap");
            last_end = f.end;
        }
    }

    #[test]
    fn redacted_json_stays_valid(doc in json_value()) {
        let text = doc.to_string();
        let r = redact(&text);
        prop_assert!(
            serde_json::from_str::<Value>(&r.text).is_ok(),
            "{} -> {}", text, r.text
        );
    }

    #[test]
    fn the_aligner_never_panics(text in hostile_text(), as_json in json_value()) {
        let aligner = PerceptionAligner::default();
        let out = aligner.normalize("tool", &text);
        prop_assert!(out.summary_concise.chars().count() <= 200);
        let out = aligner.normalize("tool", &as_json.to_string());
        prop_assert!(out.is_json);
    }

    #[test]
    fn import_never_panics_on_hostile_documents(text in hostile_text(), doc in json_value()) {
        let counter = Rc::new(Counter);
        let _ = Session::import_json(&text, Rc::new(SystemClock), counter.clone(), 1);
        let wrapped = json!({"format": context_compiler::session::SESSION_FORMAT, "version": 1,
                             "sessionId": "s", "events": [doc]});
        let _ = Session::import_json(&wrapped.to_string(), Rc::new(SystemClock), counter, 1);
    }

    #[test]
    fn export_then_import_gives_the_same_bytes(
        events in prop::collection::vec(("[a-z_]{1,12}", json_value()), 0..12)
    ) {
        let mut s = session("fuzz");
        for (kind, data) in events {
            s.record(&kind, data, None).unwrap();
        }
        let exported = s.export_json();
        let back = Session::import_json(&exported, Rc::new(SystemClock), Rc::new(Counter), 1)
            .unwrap();
        prop_assert_eq!(back.export_json(), exported);
    }

    #[test]
    fn damaged_kv_records_are_errors_never_panics(
        damage in prop::collection::vec((any::<prop::sample::Index>(), prop::collection::vec(any::<u8>(), 0..64), 0usize..3), 1..4)
    ) {
        block_on(async {
            let store = KvArtifactStore::new(
                MemoryKv::new(),
                StepClock::new(1000.0, 1.0),
                KvStoreOptions { chunk_bytes: 4096, prefix: String::new(), timeout_ms: None },
            )
            .unwrap();
            let s = RefCell::new(session("kv"));
            for i in 0..5 {
                s.borrow_mut().record("user_input", json!(format!("turn {i}")), None).unwrap();
            }
            store.save_session(&s).await.unwrap();
            let stored = context_compiler::artifacts::ArtifactStore::store(
                &store, &[7u8; 9000], "src", Default::default()).await.unwrap();
            // (9,000 bytes: a record and three chunks for damage to hit.)
            let keys = store.kv().keys();
            for (index, bytes, how) in &damage {
                let key = index.get(&keys);
                let mut value = store.kv().raw_get(key).unwrap_or_default();
                match how {
                    0 => value = bytes.clone(),
                    1 => value.truncate(bytes.len().min(value.len())),
                    _ => value.extend_from_slice(bytes),
                }
                store.kv().raw_put(key, value);
            }
            let env = SessionEnv {
                clock: Rc::new(SystemClock),
                counter: Rc::new(DefaultTokenCounter),
                seed: 1,
            };
            let _ = store.load_session("kv", env).await;
            let _ = context_compiler::artifacts::ArtifactStore::retrieve(&store, &stored.artifact_id).await;
            let _ = context_compiler::artifacts::ArtifactStore::list_handles(&store, None).await;
        });
    }
}
