//! The seed's test_processors, ported, plus what the seed got wrong.
mod common;

use std::rc::Rc;

use common::{block_on, session};
use context_compiler::clock::SystemClock;
use context_compiler::{
    ArtifactAttacher, ArtifactStore, Compactor, HistoryMessage, HistorySelector, InMemoryBackend,
    MemoryArtifactStore, MemoryPreloader, Processor, Session, SessionWrites, ToolResult,
    WorkingContext,
};
use serde_json::json;

fn make_session_with_history(n: usize) -> Session {
    let mut s = session("hist");
    for i in 0..n {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let kind = if role == "user" {
            "user_input"
        } else {
            "phase_result"
        };
        s.record(
            kind,
            json!({"role": role, "content": format!("Message {i}")}),
            Some(20),
        )
        .unwrap();
    }
    s
}

fn empty_ctx(budget: u64) -> WorkingContext {
    WorkingContext::new("test", budget)
}

async fn run(
    p: &dyn Processor,
    s: &Session,
    ctx: WorkingContext,
    budget: u64,
) -> (WorkingContext, SessionWrites) {
    let mut w = SessionWrites::default();
    let ctx = p.process(s, ctx, budget, &mut w).await.unwrap();
    (ctx, w)
}

#[test]
fn history_selector_keeps_first_and_last() {
    block_on(async {
        let s = make_session_with_history(20);
        let (r, _) = run(&HistorySelector::new(2, 3), &s, empty_ctx(500), 500).await;
        assert_eq!(r.history.len(), 5);
        assert_eq!(r.history[0].content, "Message 0");
        assert_eq!(r.history[1].content, "Message 1");
        assert_eq!(r.history[4].content, "Message 19");
        assert_eq!(r.history[1].role, "assistant");
    });
}

#[test]
fn history_selector_respects_the_budget() {
    // The seed's selector ignored the budget; ours keeps the newest turns that fit.
    block_on(async {
        let mut s = session("b");
        for i in 0..50 {
            s.record(
                "user_input",
                json!({"content": format!("turn {i} {}", "word ".repeat(40))}),
                None,
            )
            .unwrap();
        }
        let (r, _) = run(
            &HistorySelector::new(1, usize::MAX),
            &s,
            empty_ctx(300),
            300,
        )
        .await;
        assert!(r.token_count <= 300, "{}", r.token_count);
        assert!(r.history.len() >= 2 && r.history.len() < 10);
        assert!(r.history[0].content.starts_with("turn 0 "));
        assert!(r.history.last().unwrap().content.starts_with("turn 49 "));
    });
}

#[test]
fn history_selector_brings_tool_results_into_the_context() {
    block_on(async {
        let mut s = session("t");
        s.record("user_input", json!({"text": "run it"}), None)
            .unwrap();
        s.record("tool_success", json!({"tool": "calc", "result": 4}), None)
            .unwrap();
        s.record(
            "tool_error",
            json!({"tool": "web", "error": "refused"}),
            None,
        )
        .unwrap();
        let (r, _) = run(&HistorySelector::default(), &s, empty_ctx(500), 500).await;
        assert_eq!(r.tool_results.len(), 2);
        assert_eq!(r.tool_results[0].result, "4");
        assert_eq!(r.tool_results[1].result, "error: refused");
        assert!(r.to_messages()[0].content.contains("- calc: 4"));
    });
}

#[test]
fn compactor_merges_consecutive() {
    block_on(async {
        let s = session("c");
        let mut ctx = empty_ctx(500);
        ctx.history = vec![
            HistoryMessage::new("user", "  Hello  ").into(),
            HistoryMessage::new("user", "  World  ").into(),
            HistoryMessage::new("assistant", "Hi there").into(),
        ];
        ctx.token_count = 30;
        let (r, _) = run(&Compactor::new(), &s, ctx, 500).await;
        assert_eq!(r.history.len(), 2);
        assert_eq!(r.history[0].role, "user");
        assert_eq!(r.history[0].content, "Hello\nWorld");
        assert_eq!(r.history[1].content, "Hi there");
        assert_eq!(
            r.token_count,
            r.exact_token_count(&context_compiler::DefaultTokenCounter)
        );
    });
}

#[test]
fn memory_preloader() {
    block_on(async {
        let mem = Rc::new(InMemoryBackend::new());
        mem.store("fact1", "Python is a programming language", "core");
        mem.store("fact2", "Rust is systems programming", "core");
        let mut s = session("m");
        s.record(
            "user_input",
            json!({"text": "Tell me about Python"}),
            Some(10),
        )
        .unwrap();
        let mut ctx = empty_ctx(500);
        ctx.token_count = 10;
        let (r, _) = run(&MemoryPreloader::new(mem, 5), &s, ctx, 500).await;
        assert!(!r.memory_hits.is_empty());
        assert_eq!(r.memory_hits[0].key, "fact1");
    });
}

#[test]
fn memory_preloader_without_user_input_does_nothing() {
    block_on(async {
        let mem = Rc::new(InMemoryBackend::new());
        mem.store("fact1", "Python", "core");
        let s = session("m0");
        let (r, _) = run(&MemoryPreloader::new(mem, 5), &s, empty_ctx(500), 500).await;
        assert!(r.memory_hits.is_empty());
    });
}

#[test]
fn artifact_attacher_externalizes_large() {
    block_on(async {
        let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
        let s = session("a");
        let mut ctx = empty_ctx(500);
        ctx.tool_results = vec![ToolResult {
            tool: "big_tool".into(),
            result: "x".repeat(5000),
            event_id: None,
            tokens: None,
        }];
        ctx.token_count = 5000;
        let (r, writes) = run(&ArtifactAttacher::new(store.clone(), 1024), &s, ctx, 500).await;
        assert_eq!(r.artifact_refs.len(), 1);
        assert!(!r.artifact_refs[0].handle.is_empty());
        assert!(r.artifact_refs[0].size_bytes >= 5000);
        assert!(r.tool_results.is_empty());
        assert!(r.token_count < 5000);
        assert_eq!(writes.records().len(), 1);
        assert_eq!(writes.records()[0].0, "artifact_stored");
        assert!(store.exists(&r.artifact_refs[0].handle).await.unwrap());
    });
}
