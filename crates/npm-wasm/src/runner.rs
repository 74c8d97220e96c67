//! `runCompiled` (the turn runner) and the MCP tool
//! `orchestrate_compiled` for JS: the model, the guard and the abort signal
//! as JS values, the rest as the library's own objects.

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use context_compiler_js::error::JsResult;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::compiler::compile_options;
use crate::model::JsModel;
use crate::processors::budget_arg;
use crate::registry;
use crate::reply_stream::delta_listener;
use crate::session::JsSession;
use crate::tools::handler_from_options;
use crate::tracer::JsTracer;
use context_compiler::compiler::ContextCompiler as CoreCompiler;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::runner::{
    mcp, resume_compiled, run_compiled as run_core, Agent, ApprovalPolicy, Guard, GuardDecision,
    RequestedToolCall, RunOptions, SessionSync, StreamFormat, DEFAULT_MAX_STEPS,
};
use context_compiler::session::ApprovalDecision;
use context_compiler::session::Session;
use context_compiler::telemetry::TraceOptions;
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::tools::look_back::LookBackBridge;
use context_compiler::tools::{
    AbortSignal, ToolChoice, ToolInterruptHandler as CoreHandler, ToolInterruptOptions,
};
use context_compiler::working_context::ProviderFormat;
use context_compiler_js::convert::{bool_option, describe, js_to_json, option, to_js};
use context_compiler_js::env::{seed, JsClock};
use context_compiler_js::error::thrown_message;
use context_compiler_js::llm::AbortOnDrop;
use context_compiler_js::memory_arg::memory_arg;
use context_compiler_js::options::{optional_string, usize_option};
use context_compiler_js::promise::{call_and_await, require_callable, spawn};

#[wasm_bindgen(typescript_custom_section)]
const RUNNER_TYPES: &'static str = r#"
/** A tool the model may call; `timeoutMs` is the deadline of its calls. */
export interface ToolSpec {
  name: string;
  description?: string;
  /** The arguments' JSON Schema (a `JSONSchema7`, zod 4's
   * `z.toJSONSchema()` output, a literal); `{ type: "object" }` by default. */
  parameters?: JsonSchemaObject;
  timeoutMs?: number;
  /** Its calls wait for a person's decision: the run stops with
   * `stopReason: "approval"` and resumes when given `approvals`. */
  needsApproval?: boolean;
}
/** A person's decision on a call that waits: run it, run it with edited
 * arguments (`args`, in place of the model's), or refuse it (the model is
 * told it was rejected, and `reason`). */
export type ApprovalDecision =
  | { approve: true; args?: { [key: string]: Json } }
  | { approve: false; reason?: string };
/** A call a run asks `needsApproval` about. */
export interface ApprovalCall {
  id?: string;
  name: string;
  arguments: Json;
}
/** A tool call as a model asks for it: `{ name, arguments }` (or `args` / `input`),
 * or OpenAI's `{ id, type: "function", function: { name, arguments: "<json>" } }`. */
export type RequestedToolCall =
  | { name: string; arguments?: Json; args?: Json; input?: Json; id?: string }
  | { id?: string; type?: "function"; function: { name: string; arguments?: string | Json } };
/** What the model answers: text, or text and tool calls (ours, OpenAI's
 * `tool_calls`, or Anthropic / AI SDK content blocks). */
export type ModelReply =
  | string
  | {
      content?: string | null | Array<{ type: string; text?: string; name?: string; input?: Json; args?: Json; id?: string; thinking?: string; signature?: string; data?: string }>;
      text?: string;
      /** Reasoning the provider asks back in a tool loop, as it gave it
       * (Anthropic's `thinking` / `redacted_thinking` blocks, Responses'
       * `reasoning` items). Read from a provider's own response or its
       * stream too; recorded with the turn and sent back, in its own format
       * only, while the turn lasts. */
      reasoning?: { format: "anthropic" | "openai-responses"; items: Json[] } | null;
      toolCalls?: RequestedToolCall[];
      tool_calls?: RequestedToolCall[] | null;
      /** What the call cost, as the provider reported it: recorded as a
       * `model_usage` event, from which later compiles correct their count. */
      usage?: ProviderUsage | null;
      /** Gemini's name for `usage`. */
      usageMetadata?: ProviderUsage | null;
    };
