//! Nothing is left out silently: the newest user message is always in the
//! context (truncated if it must be), and every turn, tool result or memory
//! the budget leaves out is listed in `dropped`.
mod common;

use std::rc::Rc;

use common::{block_on, session};
use context_compiler::clock::SystemClock;
use context_compiler::working_context::{DropAction, Section};
use context_compiler::{
    ArtifactAttacher, ContextCompiler, HistorySelector, InMemoryBackend, Layout,
    MemoryArtifactStore, MemoryPreloader, Processor,
};
use serde_json::json;

const NEWEST: &str = "NO! Do not delete anything";

fn conversation() -> context_compiler::Session {
    let mut s = session("omit");
    s.record(
        "user_input",
        json!("Please delete the staging database."),
        None,
    )
    .unwrap();
    s.record("assistant_output", json!("Deleting it now."), None)
        .unwrap();
    for i in 0..6 {
        s.record("user_input", json!(format!("status {i}")), None)
            .unwrap();
        s.record("assistant_output", json!(format!("working {i}")), None)
            .unwrap();
    }
    s.record(
        "user_input",
        json!(format!("{NEWEST}. {}", "Stop everything. ".repeat(60))),
        None,
    )
    .unwrap();
    s
}

#[test]
fn the_newest_user_message_is_kept_truncated_and_every_omission_listed() {
    for layout in [Layout::SingleSystem, Layout::Zoned] {
        block_on(async {
            let mut s = conversation();
            let compiler = ContextCompiler::with_layout(
                vec![Rc::new(HistorySelector::new(2, 5)) as Rc<dyn Processor>],
                layout,
            );
            let ctx = compiler.compile(&mut s, 120, "sys").await.unwrap();
            assert!(ctx.token_count <= 120, "{layout:?}");
            let messages = ctx.to_messages();
            let last_user = messages
                .iter()
                .rev()
                .find(|m| m.role == "user")
                .expect("a user message");
            assert!(
                last_user.content.contains(NEWEST),
                "{layout:?}: {messages:?}"
            );
            let newest_id = s.event_log().last_user_input().unwrap().event_id.clone();
            let included: Vec<Option<String>> =
                ctx.history.iter().map(|m| m.event_id.clone()).collect();
            assert!(included.contains(&Some(newest_id)));
            // Every conversation event of the first and last windows is
            // either in the context or listed.
            {
                let listed: Vec<Option<String>> =
                    ctx.dropped.iter().map(|d| d.event_id.clone()).collect();
                let log = s.event_log();
                let conv = log.filter(&["user_input", "assistant_output"]);
                let first_and_last: Vec<&str> = conv[..2]
                    .iter()
                    .chain(conv[conv.len() - 5..].iter())
                    .map(|e| e.event_id.as_str())
                    .collect();
                for id in first_and_last {
                    let id = Some(id.to_string());
                    assert!(
                        included.contains(&id) || listed.contains(&id),
                        "{id:?} neither kept nor listed"
                    );
                }
            }
        });
    }
}

#[test]
fn memories_left_out_for_the_budget_are_listed_by_key() {
    block_on(async {
        let mut s = session("mem");
        s.record("user_input", json!("what about rust"), None)
            .unwrap();
        s.record(
            "tool_success",
            json!({"tool": "read", "result": "rust data ".repeat(3000)}),
            None,
        )
        .unwrap();
        let memory = Rc::new(InMemoryBackend::new());
        memory.store("rust-facts", &"rust is a language ".repeat(40), "core");
        let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
        let compiler = ContextCompiler::new(vec![
            Rc::new(HistorySelector::default()) as Rc<dyn Processor>,
            Rc::new(MemoryPreloader::new(memory, 5)),
            Rc::new(ArtifactAttacher::new(store, 1024)),
        ]);
        let ctx = compiler.compile(&mut s, 400, "sys").await.unwrap();
        assert!(ctx.memory_hits.is_empty());
        let listed = ctx
            .dropped
            .iter()
            .find(|d| d.key.as_deref() == Some("rust-facts"))
            .expect("the memory is listed");
        assert_eq!(listed.section, Section::MemoryHits);
        assert_eq!(listed.action, DropAction::Dropped);
        assert!(listed.tokens_removed > 40);
    });
}

#[test]
fn tool_results_left_out_for_the_budget_are_listed() {
    block_on(async {
        let mut s = session("tools");
        s.record("user_input", json!("go"), None).unwrap();
        for i in 0..5 {
            s.record(
                "tool_success",
                json!({"tool": "t", "result": format!("result {i} {}", "x ".repeat(40))}),
                None,
            )
            .unwrap();
        }
        let compiler = ContextCompiler::new(vec![
            Rc::new(HistorySelector::new(2, 5)) as Rc<dyn Processor>
        ]);
        let ctx = compiler.compile(&mut s, 110, "sys").await.unwrap();
        let kept = ctx.tool_results.len() + ctx.artifact_refs.len();
        let listed = ctx
            .dropped
            .iter()
            .filter(|d| d.section == Section::ToolResults)
            .count();
        assert!(kept < 5);
        assert_eq!(kept + listed, 5, "{:?}", ctx.dropped);
    });
}

/// A processor that adds `n` memory hits, as a custom recall might.
struct ManyMemories(usize);

#[async_trait::async_trait(?Send)]
impl Processor for ManyMemories {
    fn name(&self) -> &str {
        "many_memories"
    }
    async fn process(
        &self,
        _session: &context_compiler::Session,
        mut ctx: context_compiler::WorkingContext,
        _budget: u64,
        _writes: &mut context_compiler::SessionWrites,
    ) -> context_compiler::Result<context_compiler::WorkingContext> {
        for i in 0..self.0 {
            ctx.memory_hits.push(context_compiler::MemoryHit {
                key: format!("fact-{i}"),
                content: format!("fact number {i} about the deployment"),
                category: "core".into(),
                tokens: None,
            });
        }
        Ok(ctx)
    }
}

#[test]
fn fitting_thousands_of_items_costs_a_pass_not_a_pass_per_item() {
    let mut read = Vec::new();
    for n in [1_000, 4_000] {
        let counter = common::CountingCounter::new();
        let mut s = common::session_with("many", counter.clone());
        s.record("user_input", json!("deploy"), None).unwrap();
        let compiler = ContextCompiler::new(vec![
            Rc::new(HistorySelector::default()) as Rc<dyn Processor>,
            Rc::new(ManyMemories(n)),
        ]);
        counter.chars.set(0);
        let ctx = block_on(compiler.compile(&mut s, 100, "sys")).unwrap();
        assert!(ctx.token_count <= 100);
        let listed = ctx
            .dropped
            .iter()
            .filter(|d| d.section == Section::MemoryHits && d.action == DropAction::Dropped)
            .count();
        assert_eq!(listed + ctx.memory_hits.len(), n);
        read.push(counter.chars.get());
    }
    // Four times the items: about four times the characters counted (a
    // fit that recounts the context per item reads sixteen times more).
    eprintln!("characters counted for 1,000 and 4,000 hits: {read:?}");
    assert!(read[1] < read[0] * 6, "{read:?}");
}
