//! Calls that wait for a person (src/session/approvals.rs,
//! src/runner/approval.rs): a run stops with them pending, a run in another
//! "process" (a session loaded from a store) decides them and goes on;
//! rejections reach the model as the call's outcome, edits run and render
//! with the edited arguments, bad decisions are refused before anything is
//! recorded, and two processes deciding one call answer it once.
mod common;

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, StepClock};
use context_compiler::clock::IdRng;
use context_compiler::kv::{KvArtifactStore, KvStoreOptions, MemoryKv};
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::runner::{
    mcp, resume_compiled, run_compiled, Agent, ApprovalPolicy, Model, ModelReply, ModelRequest,
    RequestedToolCall, RunOptions, RunResult, SessionSync, StopReason, ToolSpec,
};
use context_compiler::session::{
    sync_session, ApprovalDecision, SessionEnv, SessionStore, SyncOptions,
};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::tools::{
    AbortSignal, ToolBridge, ToolFailure, ToolInterruptHandler, ToolInterruptOptions, ToolOutput,
};
use context_compiler::working_context::checker::check_request;
use context_compiler::{ContextCompiler, Error, ErrorCode, ProviderFormat, Result, Session};
use serde_json::{json, Value};

/// A model that asks for `calls` on its first step (a whole reply when it
/// is an object) and then answers,
/// keeping every request in every format (each checked by `check_request`).
struct Scripted {
    calls: Value,
    requests: RefCell<Vec<Value>>,
}

impl Scripted {
    /// The newest request, as OpenAI's messages.
    fn last_request(&self) -> Value {
        self.requests
            .borrow()
            .last()
            .cloned()
            .unwrap_or(Value::Null)
    }
}

#[async_trait(?Send)]
impl Model for Scripted {
    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply> {
        for format in ProviderFormat::ALL {
            let rendered = request.context.to_provider_messages(format);
            let broken = check_request(&rendered, format);
            assert!(
                broken.is_empty(),
                "{}: {broken:?}\n{rendered}",
                format.as_str()
            );
        }
        let openai = request.context.to_provider_messages(ProviderFormat::OpenAi);
        let first = self.requests.borrow().is_empty() && self.calls != json!([]);
        self.requests.borrow_mut().push(openai);
        if first && self.calls.is_object() {
            ModelReply::from_json(&self.calls)
        } else if first {
            ModelReply::from_json(&json!({ "content": "", "toolCalls": self.calls }))
        } else {
            Ok(ModelReply::text("Done."))
        }
    }
}

/// Tools that answer with their arguments and remember each call.
#[derive(Default)]
struct Echo {
    ran: RefCell<Vec<(String, Value)>>,
}

#[async_trait(?Send)]
impl ToolBridge for Echo {
    async fn execute(
        &self,
        name: &str,
        arguments: &Value,
        _signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        self.ran
            .borrow_mut()
            .push((name.to_string(), arguments.clone()));
        Ok(ToolOutput::Json(json!({ "ok": name, "args": arguments })))
    }
}

struct Process {
    agent: Agent,
    model: Rc<Scripted>,
    tools: Rc<Echo>,
    session: Rc<RefCell<Session>>,
}

fn process(session: Session, calls: Value) -> Process {
    let session = Rc::new(RefCell::new(session));
    let tools = Rc::new(Echo::default());
    let clock = StepClock::new(1_700_000_000_000.0, 1.0);
    let handler = ToolInterruptHandler::new(
        tools.clone(),
        PerceptionAligner::default(),
        session.clone(),
        clock,
        ToolInterruptOptions::default(),
    );
    let model = Rc::new(Scripted {
        calls,
        requests: RefCell::new(Vec::new()),
    });
    Process {
        agent: Agent {
            session: session.clone(),
            compiler: ContextCompiler::recommended(None, None),
            model: model.clone(),
            tools: Some(Rc::new(handler)),
            guard: None,
        },
        model,
        tools,
        session,
    }
}

fn env(seed: u64) -> SessionEnv {
    SessionEnv {
        clock: StepClock::new(1_700_000_000_000.0 + seed as f64 * 1000.0, 1.0),
        counter: Rc::new(DefaultTokenCounter),
        seed,
    }
}

