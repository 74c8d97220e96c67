//! Reasoning the providers ask back in a tool loop, recorded with the turn
//! and replayed in their own format: Anthropic's signed thinking blocks
//! first in the assistant message, Responses' reasoning items before the
//! turn's calls, Gemini's thought signature on its call.
mod common;

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use common::first_reply::FirstReply;
use common::{block_on, session};
use context_compiler::runner::{run_compiled, Agent, Model, ModelReply, ModelRequest, RunOptions};
use context_compiler::tools::{ToolInterruptOptions, ToolOutput};
use context_compiler::working_context::checker::check_request;
use context_compiler::{
    CompileOptions, ContextCompiler, HistorySelector, Layout, ProviderFormat, Result, TokenCounter,
};
use serde_json::{json, Value};

/// A disk-usage tool's answer.
fn df() -> ToolOutput {
    ToolOutput::Text("/data 100% used".into())
}

/// The data of the session's first `tool_call` event.
fn first_call(shared: &RefCell<context_compiler::Session>) -> Value {
    shared
        .borrow()
        .event_log()
        .events()
        .iter()
        .find(|e| e.kind == "tool_call")
        .map(|e| e.data.clone())
        .expect("call")
}

/// The second request of a run whose first reply is `first`.
fn second_request(
    first: Value,
    format: ProviderFormat,
) -> (Value, Rc<RefCell<context_compiler::Session>>) {
    let shared = Rc::new(RefCell::new(session("reasoning")));
    let handler = common::tool_handler(
        Rc::new(common::FixedBridge(df)),
        &shared,
        ToolInterruptOptions::default(),
    );
    let model = Rc::new(FirstReply::new(first, format));
    let agent = Agent {
        session: shared.clone(),
        compiler: ContextCompiler::with_layout(
            vec![Rc::new(HistorySelector::default())],
            Layout::Zoned,
        ),
        model: model.clone(),
        tools: Some(Rc::new(handler)),
        guard: None,
    };
    block_on(run_compiled(
        "Why did the job fail?",
        &agent,
        &RunOptions::new(4000, "You are an SRE."),
    ))
    .expect("run");
    let request = model.seen.borrow()[1].clone();
    let broken = check_request(&request, format);
    assert!(broken.is_empty(), "{broken:?}");
    (request, shared)
}

#[test]
fn anthropic_thinking_goes_back_first_in_its_assistant_message() {
    let thinking = json!({"type": "thinking", "thinking": "Check the disk.", "signature": "EqQB"});
    let (request, _) = second_request(
        json!({"type": "message", "role": "assistant", "content": [
            thinking.clone(),
            {"type": "tool_use", "id": "toolu_1", "name": "df", "input": {}}
        ]}),
        ProviderFormat::Anthropic,
    );
    let messages = request["messages"].as_array().expect("messages");
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("assistant");
    assert_eq!(assistant["content"][0], thinking);
    assert_eq!(assistant["content"][1]["type"], "tool_use");
}

#[test]
fn responses_reasoning_items_go_back_before_the_calls() {
    let item =
        json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"});
    let (request, _) = second_request(
        json!({"object": "response", "output": [
            item.clone(),
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "df", "arguments": "{}"}
        ]}),
        ProviderFormat::OpenAiResponses,
    );
    let input = request["input"].as_array().expect("input");
    let at = input
        .iter()
        .position(|i| i == &item)
        .expect("the reasoning item is sent back");
    assert_eq!(input[at + 1]["type"], "function_call");
}

#[test]
fn gemini_thought_signatures_go_back_on_their_calls() {
    let (request, shared) = second_request(
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "df", "args": {}}, "thoughtSignature": "CiQB"}
        ]}}]}),
        ProviderFormat::Gemini,
    );
    let contents = request["contents"].as_array().expect("contents");
    let model_turn = contents
        .iter()
        .find(|c| c["role"] == "model")
        .expect("model turn");
    assert_eq!(model_turn["parts"][0]["thoughtSignature"], "CiQB");
    let call = first_call(&shared);
    assert_eq!(call["thought_signature"], "CiQB");
}

#[test]
fn reasoning_stays_out_of_other_formats() {
    let (request, shared) = second_request(
        json!({"type": "message", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "Check the disk.", "signature": "EqQB"},
            {"type": "tool_use", "id": "toolu_1", "name": "df", "input": {}}
        ]}),
        ProviderFormat::OpenAi,
    );
    assert!(!request.to_string().contains("EqQB"));
    // It is recorded with the turn's first call (the reply had no text).
    let call = first_call(&shared);
    assert_eq!(call["reasoning"]["format"], "anthropic");
}

