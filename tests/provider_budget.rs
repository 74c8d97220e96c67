//! Budgets in the provider's tokens: the tools a request offers counted in
//! SYSTEM, room kept for the reply, and the correction a session derives
//! from the usage its model calls reported, tested with a scripted model
//! whose tokenizer is not the session's.
mod common;

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, session};
use context_compiler::runner::{run_compiled, Agent, Model, ModelReply, ModelRequest, RunOptions};
use context_compiler::tools::{
    request_tool_tokens, request_tools, ToolInterruptOptions, ToolOutput,
};
use context_compiler::{
    Compactor, CompileOptions, ContextCompiler, DefaultTokenCounter, ErrorCode, HistorySelector,
    Layout, ModelUsage, ProviderFormat, Session, TokenCounter, ToolSpec, DEFAULT_USAGE_MARGIN,
};
use serde_json::json;

fn zoned() -> ContextCompiler {
    ContextCompiler::with_layout(
        vec![
            Rc::new(HistorySelector::new(1, usize::MAX)),
            Rc::new(Compactor::default()),
        ],
        Layout::Zoned,
    )
}

/// Forty tools of ordinary size: a description and three typed arguments.
fn forty_tools() -> Vec<ToolSpec> {
    (0..40)
        .map(|i| {
            let mut spec = ToolSpec::new(
                format!("tool_{i}"),
                format!("Looks up record kind {i} in the inventory service and returns its fields"),
            );
            spec.parameters = json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "The record's id"},
                    "fields": {"type": "array", "items": {"type": "string"}},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                },
                "required": ["id"],
            });
            spec
        })
        .collect()
}

fn long_session(turns: usize) -> Session {
    let mut s = session("budget");
    for i in 0..turns {
        s.record(
            "user_input",
            json!({"text": format!("Question {i}: how is shipment {i} doing after the storm?")}),
            None,
        )
        .expect("record");
        s.record(
            "assistant_output",
            json!({"text": format!("Shipment {i} left the depot at {i}:00 and is on time. ").repeat(4)}),
            None,
        )
        .expect("record");
    }
    s
}

#[test]
fn the_tools_offered_are_counted_in_system_as_the_format_sends_them() {
    let s = long_session(120);
    let counter = DefaultTokenCounter;
    for format in ProviderFormat::ALL {
        let mut options = CompileOptions::new("You are a logistics assistant.");
        options.tools = forty_tools();
        options.format = Some(format);
        let ctx = block_on(zoned().compile_view(&s, 5000, &options))
            .expect("compile")
            .0;
        let tools = request_tool_tokens(&options.tools, format, &counter);
        assert!(tools > 1000, "{format:?}: forty tools cost {tools} tokens");
        assert_eq!(ctx.tool_tokens, tools, "{format:?}");
        assert!(
            ctx.zone_usage.system > tools,
            "{format:?}: tools are in SYSTEM"
        );
        // The whole request, messages and tools, in the session's tokens.
        let messages = ctx.exact_token_count(&counter) - tools;
        let field = counter.count(&request_tools(&options.tools, format).to_string());
        assert!(
            messages + field <= 5000,
            "{format:?}: messages {messages} + tools {field} over 5000"
        );
        assert!(ctx.token_count <= 5000, "{format:?}: {}", ctx.token_count);
    }
}

#[test]
fn tool_definitions_are_counted_when_no_tools_are_given() {
    let s = long_session(10);
    let mut options = CompileOptions::new("System.");
    options.tool_definitions = forty_tools()
        .iter()
        .map(|t| serde_json::to_value(t).expect("json"))
        .collect();
    let ctx = block_on(zoned().compile_view(&s, 8000, &options))
        .expect("compile")
        .0;
    assert_eq!(
        ctx.tool_tokens,
        request_tool_tokens(&forty_tools(), ProviderFormat::Plain, &DefaultTokenCounter)
    );
    // A single-system compile counts them too.
    let single = ContextCompiler::new(vec![Rc::new(HistorySelector::default())]);
    let mut options = CompileOptions::new("System.");
    options.tools = forty_tools();
    let ctx = block_on(single.compile_view(&s, 8000, &options))
        .expect("compile")
        .0;
    assert!(ctx.tool_tokens > 0);
    assert_eq!(ctx.token_count, ctx.exact_token_count(&DefaultTokenCounter));
    assert!(ctx.token_count <= 8000);
}

