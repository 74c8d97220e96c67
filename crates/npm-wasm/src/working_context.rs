//! `WorkingContext` for JS.

use context_compiler_js::error::{JsResult, Thrown};
use wasm_bindgen::prelude::*;

use crate::ledger_columns::LedgerHandover;
use crate::render_memo::RenderMemo;
use crate::types::{CheckRequestOptionsArg, ToMessagesOptionsArg};
use std::cell::{OnceCell, RefCell};
use std::rc::{Rc, Weak};

use context_compiler::tokens::{DefaultTokenCounter, TokenCounter};
use context_compiler::working_context::{checker, ProviderFormat, WorkingContext as CoreContext};
use context_compiler::{Error, ErrorCode, Session};
use context_compiler_js::convert::{from_js, js_to_json, option, string, to_js, value_to_js};
use context_compiler_js::options::optional_string;

/// The compiled, budget-aware context .
#[wasm_bindgen]
pub struct WorkingContext {
    pub(crate) inner: CoreContext,
    /// The counter the context was compiled with (its session's), which
    /// the ledger counts its parts with; `None` for a context built by hand
    /// (the default counter then).
    counter: Option<Rc<dyn TokenCounter>>,
    /// The session it was compiled from, while it lives: the ledger's
    /// `window` entry counts the turns of it the window never reached.
    session: Weak<RefCell<Session>>,
    /// The ledger as it crosses to JavaScript, built when first read.
    ledger: OnceCell<LedgerHandover>,
    /// Its compiler's last renderings, which `toMessages` shares message
    /// objects with; `None` for a context built by hand.
    renderings: Option<Rc<RenderMemo>>,
}

impl WorkingContext {
    /// `inner`, as compiled from `session`.
    pub(crate) fn compiled(
        inner: CoreContext,
        session: &Rc<RefCell<Session>>,
    ) -> context_compiler::Result<Self> {
        let counter = session
            .try_borrow()
            .map_err(|_| Error::new(ErrorCode::SessionBusy, "the session is being written to"))?
            .event_log()
            .counter_rc();
        Ok(WorkingContext {
            inner,
            counter: Some(counter),
            session: Rc::downgrade(session),
            ledger: OnceCell::new(),
            renderings: None,
        })
    }

    /// The context, its renderings shared through `renderings` (its
    /// compiler's).
    pub(crate) fn sharing_renderings(mut self, renderings: Rc<RenderMemo>) -> Self {
        self.renderings = Some(renderings);
        self
    }
}

fn js<T: serde::Serialize + ?Sized>(v: &T) -> JsResult<JsValue> {
    to_js(v).map_err(Thrown::from)
}

/// The rules of its provider that `request` (what `toMessages({ format })`
/// gives, or a request written by hand in that shape) breaks, as data:
/// `[{ rule, path, message }]`, empty when the provider would accept it.
/// `options.format` names the shape (an unknown one is
/// `INVALID_ARGUMENT`); `options.model` adds the rules that depend on the
/// model (Anthropic's minimum cacheable length).
#[wasm_bindgen(js_name = checkRequest, unchecked_return_type = "RequestProblem[]")]
pub fn check_request(
    #[wasm_bindgen(unchecked_param_type = "unknown")] request: JsValue,
    options: CheckRequestOptionsArg,
) -> JsResult<JsValue> {
    let options = Some(options);
    let format = string(&option(&options, "format", "options")?, "options.format")?;
    let format = ProviderFormat::parse(&format)?;
    let model = optional_string(&options, "model")?;
    let request = js_to_json(&request, "request")?;
    js(&checker::check_request_for(
        &request,
        format,
        model.as_deref(),
    ))
}

