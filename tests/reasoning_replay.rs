//! Reasoning the providers ask back in a tool loop, recorded with the turn
//! and replayed in their own format: Anthropic's signed thinking blocks
//! first in the assistant message, Responses' reasoning items before the
//! turn's calls, Gemini's thought signature on its call.
mod common;

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, session};
use context_compiler::runner::{run_compiled, Agent, Model, ModelReply, ModelRequest, RunOptions};
use context_compiler::tools::{
    AbortSignal, ToolBridge, ToolFailure, ToolInterruptOptions, ToolOutput,
};
use context_compiler::working_context::checker::check_request;
use context_compiler::{
    ContextCompiler, HistorySelector, Layout, ProviderFormat, Result, TokenCounter,
};
use serde_json::{json, Value};

/// Answers with `first` (a provider's own response), then with text; keeps
/// each request in `format`.
struct Scripted {
    first: Value,
    format: ProviderFormat,
    seen: RefCell<Vec<Value>>,
}

#[async_trait(?Send)]
impl Model for Scripted {
    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply> {
        self.seen
            .borrow_mut()
            .push(request.context.to_provider_messages(self.format));
        if request.step == 0 {
            ModelReply::from_json(&self.first)
        } else {
            Ok(ModelReply::text("The disk is full."))
        }
    }
}

struct Df;

#[async_trait(?Send)]
impl ToolBridge for Df {
    async fn execute(
        &self,
        _name: &str,
        _arguments: &Value,
        _signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Text("/data 100% used".into()))
    }
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
    let handler = common::tool_handler(Rc::new(Df), &shared, ToolInterruptOptions::default());
    let model = Rc::new(Scripted {
        first,
        format,
        seen: RefCell::new(Vec::new()),
    });
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
