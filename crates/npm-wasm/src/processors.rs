//! The built-in processors for JS, and processors written in JS.

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use context_compiler_js::error::{JsResult, Thrown};
use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;

use crate::types::*;

use crate::artifact_store_arg::artifact_store_arg;
use crate::budget::positive_budget;
use crate::session::{session_arg, JsSession};
use crate::working_context::WorkingContext as JsWorkingContext;
use context_compiler::artifacts::ArtifactStore;
use context_compiler::compiler::compaction::DEFAULT_COMPACTION_TARGET;
use context_compiler::compiler::{
    ArtifactAttacher as CoreAttacher, Compactor as CoreCompactor, HistoryRecall as CoreRecall,
    HistorySelector as CoreSelector, MemoryPreloader as CorePreloader, Processor, SessionWrites,
};
use context_compiler::compiler::{
    DEFAULT_EMBEDDER_TIMEOUT_MS, DEFAULT_RECALLED_TURN_TOKENS, DEFAULT_RECALL_DISTINCTION,
    DEFAULT_RECALL_MATCHES, DEFAULT_RECALL_NEIGHBOURS, DEFAULT_RECALL_RELEVANCE,
    DEFAULT_RECALL_SHARE,
};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{bool_option, describe, from_js, limit, option, to_js};
use context_compiler_js::embedder::JsEmbedder;
use context_compiler_js::env::JsClock;
use context_compiler_js::error::to_js_error;
use context_compiler_js::llm::JsLlm;
use context_compiler_js::memory_arg::memory_arg;
use context_compiler_js::options::{number_option, usize_option, FRACTION, MILLIS, NON_NEGATIVE};
use context_compiler_js::promise::{call_and_await, callable, spawn};
use context_compiler_js::registry::Registration;

use crate::registry;
use context_compiler::llm::Llm;
use context_compiler::session::Session;
use context_compiler::working_context::WorkingContext;

fn register<P: Processor + 'static>(p: Rc<P>) -> Registration {
    let weak: std::rc::Weak<dyn Processor> = Rc::downgrade(&(p as Rc<dyn Processor>));
    registry::register(weak)
}

macro_rules! native_processor {
    ($js:ident, $core:ty, $doc:literal) => {
        #[doc = $doc]
        #[wasm_bindgen]
        pub struct $js {
            inner: Rc<$core>,
            registration: Registration,
        }

        impl $js {
            fn wrap(inner: $core) -> $js {
                let inner = Rc::new(inner);
                let registration = register(inner.clone());
                $js {
                    inner,
                    registration,
                }
            }
        }

        #[wasm_bindgen]
        impl $js {
            /// The processor's name.
            #[wasm_bindgen(getter)]
            pub fn name(&self) -> String {
                self.inner.name().to_string()
            }

            #[wasm_bindgen(getter = __nativeId, skip_typescript)]
            /// Registry id (internal).
            pub fn native_id(&self) -> u32 {
                self.registration.id()
            }

            /// Runs this processor on its own (`process(session, ctx,
            /// budget)`): resolves to the transformed context. Events it
            /// asks for (`artifact_stored`, `context_compacted`) are recorded
            /// in the session when it resolves.
            #[wasm_bindgen(unchecked_return_type = "Promise<WorkingContext>")]
            pub fn process(
                &self,
                #[wasm_bindgen(unchecked_param_type = "Session")] session: JsValue,
                #[wasm_bindgen(unchecked_param_type = "WorkingContextInit | WorkingContext")]
                ctx: JsValue,
                #[wasm_bindgen(unchecked_param_type = "number | TokenBudget")] budget: JsValue,
            ) -> js_sys::Promise {
                run_alone(self.inner.clone(), &session, &ctx, &budget)
            }
        }
    };
}

/// Runs one native processor outside a compile, then records what it asked.
fn run_alone(
    processor: Rc<dyn Processor>,
    session: &JsValue,
    ctx: &JsValue,
    budget: &JsValue,
) -> js_sys::Promise {
    let prepared = (|| -> Result<(Rc<RefCell<Session>>, WorkingContext, u64)> {
        let session = session_arg(session, "session")?;
        let budget = budget_arg(budget)?;
        let ctx: WorkingContext = from_js(ctx, "ctx")?;
        Ok((session, ctx, budget))
    })();
    let (session, ctx, budget) = match prepared {
        Ok(p) => p,
        Err(e) => return js_sys::Promise::reject(&to_js_error(e)),
    };
    // The shared borrow is held across the processor's awaits on purpose,
    // as a compile does: a `record` meanwhile is queued behind this view.
    #[allow(clippy::await_holding_refcell_ref)]
    spawn(async move {
        let mut writes = SessionWrites::default();
        let mut ctx = {
            let view = session.try_borrow().map_err(|_| busy())?;
            let mut ctx = processor.process(&view, ctx, budget, &mut writes).await?;
            ctx.measure(view.event_log().counter());
            ctx
        };
        ctx.budget = budget;
        writes.apply_shared(&session)?;
        Ok(JsWorkingContext::compiled(ctx, &session)?.into())
    })
}

