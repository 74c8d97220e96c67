//! The look-back tools: `search_history` finds what left the window,
//! `read_artifact` pages through an externalised output on character
//! boundaries, verified; a run offering them records their calls like any
//! other tool's.
mod common;

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, session, StepClock};
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::runner::{run_compiled, Agent, Model, ModelReply, ModelRequest, RunOptions};
use context_compiler::tools::look_back::{page, READ_ARTIFACT, SEARCH_HISTORY};
use context_compiler::tools::{
    AbortSignal, ToolBridge, ToolEventKind, ToolFailure, ToolInterruptHandler,
    ToolInterruptOptions, ToolOutput,
};
use context_compiler::{
    ArtifactStore, Compactor, ContextCompiler, ErrorCode, HistorySelector, Layout,
    MemoryArtifactStore, Processor, Result, Session,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// One tool, `big`, returning a long text of multi-byte characters.
struct Big(String);

#[async_trait(?Send)]
impl ToolBridge for Big {
    async fn execute(
        &self,
        name: &str,
        _arguments: &Value,
        _signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        match name {
            "big" => Ok(ToolOutput::Text(self.0.clone())),
            "png" => Ok(ToolOutput::Bytes(b"\x89PNG\r\n\x1a\n\0\0\0".to_vec())),
            _ => Err(ToolFailure::Failed(format!("no tool {name}"))),
        }
    }
}

fn big_text() -> String {
    (0..600)
        .map(|i| format!("ligne {i}: café, 東京, ✓ — all good\n"))
        .collect()
}

fn handler(
    session: &Rc<RefCell<Session>>,
    store: &Rc<MemoryArtifactStore>,
) -> ToolInterruptHandler {
    ToolInterruptHandler::new(
        Rc::new(Big(big_text())),
        PerceptionAligner::default(),
        session.clone(),
        StepClock::new(1_700_000_000_000.0, 1.0),
        ToolInterruptOptions {
            artifact_store: Some(store.clone() as Rc<dyn ArtifactStore>),
            externalize_threshold: 4096,
        },
    )
}

fn parsed(result: &Option<String>) -> Value {
    serde_json::from_str(result.as_deref().unwrap_or("null")).unwrap_or(Value::Null)
}

/// A look-back handler whose `big` output was externalised: the store,
/// the handler and the output's handle.
fn big_stored() -> (Rc<MemoryArtifactStore>, ToolInterruptHandler, String) {
    let session = Rc::new(RefCell::new(session("look")));
    let store = Rc::new(MemoryArtifactStore::new(StepClock::new(0.0, 1.0)));
    let handler = handler(&session, &store).with_look_back();
    let stored = block_on(handler.call("big", json!({}), None)).unwrap();
    let handle = stored.artifact.expect("externalised").artifact_id;
    (store, handler, handle)
}

#[test]
fn read_artifact_pages_an_externalised_output_whole_on_character_boundaries() {
    let (_, handler, handle) = big_stored();
    let mut text = String::new();
    let mut offset = Value::from(0);
    let mut pages = 0;
    while let Some(at) = offset.as_u64() {
        let event = block_on(handler.call(
            READ_ARTIFACT,
            json!({"handle": format!("[{handle}]"), "offset": at, "length": 1000}),
            None,
        ))
        .unwrap();
        assert_eq!(event.kind, ToolEventKind::Success, "{event:?}");
        assert!(
            event.artifact.is_none(),
            "a page is never externalised again"
        );
        let page = parsed(&event.result);
        assert_eq!(page["totalBytes"], big_text().len());
        text.push_str(page["text"].as_str().unwrap());
        offset = page["nextOffset"].clone();
        pages += 1;
    }
    assert_eq!(text, big_text());
    assert!(pages > big_text().len() / 1000);
    // An unknown handle, a bad offset, a binary output: errors the model reads.
    for arguments in [
        json!({"handle": "0".repeat(64)}),
        json!({"handle": handle, "offset": -1}),
        json!({"offset": 0}),
    ] {
        let event = block_on(handler.call(READ_ARTIFACT, arguments, None)).unwrap();
        assert_eq!(event.kind, ToolEventKind::Error, "{event:?}");
    }
    let png = block_on(handler.call("png", json!({}), None)).unwrap();
    let png = png.artifact.expect("binary is stored").artifact_id;
    let event = block_on(handler.call(READ_ARTIFACT, json!({"handle": png}), None)).unwrap();
    assert!(event.error.unwrap().contains("image/png"));
}

#[test]
fn a_tampered_artifact_is_not_read() {
    let (store, handler, handle) = big_stored();
    let mut snapshot = store.snapshot();
    snapshot[0].content[0] ^= 0x20;
    store.restore(snapshot);
    let event = block_on(handler.call(READ_ARTIFACT, json!({"handle": handle}), None)).unwrap();
    assert_eq!(event.kind, ToolEventKind::Error, "{event:?}");
}

#[test]
fn read_artifact_reads_a_cut_question_whole_by_its_event_id() {
    let session = Rc::new(RefCell::new(session("look")));
    let question: String = (0..800)
        .map(|i| format!("clause {i}: über Straße ✓; "))
        .collect();
    session
        .borrow_mut()
        .record("user_input", json!({ "content": question }), None)
        .unwrap();
    let options = context_compiler::CompileOptions::new("You are helpful.");
    let ctx = block_on(zoned().compile_with(&mut session.borrow_mut(), 600, &options)).unwrap();
    let shown = ctx.to_messages().last().unwrap().content.clone();
    let id = shown
        .split("in session event ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the cut question names its event")
        .to_string();
    let store = Rc::new(MemoryArtifactStore::new(StepClock::new(0.0, 1.0)));
    let handler = handler(&session, &store).with_look_back();
    let mut text = String::new();
    let mut offset = Value::from(0);
    while let Some(at) = offset.as_u64() {
        let event = block_on(handler.call(
            READ_ARTIFACT,
            json!({"handle": id, "offset": at, "length": 4000}),
            None,
        ))
        .unwrap();
        assert_eq!(event.kind, ToolEventKind::Success, "{event:?}");
        let page = parsed(&event.result);
        text.push_str(page["text"].as_str().unwrap());
        offset = page["nextOffset"].clone();
    }
    assert_eq!(text, question);
}

#[test]
fn an_externalised_output_is_found_by_any_part_also_after_a_reload() {
    let (store, handler, handle) = big_stored();
    let session = handler.session().clone();
    let found = |s: &Session| {
        s.search("577", 3)
            .first()
            .map(|h| (h.kind.clone(), h.position))
    };
    // The handler indexed the whole output as it stored it.
    let live = found(&session.borrow()).expect("found by a line far past its summary");
    assert_eq!(live.0, "tool_success");
    // A session loaded elsewhere has only the summary until it reads the store.
    let loaded = Session::import_json(
        &session.borrow().export_json(),
        StepClock::new(1_800_000_000_000.0, 1.0),
        Rc::new(context_compiler::DefaultTokenCounter),
        7,
    )
    .unwrap();
    assert_eq!(loaded.unindexed_outputs().len(), 1);
    assert_eq!(found(&loaded), None);
    assert_eq!(block_on(loaded.index_stored_outputs(store.as_ref())), 1);
    assert!(loaded.unindexed_outputs().is_empty());
    assert_eq!(found(&loaded), Some(live));
    // Each once; a store without the output leaves it out, not broken.
    assert_eq!(block_on(loaded.index_stored_outputs(store.as_ref())), 0);
    let empty = MemoryArtifactStore::new(StepClock::new(0.0, 1.0));
    let other = Session::import_json(
        &session.borrow().export_json(),
        StepClock::new(1_800_000_000_000.0, 1.0),
        Rc::new(context_compiler::DefaultTokenCounter),
        7,
    )
    .unwrap();
    assert_eq!(block_on(other.index_stored_outputs(&empty)), 0);
    assert!(other.unindexed_outputs().is_empty());
    assert!(block_on(store.exists(&handle)).unwrap());
}

/// Calls `search_history` for the dentist, then answers with what it read.
struct Asker {
    offered: RefCell<Vec<String>>,
}

#[async_trait(?Send)]
impl Model for Asker {
    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply> {
        *self.offered.borrow_mut() = request.tools.iter().map(|t| t.name.clone()).collect();
        if request.step == 0 {
            return ModelReply::from_json(&json!({"toolCalls": [
                {"name": SEARCH_HISTORY, "arguments": {"query": "dentist clinic"}}
            ]}));
        }
        let seen = request
            .context
            .to_messages()
            .iter()
            .any(|m| m.content.contains("Alfama"));
        Ok(ModelReply::text(if seen { "Alfama" } else { "unknown" }))
    }
}

fn zoned() -> ContextCompiler {
    ContextCompiler::with_layout(
        vec![
            Rc::new(HistorySelector::new(0, 4)) as Rc<dyn Processor>,
            Rc::new(Compactor::default()),
        ],
        Layout::Zoned,
    )
}

#[test]
fn a_run_offering_the_look_back_tools_records_their_calls() {
    let session = Rc::new(RefCell::new(session("look")));
    session
        .borrow_mut()
        .record(
            "user_input",
            json!({"content": "My dentist appointment is at the Alfama clinic."}),
            None,
        )
        .unwrap();
    for i in 0..30 {
        session
            .borrow_mut()
            .record(
                "assistant_output",
                json!({"content": format!("chatter {i}")}),
                None,
            )
            .unwrap();
    }
    let store = Rc::new(MemoryArtifactStore::new(StepClock::new(0.0, 1.0)));
    let model = Rc::new(Asker {
        offered: RefCell::new(Vec::new()),
    });
    let agent = Agent {
        session: session.clone(),
        compiler: zoned(),
        model: model.clone(),
        tools: Some(Rc::new(handler(&session, &store))),
        guard: None,
    };
    let mut options = RunOptions::new(4_000, "You are helpful.");
    options.look_back = true;
    let result = block_on(run_compiled(
        "Which clinic is my dentist at?",
        &agent,
        &options,
    ))
    .unwrap();
    assert_eq!(result.result, "Alfama");
    assert_eq!(*model.offered.borrow(), [SEARCH_HISTORY, READ_ARTIFACT]);
    let events = &result.steps[0].tool_events;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, ToolEventKind::Success);
    let found = parsed(&events[0].result);
    let results = found["results"].as_array().unwrap();
    assert!(
        results
            .iter()
            .any(|r| r["text"].as_str().unwrap().contains("Alfama")),
        "{found}"
    );
    assert!(found["results"][0]["time"]
        .as_str()
        .unwrap()
        .ends_with("UTC"));
    // Recorded like any other call; not indexed again (a search finds the
    // turn, never its own earlier results).
    let kinds: Vec<String> = session
        .borrow()
        .event_log()
        .events()
        .iter()
        .map(|e| e.kind.clone())
        .collect();
    assert!(kinds.ends_with(&[
        "tool_call".into(),
        "tool_success".into(),
        "assistant_output".into()
    ]));
    let hits = session.borrow().search("Alfama", 10);
    assert!(
        hits.iter()
            .all(|h| h.kind != "tool_success" && h.kind != "tool_call"),
        "{hits:?}"
    );

    // Without a tool handler the run cannot record them.
    let bare = Agent {
        tools: None,
        ..agent
    };
    let error = block_on(run_compiled("again", &bare, &options)).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidArgument);
}

