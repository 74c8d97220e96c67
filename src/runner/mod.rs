//! The turn runner: one
//! user turn of an agent loop, recorded end to end in a session.
//!
//! [`run_compiled`] records the input, asks the [`Guard`] (a blocked input
//! never reaches the model), then loops: compile the session under the
//! budget, call the [`Model`] with the context and the tools, record its
//! text, run the tool calls it asks for concurrently through a
//! [`ToolInterruptHandler`] (each with its deadline), until the model
//! answers without tool calls or `max_steps` model calls were made. Every
//! step is in the session, so a failure or a cancellation loses nothing;
//! a session attached to a bus feeds it as the run records.

mod answer;
mod approval;
mod guard;
pub mod mcp;
mod model;
mod record;
mod stream;

use std::cell::RefCell;
use std::rc::Rc;

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::compiler::{CompileOptions, ContextCompiler};
use crate::error::{Error, ErrorCode, Result};
use crate::join::{join_all, LocalFuture};
use crate::race::{race, First};
use crate::session::{record_shared, Session, ASSISTANT_OUTPUT, GUARD_DECISION, USER_INPUT};
use crate::session::{ApprovalDecision, ModelUsage, PendingApproval};
use crate::telemetry::genai::{self, CallSeen};
use crate::telemetry::{Span, TraceOptions};
use crate::tools::{AbortSignal, ToolChoice, ToolEvent, ToolInterruptHandler};
use crate::working_context::{CacheReport, DroppedItem, Ledger, RecalledTurn, WorkingContext};
use crate::zones::{CompactionLevel, ZoneUsage};

pub use crate::tools::ToolSpec;
pub use answer::{Model, ModelAnswer, ReplyStream};
pub use approval::{ApprovalPolicy, SessionSync, SupersededDecision};
pub use guard::{Guard, GuardDecision};
pub use model::{ModelReply, ModelRequest, Reasoning, RequestedToolCall, ResponseMeta};
pub use record::{call_notes, record_host_reply, record_reply, refuse_call};
pub use stream::{StreamDelta, StreamFormat, StreamReader};

/// Told of each piece of a streamed reply as it comes; an error it returns
/// stops the run (the text received so far is recorded).
pub type DeltaListener = Rc<dyn Fn(&StreamDelta) -> Result<()>>;

/// Model calls a run makes at most when none is given.
pub const DEFAULT_MAX_STEPS: usize = 10;

/// What a run works with: the session it records into, the compiler, the
/// model, and optionally the tool handler (recording into the same session)
/// and the input guard.
#[derive(Clone)]
pub struct Agent {
    /// The session the run records into.
    pub session: Rc<RefCell<Session>>,
    /// Compiles the session before each model call.
    pub compiler: ContextCompiler,
    /// Answers each compiled context.
    pub model: Rc<dyn Model>,
    /// Runs the tool calls the model asks for; without one, each call is
    /// recorded as a `tool_error`.
    pub tools: Option<Rc<ToolInterruptHandler>>,
    /// Decides whether the input may reach the model.
    pub guard: Option<Rc<dyn Guard>>,
}

