//! The seed's test_tool_events and test_tool_interrupt, ported, plus abort on
//! timeout, late results, concurrency, externalisation and redaction.
mod common;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use async_trait::async_trait;
use common::{block_on, session};
use context_compiler::artifacts::{ArtifactHandle, StoreOptions};
use context_compiler::clock::{Clock, IdRng, SystemClock};
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::tools::{
    AbortSignal, ToolBridge, ToolEvent, ToolEventInit, ToolEventKind, ToolFailure,
    ToolInterruptHandler, ToolInterruptOptions, ToolOutput,
};
use context_compiler::{ArtifactStore, Error, ErrorCode, MemoryArtifactStore, Result, Session};
use serde_json::{json, Value};

type Behaviour = Rc<
    dyn Fn(
        String,
        Value,
        AbortSignal,
    ) -> Pin<Box<dyn Future<Output = std::result::Result<ToolOutput, String>>>>,
>;

/// A bridge whose behaviour each test supplies; it remembers the signals it saw.
struct FnBridge {
    behaviour: Behaviour,
    signals: RefCell<Vec<AbortSignal>>,
}

#[async_trait(?Send)]
impl ToolBridge for FnBridge {
    async fn execute(
        &self,
        name: &str,
        arguments: &Value,
        signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        self.signals.borrow_mut().push(signal.clone());
        (self.behaviour)(name.to_string(), arguments.clone(), signal.clone())
            .await
            .map_err(ToolFailure::Failed)
    }
}

fn bridge(
    f: impl Fn(
            String,
            Value,
            AbortSignal,
        ) -> Pin<Box<dyn Future<Output = std::result::Result<ToolOutput, String>>>>
        + 'static,
) -> Rc<FnBridge> {
    Rc::new(FnBridge {
        behaviour: Rc::new(f),
        signals: RefCell::new(Vec::new()),
    })
}

fn handler_with(
    b: Rc<FnBridge>,
    store: Option<Rc<dyn ArtifactStore>>,
) -> (ToolInterruptHandler, Rc<RefCell<Session>>) {
    let s = Rc::new(RefCell::new(session("tools")));
    let h = ToolInterruptHandler::new(
        b,
        PerceptionAligner::default(),
        s.clone(),
        Rc::new(SystemClock),
        ToolInterruptOptions {
            artifact_store: store,
            externalize_threshold: 1024,
        },
    );
    (h, s)
}

fn kinds(s: &Rc<RefCell<Session>>) -> Vec<String> {
    s.borrow()
        .event_log()
        .events()
        .iter()
        .map(|e| e.kind.clone())
        .collect()
}

#[test]
fn tool_event_kinds_and_creation() {
    assert_eq!(ToolEventKind::Call.as_str(), "tool_call");
    assert_eq!(ToolEventKind::Success.as_str(), "tool_success");
    assert_eq!(ToolEventKind::Error.as_str(), "tool_error");
    assert_eq!(ToolEventKind::Timeout.as_str(), "tool_timeout");
    let mut rng = IdRng::new(1);
    let e = ToolEvent::create(
        ToolEventInit {
            kind: ToolEventKind::Success,
            tool_name: "echo".into(),
            arguments: Some(json!({"text": "hello"})),
            result: Some("hello".into()),
            error: None,
            latency_ms: 42.0,
            normalized: None,
        },
        &SystemClock,
        &mut rng,
    );
    assert_eq!(e.kind, ToolEventKind::Success);
    assert_eq!(e.result.as_deref(), Some("hello"));
    assert!(e.error.is_none());
    assert_eq!(e.latency_ms, 42.0);
    assert!(!e.event_id.is_empty());
    let e = ToolEvent::create(
        ToolEventInit {
            kind: ToolEventKind::Error,
            tool_name: "fail_tool".into(),
            arguments: None,
            result: None,
            error: Some("Connection refused".into()),
            latency_ms: 100.0,
            normalized: None,
        },
        &SystemClock,
        &mut rng,
    );
    assert!(e.result.is_none());
    assert_eq!(e.error.as_deref(), Some("Connection refused"));
    assert_eq!(e.arguments, json!({}));
}

#[test]
fn handler_success() {
    let (h, s) = handler_with(
        bridge(|_, args, _| {
            Box::pin(async move {
                Ok(ToolOutput::Text(format!(
                    "echo: {}",
                    args["text"].as_str().unwrap()
                )))
            })
        }),
        None,
    );
    let e = block_on(h.call("echo", json!({"text": "hello"}), None)).unwrap();
    assert_eq!(e.kind, ToolEventKind::Success);
    assert_eq!(e.result.as_deref(), Some("echo: hello"));
    assert!(e.error.is_none());
    assert!(e.latency_ms >= 0.0);
    assert_eq!(kinds(&s), ["tool_call", "tool_success"]);
    let session = s.borrow();
    let events = session.event_log().events();
    assert_eq!(events[1].data["call_id"], json!(events[0].event_id));
    assert_eq!(e.event_id, events[1].event_id);
}

