//! Golden fixtures shared with the JS tests (tests/js/golden.test.mjs): the
//! same inputs must give the same compiled messages, token count, artifact
//! handles, drops and recorded events in every binding.
//!
//! `UPDATE_GOLDEN=1 cargo test --test golden` rewrites the `expected` blocks.
mod common;

use std::rc::Rc;

use common::block_on;
use context_compiler::clock::SystemClock;
use context_compiler::{
    ArtifactAttacher, Compactor, ContextCompiler, DefaultTokenCounter, HistorySelector,
    InMemoryBackend, MemoryArtifactStore, MemoryPreloader, Processor, Session,
};
use serde_json::{json, Value};

const BASE_MS: u64 = 1_700_000_000_000;

/// The export document a fixture's events stand for (ids and times fixed).
fn export_doc(fixture: &Value) -> Value {
    let events: Vec<Value> = fixture["events"]
        .as_array()
        .expect("events")
        .iter()
        .enumerate()
        .map(|(i, e)| {
            json!({
                "eventId": format!("{:012x}-{:012x}", BASE_MS + i as u64, i),
                "timestamp": (BASE_MS + i as u64) as f64,
                "kind": e["kind"],
                "data": e["data"],
                "tokenEstimate": e.get("tokenEstimate").cloned().unwrap_or(json!(0)),
            })
        })
        .collect();
    json!({"format": "agent-context-compiler/session", "version": 1, "sessionId": fixture["sessionId"], "events": events})
}

fn limit(v: &Value, default: usize) -> usize {
    match v {
        Value::String(s) if s == "Infinity" => usize::MAX,
        Value::Number(n) => n.as_u64().expect("count") as usize,
        _ => default,
    }
}

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
                "compactor" => Rc::new(Compactor::new()),
                "memory_preloader" => {
                    Rc::new(MemoryPreloader::new(memory.clone(), limit(&p["topK"], 5)))
                }
                "artifact_attacher" => Rc::new(ArtifactAttacher::new(
                    store.clone(),
                    limit(&p["thresholdBytes"], 1024),
                )),
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
    let compiler = ContextCompiler::new(processors(fixture, store));
    let c = &fixture["compile"];
    let ctx = block_on(compiler.compile(
        &mut session,
        c["budget"].as_u64().unwrap(),
        c["systemPrompt"].as_str().unwrap(),
    ))
    .expect("compile");
    let recorded: Vec<&str> = session.event_log().events()[before..]
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    json!({
        "messages": ctx.to_messages(),
        "tokenCount": ctx.token_count,
        "artifactRefs": ctx.artifact_refs,
        "memoryKeys": ctx.memory_hits.iter().map(|m| m.key.clone()).collect::<Vec<_>>(),
        "dropped": ctx.dropped,
        "recordedKinds": recorded,
    })
}

#[test]
fn golden_fixtures() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/golden");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    assert!(paths.len() >= 3);
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut fixture: Value = serde_json::from_str(&text).unwrap();
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
