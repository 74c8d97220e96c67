//! The model reads what it asked for: tool results recorded after its
//! latest reply stay whole in the next request while the budget holds them
//! (room is made by leaving out the oldest WORKING turns, not by a
//! compaction), and are handles from the call after; a result too big for
//! the budget is a handle at once, read through the look-back tools.
mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{block_on, exchange, session, tool_handler, StepClock};
use context_compiler::tools::look_back::{LookBack, READ_ARTIFACT, SEARCH_HISTORY};
use context_compiler::tools::{
    AbortSignal, ToolBridge, ToolFailure, ToolInterruptOptions, ToolOutput,
};
use context_compiler::{
    ArtifactAttacher, ArtifactStore, Compactor, ContextCompiler, ErrorCode, HistorySelector,
    Layout, MemoryArtifactStore, Processor, Session, WorkingContext,
};
use serde_json::{json, Value};

const SECRET: &str = "AKIAIOSFODNN7EXAMPLE";

/// A file of `lines` numbered lines.
fn file(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("line {i}: let value_{i} = compute({i});\n"))
        .collect()
}

fn store() -> Rc<MemoryArtifactStore> {
    Rc::new(MemoryArtifactStore::new(StepClock::new(0.0, 1.0)))
}

/// The recommended zoned pipeline over `store`.
fn zoned(store: &Rc<MemoryArtifactStore>, keep_unread: bool) -> ContextCompiler {
    let attacher = ArtifactAttacher::new(store.clone(), 4096).keeping_unread(keep_unread);
    let processors: Vec<Rc<dyn Processor>> = vec![
        Rc::new(HistorySelector::new(1, usize::MAX)),
        Rc::new(attacher),
        Rc::new(Compactor::new()),
    ];
    ContextCompiler::with_layout(processors, Layout::Zoned)
}

/// Records a call of `read_file` answered with `output`.
fn read_file(s: &mut Session, id: &str, output: &str) {
    s.record(
        "tool_call",
        json!({"tool_name": "read_file", "arguments": {"path": "src/lib.rs"}, "call_id": id}),
        None,
    )
    .unwrap();
    s.record(
        "tool_success",
        json!({"tool": "read_file", "call_id": id, "result": output}),
        None,
    )
    .unwrap();
}

fn compile(compiler: &ContextCompiler, s: &mut Session, budget: u64) -> WorkingContext {
    block_on(compiler.compile(s, budget, "You are a coding agent.")).unwrap()
}