fn options() -> RunOptions {
    let mut o = RunOptions::new(4000, "You edit files.");
    let mut write = ToolSpec::new("write_file", "Writes a file.");
    write.needs_approval = true;
    o.tools = vec![write, ToolSpec::new("read_file", "Reads a file.")];
    o
}

fn two_calls() -> Value {
    json!([
        {"id": "call_w", "name": "write_file", "arguments": {"path": "a.txt", "text": "hi"}},
        {"id": "call_r", "name": "read_file", "arguments": {"path": "b.txt"}},
    ])
}

fn decide(call_id: &str, decision: Value) -> RunOptions {
    let mut o = options();
    o.approvals = vec![(
        call_id.to_string(),
        ApprovalDecision::from_json(&decision, "decision").unwrap(),
    )];
    o
}

/// The tools `p`'s bridge ran, in order.
fn ran_tools(p: &Process) -> Vec<String> {
    p.tools
        .ran
        .borrow()
        .iter()
        .map(|(n, _)| n.clone())
        .collect()
}

/// How many events of `kind` the session holds.
fn count(session: &RefCell<Session>, kind: &str) -> usize {
    kinds(session).iter().filter(|k| *k == kind).count()
}

fn kinds(session: &RefCell<Session>) -> Vec<String> {
    let s = session.borrow();
    s.event_log()
        .events()
        .iter()
        .map(|e| e.kind.clone())
        .collect()
}

/// The tool messages of an OpenAI request answering `call_id`.
fn answers<'a>(request: &'a Value, call_id: &str) -> Vec<&'a Value> {
    request
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .collect()
}

/// The arguments the assistant messages of an OpenAI request give `call_id`.
fn sent_arguments(request: &Value, call_id: &str) -> Option<Value> {
    request.as_array()?.iter().find_map(|m| {
        m["tool_calls"].as_array()?.iter().find_map(|c| {
            (c["id"] == call_id).then(|| {
                serde_json::from_str(c["function"]["arguments"].as_str().unwrap_or("null"))
                    .unwrap_or(Value::Null)
            })
        })
    })
}

fn paused() -> (Process, RunResult) {
    started(two_calls())
}

/// A run whose model first asks for `calls`, under the default options.
fn started(calls: Value) -> (Process, RunResult) {
    let p = process(env(1).session("s", Vec::new()).unwrap(), calls);
    let result = block_on(run_compiled("Write a.txt", &p.agent, &options())).unwrap();
    (p, result)
}

#[test]
fn a_run_stops_with_the_calls_that_wait_and_runs_the_others() {
    let (p, result) = paused();
    assert_eq!(result.stop_reason, StopReason::Approval);
    assert_eq!(result.pending.len(), 1);
    assert_eq!(result.pending[0].call_id, "call_w");
    assert_eq!(result.pending[0].name, "write_file");
    assert_eq!(
        result.pending[0].arguments,
        json!({"path": "a.txt", "text": "hi"})
    );
    let ran = ran_tools(&p);
    assert_eq!(ran, vec!["read_file"]);
    assert!(kinds(&p.session).contains(&"approval_requested".to_string()));
    // The waiting call is in no request: it has no outcome yet.
    let ctx = block_on(p.agent.compiler.compile_with(
        &mut p.session.borrow_mut(),
        4000,
        &options().compile,
    ))
    .unwrap();
    let request = ctx.to_provider_messages(ProviderFormat::OpenAi);
    assert!(sent_arguments(&request, "call_w").is_none(), "{request}");
    assert_eq!(answers(&request, "call_r").len(), 1);
    for format in ProviderFormat::ALL {
        assert!(check_request(&ctx.to_provider_messages(format), format).is_empty());
    }
    assert_eq!(p.session.borrow().event_log().pending_approvals().len(), 1);
}