fn busy() -> Error {
    Error::new(
        ErrorCode::SessionBusy,
        "the session is in use by a running compile",
    )
}

/// A budget given as a positive integer or a `TokenBudget`.
pub(crate) fn budget_arg(budget: &JsValue) -> Result<u64> {
    let value = if budget.is_object() {
        Reflect::get(budget, &"maxTokens".into()).unwrap_or(JsValue::UNDEFINED)
    } else {
        budget.clone()
    };
    positive_budget(&value).map_err(|_| {
        Error::new(
            ErrorCode::InvalidBudget,
            format!(
                "budget must be a positive integer number of tokens (at most 2^53 - 1) or a TokenBudget (got {})",
                describe(&value)
            ),
        )
    })
}

native_processor!(HistorySelector, CoreSelector, "Keeps the first and the most recent turns that fit the budget, and brings recent tool outcomes in.");
native_processor!(
    Compactor,
    CoreCompactor,
    "Merges consecutive same-role turns and trims whitespace."
);
native_processor!(
    MemoryPreloader,
    CorePreloader,
    "Recalls memories relevant to the latest user input."
);
native_processor!(
    ArtifactAttacher,
    CoreAttacher,
    "Replaces large tool results with artifact handles."
);
native_processor!(
    HistoryRecall,
    CoreRecall,
    "Brings back turns that left the window when the newest user message needs them (zoned layout)."
);

#[wasm_bindgen]
impl HistoryRecall {
    /// Options: `share` of the budget recalled turns may take (0 to 1,
    /// default 0.5), `minRelevance` a match needs (0 to 1, default 0; see
    /// `SearchHit.relevance`), `minDistinction` one match outside the window
    /// needs for anything to be recalled (default 4; see
    /// `SearchHit.distinction`), `matches` recalled at most (default and at most 100; the share is usually the tighter bound),
    /// `neighbours` on each side of a match and twice as many after a strong one (default 1, at most 8),
    /// `turnTokens` a recalled turn keeps (default 400), `embedder`
    /// (`async (texts, { role }) => number[][]`, or an object with `embed`;
    /// `role` is `"query"` or `"passage"`): ranks by meaning too, each text
    /// embedded once; `embedderTimeoutMs` a compile
    /// waits for it before recalling lexically (default 10,000);
    /// `artifactStore`: where the session's tool outputs were stored, read
    /// to index them whole.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<HistoryRecallOptionsArg>) -> JsResult<HistoryRecall> {
        let share = number_option(&options, "share", DEFAULT_RECALL_SHARE, FRACTION)?;
        let relevance =
            number_option(&options, "minRelevance", DEFAULT_RECALL_RELEVANCE, FRACTION)?;
        let distinction = number_option(
            &options,
            "minDistinction",
            DEFAULT_RECALL_DISTINCTION,
            NON_NEGATIVE,
        )?;
        let matches = usize_option(&options, "matches", DEFAULT_RECALL_MATCHES)?;
        let neighbours = usize_option(&options, "neighbours", DEFAULT_RECALL_NEIGHBOURS)?;
        let turn_tokens = usize_option(
            &options,
            "turnTokens",
            DEFAULT_RECALLED_TURN_TOKENS as usize,
        )?;
        let timeout = number_option(
            &options,
            "embedderTimeoutMs",
            DEFAULT_EMBEDDER_TIMEOUT_MS,
            MILLIS,
        )?;
        let mut recall = CoreRecall::new();
        if let Some(options) = &options {
            let store = Reflect::get(options.as_ref(), &"artifactStore".into()).unwrap_or_default();
            if !store.is_undefined() && !store.is_null() {
                recall =
                    recall.with_artifacts(artifact_store_arg(&store, "options.artifactStore")?);
            }
            let embedder = Reflect::get(options.as_ref(), &"embedder".into()).unwrap_or_default();
            if !embedder.is_undefined() && !embedder.is_null() {
                recall = recall
                    .with_embedder(Rc::new(JsEmbedder::from_js(&embedder, "options.embedder")?))
                    .with_embedder_timeout(timeout, Rc::new(JsClock));
            }
        }
        Ok(HistoryRecall::wrap(
            recall
                .with_share(share)
                .with_relevance(relevance)
                .with_distinction(distinction)
                .with_matches(matches)
                .with_neighbours(neighbours)
                .with_turn_tokens(turn_tokens as u64),
        ))
    }
}

