//! The `compiler` interface: compile a session with the built-in processors.

use std::rc::Rc;

use super::artifact_store::selected_store;
use super::bindings::exports::agent::context_compiler::compiler::{
    CompileOptions, Compiled, Error, FormatOptions, Guest, HistoryRecallOptions,
    Layout as WitLayout, Memory, MessageFormat, Processor as WitProcessor, ToolSpec as WitToolSpec,
};
use super::bindings::exports::agent::context_compiler::sessions::SessionBorrow;
use super::exec::block_on;
use super::host::{HostEmbedder, HostLlm};
use super::sessions::SessionResource;
use super::{parse_json, to_json, wit_error, Component};
use context_compiler::clock::SystemClock;
use context_compiler::compiler::{
    ArtifactAttacher, Compactor, CompileOptions as CoreOptions, ContextCompiler, HistoryRecall,
    HistorySelector, MemoryPreloader, Processor, DEFAULT_EMBEDDER_TIMEOUT_MS,
};
use context_compiler::error::{self as core, ErrorCode};
use context_compiler::llm::Llm;
use context_compiler::memory::{InMemoryBackend, MemoryStore};
use context_compiler::tools::ToolSpec;
use context_compiler::working_context::{
    checker::check_request_for, Layout, PrefixTracker, ProviderFormat, WorkingContext,
};

thread_local! {
    /// Each session's previous compile in this instance: the context
    /// JSON's `cache` reports against it (the instance is the compiler).
    static PREFIX: Rc<PrefixTracker> = Rc::default();
}

/// The memories given, as the preloader's store.
pub(crate) fn memory_store(memories: &[Memory]) -> Rc<InMemoryBackend> {
    let memory = Rc::new(InMemoryBackend::new());
    for m in memories {
        memory.store(&m.key, &m.content, &m.category);
    }
    memory
}

/// The core pipeline of the WIT processors, with `memory` for the preloader.
pub(crate) fn pipeline(
    processors: Vec<WitProcessor>,
    memory: Rc<dyn MemoryStore>,
) -> core::Result<Vec<Rc<dyn Processor>>> {
    let mut pipeline: Vec<Rc<dyn Processor>> = Vec::with_capacity(processors.len());
    for p in processors {
        pipeline.push(match p {
            WitProcessor::HistorySelector(o) => Rc::new(HistorySelector::new(
                o.keep_first as usize,
                if o.keep_last == u32::MAX {
                    usize::MAX
                } else {
                    o.keep_last as usize
                },
            )),
            WitProcessor::Compactor(o) => {
                let summarizer = o.summarizer.then(|| Rc::new(HostLlm) as Rc<dyn Llm>);
                let target = o.target.unwrap_or(Compactor::new().target());
                Rc::new(Compactor::with_options(summarizer, target)?)
            }
            WitProcessor::MemoryPreloader(o) if o.pin => {
                Rc::new(MemoryPreloader::pinned(memory.clone(), o.top_k as usize))
            }
            WitProcessor::MemoryPreloader(o) => {
                Rc::new(MemoryPreloader::new(memory.clone(), o.top_k as usize))
            }
            WitProcessor::ArtifactAttacher(o) => Rc::new(
                ArtifactAttacher::new(
                    selected_store()?,
                    usize::try_from(o.threshold_bytes).unwrap_or(usize::MAX),
                )
                .keeping_unread(o.keep_unread.unwrap_or(true)),
            ),
            WitProcessor::HistoryRecall(o) => Rc::new(recall(o)?),
        });
    }
    Ok(pipeline)
}

