//! Golden fixtures shared with the JS tests (tests/js/golden.test.mjs): the
//! same inputs must give the same compiled messages, token count, artifact
//! handles, drops and recorded events in every binding.
//!
//! `UPDATE_GOLDEN=1 cargo test --test golden` rewrites the `expected` blocks.
mod common;

use common::golden::{compile_options, export_doc, fixtures, limit};

use std::rc::Rc;

use common::block_on;
use context_compiler::clock::SystemClock;
use context_compiler::{
    ArtifactAttacher, Compactor, ContextCompiler, DefaultTokenCounter, HistoryRecall,
    HistorySelector, InMemoryBackend, Layout, MemoryArtifactStore, MemoryPreloader, Processor,
    ProviderFormat, Session,
};
use serde_json::{json, Value};

fn processors(fixture: &Value, store: Rc<MemoryArtifactStore>) -> Vec<Rc<dyn Processor>> {
    let memory = Rc::new(InMemoryBackend::new());
    for m in fixture["memories"].as_array().into_iter().flatten() {
        memory.store(
            m[0].as_str().unwrap(),
            m[1].as_str().unwrap(),
            m[2].as_str().unwrap(),
        );
    }
    fixture["compile"]["processors"]
        .as_array()
        .expect("processors")
        .iter()
        .map(|p| -> Rc<dyn Processor> {
            match p["type"].as_str().expect("type") {
                "history_selector" => Rc::new(HistorySelector::new(
                    limit(&p["keepFirst"], 2),
                    limit(&p["keepLast"], 5),
                )),
                "compactor" => match p["target"].as_f64() {
                    Some(t) => Rc::new(Compactor::with_options(None, t).unwrap()),
                    None => Rc::new(Compactor::new()),
                },
                "memory_preloader" if p["pin"] == true => Rc::new(MemoryPreloader::pinned(
                    memory.clone(),
                    limit(&p["topK"], 5),
                )),
                "memory_preloader" => {
                    Rc::new(MemoryPreloader::new(memory.clone(), limit(&p["topK"], 5)))
                }
                "artifact_attacher" => Rc::new(ArtifactAttacher::new(
                    store.clone(),
                    limit(&p["thresholdBytes"], 1024),
                )),
                "history_recall" => Rc::new(HistoryRecall::new()),
                other => panic!("unknown processor {other}"),
            }
        })
        .collect()
}

fn run(fixture: &Value) -> Value {
    let doc = export_doc(fixture).to_string();
    let mut session =
        Session::import_json(&doc, Rc::new(SystemClock), Rc::new(DefaultTokenCounter), 1)
            .expect("import");
    let before = session.event_log().len();
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let c = &fixture["compile"];
    let layout = match c["layout"].as_str() {
        Some("zoned") => Layout::Zoned,
        _ => Layout::SingleSystem,
    };
    // Searched before the compile (which records events with times of its own).
    let mut searched = None;
    if let Some(search) = fixture.get("search") {
        let hits = session.search(
            search["query"].as_str().unwrap(),
            search["limit"].as_u64().unwrap() as usize,
        );
        searched = Some(json!(hits
            .iter()
            .map(|h| json!({"eventId": h.event_id, "position": h.position, "kind": h.kind}))
            .collect::<Vec<_>>()));
    }
    let compiler = ContextCompiler::with_layout(processors(fixture, store), layout);
    let ctx = block_on(compiler.compile_with(
        &mut session,
        c["budget"].as_u64().unwrap(),
        &compile_options(c),
    ))
    .expect("compile");
    let recorded: Vec<&str> = session.event_log().events()[before..]
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    let mut actual = json!({
        "messages": ctx.to_messages(),
        "tokenCount": ctx.token_count,
        "artifactRefs": ctx.artifact_refs,
        "memoryKeys": ctx.memory_hits.iter().map(|m| m.key.clone()).collect::<Vec<_>>(),
        "dropped": ctx.dropped,
        "recordedKinds": recorded,
        "zoneUsage": ctx.zone_usage,
        "compactionLevel": ctx.compaction_level,
        "summary": ctx.summary,
        "formats": {
            "openai": ctx.to_provider_messages(ProviderFormat::OpenAi),
            "anthropic": ctx.to_provider_messages(ProviderFormat::Anthropic),
            "ai-sdk": ctx.to_provider_messages(ProviderFormat::AiSdk),
            "openai-responses": ctx.to_provider_messages(ProviderFormat::OpenAiResponses),
            "gemini": ctx.to_provider_messages(ProviderFormat::Gemini),
        },
    });
    if !ctx.recalled.is_empty() {
        actual["recalled"] = json!(ctx.recalled.iter().map(|r| &r.event_id).collect::<Vec<_>>());
    }
    if let Some(search) = searched {
        actual["search"] = search;
    }
    actual
}

#[test]
fn golden_fixtures() {
    for (path, mut fixture) in fixtures() {
        let actual = run(&fixture);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            fixture["expected"] = actual;
            std::fs::write(
                &path,
                serde_json::to_string_pretty(&fixture).unwrap() + "\n",
            )
            .unwrap();
            continue;
        }
        assert_eq!(actual, fixture["expected"], "{}", path.display());
        assert!(
            actual["tokenCount"].as_u64().unwrap()
                <= fixture["compile"]["budget"].as_u64().unwrap()
        );
    }
}
