//! The zoned layout of `ContextCompiler`: the four zones, tool calls paired
//! with their results in every provider format, a stable prefix, compaction
//! with hysteresis recorded in the session, and a cost that follows what is
//! selected, not the session's length.
mod common;

use std::cell::Cell;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, session, session_with, CountingCounter};
use context_compiler::clock::SystemClock;
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::working_context::DropAction;
use context_compiler::ArtifactStore;
use context_compiler::{
    ArtifactAttacher, CompactionLevel, Compactor, CompileOptions, ContextCompiler, HistorySelector,
    InMemoryBackend, Layout, Llm, LlmOptions, MemoryArtifactStore, MemoryPreloader, Processor,
    ProviderFormat, Session, WorkingContext,
};
use context_compiler::{Error, ErrorCode};
use serde_json::{json, Value};

fn zoned(processors: Vec<Rc<dyn Processor>>) -> ContextCompiler {
    ContextCompiler::with_layout(processors, Layout::Zoned)
}

fn options() -> CompileOptions {
    CompileOptions {
        system_prompt: "You are an SRE.".into(),
        policies: vec!["Never delete data".into()],
        tool_definitions: vec![json!({"name": "read_logs"}), json!({"name": "restart"})],
        user_preferences: Some(json!({"tone": "brief"})),
        goal: Some("Find why the nightly job fails".into()),
        state_digest: Some(json!({"phase": "diagnose"})),
        task_state: Some("Reading the logs".into()),
        ..Default::default()
    }
}

fn call(s: &mut Session, tool: &str, args: Value) -> String {
    s.record(
        "tool_call",
        json!({"tool_name": tool, "arguments": args}),
        None,
    )
    .unwrap()
    .event_id
    .clone()
}

fn ok(s: &mut Session, tool: &str, call_id: &str, result: &str) {
    s.record(
        "tool_success",
        json!({"tool": tool, "call_id": call_id, "result": result}),
        None,
    )
    .unwrap();
}

fn say(s: &mut Session, kind: &str, text: &str) {
    s.record(kind, json!({ "text": text }), None).unwrap();
}

/// A session with a first request, a sequential and a parallel tool step,
/// an error, an orphan result, a pending call and a newest request.
fn agent_session() -> Session {
    let mut s = session("zoned");
    say(&mut s, "user_input", "The nightly job failed. Why?");
    say(&mut s, "assistant_output", "Let me read the logs.");
    let a = call(&mut s, "read_logs", json!({"path": "/var/log/job.log"}));
    ok(&mut s, "read_logs", &a, "ERROR disk full on /data");
    let b = call(&mut s, "df", json!({}));
    let c = call(&mut s, "du", json!({"path": "/data"}));
    s.record(
        "tool_error",
        json!({"tool": "du", "call_id": c, "error": "permission denied"}),
        None,
    )
    .unwrap();
    ok(&mut s, "df", &b, "/data 100%");
    s.record(
        "tool_success",
        json!({"tool": "uptime", "result": "up 3 days"}),
        None,
    )
    .unwrap();
    say(&mut s, "assistant_output", "The disk /data is full.");
    say(&mut s, "user_input", "Clean it up, but keep the backups.");
    call(&mut s, "restart", json!({"service": "job"}));
    s
}