#[test]
fn another_process_resumes_with_an_edit_that_runs_and_renders_edited() {
    let (p, _) = paused();
    let store = KvArtifactStore::new(
        MemoryKv::new(),
        StepClock::new(1.0, 1.0),
        KvStoreOptions::default(),
    )
    .unwrap();
    block_on(store.save_session(p.session.as_ref())).unwrap();
    drop(p);
    // Days later, elsewhere: nothing but the stored session holds the pause.
    let loaded = block_on(store.load_session("s", env(2))).unwrap().unwrap();
    let q = process(loaded, json!([]));
    let edited = json!({"path": "a.txt", "text": "hello"});
    let result = block_on(resume_compiled(
        &q.agent,
        &decide("call_w", json!({"approve": true, "args": edited})),
    ))
    .unwrap();
    assert_eq!(result.stop_reason, StopReason::Answered);
    assert_eq!(result.result, "Done.");
    assert_eq!(
        q.tools.ran.borrow().as_slice(),
        &[("write_file".to_string(), edited.clone())]
    );
    assert_eq!(result.decided.len(), 1);
    let request = &q.model.requests.borrow()[0];
    assert_eq!(sent_arguments(request, "call_w"), Some(edited.clone()));
    assert_eq!(answers(request, "call_w").len(), 1);
    let s = q.session.borrow();
    let decision = s
        .event_log()
        .events()
        .iter()
        .find(|e| e.kind == "approval_decided")
        .unwrap();
    assert_eq!(decision.data["arguments"], edited);
    assert_eq!(
        decision.data["original_arguments"],
        json!({"path": "a.txt", "text": "hi"})
    );
    drop(s);
    // No input was recorded by the resume.
    assert_eq!(count(&q.session, "user_input"), 1);
}

#[test]
fn a_rejection_reaches_the_model_as_the_calls_outcome_redacted() {
    let (p, _) = paused();
    let reason = "not with token ghp_0123456789abcdefghij0123456789abcdef";
    let result = block_on(resume_compiled(
        &p.agent,
        &decide("call_w", json!({"approve": false, "reason": reason})),
    ))
    .unwrap();
    assert_eq!(result.stop_reason, StopReason::Answered);
    let ran = ran_tools(&p);
    assert_eq!(ran, vec!["read_file"], "the rejected call did not run");
    let request = &p.model.requests.borrow()[1];
    let answer = answers(request, "call_w");
    assert_eq!(answer.len(), 1, "{request}");
    let text = answer[0]["content"].to_string();
    assert!(text.contains("rejected"), "{text}");
    assert!(!text.contains("ghp_0123456789"), "{text}");
    let export = serde_json::to_string(&p.session.borrow().event_log().events()).unwrap();
    assert!(!export.contains("ghp_0123456789"));
}

#[test]
fn bad_decisions_and_inputs_are_refused_before_anything_is_recorded() {
    let (p, _) = paused();
    let before = kinds(&p.session).len();
    let code = |r: Result<RunResult>| r.err().map(|e: Error| e.code());
    assert_eq!(
        code(block_on(resume_compiled(
            &p.agent,
            &decide("call_nope", json!({"approve": true}))
        ))),
        Some(ErrorCode::InvalidArgument)
    );
    assert_eq!(
        code(block_on(run_compiled(
            "Something else",
            &p.agent,
            &options()
        ))),
        Some(ErrorCode::InvalidArgument),
        "a new input while a call waits"
    );
    assert_eq!(
        code(block_on(run_compiled(
            "x",
            &p.agent,
            &decide("call_w", json!({"approve": true}))
        ))),
        Some(ErrorCode::InvalidArgument),
        "approvals with an input"
    );
    assert_eq!(kinds(&p.session).len(), before);
    block_on(resume_compiled(
        &p.agent,
        &decide("call_w", json!({"approve": true})),
    ))
    .unwrap();
    let after = kinds(&p.session).len();
    assert_eq!(
        code(block_on(resume_compiled(
            &p.agent,
            &decide("call_w", json!({"approve": false}))
        ))),
        Some(ErrorCode::InvalidArgument),
        "decided already"
    );
    assert_eq!(
        code(block_on(resume_compiled(&p.agent, &options()))),
        Some(ErrorCode::InvalidArgument),
        "nothing waits"
    );
    assert_eq!(kinds(&p.session).len(), after);
}

/// Asks about calls to `read_file` of `secret.txt`; fails on anything with
/// `"fail"`.
struct Policy;

#[async_trait(?Send)]
impl ApprovalPolicy for Policy {
    async fn needs_approval(&self, call: &RequestedToolCall) -> Result<bool> {
        let args = call.arguments.clone().unwrap_or_default();
        if args.get("fail").is_some() {
            return Err(Error::new(ErrorCode::HandlerFailed, "policy broke"));
        }
        Ok(args["path"] == "secret.txt")
    }
}

