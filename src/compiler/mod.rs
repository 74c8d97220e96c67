//! The context compiler: a pipeline of processors that turns a session into a
//! [`WorkingContext`] that never exceeds its budget.

mod attacher;
pub mod compaction;
mod compactor;
mod excerpt;
mod exchanges;
mod facts;
mod fit;
mod fit_zoned;
mod history;
mod omissions;
mod options;
mod preloader;
mod processor;
mod provider_compaction;
mod recall;
mod summary;
mod zoned_selection;

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::artifacts::ArtifactStore;
use crate::budget::{BudgetPlan, DEFAULT_USAGE_MARGIN};
use crate::error::{Error, ErrorCode, Result};
use crate::session::Session;
use crate::telemetry::{genai, Span, Tracer};
use crate::tokens::kind::ContentKind;
use crate::working_context::{Layout, PrefixTracker, WorkingContext};
use crate::zones::CompactionLevel;

pub use options::CompileOptions;

pub use attacher::ArtifactAttacher;
pub use compactor::Compactor;
pub use history::HistorySelector;
pub use preloader::{MemoryPreloader, DEFAULT_MEMORY_TOP_K};
pub use processor::{Processor, SessionWrites};
pub use recall::{
    HistoryRecall, DEFAULT_EMBEDDER_TIMEOUT_MS, DEFAULT_RECALLED_TURN_TOKENS,
    DEFAULT_RECALL_DISTINCTION, DEFAULT_RECALL_MATCHES, DEFAULT_RECALL_NEIGHBOURS,
    DEFAULT_RECALL_RELEVANCE, DEFAULT_RECALL_SHARE,
};

/// Runs processors in order to produce a [`WorkingContext`] from a
/// [`Session`], then fits the result to the budget (dropping middle history,
/// then truncating the largest item) and sets its exact token count.
#[derive(Default, Clone)]
pub struct ContextCompiler {
    processors: Vec<Rc<dyn Processor>>,
    layout: Layout,
    /// Where the bytes of the images and files a compile keeps are read
    /// from, so that rendering can inline them.
    media_store: Option<Rc<dyn ArtifactStore>>,
    /// Each session's previous compile, for the prefix report.
    prefix: Rc<PrefixTracker>,
    /// Traces each compile as a `compile_context` span.
    tracer: Option<Rc<dyn Tracer>>,
}

/// Reads the bytes of the media parts `ctx` keeps from `store` (each
/// artifact once); a part whose bytes the store does not have keeps none
/// and is rendered as its reference.
async fn load_media(ctx: &mut WorkingContext, store: &dyn ArtifactStore) -> Result<()> {
    let mut read: BTreeMap<String, Option<Rc<str>>> = BTreeMap::new();
    let with_media = ctx.history.iter_mut().filter(|m| !m.media.is_empty());
    for part in with_media.flat_map(|m| Rc::make_mut(m).media.iter_mut()) {
        let Some(id) = part.artifact.clone() else {
            continue;
        };
        if let Some(data) = read.get(&id) {
            part.data = data.clone();
            continue;
        }
        crate::media::load(part, store).await?;
        read.insert(id, part.data.clone());
    }
    Ok(())
}

/// `ctx` with the newest user message and what follows it (the RECENT
/// zone) at the end of its history, when no processor put them there: a
/// zoned pipeline without a history selector still gives the model the
/// question.
fn with_question(
    mut ctx: WorkingContext,
    session: &Session,
    budget: u64,
    writes: &SessionWrites,
) -> Result<WorkingContext> {
    let log = session.event_log();
    let Some(position) = log.last_user_input_position() else {
        return Ok(ctx);
    };
    let question = &log.events()[position].event_id;
    if ctx
        .history
        .iter()
        .any(|h| h.event_id.as_ref() == Some(question))
    {
        return Ok(ctx);
    }
    let mut alone = ctx.clone();
    alone.history.clear();
    let recent = zoned_selection::select(0, 0, session, alone, budget, writes)?;
    ctx.history.extend(recent.history);
    ctx.measure(log.counter());
    Ok(ctx)
}

/// The tokens to hold back for the default counter's error on what a
/// compile of `log` with `options` could include: the session's rendered
/// events, the system prompt and the tools, by kind of content.
fn content_margin(
    log: &crate::session::EventLog,
    options: &CompileOptions,
    tool_tokens: u64,
    plan: &BudgetPlan,
) -> u64 {
    let counter = log.counter();
    let mut content = log.content_tokens();
    content.add(
        ContentKind::of(&options.system_prompt),
        counter.count(&options.system_prompt),
    );
    content.add(ContentKind::Text, tool_tokens);
    content.margin(plan.available())
}

