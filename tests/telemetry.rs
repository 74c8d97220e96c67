//! Tracing (issue 51): a run's spans (turn, compiles, model calls, tool
//! calls), their names, kinds, parents and GenAI attributes; no text
//! unless content is asked for, and then redacted; failures on the spans;
//! a compiler's own tracer.
mod common;

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, session};
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::runner::{run_compiled, Agent, Model, ModelReply, ModelRequest, RunOptions};
use context_compiler::telemetry::{Attribute, Attributes, Span, SpanKind, TraceOptions, Tracer};
use context_compiler::tools::{
    AbortSignal, ToolBridge, ToolFailure, ToolInterruptHandler, ToolInterruptOptions, ToolOutput,
};
use context_compiler::{
    ContextCompiler, Error, ErrorCode, HistorySelector, Layout, Processor, ProviderFormat, Result,
    Session,
};
use serde_json::{json, Value};

/// One recorded span.
#[derive(Debug, Clone)]
struct Recorded {
    name: String,
    kind: SpanKind,
    parent: Option<usize>,
    attributes: Vec<(String, Attribute)>,
    failed: Option<(String, String)>,
    ended: bool,
}

impl Recorded {
    fn get(&self, key: &str) -> Option<&Attribute> {
        self.attributes
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
    fn text(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Attribute::Text(t) => Some(t.clone()),
            _ => None,
        }
    }
    fn int(&self, key: &str) -> Option<i64> {
        match self.get(key)? {
            Attribute::Int(i) => Some(*i),
            _ => None,
        }
    }
}

#[derive(Default)]
struct Recorder {
    spans: RefCell<Vec<Recorded>>,
}

struct RecordedSpan {
    index: usize,
    recorder: Rc<Recorder>,
}

