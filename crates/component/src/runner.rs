//! The `runner` interface (world `context-compiler-runner`): a whole turn
//! run by the core's turn runner, calling the host's `model` and `guard`
//! imports and its tools through `tool-bridge`.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::artifact_store::selected_store;
use super::bindings::agent::context_compiler::{approval, guard, model};
use super::bindings::exports::agent::context_compiler::normalizer::SchemaRegistryBorrow;
use super::bindings::exports::agent::context_compiler::runner::{
    ApprovalDecision as WitDecision, Error, Guest, RunOptions as WitRunOptions,
    ToolChoice as WitToolChoice,
};
use super::bindings::exports::agent::context_compiler::sessions::SessionBorrow;
use super::compiler::{
    format, json_option, layout, memory_store, pipeline, tool_definitions, tool_specs, tracked,
};
use super::exec::block_on;
use super::host::HostBridge;
use super::normalizer::RegistryResource;
use super::sessions::SessionResource;
use super::{parse_json, to_json, Component};
use context_compiler::artifacts::ArtifactStore;
use context_compiler::clock::SystemClock;
use context_compiler::compiler::{CompileOptions, ContextCompiler};
use context_compiler::error::{Error as CoreError, ErrorCode, Result};
use context_compiler::memory::MemoryStore;
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::runner::{
    mcp, resume_compiled, run_compiled, Agent, ApprovalPolicy, Guard, GuardDecision, Model,
    ModelReply, ModelRequest, RequestedToolCall, RunOptions, DEFAULT_MAX_STEPS,
};
use context_compiler::session::ApprovalDecision;
use context_compiler::tools::{
    AbortSignal, ToolChoice, ToolInterruptHandler, ToolInterruptOptions, DEFAULT_EXTERNALIZE_BYTES,
};
use context_compiler::working_context::ProviderFormat;

/// The host's `model` import, given requests in `format`'s shape.
struct HostModel {
    format: ProviderFormat,
}

fn model_failed(message: String) -> CoreError {
    CoreError::new(ErrorCode::ModelFailed, message)
}

#[async_trait(?Send)]
impl Model for HostModel {
    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply> {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| t.definition(self.format))
            .collect();
        let mut body = json!({
            "messages": request.context.to_provider_messages(self.format),
            "tools": tools,
        });
        if let Some(choice) = request.tool_choice {
            body["toolChoice"] = choice.for_format(self.format);
        }
        let step = u32::try_from(request.step).unwrap_or(u32::MAX);
        let text = model::respond(&body.to_string(), step)
            .map_err(|m| model_failed(format!("the model failed: {m}")))?;
        let reply: Value = serde_json::from_str(&text)
            .map_err(|e| model_failed(format!("the model's reply is not JSON ({e})")))?;
        ModelReply::from_json(&reply)
    }
}

/// The host's `guard` import.
struct HostGuard;

#[async_trait(?Send)]
impl Guard for HostGuard {
    async fn evaluate(&self, input: &str) -> Result<GuardDecision> {
        let failed = |m: String| CoreError::new(ErrorCode::GuardFailed, m);
        let text = guard::evaluate(input).map_err(|m| failed(format!("the guard failed: {m}")))?;
        let decision: Value = serde_json::from_str(&text)
            .map_err(|e| failed(format!("the guard's decision is not JSON ({e})")))?;
        GuardDecision::from_json(&decision)
    }
}

/// The host's `approval` import.
struct HostApproval;

#[async_trait(?Send)]
impl ApprovalPolicy for HostApproval {
    async fn needs_approval(&self, call: &RequestedToolCall) -> Result<bool> {
        let arguments = call.arguments.clone().unwrap_or_default();
        let text = json!({ "id": call.id, "name": call.name, "arguments": arguments }).to_string();
        approval::needs_approval(&text).map_err(|m| {
            CoreError::new(
                ErrorCode::HandlerFailed,
                format!("the approval policy failed: {m}"),
            )
        })
    }
}

/// The core's decisions of WIT ones, in order.
fn decisions(list: Vec<WitDecision>) -> Result<Vec<(String, ApprovalDecision)>> {
    list.into_iter()
        .enumerate()
        .map(|(i, d)| {
            let what = format!("approvals[{i}]");
            let mut value = json!({ "approve": d.approve });
            if let Some(reason) = d.reason {
                value["reason"] = json!(reason);
            }
            if let Some(args) = d.arguments_json {
                value["args"] = parse_json(&args, &format!("{what}.arguments-json"))?;
            }
            Ok((d.call_id, ApprovalDecision::from_json(&value, &what)?))
        })
        .collect()
}

/// The core's tool choice of a WIT one.
fn tool_choice(choice: WitToolChoice) -> ToolChoice {
    match choice {
        WitToolChoice::Auto => ToolChoice::Auto,
        WitToolChoice::Required => ToolChoice::Required,
        WitToolChoice::None => ToolChoice::None,
        WitToolChoice::Tool(name) => ToolChoice::Tool(name),
    }
}