/// The tool message answering `id` in the plain rendering.
fn result_of(ctx: &WorkingContext, id: &str) -> String {
    let messages = ctx.to_provider_messages(context_compiler::ProviderFormat::OpenAi);
    messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// A session whose question asked for `text`, compiled under `budget` by the
/// zoned pipeline: the store, the compiler, the session, and the handle the
/// result was shown as (the budget cannot hold it whole).
fn too_big(
    text: &str,
    budget: u64,
) -> (
    Rc<MemoryArtifactStore>,
    ContextCompiler,
    Rc<RefCell<Session>>,
    String,
) {
    let store = store();
    let compiler = zoned(&store, true);
    let session = Rc::new(RefCell::new(session("too-big")));
    {
        let mut s = session.borrow_mut();
        s.record("user_input", json!("Read the big file"), None)
            .unwrap();
        read_file(&mut s, "call_1", text);
    }
    let ctx = compile(&compiler, &mut session.borrow_mut(), budget);
    let shown = result_of(&ctx, "call_1");
    assert!(shown.starts_with("[artifact "), "{}", &shown[..80]);
    assert!(ctx.token_count <= budget);
    let handle = shown[10..74].to_string();
    (store, compiler, session, handle)
}

#[test]
fn an_unread_result_is_whole_in_the_next_call_and_a_handle_after_it() {
    let store = store();
    let compiler = zoned(&store, true);
    let mut s = session("unread");
    s.record("user_input", json!("What does src/lib.rs do?"), None)
        .unwrap();
    let text = file(200);
    read_file(&mut s, "call_1", &text);
    let ctx = compile(&compiler, &mut s, 16_000);
    assert_eq!(result_of(&ctx, "call_1"), text, "the model reads it whole");
    assert!(ctx.token_count <= 16_000);
    // It is stored already, for the calls after.
    assert_eq!(s.event_log().filter(&["artifact_stored"]).len(), 1);
    // The model answered: from now on it is a handle.
    s.record("assistant_output", json!("It computes values."), None)
        .unwrap();
    let later = compile(&compiler, &mut s, 16_000);
    let shown = result_of(&later, "call_1");
    assert!(shown.starts_with("[artifact "), "{shown}");
    assert!(shown.len() < 600);
    // Once externalised, never stored again.
    assert_eq!(s.event_log().filter(&["artifact_stored"]).len(), 1);
    // Without keepUnread, it is a handle at once.
    let mut t = session("read-at-once");
    t.record("user_input", json!("What does src/lib.rs do?"), None)
        .unwrap();
    read_file(&mut t, "call_1", &text);
    let at_once = compile(&zoned(&store, false), &mut t, 16_000);
    assert!(result_of(&at_once, "call_1").starts_with("[artifact "));
}

#[test]
fn room_is_made_by_leaving_out_old_turns_for_this_call_only_without_compacting() {
    let store = store();
    let compiler = zoned(&store, true);
    let mut s = session("room");
    for i in 0..40 {
        exchange(
            &mut s,
            &format!("Turn {i}: what about module {i}? {}", "detail ".repeat(40)),
            &format!("Module {i} is fine. {}", "because ".repeat(40)),
        );
    }
    s.record("user_input", json!("Now read src/lib.rs"), None)
        .unwrap();
    let before = compile(&compiler, &mut s, 7_000);
    let text = file(200);
    read_file(&mut s, "call_1", &text);
    let ctx = compile(&compiler, &mut s, 7_000);
    assert_eq!(result_of(&ctx, "call_1"), text);
    assert!(ctx.token_count <= 7_000);
    assert!(
        ctx.history.len() < before.history.len() + 2,
        "older turns made room"
    );
    assert!(
        s.event_log().filter(&["context_compacted"]).is_empty(),
        "a result the model reads once is no reason to compact"
    );
    // The model read it: the handle is back and so are the older turns.
    s.record("assistant_output", json!("Read it."), None)
        .unwrap();
    let after = compile(&compiler, &mut s, 7_000);
    assert!(result_of(&after, "call_1").starts_with("[artifact "));
    let first_kept = |c: &WorkingContext| {
        c.history
            .iter()
            .find(|h| h.zone.is_none() && h.role == "user")
            .map(|h| h.content.clone())
    };
    assert_eq!(
        first_kept(&after),
        first_kept(&before),
        "the window starts where it did before the read"
    );
}

#[test]
fn a_result_the_budget_cannot_hold_is_a_handle_at_once_and_is_read_in_pages() {
    let text = format!("{}\nexport {SECRET}\n{}", file(400), file(400));
    let (store, _, session, handle) = too_big(&text, 3_000);
    // Paged whole through the look-back tools, secret redacted.
    let look_back = LookBack::new(session.clone(), Some(store.clone()));
    let mut read = String::new();
    let mut offset = json!(0);
    while let Some(at) = offset.as_u64() {
        let page = block_on(look_back.call(
            READ_ARTIFACT,
            &json!({"handle": handle, "offset": at, "length": 16384}),
        ))
        .unwrap();
        read.push_str(page["text"].as_str().unwrap());
        offset = page["nextOffset"].clone();
    }
    let recorded = session.borrow().event_log().events()[2].data["result"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(read, recorded, "every page, in order, is the whole output");
    assert!(!read.contains(SECRET));
    assert!(read.contains("line 399:") && read.contains("export "));
}

#[test]
fn look_back_calls_fail_with_codes_the_host_can_tell_apart() {
    let session = Rc::new(RefCell::new(session("codes")));
    session
        .borrow_mut()
        .record(
            "user_input",
            json!("the deploy key rotated on Monday"),
            None,
        )
        .unwrap();
    let look_back = LookBack::new(session.clone(), Some(store()));
    let found = block_on(look_back.call(SEARCH_HISTORY, &json!({"query": "deploy key"}))).unwrap();
    assert_eq!(found["results"].as_array().unwrap().len(), 1);
    for (name, arguments) in [
        ("rm_rf", json!({})),
        (SEARCH_HISTORY, json!({"query": " "})),
        (READ_ARTIFACT, json!({"handle": "0".repeat(64)})),
        (READ_ARTIFACT, json!({"handle": "x", "offset": -1})),
    ] {
        let e = block_on(look_back.call(name, &arguments)).unwrap_err();
        assert_eq!(
            e.code(),
            ErrorCode::InvalidArgument,
            "{name} {arguments}: {e}"
        );
    }
    let held = session.borrow_mut();
    let e = block_on(look_back.call(SEARCH_HISTORY, &json!({"query": "deploy"}))).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SessionBusy);
    drop(held);
}

/// One tool, `read_file`, returning a fixed text.
struct Files(String);

#[async_trait::async_trait(?Send)]
impl ToolBridge for Files {
    async fn execute(
        &self,
        _name: &str,
        _arguments: &Value,
        _signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Text(self.0.clone()))
    }
}