/// A zoned compile of `s` at a roomy budget.
fn compile(s: &mut context_compiler::Session) -> context_compiler::WorkingContext {
    let compiler =
        ContextCompiler::with_layout(vec![Rc::new(HistorySelector::default())], Layout::Zoned);
    block_on(compiler.compile(s, 4000, "You are an SRE.")).expect("compile")
}

#[test]
fn replayed_reasoning_is_counted_and_only_the_current_turns_is_sent() {
    let thinking = "Check the disk first, then the quota. ".repeat(20);
    let (_, shared) = second_request(
        json!({"type": "message", "role": "assistant", "content": [
            {"type": "thinking", "thinking": thinking, "signature": "EqQB"},
            {"type": "tool_use", "id": "toolu_1", "name": "df", "input": {}}
        ]}),
        ProviderFormat::Anthropic,
    );
    let mut s = shared.borrow_mut();
    // In the turn: sent, and counted in what the context holds.
    let ctx = compile(&mut s);
    let sent = ctx.to_provider_messages(ProviderFormat::Anthropic);
    assert!(sent.to_string().contains("EqQB"));
    assert_eq!(
        ctx.token_count,
        ctx.exact_token_count(&context_compiler::DefaultTokenCounter)
    );
    let with_reasoning = ctx.token_count;
    // A new user input starts a new turn: the last one's thinking is not sent
    // again, nor counted.
    s.record("user_input", json!({"text": "ok"}), None)
        .expect("record");
    let ctx = compile(&mut s);
    let sent = ctx.to_provider_messages(ProviderFormat::Anthropic);
    assert!(!sent.to_string().contains("EqQB"), "{sent}");
    let reasoning_alone = context_compiler::DefaultTokenCounter.count(&thinking);
    assert!(
        ctx.token_count + reasoning_alone <= with_reasoning + 20,
        "{} then {} (thinking alone {reasoning_alone})",
        with_reasoning,
        ctx.token_count
    );
    assert!(check_request(&sent, ProviderFormat::Anthropic).is_empty());
}

/// Thinks `thinking` and calls `df` for `steps` replies, then answers; keeps
/// every request in `format`.
struct Thinker {
    thinking: String,
    steps: usize,
    format: ProviderFormat,
    seen: RefCell<Vec<Value>>,
}

#[async_trait(?Send)]
impl Model for Thinker {
    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply> {
        self.seen
            .borrow_mut()
            .push(request.context.to_provider_messages(self.format));
        if request.step < self.steps {
            ModelReply::from_json(&json!({"type": "message", "role": "assistant", "content": [
                {"type": "thinking", "thinking": format!("{} (step {})", self.thinking, request.step), "signature": format!("sig{}", request.step)},
                {"type": "tool_use", "id": format!("toolu_{}", request.step), "name": "df", "input": {}}
            ]}))
        } else {
            Ok(ModelReply::text("The disk is full."))
        }
    }
}

/// Runs a thinking tool loop of `steps` steps at `budget`, rendering each
/// request in `format`; the requests and the session.
fn thinking_loop(
    thinking: &str,
    steps: usize,
    budget: u64,
    format: ProviderFormat,
) -> (Vec<Value>, Rc<RefCell<context_compiler::Session>>) {
    let shared = Rc::new(RefCell::new(session("thinking")));
    let handler = common::tool_handler(
        Rc::new(common::FixedBridge(df)),
        &shared,
        ToolInterruptOptions::default(),
    );
    let model = Rc::new(Thinker {
        thinking: thinking.to_string(),
        steps,
        format,
        seen: RefCell::new(Vec::new()),
    });
    let agent = Agent {
        session: shared.clone(),
        compiler: ContextCompiler::with_layout(
            vec![
                Rc::new(HistorySelector::new(1, usize::MAX)),
                Rc::new(context_compiler::Compactor::default()),
            ],
            Layout::Zoned,
        ),
        model: model.clone(),
        tools: Some(Rc::new(handler)),
        guard: None,
    };
    let mut options = RunOptions::new(budget, "You are an SRE.");
    options.compile.format = Some(format);
    options.max_steps = steps + 1;
    let run = block_on(run_compiled(
        "Why did the nightly job fail on db-primary?",
        &agent,
        &options,
    ))
    .expect("run");
    assert!(run.within_budget);
    let seen = model.seen.borrow().clone();
    (seen, shared)
}

