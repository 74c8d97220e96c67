//! Property: whatever the session held (a greeting first, whitespace-only
//! turns and replies, outcomes recorded with the provider's own call ids and
//! no call, retried calls, made-up tool names, oversized questions, phase
//! results, reasoning to send back, images and files), every pipeline and
//! layout renders requests every provider accepts: the providers' rules
//! (`context_compiler::working_context::checker`) find nothing in any
//! format, and the budget holds. And in the zoned layout nothing a user, a
//! model or a tool wrote (a marker planted in their texts, in memories and
//! in what recall and compaction bring back) reaches a `system`,
//! `developer`, `instructions` or `systemInstruction` part.
mod common;

use std::rc::Rc;

use common::{block_on, session, tool_exchange};
use context_compiler::clock::SystemClock;
use context_compiler::working_context::checker::{check_request, check_request_for};
use context_compiler::working_context::render_each;
use context_compiler::TokenCounter;
use context_compiler::{
    ArtifactAttacher, Compactor, ContextCompiler, ErrorCode, HistoryRecall, HistorySelector,
    InMemoryBackend, Layout, MemoryArtifactStore, MemoryPreloader, Processor, ProviderFormat,
};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Ev {
    /// A user turn, with media when the second field says (see [`media`]).
    User(String, u8),
    /// A reply, with reasoning to send back when the second field says (see
    /// [`reasoning`]).
    Assistant(String, u8),
    /// A phase result (an assistant's text).
    Phase(String),
    /// A call recorded as a `tool_call` event (with reasoning as the runner
    /// records a reply's that had no text), then its outcome; under the
    /// provider's id when there is one (`call_0`, as endpoints that restart
    /// their ids every turn give), else under the event's.
    Call {
        name: String,
        ok: bool,
        output: String,
        reasoning: u8,
        provider_id: Option<String>,
    },
    /// Outcomes recorded with a provider's call id and no call; several for
    /// one id are a retry.
    Orphans {
        id: String,
        name: String,
        outcomes: Vec<(bool, String)>,
    },
}

/// What every text a user, a model or a tool wrote may carry: it must never
/// reach a system part in the zoned layout.
const MARK: &str = "PLANTED-MARK-7Q";

fn unmarked() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z ]{1,60}",
        // Words the questions share with earlier turns, for recall.
        2 => "(disk|backup|nightly|job|primary|export|volume)( (disk|backup|nightly|job|primary|export|volume|why|the)){0,8}",
        2 => prop_oneof![Just(String::new()), Just("\n\n".to_string()), Just("  \t ".to_string())],
        1 => "[a-zA-Z0-9{}\":,\\[\\] \n]{0,300}",
        1 => (1usize..60).prop_map(|n| "2026-11-25 ERROR worker failed job\n".repeat(n * 40)),
    ]
}

fn text() -> impl Strategy<Value = String> {
    (unmarked(), any::<bool>()).prop_map(|(t, mark)| if mark { format!("{t} {MARK}") } else { t })
}

/// Reasoning for an event's data, as the runner records it: none, Anthropic
/// thinking (signed, or redacted), Responses reasoning items, by `which`.
fn reasoning(which: u8) -> Option<serde_json::Value> {
    match which % 5 {
        1 => Some(json!({"format": "anthropic", "items": [
            {"type": "thinking", "thinking": format!("the disk is full {MARK}"), "signature": "sig-1"}
        ]})),
        2 => Some(json!({"format": "anthropic", "items": [
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "thinking", "thinking": "check the volume", "signature": "sig-2"}
        ]})),
        3 => Some(json!({"format": "openai-responses", "items": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}
        ]})),
        _ => None,
    }
}

/// Everything a request gives system authority to, as JSON text: system and
/// developer messages, instructions, the system blocks and instruction.
fn authority_text(request: &serde_json::Value, format: ProviderFormat) -> String {
    let system_messages = |messages: &serde_json::Value| -> String {
        messages
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| matches!(m["role"].as_str(), Some("system" | "developer")))
            .map(|m| m.to_string())
            .collect()
    };
    match format {
        ProviderFormat::Plain | ProviderFormat::OpenAi => system_messages(request),
        ProviderFormat::OpenAiResponses => {
            format!(
                "{}{}",
                request["instructions"],
                system_messages(&request["input"])
            )
        }
        ProviderFormat::Anthropic => request["system"].to_string(),
        ProviderFormat::Gemini => request["systemInstruction"].to_string(),
        ProviderFormat::AiSdk => {
            format!(
                "{}{}",
                request["instructions"],
                system_messages(&request["messages"])
            )
        }
    }
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("read_logs".to_string()),
        1 => Just("multi_tool_use.parallel".to_string()),
        1 => Just("bad name/with spaces".to_string()),
        1 => Just("x".repeat(70)),
        1 => Just(String::new()),
    ]
}