#[test]
fn a_result_stored_when_it_was_recorded_is_read_back_whole_and_redacted() {
    let store = store();
    let session = Rc::new(RefCell::new(session("handler")));
    session
        .borrow_mut()
        .record("user_input", json!("Read the config"), None)
        .unwrap();
    let text = format!("{}\npassword = \"hunter2-{SECRET}\"\n", file(150));
    let handler = tool_handler(
        Rc::new(Files(text.clone())),
        &session,
        ToolInterruptOptions {
            artifact_store: Some(store.clone() as Rc<dyn ArtifactStore>),
            externalize_threshold: 4096,
        },
    );
    let event = block_on(handler.call("read_file", json!({}), None)).unwrap();
    assert!(event.artifact.is_some(), "the handler stored it");
    let compiler = zoned(&store, true);
    let ctx = compile(&compiler, &mut session.borrow_mut(), 16_000);
    let tool = ctx
        .history
        .iter()
        .find(|h| h.is_tool_result())
        .expect("the result");
    assert!(
        tool.content.contains("line 149:"),
        "whole: {}",
        tool.content.len()
    );
    assert!(!tool.content.contains(SECRET));
    assert!(tool.artifact.is_none());
    // A store that lost it: the handle is shown, nothing fails.
    let other = zoned(&self::store(), true);
    let ctx = compile(&other, &mut session.borrow_mut(), 16_000);
    let tool = ctx.history.iter().find(|h| h.is_tool_result()).unwrap();
    assert!(tool.content.starts_with("[artifact "));
}

#[test]
fn the_single_system_layout_keeps_an_unread_result_whole_while_it_fits() {
    let store = store();
    let attacher = ArtifactAttacher::new(store.clone(), 1024);
    let compiler =
        ContextCompiler::new(vec![Rc::new(HistorySelector::new(2, 5)), Rc::new(attacher)]);
    let mut s = session("single");
    s.record("user_input", json!("Read it"), None).unwrap();
    let text = file(60);
    read_file(&mut s, "call_1", &text);
    let ctx = compile(&compiler, &mut s, 8_000);
    assert_eq!(ctx.tool_results.len(), 1);
    assert_eq!(ctx.tool_results[0].result, text);
    assert!(ctx.artifact_refs.is_empty());
    // Too big for this budget: its reference instead.
    let small = compile(&compiler, &mut s, 600);
    assert!(small.tool_results.is_empty());
    assert_eq!(small.artifact_refs.len(), 1);
    assert!(small.token_count <= 600);
    s.record("assistant_output", json!("ok"), None).unwrap();
    let read = compile(&compiler, &mut s, 8_000);
    assert!(read.tool_results.is_empty());
    assert_eq!(read.artifact_refs.len(), 1);
}

#[test]
fn a_model_paging_through_an_output_larger_than_the_budget_reads_every_page_whole() {
    let text = file(900);
    let (store, compiler, session, handle) = too_big(&text, 3_000);
    let look_back = LookBack::new(session.clone(), Some(store.clone()));
    let mut read = String::new();
    let mut offset = json!(0);
    let mut step = 0;
    while let Some(at) = offset.as_u64() {
        step += 1;
        let id = format!("page_{step}");
        let arguments = json!({"handle": handle, "offset": at, "length": 4096});
        let page = block_on(look_back.call(READ_ARTIFACT, &arguments)).unwrap();
        {
            let mut s = session.borrow_mut();
            s.record(
                "tool_call",
                json!({"tool_name": READ_ARTIFACT, "arguments": arguments, "call_id": id}),
                None,
            )
            .unwrap();
            s.record(
                "tool_success",
                json!({"tool": READ_ARTIFACT, "call_id": id, "result": page.to_string()}),
                None,
            )
            .unwrap();
        }
        let ctx = compile(&compiler, &mut session.borrow_mut(), 3_000);
        assert!(ctx.token_count <= 3_000, "step {step}: {}", ctx.token_count);
        // The model reads the newest page whole, however many came before.
        let seen: Value = serde_json::from_str(&result_of(&ctx, &id)).expect("the page whole");
        read.push_str(seen["text"].as_str().unwrap());
        offset = seen["nextOffset"].clone();
    }
    assert_eq!(read, text);
    assert!(step > 8, "{step} pages");
}