/** The messages a model gets in each `format`, as `WorkingContext.toMessages` gives them. */
export interface FormatMessages {
  plain: Message[];
  openai: OpenAiMessage[];
  anthropic: AnthropicRequest;
  "ai-sdk": AiSdkRequest;
  "openai-responses": OpenAiResponsesRequest;
  gemini: GeminiRequest;
}
/** The shapes a run can hand its model. */
export type RunFormat = keyof FormatMessages;
/** The stream shapes a run reads: Chat Completions chunks, Responses events,
 * Anthropic events, Gemini chunks, AI SDK `fullStream` parts, or text. */
export type StreamFormat = "openai" | "openai-responses" | "anthropic" | "gemini" | "ai-sdk" | "text";
/** A streamed reply: any async iterable of chunks (the provider SDKs'
 * streams, the AI SDK's `fullStream`, an async generator) or a
 * `ReadableStream`. Chunks are JSON values or strings. */
export type ModelStream = AsyncIterable<unknown> | { getReader(): { read(): Promise<{ done?: boolean; value?: unknown }> } };
/** A piece of a streamed reply, as `onDelta` gets it. */
export type StreamDelta =
  | { type: "text"; text: string }
  | { type: "tool-call"; id: string; name: string; argumentsDelta: string };
/** A tool's JSON Schema, as a format sends it. */
export type ToolParameters = { [key: string]: unknown };
/** The tools a run hands its model in each format, as that format's API takes
 * them (Chat Completions' `tools`, Responses' function tools, Anthropic's
 * `tools`, Gemini's function declarations for `tools: [{ functionDeclarations }]`,
 * the `ToolSpec`s `aiSdkTools` takes). */
export interface FormatTools {
  plain: { name: string; description: string; parameters: ToolParameters };
  openai: { type: "function"; function: { name: string; description: string; parameters: ToolParameters } };
  "openai-responses": { type: "function"; name: string; description: string; parameters: ToolParameters; strict: boolean };
  anthropic: { name: string; description: string; input_schema: { type: "object"; [key: string]: unknown } };
  gemini: { name: string; description: string; parametersJsonSchema: ToolParameters };
  "ai-sdk": { name: string; description: string; parameters: ToolParameters };
}
/** `toolChoice` in each format's shape, as its API takes it (Gemini's mode is
 * the name of its `FunctionCallingConfigMode`). */
export interface FormatToolChoice {
  plain: "auto" | "required" | "none" | { type: "function"; function: { name: string } };
  openai: "auto" | "required" | "none" | { type: "function"; function: { name: string } };
  "openai-responses": "auto" | "required" | "none" | { type: "function"; name: string };
  anthropic: { type: "auto" } | { type: "any" } | { type: "none" } | { type: "tool"; name: string };
  gemini: { functionCallingConfig: { mode: "AUTO" | "ANY" | "NONE"; allowedFunctionNames?: string[] } };
  "ai-sdk": "auto" | "required" | "none" | { type: "tool"; toolName: string };
}
/** A provider SDK's own response, which a run reads as its reply: a Chat
 * Completion, a Responses response, an Anthropic message, a Gemini
 * `GenerateContentResponse`, an AI SDK `generateText` or `streamText` result. */
export type ProviderResponse =
  | { choices: ReadonlyArray<object> }
  | { output: ReadonlyArray<object> }
  | { type: "message"; role: "assistant"; content: ReadonlyArray<object> }
  | { candidates?: ReadonlyArray<object> }
  | { steps: ReadonlyArray<object>; totalUsage: object }
  | { fullStream: AsyncIterable<unknown>; textStream: AsyncIterable<string> };
/** The model a run calls: the compiled messages in `format`'s shape, the tools
 * and tool choice in that format's shape, a signal aborted when the run stops
 * waiting, and the step (0 for the first call). It answers with a whole reply
 * (its own shape, or a provider SDK's response) or a stream. */
export type RunModel<F extends RunFormat = RunFormat> = (
  messages: FormatMessages[F],
  options: { tools: FormatTools[F][]; toolChoice?: FormatToolChoice[F]; signal?: AbortSignal; step: number },
) => ModelReply | ProviderResponse | ModelStream | PromiseLike<ModelReply | ProviderResponse | ModelStream>;
/** Which tools the model may or must call; the model gets it in its
 * format's shape as `toolChoice` (Chat Completions' `tool_choice`,
 * Anthropic's `tool_choice`, Gemini's `toolConfig`, the AI SDK's `toolChoice`). */