fn compile(s: &mut Session, budget: u64) -> WorkingContext {
    let c = zoned(vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
    block_on(c.compile_with(s, budget, &options())).unwrap()
}

#[test]
fn zones_in_order_with_the_goal_at_both_ends() {
    let mut s = agent_session();
    let ctx = compile(&mut s, 10_000);
    let m = ctx.to_messages();
    assert_eq!(m[0].role, "system");
    assert_eq!(
        m[0].content,
        "You are an SRE.\n\n## Policies\n- Never delete data\n\n## Available Tools\n- read_logs\n- restart\n\n## User Preferences\n{\"tone\":\"brief\"}"
    );
    assert_eq!(
        m[1].content,
        "## Current Goal\nFind why the nightly job fails\n\n## Brain State\n{\"phase\":\"diagnose\"}"
    );
    assert_eq!(
        m[2].content, "The nightly job failed. Why?",
        "pinned first turn"
    );
    let last = m.last().unwrap();
    assert_eq!(last.role, "user", "the per-turn tail is a user message");
    assert_eq!(
        last.content,
        "## Current Task\nReading the logs\n\n## Goal (restated)\nFind why the nightly job fails"
    );
    assert_eq!(m[m.len() - 2].content, "Clean it up, but keep the backups.");
    let zones: Vec<_> = ctx
        .context_messages()
        .iter()
        .map(|m| m.zone.unwrap())
        .collect();
    use context_compiler::Zone::*;
    assert_eq!(zones[..3], [System, Persistent, Persistent]);
    assert_eq!(zones[zones.len() - 2..], [Recent, Recent]);
    assert!(zones[3..zones.len() - 2].iter().all(|z| *z == Working));
    assert_eq!(ctx.zone_usage.total(), ctx.token_count);
    assert_eq!(ctx.token_count, ctx.exact_token_count(&DefaultTokenCounter));
}

#[test]
fn every_call_has_its_result_in_every_format() {
    let mut s = agent_session();
    let ctx = compile(&mut s, 10_000);
    let h = &ctx.history;
    // The pending `restart` call has no result yet: it is left out.
    assert!(!h
        .iter()
        .any(|m| m.tool_calls.iter().any(|c| c.name == "restart")));
    // Sequential steps are separate assistant messages; parallel calls share one.
    let calls: Vec<Vec<&str>> = h
        .iter()
        .filter(|m| !m.tool_calls.is_empty())
        .map(|m| m.tool_calls.iter().map(|c| c.name.as_str()).collect())
        .collect();
    assert_eq!(
        calls,
        vec![vec!["read_logs"], vec!["df", "du"], vec!["uptime"]]
    );
    assert_eq!(
        h[1].content, "Let me read the logs.",
        "calls join the assistant's text"
    );
    // Each call is followed by exactly its results, in call order.
    for (i, m) in h.iter().enumerate() {
        for (k, c) in m.tool_calls.iter().enumerate() {
            let r = &h[i + 1 + k];
            assert_eq!(r.tool_call_id.as_deref(), Some(c.id.as_str()));
        }
    }
    let du = h
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("du"))
        .unwrap();
    assert!(du.is_error);
    assert_eq!(du.content, "error: permission denied");
    // The orphan outcome gets a synthesised call id.
    let up = h
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("uptime"))
        .unwrap();
    assert!(up.tool_call_id.as_deref().unwrap().starts_with("call_"));

    check_pairs_openai(&ctx.to_provider_messages(ProviderFormat::OpenAi));
    check_pairs_anthropic(&ctx.to_provider_messages(ProviderFormat::Anthropic));
    check_pairs_ai_sdk(&ctx.to_provider_messages(ProviderFormat::AiSdk));
}

fn check_pairs_openai(v: &Value) {
    let msgs = v.as_array().unwrap();
    for (i, m) in msgs.iter().enumerate() {
        if let Some(calls) = m["tool_calls"].as_array() {
            assert_eq!(m["role"], "assistant");
            for (k, c) in calls.iter().enumerate() {
                assert_eq!(c["type"], "function");
                let args: Value =
                    serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
                assert!(args.is_object());
                let r = &msgs[i + 1 + k];
                assert_eq!(r["role"], "tool");
                assert_eq!(r["tool_call_id"], c["id"]);
            }
        }
        if m["role"] == "tool" {
            let id = &m["tool_call_id"];
            assert!(msgs[..i].iter().any(|p| p["tool_calls"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| &c["id"] == id))));
        }
    }
    assert_eq!(msgs[0]["role"], "system");
}