/// The run's compiler: the host's, or the recommended one over the
/// selected store (when the run keeps artifacts) and `memory`.
fn compiler(
    o: &mut WitRunOptions,
    store: Option<Rc<dyn ArtifactStore>>,
) -> Result<ContextCompiler> {
    let memory = (!o.memory.is_empty()).then(|| memory_store(&o.memory) as Rc<dyn MemoryStore>);
    let compiler = match o.compiler.take() {
        None => ContextCompiler::recommended(store, memory),
        Some(_) if memory.is_some() => return Err(CoreError::new(
            ErrorCode::InvalidArgument,
            "memory is for the recommended compiler: give the compiler a memory preloader instead",
        )),
        Some(spec) => {
            let compiler = ContextCompiler::with_layout(
                pipeline(spec.processors, memory_store(&[]))?,
                layout(spec.layout),
            );
            match store {
                Some(store) if spec.media_store => compiler.with_media_store(store),
                _ if spec.media_store => compiler.with_media_store(selected_store()?),
                _ => compiler,
            }
        }
    };
    Ok(tracked(compiler))
}

/// The agent and the options of a run; `budget` and `system_prompt`
/// override the options' own.
fn prepare(
    target: SessionBorrow<'_>,
    normalizer: Option<SchemaRegistryBorrow<'_>>,
    mut o: WitRunOptions,
) -> Result<(Agent, RunOptions)> {
    let format = o.format.map_or(ProviderFormat::OpenAi, format);
    let tools = tool_specs(std::mem::take(&mut o.tools))?;
    let store: Option<Rc<dyn ArtifactStore>> = if o.artifact_store {
        Some(selected_store()?)
    } else {
        None
    };
    let session = target.get::<SessionResource>().inner.clone();
    let normalizer = match normalizer {
        Some(r) => PerceptionAligner::new(r.get::<RegistryResource>().inner.clone()),
        None => PerceptionAligner::default(),
    };
    let handler = ToolInterruptHandler::new(
        Rc::new(HostBridge),
        normalizer,
        session.clone(),
        Rc::new(SystemClock),
        ToolInterruptOptions {
            artifact_store: store.clone(),
            externalize_threshold: o
                .externalize_threshold
                .map_or(DEFAULT_EXTERNALIZE_BYTES, |t| {
                    usize::try_from(t).unwrap_or(usize::MAX)
                }),
        },
    );
    let compile = CompileOptions {
        system_prompt: o.system_prompt.take().unwrap_or_default(),
        policies: std::mem::take(&mut o.policies),
        tool_definitions: tool_definitions(o.tool_definitions_json.take())?,
        user_preferences: json_option(o.user_preferences_json.take(), "user-preferences-json")?,
        goal: o.goal.take(),
        state_digest: json_option(o.state_digest_json.take(), "state-digest-json")?,
        task_state: o.task_state.take(),
        tools: tools.clone(),
        // The tools are counted as the run sends them.
        format: Some(format),
        model: o.model_name.take(),
        reserve_output: o.reserve_output.unwrap_or(0),
        usage_margin: o.usage_margin,
    };
    let options = RunOptions {
        budget: o.budget,
        compile,
        tools,
        max_steps: o.max_steps.map_or(DEFAULT_MAX_STEPS, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        }),
        tool_timeout_ms: o.tool_timeout_ms.map(|t| t as f64),
        signal: AbortSignal::new(),
        look_back: o.look_back_tools.unwrap_or(true),
        on_delta: None,
        stream_format: None,
        tool_choice: o.tool_choice.take().map(tool_choice),
        trace: None,
        needs_approval: o
            .needs_approval
            .then(|| Rc::new(HostApproval) as Rc<dyn ApprovalPolicy>),
        approvals: decisions(std::mem::take(&mut o.approvals))?,
        // The host syncs the session resource before `resume`.
        sync: None,
    };
    let agent = Agent {
        compiler: compiler(&mut o, store)?,
        session,
        model: Rc::new(HostModel { format }),
        tools: Some(Rc::new(handler)),
        guard: o.guard.then(|| Rc::new(HostGuard) as Rc<dyn Guard>),
    };
    Ok((agent, options))
}

impl Guest for Component {
    fn run(
        input: String,
        session: SessionBorrow<'_>,
        normalizer: Option<SchemaRegistryBorrow<'_>>,
        options: WitRunOptions,
    ) -> std::result::Result<String, Error> {
        let (agent, options) = prepare(session, normalizer, options)?;
        let result = block_on(run_compiled(&input, &agent, &options)).and_then(|r| r)?;
        to_json(&result)
    }

    fn resume(
        session: SessionBorrow<'_>,
        normalizer: Option<SchemaRegistryBorrow<'_>>,
        options: WitRunOptions,
    ) -> std::result::Result<String, Error> {
        let (agent, options) = prepare(session, normalizer, options)?;
        let result = block_on(resume_compiled(&agent, &options)).and_then(|r| r)?;
        to_json(&result)
    }

    fn orchestrate_tool() -> String {
        mcp::tool_definition().to_string()
    }

    fn orchestrate(
        arguments_json: String,
        session: SessionBorrow<'_>,
        normalizer: Option<SchemaRegistryBorrow<'_>>,
        mut options: WitRunOptions,
    ) -> String {
        let outcome = (|| -> std::result::Result<_, CoreError> {
            let arguments = parse_json(&arguments_json, "arguments-json")?;
            let args = mcp::parse_arguments(&arguments)?;
            options.budget = args.budget;
            options.system_prompt = Some(args.system_prompt);
            let (agent, options) = prepare(session, normalizer, options)?;
            block_on(run_compiled(&args.task, &agent, &options)).and_then(|r| r)
        })();
        let result = match outcome {
            Ok(run) => mcp::tool_result(&run),
            Err(e) => mcp::tool_error(&e),
        };
        result.to_string()
    }
}