#[test]
fn a_policy_marks_calls_that_wait_and_a_failing_one_makes_them_wait() {
    let calls = json!([
        {"id": "c1", "name": "read_file", "arguments": {"path": "secret.txt"}},
        {"id": "c2", "name": "read_file", "arguments": {"path": "b.txt"}},
        {"id": "c3", "name": "read_file", "arguments": {"path": "c.txt", "fail": true}},
    ]);
    let p = process(env(3).session("s", Vec::new()).unwrap(), calls);
    let mut o = options();
    o.needs_approval = Some(Rc::new(Policy));
    let result = block_on(run_compiled("Read", &p.agent, &o)).unwrap();
    let waiting: Vec<&str> = result.pending.iter().map(|w| w.call_id.as_str()).collect();
    assert_eq!(waiting, vec!["c1", "c3"]);
    assert_eq!(p.tools.ran.borrow().len(), 1);
    // Deciding one of two: the run stops again, without calling the model.
    let mut o2 = decide("c1", json!({"approve": true}));
    o2.needs_approval = Some(Rc::new(Policy));
    let again = block_on(resume_compiled(&p.agent, &o2)).unwrap();
    assert_eq!(again.stop_reason, StopReason::Approval);
    assert_eq!(again.pending.len(), 1);
    assert_eq!(p.model.requests.borrow().len(), 1);
}

/// Syncs a session with a store.
struct StoreSync {
    store: Rc<dyn SessionStore>,
    session: Rc<RefCell<Session>>,
}

#[async_trait(?Send)]
impl SessionSync for StoreSync {
    async fn sync(&self) -> Result<()> {
        let clock = StepClock::new(1.0, 1.0);
        let mut rng = IdRng::new(9);
        sync_session(
            self.store.as_ref(),
            &self.session,
            clock.as_ref(),
            &mut rng,
            &SyncOptions::default(),
        )
        .await
        .map(|_| ())
    }
}

/// `p` rejects `call_w`, syncing with `store` before it runs anything.
fn reject_syncing_first(store: &Rc<dyn SessionStore>, p: &Process) -> RunResult {
    let mut o = decide("call_w", json!({"approve": false, "reason": "no"}));
    o.sync = Some(Rc::new(StoreSync {
        store: store.clone(),
        session: p.session.clone(),
    }));
    block_on(resume_compiled(&p.agent, &o)).unwrap()
}

fn sync(store: &Rc<dyn SessionStore>, session: &Rc<RefCell<Session>>) {
    let s = StoreSync {
        store: store.clone(),
        session: session.clone(),
    };
    block_on(s.sync()).unwrap();
}

#[test]
fn two_processes_deciding_one_call_answer_it_once_and_the_later_says_so() {
    let (p, _) = paused();
    let store = memory_store();
    sync(&store, &p.session);
    let a = load(&store, 4, json!([]));
    let b = load(&store, 5, json!([]));
    // A approves and syncs first; B rejects, syncing before it runs anything.
    block_on(resume_compiled(
        &a.agent,
        &decide("call_w", json!({"approve": true})),
    ))
    .unwrap();
    sync(&store, &a.session);
    let rb = reject_syncing_first(&store, &b);
    assert_eq!(rb.superseded.len(), 1, "{:?}", rb.superseded);
    assert_eq!(rb.superseded[0].call_id, "call_w");
    assert!(rb.decided.is_empty(), "B recorded no outcome for it");
    let request = &b.model.requests.borrow()[0];
    let answer = answers(request, "call_w");
    assert_eq!(answer.len(), 1, "{request}");
    assert!(
        answer[0]["content"].to_string().contains("ok"),
        "A's approval stands"
    );
    assert!(b.tools.ran.borrow().is_empty());
    // The superseded decision stays in the session, as recorded.
    assert_eq!(count(&b.session, "approval_decided"), 2);
}