fn check_pairs_anthropic(v: &Value) {
    let system = v["system"].as_array().unwrap();
    assert!(system.iter().all(|b| b["type"] == "text"));
    let msgs = v["messages"].as_array().unwrap();
    let mut marks = system
        .iter()
        .filter(|b| b.get("cache_control").is_some())
        .count();
    for (i, m) in msgs.iter().enumerate() {
        if i > 0 {
            assert_ne!(m["role"], msgs[i - 1]["role"], "roles alternate");
        }
        let blocks = m["content"].as_array().unwrap();
        marks += blocks
            .iter()
            .filter(|b| b.get("cache_control").is_some())
            .count();
        let uses: Vec<&Value> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| &b["id"])
            .collect();
        if !uses.is_empty() {
            assert_eq!(m["role"], "assistant");
            let next = msgs[i + 1]["content"].as_array().unwrap();
            let results: Vec<&Value> = next
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| &b["tool_use_id"])
                .collect();
            assert_eq!(
                uses, results,
                "the next user message answers every tool_use first"
            );
            assert!(next
                .iter()
                .take(results.len())
                .all(|b| b["type"] == "tool_result"));
        }
        for b in blocks {
            if b["type"] == "tool_use" {
                assert!(b["input"].is_object());
            }
            if b["type"] == "text" {
                assert!(!b["text"].as_str().unwrap().is_empty());
            }
        }
    }
    assert!((1..=4).contains(&marks), "{marks} cache breakpoints");
}

fn check_pairs_ai_sdk(v: &Value) {
    assert!(v["instructions"].is_array(), "{{ instructions, messages }}");
    let msgs = v["messages"].as_array().unwrap();
    for (i, m) in msgs.iter().enumerate() {
        if m["role"] == "assistant" {
            if let Some(parts) = m["content"].as_array() {
                let ids: Vec<&Value> = parts
                    .iter()
                    .filter(|p| p["type"] == "tool-call")
                    .map(|p| &p["toolCallId"])
                    .collect();
                if !ids.is_empty() {
                    let next = &msgs[i + 1];
                    assert_eq!(next["role"], "tool");
                    let got: Vec<&Value> = next["content"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| &p["toolCallId"])
                        .collect();
                    assert_eq!(ids, got);
                }
            }
        }
        if m["role"] == "system" {
            assert!(
                msgs[..i].iter().all(|p| p["role"] == "system"),
                "system only at the start"
            );
        }
    }
}

#[test]
fn the_prefix_is_stable_from_call_to_call() {
    let mut s = agent_session();
    let mut previous = compile(&mut s, 20_000).to_messages();
    for turn in 0..6 {
        say(&mut s, "assistant_output", &format!("step {turn} done"));
        let id = call(&mut s, "read_logs", json!({"turn": turn}));
        ok(&mut s, "read_logs", &id, &format!("line {turn}"));
        say(&mut s, "user_input", &format!("next {turn}"));
        let now = compile(&mut s, 20_000).to_messages();
        // Everything but the previous call's tail is a prefix of this call.
        let keep = previous.len() - 1;
        assert_eq!(now[..keep], previous[..keep], "turn {turn}");
        previous = now;
    }
}

fn loop_session(counter: Rc<CountingCounter>, turns: usize) -> Session {
    let mut s = session_with("flat", counter);
    for t in 0..turns {
        say(
            &mut s,
            "user_input",
            &format!("request {t}: check the service"),
        );
        let id = call(&mut s, "read_logs", json!({"n": t}));
        ok(&mut s, "read_logs", &id, &"log line ".repeat(40 + t % 30));
        say(&mut s, "assistant_output", &format!("done with {t}"));
    }
    s
}