/// How one run goes.
#[derive(Clone)]
pub struct RunOptions {
    /// The token budget of every compile.
    pub budget: u64,
    /// The system prompt and the zoned layout's other parts.
    pub compile: CompileOptions,
    /// The tools the model may call (empty: the model is offered none, and
    /// any call it makes still goes to the handler).
    pub tools: Vec<ToolSpec>,
    /// Model calls at most (at least 1).
    pub max_steps: usize,
    /// The deadline of a tool call whose spec sets none (the handler's 30 s
    /// when `None`).
    pub tool_timeout_ms: Option<f64>,
    /// Cancels the run: the model's signal and every running tool's signal
    /// are raised, and the run fails with [`ErrorCode::Aborted`].
    pub signal: AbortSignal,
    /// Offers the look-back tools (`search_history`, `read_artifact`; see
    /// [`crate::tools::look_back`]) beside `tools`, run by the library
    /// through the agent's tool handler (which a run offering them needs).
    pub look_back: bool,
    /// Told of each piece of a streamed reply as it comes.
    pub on_delta: Option<DeltaListener>,
    /// The shape of the model's streamed chunks (`None`: told from the
    /// chunks).
    pub stream_format: Option<StreamFormat>,
    /// Which tools the model may or must call, passed to it with the tools
    /// (a named tool must be one of `tools`).
    pub tool_choice: Option<ToolChoice>,
    /// Traces the run: an `invoke_agent` span for the turn, and under it
    /// a `compile_context` span per compile, a `chat` span per model call
    /// and an `execute_tool` span per tool call (see
    /// [`crate::telemetry::genai`]). Without it, only the compiler's own
    /// tracer, if any, traces the compiles.
    pub trace: Option<TraceOptions>,
    /// Decides which calls wait for a person, beside the tools whose spec
    /// says `needs_approval`.
    pub needs_approval: Option<Rc<dyn ApprovalPolicy>>,
    /// The decisions a resumed run ([`resume_compiled`]) records first, by
    /// call id, in order.
    pub approvals: Vec<(String, ApprovalDecision)>,
    /// Syncs the session after a resumed run recorded its decisions and
    /// before it runs a decided call.
    pub sync: Option<Rc<dyn SessionSync>>,
}

impl RunOptions {
    /// Options with a budget and a system prompt; no tools, the default
    /// step limit, a signal nobody raises.
    pub fn new(budget: u64, system_prompt: impl Into<String>) -> Self {
        RunOptions {
            budget,
            compile: CompileOptions::new(system_prompt),
            tools: Vec::new(),
            max_steps: DEFAULT_MAX_STEPS,
            tool_timeout_ms: None,
            signal: AbortSignal::new(),
            look_back: false,
            on_delta: None,
            stream_format: None,
            tool_choice: None,
            trace: None,
            needs_approval: None,
            approvals: Vec::new(),
            sync: None,
        }
    }

    fn validate(&self) -> Result<()> {
        let invalid = |m: &str| Err(Error::new(ErrorCode::InvalidArgument, m.to_string()));
        if self.budget == 0 {
            return Err(Error::new(
                ErrorCode::InvalidBudget,
                "budget must be a positive number of tokens (got 0)",
            ));
        }
        if self.max_steps == 0 {
            return invalid("maxSteps must be at least 1");
        }
        if let Some(ToolChoice::Tool(name)) = &self.tool_choice {
            if !self.tools.iter().any(|t| &t.name == name) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("toolChoice names '{name}', which is not one of the run's tools"),
                ));
            }
        }
        if self
            .tool_timeout_ms
            .is_some_and(|t| !(t.is_finite() && t > 0.0))
        {
            return invalid("toolTimeoutMs must be a positive number");
        }
        self.compile.validate()
    }
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without asking for tools.
    Answered,
    /// The model still asked for tools after `max_steps` calls.
    MaxSteps,
    /// The guard blocked the input; the model was not called.
    Blocked,
    /// Calls wait for a person's decision (`RunResult::pending`); a run
    /// given the decisions resumes ([`resume_compiled`]).
    Approval,
}

impl StopReason {
    /// The reason's name, as the JSON says it.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Answered => "answered",
            StopReason::MaxSteps => "max_steps",
            StopReason::Blocked => "blocked",
            StopReason::Approval => "approval",
        }
    }
}

/// The turn's span and how the run traces, when it does: what the model,
/// tool and compile spans are started under.
type Turn<'a> = Option<(&'a TraceOptions, &'a dyn Span)>;

/// One model call of a run and the tool calls it asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStep {
    /// Tokens of the context sent.
    pub budget_used: u64,
    /// Whether that context was within the budget (always, by the
    /// compiler's guarantee; reported).
    pub within_budget: bool,
    /// The compaction level of that context.
    pub compaction_level: CompactionLevel,
    /// Tokens per zone of that context (they add up to `budget_used`).
    pub zone_usage: ZoneUsage,
    /// Messages sent.
    pub messages: usize,
    /// The model's text.
    pub text: String,
    /// The outcomes of the tool calls it asked for, in its order.
    pub tool_events: Vec<ToolEvent>,
    /// What that context held and why, and what it left out
    /// ([`WorkingContext::ledger`]).
    pub ledger: Ledger,
    /// How much of that context repeated the previous compile's
    /// ([`WorkingContext::cache`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheReport>,
}