impl ContextCompiler {
    /// A compiler running `processors` in order, with the single-system layout.
    pub fn new(processors: Vec<Rc<dyn Processor>>) -> Self {
        Self::with_layout(processors, Layout::SingleSystem)
    }

    /// A compiler running `processors` in order, laying the context out as
    /// `layout`.
    pub fn with_layout(processors: Vec<Rc<dyn Processor>>, layout: Layout) -> Self {
        ContextCompiler {
            processors,
            layout,
            media_store: None,
            prefix: Rc::default(),
            tracer: None,
        }
    }

    /// The recommended pipeline, in the zoned layout: every turn that fits
    /// (the first pinned), outputs of at least `DEFAULT_EXTERNALIZE_BYTES`
    /// externalised to `artifacts` when given, compaction, recall of what
    /// left the window (indexing the stored outputs whole), and memories
    /// from `memory` when given. Images and files are read from
    /// `artifacts`.
    pub fn recommended(
        artifacts: Option<Rc<dyn ArtifactStore>>,
        memory: Option<Rc<dyn crate::memory::MemoryStore>>,
    ) -> Self {
        let mut processors: Vec<Rc<dyn Processor>> =
            vec![Rc::new(HistorySelector::new(1, usize::MAX))];
        let mut recall = HistoryRecall::new();
        if let Some(store) = &artifacts {
            processors.push(Rc::new(ArtifactAttacher::new(
                store.clone(),
                crate::tools::DEFAULT_EXTERNALIZE_BYTES,
            )));
            recall = recall.with_artifacts(store.clone());
        }
        processors.push(Rc::new(Compactor::new()));
        processors.push(Rc::new(recall));
        if let Some(memory) = memory {
            processors.push(Rc::new(MemoryPreloader::new(memory, DEFAULT_MEMORY_TOP_K)));
        }
        let compiler = ContextCompiler::with_layout(processors, Layout::Zoned);
        match artifacts {
            Some(store) => compiler.with_media_store(store),
            None => compiler,
        }
    }

    /// Reads the images and files a compile keeps from `store` (where
    /// `attachMedia` and the tool handler put them), so that rendering
    /// inlines their bytes; without one, a part without a URL is rendered
    /// as a line naming its artifact.
    pub fn with_media_store(mut self, store: Rc<dyn ArtifactStore>) -> Self {
        self.media_store = Some(store);
        self
    }

    /// Reports each compile's prompt prefix (`WorkingContext::cache`)
    /// against the previous compile `tracker` saw of the same session: a
    /// binding that builds a compiler per call hands each the same tracker.
    /// By default each compiler has its own.
    pub fn with_prefix_tracker(mut self, tracker: Rc<PrefixTracker>) -> Self {
        self.prefix = tracker;
        self
    }

    /// Traces each compile through `tracer`: a `compile_context` span
    /// (see [`crate::telemetry::genai`]) under the host's current span, or
    /// under the turn when a run compiles.
    pub fn with_tracer(mut self, tracer: Rc<dyn Tracer>) -> Self {
        self.tracer = Some(tracer);
        self
    }

    /// The tracer each compile is traced through, if any.
    pub fn tracer(&self) -> Option<&Rc<dyn Tracer>> {
        self.tracer.as_ref()
    }

    /// The layout compiled contexts have.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Appends a processor to the pipeline.
    pub fn add_processor(&mut self, processor: Rc<dyn Processor>) {
        self.processors.push(processor);
    }

    /// The processors' names, in order.
    pub fn processor_names(&self) -> Vec<String> {
        self.processors
            .iter()
            .map(|p| p.name().to_string())
            .collect()
    }

    /// Compiles `session` under `budget` tokens, then records the events the
    /// pipeline asked for (e.g. `artifact_stored`). On error the session is
    /// left unchanged.
    pub async fn compile(
        &self,
        session: &mut Session,
        budget: u64,
        system_prompt: &str,
    ) -> Result<WorkingContext> {
        self.compile_with(session, budget, &CompileOptions::new(system_prompt))
            .await
    }

    /// Compiles `session` under `budget` tokens with `options` (the system
    /// prompt and, for the zoned layout, policies, tools, preferences,
    /// goal, state digest and task state), then records the events the
    /// pipeline asked for. On error the session is left unchanged.
    pub async fn compile_with(
        &self,
        session: &mut Session,
        budget: u64,
        options: &CompileOptions,
    ) -> Result<WorkingContext> {
        let (ctx, writes) = self.compile_view(session, budget, options).await?;
        writes.apply(session)?;
        Ok(ctx)
    }