#[test]
fn compile_cost_follows_the_selection_not_the_session() {
    let mut read = Vec::new();
    for turns in [300, 3_000] {
        let counter = CountingCounter::new();
        let mut s = loop_session(counter.clone(), turns);
        for layout in [Layout::Zoned, Layout::SingleSystem] {
            let c = ContextCompiler::with_layout(
                vec![
                    Rc::new(HistorySelector::new(1, usize::MAX)),
                    Rc::new(Compactor::new()),
                ],
                layout,
            );
            counter.chars.set(0);
            let ctx = block_on(c.compile_with(&mut s, 8_000, &CompileOptions::new("sys"))).unwrap();
            assert!(ctx.token_count <= 8_000);
            read.push(counter.chars.get());
        }
    }
    // Characters counted per compile at 3,000 turns vs 300 (zoned, seed):
    // the same work, within a margin, not ten times more.
    assert!(read[2] < read[0] * 2, "zoned: {read:?}");
    assert!(read[3] < read[1] * 2, "seed: {read:?}");
}

fn last_compaction(s: &Session) -> &context_compiler::SessionEvent {
    s.event_log()
        .events()
        .iter()
        .rev()
        .find(|e| e.kind == "context_compacted")
        .expect("a compaction event")
}

fn pipeline(store: Rc<MemoryArtifactStore>, compactor: Compactor) -> ContextCompiler {
    let memory = Rc::new(InMemoryBackend::new());
    memory.store("db", "The job writes to db-primary", "fact");
    zoned(vec![
        Rc::new(HistorySelector::new(1, usize::MAX)),
        Rc::new(ArtifactAttacher::new(store, 4096)),
        Rc::new(compactor),
        Rc::new(MemoryPreloader::new(memory, 3)),
    ])
}

fn grow(s: &mut Session, t: usize) {
    say(
        s,
        "user_input",
        &format!("turn {t}: what does the job log say about db?"),
    );
    let id = call(s, "read_logs", json!({"turn": t}));
    let size = if t % 7 == 3 {
        20_000
    } else {
        600 + (t * 37) % 900
    };
    ok(s, "read_logs", &id, &format!("{t}: ").repeat(size / 4));
    say(
        s,
        "assistant_output",
        &format!("Turn {t}: the log shows retries against db-primary."),
    );
}

#[test]
fn compaction_has_hysteresis_and_is_recorded() {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let compiler = pipeline(store, Compactor::new());
    let budget = 6_000;
    let mut s = session("compacting");
    let mut compactions = Vec::new();
    let mut previous: Option<Vec<context_compiler::Message>> = None;
    let mut stable_calls = 0;
    let (mut masked, mut summarized) = (0, 0);
    for t in 0..80 {
        grow(&mut s, t);
        let before = s.event_log().len();
        let ctx = block_on(compiler.compile_with(&mut s, budget, &options())).unwrap();
        assert!(ctx.token_count <= budget);
        let m = ctx.to_messages();
        assert!(
            m.iter()
                .any(|x| x.content.starts_with(&format!("turn {t}:"))),
            "newest user message"
        );
        let compacted = s.event_log().events()[before..]
            .iter()
            .any(|e| e.kind == "context_compacted");
        if compacted {
            compactions.push(t);
            let e = last_compaction(&s);
            let after = e.data["tokens_after"].as_u64().unwrap();
            assert!(
                after <= budget / 2 + budget / 10,
                "compaction brings it down: {after}"
            );
            assert!(ctx.compaction_level >= CompactionLevel::Light);
            // Each item that left says why.
            let why: Vec<DropAction> = ctx.dropped.iter().map(|d| d.action).collect();
            assert!(
                why.contains(&DropAction::Masked) || why.contains(&DropAction::Summarized),
                "{why:?}"
            );
            masked += why.iter().filter(|a| **a == DropAction::Masked).count();
            summarized += why.iter().filter(|a| **a == DropAction::Summarized).count();
        } else if let Some(prev) = &previous {
            let keep = prev.len() - 1;
            if m.len() > keep && m[..keep] == prev[..keep] {
                stable_calls += 1;
            }
        }
        previous = Some(m);
    }
    assert!(compactions.len() >= 2, "compacted at {compactions:?}");
    assert!(
        masked > 0 && summarized > 0,
        "{masked} masked, {summarized} summarized"
    );
    // Between compactions the prefix is stable: no window sliding.
    assert_eq!(stable_calls, 80 - 1 - compactions.len(), "{compactions:?}");
    let gaps: Vec<usize> = compactions.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|g| *g >= 3), "hysteresis: {gaps:?}");

    // The summary is in the session: a later compile reuses its bytes, and
    // an exported session compiles the same after import.
    let again = block_on(compiler.compile_view(&s, budget, &options()))
        .unwrap()
        .0;
    let last = block_on(compiler.compile_view(&s, budget, &options()))
        .unwrap()
        .0;
    assert!(again.summary.is_some());
    assert_eq!(again.to_messages(), last.to_messages());
    let doc = s.export_json();
    let imported =
        Session::import_json(&doc, Rc::new(SystemClock), Rc::new(DefaultTokenCounter), 9).unwrap();
    let after_import = block_on(compiler.compile_view(&imported, budget, &options()))
        .unwrap()
        .0;
    assert_eq!(after_import.to_messages(), again.to_messages());
}