#[test]
fn two_processes_that_both_ran_the_call_answer_it_once_after_sync() {
    let (p, _) = paused();
    let store = memory_store();
    sync(&store, &p.session);
    let a = process(
        block_on(store.load_session("s", env(6))).unwrap().unwrap(),
        two_calls(),
    );
    let b = process(
        block_on(store.load_session("s", env(7))).unwrap().unwrap(),
        two_calls(),
    );
    block_on(resume_compiled(
        &a.agent,
        &decide("call_w", json!({"approve": true})),
    ))
    .unwrap();
    block_on(resume_compiled(
        &b.agent,
        &decide("call_w", json!({"approve": false})),
    ))
    .unwrap();
    sync(&store, &a.session);
    sync(&store, &b.session);
    let ctx = block_on(b.agent.compiler.compile_with(
        &mut b.session.borrow_mut(),
        4000,
        &options().compile,
    ))
    .unwrap();
    for format in ProviderFormat::ALL {
        let request = ctx.to_provider_messages(format);
        assert!(
            check_request(&request, format).is_empty(),
            "{}: {request}",
            format.as_str()
        );
    }
    let request = ctx.to_provider_messages(ProviderFormat::OpenAi);
    let answer = answers(&request, "call_w");
    assert_eq!(answer.len(), 1, "{request}");
    assert!(
        !answer[0]["content"].to_string().contains("rejected"),
        "A's came first: {request}"
    );
}

/// Fails every sync.
struct BrokenSync;

#[async_trait(?Send)]
impl SessionSync for BrokenSync {
    async fn sync(&self) -> Result<()> {
        Err(Error::new(ErrorCode::HandlerFailed, "the store is down"))
    }
}

#[test]
fn a_decision_not_carried_out_is_carried_out_by_the_next_resume() {
    let (p, _) = paused();
    let mut o = decide(
        "call_w",
        json!({"approve": true, "args": {"path": "c.txt"}}),
    );
    o.sync = Some(Rc::new(BrokenSync));
    let failed = block_on(resume_compiled(&p.agent, &o)).err();
    assert_eq!(failed.map(|e| e.code()), Some(ErrorCode::HandlerFailed));
    assert_eq!(p.tools.ran.borrow().len(), 1, "only read_file ran");
    assert!(p
        .session
        .borrow()
        .event_log()
        .pending_approvals()
        .is_empty());
    // A new input would leave the decided call behind: refused.
    let refused = block_on(run_compiled("And now?", &p.agent, &options())).err();
    assert_eq!(refused.map(|e| e.code()), Some(ErrorCode::InvalidArgument));
    // A process that died after recording a decision: the same.
    let result = block_on(resume_compiled(&p.agent, &options())).unwrap();
    assert_eq!(result.stop_reason, StopReason::Answered);
    assert_eq!(
        p.tools.ran.borrow().last().cloned(),
        Some(("write_file".to_string(), json!({"path": "c.txt"})))
    );
    assert_eq!(result.decided.len(), 1);
}

/// A process that loaded session `s` from `store`, its model asking for
/// `calls` first.
fn load(store: &Rc<dyn SessionStore>, seed: u64, calls: Value) -> Process {
    let loaded = block_on(store.load_session("s", env(seed)))
        .unwrap()
        .unwrap();
    process(loaded, calls)
}

fn memory_store() -> Rc<dyn SessionStore> {
    Rc::new(
        KvArtifactStore::new(
            MemoryKv::new(),
            StepClock::new(1.0, 1.0),
            KvStoreOptions::default(),
        )
        .unwrap(),
    )
}

/// A provider that restarts at `call_0` every turn: process A approves the
/// first `call_0`, and the model's next `call_0` waits; process B (which
/// loaded the session before A saved) approved the first one too. After
/// the merge, B's decision is about the call B saw, which A decided first:
/// it is superseded, and never decides the later call no person saw.
#[test]
fn a_decision_merged_after_a_reused_id_waits_again_decides_only_the_call_it_saw() {
    let write =
        |path: &str| json!([{"id": "call_0", "name": "write_file", "arguments": {"path": path}}]);
    let p = process(env(1).session("s", Vec::new()).unwrap(), write("a.txt"));
    block_on(run_compiled("Write", &p.agent, &options())).unwrap();
    let store = memory_store();
    sync(&store, &p.session);
    let a = load(&store, 4, write("z.txt"));
    let b = load(&store, 5, json!([]));
    let ra = block_on(resume_compiled(
        &a.agent,
        &decide("call_0", json!({"approve": true})),
    ))
    .unwrap();
    assert_eq!(ra.stop_reason, StopReason::Approval);
    assert_eq!(ra.pending[0].arguments, json!({"path": "z.txt"}));
    sync(&store, &a.session);
    let mut ob = decide("call_0", json!({"approve": true}));
    ob.sync = Some(Rc::new(StoreSync {
        store: store.clone(),
        session: b.session.clone(),
    }));
    let rb = block_on(resume_compiled(&b.agent, &ob)).unwrap();
    assert!(
        b.tools.ran.borrow().is_empty(),
        "B ran {:?}, a call no person saw",
        b.tools.ran.borrow()
    );
    assert_eq!(rb.superseded.len(), 1, "{:?}", rb.superseded);
    assert_eq!(rb.stop_reason, StopReason::Approval);
    let pending = b.session.borrow().event_log().pending_approvals();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].arguments, json!({"path": "z.txt"}));
}