#[test]
fn reserve_output_keeps_room_for_the_reply() {
    let s = long_session(120);
    let mut options = CompileOptions::new("System.");
    options.reserve_output = 1500;
    // No compactor: the history fills what the budget leaves.
    let selector = ContextCompiler::with_layout(
        vec![Rc::new(HistorySelector::new(1, usize::MAX))],
        Layout::Zoned,
    );
    let ctx = block_on(selector.compile_view(&s, 4000, &options))
        .expect("compile")
        .0;
    let plan = ctx.budget_plan.expect("a plan");
    // Before any usage, the default counter's margin for text (2,500 / 1.17).
    assert_eq!(
        (
            plan.requested,
            plan.reserve_output,
            plan.content_margin,
            plan.target
        ),
        (4000, 1500, 364, 2136)
    );
    assert_eq!(ctx.budget, 2136);
    assert!(
        ctx.token_count <= 2136 && ctx.token_count > 1700,
        "{}",
        ctx.token_count
    );
    for reserve in [4000, 9000] {
        options.reserve_output = reserve;
        let e = block_on(zoned().compile_view(&s, 4000, &options)).expect_err("no room");
        assert_eq!(e.code(), ErrorCode::InvalidBudget);
    }
}

/// A provider's tokenizer that is not the session's: letters and digits in
/// pieces of three, every other visible character a token of its own, and
/// four tokens per message.
fn provider_tokens(text: &str) -> u64 {
    let mut tokens = 0u64;
    let mut run = 0u64;
    for c in text.chars() {
        if c.is_alphanumeric() {
            run += 1;
            continue;
        }
        tokens += run.div_ceil(3);
        run = 0;
        if !c.is_whitespace() {
            tokens += 1;
        }
    }
    tokens + run.div_ceil(3)
}

/// What the provider counts for a request: each message's content and
/// four tokens, and the tools field.
fn provider_request_tokens(request: &ModelRequest<'_>) -> u64 {
    let messages: u64 = request
        .context
        .to_messages()
        .iter()
        .map(|m| provider_tokens(&m.content) + 4)
        .sum();
    let tools = request_tools(request.tools, ProviderFormat::OpenAi);
    let tools = if tools.is_null() {
        0
    } else {
        provider_tokens(&tools.to_string())
    };
    messages + tools
}

/// A scripted model: a tool call on even steps, an answer on odd ones;
/// each reply reports the request's cost in the provider's tokens.
struct Scripted {
    requests: RefCell<Vec<u64>>,
}

#[async_trait(?Send)]
impl Model for Scripted {
    async fn respond(&self, request: ModelRequest<'_>) -> context_compiler::Result<ModelReply> {
        let input = provider_request_tokens(&request);
        self.requests.borrow_mut().push(input);
        let usage = json!({"prompt_tokens": input, "completion_tokens": 20});
        let reply = if request.step == 0 {
            json!({"content": null, "usage": usage,
                "tool_calls": [{"function": {"name": "inventory", "arguments": "{\"id\": \"A-7\"}"}}]})
        } else {
            json!({"content": "Shipment A-7 is on time; the storm delayed nothing.", "usage": usage})
        };
        ModelReply::from_json(&reply)
    }
}

/// An inventory tool's answer: twelve rows.
fn inventory() -> ToolOutput {
    ToolOutput::Json(json!({
        "id": "A-7",
        "rows": (0..12).map(|i| json!({"depot": format!("D-{i}"), "eta": format!("2026-11-{:02}T{i}:00", 1 + i % 28), "ok": i % 5 != 0})).collect::<Vec<_>>(),
    }))
}