struct FakeLlm {
    answer: Result<String, ()>,
    prompts: Cell<usize>,
}

#[async_trait(?Send)]
impl Llm for FakeLlm {
    async fn complete(
        &self,
        prompt: &str,
        options: LlmOptions,
    ) -> context_compiler::Result<String> {
        assert!(prompt.contains("Conversation to summarise:"));
        assert!(options.max_tokens >= 64);
        self.prompts.set(self.prompts.get() + 1);
        self.answer
            .clone()
            .map_err(|_| Error::new(ErrorCode::InvalidArgument, "model unavailable"))
    }
}

fn compact_once(llm: Rc<FakeLlm>) -> (WorkingContext, Session) {
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let compiler = pipeline(store, Compactor::with_options(Some(llm), 0.4).unwrap());
    let mut s = session("llm");
    for t in 0..40 {
        grow(&mut s, t);
        let ctx = block_on(compiler.compile_with(&mut s, 6_000, &options())).unwrap();
        if ctx.summary.is_some() {
            return (ctx, s);
        }
    }
    panic!("never compacted");
}

#[test]
fn an_injected_summariser_writes_the_summary_and_its_failure_falls_back() {
    let llm = Rc::new(FakeLlm {
        answer: Ok("The job fails on db-primary retries.".into()),
        prompts: Cell::new(0),
    });
    let (ctx, _) = compact_once(llm.clone());
    assert_eq!(llm.prompts.get(), 1);
    assert!(ctx
        .to_messages()
        .iter()
        .any(|m| m.content.ends_with("The job fails on db-primary retries.")));

    let failing = Rc::new(FakeLlm {
        answer: Err(()),
        prompts: Cell::new(0),
    });
    let (ctx, s) = compact_once(failing);
    let summary = ctx.summary.unwrap();
    assert!(
        summary.contains("earlier turns were compacted"),
        "{summary}"
    );
    let e = last_compaction(&s);
    assert!(e.data["summarizer_error"]
        .as_str()
        .unwrap()
        .contains("model unavailable"));
    assert!(Compactor::with_options(None, 0.9).is_err());
}

#[test]
fn the_newest_user_message_is_always_there() {
    let mut s = session("newest");
    say(&mut s, "user_input", "Please delete the staging database.");
    say(&mut s, "assistant_output", "Deleting it now.");
    say(
        &mut s,
        "user_input",
        &format!("NO! Do not delete anything. {}", "Really. ".repeat(3_000)),
    );
    let ctx = compile(&mut s, 800);
    assert!(ctx.token_count <= 800);
    let m = ctx.to_messages();
    assert!(m
        .iter()
        .any(|x| x.content.starts_with("NO! Do not delete anything.")));
    assert!(!ctx.dropped.is_empty());
}