export type ToolChoice = "auto" | "required" | "none" | { name: string };
/** The guard's decision on an input. */
export type GuardReply = boolean | { allowed: boolean; threatLevel?: string; reason?: string };
/** Decides whether an input may reach the model. */
export type RunGuard = (input: string, options: { signal?: AbortSignal }) => GuardReply | Promise<GuardReply>;
/** Options of `orchestrateCompiled`: those of `runCompiled` but the budget
 * and system prompt, which come from the tool's arguments. */
export interface OrchestrateOptions<F extends RunFormat = "openai"> extends ZonedOptions {
  /** The model; required. It gets the messages in `format`'s shape. */
  model: RunModel<F> | { respond: RunModel<F> };
  /** The session to record into; a new one (returned as `session`) by default. */
  session?: Session;
  /** The compiler; by default the recommended pipeline in the zoned
   * layout: `HistorySelector({ keepFirst: 1, keepLast: Infinity })`,
   * `ArtifactAttacher` (when the run has an `artifactStore`), `Compactor`,
   * `HistoryRecall` (indexing the stored outputs whole) and
   * `MemoryPreloader` (when `memory` is given). */
  compiler?: ContextCompiler;
  /** Memories the default compiler recalls for each compile (a
   * `MemoryPreloader`, top 5); with a `compiler` of your own, give it the
   * preloader instead. */
  memory?: InMemoryBackend | PersistentMemory | MemoryStoreLike | MemoryRecallFunction;
  /** The tools the model is offered. */
  tools?: ToolSpec[];
  /** Offer the look-back tools `search_history` and `read_artifact` (see
   * `lookBackToolDefinitions()`), run by the library and recorded like any
   * other tool: what left the window is searched, and stored outputs (in the
   * run's `artifactStore`) and cut or recalled turns (by event id) are read
   * whole. Default true; `false` offers only `tools`. */
  lookBackTools?: boolean;
  /** A handler recording into the run's session, or build one with `bridge`
   * (and `normalizer`, `artifactStore`, `externalizeThreshold`). */
  toolHandler?: ToolInterruptHandler;
  bridge?: ToolBridgeLike | ToolExecute;
  normalizer?: PerceptionAligner;
  artifactStore?: ArtifactStoreLike;
  externalizeThreshold?: number;
  guard?: RunGuard | { evaluate: RunGuard };
  /** Model calls at most; default 10. */
  maxSteps?: number;
  /** Whether a call waits for a person's decision (beside the tools whose
   * spec says `needsApproval`); a throw or rejection makes it wait. */
  needsApproval?: (call: ApprovalCall) => boolean | PromiseLike<boolean>;
  /** Resumes a run that stopped for approval (give no input): the decision
   * on each waiting call, by call id. Approved calls run (edited ones with
   * `args`), rejected ones answer the model with their reason, then the run
   * goes on; it stops again while calls wait. A decision for a call that
   * does not wait is `INVALID_ARGUMENT`, before anything is recorded. */
  approvals?: { [callId: string]: ApprovalDecision };
  /** Called after a resumed run recorded its decisions and before it runs a
   * decided call, e.g. `() => session.sync(store)`: a decision another
   * process made first is then seen, and this run's does not stand (it is
   * listed in `superseded`; the call is not run again). */
  sync?: () => unknown;
  /** The deadline of a tool call whose spec has none; default 30,000 ms. */
  toolTimeoutMs?: number;
  /** Cancels the run (it rejects with `ABORTED`; what it recorded stays). */
  signal?: AbortSignal;
  /** The shape of the messages and tools the model gets; default `"openai"`.
   * The tools are counted in each compile's SYSTEM zone as it sends them. */
  format?: F;
  /** Traces the run with OpenTelemetry's GenAI conventions: an
   * `invoke_agent` span for the turn (under the active span) and under it
   * `compile_context`, `chat {modelName}` and `execute_tool {name}` spans.
   * Without it, a compiler's own `tracer` traces its compiles alone. */
  tracer?: TracerLike;
  /** Puts the messages, replies, tool arguments and results on the spans
   * (`gen_ai.input.messages`, ...), redacted; default false. */
  traceContent?: boolean;
  /** `gen_ai.provider.name` on the spans (`"openai"`, `"anthropic"`,
   * `"gcp.gemini"`, `"aws.bedrock"`, ...); by default `format`'s provider
   * (none for `"ai-sdk"`). */
  providerName?: string;
  /** The agent's name: the turn's span is `invoke_agent {agentName}` with
   * `gen_ai.agent.name`. */
  agentName?: string;
  /** Told of each piece of a streamed reply as it comes; a throw stops the
   * run (`HANDLER_FAILED`), the text received recorded as partial. */
  onDelta?: (delta: StreamDelta) => void;
  /** The shape of the model's streamed chunks; by default told from them. */
  streamFormat?: StreamFormat;
  /** Which tools the model may or must call; a named tool must be one of `tools`. */
  toolChoice?: ToolChoice;
  /** Tokens of the budget kept for the reply; default 0. */
  reserveOutput?: number;
  /** The share of the budget held back once the usage the model's replies
   * report corrects the count; default 0.05. */
  usageMargin?: number;
  /** The model's name (`"gpt-4.1"`, `"claude-sonnet-4-5"`, ...): images and
   * files are counted by its provider's rule (a compile's `model` option).
   * Images a tool returns as bytes are read back from the run's
   * `artifactStore` when its compiler has no `mediaStore`. */
  modelName?: string;
}
/** Options of `runCompiled`. */
export interface RunCompiledOptions<F extends RunFormat = "openai"> extends OrchestrateOptions<F> {
  /** The token budget of every compile: a positive integer or a `TokenBudget`. */
  budget: number | TokenBudget;
  systemPrompt?: string;
}
/** One model call of a run, and the outcomes of the tool calls it asked for. */
export interface RunStep {
  budgetUsed: number;
  withinBudget: boolean;
  compactionLevel: CompactionLevel;
  /** Tokens per zone of the context sent (they add up to `budgetUsed`). */
  zoneUsage: ZoneUsage;
  messages: number;
  text: string;
  toolEvents: ToolEventData[];
  /** What the context sent held and why, and what it left out (`WorkingContext.ledger`). */
  ledger: Ledger;
  /** How much of that context repeated the previous compile's (`WorkingContext.cache`). */
  cache?: CacheReport;
}
/** What a run did: its `result`, `sessionId`, `budgetUsed` and
 * `withinBudget`, and its steps. */
