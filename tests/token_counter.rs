//! The default counter's documented error bound against o200k_base counts
//! (tests/fixtures/token_counts.json, made by scripts/gen-token-fixtures.mjs).

use context_compiler::tokens::{estimate_tokens, DefaultTokenCounter, TokenCounter};
use serde::Deserialize;

#[derive(Deserialize)]
struct Sample {
    category: String,
    text: String,
    o200k: u64,
}

#[derive(Deserialize)]
struct Fixture {
    samples: Vec<Sample>,
}

/// (category, max relative error of one sample, max relative error of the total)
const BOUNDS: &[(&str, f64, f64)] = &[
    ("prose", 0.20, 0.10),
    ("code", 0.35, 0.10),
    ("json", 0.15, 0.10),
    ("logs", 0.25, 0.10),
    ("cjk", 0.30, 0.10),
];

fn fixture() -> Fixture {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/token_counts.json"
    ))
    .expect("fixture present");
    serde_json::from_str(&text).expect("fixture parses")
}

#[test]
fn default_counter_is_within_its_documented_bounds() {
    let f = fixture();
    let c = DefaultTokenCounter;
    for &(category, per_sample, total) in BOUNDS {
        let samples: Vec<&Sample> = f
            .samples
            .iter()
            .filter(|s| s.category == category)
            .collect();
        assert!(samples.len() >= 30, "{category}: {} samples", samples.len());
        let (mut est_sum, mut real_sum) = (0u64, 0u64);
        for s in &samples {
            let est = c.count(&s.text);
            let err = (est as f64 - s.o200k as f64) / s.o200k as f64;
            assert!(
                err.abs() <= per_sample,
                "{category}: {est} vs {} ({err:+.3}) for {:?}",
                s.o200k,
                &s.text[..s.text.len().min(80)]
            );
            est_sum += est;
            real_sum += s.o200k;
        }
        let err = (est_sum as f64 - real_sum as f64) / real_sum as f64;
        assert!(err.abs() <= total, "{category} total: {err:+.3}");
    }
}

#[test]
fn seed_estimator_is_far_off_on_json_which_is_why_it_is_not_the_default() {
    let f = fixture();
    let json: Vec<&Sample> = f
        .samples
        .iter()
        .filter(|s| s.category == "json" && !s.text.contains('\n'))
        .collect();
    assert!(!json.is_empty());
    for s in json {
        assert!((estimate_tokens(&s.text) as f64) < 0.5 * s.o200k as f64);
    }
}

/// The default counter's exact counts, pinned: the fixture's real samples
/// and synthetic texts with runs of every class across 64-byte block edges
/// (tests/fixtures/heuristic_counts.json). The JS tests check the same
/// counts through the wasm build, whose classifier is SIMD128. After a
/// deliberate change of the heuristic, `UPDATE_HEURISTIC=1 cargo test
/// --test token_counter` rewrites the fixture.
#[test]
fn default_counter_counts_are_pinned() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/heuristic_counts.json"
    );
    let c = DefaultTokenCounter;
    let samples: Vec<u64> = fixture().samples.iter().map(|s| c.count(&s.text)).collect();
    let synthetic: Vec<serde_json::Value> = synthetic_texts()
        .into_iter()
        .map(|t| serde_json::json!({ "count": c.count(&t), "text": t }))
        .collect();
    let now = serde_json::json!({
        "description": "The default counter's exact counts: `samples[i]` is that of token_counts.json's sample i; `synthetic` texts cross 64-byte block edges with runs of every class. Written by `UPDATE_HEURISTIC=1 cargo test --test token_counter`.",
        "samples": samples,
        "synthetic": synthetic,
    });
    if std::env::var_os("UPDATE_HEURISTIC").is_some() {
        std::fs::write(path, serde_json::to_string_pretty(&now).unwrap() + "\n").unwrap();
    }
    let pinned: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture present")).unwrap();
    assert_eq!(pinned, now);
}

/// Deterministic texts of pieces of every class: 120 of 20 to 400 bytes,
/// and 8 of 2 to 20 KB.
fn synthetic_texts() -> Vec<String> {
    const PIECES: &[&str] = &[
        "word",
        "Word",
        "HTTPServer",
        "camelCaseIdentifier",
        "ALLCAPS",
        "a",
        "Extraordinarily",
        "12",
        "2026",
        "1234567890123",
        " ",
        "  ",
        "    ",
        "\n",
        "\r\n",
        "\t\t",
        ".",
        ",",
        "--",
        "----",
        "====",
        "\"},{\"",
        "...",
        "\u{1}",
        "\u{7f}",
        "日本語",
        "。",
        "한국어",
        "é",
        "naïve",
        "\u{a0}",
        "😀",
        "{\"k\":",
        "0x1F",
        "_",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    (0..128)
        .map(|i| {
            let len = if i < 120 {
                20 + next(380)
            } else {
                2_000 + next(18_000)
            };
            let mut t = String::new();
            while t.len() < len {
                let piece = PIECES[next(PIECES.len())];
                t.push_str(&piece.repeat(1 + next(3)));
            }
            t
        })
        .collect()
}

/// A counter that fails while `failing` is set, as a host's can.
struct Flaky {
    failing: std::cell::Cell<bool>,
    failure: std::cell::RefCell<Option<context_compiler::Error>>,
}

impl TokenCounter for Flaky {
    fn count(&self, text: &str) -> u64 {
        if self.failing.get() {
            *self.failure.borrow_mut() = Some(context_compiler::Error::new(
                context_compiler::ErrorCode::TokenCounterFailed,
                "down",
            ));
        }
        text.len() as u64
    }

    fn take_failure(&self) -> Option<context_compiler::Error> {
        self.failure.borrow_mut().take()
    }
}

#[test]
fn a_failed_count_fails_the_append_compile_or_import_that_made_it_and_keeps_nothing() {
    use context_compiler::clock::SystemClock;
    use context_compiler::{ContextCompiler, ErrorCode, HistorySelector, Session};
    use std::rc::Rc;
    let flaky = Rc::new(Flaky {
        failing: false.into(),
        failure: None.into(),
    });
    let mut s = Session::with_env(None, Rc::new(SystemClock), flaky.clone(), 7);
    for i in 0..6 {
        s.record("user_input", serde_json::json!(format!("q{i}")), None)
            .unwrap();
    }
    let before = s.export_json();
    flaky.failing.set(true);
    let e = s
        .record("user_input", serde_json::json!("lost"), None)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TokenCounterFailed);
    assert_eq!(s.export_json(), before);
    let compiler = ContextCompiler::new(vec![Rc::new(HistorySelector::new(1, 3))]);
    let e = pollster::block_on(compiler.compile(&mut s, 100, "sys")).unwrap_err();
    assert_eq!(e.code(), ErrorCode::TokenCounterFailed);
    assert_eq!(s.export_json(), before);
    let e = Session::import_json(&before, Rc::new(SystemClock), flaky.clone(), 1).unwrap_err();
    assert_eq!(e.code(), ErrorCode::TokenCounterFailed);
    flaky.failing.set(false);
    assert!(pollster::block_on(compiler.compile(&mut s, 100, "sys")).is_ok());
    assert_eq!(s.event_log().len(), 6);
}