#[test]
fn tight_budgets_keep_pairs_and_fit() {
    for budget in [200, 350, 600, 1_000, 3_000] {
        let mut s = agent_session();
        let ctx = compile(&mut s, budget);
        assert!(ctx.token_count <= budget, "{budget}");
        check_pairs_openai(&ctx.to_provider_messages(ProviderFormat::OpenAi));
        check_pairs_anthropic(&ctx.to_provider_messages(ProviderFormat::Anthropic));
        check_pairs_ai_sdk(&ctx.to_provider_messages(ProviderFormat::AiSdk));
    }
    let mut s = agent_session();
    let err = block_on(zoned(vec![]).compile_with(
        &mut s,
        5,
        &CompileOptions {
            policies: vec!["p".repeat(100)],
            ..options()
        },
    ))
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BudgetTooSmall);
    let err = block_on(zoned(vec![]).compile_with(
        &mut s,
        500,
        &CompileOptions {
            tool_definitions: vec![json!({})],
            ..options()
        },
    ))
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
}

#[test]
fn a_forged_compaction_event_is_ignored() {
    let mut s = agent_session();
    s.record(
        "context_compacted",
        json!({"level": "full", "summarized_through": {"index": 3, "event_id": "nope"}, "summary": "forged"}),
        None,
    )
    .unwrap();
    s.record(
        "context_compacted",
        json!({"level": "full", "summarized_through": {"index": 99_999, "event_id": "x"}}),
        None,
    )
    .unwrap();
    s.record("context_compacted", json!("garbage"), None)
        .unwrap();
    assert!(s.event_log().compaction().is_none());
    let ctx = compile(&mut s, 10_000);
    assert!(ctx.summary.is_none());
}

/// A processor that adds more per-turn memories than the budget holds.
struct Flood;

#[async_trait(?Send)]
impl Processor for Flood {
    fn name(&self) -> &str {
        "flood"
    }
    async fn process(
        &self,
        _: &Session,
        mut ctx: WorkingContext,
        _: u64,
        _: &mut context_compiler::SessionWrites,
    ) -> context_compiler::Result<WorkingContext> {
        for i in 0..20 {
            ctx.memory_hits.push(context_compiler::MemoryHit {
                key: format!("m{i}"),
                content: format!("memory {i} ").repeat(30),
                category: "fact".into(),
                tokens: None,
            });
        }
        Ok(ctx)
    }
}

#[test]
fn memories_dropped_for_the_budget_are_listed() {
    let mut s = agent_session();
    let c = zoned(vec![
        Rc::new(HistorySelector::new(1, usize::MAX)),
        Rc::new(Flood),
    ]);
    let ctx = block_on(c.compile_with(&mut s, 1_200, &options())).unwrap();
    assert!(ctx.token_count <= 1_200);
    let memories: Vec<_> = ctx
        .dropped
        .iter()
        .filter(|d| d.section == context_compiler::working_context::Section::MemoryHits)
        .collect();
    assert!(!memories.is_empty());
    assert!(memories.iter().all(|d| d.tokens_removed > 0));
    assert_eq!(ctx.memory_hits.len() + memories.len(), 20);
}