export interface RunResult {
  result: string;
  sessionId: string;
  budgetUsed: number;
  withinBudget: boolean;
  blocked: boolean;
  stopReason: "answered" | "max_steps" | "blocked" | "approval";
  guard?: { allowed: boolean; threatLevel: string; reason?: string };
  steps: RunStep[];
  /** What the last compile left out (its `WorkingContext.dropped`). */
  dropped: DroppedItem[];
  /** The turns the last compile recalled from earlier (its `WorkingContext.recalled`). */
  recalled: RecalledTurn[];
  /** What the last compile held and why, and what it left out (its
   * `WorkingContext.ledger`; each step has its own compile's). */
  ledger: Ledger;
  /** The provider's usage summed over the run's model calls; absent when none reported it. */
  usage?: ModelUsage;
  /** The calls waiting for a person's decision (empty unless `stopReason`
   * is `"approval"`). */
  pending: PendingApproval[];
  /** The outcomes of the calls this run's `approvals` decided, in order. */
  decided: ToolEventData[];
  /** This run's decisions that another process's, earlier in the session's
   * order, superseded (seen after `sync`): those calls were not run again. */
  superseded: Array<{ callId: string; eventId: string }>;
  /** The session the run recorded into (the one given, or a new one). */
  session: Session;
}
/** An MCP tool definition. */
export interface McpToolDefinition {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, Json>; required: string[] };
  outputSchema: { type: "object"; properties: Record<string, Json>; required: string[] };
}
/** An MCP `CallToolResult`. */
export interface McpCallToolResult {
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: {
    session_id: string;
    budget_used: number;
    within_budget: boolean;
    blocked: boolean;
    stop_reason: "answered" | "max_steps" | "blocked" | "approval";
    steps: number;
    artifacts: string[];
    /** The calls that wait for a person's decision (`stop_reason` "approval"), arguments redacted. */
    pending: Array<{ call_id: string; name: string; arguments: Json }>;
  };
  isError: boolean;
}
/**
 * Runs one user turn: records `input`, asks `guard`,
 * then compiles, calls `model` and runs the tool calls it asks for until it
 * answers or `maxSteps` calls were made. The model gets the messages in
 * `format`'s shape (OpenAI's by default). Calls that need approval stop it
 * (`stopReason: "approval"`); with no input and `approvals` it resumes.
 * Rejects with `INVALID_ARGUMENT` /
 * `INVALID_BUDGET` before recording anything, or `MODEL_FAILED`,
 * `GUARD_FAILED`, `ABORTED` keeping what was recorded.
 */