/// A provider that gives two calls of one reply the same id, both waiting:
/// both are pending (neither is silently left unanswered), each decision
/// decides the oldest still waiting, and every request answers each once.
#[test]
fn two_waiting_calls_of_one_reply_under_one_id_are_both_pending_and_both_decided() {
    let calls = json!([
        {"id": "call_0", "name": "write_file", "arguments": {"path": "a.txt"}},
        {"id": "call_0", "name": "write_file", "arguments": {"path": "b.txt"}},
    ]);
    let (p, result) = started(calls);
    let paths: Vec<&Value> = result
        .pending
        .iter()
        .map(|w| &w.arguments["path"])
        .collect();
    assert_eq!(paths, vec!["a.txt", "b.txt"], "{:?}", result.pending);
    let first = block_on(resume_compiled(
        &p.agent,
        &decide("call_0", json!({"approve": true})),
    ))
    .unwrap();
    assert_eq!(first.stop_reason, StopReason::Approval);
    assert_eq!(first.pending.len(), 1);
    assert_eq!(first.pending[0].arguments, json!({"path": "b.txt"}));
    let refused = block_on(run_compiled("And now?", &p.agent, &options())).err();
    assert_eq!(refused.map(|e| e.code()), Some(ErrorCode::InvalidArgument));
    let second = block_on(resume_compiled(
        &p.agent,
        &decide("call_0", json!({"approve": false, "reason": "not b"})),
    ))
    .unwrap();
    assert_eq!(second.stop_reason, StopReason::Answered);
    assert_eq!(
        p.tools.ran.borrow().as_slice(),
        &[("write_file".to_string(), json!({"path": "a.txt"}))]
    );
    let request = p.model.last_request();
    let outcomes = request
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    assert_eq!(outcomes, 2, "{request}");
}

/// Two calls of one reply under one id, the first waiting and the second
/// run at once: the outcome answers the call that ran, not the one that
/// waits; each request pairs every call with its own outcome.
#[test]
fn a_call_run_at_once_under_the_id_of_one_that_waits_answers_only_itself() {
    let calls = json!([
        {"id": "call_0", "name": "write_file", "arguments": {"path": "a.txt"}},
        {"id": "call_0", "name": "read_file", "arguments": {"path": "b.txt"}},
    ]);
    let (p, result) = started(calls);
    assert_eq!(result.stop_reason, StopReason::Approval);
    assert_eq!(result.pending.len(), 1, "{:?}", result.pending);
    assert_eq!(result.pending[0].name, "write_file");
    block_on(resume_compiled(
        &p.agent,
        &decide("call_0", json!({"approve": true})),
    ))
    .unwrap();
    let request = p.model.last_request();
    let messages = request.as_array().unwrap();
    // Each call's id is answered by an outcome of its own tool.
    for m in messages.iter().filter(|m| m["role"] == "assistant") {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            let answer = answers(&request, c["id"].as_str().unwrap());
            assert_eq!(answer.len(), 1, "{request}");
            let tool = c["function"]["name"].as_str().unwrap();
            let content = answer[0]["content"].to_string();
            assert!(content.contains(tool), "{tool} answered by {content}");
        }
    }
}

