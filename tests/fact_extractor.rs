//! The fact extractor (seed 003, phase L tests 15-20) with a scripted model
//! and the built-in memory: what it asks, what it keeps, what it skips.

mod common;

use std::rc::Rc;

use async_trait::async_trait;
use context_compiler::bus::{
    BusEvent, BusOptions, EventBus, FactExtractor, FactExtractorOptions, Similarity, FACT_SOURCE,
};
use context_compiler::memory::{Embedder, MemoryEntry, MemoryFilter, MemoryStore};
use context_compiler::{InMemoryBackend, Result};
use serde_json::{json, Map, Value};

use common::block_on;
use common::bus::{keeper, ManualClock};
use common::memory::RecallOnly;
use common::model::ScriptedModel;

struct Setup {
    bus: EventBus,
    model: Rc<ScriptedModel>,
    memory: Rc<InMemoryBackend>,
    _extractor: FactExtractor,
}

fn setup_with(answer: std::result::Result<&str, &str>, similarity: Similarity) -> Setup {
    let bus = EventBus::new(ManualClock::at(1e12), BusOptions::default()).unwrap();
    let model = Rc::new(ScriptedModel::new(&[answer]));
    let memory = Rc::new(InMemoryBackend::with_clock(ManualClock::at(1e12)));
    let extractor = FactExtractor::new(
        &bus,
        model.clone(),
        memory.clone(),
        similarity,
        FactExtractorOptions::default(),
    );
    Setup {
        bus,
        model,
        memory,
        _extractor: extractor,
    }
}

fn setup(answer: std::result::Result<&str, &str>) -> Setup {
    setup_with(answer, Similarity::Lexical)
}

fn summarized(s: &Setup, summary: Value) {
    let mut data = Map::new();
    data.insert("episode_id".into(), json!("ep-1"));
    data.insert("summary".into(), summary);
    s.bus.emit(BusEvent::new(
        "episode_summarized",
        "nous",
        Some("s-1".into()),
        data,
        0.0,
    ));
    block_on(s.bus.stop());
}

fn summary() -> Value {
    json!({"title": "Units", "summary": "The user set up the deploy and asked for metric units.",
           "key_points": ["metric units", "deploys on Fridays"]})
}

fn facts(memory: &InMemoryBackend) -> Vec<MemoryEntry> {
    memory.entries(&MemoryFilter::default())
}

/// The remembered contents after `old` was remembered and the model answered.
fn remembered_after(s: &Setup, old: &str) -> Vec<String> {
    s.memory.store("old", old, "preference");
    summarized(s, summary());
    facts(&s.memory).into_iter().map(|e| e.content).collect()
}

#[test]
fn facts_are_extracted_from_a_summary_and_stored() {
    // Seed test 15.
    let s = setup(Ok(r#"[
        {"subject": "user", "content": "The user prefers metric units", "category": "preference", "confidence": 0.9},
        {"subject": "deploy", "content": "Deploys happen on Fridays", "category": "rule"}
    ]"#));
    summarized(&s, summary());
    let prompts = s.model.prompts.borrow();
    assert_eq!(prompts.len(), 1);
    assert!(prompts[0]
        .0
        .starts_with("Review the following conversation summary"));
    assert!(prompts[0]
        .0
        .contains("Summary: The user set up the deploy and asked for metric units."));
    assert!(prompts[0]
        .0
        .contains("Key Points: metric units, deploys on Fridays"));
    assert_eq!(prompts[0].1, 500);
    let stored = facts(&s.memory);
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].content, "The user prefers metric units");
    assert_eq!(stored[0].subject.as_deref(), Some("user"));
    assert_eq!(stored[0].category, "preference");
    assert_eq!(stored[0].confidence, Some(0.9));
    assert_eq!(stored[0].source.as_deref(), Some(FACT_SOURCE));
    assert_eq!(stored[0].created_at, Some(1e12));
    assert!(stored[0].key.starts_with("fact:"));
    // A fact without a confidence gets the seed's 0.7.
    assert_eq!(stored[1].confidence, Some(0.7));
    // The next compile can recall it.
    let hits = block_on(s.memory.recall("which units does the user like", 1)).unwrap();
    assert_eq!(hits[0].content, "The user prefers metric units");
    assert_eq!(s.bus.stats().handler_errors, 0);
}