/// The result (`result`, `session_id`, `budget_used`,
/// `within_budget`, `blocked`) plus the steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    /// The model's final text (`"Blocked: <reason>"` when blocked).
    pub result: String,
    /// The session's id.
    pub session_id: String,
    /// Tokens of the last context sent (0 when blocked).
    pub budget_used: u64,
    /// Whether every context sent was within the budget.
    pub within_budget: bool,
    /// Whether the guard blocked the input.
    pub blocked: bool,
    /// Why the run ended.
    pub stop_reason: StopReason,
    /// The guard's decision, when there is a guard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardDecision>,
    /// Every model call, in order.
    pub steps: Vec<RunStep>,
    /// What the last compile left out ([`WorkingContext::dropped`]).
    pub dropped: Vec<DroppedItem>,
    /// The turns the last compile recalled from earlier
    /// ([`WorkingContext::recalled`]).
    pub recalled: Vec<RecalledTurn>,
    /// What the last compile held and why, and what it left out (each
    /// step has its own compile's).
    pub ledger: Ledger,
    /// The provider's usage summed over the run's model calls; `None` when
    /// none reported it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<ModelUsage>,
    /// The calls waiting for a person's decision when the run stopped
    /// (empty unless `stop_reason` is `Approval`).
    pub pending: Vec<PendingApproval>,
    /// The outcomes of the calls this run's decisions decided (a resumed
    /// run's), in the decisions' order.
    pub decided: Vec<ToolEvent>,
    /// This run's decisions that another process's, earlier in the
    /// session's order, superseded (seen after `sync`): those calls were
    /// not run again.
    pub superseded: Vec<SupersededDecision>,
}

fn aborted(reason: &str) -> Error {
    Error::new(
        ErrorCode::Aborted,
        format!("the run was cancelled: {reason}"),
    )
}

fn check_signal(signal: &AbortSignal) -> Result<()> {
    match signal.reason() {
        Some(reason) => Err(aborted(&reason)),
        None => Ok(()),
    }
}

/// Runs one user turn: see the [module documentation](self). Fails with
/// [`ErrorCode::InvalidArgument`] / [`ErrorCode::InvalidBudget`] before
/// recording anything, and with [`ErrorCode::ModelFailed`],
/// [`ErrorCode::GuardFailed`] or [`ErrorCode::Aborted`] keeping what was
/// recorded.
pub async fn run_compiled(input: &str, agent: &Agent, options: &RunOptions) -> Result<RunResult> {
    if !options.approvals.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "approvals resume a paused run: give them with no input",
        ));
    }
    let mut waiting = approval::pending(&agent.session)?;
    if waiting.is_empty() && !approval::to_carry_out(&agent.session)?.is_empty() {
        // Decided, not carried out: only a resume runs them.
        waiting = approval::to_carry_out(&agent.session)?
            .into_iter()
            .map(|d| PendingApproval {
                call_id: d.call_id,
                name: d.tool_name,
                arguments: d.arguments,
                event_id: d.event_id,
            })
            .collect();
    }
    if let Some(first) = waiting.first() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "{} tool call(s) wait for a decision (the first: '{}', {}): resume the run with approvals before a new input",
                waiting.len(),
                first.call_id,
                first.name
            ),
        ));
    }
    run_prepared(Some(input), agent, options).await
}