fn call_id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("toolu_01.A".to_string()),
        Just("toolu_01_A".to_string()),
        Just("call_abc123".to_string()),
        Just("id with spaces/and:colons".to_string()),
    ]
}

fn event() -> impl Strategy<Value = Ev> {
    prop_oneof![
        3 => (text(), any::<u8>()).prop_map(|(t, m)| Ev::User(t, m)),
        3 => (text(), any::<u8>()).prop_map(|(t, r)| Ev::Assistant(t, r)),
        1 => text().prop_map(Ev::Phase),
        2 => (tool_name(), any::<bool>(), text(), any::<u8>(), prop::option::of(prop_oneof![Just("call_0"), Just("call.0"), Just("call_1")]))
            .prop_map(|(name, ok, output, reasoning, id)| Ev::Call { name, ok, output, reasoning, provider_id: id.map(str::to_string) }),
        2 => (call_id(), tool_name(), prop::collection::vec((any::<bool>(), text()), 1..3))
            .prop_map(|(id, name, outcomes)| Ev::Orphans { id, name, outcomes }),
    ]
}

/// Media for a turn: none, an image by URL, a stored image, a stored PDF
/// and an image: by `which`.
fn media(which: u8, store: &MemoryArtifactStore) -> serde_json::Value {
    let attach = |bytes: &[u8]| {
        let part = block_on(context_compiler::media::attach(
            store,
            bytes,
            Default::default(),
        ))
        .unwrap();
        serde_json::to_value(part).unwrap()
    };
    match which % 4 {
        0 => json!([]),
        1 => {
            json!([{"type": "image", "mediaType": "image/jpeg", "url": "https://example.com/a.jpg"}])
        }
        2 => json!([attach(ICON)]),
        _ => json!([attach(REPORT), attach(ICON)]),
    }
}

const ICON: &[u8] = include_bytes!("fixtures/media/icon.png");
const REPORT: &[u8] = include_bytes!("fixtures/media/report.pdf");