proptest! {
    #[test]
    fn pages_cover_any_text_exactly(text in "\\PC{0,300}", length in 1usize..40, start in 0usize..10) {
        let start = page(&text, start, 0).0.min(text.len());
        let mut at = start;
        let mut joined = String::new();
        while at < text.len() {
            let (from, to) = page(&text, at, length);
            prop_assert_eq!(from, at);
            prop_assert!(to > from);
            joined.push_str(&text[from..to]);
            at = to;
        }
        prop_assert_eq!(joined, &text[start..]);
    }
}

const GITHUB_TOKEN: &str = "ghp_R8x2Lq9ZtW4mN7vB1cK3pD6fH0jS5aYeU2oI";
const AWS_KEY: &str = "AKIAQWERTYUIOPASDFGH";
const DB_PASSWORD: &str = "Xy9!wq83_passw0rdzz";

/// `environ`: NUL-separated text holding secrets.
fn environ() -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..40 {
        out.extend_from_slice(format!("VAR_{i}=ordinary value number {i}").as_bytes());
        out.push(0);
        if i % 10 == 3 {
            out.extend_from_slice(format!("GITHUB_TOKEN={GITHUB_TOKEN}").as_bytes());
            out.push(0);
            out.extend_from_slice(format!("AWS_ACCESS_KEY_ID={AWS_KEY}").as_bytes());
            out.push(0);
            out.extend_from_slice(
                format!("DATABASE_URL=postgres://app:{DB_PASSWORD}@db:5432/app").as_bytes(),
            );
            out.push(0);
        }
    }
    out
}