/// Resumes a run that stopped for approval: records `options.approvals`
/// (each must name a call that waits: else [`ErrorCode::InvalidArgument`],
/// before anything is recorded), syncs the session when `options.sync` is
/// given, runs the approved calls (edited ones with their edited
/// arguments, as the session holds them) and records the rejected ones'
/// `tool_error`, then goes on as [`run_compiled`] does; it stops again
/// while calls wait. In any process that loaded the session: nothing else
/// holds the pause.
pub async fn resume_compiled(agent: &Agent, options: &RunOptions) -> Result<RunResult> {
    approval::check_decisions(&agent.session, &options.approvals)?;
    let waiting = approval::pending(&agent.session)?;
    if waiting.is_empty() && approval::to_carry_out(&agent.session)?.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "no tool call waits for a decision: a run without input only resumes a paused one",
        ));
    }
    run_prepared(None, agent, options).await
}

async fn run_prepared(
    input: Option<&str>,
    agent: &Agent,
    options: &RunOptions,
) -> Result<RunResult> {
    options.validate()?;
    let (agent, mut options) = if options.look_back {
        with_look_back(agent, options)?
    } else {
        (agent.clone(), options.clone())
    };
    // Every compile counts the tools the model is offered.
    options.compile.tools = options.tools.clone();
    run_validated(input, &agent, &options).await
}

/// The agent's handler running the look-back tools, and the options
/// offering them.
fn with_look_back(agent: &Agent, options: &RunOptions) -> Result<(Agent, RunOptions)> {
    let handler = agent.tools.as_ref().ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            "the look-back tools need a tool handler to record their calls",
        )
    })?;
    let mut agent = agent.clone();
    agent.tools = Some(Rc::new(handler.with_look_back()));
    let mut options = options.clone();
    // The host's mark on a look-back tool stays: its calls wait.
    let marked: Vec<String> = options
        .tools
        .iter()
        .filter(|t| t.needs_approval && crate::tools::look_back::is_look_back(&t.name))
        .map(|t| t.name.clone())
        .collect();
    options
        .tools
        .retain(|t| !crate::tools::look_back::is_look_back(&t.name));
    let mut own = ToolSpec::parse_list(&crate::tools::look_back::look_back_definitions())?;
    for spec in &mut own {
        spec.needs_approval |= marked.contains(&spec.name);
    }
    options.tools.extend(own);
    options.look_back = false;
    Ok((agent, options))
}

async fn run_validated(
    input: Option<&str>,
    agent: &Agent,
    options: &RunOptions,
) -> Result<RunResult> {
    if let Some(handler) = &agent.tools {
        if !Rc::ptr_eq(handler.session(), &agent.session) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the tool handler records into another session than the run's",
            ));
        }
    }
    check_signal(&options.signal)?;
    if let Some(input) = input {
        record_shared(&agent.session, USER_INPUT, json!({ "text": input }), None)?;
    }
    let session_id = agent
        .session
        .try_borrow()
        .map_or_else(|_| Err(busy()), |s| Ok(s.session_id().to_string()))?;
    let Some(trace) = &options.trace else {
        return run_turn(input, agent, options, session_id, None).await;
    };
    let model = options.compile.model.as_deref();
    let span = genai::start_turn(
        trace,
        &session_id,
        model,
        options.compile.format,
        options.budget,
    );
    let outcome = run_turn(
        input,
        agent,
        options,
        session_id,
        Some((trace, span.as_ref())),
    )
    .await;
    genai::close(span.as_ref(), &outcome, |r| {
        genai::end_turn(
            span.as_ref(),
            r.steps.len(),
            r.stop_reason.as_str(),
            r.usage.as_ref(),
        )
    });
    outcome
}

/// The turn after its input was recorded: the guard, then the steps.
async fn run_turn(
    input: Option<&str>,
    agent: &Agent,
    options: &RunOptions,
    session_id: String,
    turn: Turn<'_>,
) -> Result<RunResult> {
    let mut result = RunResult {
        result: String::new(),
        session_id,
        budget_used: 0,
        within_budget: true,
        blocked: false,
        stop_reason: StopReason::Answered,
        guard: None,
        steps: Vec::new(),
        dropped: Vec::new(),
        recalled: Vec::new(),
        ledger: Ledger::default(),
        usage: None,
        pending: Vec::new(),
        decided: Vec::new(),
        superseded: Vec::new(),
    };
    match input {
        Some(input) => {
            if !guarded(input, agent, options, &mut result).await? {
                return Ok(result);
            }
        }
        None => {
            decide(agent, options, &mut result, turn).await?;
            if stopped_for_approval(agent, &mut result)? {
                return Ok(result);
            }
        }
    }
    steps(agent, options, result, turn).await
}