/// Reasoning is the first thing to go under pressure, never the question:
/// a 13-step Anthropic thinking loop at 16k (about 1.6k tokens of thinking
/// a step) keeps the question in every request; signed thinking is sent
/// whole or not at all, the oldest step's first, and every request passes
/// the checker.
#[test]
fn under_pressure_reasoning_goes_before_the_question() {
    let thinking =
        "The disk on db-primary may be full; check df, then the quota, then the backups. "
            .repeat(80);
    let (requests, _) = thinking_loop(&thinking, 13, 16_000, ProviderFormat::Anthropic);
    assert_eq!(requests.len(), 14);
    let mut dropped_some = false;
    for (i, request) in requests.iter().enumerate() {
        let text = request.to_string();
        assert!(
            text.contains("Why did the nightly job fail on db-primary?"),
            "request {i} lost the question"
        );
        assert!(
            check_request(request, ProviderFormat::Anthropic).is_empty(),
            "request {i}"
        );
        // Whole blocks only: a block sent is as recorded, with its signature.
        let blocks: Vec<&Value> = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().into_iter().flatten())
            .filter(|b| b["type"] == "thinking")
            .collect();
        for b in &blocks {
            assert!(
                b["thinking"].as_str().unwrap().starts_with(&thinking),
                "cut: request {i}"
            );
            assert!(b["signature"].as_str().unwrap().starts_with("sig"));
        }
        // The newest step's thinking stays while any is sent; older go first.
        let steps: Vec<usize> = blocks
            .iter()
            .map(|b| b["signature"].as_str().unwrap()[3..].parse().unwrap())
            .collect();
        if i > 0 && steps.len() < i {
            dropped_some = true;
            if let Some(&newest) = steps.last() {
                assert_eq!(newest, i - 1, "request {i}: {steps:?}");
            }
            assert!(
                steps.windows(2).all(|w| w[1] == w[0] + 1),
                "request {i}: the oldest go first: {steps:?}"
            );
        }
    }
    assert!(dropped_some, "the budget made the loop drop reasoning");
}

/// Reasoning is counted only where the format sends it: one 20k-token
/// thinking block does not push the question out of an OpenAI request,
/// which never carries it.
#[test]
fn reasoning_is_not_counted_in_a_format_that_does_not_send_it() {
    let thinking = "word ".repeat(80_000);
    for format in [ProviderFormat::OpenAi, ProviderFormat::Anthropic] {
        let (requests, _) = thinking_loop(&thinking, 1, 16_000, format);
        let last = requests.last().unwrap().to_string();
        assert!(
            last.contains("Why did the nightly job fail on db-primary?"),
            "{}",
            format.as_str()
        );
        assert!(
            last.contains("/data 100% used"),
            "{}: the tool result stays",
            format.as_str()
        );
        assert!(
            !last.contains("word word word"),
            "{}: too big to send",
            format.as_str()
        );
    }
}

/// The step under way keeps its thinking while the budget drops the turns
/// before it: Anthropic refuses a `tool_use` turn without its thinking
/// while thinking is on.
#[test]
fn the_current_step_keeps_its_thinking_when_older_turns_make_room() {
    let mut s = session("current-step");
    for i in 0..30 {
        common::exchange(
            &mut s,
            &format!("Turn {i}: what about module {i}? {}", "detail ".repeat(30)),
            &format!("Module {i} is fine. {}", "because ".repeat(30)),
        );
    }
    s.record("user_input", json!("Why did the nightly job fail?"), None)
        .unwrap();
    let thinking = json!({"format": "anthropic", "items": [{"type": "thinking", "thinking": "I should check the disk. ".repeat(40), "signature": "sig-current"}]});
    s.record(
        "tool_call",
        json!({"tool_name": "df", "arguments": {}, "call_id": "toolu_1", "reasoning": thinking}),
        None,
    )
    .unwrap();
    s.record(
        "tool_success",
        json!({"tool": "df", "call_id": "toolu_1", "result": "/data 100% used"}),
        None,
    )
    .unwrap();
    let compiler = ContextCompiler::with_layout(
        vec![Rc::new(HistorySelector::new(1, usize::MAX))],
        Layout::Zoned,
    );
    let mut options = CompileOptions::new("You are an SRE.");
    options.format = Some(ProviderFormat::Anthropic);
    let ctx = block_on(compiler.compile_with(&mut s, 1_500, &options)).unwrap();
    assert!(ctx.token_count <= 1_500);
    assert!(
        ctx.dropped
            .iter()
            .any(|d| d.section == context_compiler::working_context::Section::History),
        "older turns made room"
    );
    let request = ctx.to_provider_messages(ProviderFormat::Anthropic);
    let messages = request["messages"].as_array().unwrap();
    let step = &messages[messages.len() - 2];
    assert_eq!(step["role"], "assistant");
    assert_eq!(step["content"][0]["type"], "thinking", "{step}");
    assert_eq!(step["content"][0]["signature"], "sig-current");
    assert_eq!(check_request(&request, ProviderFormat::Anthropic), vec![]);
}