#[test]
fn pinned_memories_stay_in_persistent_and_are_recorded_once() {
    let memory = Rc::new(InMemoryBackend::new());
    memory.store("disk", "The /data volume holds exports and backups", "fact");
    memory.store(
        "oncall",
        "Page the data team before deleting exports",
        "policy",
    );
    let c = zoned(vec![
        Rc::new(HistorySelector::new(1, usize::MAX)),
        Rc::new(MemoryPreloader::pinned(memory, 1)),
    ]);
    let mut s = agent_session();
    let pinned_events = |s: &Session| {
        s.event_log()
            .events()
            .iter()
            .filter(|e| e.kind == "memory_hit" && e.data["pinned"] == json!(true))
            .count()
    };
    let first = block_on(c.compile_with(&mut s, 10_000, &options())).unwrap();
    // The goal and state digest (the host's) stay in the PERSISTENT system
    // message; the pinned memories are a user message right after it.
    let messages = first.to_messages();
    assert_eq!(messages[1].role, "system");
    assert!(!messages[1].content.contains("## Pinned memories"));
    assert_eq!(messages[2].role, "user");
    let persistent = messages[2].content.clone();
    assert!(
        persistent.starts_with("## Pinned memories\n- [disk]: The /data volume"),
        "{persistent}"
    );
    assert_eq!(pinned_events(&s), 1);
    // The next turn recalls the other memory: it is pinned after the first,
    // and the first stays byte-identical.
    say(
        &mut s,
        "user_input",
        "Who do I page before deleting exports?",
    );
    let second = block_on(c.compile_with(&mut s, 10_000, &options())).unwrap();
    let persistent2 = second.to_messages()[2].content.clone();
    assert!(persistent2.starts_with(&persistent));
    assert!(persistent2.contains("- [oncall]: Page the data team"));
    assert_eq!(pinned_events(&s), 2);
    let third = block_on(c.compile_with(&mut s, 10_000, &options())).unwrap();
    assert_eq!(third.to_messages()[2].content, persistent2);
    assert_eq!(pinned_events(&s), 2, "recorded once");
    assert!(third.memory_hits.is_empty(), "pinned, not per-turn");
    let imported = Session::import_json(
        &s.export_json(),
        Rc::new(SystemClock),
        Rc::new(DefaultTokenCounter),
        3,
    )
    .unwrap();
    let again = block_on(c.compile_view(&imported, 10_000, &options()))
        .unwrap()
        .0;
    assert_eq!(again.to_messages(), third.to_messages());
}

/// Counts one token for every text, the empty one included, on top of the
/// default count: a tokenizer that adds a BOS token.
struct BosCounter;

impl context_compiler::TokenCounter for BosCounter {
    fn count(&self, text: &str) -> u64 {
        text.len().div_ceil(4) as u64 + 1
    }
    fn message_overhead(&self) -> u64 {
        3
    }
}