/// The session keeps a waiting call's arguments redacted: an approved call
/// whose arguments held a secret does not run with the placeholder in its
/// place (a password set to `[REDACTED:secret-key]`); it is refused, and
/// the model is told why.
#[test]
fn an_approved_call_whose_secret_the_session_does_not_keep_is_refused_not_run_redacted() {
    let calls = json!([
        {"id": "c1", "name": "write_file", "arguments": {"path": "a.txt", "password": "hunter2-horse"}},
    ]);
    let p = process(env(1).session("s", Vec::new()).unwrap(), calls);
    let paused = block_on(run_compiled("Write", &p.agent, &options())).unwrap();
    assert_eq!(paused.stop_reason, StopReason::Approval);
    let result = block_on(resume_compiled(
        &p.agent,
        &decide("c1", json!({"approve": true})),
    ))
    .unwrap();
    assert!(
        p.tools.ran.borrow().is_empty(),
        "ran with {:?}",
        p.tools.ran.borrow()
    );
    assert_eq!(result.decided.len(), 1);
    let error = result.decided[0].error.clone().unwrap_or_default();
    assert!(error.contains("secret"), "{error}");
    // An edit that brings a secret back cannot run it either.
    let calls = json!([{"id": "c2", "name": "write_file", "arguments": {"path": "b.txt"}}]);
    let q = process(env(2).session("s2", Vec::new()).unwrap(), calls);
    block_on(run_compiled("Write", &q.agent, &options())).unwrap();
    let edit =
        json!({"approve": true, "args": {"path": "b.txt", "api_key": "sk-live-0123456789abcdef"}});
    block_on(resume_compiled(&q.agent, &decide("c2", edit))).unwrap();
    assert!(
        q.tools.ran.borrow().is_empty(),
        "{:?}",
        q.tools.ran.borrow()
    );
    // A placeholder the model copied from a redacted output is no secret
    // lost: the call runs as the model gave it.
    let copied = json!({"path": "log.txt", "text": "token: [REDACTED:github-token]"});
    let calls = json!([{"id": "c3", "name": "write_file", "arguments": copied}]);
    let r = process(env(3).session("s3", Vec::new()).unwrap(), calls);
    block_on(run_compiled("Write", &r.agent, &options())).unwrap();
    block_on(resume_compiled(
        &r.agent,
        &decide("c3", json!({"approve": true})),
    ))
    .unwrap();
    assert_eq!(
        r.tools.ran.borrow().as_slice(),
        &[("write_file".to_string(), copied)]
    );
}

/// `orchestrate_compiled` over a run that stopped for approval: its
/// `CallToolResult` says which calls wait (in the text and as
/// `structuredContent.pending`, which the output schema declares), instead
/// of an empty answer that reads as done.
#[test]
fn an_orchestrated_run_that_stops_for_approval_says_which_calls_wait() {
    let (_, result) = paused();
    let out = mcp::tool_result(&result);
    let text = out["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("call_w") && text.contains("write_file"),
        "{out}"
    );
    let pending = &out["structuredContent"]["pending"];
    assert_eq!(pending[0]["call_id"], "call_w", "{out}");
    assert_eq!(pending[0]["name"], "write_file");
    let schema = &mcp::tool_definition()["outputSchema"]["properties"];
    assert!(schema.get("pending").is_some(), "{schema}");
}

/// A decided first and synced, and is still running the call (its outcome
/// not saved yet); B rejected it, syncs, and sees A's decision stand: B
/// does not run the call A is running (against its own person's
/// rejection), it says its decision was superseded.
#[test]
fn a_run_whose_decision_was_superseded_does_not_run_the_call_the_first_decider_runs() {
    let (p, _) = paused();
    let store = memory_store();
    sync(&store, &p.session);
    let a = load(&store, 4, json!([]));
    let b = load(&store, 5, json!([]));
    let approve = ApprovalDecision::from_json(&json!({"approve": true}), "d").unwrap();
    a.session
        .borrow_mut()
        .decide_approval("call_w", &approve)
        .unwrap();
    sync(&store, &a.session);
    let rb = reject_syncing_first(&store, &b);
    assert_eq!(rb.superseded.len(), 1, "{:?}", rb.superseded);
    assert!(
        b.tools.ran.borrow().is_empty(),
        "B ran {:?}",
        b.tools.ran.borrow()
    );
    assert!(rb.decided.is_empty(), "{:?}", rb.decided);
}