export function runCompiled<F extends RunFormat = "openai">(input: string | null, options: RunCompiledOptions<F>): Promise<RunResult>;
/** Resumes a run that stopped for approval: `runCompiled(null, options)`. */
export function runCompiled<F extends RunFormat = "openai">(options: RunCompiledOptions<F> & { session: Session; approvals: { [callId: string]: ApprovalDecision } }): Promise<RunResult>;
/**
 * Handles a `tools/call` of `orchestrate_compiled`: runs `args.task` under
 * `args.budget` with `args.system_prompt` and `options` as `runCompiled`
 * takes them. Always resolves to a `CallToolResult`: bad arguments and
 * failed runs are `isError: true` results with the code in the text.
 */
export function orchestrateCompiled<F extends RunFormat = "openai">(args: unknown, options: OrchestrateOptions<F>): Promise<McpCallToolResult>;
"#;

#[wasm_bindgen]
extern "C" {
    /// The `RunCompiledOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "RunCompiledOptions")]
    pub type RunCompiledOptionsArg;
    /// The `OrchestrateOptions` object (checked at run time, typed in TypeScript).
    #[wasm_bindgen(typescript_type = "OrchestrateOptions")]
    pub type OrchestrateOptionsArg;
}

/// A JS function (or object with `evaluate`) as the runner's [`Guard`].
struct JsGuard {
    this: JsValue,
    evaluate: Function,
}

#[async_trait(?Send)]
impl Guard for JsGuard {
    async fn evaluate(&self, input: &str) -> Result<GuardDecision> {
        let mut pending = AbortOnDrop::new();
        let opts = Object::new();
        let _ = Reflect::set(&opts, &"signal".into(), &pending.signal());
        let out = call_and_await(
            &self.evaluate,
            &self.this,
            &[input.into(), opts.into()],
            ErrorCode::GuardFailed,
            "the guard",
        )
        .await;
        pending.settled();
        let out = out?;
        let value = js_to_json(&out, "the guard's decision")
            .map_err(|e| Error::new(ErrorCode::GuardFailed, e.message().to_string()))?;
        GuardDecision::from_json(&value)
    }
}

/// A JS function as the run's [`ApprovalPolicy`].
struct JsApprovalPolicy(Function);

#[async_trait(?Send)]
impl ApprovalPolicy for JsApprovalPolicy {
    async fn needs_approval(&self, call: &RequestedToolCall) -> Result<bool> {
        let arguments = call.arguments.clone().unwrap_or_default();
        let value = to_js(&serde_json::json!({
            "id": call.id,
            "name": call.name,
            "arguments": arguments,
        }))?;
        let out = call_and_await(
            &self.0,
            &JsValue::UNDEFINED,
            &[value],
            ErrorCode::HandlerFailed,
            "options.needsApproval",
        )
        .await?;
        out.as_bool().ok_or_else(|| {
            Error::new(
                ErrorCode::HandlerFailed,
                format!(
                    "options.needsApproval must answer true or false (got {})",
                    describe(&out)
                ),
            )
        })
    }
}

/// A JS function as the run's [`SessionSync`].
struct JsSync(Function);

#[async_trait(?Send)]
impl SessionSync for JsSync {
    async fn sync(&self) -> Result<()> {
        call_and_await(
            &self.0,
            &JsValue::UNDEFINED,
            &[],
            ErrorCode::HandlerFailed,
            "options.sync",
        )
        .await
        .map(|_| ())
    }
}

/// An optional function option.
fn function_option(value: JsValue, what: &str) -> Result<Option<Function>> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value
        .dyn_into::<Function>()
        .map(Some)
        .map_err(|_| invalid(&format!("options.{what} must be a function")))
}

/// `options.approvals`: `{ [callId]: decision }`, in its keys' order.
fn approvals_option(value: &JsValue) -> Result<Vec<(String, ApprovalDecision)>> {
    if value.is_undefined() || value.is_null() {
        return Ok(Vec::new());
    }
    let json = js_to_json(value, "options.approvals")?;
    let Some(map) = json.as_object() else {
        return Err(invalid(
            "options.approvals must be an object: { [callId]: { approve, reason?, args? } }",
        ));
    };
    map.iter()
        .map(|(id, d)| {
            let what = format!("options.approvals[{id:?}]");
            Ok((id.clone(), ApprovalDecision::from_json(d, &what)?))
        })
        .collect()
}