/// Whether `text` holds any 8-byte run of a secret's body.
fn leaks(text: &str) -> Option<&'static str> {
    [GITHUB_TOKEN, AWS_KEY, DB_PASSWORD]
        .into_iter()
        .find(|secret| (0..=secret.len() - 8).any(|at| text.contains(&secret[at..at + 8])))
}

/// Text with NUL separators is text: redacted before it is stored, and no
/// page `read_artifact` returns, from any offset, holds a piece of a
/// secret (a page once started four bytes into a token and returned its
/// body).
#[test]
fn no_page_from_any_offset_reads_back_a_secret() {
    let session = Rc::new(RefCell::new(session("environ")));
    let store = Rc::new(MemoryArtifactStore::new(StepClock::new(0.0, 1.0)));
    let handler = ToolInterruptHandler::new(
        Rc::new(common::FixedBridge(|| ToolOutput::Bytes(environ()))),
        PerceptionAligner::default(),
        session.clone(),
        StepClock::new(1_700_000_000_000.0, 1.0),
        ToolInterruptOptions {
            artifact_store: Some(store.clone() as Rc<dyn ArtifactStore>),
            externalize_threshold: 256,
        },
    )
    .with_look_back();
    let stored = block_on(handler.call("environ", json!({}), None)).unwrap();
    assert_eq!(stored.kind, ToolEventKind::Success);
    let handle = stored.artifact.expect("externalised").artifact_id;
    let bytes = block_on(store.retrieve(&handle)).unwrap().unwrap();
    let kept = String::from_utf8(bytes).expect("stored as text");
    assert!(kept.contains('\0'), "the separators are kept");
    assert_eq!(leaks(&kept), None, "redacted before it was stored");
    assert!(kept.contains("VAR_39=ordinary value number 39"));
    let total = kept.len();
    for length in [7, 64] {
        for offset in 0..total {
            let event = block_on(handler.call(
                READ_ARTIFACT,
                json!({"handle": handle, "offset": offset, "length": length}),
                None,
            ))
            .unwrap();
            assert_eq!(event.kind, ToolEventKind::Success, "{event:?}");
            let page = parsed(&event.result);
            assert_eq!(
                page["totalBytes"], total,
                "offsets are in the redacted text"
            );
            let text = page["text"].as_str().unwrap();
            assert_eq!(
                leaks(text),
                None,
                "offset {offset}, length {length}: {text:?}"
            );
        }
    }
    // Nor do the events: the session only ever held redacted text.
    let log = session.borrow().export_json();
    assert_eq!(leaks(&log), None);
}