/// Asks the guard about `input`; whether the run goes on (`result` says
/// why not).
async fn guarded(
    input: &str,
    agent: &Agent,
    options: &RunOptions,
    result: &mut RunResult,
) -> Result<bool> {
    if let Some(guard) = &agent.guard {
        let decision = match race(guard.evaluate(input), options.signal.aborted()).await {
            First::Left(decision) => {
                decision.map_err(|e| Error::new(ErrorCode::GuardFailed, e.message().to_string()))?
            }
            First::Right(reason) => return Err(aborted(&reason)),
        };
        record_shared(&agent.session, GUARD_DECISION, decision.event_data(), None)?;
        let allowed = decision.allowed;
        if !allowed {
            result.result = format!(
                "Blocked: {}",
                decision
                    .reason
                    .as_deref()
                    .unwrap_or("the guard blocked this input")
            );
            result.blocked = true;
            result.stop_reason = StopReason::Blocked;
        }
        result.guard = Some(decision);
        return Ok(allowed);
    }
    Ok(true)
}

/// Whether calls wait for a decision: the run then stops, saying which.
fn stopped_for_approval(agent: &Agent, result: &mut RunResult) -> Result<bool> {
    result.pending = approval::pending(&agent.session)?;
    if result.pending.is_empty() {
        return Ok(false);
    }
    result.stop_reason = StopReason::Approval;
    Ok(true)
}

/// Records a resumed run's decisions, syncs, and runs or refuses each
/// decided call whose decision stands.
async fn decide(
    agent: &Agent,
    options: &RunOptions,
    result: &mut RunResult,
    turn: Turn<'_>,
) -> Result<()> {
    let recorded = approval::record_decisions(&agent.session, &options.approvals)?;
    if let Some(sync) = &options.sync {
        race_signal(sync.sync(), &options.signal).await??;
    }
    check_signal(&options.signal)?;
    for (call_id, event_id) in recorded {
        if approval::superseded(&agent.session, &event_id)? {
            result
                .superseded
                .push(SupersededDecision { call_id, event_id });
        }
    }
    // A call this run's decision lost: the process whose decision stands
    // carries it out (it may be running it now), not this one.
    let decided: Vec<approval::Decided> = approval::to_carry_out(&agent.session)?
        .into_iter()
        .filter(|d| !result.superseded.iter().any(|s| s.call_id == d.call_id))
        .collect();
    let mut runs: Vec<LocalFuture<'_, Result<ToolEvent>>> = Vec::new();
    for d in &decided {
        let refused = match d.approve {
            false => Some(approval::rejection(d)),
            true => approval::lost_secret(d),
        };
        if let Some(why) = refused {
            result
                .decided
                .push(approval::record_refusal(&agent.session, d, why)?);
            continue;
        }
        runs.push(Box::pin(traced(
            turn,
            &d.tool_name,
            Some(&d.call_id),
            Some(&d.arguments),
            run_decided(agent, options, d),
        )));
    }
    for event in join_all(runs).await {
        result.decided.push(event?);
    }
    Ok(())
}

/// Runs an approved call through the agent's handler (a run without one
/// records it refused).
async fn run_decided(
    agent: &Agent,
    options: &RunOptions,
    d: &approval::Decided,
) -> Result<ToolEvent> {
    let Some(handler) = &agent.tools else {
        return approval::record_refusal(&agent.session, d, NO_HANDLER.into());
    };
    // The resuming run may offer other tools than the one that paused.
    if let Some(why) = unknown_tool(options, &d.tool_name) {
        return approval::record_refusal(&agent.session, d, why);
    }
    let timeout = options
        .tools
        .iter()
        .find(|t| t.name == d.tool_name)
        .and_then(|s| s.timeout_ms)
        .or(options.tool_timeout_ms);
    handler
        .run_decided(
            &d.tool_name,
            &d.call_id,
            d.arguments.clone(),
            timeout,
            Some(&options.signal),
            &d.event_id,
        )
        .await
}