/// A JS `AbortSignal` forwarded to a core one for the length of a run: the
/// listener is removed when the link is dropped.
struct SignalLink {
    target: JsValue,
    listener: Closure<dyn FnMut()>,
}

impl Drop for SignalLink {
    fn drop(&mut self) {
        if let Ok(remove) = Reflect::get(&self.target, &"removeEventListener".into())
            .and_then(|f| f.dyn_into::<Function>())
        {
            let _ = remove.call2(
                &self.target,
                &"abort".into(),
                self.listener.as_ref().unchecked_ref(),
            );
        }
    }
}

fn reason_of(signal: &JsValue) -> String {
    match Reflect::get(signal, &"reason".into()) {
        Ok(r) if !r.is_undefined() => thrown_message(&r),
        _ => "aborted".into(),
    }
}

/// Forwards `signal` (an `AbortSignal`, or nothing) to `core`.
fn link_signal(signal: &JsValue, core: &AbortSignal) -> Result<Option<SignalLink>> {
    if signal.is_undefined() || signal.is_null() {
        return Ok(None);
    }
    let not_a_signal = || {
        Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "options.signal must be an AbortSignal (got {})",
                describe(signal)
            ),
        )
    };
    let aborted = Reflect::get(signal, &"aborted".into())
        .ok()
        .and_then(|a| a.as_bool())
        .ok_or_else(not_a_signal)?;
    if aborted {
        core.abort(&reason_of(signal));
        return Ok(None);
    }
    let add = Reflect::get(signal, &"addEventListener".into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(not_a_signal)?;
    let (source, target) = (signal.clone(), core.clone());
    let listener = Closure::<dyn FnMut()>::new(move || target.abort(&reason_of(&source)));
    add.call2(signal, &"abort".into(), listener.as_ref().unchecked_ref())
        .map_err(|e| Error::new(ErrorCode::InvalidArgument, thrown_message(&e)))?;
    Ok(Some(SignalLink {
        target: signal.clone(),
        listener,
    }))
}

/// A prepared run: what it works with, how it goes, the session as JS.
struct Prepared {
    agent: Agent,
    options: RunOptions,
    session: JsValue,
    link: Option<SignalLink>,
}

fn invalid(message: &str) -> Error {
    Error::new(ErrorCode::InvalidArgument, message.to_string())
}