/// A reply with signed reasoning whose first call runs at once and whose
/// second waits: every request keeps the reply as the model gave it (the
/// reasoning first, the calls in its order), in every format.
#[test]
fn a_waiting_call_after_one_run_at_once_keeps_the_replys_order_and_reasoning() {
    let reply = json!({
        "content": "",
        "reasoning": {"format": "anthropic", "items": [
            {"type": "thinking", "thinking": "read, then write", "signature": "sig-1"}
        ]},
        "toolCalls": [
            {"id": "call_r", "name": "read_file", "arguments": {"path": "b.txt"}},
            {"id": "call_w", "name": "write_file", "arguments": {"path": "a.txt"}},
        ],
    });
    let p = process(env(1).session("s", Vec::new()).unwrap(), reply);
    let mut o = options();
    o.compile.format = Some(ProviderFormat::Anthropic);
    block_on(run_compiled("Go", &p.agent, &o)).unwrap();
    let mut o2 = decide("call_w", json!({"approve": true}));
    o2.compile.format = Some(ProviderFormat::Anthropic);
    block_on(resume_compiled(&p.agent, &o2)).unwrap();
    let ctx = block_on(p.agent.compiler.compile_with(
        &mut p.session.borrow_mut(),
        4000,
        &o2.compile,
    ))
    .unwrap();
    let request = ctx.to_provider_messages(ProviderFormat::Anthropic);
    let assistant = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .cloned()
        .unwrap();
    let blocks: Vec<String> = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            format!(
                "{} {}",
                b["type"].as_str().unwrap_or(""),
                b["id"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        blocks,
        vec!["thinking ", "tool_use call_r", "tool_use call_w"],
        "{request}"
    );
    // A reply whose calls all run at once, the first refused (a tool not
    // offered): one assistant message too.
    let reply = json!({"content": "", "toolCalls": [
        {"id": "c1", "name": "nope", "arguments": {}},
        {"id": "c2", "name": "read_file", "arguments": {"path": "b.txt"}},
        {"id": "c3", "name": "read_file", "arguments": {"path": "c.txt"}},
    ]});
    let q = process(env(2).session("s2", Vec::new()).unwrap(), reply);
    block_on(run_compiled("Go", &q.agent, &o)).unwrap();
    let request = q.model.last_request();
    let replies: Vec<usize> = request
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_calls"].as_array().map(Vec::len))
        .collect();
    assert_eq!(replies, vec![3], "{request}");
}

/// A look-back tool the host marks `needs_approval` in its specs waits too
/// (the run offers the library's own definition of it, keeping the mark).
#[test]
fn a_look_back_tool_marked_needs_approval_waits() {
    let calls = json!([{"id": "c1", "name": "search_history", "arguments": {"query": "disk"}}]);
    let p = process(env(1).session("s", Vec::new()).unwrap(), calls);
    let mut o = options();
    o.look_back = true;
    let mut search = ToolSpec::new("search_history", "Searches what left the window.");
    search.needs_approval = true;
    o.tools.push(search);
    let result = block_on(run_compiled("Find it", &p.agent, &o)).unwrap();
    assert_eq!(
        result.stop_reason,
        StopReason::Approval,
        "{:?}",
        result.steps
    );
    assert_eq!(result.pending[0].name, "search_history");
    let mut o2 = decide("c1", json!({"approve": true}));
    o2.look_back = true;
    o2.tools = o.tools.clone();
    let done = block_on(resume_compiled(&p.agent, &o2)).unwrap();
    assert_eq!(done.stop_reason, StopReason::Answered);
    assert_eq!(done.decided[0].tool_name, "search_history");
    assert!(done.decided[0].error.is_none(), "{:?}", done.decided[0]);
}

/// A resume whose run no longer offers the waiting call's tool refuses it
/// as any run refuses a call to a tool it does not offer.
#[test]
fn a_decided_call_to_a_tool_the_resuming_run_does_not_offer_is_refused() {
    let (p, _) = paused();
    let mut o = decide("call_w", json!({"approve": true}));
    o.tools.retain(|t| t.name != "write_file");
    let result = block_on(resume_compiled(&p.agent, &o)).unwrap();
    assert_eq!(ran_tools(&p), vec!["read_file"]);
    let error = result.decided[0].error.clone().unwrap_or_default();
    assert!(error.contains("unknown tool 'write_file'"), "{error}");
}