/// History recall with the options given, the defaults for the rest.
fn recall(o: HistoryRecallOptions) -> core::Result<HistoryRecall> {
    let mut recall = HistoryRecall::new();
    if let Some(share) = o.share {
        recall = recall.with_share(share);
    }
    if let Some(distinction) = o.min_distinction {
        recall = recall.with_distinction(distinction);
    }
    if let Some(relevance) = o.min_relevance {
        recall = recall.with_relevance(relevance);
    }
    if let Some(matches) = o.matches {
        recall = recall.with_matches(matches as usize);
    }
    if let Some(neighbours) = o.neighbours {
        recall = recall.with_neighbours(neighbours as usize);
    }
    if let Some(tokens) = o.turn_tokens {
        recall = recall.with_turn_tokens(u64::from(tokens));
    }
    if o.artifact_store {
        recall = recall.with_artifacts(selected_store()?);
    }
    if o.embedder {
        let timeout_ms = o
            .embedder_timeout_ms
            .unwrap_or(DEFAULT_EMBEDDER_TIMEOUT_MS as u64);
        recall = recall
            .with_embedder(Rc::new(HostEmbedder { timeout_ms }))
            .with_embedder_timeout(timeout_ms as f64, Rc::new(SystemClock));
    }
    Ok(recall)
}

/// Reads an optional JSON option.
pub(crate) fn json_option(
    text: Option<String>,
    what: &str,
) -> core::Result<Option<serde_json::Value>> {
    text.map(|t| parse_json(&t, what)).transpose()
}

/// The core's layout of a WIT layout.
pub(crate) fn layout(layout: WitLayout) -> Layout {
    match layout {
        WitLayout::SingleSystem => Layout::SingleSystem,
        WitLayout::Zoned => Layout::Zoned,
    }
}

/// The core's format of a WIT format.
pub(crate) fn format(format: MessageFormat) -> ProviderFormat {
    match format {
        MessageFormat::Plain => ProviderFormat::Plain,
        MessageFormat::Openai => ProviderFormat::OpenAi,
        MessageFormat::Anthropic => ProviderFormat::Anthropic,
        MessageFormat::AiSdk => ProviderFormat::AiSdk,
        MessageFormat::OpenaiResponses => ProviderFormat::OpenAiResponses,
        MessageFormat::Gemini => ProviderFormat::Gemini,
    }
}

/// The core's tool specs of WIT ones, checked as the npm package checks
/// them (names non-empty and unique, timeouts positive).
pub(crate) fn tool_specs(tools: Vec<WitToolSpec>) -> core::Result<Vec<ToolSpec>> {
    let mut list = Vec::with_capacity(tools.len());
    for (i, t) in tools.into_iter().enumerate() {
        let mut spec = serde_json::Map::new();
        spec.insert("name".into(), t.name.into());
        if let Some(d) = t.description {
            spec.insert("description".into(), d.into());
        }
        if let Some(p) = json_option(t.parameters_json, &format!("tools[{i}].parameters-json"))? {
            spec.insert("parameters".into(), p);
        }
        if let Some(ms) = t.timeout_ms {
            spec.insert("timeoutMs".into(), ms.into());
        }
        if let Some(asks) = t.needs_approval {
            spec.insert("needsApproval".into(), asks.into());
        }
        list.push(serde_json::Value::Object(spec));
    }
    ToolSpec::parse_list(&serde_json::Value::Array(list))
}

/// Tool definitions given as a JSON array.
pub(crate) fn tool_definitions(text: Option<String>) -> core::Result<Vec<serde_json::Value>> {
    match json_option(text, "tool-definitions-json")? {
        None => Ok(Vec::new()),
        Some(serde_json::Value::Array(a)) => Ok(a),
        Some(_) => Err(core::Error::new(
            ErrorCode::InvalidArgument,
            "tool-definitions-json must be a JSON array",
        )),
    }
}

/// `compiler` reporting its prompt caching against this instance's
/// previous compile of each session.
pub(crate) fn tracked(compiler: ContextCompiler) -> ContextCompiler {
    PREFIX.with(|prefix| compiler.with_prefix_tracker(prefix.clone()))
}

fn core_options(o: CompileOptions) -> core::Result<(Layout, bool, CoreOptions)> {
    let options = CoreOptions {
        system_prompt: o.system_prompt,
        policies: o.policies,
        tool_definitions: tool_definitions(o.tool_definitions_json)?,
        user_preferences: json_option(o.user_preferences_json, "user-preferences-json")?,
        goal: o.goal,
        state_digest: json_option(o.state_digest_json, "state-digest-json")?,
        task_state: o.task_state,
        tools: tool_specs(o.tools)?,
        format: o.format.map(format),
        model: o.model,
        reserve_output: o.reserve_output.unwrap_or(0),
        usage_margin: o.usage_margin,
    };
    options.validate()?;
    Ok((layout(o.layout), o.media_store, options))
}