/// Reads a run's options; `budget` and `system_prompt` override theirs.
fn prepare<T: AsRef<JsValue>>(
    options: &Option<T>,
    budget: Option<u64>,
    system_prompt: Option<String>,
) -> Result<Prepared> {
    let get = |key: &str| option(options, key, "options");
    let format = match optional_string(options, "format")? {
        None => ProviderFormat::OpenAi,
        Some(name) => ProviderFormat::parse(&name)?,
    };
    let (this, respond) = require_callable(
        &get("model")?,
        "respond",
        "options.model must be a function (messages, { tools, signal, step }) => reply, or an object with respond()",
    )?;
    let stream_format = match optional_string(options, "streamFormat")? {
        None => None,
        Some(name) => Some(StreamFormat::parse(&name)?),
    };
    let model = Rc::new(JsModel {
        this,
        respond,
        format,
        stream_format,
    });
    let tool_choice = get("toolChoice")?;
    let tool_choice = if tool_choice.is_undefined() || tool_choice.is_null() {
        None
    } else {
        Some(ToolChoice::from_json(&js_to_json(
            &tool_choice,
            "options.toolChoice",
        )?)?)
    };
    let on_delta = get("onDelta")?;
    let on_delta = if on_delta.is_undefined() || on_delta.is_null() {
        None
    } else {
        Some(delta_listener(on_delta.dyn_into::<Function>().map_err(
            |_| invalid("options.onDelta must be a function ({ type, ... }) => void"),
        )?))
    };
    let guard = get("guard")?;
    let guard: Option<Rc<dyn Guard>> = if guard.is_undefined() || guard.is_null() {
        None
    } else {
        let (this, evaluate) = require_callable(
            &guard,
            "evaluate",
            "options.guard must be a function (input, { signal }) => decision, or an object with evaluate()",
        )?;
        Some(Rc::new(JsGuard { this, evaluate }))
    };
    let budget = match budget {
        Some(b) => b,
        None => budget_arg(&get("budget")?)?,
    };
    let mut compile = compile_options(options, system_prompt, "modelName")?;
    // The tools are counted as the run sends them.
    compile.format = Some(format);
    let tools = compile.tools.clone();
    let tool_timeout_ms = get("toolTimeoutMs")?;
    let tool_timeout_ms = if tool_timeout_ms.is_undefined() || tool_timeout_ms.is_null() {
        None
    } else {
        Some(
            tool_timeout_ms
                .as_f64()
                .ok_or_else(|| invalid("options.toolTimeoutMs must be a positive number"))?,
        )
    };
    let mut session = get("session")?;
    if session.is_undefined() || session.is_null() {
        session = JsSession::wrap(Rc::new(RefCell::new(Session::with_env(
            None,
            Rc::new(JsClock),
            Rc::new(DefaultTokenCounter),
            seed(),
        ))))
        .into();
    }
    let shared =
        registry::session(&session).ok_or_else(|| invalid("options.session must be a Session"))?;
    let handler = get("toolHandler")?;
    let bridge = get("bridge")?;
    let absent = |v: &JsValue| v.is_undefined() || v.is_null();
    let look_back = bool_option(options, "lookBackTools", true)?;
    let tool_handler = match (absent(&handler), absent(&bridge)) {
        (true, true) if look_back => {
            // No tools of the host's: a handler for the look-back tools
            // alone, over the run's artifact store (which also serves the
            // session's stored images and files).
            let store = get("artifactStore")?;
            let store = if absent(&store) {
                None
            } else {
                Some(crate::artifact_store_arg::artifact_store_arg(
                    &store,
                    "options.artifactStore",
                )?)
            };
            Some(Rc::new(CoreHandler::new(
                Rc::new(LookBackBridge::new(None, shared.clone(), store.clone())),
                Default::default(),
                shared.clone(),
                Rc::new(JsClock),
                ToolInterruptOptions {
                    artifact_store: store,
                    ..Default::default()
                },
            )))
        }
        (true, true) => None,
        (false, true) => Some(
            registry::tool_handler(&handler)
                .ok_or_else(|| invalid("options.toolHandler must be a ToolInterruptHandler"))?,
        ),
        (true, false) => Some(Rc::new(handler_from_options(&get, shared.clone())?)),
        (false, false) => {
            return Err(invalid(
                "give options.toolHandler or options.bridge, not both",
            ))
        }
    };
    let compiler = get("compiler")?;
    // Images and files are read from the compiler's media store, else
    // from the store the run's tools put them in.
    let media_store = tool_handler.as_ref().and_then(|h| h.artifact_store());
    let compiler = if compiler.is_undefined() || compiler.is_null() {
        let memory = get("memory")?;
        let memory = if absent(&memory) {
            None
        } else {
            Some(memory_arg(&memory, false)?)
        };
        CoreCompiler::recommended(media_store.cloned(), memory)
    } else {
        if !absent(&get("memory")?) {
            return Err(invalid(
                "options.memory is for the default compiler: give the compiler a MemoryPreloader instead",
            ));
        }
        crate::compiler::registered(&compiler)
            .ok_or_else(|| invalid("options.compiler must be a ContextCompiler"))?
            .borrow()
            .bind(&shared, media_store)
    };
    let trace_content = bool_option(options, "traceContent", false)?;
    let provider_name = optional_string(options, "providerName")?;
    let agent_name = optional_string(options, "agentName")?;
    let run = RunOptions {
        budget,
        compile,
        tools,
        max_steps: usize_option(options, "maxSteps", DEFAULT_MAX_STEPS)?,
        tool_timeout_ms,
        signal: AbortSignal::new(),
        look_back,
        on_delta,
        stream_format,
        tool_choice,
        trace: JsTracer::from_option(&get("tracer")?, "options.tracer")?.map(|tracer| {
            TraceOptions {
                tracer: Rc::new(tracer),
                content: trace_content,
                provider: provider_name,
                agent_name,
            }
        }),
        needs_approval: function_option(get("needsApproval")?, "needsApproval")?
            .map(|f| Rc::new(JsApprovalPolicy(f)) as Rc<dyn ApprovalPolicy>),
        approvals: approvals_option(&get("approvals")?)?,
        sync: function_option(get("sync")?, "sync")?
            .map(|f| Rc::new(JsSync(f)) as Rc<dyn SessionSync>),
    };
    let link = link_signal(&get("signal")?, &run.signal)?;
    Ok(Prepared {
        agent: Agent {
            session: shared,
            compiler,
            model,
            tools: tool_handler,
            guard,
        },
        options: run,
        session,
        link,
    })
}