/// The model calls of a run, from its first compile.
async fn steps(
    agent: &Agent,
    options: &RunOptions,
    mut result: RunResult,
    turn: Turn<'_>,
) -> Result<RunResult> {
    for step in 0..options.max_steps {
        let (ctx, ledger) = compile(agent, options, turn).await?;
        check_signal(&options.signal)?;
        result.dropped.clone_from(&ctx.dropped);
        result.recalled.clone_from(&ctx.recalled);
        result.ledger.clone_from(&ledger);
        let reply = ask(agent, options, &ctx, step, turn).await?;
        // A reply that came after the run was cancelled is not recorded.
        check_signal(&options.signal)?;
        if let Some(usage) = &reply.usage {
            let sum = result.usage.get_or_insert_with(ModelUsage::default);
            sum.input_tokens = sum.input_tokens.saturating_add(usage.input_tokens);
            sum.cached_input_tokens = sum
                .cached_input_tokens
                .saturating_add(usage.cached_input_tokens);
            sum.output_tokens = sum.output_tokens.saturating_add(usage.output_tokens);
        }
        let mut run_step = RunStep {
            budget_used: ctx.token_count,
            within_budget: ctx.is_within_budget(),
            compaction_level: ctx.compaction_level,
            zone_usage: ctx.zone_usage,
            messages: ctx.to_messages().len(),
            text: reply.text.clone(),
            tool_events: Vec::new(),
            ledger,
            cache: ctx.cache.clone(),
        };
        result.budget_used = ctx.token_count;
        result.within_budget &= run_step.within_budget;
        drop(ctx);
        // Without text, the turn's reasoning goes with its first call.
        let reasoning = record_reply(&agent.session, &reply, Some(run_step.budget_used))?;
        if record::has_text(&reply) {
            result.result = reply.text.clone();
        }
        if record::paused_for_compaction(&reply) {
            result.steps.push(run_step);
            continue;
        }
        if reply.tool_calls.is_empty() {
            result.steps.push(run_step);
            result.stop_reason = StopReason::Answered;
            return Ok(result);
        }
        run_step.tool_events =
            run_tools(agent, options, &reply.tool_calls, reasoning, turn).await?;
        result.steps.push(run_step);
        check_signal(&options.signal)?;
        if stopped_for_approval(agent, &mut result)? {
            return Ok(result);
        }
    }
    result.stop_reason = StopReason::MaxSteps;
    Ok(result)
}

/// `work`, given up with [`ErrorCode::Aborted`] when the run is cancelled.
async fn race_signal<T>(
    work: impl std::future::Future<Output = T>,
    signal: &AbortSignal,
) -> Result<T> {
    match race(work, signal.aborted()).await {
        First::Left(out) => Ok(out),
        First::Right(reason) => Err(aborted(&reason)),
    }
}

fn busy() -> Error {
    Error::new(ErrorCode::SessionBusy, "the session is being written to")
}

/// Compiles the shared session: one consistent view for the pipeline, its
/// writes applied after (events recorded meanwhile queue behind it).
/// With the context, its ledger (counted by the session's counter); traced
/// under the turn when the run traces, else by the compiler's own tracer.
#[allow(clippy::await_holding_refcell_ref)]
async fn compile(
    agent: &Agent,
    options: &RunOptions,
    turn: Turn<'_>,
) -> Result<(WorkingContext, Ledger)> {
    let (tracer, parent) = match turn {
        Some((trace, span)) => (Some(trace.tracer.as_ref()), Some(span)),
        None => (agent.compiler.tracer().map(|t| t.as_ref()), None),
    };
    let (ctx, writes, ledger) = {
        let view = agent.session.try_borrow().map_err(|_| busy())?;
        let (ctx, writes) = agent
            .compiler
            .compile_view_traced(&view, options.budget, &options.compile, tracer, parent)
            .await?;
        let ledger = ctx.ledger_for(&view);
        (ctx, writes, ledger)
    };
    writes.apply_shared(&agent.session)?;
    Ok((ctx, ledger))
}