    /// Compiles without writing to the session; returns the context and the
    /// writes the pipeline asked for, to apply with [`SessionWrites::apply`].
    pub async fn compile_view(
        &self,
        session: &Session,
        budget: u64,
        options: &CompileOptions,
    ) -> Result<(WorkingContext, SessionWrites)> {
        let tracer = self.tracer.as_deref();
        self.compile_view_traced(session, budget, options, tracer, None)
            .await
    }

    /// [`ContextCompiler::compile_view`] traced through `tracer` (none:
    /// untraced) as a `compile_context` span under `parent`.
    pub async fn compile_view_traced(
        &self,
        session: &Session,
        budget: u64,
        options: &CompileOptions,
        tracer: Option<&dyn Tracer>,
        parent: Option<&dyn Span>,
    ) -> Result<(WorkingContext, SessionWrites)> {
        let Some(tracer) = tracer else {
            return self.compile_untraced(session, budget, options).await;
        };
        let span = genai::start_compile(tracer, parent, budget);
        let compiled = self.compile_untraced(session, budget, options).await;
        genai::close(span.as_ref(), &compiled, |(ctx, _)| {
            span.set_attributes(genai::compile_attributes(ctx));
            span.end();
        });
        compiled
    }

    async fn compile_untraced(
        &self,
        session: &Session,
        budget: u64,
        options: &CompileOptions,
    ) -> Result<(WorkingContext, SessionWrites)> {
        if budget == 0 {
            return Err(Error::new(
                ErrorCode::InvalidBudget,
                "budget must be a positive number of tokens (got 0)",
            ));
        }
        options.validate()?;
        let log = session.event_log();
        let correction = log.usage_correction();
        let plan = BudgetPlan::new(
            budget,
            options.reserve_output,
            correction.factor(),
            correction.samples(),
            options.usage_margin.unwrap_or(DEFAULT_USAGE_MARGIN),
        )?;
        let counter = log.counter();
        // Only this compile's counts decide.
        let _ = counter.take_failure();
        let tool_tokens = options.tool_tokens(counter);
        let mut plan = plan;
        plan.rejected_usage = correction.rejected();
        if counter.content_margins() && correction.samples() == 0 {
            plan = plan.with_content_margin(content_margin(log, options, tool_tokens, &plan));
        }
        // From here on, the budget is the count the context is fitted to.
        let budget = plan.target;
        let mut ctx = options.context(budget, self.layout);
        ctx.budget_plan = Some(plan);
        ctx.tool_tokens = tool_tokens;
        ctx.measure(counter);
        let mut writes = SessionWrites::default();

        for p in &self.processors {
            ctx = p
                .process(session, ctx, budget, &mut writes)
                .await
                .map_err(|e| {
                    let code = match e.code() {
                        ErrorCode::InvalidArgument => ErrorCode::ProcessorFailed,
                        other => other,
                    };
                    Error::new(
                        code,
                        format!("processor '{}' failed: {}", p.name(), e.message()),
                    )
                })?;
            ctx.budget = budget;
            ctx.measure(counter);
        }
        if self.layout == Layout::Zoned && !self.processors.iter().any(|p| p.selects_history()) {
            ctx = with_question(ctx, session, budget, &writes)?;
        }
        provider_compaction::apply(&mut ctx, session, options.format, counter);
        ctx.measure(counter);
        if ctx.compaction_level == CompactionLevel::None {
            // The level the window is at: turns recalled into the room it
            // leaves do not make it one that needs compacting.
            let window = if ctx.recalled.is_empty() {
                ctx.token_count
            } else {
                let mut window = ctx.clone();
                window.recalled.clear();
                window.measure(counter)
            };
            ctx.compaction_level = CompactionLevel::for_utilization(window as f64 / budget as f64);
        }
        // What the request's provider would refuse is not sent (nor counted).
        if let Some(format) = ctx.media_pricing.format {
            ctx.withhold_refused_media(format);
            ctx.measure(counter);
        }
        let ctx = match ctx.layout {
            Layout::SingleSystem => {
                let mut ctx = fit::fit_to_budget(ctx, budget, counter)?;
                ctx.zone_usage = ctx.zone_usage_of(counter);
                ctx
            }
            Layout::Zoned => fit_zoned::fit_zoned(ctx, budget, counter)?,
        };
        if let Some(e) = counter.take_failure() {
            return Err(e);
        }
        let mut ctx = ctx;
        if let Some(store) = &self.media_store {
            load_media(&mut ctx, store.as_ref()).await?;
        }
        ctx.cache = Some(self.prefix.observe(session.session_id(), &ctx, counter));
        ctx.events_seen = log.len();
        session.note_compiled(ctx.token_count);
        Ok((ctx, writes))
    }
}