/// A store shared by many conversations: a session reads back only what
/// its own events name; another session's handle is as unknown as a
/// made-up one, whichever session stored the bytes first.
#[test]
fn read_artifact_reads_only_the_sessions_own_artifacts() {
    let store = Rc::new(MemoryArtifactStore::new(StepClock::new(0.0, 1.0)));
    let a = Rc::new(RefCell::new(session("a")));
    let b = Rc::new(RefCell::new(session("b")));
    let reader_a = handler(&a, &store).with_look_back();
    let reader_b = handler(&b, &store).with_look_back();
    // B's private output, stored in the shared store.
    let private = block_on(store.store(
        b"B's payroll export: salary figures",
        "tool:export",
        context_compiler::artifacts::StoreOptions {
            session_id: Some("b".into()),
            ..Default::default()
        },
    ))
    .unwrap()
    .artifact_id;
    b.borrow_mut()
        .record(
            "artifact_stored",
            json!({"handle": private, "source": "tool:export", "size_bytes": 34}),
            None,
        )
        .unwrap();
    let unknown =
        block_on(reader_a.call(READ_ARTIFACT, json!({"handle": "f".repeat(64)}), None)).unwrap();
    let foreign = block_on(reader_a.call(READ_ARTIFACT, json!({"handle": private}), None)).unwrap();
    assert_eq!(foreign.kind, ToolEventKind::Error);
    assert_eq!(
        foreign.error.as_deref().map(|e| e.replace(&private, "H")),
        unknown
            .error
            .as_deref()
            .map(|e| e.replace(&"f".repeat(64), "H")),
        "the same error as an unknown handle"
    );
    let own = block_on(reader_b.call(READ_ARTIFACT, json!({"handle": private}), None)).unwrap();
    assert_eq!(own.kind, ToolEventKind::Success, "{own:?}");
    // Both sessions store the same bytes: one copy, first stored by A; B
    // reads it too, as its own events name it.
    let shared = block_on(reader_a.call("big", json!({}), None)).unwrap();
    let handle = shared.artifact.unwrap().artifact_id;
    let again = block_on(reader_b.call("big", json!({}), None)).unwrap();
    assert_eq!(again.artifact.unwrap().artifact_id, handle);
    for reader in [&reader_a, &reader_b] {
        let page =
            block_on(reader.call(READ_ARTIFACT, json!({"handle": handle, "length": 64}), None))
                .unwrap();
        assert_eq!(page.kind, ToolEventKind::Success, "{page:?}");
    }
}