/// One model call, given up when the run is cancelled; traced as a `chat`
/// span under the turn.
async fn ask(
    agent: &Agent,
    options: &RunOptions,
    ctx: &WorkingContext,
    step: usize,
    turn: Turn<'_>,
) -> Result<ModelReply> {
    let Some((trace, parent)) = turn else {
        return ask_untraced(agent, options, ctx, step).await;
    };
    let model = options.compile.model.as_deref();
    let span = genai::start_chat(trace, parent, model, options.compile.format, step, ctx);
    let reply = ask_untraced(agent, options, ctx, step).await;
    genai::close(span.as_ref(), &reply, |reply| {
        let calls: Vec<CallSeen<'_>> = reply
            .tool_calls
            .iter()
            .map(|c| CallSeen {
                id: c.id.as_deref(),
                name: &c.name,
                arguments: c.arguments.as_ref().ok(),
            })
            .collect();
        genai::end_chat(
            trace,
            span.as_ref(),
            &reply.text,
            &calls,
            reply.usage.as_ref(),
            &reply.response,
        );
    });
    reply
}

async fn ask_untraced(
    agent: &Agent,
    options: &RunOptions,
    ctx: &WorkingContext,
    step: usize,
) -> Result<ModelReply> {
    let request = ModelRequest {
        context: ctx,
        tools: &options.tools,
        tool_choice: options.tool_choice.as_ref(),
        step,
        signal: &options.signal,
    };
    let as_model_failure = |e: Error| match e.code() {
        ErrorCode::ModelFailed | ErrorCode::Aborted | ErrorCode::HandlerFailed => e,
        _ => Error::new(ErrorCode::ModelFailed, e.message().to_string()),
    };
    let answer = match race(
        agent.model.respond_streaming(request),
        options.signal.aborted(),
    )
    .await
    {
        First::Left(answer) => answer.map_err(as_model_failure)?,
        First::Right(reason) => return Err(aborted(&reason)),
    };
    match answer {
        ModelAnswer::Reply(reply) => Ok(reply),
        ModelAnswer::Stream(stream) => read_stream(agent, options, stream)
            .await
            .map_err(as_model_failure),
    }
}

/// Reads a streamed reply to its end, telling `on_delta` of each piece.
/// When the stream fails, the run is cancelled or `on_delta` fails, the
/// text received so far is recorded as an `assistant_output` with
/// `partial: true`, and the tool calls are dropped (none was recorded).
async fn read_stream(
    agent: &Agent,
    options: &RunOptions,
    mut stream: Box<dyn ReplyStream>,
) -> Result<ModelReply> {
    let mut reader = StreamReader::new(options.stream_format);
    let failure = loop {
        let chunk = match race(stream.next_chunk(), options.signal.aborted()).await {
            First::Left(Ok(Some(chunk))) => chunk,
            First::Left(Ok(None)) => match reader.unfinished_call() {
                // Cut in the middle of a call: it does not run.
                Some(name) => {
                    break Error::new(
                        ErrorCode::ModelFailed,
                        format!("the model's stream ended before its call to '{name}' was whole; the call was not run"),
                    )
                }
                None => return reader.finish(),
            },
            First::Left(Err(e)) => break e,
            First::Right(reason) => break aborted(&reason),
        };
        let told = reader
            .push(&chunk)
            .and_then(|deltas| match &options.on_delta {
                Some(listen) => deltas.iter().try_for_each(|d| listen(d)),
                None => Ok(()),
            });
        if let Err(e) = told {
            break e;
        }
    };
    drop(stream);
    if !reader.text().is_empty() {
        record_shared(
            &agent.session,
            ASSISTANT_OUTPUT,
            json!({ "text": reader.text(), "partial": true }),
            None,
        )?;
    }
    Err(failure)
}