#[wasm_bindgen]
impl HistorySelector {
    /// Options: `keepFirst` (default 2), `keepLast` (default 5; `Infinity`
    /// keeps every recent turn that fits).
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<HistorySelectorOptionsArg>) -> JsResult<HistorySelector> {
        let first = limit(
            &option(&options, "keepFirst", "options")?,
            "options.keepFirst",
            2,
        )?;
        let last = limit(
            &option(&options, "keepLast", "options")?,
            "options.keepLast",
            5,
        )?;
        Ok(HistorySelector::wrap(CoreSelector::new(first, last)))
    }

    /// How many leading turns are kept.
    #[wasm_bindgen(getter, js_name = keepFirst)]
    pub fn keep_first(&self) -> f64 {
        as_js_limit(self.inner.keep_first())
    }

    /// How many trailing turns are kept (`Infinity`: all that fit).
    #[wasm_bindgen(getter, js_name = keepLast)]
    pub fn keep_last(&self) -> f64 {
        as_js_limit(self.inner.keep_last())
    }
}

fn as_js_limit(n: usize) -> f64 {
    if n == usize::MAX {
        f64::INFINITY
    } else {
        n as f64
    }
}

#[wasm_bindgen]
impl Compactor {
    /// Options (zoned layout): `summarizer`, an `async (prompt, { maxTokens })
    /// => string` (the built-in digest when absent or when it fails), and
    /// `target`, the utilisation a compaction brings the context down to
    /// (default 0.5, below 0.8).
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<CompactorOptionsArg>) -> JsResult<Compactor> {
        (|| -> Result<Compactor> {
            let summarizer = option(&options, "summarizer", "options")?;
            let summarizer: Option<Rc<dyn Llm>> =
                if summarizer.is_undefined() || summarizer.is_null() {
                    None
                } else {
                    Some(Rc::new(JsLlm::from_js(&summarizer, "options.summarizer")?))
                };
            let target = option(&options, "target", "options")?;
            let target = if target.is_undefined() || target.is_null() {
                DEFAULT_COMPACTION_TARGET
            } else {
                target.as_f64().ok_or_else(|| {
                    Error::new(
                        ErrorCode::InvalidArgument,
                        "options.target must be a number",
                    )
                })?
            };
            Ok(Compactor::wrap(CoreCompactor::with_options(
                summarizer, target,
            )?))
        })()
        .map_err(Thrown::from)
    }

    /// The utilisation a zoned compaction brings the context down to.
    #[wasm_bindgen(getter)]
    pub fn target(&self) -> f64 {
        self.inner.target()
    }
}

#[wasm_bindgen]
impl MemoryPreloader {
    /// `memory` is an `InMemoryBackend`, an object with `recall(query,
    /// limit)`, or a function `(query, limit) => entries` (sync or async).
    /// Options: `topK` (default 5); `pin` (zoned layout: recalled memories
    /// stay in the PERSISTENT zone for the session, each recorded once as a
    /// pinned `memory_hit` event).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(
            unchecked_param_type = "InMemoryBackend | PersistentMemory | MemoryStoreLike | MemoryRecallFunction"
        )]
        memory: JsValue,
        options: Option<MemoryPreloaderOptionsArg>,
    ) -> JsResult<MemoryPreloader> {
        let top_k = limit(&option(&options, "topK", "options")?, "options.topK", 5)?;
        let pin = bool_option(&options, "pin", false)?;
        let store = memory_arg(&memory, false)?;
        Ok(MemoryPreloader::wrap(if pin {
            CorePreloader::pinned(store, top_k)
        } else {
            CorePreloader::new(store, top_k)
        }))
    }

    /// How many memories are recalled at most.
    #[wasm_bindgen(getter, js_name = topK)]
    pub fn top_k(&self) -> f64 {
        as_js_limit(self.inner.top_k())
    }
}