#[test]
fn a_page_the_budget_cannot_hold_asks_for_a_smaller_one_instead_of_being_cut() {
    let text = file(900);
    let (store, compiler, session, handle) = too_big(&text, 3_000);
    let look_back = LookBack::new(session.clone(), Some(store.clone()));
    let arguments = json!({"handle": handle, "offset": 0, "length": 16384});
    let page = block_on(look_back.call(READ_ARTIFACT, &arguments)).unwrap();
    {
        let mut s = session.borrow_mut();
        s.record(
            "tool_call",
            json!({"tool_name": READ_ARTIFACT, "arguments": arguments, "call_id": "page_1"}),
            None,
        )
        .unwrap();
        s.record(
            "tool_success",
            json!({"tool": READ_ARTIFACT, "call_id": "page_1", "result": page.to_string()}),
            None,
        )
        .unwrap();
    }
    let ctx = compile(&compiler, &mut session.borrow_mut(), 3_000);
    assert!(ctx.token_count <= 3_000);
    let shown = result_of(&ctx, "page_1");
    let asked: u64 = shown
        .rsplit("at most ")
        .next()
        .and_then(|n| n.trim_end_matches(']').parse().ok())
        .unwrap_or_else(|| panic!("a smaller length: {shown}"));
    assert!(
        shown.starts_with("[this page of 16384 bytes does not fit"),
        "{shown}"
    );
    assert!((1..16384).contains(&asked), "{asked}");
}

#[test]
fn a_reply_starts_at_its_usage_its_text_or_a_call_after_an_outcome() {
    let outcome = |s: &mut Session, id: &str| {
        s.record(
            "tool_success",
            json!({"tool": "t", "call_id": id, "result": "ok"}),
            None,
        )
        .unwrap()
        .event_id
        .clone()
    };
    let call = |s: &mut Session, id: &str| {
        s.record(
            "tool_call",
            json!({"tool_name": "t", "arguments": {}, "call_id": id}),
            None,
        )
        .unwrap();
    };
    let unread = |s: &Session| -> Vec<String> {
        let log = s.event_log();
        log.events()[log.unread_from()..]
            .iter()
            .filter(|e| e.kind == "tool_success")
            .map(|e| e.data["call_id"].as_str().unwrap().to_string())
            .collect()
    };
    let mut s = session("replies");
    s.record("user_input", json!("go"), None).unwrap();
    // Nothing answered yet: every outcome is unread.
    call(&mut s, "a");
    outcome(&mut s, "a");
    assert_eq!(unread(&s), vec!["a"]);
    // A call after an outcome is the next reply; the one before is read.
    call(&mut s, "b");
    call(&mut s, "c");
    outcome(&mut s, "c");
    outcome(&mut s, "b");
    assert_eq!(
        unread(&s),
        vec!["c", "b"],
        "calls recorded together are one reply's"
    );
    // A reply's usage, or its text, starts it.
    s.record_usage(
        &context_compiler::session::ModelUsage {
            input_tokens: 10,
            cached_input_tokens: 0,
            output_tokens: 1,
        },
        None,
    )
    .unwrap();
    assert!(unread(&s).is_empty());
    call(&mut s, "d");
    outcome(&mut s, "d");
    assert_eq!(unread(&s), vec!["d"]);
    s.record("assistant_output", json!("Looked."), None)
        .unwrap();
    assert!(unread(&s).is_empty());
}

#[test]
fn search_history_shows_texts_redacted_as_read_artifact_pages_them() {
    let session = Rc::new(RefCell::new(session("search-redacted")));
    let said = format!("the deploy key is AWS_SECRET_ACCESS_KEY={SECRET_KEY} and it rotates");
    let id = session
        .borrow_mut()
        .record("user_input", json!(said), None)
        .unwrap()
        .event_id
        .clone();
    let look_back = LookBack::new(session.clone(), None);
    let found =
        block_on(look_back.call(SEARCH_HISTORY, &json!({"query": "deploy key rotates"}))).unwrap();
    let text = found["results"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("deploy key") && !text.contains(SECRET_KEY),
        "{text}"
    );
    let page = block_on(look_back.call(READ_ARTIFACT, &json!({"handle": id}))).unwrap();
    assert!(!page["text"].as_str().unwrap().contains(SECRET_KEY));
}

const SECRET_KEY: &str = "Zq8vN2mLk4Rt7Wx1Yb3Hc6Jd9Fg0Ps5Ue2Ai7Ko";