fn run(
    target: SessionBorrow<'_>,
    budget: u64,
    compiler: ContextCompiler,
    options: &CoreOptions,
) -> Result<Compiled, Error> {
    let rendered = |ctx: &WorkingContext| match (options.format, options.model.as_deref()) {
        (None, _) => to_json(&ctx.to_messages()),
        (Some(format), Some(model)) => to_json(&ctx.to_provider_messages_for(format, model)),
        (Some(format), None) => to_json(&ctx.to_provider_messages(format)),
    };
    let resource = target.get::<SessionResource>();
    let mut session = resource.inner.try_borrow_mut().map_err(|_| {
        wit_error(core::Error::new(
            ErrorCode::SessionBusy,
            "the session is in use by a running call",
        ))
    })?;
    let compiler = tracked(compiler);
    let ctx = block_on(compiler.compile_with(&mut session, budget, options)).and_then(|r| r)?;
    Ok(Compiled {
        context_json: to_json(&ctx)?,
        messages_json: rendered(&ctx)?,
        token_count: ctx.token_count,
    })
}

/// A compiled context from its JSON (`compiled.context-json`).
fn parse_context(context_json: &str) -> Result<WorkingContext, Error> {
    serde_json::from_value(parse_json(context_json, "context-json")?).map_err(|e| {
        wit_error(core::Error::new(
            ErrorCode::InvalidArgument,
            format!("context-json is not a compiled context ({e})"),
        ))
    })
}

impl Guest for Component {
    fn compile(
        target: SessionBorrow<'_>,
        budget: u64,
        system_prompt: String,
        processors: Vec<WitProcessor>,
        memories: Vec<Memory>,
    ) -> Result<Compiled, Error> {
        let compiler = ContextCompiler::new(pipeline(processors, memory_store(&memories))?);
        run(target, budget, compiler, &CoreOptions::new(system_prompt))
    }

    fn compile_with(
        target: SessionBorrow<'_>,
        budget: u64,
        options: CompileOptions,
        processors: Vec<WitProcessor>,
        memories: Vec<Memory>,
    ) -> Result<Compiled, Error> {
        let (layout, media_store, options) = core_options(options)?;
        let mut compiler =
            ContextCompiler::with_layout(pipeline(processors, memory_store(&memories))?, layout);
        if media_store {
            compiler = compiler.with_media_store(selected_store()?);
        }
        run(target, budget, compiler, &options)
    }

    fn ledger(target: SessionBorrow<'_>, context_json: String) -> Result<String, Error> {
        let ctx = parse_context(&context_json)?;
        let resource = target.get::<SessionResource>();
        let session = resource.inner.try_borrow().map_err(|_| {
            wit_error(core::Error::new(
                ErrorCode::SessionBusy,
                "the session is in use by a running call",
            ))
        })?;
        to_json(&ctx.ledger_for(&session))
    }

    fn to_messages(context_json: String, options: FormatOptions) -> Result<String, Error> {
        let ctx = parse_context(&context_json)?;
        let format = options.format.map_or(ProviderFormat::Plain, format);
        to_json(&match options.model.as_deref() {
            Some(model) => ctx.to_provider_messages_for(format, model),
            None => ctx.to_provider_messages(format),
        })
    }

    fn check_request(request_json: String, options: FormatOptions) -> Result<String, Error> {
        let request = parse_json(&request_json, "request-json")?;
        let format = options.format.map_or(ProviderFormat::Plain, format);
        to_json(&check_request_for(
            &request,
            format,
            options.model.as_deref(),
        ))
    }

    fn look_back_tool_definitions() -> String {
        context_compiler::tools::look_back::look_back_definitions().to_string()
    }
}