#[test]
fn handler_error() {
    let (h, s) = handler_with(
        bridge(|_, _, _| Box::pin(async { Err("boom".to_string()) })),
        None,
    );
    let e = block_on(h.call("fail_tool", json!({}), None)).unwrap();
    assert_eq!(e.kind, ToolEventKind::Error);
    assert_eq!(e.error.as_deref(), Some("boom"));
    assert!(e.result.is_none());
    assert_eq!(kinds(&s), ["tool_call", "tool_error"]);
}

#[test]
fn handler_timeout_aborts_the_signal() {
    let b = bridge(|_, _, _| Box::pin(std::future::pending()));
    let (h, s) = handler_with(b.clone(), None);
    let e = block_on(h.call("slow_tool", json!({}), Some(50.0))).unwrap();
    assert_eq!(e.kind, ToolEventKind::Timeout);
    assert!(e.error.as_deref().unwrap().contains("timed out"));
    assert!(
        b.signals.borrow()[0].is_aborted(),
        "the bridge's signal was aborted"
    );
    assert_eq!(kinds(&s), ["tool_call", "tool_timeout"]);
}

#[test]
fn a_result_after_the_timeout_is_ignored() {
    let finished = Rc::new(Cell::new(false));
    let flag = finished.clone();
    let b = bridge(move |_, _, signal| {
        let flag = flag.clone();
        Box::pin(async move {
            SystemClock.sleep(150.0).await;
            flag.set(signal.is_aborted());
            Ok(ToolOutput::Text("too late".into()))
        })
    });
    let (h, s) = handler_with(b, None);
    let e = block_on(h.call("late", json!({}), Some(20.0))).unwrap();
    assert_eq!(e.kind, ToolEventKind::Timeout);
    block_on(SystemClock.sleep(200.0));
    assert_eq!(
        kinds(&s),
        ["tool_call", "tool_timeout"],
        "nothing recorded afterwards"
    );
    assert!(
        !finished.get(),
        "the abandoned bridge future was dropped, not run to completion"
    );
}

#[test]
fn invalid_timeouts_are_errors() {
    let (h, s) = handler_with(
        bridge(|_, _, _| Box::pin(async { Ok(ToolOutput::Text("x".into())) })),
        None,
    );
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(
            block_on(h.call("t", json!({}), Some(bad)))
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument
        );
    }
    assert!(kinds(&s).is_empty());
}

#[test]
fn large_outputs_are_redacted_then_externalised() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let b = bridge(|_, _, _| {
        Box::pin(async {
            Ok(ToolOutput::Text(format!(
                "token=ghp_{}\n{}",
                "a1B2".repeat(9),
                "log line ok\n".repeat(500)
            )))
        })
    });
    let (h, s) = handler_with(b, Some(store.clone()));
    let e = block_on(h.call("logs", json!({}), None)).unwrap();
    let handle = e.artifact.clone().expect("externalised");
    assert_eq!(kinds(&s), ["tool_call", "artifact_stored", "tool_success"]);
    let stored = block_on(store.retrieve(&handle.artifact_id))
        .unwrap()
        .unwrap();
    let stored = String::from_utf8(stored).unwrap();
    assert!(!stored.contains("ghp_"), "only redacted output is stored");
    assert!(!e.result.as_deref().unwrap().contains("ghp_"));
    let success = s.borrow().event_log().events()[2].clone();
    assert_eq!(success.data["handle"], json!(handle.artifact_id));
    assert!(
        success.data.get("result").is_none(),
        "the payload is not inline"
    );
}

#[test]
fn json_outputs_are_serialised_and_normalised() {
    let b = bridge(|_, _, _| {
        Box::pin(async {
            Ok(ToolOutput::Json(
                json!({"result": 42, "api_key": "k-123456789"}),
            ))
        })
    });
    let (h, _) = handler_with(b, None);
    let e = block_on(h.call("calc", json!({}), None)).unwrap();
    let n = e.normalized.unwrap();
    assert!(n.is_json);
    assert_eq!(n.data["api_key"], json!("[REDACTED:secret-key]"));
    assert!(!e.result.unwrap().contains("k-123456789"));
}

/// A store whose writes fail.
struct FailingStore;

