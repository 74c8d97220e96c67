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