impl Span for RecordedSpan {
    fn set_attributes(&self, attributes: Attributes) {
        let mut spans = self.recorder.spans.borrow_mut();
        spans[self.index]
            .attributes
            .extend(attributes.into_iter().map(|(k, v)| (k.to_string(), v)));
    }
    fn fail(&self, error_type: &str, message: &str) {
        self.recorder.spans.borrow_mut()[self.index].failed =
            Some((error_type.to_string(), message.to_string()));
    }
    fn end(&self) {
        let mut spans = self.recorder.spans.borrow_mut();
        assert!(!spans[self.index].ended, "a span is ended once");
        spans[self.index].ended = true;
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

struct RecordingTracer(Rc<Recorder>);

impl Tracer for RecordingTracer {
    fn start_span(
        &self,
        name: &str,
        kind: SpanKind,
        attributes: Attributes,
        parent: Option<&dyn Span>,
    ) -> Box<dyn Span> {
        let parent = parent.map(|p| {
            p.as_any()
                .downcast_ref::<RecordedSpan>()
                .expect("parents are this tracer's spans")
                .index
        });
        let mut spans = self.0.spans.borrow_mut();
        spans.push(Recorded {
            name: name.to_string(),
            kind,
            parent,
            attributes: attributes
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            failed: None,
            ended: false,
        });
        Box::new(RecordedSpan {
            index: spans.len() - 1,
            recorder: self.0.clone(),
        })
    }
}

struct Scripted(Box<dyn Fn(usize) -> Result<ModelReply>>);

#[async_trait(?Send)]
impl Model for Scripted {
    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply> {
        (self.0)(request.step)
    }
}

/// `lookup` answers with a line holding a secret; `boom` fails.
struct Bridge;

#[async_trait(?Send)]
impl ToolBridge for Bridge {
    async fn execute(
        &self,
        name: &str,
        _arguments: &Value,
        _signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        match name {
            "lookup" => Ok(ToolOutput::Text(format!(
                "found it; token={SECRET} in the config"
            ))),
            _ => Err(ToolFailure::Failed("boom".into())),
        }
    }
}

const SECRET: &str = "ghp_0123456789abcdef0123456789ABCDEFabcd";

fn agent(model: Scripted) -> Agent {
    let session: Rc<RefCell<Session>> = Rc::new(RefCell::new(session("traced")));
    let handler = ToolInterruptHandler::new(
        Rc::new(Bridge),
        PerceptionAligner::default(),
        session.clone(),
        common::StepClock::new(1_700_000_000_000.0, 1.0),
        ToolInterruptOptions::default(),
    );
    Agent {
        session,
        compiler: ContextCompiler::with_layout(
            vec![Rc::new(HistorySelector::default()) as Rc<dyn Processor>],
            Layout::Zoned,
        ),
        model: Rc::new(model),
        tools: Some(Rc::new(handler)),
        guard: None,
    }
}

/// Calls `lookup` and `boom` (with ids) on the first step, then answers.
fn calling_model() -> Scripted {
    Scripted(Box::new(|step| {
        if step == 0 {
            let mut reply = ModelReply::from_json(&json!({
                "content": "Checking.",
                "toolCalls": [
                    { "id": "call_1", "name": "lookup", "arguments": { "q": "config", "token": SECRET } },
                    { "id": "call_2", "name": "boom", "arguments": {} }
                ],
                "usage": { "inputTokens": 120, "outputTokens": 9, "cachedInputTokens": 100 }
            }))?;
            reply.text = "Checking.".into();
            Ok(reply)
        } else {
            ModelReply::from_json(&json!({
                "content": "Done.",
                "usage": { "inputTokens": 150, "outputTokens": 3 }
            }))
        }
    }))
}

fn traced_options(recorder: &Rc<Recorder>, content: bool) -> RunOptions {
    let mut options = RunOptions::new(4000, "You are terse.");
    options.compile.model = Some("gpt-4.1".into());
    options.tools = context_compiler::runner::ToolSpec::parse_list(&json!([
        { "name": "lookup" },
        { "name": "boom" }
    ]))
    .expect("tools");
    options.trace = Some(TraceOptions {
        content,
        ..TraceOptions::new(Rc::new(RecordingTracer(recorder.clone())))
    });
    options
}

fn names(spans: &[Recorded]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn a_run_emits_a_turn_with_compiles_model_calls_and_tool_calls_under_it() {
    let recorder = Rc::new(Recorder::default());
    let agent = agent(calling_model());
    let input = format!("Find the config, my key is {SECRET}");
    let result = block_on(run_compiled(
        &input,
        &agent,
        &traced_options(&recorder, false),
    ))
    .expect("the run");
    assert_eq!(result.steps.len(), 2);
    let spans = recorder.spans.borrow();
    assert_eq!(
        names(&spans),
        [
            "invoke_agent",
            "compile_context",
            "chat gpt-4.1",
            "execute_tool lookup",
            "execute_tool boom",
            "compile_context",
            "chat gpt-4.1",
        ]
    );
    assert!(spans.iter().all(|s| s.ended), "every span ends");
    let turn = &spans[0];
    assert_eq!(turn.parent, None);
    assert!(
        spans[1..].iter().all(|s| s.parent == Some(0)),
        "all under the turn"
    );
    assert_eq!(turn.kind, SpanKind::Internal);
    assert_eq!(spans[2].kind, SpanKind::Client);
    assert_eq!(
        turn.text("gen_ai.operation.name").as_deref(),
        Some("invoke_agent")
    );
    assert_eq!(
        turn.text("gen_ai.conversation.id").as_deref(),
        Some(result.session_id.as_str())
    );
    assert_eq!(turn.int("agent_context_compiler.budget"), Some(4000));
    assert_eq!(turn.int("agent_context_compiler.steps"), Some(2));
    assert_eq!(
        turn.text("agent_context_compiler.stop_reason").as_deref(),
        Some("answered")
    );
    assert_eq!(turn.int("gen_ai.usage.input_tokens"), Some(270));
    assert_eq!(turn.int("gen_ai.usage.output_tokens"), Some(12));

    let compile = &spans[1];
    assert_eq!(
        compile.int("agent_context_compiler.tokens"),
        Some(result.steps[0].budget_used as i64)
    );
    let zones = ["system", "persistent", "working", "recent"]
        .iter()
        .map(|z| {
            compile
                .int(&format!("agent_context_compiler.zone.{z}"))
                .expect("zone")
        })
        .sum::<i64>();
    assert_eq!(zones, result.steps[0].budget_used as i64);
    assert_eq!(
        compile
            .text("agent_context_compiler.compaction_level")
            .as_deref(),
        Some("none")
    );
    assert_eq!(
        compile
            .text("agent_context_compiler.cache.miss_cause")
            .as_deref(),
        Some("first")
    );
    assert!(
        spans[5]
            .int("agent_context_compiler.cache.prefix_tokens")
            .unwrap_or(0)
            > 0
    );

    let chat = &spans[2];
    assert_eq!(chat.text("gen_ai.operation.name").as_deref(), Some("chat"));
    assert_eq!(
        chat.text("gen_ai.request.model").as_deref(),
        Some("gpt-4.1")
    );
    assert_eq!(chat.int("gen_ai.usage.input_tokens"), Some(120));
    assert_eq!(chat.int("gen_ai.usage.cache_read.input_tokens"), Some(100));
    assert_eq!(chat.int("agent_context_compiler.tool_calls"), Some(2));

    let lookup = &spans[3];
    assert_eq!(
        lookup.text("gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(lookup.text("gen_ai.tool.name").as_deref(), Some("lookup"));
    assert_eq!(
        lookup.text("gen_ai.tool.call.id").as_deref(),
        Some("call_1")
    );
    assert_eq!(lookup.failed, None);
    let boom = &spans[4];
    assert_eq!(boom.text("gen_ai.tool.call.id").as_deref(), Some("call_2"));
    assert_eq!(
        boom.failed.as_ref().map(|f| f.0.as_str()),
        Some("tool_error"),
        "a failed tool call marks its span failed"
    );

    // No text by default: no messages, reply, arguments or results.
    for span in spans.iter() {
        for (key, value) in &span.attributes {
            assert!(
                ![
                    "gen_ai.input.messages",
                    "gen_ai.output.messages",
                    "gen_ai.tool.call.arguments",
                    "gen_ai.tool.call.result"
                ]
                .contains(&key.as_str()),
                "{} carries {key} without content",
                span.name
            );
            if let Attribute::Text(t) = value {
                assert!(
                    !t.contains("Find the config") && !t.contains("found it"),
                    "{key}: {t}"
                );
            }
        }
    }
}

#[test]
fn content_is_carried_when_asked_and_redacted() {
    let recorder = Rc::new(Recorder::default());
    let agent = agent(calling_model());
    let input = format!("Find the config, my key is {SECRET}");
    block_on(run_compiled(
        &input,
        &agent,
        &traced_options(&recorder, true),
    ))
    .expect("the run");
    let spans = recorder.spans.borrow();
    let chat = &spans[2];
    let sent = chat.text("gen_ai.input.messages").expect("messages");
    let sent: Value = serde_json::from_str(&sent).expect("JSON");
    let user = sent
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .expect("a user message");
    assert!(user["parts"][0]["content"]
        .as_str()
        .is_some_and(|t| t.contains("Find the config")));
    let reply = chat.text("gen_ai.output.messages").expect("reply");
    assert!(
        reply.contains("Checking.") && reply.contains("call_1"),
        "{reply}"
    );
    let lookup = &spans[3];
    assert!(lookup
        .text("gen_ai.tool.call.arguments")
        .is_some_and(|a| a.contains("config")));
    assert!(lookup
        .text("gen_ai.tool.call.result")
        .is_some_and(|r| r.contains("found it")));
    let all: String = spans
        .iter()
        .flat_map(|s| s.attributes.iter())
        .filter_map(|(_, v)| match v {
            Attribute::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert!(!all.contains(SECRET), "no secret on any span");
    assert!(
        all.contains("[REDACTED"),
        "the secrets were redacted, not dropped"
    );
}

#[test]
fn a_failed_model_call_fails_its_span_and_the_turn() {
    let recorder = Rc::new(Recorder::default());
    let agent = agent(Scripted(Box::new(|_| {
        Err(Error::new(ErrorCode::ModelFailed, "the provider is down"))
    })));
    let error = block_on(run_compiled(
        "hi",
        &agent,
        &traced_options(&recorder, false),
    ))
    .expect_err("the model fails");
    assert_eq!(error.code(), ErrorCode::ModelFailed);
    let spans = recorder.spans.borrow();
    assert_eq!(
        names(&spans),
        ["invoke_agent", "compile_context", "chat gpt-4.1"]
    );
    assert!(spans.iter().all(|s| s.ended));
    for span in [&spans[0], &spans[2]] {
        let (code, message) = span.failed.clone().expect("failed");
        assert_eq!(code, "MODEL_FAILED");
        assert!(message.contains("the provider is down"));
    }
    assert_eq!(spans[1].failed, None);
}

#[test]
fn a_compilers_own_tracer_traces_its_compiles_alone() {
    let recorder = Rc::new(Recorder::default());
    let mut agent = agent(calling_model());
    agent.compiler = agent
        .compiler
        .with_tracer(Rc::new(RecordingTracer(recorder.clone())));
    let mut options = RunOptions::new(4000, "You are terse.");
    options.tools = context_compiler::runner::ToolSpec::parse_list(&json!([
        { "name": "lookup" }, { "name": "boom" }
    ]))
    .expect("tools");
    block_on(run_compiled("hi", &agent, &options)).expect("the run");
    {
        let spans = recorder.spans.borrow();
        assert_eq!(names(&spans), ["compile_context", "compile_context"]);
        assert!(spans.iter().all(|s| s.parent.is_none() && s.ended));
    }

    // Compiling directly is traced too; a failed compile fails its span.
    let mut direct = session("direct");
    let compiler =
        ContextCompiler::new(vec![]).with_tracer(Rc::new(RecordingTracer(recorder.clone())));
    block_on(compiler.compile(&mut direct, 500, "sys")).expect("compiles");
    let bad = context_compiler::CompileOptions {
        reserve_output: 10_000,
        ..context_compiler::CompileOptions::new("sys")
    };
    assert!(block_on(compiler.compile_with(&mut direct, 500, &bad)).is_err());
    let spans = recorder.spans.borrow();
    assert_eq!(spans.len(), 4);
    assert_eq!(spans[2].int("agent_context_compiler.budget"), Some(500));
    assert!(spans[3].failed.is_some() && spans[3].ended);
}

/// The spans carry what the GenAI conventions ask of them: the provider
/// (from the run's format, or named), the agent's name, and what each
/// provider's response says of itself (id, model, finish reasons).
#[test]
fn spans_name_the_provider_the_agent_and_what_each_response_said() {
    for (format, named, provider) in [
        (Some(ProviderFormat::OpenAi), None, Some("openai")),
        (Some(ProviderFormat::Anthropic), None, Some("anthropic")),
        (Some(ProviderFormat::Gemini), None, Some("gcp.gemini")),
        (Some(ProviderFormat::AiSdk), None, None),
        (
            Some(ProviderFormat::AiSdk),
            Some("aws.bedrock"),
            Some("aws.bedrock"),
        ),
    ] {
        let recorder = Rc::new(Recorder::default());
        let mut options = traced_options(&recorder, false);
        options.compile.format = format;
        if let Some(trace) = &mut options.trace {
            trace.provider = named.map(str::to_string);
            trace.agent_name = Some("sre".into());
        }
        // A Chat Completion, then an Anthropic message: each read for its id, model and stop.
        let model = Scripted(Box::new(|step| {
            ModelReply::from_json(&if step == 0 {
                json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1-2025-04-14",
                       "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}}]})
            } else {
                json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                       "content": [{"type": "text", "text": "Done."}]})
            })
        }));
        block_on(run_compiled("Check the config", &agent(model), &options)).unwrap();
        let spans = recorder.spans.borrow();
        assert_eq!(spans[0].name, "invoke_agent sre");
        assert_eq!(spans[0].text("gen_ai.agent.name").as_deref(), Some("sre"));
        let chats: Vec<&Recorded> = spans
            .iter()
            .filter(|s| s.name.starts_with("chat"))
            .collect();
        assert_eq!(chats.len(), 2);
        for span in [&spans[0], chats[0], chats[1]] {
            assert_eq!(
                span.text("gen_ai.provider.name").as_deref(),
                provider,
                "{}",
                span.name
            );
        }
        assert_eq!(
            chats[0].text("gen_ai.response.id").as_deref(),
            Some("chatcmpl-1")
        );
        assert_eq!(
            chats[0].text("gen_ai.response.model").as_deref(),
            Some("gpt-4.1-2025-04-14")
        );
        assert!(
            matches!(chats[0].get("gen_ai.response.finish_reasons"), Some(Attribute::Texts(r)) if r == &["tool_calls"])
        );
        assert_eq!(
            chats[1].text("gen_ai.response.id").as_deref(),
            Some("msg_2")
        );
        assert!(
            matches!(chats[1].get("gen_ai.response.finish_reasons"), Some(Attribute::Texts(r)) if r == &["end_turn"])
        );
    }
}

/// A model's error can quote the request (a key in a header, a token in a
/// prompt): the `chat` and `invoke_agent` spans' status carries it
/// redacted, without `traceContent` too, and the caller's error is whole.
#[test]
fn a_model_error_reaches_span_status_redacted() {
    let recorder = Rc::new(Recorder::default());
    let agent = agent(Scripted(Box::new(|_| {
        Err(Error::new(
            ErrorCode::ModelFailed,
            format!("401 from the provider: invalid key {SECRET}"),
        ))
    })));
    let error = block_on(run_compiled(
        "hi",
        &agent,
        &traced_options(&recorder, false),
    ))
    .expect_err("the model fails");
    assert!(error.message().contains("401 from the provider"));
    let spans = recorder.spans.borrow();
    let failed: Vec<_> = spans.iter().filter_map(|s| s.failed.clone()).collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    for (code, message) in failed {
        assert_eq!(code, "MODEL_FAILED");
        assert!(message.contains("401 from the provider"), "{message}");
        assert!(!message.contains(SECRET), "{message}");
        assert!(message.contains("[REDACTED"), "{message}");
    }
}