#[wasm_bindgen]
impl WorkingContext {
    /// Builds a context from its fields (`systemPrompt` required; lists
    /// default to empty, `tokenCount` and `budget` to 0), or from a
    /// context's own `toJSON()`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "WorkingContextInit")] init: JsValue,
    ) -> JsResult<WorkingContext> {
        Ok(WorkingContext {
            inner: from_js(&init, "WorkingContext")?,
            counter: None,
            session: Weak::new(),
            ledger: OnceCell::new(),
            renderings: None,
        })
    }

    /// The system prompt.
    #[wasm_bindgen(getter, js_name = systemPrompt)]
    pub fn system_prompt(&self) -> String {
        self.inner.system_prompt.clone()
    }

    /// Conversation history.
    #[wasm_bindgen(getter, unchecked_return_type = "HistoryMessage[]")]
    pub fn history(&self) -> JsResult<JsValue> {
        js(&self.inner.history)
    }

    /// Recalled memories.
    #[wasm_bindgen(getter, js_name = memoryHits, unchecked_return_type = "MemoryHit[]")]
    pub fn memory_hits(&self) -> JsResult<JsValue> {
        js(&self.inner.memory_hits)
    }

    /// Artifact references.
    #[wasm_bindgen(getter, js_name = artifactRefs, unchecked_return_type = "ArtifactRef[]")]
    pub fn artifact_refs(&self) -> JsResult<JsValue> {
        js(&self.inner.artifact_refs)
    }

    /// Inline tool results.
    #[wasm_bindgen(getter, js_name = toolResults, unchecked_return_type = "ToolResult[]")]
    pub fn tool_results(&self) -> JsResult<JsValue> {
        js(&self.inner.tool_results)
    }

    /// What the compiler dropped or truncated to fit the budget.
    #[wasm_bindgen(getter, unchecked_return_type = "DroppedItem[]")]
    pub fn dropped(&self) -> JsResult<JsValue> {
        js(&self.inner.dropped)
    }

    /// The ledger in columns, which `js/ledger.js` builds the `ledger`
    /// getter's object from at each read (declared in `types.rs`'
    /// `WorkingContext`): `[ids, lengths, refs, included, excluded]`, `ids`
    /// every event id named, joined, with `lengths` (UTF-16 code units
    /// each); `refs`, indices into them; `included` rows of `[zone, reason,
    /// tokens, start, end]` and `excluded` rows of `[reason, tokens, count
    /// (-1: none), start, end]`, each entry's events being
    /// `refs[start..end]`, zones and reasons as indices into
    /// `__ledgerNames()`. No JSON in between, and a list named twice (the
    /// turns a summary stands for) is written once. Built on the first read
    /// and kept (the session may change or go after it).
    #[wasm_bindgen(js_name = "__ledgerColumns", skip_typescript)]
    pub fn ledger_columns(&self) -> JsValue {
        self.ledger
            .get_or_init(|| {
                let session = self.session.upgrade();
                let view = session.as_ref().and_then(|s| s.try_borrow().ok());
                let columns = match (&view, &self.counter) {
                    (Some(view), _) => self.inner.ledger_columns_for(view),
                    (None, Some(counter)) => self.inner.ledger_columns(counter.as_ref()),
                    (None, None) => self.inner.ledger_columns(&DefaultTokenCounter),
                };
                LedgerHandover::new(&columns)
            })
            .to_js()
    }

    /// Turns recalled from earlier in the session (`HistoryRecall`, zoned
    /// layout): event ids, positions, text as shown, times and scores.
    #[wasm_bindgen(getter, unchecked_return_type = "RecalledTurn[]")]
    pub fn recalled(&self) -> JsResult<JsValue> {
        js(&self.inner.recalled)
    }

    /// Tokens of the context (after a compile: the exact count of `toMessages()`).
    #[wasm_bindgen(getter, js_name = tokenCount)]
    pub fn token_count(&self) -> f64 {
        self.inner.token_count as f64
    }

    /// The budget the context was fitted to, in the counter's tokens: the
    /// compile's budget less what `budgetPlan` keeps back.
    #[wasm_bindgen(getter)]
    pub fn budget(&self) -> f64 {
        self.inner.budget as f64
    }

    /// How the compile's budget became `budget`: the reply's reserve, the
    /// correction from the session's recorded usage, the margin (`null`
    /// for a context built by hand).
    #[wasm_bindgen(getter, js_name = budgetPlan, unchecked_return_type = "BudgetPlan | null")]
    pub fn budget_plan(&self) -> JsResult<JsValue> {
        js(&self.inner.budget_plan)
    }

    /// Tokens of the tools the request offers, counted in SYSTEM.
    #[wasm_bindgen(getter, js_name = toolTokens)]
    pub fn tool_tokens(&self) -> f64 {
        self.inner.tool_tokens as f64
    }

    /// Whether `tokenCount <= budget`.
    #[wasm_bindgen(js_name = isWithinBudget)]
    pub fn is_within_budget(&self) -> bool {
        self.inner.is_within_budget()
    }

    /// Tokens beyond the budget.
    pub fn overflow(&self) -> f64 {
        self.inner.overflow() as f64
    }

    /// The messages for a model call. Without options: plain `{ role,
    /// content }[]`. Options: `format`: `"openai"` (Chat Completions, with
    /// `tool_calls` and `tool` messages), `"anthropic"` (`{ system, messages
    /// }` with `tool_use` / `tool_result` blocks and `cache_control` at the
    /// ends of the stable zones), `"openai-responses"` (`{ instructions,
    /// input }` with `function_call` / `function_call_output` items),
    /// `"gemini"` (`{ systemInstruction, contents }` with `functionCall` /
    /// `functionResponse` parts) or `"ai-sdk"` (Vercel AI SDK
    /// `ModelMessage[]`). Typed per format by the declarations below.
    /// `model` (by default the compile's `model`): in the Anthropic format,
    /// cache breakpoints whose prefix is below the model's minimum
    /// cacheable length are left out. The array is new at each call; the
    /// message objects of a context a compiler compiled are frozen and
    /// shared with its previous rendering of the session (see
    /// [`crate::render_memo`]).
    #[wasm_bindgen(js_name = toMessages, skip_typescript)]
    pub fn to_messages(&self, options: Option<ToMessagesOptionsArg>) -> JsResult<JsValue> {
        let format = option(&options, "format", "options")?;
        let format = if format.is_undefined() || format.is_null() {
            ProviderFormat::Plain
        } else {
            let name = string(&format, "options.format")?;
            ProviderFormat::parse(&name)?
        };
        let model = option(&options, "model", "options")?;
        let model = if model.is_undefined() || model.is_null() {
            None
        } else {
            Some(string(&model, "options.model")?)
        };
        let session = self.session.upgrade();
        let session_id = session
            .as_ref()
            .and_then(|s| s.try_borrow().ok().map(|s| s.session_id().to_string()));
        if let (Some(memo), Some(id)) = (&self.renderings, session_id) {
            return Ok(memo.to_js(&self.inner, &id, format, model.as_deref())?);
        }
        let request = match &model {
            None => self.inner.to_provider_messages(format),
            Some(model) => self.inner.to_provider_messages_for(format, model),
        };
        Ok(value_to_js(&request)?)
    }

    /// The layout: `"single-system"` or `"zoned"`.
    #[wasm_bindgen(getter, unchecked_return_type = "Layout")]
    pub fn layout(&self) -> JsResult<JsValue> {
        js(&self.inner.layout)
    }

    /// Tokens per zone of the compiled messages.
    #[wasm_bindgen(getter, js_name = zoneUsage, unchecked_return_type = "ZoneUsage")]
    pub fn zone_usage(&self) -> JsResult<JsValue> {
        js(&self.inner.zone_usage)
    }

    /// How much of the context repeats the previous compile's (of the same
    /// session, by the same compiler): `{ prefixTokens, prefixMessages,
    /// miss }`, `miss` (`null` when the whole previous context is still the
    /// prefix) `{ messageIndex, zone, cause, detail }`; `null` for a context
    /// built by hand.
    #[wasm_bindgen(getter, unchecked_return_type = "CacheReport | null")]
    pub fn cache(&self) -> JsResult<JsValue> {
        js(&self.inner.cache)
    }

    /// The compaction level the compile's utilisation called for.
    #[wasm_bindgen(getter, js_name = compactionLevel, unchecked_return_type = "CompactionLevel")]
    pub fn compaction_level(&self) -> String {
        self.inner.compaction_level.as_str().to_string()
    }

    /// The compaction summary of earlier conversation (zoned layout).
    #[wasm_bindgen(getter)]
    pub fn summary(&self) -> Option<String> {
        self.inner.summary.clone()
    }

    /// The goal (zoned layout).
    #[wasm_bindgen(getter)]
    pub fn goal(&self) -> Option<String> {
        self.inner.goal.clone()
    }

    /// The context as a plain object (used by `JSON.stringify`).
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "WorkingContextData")]
    pub fn to_json(&self) -> JsResult<JsValue> {
        js(&self.inner)
    }
}