#[async_trait(?Send)]
impl ArtifactStore for FailingStore {
    async fn store(&self, _: &[u8], _: &str, _: StoreOptions) -> Result<ArtifactHandle> {
        Err(Error::new(ErrorCode::StoreFailed, "disk full"))
    }
    async fn retrieve(&self, _: &str) -> Result<Option<Vec<u8>>> {
        Ok(None)
    }
    async fn exists(&self, _: &str) -> Result<bool> {
        Ok(false)
    }
    async fn list_handles(&self, _: Option<&str>) -> Result<Vec<ArtifactHandle>> {
        Ok(vec![])
    }
    async fn delete(&self, _: &str) -> Result<bool> {
        Ok(false)
    }
}

#[test]
fn a_failing_store_keeps_the_output_inline() {
    let b = bridge(|_, _, _| Box::pin(async { Ok(ToolOutput::Text("x".repeat(5000))) }));
    let (h, s) = handler_with(b, Some(Rc::new(FailingStore)));
    let e = block_on(h.call("big", json!({}), None)).unwrap();
    assert_eq!(e.kind, ToolEventKind::Success);
    assert!(e.artifact.is_none());
    let success = s.borrow().event_log().events()[1].clone();
    assert_eq!(success.data["result"].as_str().unwrap().len(), 5000);
    assert!(success.data["externalize_error"]
        .as_str()
        .unwrap()
        .contains("disk full"));
}

/// Polls futures together until all complete.
fn join_all<'a, T: 'a>(
    futures: Vec<Pin<Box<dyn Future<Output = T> + 'a>>>,
) -> impl Future<Output = Vec<T>> + 'a {
    let mut futures: Vec<Option<Pin<Box<dyn Future<Output = T> + 'a>>>> =
        futures.into_iter().map(Some).collect();
    let mut results: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(move |cx| {
        for (i, slot) in futures.iter_mut().enumerate() {
            if let Some(f) = slot {
                if let Poll::Ready(v) = f.as_mut().poll(cx) {
                    results[i] = Some(v);
                    *slot = None;
                }
            }
        }
        if futures.iter().all(Option::is_none) {
            Poll::Ready(results.iter_mut().map(|r| r.take().unwrap()).collect())
        } else {
            Poll::Pending
        }
    })
}

#[test]
fn concurrent_calls_keep_each_calls_events_in_order() {
    let b = bridge(|name, _, _| {
        Box::pin(async move {
            let delay: f64 = name.trim_start_matches("t").parse().unwrap();
            SystemClock.sleep(delay).await;
            if delay == 30.0 {
                Err("failed".into())
            } else {
                Ok(ToolOutput::Text(name))
            }
        })
    });
    let (h, s) = handler_with(b, None);
    let names: Vec<String> = [50, 10, 30, 5, 200]
        .iter()
        .map(|d| format!("t{d}"))
        .collect();
    let calls: Vec<Pin<Box<dyn Future<Output = Result<ToolEvent>> + '_>>> = names
        .iter()
        .map(|n| Box::pin(h.call(n, json!({}), Some(100.0))) as Pin<Box<dyn Future<Output = _>>>)
        .collect();
    let events = block_on(join_all(calls));
    let got: Vec<ToolEventKind> = events.iter().map(|e| e.as_ref().unwrap().kind).collect();
    assert_eq!(
        got,
        [
            ToolEventKind::Success,
            ToolEventKind::Success,
            ToolEventKind::Error,
            ToolEventKind::Success,
            ToolEventKind::Timeout
        ]
    );
    let session = s.borrow();
    let log = session.event_log().events();
    assert_eq!(log.len(), 10);
    for call in log.iter().filter(|e| e.kind == "tool_call") {
        let outcomes: Vec<&str> = log
            .iter()
            .filter(|e| e.data["call_id"] == json!(call.event_id))
            .map(|e| e.kind.as_str())
            .collect();
        assert_eq!(outcomes.len(), 1, "one outcome per call");
        let pos_call = log
            .iter()
            .position(|e| e.event_id == call.event_id)
            .unwrap();
        let pos_out = log
            .iter()
            .position(|e| e.data["call_id"] == json!(call.event_id))
            .unwrap();
        assert!(
            pos_call < pos_out,
            "the call is recorded before its outcome"
        );
    }
}

/// A bridge that enforces the deadline itself, as a wasmtime host does.
struct DeadlineBridge;

#[async_trait(?Send)]
impl ToolBridge for DeadlineBridge {
    async fn execute(
        &self,
        name: &str,
        _arguments: &Value,
        _signal: &AbortSignal,
        deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        Err(ToolFailure::TimedOut(format!(
            "host stopped {name} after {deadline_ms} ms"
        )))
    }
}