fn outcome(ok: bool, name: &str, call_id: &str, output: &str) -> (&'static str, serde_json::Value) {
    if ok {
        (
            "tool_success",
            json!({"tool": name, "call_id": call_id, "result": output}),
        )
    } else {
        (
            "tool_error",
            json!({"tool": name, "call_id": call_id, "error": output}),
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn every_format_keeps_every_provider_rule(
        greeting in prop::option::of(text()),
        events in prop::collection::vec(event(), 0..24),
        budget in prop_oneof![200u64..2000, 2000u64..20000],
        keep_first in 0usize..3,
        keep_last in prop_oneof![0usize..6, Just(usize::MAX)],
        selector in any::<bool>(),
        compact in any::<bool>(),
        attach in any::<bool>(),
        memories in any::<bool>(),
        pinned in any::<bool>(),
        recall in any::<bool>(),
        zoned in any::<bool>(),
    ) {
        let mut s = session("rules");
        let store = Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock)));
        if let Some(g) = &greeting {
            s.record("assistant_output", json!({"content": g}), None).unwrap();
        }
        for e in &events {
            match e {
                Ev::User(t, m) => { s.record("user_input", json!({"text": t, "media": media(*m, &store)}), None).unwrap(); }
                Ev::Assistant(t, r) => {
                    let mut data = json!({"content": t});
                    if let Some(r) = reasoning(*r) { data["reasoning"] = r; }
                    s.record("assistant_output", data, None).unwrap();
                }
                Ev::Phase(t) => { s.record("phase_result", json!({"text": t}), None).unwrap(); }
                Ev::Call { name, ok, output, reasoning: r, provider_id } => {
                    let mut call = json!({"tool_name": name, "arguments": {"q": 1}});
                    if let Some(r) = reasoning(*r) { call["reasoning"] = r; }
                    if r % 5 == 4 { call["thought_signature"] = json!("gemini-sig"); }
                    if let Some(id) = provider_id { call["call_id"] = json!(id); }
                    let recorded = s.record("tool_call", call, None).unwrap().event_id.clone();
                    let id = provider_id.clone().unwrap_or(recorded);
                    let (kind, mut data) = outcome(*ok, name, &id, output);
                    // A tool's output may carry media too.
                    data["media"] = media(output.len() as u8, &store);
                    s.record(kind, data, None).unwrap();
                }
                Ev::Orphans { id, name, outcomes } => {
                    for (ok, output) in outcomes {
                        let (kind, data) = outcome(*ok, name, id, output);
                        s.record(kind, data, None).unwrap();
                    }
                }
            }
        }
        let mut processors: Vec<Rc<dyn Processor>> = Vec::new();
        if selector { processors.push(Rc::new(HistorySelector::new(keep_first, keep_last))); }
        if memories || pinned {
            let mem = Rc::new(InMemoryBackend::new());
            mem.store("m", &format!("the nightly job writes to db-primary {MARK}"), "core");
            mem.store("n", "the backup volume is export", "core");
            processors.push(Rc::new(if pinned { MemoryPreloader::pinned(mem, 3) } else { MemoryPreloader::new(mem, 3) }));
        }
        if recall { processors.push(Rc::new(HistoryRecall::new())); }
        if compact { processors.push(Rc::new(Compactor::new())); }
        if attach {
            processors.push(Rc::new(ArtifactAttacher::new(Rc::new(MemoryArtifactStore::new(Rc::new(SystemClock))), 2048)));
        }
        let layout = if zoned { Layout::Zoned } else { Layout::SingleSystem };
        let compiler = ContextCompiler::with_layout(processors, layout).with_media_store(store);
        match block_on(compiler.compile(&mut s, budget, "You are an SRE.")) {
            Ok(ctx) => {
                prop_assert!(ctx.token_count <= budget, "{} > {}", ctx.token_count, budget);
                for format in ProviderFormat::ALL {
                    let request = ctx.to_provider_messages(format);
                    let broken = check_request(&request, format);
                    prop_assert!(broken.is_empty(), "{}: {:?}\n{}", format.as_str(), broken, serde_json::to_string_pretty(&request).unwrap());
                    if zoned {
                        let authority = authority_text(&request, format);
                        prop_assert!(!authority.contains(MARK), "{} gives system authority to untrusted text:\n{}", format.as_str(), authority);
                    }
                    // Rendered a message at a time, where a format allows
                    // it, the same request.
                    if let Some(alone) = ctx.messages_rendered_alone(format) {
                        // One message each: the npm package's render memo
                        // hands out a rendering per message.
                        prop_assert_eq!(Some(alone.len()), request.as_array().map(Vec::len));
                        prop_assert_eq!(serde_json::Value::Array(render_each(alone, format)), request);
                    }
                }
                prop_assert!(ctx.messages_rendered_alone(ProviderFormat::Anthropic).is_none());
                // Rendered for a model, no breakpoint is below its minimum.
                for model in ["claude-sonnet-4-5", "claude-3-5-haiku-latest", "claude-opus-4-5"] {
                    let request = ctx.to_provider_messages_for(ProviderFormat::Anthropic, model);
                    let broken = check_request_for(&request, ProviderFormat::Anthropic, Some(model));
                    prop_assert!(broken.is_empty(), "{}: {:?}", model, broken);
                }
            }
            Err(e) => prop_assert_eq!(e.code(), ErrorCode::BudgetTooSmall, "{}", e),
        }
    }
}

fn zoned_compile(
    s: &mut context_compiler::Session,
    processors: Vec<Rc<dyn Processor>>,
) -> context_compiler::WorkingContext {
    let compiler = ContextCompiler::with_layout(processors, Layout::Zoned);
    block_on(compiler.compile(s, 8000, "You are an SRE.")).unwrap()
}

