//! Property: whatever the session, processors, layout and budget, a compile
//! either returns a context whose exact token count is within the budget, or
//! fails with BUDGET_TOO_SMALL because not even an empty context (an empty
//! system message and the user placeholder) fits; in the
//! zoned layout every tool call also keeps its result and the reverse. The
//! context's ledger accounts for every token of it.
mod common;

use std::rc::Rc;

use common::{block_on, session_with};
use context_compiler::clock::SystemClock;
use context_compiler::working_context::CONVERSATION_START;
use context_compiler::{
    ArtifactAttacher, Compactor, ContextCompiler, DefaultTokenCounter, ErrorCode, HistoryRecall,
    HistorySelector, InMemoryBackend, Layout, MemoryArtifactStore, MemoryPreloader, Processor,
    ProviderFormat, TokenCounter, WordsTokenCounter,
};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Ev {
    User(String),
    Assistant(String),
    ToolOk(String),
    ToolErr(String),
    Call(String),
    Other(String),
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z ]{0,60}",
        2 => "[a-zA-Z0-9{}\":,\\[\\] \n]{0,400}",
        1 => "[\u{4e00}-\u{4e50}ぁ-ゖ ]{0,80}",
        1 => (1usize..40).prop_map(|n| "lorem ipsum dolor ".repeat(n * 20)),
    ]
}

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        3 => text().prop_map(Ev::User),
        3 => text().prop_map(Ev::Assistant),
        2 => text().prop_map(Ev::ToolOk),
        1 => text().prop_map(Ev::ToolErr),
        2 => text().prop_map(Ev::Call),
        1 => text().prop_map(Ev::Other),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn compiled_context_never_exceeds_the_budget(
        events in prop::collection::vec(event(), 0..40),
        budget in prop_oneof![1u64..20, 20u64..400, 400u64..6000],
        system in text(),
        keep_first in 0usize..4,
        keep_last in prop_oneof![0usize..8, Just(usize::MAX)],
        compact in any::<bool>(),
        attach in any::<bool>(),
        memories in any::<bool>(),
        words in any::<bool>(),
        threshold in 1usize..3000,
        zoned in any::<bool>(),
        recall in any::<bool>(),
    ) {
        let counter: Rc<dyn TokenCounter> = if words { Rc::new(WordsTokenCounter) } else { Rc::new(DefaultTokenCounter) };
        let mut s = session_with("prop", counter.clone());
        for e in &events {
            match e {
                Ev::User(t) => s.record("user_input", json!({"text": t}), None),
                Ev::Assistant(t) => s.record("assistant_output", json!({"content": t}), None),
                Ev::ToolOk(t) => s.record("tool_success", json!({"tool": "t", "result": t}), None),
                Ev::ToolErr(t) => s.record("tool_error", json!({"tool": "t", "error": t}), None),
                Ev::Call(t) => {
                    let id = s.record("tool_call", json!({"tool_name": "c", "arguments": {"q": t}}), None).unwrap().event_id.clone();
                    s.record("tool_success", json!({"tool": "c", "call_id": id, "result": t}), None)
                }
                Ev::Other(t) => s.record("custom", json!(t), None),
            }.unwrap();
        }
        let mut processors: Vec<Rc<dyn Processor>> = vec![Rc::new(HistorySelector::new(keep_first, keep_last))];
        if memories {
            let mem = Rc::new(InMemoryBackend::new());
            for (i, e) in events.iter().enumerate() {
                if let Ev::Other(t) | Ev::User(t) = e { mem.store(&format!("m{i}"), t, "") }
            }
            processors.push(Rc::new(MemoryPreloader::new(mem, 5)));
        }
        if compact { processors.push(Rc::new(Compactor::new())); }
        if recall && zoned { processors.push(Rc::new(HistoryRecall::new().with_distinction(0.0))); }
        if attach {
            processors.push(Rc::new(ArtifactAttacher::new(Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock))), threshold)));
        }
        let layout = if zoned { Layout::Zoned } else { Layout::SingleSystem };
        let compiler = ContextCompiler::with_layout(processors, layout);
        match block_on(compiler.compile(&mut s, budget, &system)) {
            Ok(ctx) => {
                prop_assert!(ctx.token_count <= budget, "{} > {}", ctx.token_count, budget);
                // Before any usage, the default counter's content margin
                // is held back (none with the words counter).
                let plan = ctx.budget_plan.expect("a plan");
                prop_assert_eq!(plan.target, budget - plan.content_margin);
                let exact: u64 = ctx.to_messages().iter().map(|m| counter.count(&m.content) + counter.message_overhead()).sum();
                prop_assert_eq!(exact, ctx.token_count);
                prop_assert_eq!(ctx.budget, plan.target);
                let ledger = ctx.ledger(counter.as_ref());
                let accounted: u64 = ledger.included.iter().map(|p| p.tokens).sum();
                prop_assert_eq!(accounted, ctx.token_count, "{:?}", ledger.included);
                prop_assert_eq!(ledger.excluded.len(), ctx.dropped.len());
                if zoned {
                    let msgs = ctx.to_provider_messages(ProviderFormat::OpenAi);
                    let msgs = msgs.as_array().unwrap();
                    for (i, m) in msgs.iter().enumerate() {
                        for (k, c) in m["tool_calls"].as_array().into_iter().flatten().enumerate() {
                            prop_assert_eq!(&msgs[i + 1 + k]["tool_call_id"], &c["id"]);
                        }
                        if m["role"] == "tool" {
                            let id = &m["tool_call_id"];
                            prop_assert!(msgs[..i].iter().any(|p| p["tool_calls"].as_array().is_some_and(|cs| cs.iter().any(|c| &c["id"] == id))));
                        }
                    }
                }
            }
            Err(e) => {
                prop_assert_eq!(e.code(), ErrorCode::BudgetTooSmall);
                // The smallest context: an empty system message and the
                // user placeholder a request needs.
                // The content margin (at most CJK's, 2.15) comes off the
                // budget first.
                let smallest = 2 * counter.message_overhead() + counter.count(CONVERSATION_START);
                prop_assert!(budget < smallest * 215 / 100 + 1, "{} >= {}", budget, smallest);
            }
        }
    }
}
