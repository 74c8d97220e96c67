//! The seed's test_context_compiler_e2e, ported, plus the guarantees the seed
//! lacked: externalisation once, budget errors, failed processors.
mod common;

use std::cell::Cell;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, session, Upper};
use context_compiler::artifacts::{ArtifactHandle, StoreOptions};
use context_compiler::clock::SystemClock;
use context_compiler::working_context::{DropAction, Section};
use context_compiler::{
    ArtifactAttacher, ArtifactStore, Compactor, ContextCompiler, DefaultTokenCounter, Error,
    ErrorCode, HistorySelector, MemoryArtifactStore, Processor, Result, Session, SessionWrites,
    TokenCounter, WorkingContext,
};
use serde_json::json;

/// A memory store that counts how often content is stored (hashed).
struct CountingStore {
    inner: MemoryArtifactStore,
    stores: Cell<usize>,
}

#[async_trait(?Send)]
impl ArtifactStore for CountingStore {
    async fn store(&self, c: &[u8], s: &str, o: StoreOptions) -> Result<ArtifactHandle> {
        self.stores.set(self.stores.get() + 1);
        self.inner.store(c, s, o).await
    }
    async fn retrieve(&self, id: &str) -> Result<Option<Vec<u8>>> {
        self.inner.retrieve(id).await
    }
    async fn exists(&self, id: &str) -> Result<bool> {
        self.inner.exists(id).await
    }
    async fn list_handles(&self, s: Option<&str>) -> Result<Vec<ArtifactHandle>> {
        self.inner.list_handles(s).await
    }
    async fn delete(&self, id: &str) -> Result<bool> {
        self.inner.delete(id).await
    }
}

fn counting_store() -> Rc<CountingStore> {
    Rc::new(CountingStore {
        inner: MemoryArtifactStore::new(Rc::new(SystemClock)),
        stores: Cell::new(0),
    })
}

fn pipeline(store: Rc<dyn ArtifactStore>) -> ContextCompiler {
    ContextCompiler::new(vec![
        Rc::new(HistorySelector::new(2, 3)),
        Rc::new(Compactor::new()),
        Rc::new(ArtifactAttacher::new(store, 1024)),
    ])
}

#[test]
fn large_payload_externalized() {
    block_on(async {
        let store = counting_store();
        let mut s = session("e2e");
        s.record("user_input", json!({"text": "Analyze this file"}), Some(10))
            .unwrap();
        let large = "Line of output data. ".repeat(500);
        s.record(
            "tool_success",
            json!({"tool": "file_read", "result": large}),
            None,
        )
        .unwrap();
        let ctx = pipeline(store.clone())
            .compile(&mut s, 500, "You are helpful.")
            .await
            .unwrap();
        // The seed asserted `>= 0` because its attacher never saw session tool
        // results; the intent is that the payload is externalised.
        assert_eq!(ctx.artifact_refs.len(), 1);
        assert!(ctx.tool_results.is_empty());
        assert!(ctx.token_count < 500);
        assert!(
            store
                .inner
                .retrieve(&ctx.artifact_refs[0].handle)
                .await
                .unwrap()
                .unwrap()
                == large.as_bytes()
        );
        let stored = s.event_log().filter(&["artifact_stored"]);
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].data["handle"], json!(ctx.artifact_refs[0].handle));
    });
}

#[test]
fn externalisation_happens_once_per_event() {
    block_on(async {
        let store = counting_store();
        let mut s = session("once");
        s.record("user_input", json!("go"), None).unwrap();
        s.record(
            "tool_success",
            json!({"tool": "t", "result": "y".repeat(4000)}),
            None,
        )
        .unwrap();
        // Read by the model: externalised from now on.
        s.record("assistant_output", json!("done"), None).unwrap();
        let first = pipeline(store.clone())
            .compile(&mut s, 2000, "sys")
            .await
            .unwrap();
        // A new compiler instance: the handle comes from the session, not a re-hash.
        let second = pipeline(store.clone())
            .compile(&mut s, 2000, "sys")
            .await
            .unwrap();
        assert_eq!(store.stores.get(), 1);
        assert_eq!(s.event_log().filter(&["artifact_stored"]).len(), 1);
        assert_eq!(
            first.artifact_refs[0].handle,
            second.artifact_refs[0].handle
        );
        assert_eq!(
            first.to_messages(),
            second.to_messages(),
            "byte-stable output"
        );
    });
}

#[test]
fn budget_respected() {
    block_on(async {
        let mut s = session("budget");
        for i in 0..50 {
            s.record("user_input", json!({"role": "user", "content": format!("This is message number {i} with some content")}), Some(15)).unwrap();
        }
        let compiler = ContextCompiler::new(vec![
            Rc::new(HistorySelector::new(2, 3)),
            Rc::new(Compactor::new()),
        ]);
        let ctx = compiler
            .compile(&mut s, 200, "Short prompt.")
            .await
            .unwrap();
        // All 50 turns are user turns: the seed expected 5 separate messages, but
        // its own Compactor merges consecutive same-role turns, so the 5 selected
        // turns become one message holding all five.
        assert_eq!(ctx.history.len(), 1);
        assert_eq!(ctx.history[0].content.lines().count(), 5);
        assert!(ctx.token_count < 200);
        let without_compactor = ContextCompiler::new(vec![Rc::new(HistorySelector::new(2, 3))]);
        assert_eq!(
            without_compactor
                .compile(&mut s, 200, "Short prompt.")
                .await
                .unwrap()
                .history
                .len(),
            5
        );
    });
}