#[test]
fn a_timeout_reported_by_the_bridge_is_a_timeout_event() {
    let s = Rc::new(RefCell::new(session("tools")));
    let h = ToolInterruptHandler::new(
        Rc::new(DeadlineBridge),
        PerceptionAligner::default(),
        s.clone(),
        Rc::new(SystemClock),
        ToolInterruptOptions::default(),
    );
    let event = block_on(h.call("slow", json!({}), Some(250.0))).unwrap();
    assert_eq!(event.kind, ToolEventKind::Timeout);
    assert_eq!(
        event.error.as_deref(),
        Some("host stopped slow after 250 ms")
    );
    assert_eq!(kinds(&s), vec!["tool_call", "tool_timeout"]);
}

#[test]
fn secrets_in_errors_and_arguments_never_reach_the_session() {
    let token = format!("ghp_{}", "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz123");
    let seen = Rc::new(RefCell::new(Value::Null));
    let seen_in_tool = seen.clone();
    let leaked = token.clone();
    let (h, s) = handler_with(
        bridge(move |_, args, _| {
            *seen_in_tool.borrow_mut() = args;
            let message = format!("401 for token {leaked}");
            Box::pin(async move { Err(message) })
        }),
        None,
    );
    let args = json!({"repo": "o/r", "auth": {"password": "hunter2hunter2"}, "header": format!("Bearer {token}")});
    let e = block_on(h.call("gh", args.clone(), None)).unwrap();
    assert_eq!(*seen.borrow(), args, "the tool gets its arguments as given");
    assert_eq!(e.kind, ToolEventKind::Error);
    let exported = s.borrow().export_json();
    for text in [
        exported.as_str(),
        e.error.as_deref().unwrap(),
        &e.arguments.to_string(),
    ] {
        assert!(!text.contains(&token), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }
    assert!(exported.contains("o/r"));
    assert!(e.error.unwrap().starts_with("401 for token [REDACTED:"));
}

#[test]
fn a_tool_finishing_while_the_session_is_read_is_recorded_not_refused() {
    let (h, s) = handler_with(
        bridge(|_, _, _| Box::pin(async { Ok(ToolOutput::Text("done".into())) })),
        None,
    );
    let e = {
        // A running compile holds the session for reading.
        let view = s.borrow();
        let e = block_on(h.call("t", json!({}), None)).unwrap();
        assert_eq!(view.event_log().len(), 0, "the reader's view does not move");
        assert_eq!(view.event_log().all_events().len(), 2);
        e
    };
    assert_eq!(e.kind, ToolEventKind::Success);
    s.borrow_mut().flush();
    assert_eq!(kinds(&s), ["tool_call", "tool_success"]);
    let log = s.borrow();
    assert_eq!(log.event_log().events()[1].event_id, e.event_id);
    assert_eq!(log.event_log().pending_len(), 0);
}

/// Bytes from a tool: UTF-8 text is normalised as text; anything else goes
/// to the artifact store whole, and only a line saying what and where
/// reaches the session (never the bytes, never base64).
#[test]
fn byte_outputs_are_text_or_stored_artifacts() {
    let png: Vec<u8> = [
        b"\x89PNG\r\n\x1a\n".as_slice(),
        &[0, 1, 2, 255, 254, 0, 7].repeat(300),
    ]
    .concat();
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let image = png.clone();
    let b = bridge(move |name, _, _| {
        let image = image.clone();
        Box::pin(async move {
            Ok(ToolOutput::Bytes(if name == "read_text" {
                b"password=hunter22 and some text".to_vec()
            } else {
                image
            }))
        })
    });
    let (h, s) = handler_with(b.clone(), Some(store.clone()));
    let text = block_on(h.call("read_text", json!({}), None)).unwrap();
    assert_eq!(text.kind, ToolEventKind::Success);
    assert!(text.result.as_deref().unwrap().contains("some text"));
    assert!(
        !text.result.as_deref().unwrap().contains("hunter22"),
        "redacted as text"
    );
    let shot = block_on(h.call("screenshot", json!({}), None)).unwrap();
    assert_eq!(shot.kind, ToolEventKind::Success);
    let handle = shot.artifact.clone().expect("stored");
    assert_eq!(handle.mime_type, "image/png");
    assert!(
        handle.summary.starts_with("binary content"),
        "{}",
        handle.summary
    );
    assert_eq!(
        block_on(store.retrieve(&handle.artifact_id))
            .unwrap()
            .unwrap(),
        png
    );
    let line = shot.result.as_deref().unwrap();
    assert!(
        line.starts_with("[binary output: ") && line.contains(&handle.artifact_id),
        "{line}"
    );
    let recorded = s
        .borrow()
        .event_log()
        .events()
        .last()
        .unwrap()
        .data
        .to_string();
    assert!(recorded.len() < 600, "no bytes in the session: {recorded}");
    // Without a store the line says they were not kept.
    let (bare, _) = handler_with(b, None);
    let lost = block_on(bare.call("screenshot", json!({}), None)).unwrap();
    assert!(lost.result.as_deref().unwrap().contains("not kept"));
}