/// Rendered for a named model, a short prefix carries no breakpoint, a
/// long one keeps its marks, and an unknown model renders as without one.
#[test]
fn breakpoints_below_the_models_minimum_are_left_out() {
    let mut s = session("cache");
    s.record("user_input", json!({"text": "Why did the job fail?"}), None)
        .unwrap();
    s.record(
        "assistant_output",
        json!({"text": "The disk is full."}),
        None,
    )
    .unwrap();
    s.record("user_input", json!({"text": "Free some space."}), None)
        .unwrap();
    let compiler =
        ContextCompiler::with_layout(vec![Rc::new(HistorySelector::default())], Layout::Zoned);
    let marks = |v: &serde_json::Value| v.to_string().matches("cache_control").count();
    let short = block_on(compiler.compile(&mut s, 8000, "You are an SRE.")).unwrap();
    assert!(marks(&short.to_provider_messages(ProviderFormat::Anthropic)) > 0);
    assert_eq!(
        marks(&short.to_provider_messages_for(ProviderFormat::Anthropic, "claude-sonnet-4-5")),
        0
    );
    assert_eq!(
        short.to_provider_messages_for(ProviderFormat::Anthropic, "gpt-5"),
        short.to_provider_messages(ProviderFormat::Anthropic)
    );
    let long_prompt = "Follow the runbook for every incident. ".repeat(200);
    let long = block_on(compiler.compile(&mut s, 8000, &long_prompt)).unwrap();
    let request = long.to_provider_messages_for(ProviderFormat::Anthropic, "claude-sonnet-4-5");
    assert!(
        marks(&request) >= 1,
        "a prefix of {} chars keeps its marks",
        long_prompt.len()
    );
    assert_eq!(
        request["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    // Opus 4.5 needs 4,096 tokens: this prefix (about 2,600) is too short.
    let opus = long.to_provider_messages_for(ProviderFormat::Anthropic, "claude-opus-4-5");
    assert_eq!(marks(&opus), 0);
    // Other formats are as without a model.
    assert_eq!(
        long.to_provider_messages_for(ProviderFormat::OpenAi, "claude-sonnet-4-5"),
        long.to_provider_messages(ProviderFormat::OpenAi)
    );
}

/// A session opening with the assistant's greeting: in every format the
/// first turn is the one fixed user placeholder, the same bytes each call.
#[test]
fn a_greeting_first_gets_the_fixed_user_placeholder() {
    use context_compiler::working_context::CONVERSATION_START;
    for keep_first in [0, 1, 2] {
        let mut s = session("greeting");
        s.record(
            "assistant_output",
            json!({"content": "Hi! How can I help?"}),
            None,
        )
        .unwrap();
        s.record("user_input", json!({"text": "Why did the job fail?"}), None)
            .unwrap();
        let first = zoned_compile(
            &mut s,
            vec![Rc::new(HistorySelector::new(keep_first, usize::MAX))],
        );
        let anthropic = first.to_provider_messages(ProviderFormat::Anthropic);
        assert_eq!(
            anthropic["messages"][0]["role"], "user",
            "keepFirst {keep_first}"
        );
        assert_eq!(
            anthropic["messages"][0]["content"][0]["text"],
            CONVERSATION_START
        );
        let ai = first.to_provider_messages(ProviderFormat::AiSdk);
        assert_eq!(ai["messages"][0]["content"], CONVERSATION_START);
        s.record(
            "assistant_output",
            json!({"content": "Out of memory."}),
            None,
        )
        .unwrap();
        s.record("user_input", json!({"text": "Fix it."}), None)
            .unwrap();
        let second = zoned_compile(
            &mut s,
            vec![Rc::new(HistorySelector::new(keep_first, usize::MAX))],
        );
        let again = second.to_provider_messages(ProviderFormat::Anthropic);
        assert_eq!(
            again["messages"][0], anthropic["messages"][0],
            "the prefix holds"
        );
        assert!(second.token_count <= 8000);
    }
}

/// A reply that is only whitespace is recorded as given; rendering leaves
/// it out and the roles still alternate.
#[test]
fn a_whitespace_only_reply_is_kept_in_the_session_and_left_out_of_requests() {
    let mut s = session("blank");
    s.record("user_input", json!({"text": "Hello"}), None)
        .unwrap();
    s.record("assistant_output", json!({"content": "\n\n"}), None)
        .unwrap();
    s.record("user_input", json!({"text": "Are you there?"}), None)
        .unwrap();
    assert_eq!(
        s.event_log().all_events()[1].data["content"],
        "\n\n",
        "recorded as given"
    );
    let ctx = zoned_compile(&mut s, vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
    let anthropic = ctx.to_provider_messages(ProviderFormat::Anthropic);
    let messages = anthropic["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "one user turn: {anthropic}");
    let texts: Vec<&str> = messages[0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(texts, ["Hello", "Are you there?"]);
    let plain = ctx.to_messages();
    assert!(plain.iter().all(|m| !m.content.trim().is_empty()));
    let exact: u64 = plain
        .iter()
        .map(|m| context_compiler::DefaultTokenCounter.count(&m.content) + 3)
        .sum();
    assert_eq!(exact, ctx.token_count, "the count is of what is sent");
}

/// A tool the model made up (`multi_tool_use.parallel`) is sent under a
/// valid name that no real tool has; its error result names the original.
#[test]
fn a_made_up_tool_name_is_sent_under_a_valid_one() {
    let mut s = session("parallel");
    s.record("user_input", json!({"text": "Run both"}), None)
        .unwrap();
    let id = s
        .record(
            "tool_call",
            json!({"tool_name": "multi_tool_use.parallel", "arguments": {}}),
            None,
        )
        .unwrap()
        .event_id
        .clone();
    s.record(
        "tool_error",
        json!({"tool": "multi_tool_use.parallel", "call_id": id, "error": "unknown tool"}),
        None,
    )
    .unwrap();
    let ctx = zoned_compile(&mut s, vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
    let openai = ctx.to_provider_messages(ProviderFormat::OpenAi);
    let call = &openai[2]["tool_calls"][0]["function"]["name"];
    assert!(
        call.as_str().unwrap().starts_with("invalid_tool_"),
        "{openai}"
    );
    assert!(
        openai[3]["content"]
            .as_str()
            .unwrap()
            .contains("multi_tool_use.parallel"),
        "{openai}"
    );
    for format in ProviderFormat::ALL {
        assert!(check_request(&ctx.to_provider_messages(format), format).is_empty());
    }
}

/// Outcomes with the provider's own call ids and no `tool_call`: a retry is
/// one call answered by its latest outcome; ids that clean to the same text
/// stay two ids; an empty id gets a generated one.
#[test]
fn provider_call_ids_are_one_call_each_and_stay_distinct() {
    let mut s = session("ids");
    s.record("user_input", json!({"text": "Go"}), None).unwrap();
    s.record(
        "tool_error",
        json!({"tool": "fetch", "call_id": "call_1", "error": "timeout"}),
        None,
    )
    .unwrap();
    s.record(
        "tool_success",
        json!({"tool": "fetch", "call_id": "call_1", "result": "200 OK"}),
        None,
    )
    .unwrap();
    s.record(
        "tool_success",
        json!({"tool": "a", "call_id": "toolu_01.A", "result": "dotted"}),
        None,
    )
    .unwrap();
    s.record(
        "tool_success",
        json!({"tool": "b", "call_id": "toolu_01_A", "result": "plain"}),
        None,
    )
    .unwrap();
    s.record(
        "tool_success",
        json!({"tool": "c", "call_id": "", "result": "no id"}),
        None,
    )
    .unwrap();
    let ctx = zoned_compile(&mut s, vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
    let openai = ctx.to_provider_messages(ProviderFormat::OpenAi);
    let results: Vec<(&str, &str)> = openai
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap(),
                m["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(results.len(), 4, "{openai}");
    assert_eq!(
        results[0],
        ("call_1", "200 OK"),
        "the retry's latest outcome"
    );
    assert_ne!(
        results[1].0, results[2].0,
        "toolu_01.A and toolu_01_A stay two ids"
    );
    assert_eq!(results[2].0, "toolu_01_A");
    assert!(!results[3].0.is_empty(), "an empty id gets one");
    for format in ProviderFormat::ALL {
        assert!(
            check_request(&ctx.to_provider_messages(format), format).is_empty(),
            "{}",
            format.as_str()
        );
    }
}

/// Compaction that folds a question folds its whole turn: what is kept
/// never starts with a tool exchange whose question is gone.
#[test]
fn compaction_never_keeps_a_tool_exchange_without_its_question() {
    let mut s = session("fold");
    for turn in 0..12 {
        s.record(
            "user_input",
            json!({"text": format!("question {turn} {}", "words ".repeat(60))}),
            None,
        )
        .unwrap();
        tool_exchange(
            &mut s,
            "read_logs",
            json!({"turn": turn}),
            &"line ".repeat(150),
        );
        s.record(
            "assistant_output",
            json!({"content": format!("answer {turn}")}),
            None,
        )
        .unwrap();
    }
    s.record("user_input", json!({"text": "and now?"}), None)
        .unwrap();
    let compiler = ContextCompiler::with_layout(
        vec![
            Rc::new(HistorySelector::new(0, usize::MAX)),
            Rc::new(Compactor::new()),
        ],
        Layout::Zoned,
    );
    let ctx = block_on(compiler.compile(&mut s, 3000, "You are an SRE.")).unwrap();
    assert!(ctx.summary.is_some(), "it compacted");
    let first = ctx.history.iter().find(|m| m.role != "system").unwrap();
    assert_eq!(
        first.role,
        "user",
        "{:?}",
        ctx.history.iter().map(|m| &m.role).collect::<Vec<_>>()
    );
}

/// An endpoint that restarts its call ids every turn (llama.cpp, Kimi and
/// some Grok endpoints send `call_0` each time): each call is answered by
/// its own result, the newest keeps the provider's id, earlier ones are
/// renamed, and every format passes its own check.
#[test]
fn a_call_id_reused_every_turn_pairs_each_call_with_its_own_result() {
    let mut s = session("reused");
    for (turn, (tool, result)) in [
        ("read_logs", "disk full"),
        ("restart", "restarted"),
        ("status", "healthy"),
    ]
    .iter()
    .enumerate()
    {
        s.record("user_input", json!({"text": format!("step {turn}")}), None)
            .unwrap();
        s.record(
            "tool_call",
            json!({"tool_name": tool, "call_id": "call_0", "arguments": {"turn": turn}}),
            None,
        )
        .unwrap();
        if turn == 1 {
            // A retry: a second outcome with no new call answers the same call.
            s.record(
                "tool_error",
                json!({"tool": tool, "call_id": "call_0", "error": "busy"}),
                None,
            )
            .unwrap();
        }
        s.record(
            "tool_success",
            json!({"tool": tool, "call_id": "call_0", "result": result}),
            None,
        )
        .unwrap();
        s.record(
            "assistant_output",
            json!({"content": format!("done {turn}")}),
            None,
        )
        .unwrap();
    }
    let ctx = zoned_compile(&mut s, vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
    let openai = ctx.to_provider_messages(ProviderFormat::OpenAi);
    let messages = openai.as_array().unwrap();
    let mut pairs = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for call in m["tool_calls"].as_array().into_iter().flatten() {
            let id = call["id"].as_str().unwrap();
            let result = messages[i + 1..]
                .iter()
                .find(|r| r["role"] == "tool" && r["tool_call_id"] == id)
                .unwrap_or_else(|| panic!("{id} unanswered: {openai}"));
            pairs.push((
                id.to_string(),
                call["function"]["name"].as_str().unwrap().to_string(),
                result["content"].as_str().unwrap().to_string(),
            ));
        }
    }
    let named: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(_, n, r)| (n.as_str(), r.as_str()))
        .collect();
    assert_eq!(
        named,
        [
            ("read_logs", "disk full"),
            ("restart", "restarted"),
            ("status", "healthy")
        ],
        "{openai}"
    );
    assert_eq!(
        pairs[0].0, "call_0",
        "the first call keeps the provider's id"
    );
    assert!(pairs[1].0 != pairs[2].0 && pairs[1].0 != "call_0" && pairs[2].0 != "call_0");
    for format in ProviderFormat::ALL {
        let request = ctx.to_provider_messages(format);
        let broken = check_request(&request, format);
        assert!(broken.is_empty(), "{}: {broken:?}", format.as_str());
    }
    // The same ids every compile, and after another call under the same
    // id: what was sent is sent again as it was (the prompt cache's prefix).
    let again = zoned_compile(&mut s, vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
    assert_eq!(again.to_provider_messages(ProviderFormat::OpenAi), openai);
    s.record("user_input", json!({"text": "one more"}), None)
        .unwrap();
    s.record(
        "tool_call",
        json!({"tool_name": "status", "call_id": "call_0", "arguments": {}}),
        None,
    )
    .unwrap();
    let later = zoned_compile(&mut s, vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
    let later = later.to_provider_messages(ProviderFormat::OpenAi);
    let sent = messages.len();
    assert_eq!(later.as_array().unwrap()[..sent - 1], messages[..sent - 1]);
}