#[test]
fn token_count_is_the_exact_count_of_the_messages() {
    block_on(async {
        let mut s = session("exact");
        s.record("user_input", json!("hi there"), None).unwrap();
        s.record("assistant_output", json!("hello! how can I help?"), None)
            .unwrap();
        let ctx = pipeline(counting_store())
            .compile(&mut s, 1000, "Be brief.")
            .await
            .unwrap();
        let c = DefaultTokenCounter;
        let by_hand: u64 = ctx
            .to_messages()
            .iter()
            .map(|m| c.count(&m.content) + c.message_overhead())
            .sum();
        assert_eq!(ctx.token_count, by_hand);
    });
}

#[test]
fn invalid_and_too_small_budgets() {
    block_on(async {
        let mut s = session("small");
        s.record("user_input", json!("hello"), None).unwrap();
        let compiler = pipeline(counting_store());
        assert_eq!(
            compiler.compile(&mut s, 0, "x").await.unwrap_err().code(),
            ErrorCode::InvalidBudget
        );
        // Not even an empty system message and the question (or, without
        // it, the user placeholder a request needs) fit.
        assert_eq!(
            compiler.compile(&mut s, 3, "x").await.unwrap_err().code(),
            ErrorCode::BudgetTooSmall
        );
        // (10 less the default counter's content margin: 8.)
        let ctx = compiler
            .compile(&mut s, 10, "a long system prompt")
            .await
            .unwrap();
        assert!(ctx.token_count <= 8);
        assert!(ctx.system_prompt.is_empty());
        assert!(!ctx.dropped.is_empty());
    });
}

#[test]
fn oversized_items_are_truncated_and_recorded() {
    block_on(async {
        let mut s = session("fit");
        s.record("user_input", json!("word ".repeat(2000)), None)
            .unwrap();
        let compiler = ContextCompiler::new(vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
        let ctx = compiler
            .compile(&mut s, 120, &"system ".repeat(500))
            .await
            .unwrap();
        assert!(ctx.token_count <= 120);
        assert!(ctx
            .dropped
            .iter()
            .any(|d| d.section == Section::SystemPrompt && d.action == DropAction::Truncated));
        assert!(ctx
            .system_prompt
            .ends_with(context_compiler::tokens::TRUNCATION_MARKER));
    });
}

struct Failing;

#[async_trait(?Send)]
impl Processor for Failing {
    fn name(&self) -> &str {
        "failing"
    }
    async fn process(
        &self,
        _: &Session,
        _: WorkingContext,
        _: u64,
        _: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        Err(Error::new(ErrorCode::InvalidArgument, "boom"))
    }
}

#[test]
fn a_failing_processor_leaves_the_session_unchanged() {
    block_on(async {
        let mut s = session("fail");
        s.record(
            "tool_success",
            json!({"tool": "t", "result": "z".repeat(5000)}),
            None,
        )
        .unwrap();
        let store = counting_store();
        let compiler = ContextCompiler::new(vec![
            Rc::new(HistorySelector::default()),
            Rc::new(ArtifactAttacher::new(store, 1024)),
            Rc::new(Failing),
        ]);
        let before = s.export_json();
        let err = compiler.compile(&mut s, 1000, "").await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::ProcessorFailed);
        assert!(err.message().contains("'failing'"));
        assert_eq!(s.export_json(), before, "no artifact_stored was recorded");
    });
}

#[test]
fn custom_processors_run_in_order_and_cannot_lie_about_tokens() {
    block_on(async {
        let mut s = session("custom");
        s.record("user_input", json!("shout this"), None).unwrap();
        let mut compiler = ContextCompiler::new(vec![Rc::new(HistorySelector::default())]);
        compiler.add_processor(Rc::new(Upper));
        assert_eq!(compiler.processor_names(), ["history_selector", "upper"]);
        let ctx = compiler.compile(&mut s, 100, "sys").await.unwrap();
        assert_eq!(ctx.history[0].content, "SHOUT THIS");
        assert!(ctx.token_count > 0);
    });
}

#[test]
fn fifty_megabyte_tool_result_is_externalised() {
    block_on(async {
        let mut s = session("huge");
        let big = "log line 12345 status=ok\n".repeat(2 * 1024 * 1024);
        assert!(big.len() >= 50 * 1024 * 1024);
        s.record("user_input", json!("summarise the logs"), None)
            .unwrap();
        s.record("tool_success", json!({"tool": "logs", "result": big}), None)
            .unwrap();
        let store = counting_store();
        let ctx = pipeline(store.clone())
            .compile(&mut s, 4000, "sys")
            .await
            .unwrap();
        assert!(ctx.token_count <= 4000);
        assert_eq!(ctx.artifact_refs[0].size_bytes, big.len() as u64);
    });
}