#[wasm_bindgen]
impl ArtifactAttacher {
    /// Externalises tool results of at least `thresholdBytes` (default 1024)
    /// to `store`; with `keepUnread` (default `true`) the results the model
    /// has not read yet stay whole while the budget holds them.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "ArtifactStoreLike")] store: JsValue,
        options: Option<ArtifactAttacherOptionsArg>,
    ) -> JsResult<ArtifactAttacher> {
        let threshold = limit(
            &option(&options, "thresholdBytes", "options")?,
            "options.thresholdBytes",
            context_compiler::tools::DEFAULT_EXTERNALIZE_BYTES,
        )?;
        let keep_unread = bool_option(&options, "keepUnread", true)?;
        let store: Rc<dyn ArtifactStore> = artifact_store_arg(&store, "store")?;
        Ok(ArtifactAttacher::wrap(
            CoreAttacher::new(store, threshold).keeping_unread(keep_unread),
        ))
    }

    /// The size in bytes from which results are externalised.
    #[wasm_bindgen(getter, js_name = thresholdBytes)]
    pub fn threshold_bytes(&self) -> f64 {
        as_js_limit(self.inner.threshold_bytes())
    }

    /// Whether results the model has not read yet stay whole while they fit.
    #[wasm_bindgen(getter, js_name = keepUnread)]
    pub fn keep_unread(&self) -> bool {
        self.inner.keep_unread()
    }
}

/// A processor in a compiler's pipeline, as given from JS.
#[derive(Clone)]
pub(crate) enum ProcessorEntry {
    Native(Rc<dyn Processor>),
    Js {
        name: String,
        this: JsValue,
        process: Function,
    },
}

impl ProcessorEntry {
    /// Reads a native processor, an object with `process(session, ctx,
    /// budget)` (and optionally `name`), or a function.
    pub(crate) fn from_js(value: &JsValue, what: &str) -> Result<ProcessorEntry> {
        if let Some(native) = registry::processor(value) {
            return Ok(ProcessorEntry::Native(native));
        }
        let name_of = |v: &JsValue| {
            Reflect::get(v, &"name".into())
                .ok()
                .and_then(|n| n.as_string())
                .filter(|n| !n.is_empty())
        };
        if let Some((this, process)) = callable(value, "process") {
            // A bare function's name is the function's own; an object's is its `name`.
            let fallback = if this.is_undefined() {
                "anonymous"
            } else {
                "custom"
            };
            return Ok(ProcessorEntry::Js {
                name: name_of(value).unwrap_or_else(|| fallback.into()),
                this,
                process,
            });
        }
        Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("{what} must be a built-in processor, an object with process(session, ctx, budget), or a function"),
        ))
    }

    /// The core processor for one compile of `session`.
    pub(crate) fn bind(&self, session: &Rc<RefCell<Session>>) -> Rc<dyn Processor> {
        match self {
            ProcessorEntry::Native(p) => p.clone(),
            ProcessorEntry::Js {
                name,
                this,
                process,
            } => Rc::new(JsProcessor {
                name: name.clone(),
                this: this.clone(),
                process: process.clone(),
                session: session.clone(),
            }),
        }
    }

    /// The processor's name.
    pub(crate) fn name(&self) -> String {
        match self {
            ProcessorEntry::Native(p) => p.name().to_string(),
            ProcessorEntry::Js { name, .. } => name.clone(),
        }
    }
}

/// A processor written in JS, bound to the session being compiled. It gets
/// `(session, ctx, budget)` with `ctx` a plain object, and returns (or
/// resolves to) a plain object or a `WorkingContext`.
struct JsProcessor {
    name: String,
    this: JsValue,
    process: Function,
    session: Rc<RefCell<Session>>,
}

#[async_trait(?Send)]
impl Processor for JsProcessor {
    fn name(&self) -> &str {
        &self.name
    }

    async fn process(
        &self,
        _: &Session,
        ctx: WorkingContext,
        budget: u64,
        _: &mut SessionWrites,
    ) -> Result<WorkingContext> {
        let session: JsValue = JsSession::wrap(self.session.clone()).into();
        let args = [session, to_js(&ctx)?, JsValue::from_f64(budget as f64)];
        let out = call_and_await(
            &self.process,
            &self.this,
            &args,
            ErrorCode::ProcessorFailed,
            "process",
        )
        .await?;
        if out.is_undefined() || out.is_null() {
            return Err(Error::new(
                ErrorCode::ProcessorFailed,
                "process must return a context",
            ));
        }
        from_js(&out, "returned context")
            .map_err(|e| Error::new(ErrorCode::ProcessorFailed, e.message()))
    }
}