/// Runs a prepared run (a resumed one without `input`); its result as JS,
/// with the session.
async fn run(
    input: Option<String>,
    prepared: Prepared,
) -> Result<(context_compiler::runner::RunResult, JsValue)> {
    let Prepared {
        agent,
        options,
        session,
        link,
    } = prepared;
    let result = match &input {
        Some(input) => run_core(input, &agent, &options).await,
        None => resume_compiled(&agent, &options).await,
    };
    drop(link);
    Ok((result?, session))
}

/// The look-back tools' definitions (`search_history`, `read_artifact`),
/// as `runCompiled({ lookBackTools: true })` offers them: `{ name,
/// description, parameters }` each, `parameters` a JSON Schema.
#[wasm_bindgen(js_name = lookBackToolDefinitions, unchecked_return_type = "ToolSpec[]")]
pub fn look_back_tool_definitions() -> JsResult<JsValue> {
    Ok(to_js(
        &context_compiler::tools::look_back::look_back_definitions(),
    )?)
}

/// Runs one user turn: records `input`, asks `guard`,
/// then compiles, calls `model` and runs the tool calls it asks for until it
/// answers or `maxSteps` calls were made. Resolves to `{ result, sessionId,
/// budgetUsed, withinBudget, blocked, stopReason, steps, session }`; rejects
/// with `INVALID_ARGUMENT` / `INVALID_BUDGET` before recording anything, or
/// `MODEL_FAILED`, `GUARD_FAILED`, `ABORTED` keeping what was recorded.
/// (Typed with its format parameter in `RUNNER_TYPES`.)
#[wasm_bindgen(js_name = runCompiled, skip_typescript)]
pub fn run_compiled(input: JsValue, options: RunCompiledOptionsArg) -> js_sys::Promise {
    let prepared = (|| -> Result<(Option<String>, Prepared)> {
        let options: JsValue = options.into();
        // `runCompiled(options)` resumes as `runCompiled(null, options)` does.
        let (input, options) = if input.is_object() && options.is_undefined() {
            (JsValue::NULL, input)
        } else {
            (input, options)
        };
        let input = if input.is_null() || input.is_undefined() {
            None
        } else {
            Some(input.as_string().ok_or_else(|| {
                invalid("input must be a string (or null to resume a run that waits for approval)")
            })?)
        };
        let options: RunCompiledOptionsArg = options.unchecked_into();
        Ok((input, prepare(&Some(options), None, None)?))
    })();
    let (input, prepared) = match prepared {
        Ok(p) => p,
        Err(e) => return js_sys::Promise::reject(&context_compiler_js::error::to_js_error(e)),
    };
    spawn(async move {
        let (result, session) = run(input, prepared).await?;
        let out = to_js(&result)?;
        let _ = Reflect::set(&out, &"session".into(), &session);
        Ok(out)
    })
}

/// The MCP tool `orchestrate_compiled`: `{ name, description,
/// inputSchema, outputSchema }`, for an MCP server's `tools/list`.
#[wasm_bindgen(js_name = orchestrateCompiledTool, unchecked_return_type = "McpToolDefinition")]
pub fn orchestrate_compiled_tool() -> JsResult<JsValue> {
    Ok(to_js(&mcp::tool_definition())?)
}

/// Handles a `tools/call` of `orchestrate_compiled`: runs `arguments.task`
/// under `arguments.budget` with `arguments.system_prompt` (a
/// default otherwise) and `options` as `runCompiled` takes them. Always
/// resolves to a `CallToolResult`: bad arguments and failed runs are
/// `isError: true` results with the code in the text, as MCP asks.
/// (Typed with its format parameter in `RUNNER_TYPES`.)
#[wasm_bindgen(js_name = orchestrateCompiled, skip_typescript)]
pub fn orchestrate_compiled(arguments: JsValue, options: OrchestrateOptionsArg) -> js_sys::Promise {
    let prepared = (|| -> Result<(String, Prepared)> {
        let args = mcp::parse_arguments(&js_to_json(&arguments, "arguments")?)?;
        let prepared = prepare(&Some(options), Some(args.budget), Some(args.system_prompt))?;
        Ok((args.task, prepared))
    })();
    spawn(async move {
        let outcome = match prepared {
            Ok((task, prepared)) => run(Some(task), prepared).await.map(|(r, _)| r),
            Err(e) => Err(e),
        };
        let result = match outcome {
            Ok(r) => mcp::tool_result(&r),
            Err(e) => mcp::tool_error(&e),
        };
        to_js(&result)
    })
}