#[test]
fn recorded_usage_keeps_requests_within_the_budget_in_the_provider_tokens() {
    let shared = Rc::new(RefCell::new(session("usage")));
    let handler = common::tool_handler(
        Rc::new(common::FixedBridge(inventory)),
        &shared,
        ToolInterruptOptions::default(),
    );
    let model = Rc::new(Scripted {
        requests: RefCell::new(Vec::new()),
    });
    let agent = Agent {
        session: shared.clone(),
        compiler: zoned(),
        model: model.clone(),
        tools: Some(Rc::new(handler)),
        guard: None,
    };
    let budget = 3000;
    let mut options = RunOptions::new(budget, "You are a logistics assistant. Answer briefly.");
    options.tools = forty_tools()[..6].to_vec();
    options
        .tools
        .push(ToolSpec::new("inventory", "Reads a shipment's rows"));
    options.compile.reserve_output = 300;
    for turn in 0..40 {
        let question =
            format!("Turn {turn}: where is shipment A-7 now, and which depots are late? ");
        block_on(run_compiled(&question.repeat(3), &agent, &options)).expect("run");
    }
    let requests = model.requests.borrow();
    assert_eq!(requests.len(), 80);
    // The first request cannot know the provider's count: from the second
    // on, each is within the budget less the reserve, in provider tokens.
    for (i, n) in requests.iter().enumerate().skip(1) {
        assert!(*n <= budget - 300, "request {i}: {n} provider tokens");
    }
    // The correction does not waste the budget either: the compactor keeps
    // a context below 80% of its target, and so do the provider's counts.
    let last = *requests.last().expect("requests");
    assert!(
        last as f64 >= 0.75 * (budget - 300) as f64,
        "last request {last}"
    );
    // Without the correction the provider's count would have been over.
    let uncorrected = shared.borrow().event_log().usage_correction();
    assert!(
        uncorrected.factor() > 1.2,
        "provider/session ratio {}",
        uncorrected.factor()
    );

    // A reloaded session compiles the same: the correction comes from its events.
    let original = shared.borrow();
    let reloaded = Session::import_json(
        &original.export_json(),
        common::StepClock::new(1.0, 1.0),
        Rc::new(DefaultTokenCounter),
        7,
    )
    .expect("import");
    let mut compile = options.compile.clone();
    compile.tools = options.tools.clone();
    let a = block_on(zoned().compile_view(&original, budget, &compile))
        .expect("compile")
        .0;
    let b = block_on(zoned().compile_view(&reloaded, budget, &compile))
        .expect("compile")
        .0;
    assert_eq!(a.budget_plan, b.budget_plan);
    assert_eq!(a.to_messages(), b.to_messages());
    let plan = a.budget_plan.expect("plan");
    // Every report is applied but those of the shortest requests, which
    // the tools' fixed cost takes above the bounds (explained, not applied
    // as a ratio); none is rejected.
    assert!(plan.usage_samples >= 70, "{plan:?}");
    assert_eq!(plan.rejected_usage, 0);
    assert_eq!(
        plan.margin,
        ((budget - 300) as f64 * DEFAULT_USAGE_MARGIN).ceil() as u64
    );
}

#[test]
fn a_usage_recorded_by_hand_answers_the_latest_compile() {
    let mut s = long_session(30);
    let ctx = block_on(zoned().compile_with(&mut s, 2000, &CompileOptions::new("System.")))
        .expect("compile");
    // Anthropic's input_tokens leave out the cache's.
    let cached = ctx.token_count;
    let usage = ModelUsage::from_json(&json!({
        "input_tokens": 100, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0,
        "output_tokens": 50
    }))
    .expect("usage");
    let event = s.record_usage(&usage, None).expect("record").clone();
    assert_eq!(event.kind, "model_usage");
    assert_eq!(event.data["countedTokens"], json!(ctx.token_count));
    assert_eq!(event.data["inputTokens"], json!(cached + 100));
    assert_eq!(event.data["cachedInputTokens"], json!(cached));
    let correction = s.event_log().usage_correction();
    assert_eq!(correction.samples(), 1);
    let expected = ((cached + 100) as f64 / ctx.token_count as f64 * 64.0).ceil() / 64.0;
    assert_eq!(correction.factor(), expected);
    // The usage event renders into no context.
    let again = block_on(zoned().compile_with(&mut s, 2000, &CompileOptions::new("System.")))
        .expect("compile");
    assert!(again
        .to_messages()
        .iter()
        .all(|m| !m.content.contains("inputTokens")));
    // An explicit count wins.
    let event = s.record_usage(&usage, Some(800)).expect("record");
    assert_eq!(event.data["countedTokens"], json!(800));
}

#[test]
fn a_reply_with_unreadable_usage_is_a_model_failure() {
    let e = ModelReply::from_json(&json!({"content": "hi", "usage": {"prompt_tokens": "lots"}}))
        .expect_err("refused");
    assert_eq!(e.code(), ErrorCode::ModelFailed);
    let reply =
        ModelReply::from_json(&json!({"content": "hi", "usageMetadata": {"promptTokenCount": 9}}))
            .expect("read");
    assert_eq!(reply.usage.map(|u| u.input_tokens), Some(9));
}