/// A counter that counts one token for the empty string compiles within
/// the budget (it once panicked with "capacity overflow").
#[test]
fn a_counter_counting_the_empty_string_compiles_within_budget() {
    let mut s = session_with("bos", Rc::new(BosCounter));
    for len in [5, 50, 5000] {
        say(&mut s, "user_input", &"x".repeat(len));
    }
    let compiler = zoned(vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
    let ctx = block_on(compiler.compile_with(&mut s, 1000, &options())).unwrap();
    assert!(ctx.token_count <= 1000, "{}", ctx.token_count);
}

/// The single-system-message layout with the same counter, and an empty
/// system prompt: within budget, never a loop.
#[test]
fn a_counter_counting_the_empty_string_fits_the_system_message_layout() {
    let mut s = session_with("bos", Rc::new(BosCounter));
    for len in [5, 50, 5000] {
        say(&mut s, "user_input", &"x".repeat(len));
    }
    let compiler = ContextCompiler::with_layout(
        vec![Rc::new(HistorySelector::new(1, usize::MAX))],
        Layout::SingleSystem,
    );
    for prompt in ["", "You are an SRE."] {
        let ctx =
            block_on(compiler.compile_with(&mut s, 1000, &CompileOptions::new(prompt))).unwrap();
        assert!(ctx.token_count <= 1000, "{}", ctx.token_count);
    }
}

/// An oversized question, also the session's first turn (so `keepFirst`
/// would pin it): it is kept, its head and tail with the middle cut and
/// marked, naming where the whole text is; never the system prompt alone.
#[test]
fn an_oversized_first_question_keeps_its_head_and_tail() {
    let text: String = (0..4000)
        .map(|i| format!("2026-11-25 10:00:{i:05} ERROR worker-{i} failed job {i}\n"))
        .collect();
    let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
    let pipelines: Vec<Vec<Rc<dyn Processor>>> = vec![
        vec![
            Rc::new(HistorySelector::new(1, usize::MAX)),
            Rc::new(ArtifactAttacher::new(store.clone(), 1024)),
            Rc::new(Compactor::new()),
        ],
        vec![Rc::new(HistorySelector::new(1, usize::MAX))],
        vec![Rc::new(Compactor::new())],
        vec![Rc::new(ArtifactAttacher::new(store.clone(), 1024))],
        vec![],
    ];
    for (n, pipeline) in pipelines.into_iter().enumerate() {
        let mut s = session("big");
        say(&mut s, "user_input", &text);
        let compiler = zoned(pipeline);
        block_on(compiler.compile_with(&mut s, 8000, &options())).unwrap();
        // The second compile reuses what the first stored.
        let ctx = block_on(compiler.compile_with(&mut s, 8000, &options())).unwrap();
        assert!(ctx.token_count <= 8000, "pipeline {n}: {}", ctx.token_count);
        let question = ctx
            .history
            .iter()
            .find(|m| m.role == "user")
            .unwrap_or_else(|| panic!("pipeline {n}: the question is gone"));
        assert!(
            question.content.starts_with("2026-11-25 10:00:00000 ERROR"),
            "pipeline {n}: its head"
        );
        assert!(
            question.content.trim_end().ends_with("failed job 3999"),
            "pipeline {n}: its tail"
        );
        assert!(
            question.content.contains("cut"),
            "pipeline {n}: the cut is marked"
        );
        let stored = s
            .event_log()
            .all_events()
            .iter()
            .filter(|e| e.kind == "artifact_stored")
            .count();
        if n == 0 {
            // An artifact attacher after a selector stores the whole text,
            // named by the cut (without a selector the question joins the
            // context after the processors, as its session event).
            let handle = question.artifact.as_ref().unwrap().handle.clone();
            assert!(
                question.content.contains(&handle),
                "pipeline {n}: names {handle}"
            );
            let whole = block_on(store.retrieve(&handle)).unwrap().unwrap();
            assert_eq!(whole, text.as_bytes());
            assert_eq!(stored, 1, "pipeline {n}");
        } else {
            assert!(question.content.contains("session event"), "pipeline {n}");
            assert_eq!(stored, 0, "pipeline {n}");
        }
    }
}

/// A first reply that was a bare tool call: the first answer came after the
/// call and its result, and it is never rendered before them. History keeps
/// the session's order; only turns before any tool exchange are pinned.
#[test]
fn a_first_answer_after_its_tool_call_stays_after_it() {
    let mut s = session("order");
    say(&mut s, "user_input", "How full is /data?");
    let id = call(&mut s, "df", json!({}));
    ok(&mut s, "df", &id, "/data 93% used");
    say(&mut s, "assistant_output", "It is 93% full.");
    for i in 0..12 {
        say(&mut s, "user_input", &format!("And now ({i})?"));
        say(&mut s, "assistant_output", &format!("Still 93% ({i})."));
    }
    say(&mut s, "user_input", "Thanks. Anything else?");
    let c = zoned(vec![Rc::new(HistorySelector::default())]);
    let ctx = block_on(c.compile_with(&mut s, 10_000, &options())).unwrap();
    let openai = ctx.to_provider_messages(ProviderFormat::OpenAi);
    let messages = openai.as_array().unwrap();
    let position = |pred: &dyn Fn(&serde_json::Value) -> bool| messages.iter().position(pred);
    let answer = position(&|m| m["content"] == "It is 93% full.");
    let result = position(&|m| m["role"] == "tool");
    if let (Some(answer), Some(result)) = (answer, result) {
        assert!(result < answer, "{openai:#}");
    }
    // In session order, whatever was selected.
    let positions: Vec<usize> = ctx.history.iter().filter_map(|h| h.position).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert_eq!(
        ctx.history[0].zone,
        Some(context_compiler::Zone::Persistent),
        "the question is pinned"
    );
    assert_eq!(ctx.history[0].content, "How full is /data?");
    assert_ne!(
        ctx.history[1].zone,
        Some(context_compiler::Zone::Persistent),
        "the answer is not"
    );
}
