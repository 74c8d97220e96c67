//! The `compiler` interface: compile a session with the built-in processors.

use std::rc::Rc;

use super::artifact_store::selected_store;
use super::bindings::exports::agent::context_compiler::compiler::{
    CompileOptions, Compiled, Error, Guest, HistoryRecallOptions, Layout as WitLayout, Memory,
    MessageFormat, Processor as WitProcessor,
};
use super::bindings::exports::agent::context_compiler::sessions::SessionBorrow;
use super::exec::block_on;
use super::sessions::SessionResource;
use super::{parse_json, to_json, wit_error, Component};
use context_compiler::compiler::{
    ArtifactAttacher, Compactor, CompileOptions as CoreOptions, ContextCompiler, HistoryRecall,
    HistorySelector, MemoryPreloader, Processor,
};
use context_compiler::error::{self as core, ErrorCode};
use context_compiler::memory::InMemoryBackend;
use context_compiler::working_context::{Layout, PrefixTracker, ProviderFormat, WorkingContext};

thread_local! {
    /// Each session's previous compile in this instance: the context
    /// JSON's `cache` reports against it (the instance is the compiler).
    static PREFIX: Rc<PrefixTracker> = Rc::default();
}

/// The core pipeline of the WIT processors, with `memories` for the preloader.
fn pipeline(
    processors: Vec<WitProcessor>,
    memories: &[Memory],
) -> Result<Vec<Rc<dyn Processor>>, Error> {
    let memory = Rc::new(InMemoryBackend::new());
    for m in memories {
        memory.store(&m.key, &m.content, &m.category);
    }
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
            WitProcessor::Compactor => Rc::new(Compactor::new()),
            WitProcessor::MemoryPreloader(top_k) => {
                Rc::new(MemoryPreloader::new(memory.clone(), top_k as usize))
            }
            WitProcessor::PinnedMemoryPreloader(top_k) => {
                Rc::new(MemoryPreloader::pinned(memory.clone(), top_k as usize))
            }
            WitProcessor::ArtifactAttacher(threshold) => Rc::new(ArtifactAttacher::new(
                selected_store()?,
                usize::try_from(threshold).unwrap_or(usize::MAX),
            )),
            WitProcessor::HistoryRecall(o) => Rc::new(recall(o)),
        });
    }
    Ok(pipeline)
}

/// History recall with the options given, the defaults for the rest.
fn recall(o: HistoryRecallOptions) -> HistoryRecall {
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
    recall
}

/// Reads an optional JSON option.
fn json_option(text: Option<String>, what: &str) -> Result<Option<serde_json::Value>, Error> {
    text.map(|t| parse_json(&t, what)).transpose()
}

fn core_options(o: CompileOptions) -> Result<(Layout, CoreOptions), Error> {
    let layout = match o.layout {
        WitLayout::SingleSystem => Layout::SingleSystem,
        WitLayout::Zoned => Layout::Zoned,
    };
    let tool_definitions = match json_option(o.tool_definitions_json, "tool-definitions-json")? {
        None => Vec::new(),
        Some(serde_json::Value::Array(a)) => a,
        Some(_) => {
            return Err(wit_error(core::Error::new(
                ErrorCode::InvalidArgument,
                "tool-definitions-json must be a JSON array",
            )))
        }
    };
    let options = CoreOptions {
        system_prompt: o.system_prompt,
        policies: o.policies,
        tool_definitions,
        user_preferences: json_option(o.user_preferences_json, "user-preferences-json")?,
        goal: o.goal,
        state_digest: json_option(o.state_digest_json, "state-digest-json")?,
        task_state: o.task_state,
        ..CoreOptions::default()
    };
    options.validate()?;
    Ok((layout, options))
}

fn run(
    target: SessionBorrow<'_>,
    budget: u64,
    compiler: ContextCompiler,
    options: &CoreOptions,
) -> Result<Compiled, Error> {
    let resource = target.get::<SessionResource>();
    let mut session = resource.inner.try_borrow_mut().map_err(|_| {
        wit_error(core::Error::new(
            ErrorCode::SessionBusy,
            "the session is in use by a running call",
        ))
    })?;
    let compiler = PREFIX.with(|prefix| compiler.with_prefix_tracker(prefix.clone()));
    let ctx = block_on(compiler.compile_with(&mut session, budget, options)).and_then(|r| r)?;
    Ok(Compiled {
        context_json: to_json(&ctx)?,
        messages_json: to_json(&ctx.to_messages())?,
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
        let compiler = ContextCompiler::new(pipeline(processors, &memories)?);
        run(target, budget, compiler, &CoreOptions::new(system_prompt))
    }

    fn compile_with(
        target: SessionBorrow<'_>,
        budget: u64,
        options: CompileOptions,
        processors: Vec<WitProcessor>,
        memories: Vec<Memory>,
    ) -> Result<Compiled, Error> {
        let (layout, options) = core_options(options)?;
        let compiler = ContextCompiler::with_layout(pipeline(processors, &memories)?, layout);
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

    fn to_messages(context_json: String, format: MessageFormat) -> Result<String, Error> {
        let ctx = parse_context(&context_json)?;
        let format = match format {
            MessageFormat::Plain => ProviderFormat::Plain,
            MessageFormat::Openai => ProviderFormat::OpenAi,
            MessageFormat::Anthropic => ProviderFormat::Anthropic,
            MessageFormat::AiSdk => ProviderFormat::AiSdk,
            MessageFormat::OpenaiResponses => ProviderFormat::OpenAiResponses,
            MessageFormat::Gemini => ProviderFormat::Gemini,
        };
        to_json(&ctx.to_provider_messages(format))
    }
}