#[test]
fn facts_similar_to_remembered_ones_are_skipped() {
    // Seed test 16: > 0.85 similarity is a duplicate, also within one answer.
    let s = setup(Ok(r#"[
        {"subject": "user", "content": "the user prefers METRIC units.", "confidence": 0.9},
        {"subject": "user", "content": "The user prefers metric units for everything they measure", "confidence": 0.9},
        {"subject": "team", "content": "The team reviews code on Mondays", "confidence": 0.9},
        {"subject": "team", "content": "The team reviews code on Mondays", "confidence": 0.8}
    ]"#));
    assert_eq!(
        remembered_after(&s, "The user prefers metric units"),
        [
            "The user prefers metric units",
            "The user prefers metric units for everything they measure",
            "The team reviews code on Mondays"
        ]
    );
}

/// Embeds by keyword: "units" and "measure" point the same way.
struct KeywordEmbedder;

#[async_trait(?Send)]
impl Embedder for KeywordEmbedder {
    async fn embed(&self, text: &str) -> Result<Vec<f32>> {
        let t = text.to_lowercase();
        let units = t.contains("units") || t.contains("measure");
        Ok(vec![
            if units { 1.0 } else { 0.0 },
            if t.contains("deploy") { 1.0 } else { 0.0 },
            0.01,
        ])
    }
}

#[test]
fn an_injected_embedder_decides_what_is_a_duplicate() {
    let s = setup_with(
        Ok(r#"[
            {"subject": "user", "content": "Measurements should be in the units the user likes: metric", "confidence": 0.9},
            {"subject": "ops", "content": "Deploy freezes start in December", "confidence": 0.9}
        ]"#),
        Similarity::Embedder(Rc::new(KeywordEmbedder)),
    );
    assert_eq!(
        remembered_after(&s, "The user prefers metric units"),
        [
            "The user prefers metric units",
            "Deploy freezes start in December"
        ],
        "lexically different, but the embedder calls the first a duplicate"
    );
}

#[test]
fn low_confidence_facts_are_skipped() {
    // Seed test 17: below 0.6 is skipped, 0.6 itself is kept.
    let s = setup(Ok(r#"[
        {"subject": "a", "content": "Unsure thing", "confidence": 0.59},
        {"subject": "b", "content": "Borderline thing", "confidence": 0.6},
        {"subject": "c", "content": "Nonsense confidence", "confidence": "high"}
    ]"#));
    summarized(&s, summary());
    let contents: Vec<String> = facts(&s.memory).into_iter().map(|e| e.content).collect();
    assert_eq!(contents, ["Borderline thing"]);
}

#[test]
fn at_most_five_candidates_are_considered() {
    // Seed test 18.
    let answer: Vec<Value> = (0..8)
        .map(|i| json!({"subject": format!("s{i}"), "content": format!("Distinct fact number {i} about topic{i}"), "confidence": 0.9}))
        .collect();
    let s = setup(Ok(&serde_json::to_string(&answer).unwrap()));
    summarized(&s, summary());
    let stored = facts(&s.memory);
    assert_eq!(stored.len(), 5);
    assert_eq!(stored[4].content, "Distinct fact number 4 about topic4");
}

#[test]
fn an_empty_summary_asks_nothing() {
    // Seed test 19.
    for empty in [
        json!({}),
        json!({"summary": ""}),
        json!(null),
        json!("text"),
    ] {
        let s = setup(Ok("[]"));
        summarized(&s, empty.clone());
        assert!(s.model.prompts.borrow().is_empty(), "{empty}");
        assert!(s.memory.is_empty());
        assert_eq!(s.bus.stats().handler_errors, 0);
    }
    // Nothing worth storing: an empty array.
    let s = setup(Ok("[]"));
    summarized(&s, summary());
    assert!(s.memory.is_empty());
    assert_eq!(s.bus.stats().handler_errors, 0);
}

#[test]
fn a_model_failure_or_garbage_is_counted_and_nothing_stored() {
    // Seed test 20.
    for answer in [
        Err("provider down"),
        Ok("Here are some facts: the user likes tea"),
        Ok("{\"not\": \"an array\"}"),
    ] {
        let s = setup(answer);
        summarized(&s, summary());
        assert!(s.memory.is_empty(), "{answer:?}");
        assert_eq!(
            s.bus.stats().handlers["fact-extractor"].errors,
            1,
            "{answer:?}"
        );
    }
    // Items that are not facts are skipped, the rest kept.
    let s = setup(Ok(r#"```json
[1, "text", {"subject": "x"}, {"subject": "y", "content": "A real fact"}]
```"#));
    summarized(&s, summary());
    assert_eq!(facts(&s.memory).len(), 1);
    assert_eq!(s.bus.stats().handler_errors, 0);
}

#[test]
fn a_memory_that_cannot_write_is_reported_not_hidden() {
    let bus = EventBus::new(ManualClock::at(0.0), BusOptions::default()).unwrap();
    let model = Rc::new(ScriptedModel::new(&[Ok(
        r#"[{"subject": "u", "content": "A fact"}]"#,
    )]));
    let _x = FactExtractor::new(
        &bus,
        model,
        Rc::new(RecallOnly),
        Similarity::Lexical,
        FactExtractorOptions::default(),
    );
    let (probe, reports) = keeper();
    bus.on("facts_extracted", "probe", probe);
    let mut data = Map::new();
    data.insert("summary".into(), summary());
    bus.emit(BusEvent::new("episode_summarized", "a", None, data, 0.0));
    block_on(bus.stop());
    let stats = bus.stats();
    assert_eq!(stats.handlers["fact-extractor"].errors, 1);
    let report = &reports.borrow()[0];
    assert_eq!(report.data["facts"], json!([]));
}