/// Runs the calls concurrently; a call that cannot run (no handler, a tool
/// not offered, unreadable arguments) is recorded as a `tool_error`.
async fn run_tools(
    agent: &Agent,
    options: &RunOptions,
    calls: &[RequestedToolCall],
    reasoning: Option<&Reasoning>,
    turn: Turn<'_>,
) -> Result<Vec<ToolEvent>> {
    let waits = approval::waiting(options, calls).await;
    // One future a call, polled in the reply's order: each records its
    // `tool_call` when first polled, so the session keeps the calls in the
    // order the model gave them (a call that waits among them too).
    let mut runs: Vec<LocalFuture<'_, Result<Option<ToolEvent>>>> = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let notes = record::call_notes(call, i, reasoning);
        if waits.get(i).copied().unwrap_or(false) {
            let session = &agent.session;
            runs.push(Box::pin(async move {
                approval::request(session, call, notes).map(|()| None)
            }));
            continue;
        }
        let arguments = call.arguments.as_ref().ok();
        let run = traced(
            turn,
            &call.name,
            call.id.as_deref(),
            arguments,
            run_tool(agent, options, call, notes),
        );
        runs.push(Box::pin(async move { run.await.map(Some) }));
    }
    join_all(runs)
        .await
        .into_iter()
        .filter_map(Result::transpose)
        .collect()
}

/// Why a call runs nowhere: the run has no tool handler.
const NO_HANDLER: &str = "no tools can run in this run (it has no tool handler)";

/// Why a call to `name` is refused, when the run offers tools of the
/// host's and `name` is none of them (a run offering none leaves names to
/// its bridge).
fn unknown_tool(options: &RunOptions, name: &str) -> Option<String> {
    let host_offers = options
        .tools
        .iter()
        .any(|t| !crate::tools::look_back::is_look_back(&t.name));
    let offered = options.tools.iter().any(|t| t.name == name);
    (host_offers && !offered).then(|| {
        format!(
            "unknown tool '{name}'; the tools are: {}",
            options
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// A tool call's `run`, traced as an `execute_tool` span under the turn.
async fn traced(
    turn: Turn<'_>,
    name: &str,
    call_id: Option<&str>,
    arguments: Option<&Value>,
    run: impl std::future::Future<Output = Result<ToolEvent>>,
) -> Result<ToolEvent> {
    let Some((trace, parent)) = turn else {
        return run.await;
    };
    let span = genai::start_tool(trace, parent, name, call_id, arguments);
    let event = run.await;
    genai::close(span.as_ref(), &event, |event| {
        genai::end_tool(trace, span.as_ref(), event)
    });
    event
}

async fn run_tool(
    agent: &Agent,
    options: &RunOptions,
    call: &RequestedToolCall,
    notes: Map<String, Value>,
) -> Result<ToolEvent> {
    let spec = options.tools.iter().find(|t| t.name == call.name);
    let refusal = match (&call.arguments, &agent.tools) {
        (Err(why), _) => Some(why.clone()),
        (_, None) => Some(NO_HANDLER.into()),
        _ => unknown_tool(options, &call.name),
    };
    match (refusal, &agent.tools, &call.arguments) {
        (None, Some(handler), Ok(arguments)) => {
            let timeout = spec.and_then(|s| s.timeout_ms).or(options.tool_timeout_ms);
            handler
                .call_noted(
                    &call.name,
                    arguments.clone(),
                    timeout,
                    Some(&options.signal),
                    notes,
                )
                .await
        }
        (refusal, _, _) => {
            let recorded = record::record_refused_call(&agent.session, call, notes)?;
            // The reply's other calls record theirs first, as a handler's do.
            crate::join::yield_now().await;
            let why = refusal.unwrap_or_else(|| "the call cannot run".into());
            record::record_refusal(&agent.session, call, &why, &recorded)
        }
    }
}