#[test]
fn a_usage_report_outside_the_counters_error_is_kept_but_not_applied() {
    let selector = || {
        ContextCompiler::with_layout(
            vec![Rc::new(HistorySelector::new(1, usize::MAX))],
            Layout::Zoned,
        )
    };
    let options = CompileOptions::new("System.");
    for (input, label) in [(100_000u64, "far above"), (10, "far below")] {
        let mut s = long_session(200);
        let first = block_on(selector().compile_with(&mut s, 6000, &options)).expect("compile");
        let usage = ModelUsage::from_json(&json!({ "inputTokens": input })).expect("usage");
        s.record_usage(&usage, None).expect("recorded");
        let after = block_on(selector().compile_with(&mut s, 6000, &options)).expect("compile");
        let plan = after.budget_plan.expect("a plan");
        assert_eq!(
            (plan.correction, plan.usage_samples, plan.rejected_usage),
            (1.0, 0, 1),
            "{label}: {plan:?}"
        );
        assert_eq!(plan.target, first.budget, "{label}: the plan is unchanged");
        assert!(after.token_count <= 6000, "{label}");
        assert_eq!(
            s.event_log().filter(&["model_usage"]).len(),
            1,
            "{label}: kept"
        );
        assert_eq!(s.event_log().usage_correction().rejected(), 1);
    }
    // Within the bounds (Anthropic's ~1.3 × the count) it corrects.
    let mut s = long_session(200);
    let first = block_on(selector().compile_with(&mut s, 6000, &options)).expect("compile");
    let usage = ModelUsage::from_json(&json!({ "inputTokens": first.token_count * 13 / 10 }))
        .expect("usage");
    s.record_usage(&usage, None).expect("recorded");
    let plan = block_on(selector().compile_with(&mut s, 6000, &options))
        .expect("compile")
        .budget_plan
        .expect("a plan");
    assert_eq!(
        (plan.usage_samples, plan.rejected_usage, plan.content_margin),
        (1, 0, 0)
    );
    assert!(plan.correction >= 1.3);
}

/// The plan of a compile of `s` at 8,000 tokens.
fn plan_at_8000(s: &Session) -> context_compiler::BudgetPlan {
    let options = CompileOptions::new("System.");
    block_on(zoned().compile_view(s, 8000, &options))
        .expect("compile")
        .0
        .budget_plan
        .expect("a plan")
}

#[test]
fn the_content_margin_holds_until_usage_and_grows_with_heavier_kinds() {
    let mut s = long_session(100);
    let text = plan_at_8000(&s);
    // Text: 8000 / 1.17.
    assert_eq!(text.content_margin, 8000 - 8000 * 1000 / 1170);
    assert_eq!(text.target, 8000 - text.content_margin);
    s.record(
        "user_input",
        json!({"text": "服务器在凌晨三点重新启动，所有请求都已恢复正常。".repeat(40)}),
        None,
    )
    .expect("record");
    let cjk = plan_at_8000(&s);
    assert!(cjk.content_margin > text.content_margin, "{cjk:?}");
    // A host's counter (its error is not known) holds back none.
    let counter: Rc<dyn TokenCounter> = Rc::new(context_compiler::WordsTokenCounter);
    let mut host = common::session_with("host", counter);
    host.record(
        "user_input",
        json!({"text": "服务器在凌晨三点重新启动".repeat(40)}),
        None,
    )
    .expect("record");
    let plan = plan_at_8000(&host);
    assert_eq!((plan.content_margin, plan.target), (0, 8000));
}

/// A short first request's usage cannot switch the content margin off with
/// a bogus report: one token for it is rejected (no slack below the
/// count), and a report above the bounds only by a provider's fixed
/// addition is not applied as a ratio (it would fit every later compile to
/// a fraction of the budget).
#[test]
fn a_short_requests_report_neither_lifts_nor_shrinks_the_budget() {
    let options = CompileOptions::new("System.");
    for (input, rejected) in [(1u64, 1usize), (0, 0)] {
        let mut s = common::session_with("short", Rc::new(DefaultTokenCounter));
        s.record("user_input", json!({"text": "hi"}), None)
            .expect("record");
        let first = block_on(zoned().compile_with(&mut s, 8000, &options)).expect("compile");
        // 0 stands for "the count plus 400 tokens a provider added".
        let input = if input == 0 {
            first.token_count * 2 + 400
        } else {
            input
        };
        let usage = ModelUsage::from_json(&json!({ "inputTokens": input })).expect("usage");
        s.record_usage(&usage, None).expect("recorded");
        s.record(
            "tool_success",
            json!({"tool": "dump", "result": "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw".repeat(120)}),
            None,
        )
        .expect("record");
        let plan = plan_at_8000(&s);
        assert_eq!(
            (plan.usage_samples, plan.rejected_usage),
            (0, rejected),
            "{input}: {plan:?}"
        );
        assert!(
            plan.content_margin > 0,
            "{input}: the margin holds: {plan:?}"
        );
        assert_eq!(plan.correction, 1.0);
    }
}
