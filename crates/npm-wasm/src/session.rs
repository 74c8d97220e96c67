//! `Session` and `EventLog` for JS.

use std::cell::RefCell;
use std::rc::Rc;

use context_compiler_js::error::{JsResult, Thrown};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::types::*;

use crate::artifact_store_arg::artifact_store_arg;
use crate::counter::JsTokenCounter;
use crate::record_buffers;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{
    argument_items, bool_option, count, describe, js_to_json, js_to_json_counts, option, string,
    to_js, whole,
};
use context_compiler_js::env::{seed, JsClock};
use context_compiler_js::error::to_js_error;
use context_compiler_js::options::{optional_string, usize_option};
use context_compiler_js::promise::{require_callable, spawn};
use context_compiler_js::registry::Registration;

use crate::registry;
use context_compiler::recall::{DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT};
use context_compiler::session::{
    provider_compaction, record_shared, record_shared_then, redact_event_data, ApprovalDecision,
    EventLog as CoreLog, ModelUsage, RecordOptions, Session as CoreSession, SessionEvent,
    SessionObserver, APPROVAL_DECIDED, APPROVAL_REQUESTED, MODEL_USAGE, PROVIDER_COMPACTION,
};
use context_compiler::tokens::{DefaultTokenCounter, TokenCounter, WordsTokenCounter};
use context_compiler::tools::look_back::LookBack;

/// The counter `options.tokenCounter` gives: `"default"`, `"words"`, a
/// function `(text) => number` or an object with `count(text)` (and
/// `messageOverhead`), such as an exact tokenizer.
pub(crate) fn counter_option<T: AsRef<JsValue>>(
    options: &Option<T>,
    what: &str,
) -> Result<Rc<dyn TokenCounter>> {
    let v = option(options, "tokenCounter", what)?;
    match v.as_string().as_deref() {
        None if v.is_undefined() || v.is_null() => return Ok(Rc::new(DefaultTokenCounter)),
        Some("default") => return Ok(Rc::new(DefaultTokenCounter)),
        Some("words") => return Ok(Rc::new(WordsTokenCounter)),
        _ => {}
    }
    match JsTokenCounter::from_value(&v, &format!("{what}.tokenCounter"))? {
        Some(counter) => Ok(Rc::new(counter)),
        None => Err(Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "{what}.tokenCounter must be \"default\", \"words\", a function (text) => number \
                 or an object with count(text) (got {})",
                describe(&v)
            ),
        )),
    }
}

fn busy() -> JsValue {
    to_js_error(busy_error())
}

fn busy_error() -> Error {
    Error::new(
        ErrorCode::SessionBusy,
        "the session is in use by a running compile; record after it resolves",
    )
}

/// The token estimate of a buffered `record` or `append`. js/record.js
/// reads `options.tokenEstimate` itself and hands it in as `estimate` when
/// it is a count (negative: none given), sparing a read across the
/// boundary per call (it cost more than counting a short event); anything
/// else it hands on as `options`, read and rejected here as every option is.
fn buffered_estimate<T: AsRef<JsValue>>(estimate: f64, options: &Option<T>) -> Result<Option<u64>> {
    if options.is_some() {
        return count(
            &option(options, "tokenEstimate", "options")?,
            "tokenEstimate",
            ErrorCode::InvalidTokenCount,
        );
    }
    if estimate < 0.0 {
        return Ok(None);
    }
    whole(estimate).map(Some).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidTokenCount,
            format!("tokenEstimate must be a non-negative integer (got {estimate})"),
        )
    })
}

/// The kind js/record.js could not write: not a string.
fn kind_not_a_string(kind: &JsValue) -> JsValue {
    to_js_error(Error::new(
        ErrorCode::InvalidArgument,
        format!("kind must be a string (got {})", describe(kind)),
    ))
}

fn events_to_js(events: &[SessionEvent]) -> Result<JsValue> {
    to_js(events)
}

#[wasm_bindgen(typescript_custom_section)]
const TS_BUS_IMPORT: &'static str = r#"
import type { EventBus } from "./context_compiler_bus.js";
"#;

/// A session: an id and an append-only event log.
#[wasm_bindgen(js_name = Session)]
pub struct JsSession {
    pub(crate) inner: Rc<RefCell<CoreSession>>,
    registration: Registration,
}

impl JsSession {
    /// Wraps a shared session (registering it so options objects can name it).
    pub(crate) fn wrap(inner: Rc<RefCell<CoreSession>>) -> JsSession {
        let registration = registry::register(Rc::downgrade(&inner));
        JsSession {
            inner,
            registration,
        }
    }

    /// Wraps a session the core built (e.g. loaded from a store).
    pub(crate) fn from_core(session: CoreSession) -> JsSession {
        JsSession::wrap(Rc::new(RefCell::new(session)))
    }
}

/// The session behind `value`, a live `Session` of this package (argument
/// `what`); anything else, a freed session included, is `INVALID_ARGUMENT`.
pub(crate) fn session_arg(value: &JsValue, what: &str) -> Result<Rc<RefCell<CoreSession>>> {
    crate::registry::session(value).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!(
                "{what} must be a live Session of this package (got {})",
                describe(value)
            ),
        )
    })
}

#[wasm_bindgen(js_class = Session)]
impl JsSession {
    /// Creates a session. Options: `sessionId` (random when absent) and
    /// `tokenCounter` (`"default"` or `"words"`).
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<SessionOptionsArg>) -> JsResult<JsSession> {
        let id = option(&options, "sessionId", "options")?;
        let id = if id.is_undefined() || id.is_null() {
            None
        } else {
            let id = context_compiler_js::convert::session_id(&id, "options.sessionId")?;
            if !id.is_empty() {
                context_compiler::session::check_session_id(&id)?;
            }
            Some(id).filter(|s| !s.is_empty())
        };
        let counter = counter_option(&options, "options")?;
        Ok(JsSession::wrap(Rc::new(RefCell::new(
            CoreSession::with_env(id, Rc::new(JsClock), counter, seed()),
        ))))
    }

    #[wasm_bindgen(getter = __nativeId, skip_typescript)]
    /// Registry id (internal).
    pub fn native_id(&self) -> u32 {
        self.registration.id()
    }

    /// The session id.
    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> JsResult<String> {
        Ok(self
            .inner
            .try_borrow()
            .map_err(|_| busy())?
            .session_id()
            .to_string())
    }

    /// Records the event js/record.js wrote into the record buffers
    /// (`kindUnits` of -1: `kind` is not a string), with the token estimate
    /// and the `redact` option it read from the options (see
    /// [`buffered_estimate`]); `record`, defined there, calls it and builds
    /// the returned event from the answer. A tool event's output, error and
    /// arguments are redacted first unless `redact` is false or
    /// `options.redact` is `false` (js/record.js hands the options on only
    /// when it cannot read them itself).
    #[wasm_bindgen(js_name = __recordBuffered, skip_typescript)]
    #[allow(clippy::too_many_arguments)]
    pub fn record_buffered(
        &self,
        kind: JsValue,
        kind_units: i32,
        tape_len: u32,
        text_len: u32,
        estimate: f64,
        redact: bool,
        options: Option<SessionRecordOptionsArg>,
    ) -> JsResult<()> {
        let kind_units = u32::try_from(kind_units).map_err(|_| kind_not_a_string(&kind))?;
        self.record_from_buffers(kind_units, tape_len, text_len, estimate, redact, &options)
    }

    /// [`JsSession::record_buffered`] of a string kind whose options
    /// js/record.js read all of itself (what nearly every record is): no JS
    /// value crosses, so the call takes no slot of the glue's value table
    /// and reads nothing back across the boundary; `now` is `Date.now()`,
    /// read there just before the call, which the event is stamped with
    /// (through the session's clock, as ever: see [`JsClock::with_reading`]).
    #[wasm_bindgen(js_name = __recordRead, skip_typescript)]
    pub fn record_read(
        &self,
        kind_units: u32,
        tape_len: u32,
        text_len: u32,
        estimate: f64,
        redact: bool,
        now: f64,
    ) -> JsResult<()> {
        JsClock::with_reading(now, || {
            self.record_from_buffers(kind_units, tape_len, text_len, estimate, redact, &None)
        })
    }

    fn record_from_buffers(
        &self,
        kind_units: u32,
        tape_len: u32,
        text_len: u32,
        estimate: f64,
        redact: bool,
        options: &Option<SessionRecordOptionsArg>,
    ) -> JsResult<()> {
        // Read out of the buffers before anything (an options getter)
        // could record meanwhile.
        let (kind, mut data) = record_buffers::take(kind_units, tape_len, text_len)?;
        let token_estimate = buffered_estimate(estimate, options)?;
        let redact = redact && (options.is_none() || bool_option(options, "redact", true)?);
        let redacted = redact && redact_event_data(&kind, &mut data) > 0;
        let options = RecordOptions {
            token_estimate,
            redact: false,
        };
        record_shared_then(&self.inner, kind, data, options, |event| {
            record_buffers::answer(event, redacted)
        })?;
        Ok(())
    }

    /// Feeds `bus` from this session: each `user_input` emits
    /// `message_received` and each `assistant_output` emits `turn_completed`
    /// , with the text, `episode_id`, `user_id`
    /// and `user_display_name` from `options`, stamped with the session
    /// event's time. Replaces an earlier bus. The bus lives in the bus
    /// module, so the session calls its `tryEmit` (any object with that
    /// method will do); a full queue drops the event and a failing
    /// `tryEmit` is ignored: feeding a bus never fails a record.
    #[wasm_bindgen(js_name = attachBus)]
    pub fn attach_bus(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Pick<EventBus, \"tryEmit\">")] bus: JsValue,
        options: Option<AttachBusOptionsArg>,
    ) -> JsResult<()> {
        let (this, try_emit) = require_callable(
            &bus,
            "tryEmit",
            "bus must be an EventBus (an object with tryEmit(event))",
        )?;
        let text = |key: &str| optional_string(&options, key);
        let feed = context_compiler::bus::FeedOptions {
            agent_id: text("agentId")?.unwrap_or_default(),
            user_id: text("userId")?,
            user_display_name: text("userDisplayName")?,
            episode_id: text("episodeId")?,
        };
        let observer: SessionObserver = Rc::new(move |session_id: &str, event: &SessionEvent| {
            if let Some(init) = context_compiler::bus::feed_event(&feed, session_id, event)
                .and_then(|e| to_js(&e).ok())
            {
                let _ = try_emit.call1(&this, &init);
            }
        });
        self.inner
            .try_borrow_mut()
            .map_err(|_| busy())?
            .set_observer(Some(observer));
        Ok(())
    }

    /// Stops feeding the bus.
    #[wasm_bindgen(js_name = detachBus)]
    pub fn detach_bus(&self) -> JsResult<()> {
        self.inner
            .try_borrow_mut()
            .map_err(|_| busy())?
            .set_observer(None);
        Ok(())
    }

    /// Records what the provider reported a model call cost, as a
    /// `model_usage` event; `usage` in any provider's shape (see
    /// `ProviderUsage`). `options.countedTokens`: this session's count of
    /// that request, by default the `tokenCount` of its latest compile.
    /// Compiles then fit the context to the budget in the provider's
    /// tokens (see `WorkingContext.budgetPlan`). `runCompiled` records the
    /// `usage` its model's replies carry.
    #[wasm_bindgen(js_name = recordUsage, unchecked_return_type = "SessionEvent")]
    pub fn record_usage(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProviderUsage")] usage: JsValue,
        options: Option<RecordUsageOptionsArg>,
    ) -> JsResult<JsValue> {
        let usage = js_to_json_counts(&usage, "usage", ErrorCode::InvalidTokenCount)?;
        let usage = ModelUsage::from_json(&usage)?;
        let counted = count(
            &option(&options, "countedTokens", "options")?,
            "options.countedTokens",
            ErrorCode::InvalidTokenCount,
        )?;
        let data = self
            .inner
            .try_borrow()
            .map_err(|_| busy())?
            .usage_event_data(&usage, counted);
        let event = record_shared(&self.inner, MODEL_USAGE, data, None)?;
        to_js(&event).map_err(Thrown::from)
    }

    /// The tool calls waiting for a person's decision, oldest first: `{
    /// callId, name, arguments, eventId }` each (arguments redacted).
    #[wasm_bindgen(js_name = pendingApprovals, unchecked_return_type = "PendingApproval[]")]
    pub fn pending_approvals(&self) -> JsResult<JsValue> {
        let session = self.inner.try_borrow().map_err(|_| busy())?;
        to_js(&session.event_log().pending_approvals()).map_err(Thrown::from)
    }

    /// Records that the recorded `tool_call` `callId`, which has no outcome
    /// yet, waits for a person's decision (an `approval_requested` event).
    /// `INVALID_ARGUMENT` when no such call waits for its outcome or it was
    /// asked about already. For a loop of the host's own (`runCompiled`
    /// records them itself).
    #[wasm_bindgen(js_name = requestApproval, unchecked_return_type = "SessionEvent")]
    pub fn request_approval(
        &self,
        #[wasm_bindgen(js_name = callId, unchecked_param_type = "string")] call_id: JsValue,
    ) -> JsResult<JsValue> {
        let call_id = string(&call_id, "callId")?;
        let data = self
            .inner
            .try_borrow()
            .map_err(|_| busy())?
            .approval_request_data(&call_id)?;
        let event = record_shared(&self.inner, APPROVAL_REQUESTED, data, None)?;
        to_js(&event).map_err(Thrown::from)
    }

    /// Records a person's decision on the call `callId` waits for (an
    /// `approval_decided` event; the reason and edited arguments redacted):
    /// `{ approve: true }`, `{ approve: false, reason? }` or `{ approve:
    /// true, args }`. `INVALID_ARGUMENT` when no call of that id waits
    /// (unknown, or decided already). The first decision in the session's
    /// order stands.
    #[wasm_bindgen(js_name = decideApproval, unchecked_return_type = "SessionEvent")]
    pub fn decide_approval(
        &self,
        #[wasm_bindgen(js_name = callId, unchecked_param_type = "string")] call_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ApprovalDecision")] decision: JsValue,
    ) -> JsResult<JsValue> {
        let call_id = string(&call_id, "callId")?;
        let decision =
            ApprovalDecision::from_json(&js_to_json(&decision, "decision")?, "decision")?;
        let data = self
            .inner
            .try_borrow()
            .map_err(|_| busy())?
            .approval_decision_data(&call_id, &decision)?;
        let event = record_shared(&self.inner, APPROVAL_DECIDED, data, None)?;
        to_js(&event).map_err(Thrown::from)
    }

    /// Records a provider's own compaction as it came, nothing redacted:
    /// `options.format` `"openai-responses"` takes the result of OpenAI's
    /// `responses.compact` (or its `output`), `"anthropic"` a `compaction`
    /// block (or the message holding one) a loop of the host's own received
    /// (`runCompiled` records a reply's block itself). A compile in that
    /// format sends the latest one in place of the turns recorded before it
    /// (in the ledger as `compacted`); other formats leave it out
    /// (`refused` in `dropped`). Anything else is `INVALID_ARGUMENT`.
    #[wasm_bindgen(js_name = recordCompaction, unchecked_return_type = "SessionEvent")]
    pub fn record_compaction(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProviderCompactionOutput")] output: JsValue,
        options: RecordCompactionOptionsArg,
    ) -> JsResult<JsValue> {
        let output = js_to_json(&output, "output")?;
        let options = Some(options);
        let format = optional_string(&options, "format")?.ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                "options.format must be \"anthropic\" or \"openai-responses\"",
            )
        })?;
        let format = context_compiler::ProviderFormat::parse(&format)?;
        let data = provider_compaction::event_data(format, &output)?;
        let event = record_shared(&self.inner, PROVIDER_COMPACTION, data, None)?;
        to_js(&event).map_err(Thrown::from)
    }

    /// Records a model's reply as `runCompiled` does, for a loop of the
    /// host's own: its usage (`model_usage`), then its text and reasoning
    /// (`assistant_output`) when it has text or asks for no tool. `reply` is
    /// any whole reply `runCompiled`'s model may give: a string, `{ content,
    /// toolCalls, usage }`, a provider SDK's response (Chat Completions,
    /// Responses, Anthropic, Gemini) or an AI SDK `generateText` result. It
    /// returns the calls to run (`handler.call(c.name, c.arguments,
    /// c.callOptions)` records each with the provider's id), and records
    /// calls whose arguments are not JSON as refused. An unusable reply or a
    /// stream is `INVALID_ARGUMENT`, recording nothing.
    #[wasm_bindgen(js_name = recordReply, unchecked_return_type = "RecordedReply")]
    pub fn record_reply(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ModelReply | object")] reply: JsValue,
    ) -> JsResult<JsValue> {
        let reply = crate::model::reply_from_js(reply)?;
        let out = context_compiler::runner::record_host_reply(&self.inner, &reply)?;
        to_js(&out).map_err(Thrown::from)
    }

    /// The session's event log (a live view).
    #[wasm_bindgen(getter, js_name = eventLog)]
    pub fn event_log(&self) -> EventLog {
        EventLog {
            owner: Owner::Session(self.inner.clone()),
        }
    }

    /// The evidence pack: one entry per event.
    #[wasm_bindgen(js_name = toEvidencePack, unchecked_return_type = "EvidencePack")]
    pub fn to_evidence_pack(&self) -> JsResult<JsValue> {
        let session = self.inner.try_borrow().map_err(|_| busy())?;
        to_js(&session.to_evidence_pack()).map_err(Thrown::from)
    }

    /// The events matching `query` best, most relevant first: BM25 over
    /// every text the session holds (turns, tool arguments and outputs as
    /// recorded, compaction summaries), English-stemmed, identifiers, paths,
    /// numbers and dates kept whole, CJK as character bigrams.
    /// `options.limit`: results at most, 1 to 100 (default 10).
    #[wasm_bindgen(unchecked_return_type = "SearchHit[]")]
    pub fn search(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        options: Option<SearchOptionsArg>,
    ) -> JsResult<JsValue> {
        let query = string(&query, "query")?;
        let limit = usize_option(&options, "limit", DEFAULT_SEARCH_LIMIT)?;
        if limit == 0 || limit > MAX_SEARCH_LIMIT {
            return Err(Thrown::from(Error::new(
                ErrorCode::InvalidArgument,
                format!("options.limit must be from 1 to {MAX_SEARCH_LIMIT} (got {limit})"),
            )));
        }
        let session = self.inner.try_borrow().map_err(|_| busy())?;
        to_js(&session.search(&query, limit)).map_err(Thrown::from)
    }

    /// Reads from `store` the tool outputs this session stored there
    /// (their events hold only a summary and the handle) and indexes them
    /// whole for `search`, each once; resolves to how many were. A session
    /// loaded elsewhere then finds them by any part, as the one whose tool
    /// handler stored them does. An output the store does not have is left
    /// out; one it fails to read is tried again by the next call.
    #[wasm_bindgen(js_name = indexStoredOutputs, unchecked_return_type = "Promise<number>")]
    pub fn index_stored_outputs(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ArtifactStoreLike")] store: JsValue,
    ) -> js_sys::Promise {
        let store = match artifact_store_arg(&store, "store") {
            Ok(store) => store,
            Err(e) => return js_sys::Promise::reject(&to_js_error(e)),
        };
        let session = self.inner.clone();
        spawn(async move {
            let outputs = session
                .try_borrow()
                .map_err(|_| busy_error())?
                .unindexed_outputs();
            let mut indexed = 0u32;
            for (position, handle) in outputs {
                // The session is not held while the store reads.
                let read = store.retrieve(&handle).await;
                let session = session.try_borrow().map_err(|_| busy_error())?;
                match read {
                    Ok(Some(bytes)) => {
                        session.index_stored_output(position, &bytes);
                        indexed += 1;
                    }
                    Ok(None) => session.index_stored_output(position, b""),
                    Err(_) => {}
                }
            }
            Ok(JsValue::from(indexed))
        })
    }

    /// Answers a call of a look-back tool (`search_history` or
    /// `read_artifact`, as `lookBackToolDefinitions()` declares them) over
    /// this session: resolves to the search results or the page, redacted,
    /// as JSON. `read_artifact` reads only what this session's own events
    /// name, from `options.artifactStore`. Rejects with `INVALID_ARGUMENT`
    /// for another name, arguments the tool does not take or a handle the
    /// session does not name (say so to the model: the integrations' tools
    /// do), or with the store's error.
    #[wasm_bindgen(js_name = lookBack, unchecked_return_type = "Promise<Json>")]
    pub fn look_back(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Record<string, Json>")] args: JsValue,
        options: Option<LookBackOptionsArg>,
    ) -> js_sys::Promise {
        let prepared = (|| -> Result<_> {
            let name = string(&name, "name")?;
            let arguments = js_to_json(&args, "args")?;
            let store = option(&options, "artifactStore", "options")?;
            let store = if store.is_undefined() || store.is_null() {
                None
            } else {
                Some(artifact_store_arg(&store, "options.artifactStore")?)
            };
            Ok((name, arguments, store))
        })();
        let (name, arguments, store) = match prepared {
            Ok(p) => p,
            Err(e) => return js_sys::Promise::reject(&to_js_error(e)),
        };
        let look_back = LookBack::new(self.inner.clone(), store);
        spawn(async move {
            let answer = look_back.call(&name, &arguments).await?;
            to_js(&answer)
        })
    }

    /// Exports the whole session as a JSON string.
    #[wasm_bindgen(js_name = exportJson)]
    pub fn export_json(&self) -> JsResult<String> {
        Ok(self.inner.try_borrow().map_err(|_| busy())?.export_json())
    }

    /// Imports a session exported by `exportJson`; a malformed document throws
    /// `INVALID_SESSION_IMPORT` naming the offending field.
    #[wasm_bindgen(js_name = importJson)]
    pub fn import_json(
        #[wasm_bindgen(unchecked_param_type = "string")] json: JsValue,
        options: Option<ImportOptionsArg>,
    ) -> JsResult<JsSession> {
        // Reserved before the document is copied in, so the copy comes out of
        // the reserved block instead of splitting the free memory.
        if let Some(text) = json.dyn_ref::<js_sys::JsString>() {
            reserve_memory((text.length() as usize).saturating_mul(IMPORT_MEMORY_FACTOR));
        }
        let json = string(&json, "json")?;
        let counter = counter_option(&options, "options")?;
        let session = CoreSession::import_json(&json, Rc::new(JsClock), counter, seed())?;
        Ok(JsSession::from_core(session))
    }
}

/// The memory an import needs, as a multiple of its document's length (the
/// document copied in, parsed, the events and their indices: measured at
/// 8.5× on a 24 MB export of 100,000 events, 9.9× on 4.4 MB of 20,000 short ones).
const IMPORT_MEMORY_FACTOR: usize = 10;

/// Grows wasm memory once to the size an import needs, `bytes`, instead of
/// page by page while the import allocates (a cold import of 100,000 events
/// took up to 2.8× a warm one that way; the benchmark prints both). Only a
/// memory smaller than that grows: a warm instance's allocator reuses what
/// earlier work freed. The block is freed at once.
fn reserve_memory(bytes: usize) {
    #[cfg(target_arch = "wasm32")]
    if core::arch::wasm32::memory_size::<0>().saturating_mul(65_536) >= bytes {
        return;
    }
    let mut block: Vec<u8> = Vec::new();
    // A failed reservation only means growing as the import goes.
    let _ = block.try_reserve_exact(bytes);
}

enum Owner {
    Own(Rc<RefCell<CoreLog>>),
    Session(Rc<RefCell<CoreSession>>),
}

/// An event log: standalone, or a live view of a session's log.
#[wasm_bindgen]
pub struct EventLog {
    owner: Owner,
}

impl EventLog {
    fn read<T>(&self, f: impl FnOnce(&CoreLog) -> Result<T>) -> JsResult<T> {
        let out = match &self.owner {
            Owner::Own(log) => f(&*log.try_borrow().map_err(|_| busy())?),
            Owner::Session(s) => {
                // Index what was queued during a compile, when none runs.
                if let Ok(mut session) = s.try_borrow_mut() {
                    session.flush();
                }
                f(s.try_borrow().map_err(|_| busy())?.event_log())
            }
        };
        out.map_err(Thrown::from)
    }
}

#[wasm_bindgen]
impl EventLog {
    /// Creates an empty standalone log. Options: `tokenCounter`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<EventLogOptionsArg>) -> JsResult<EventLog> {
        let counter = counter_option(&options, "options")?;
        Ok(EventLog {
            owner: Owner::Own(Rc::new(RefCell::new(CoreLog::with_env(
                Rc::new(JsClock),
                counter,
                seed(),
            )))),
        })
    }

    /// Appends the event js/record.js wrote into the record buffers
    /// (`kindUnits` of -1: `kind` is not a string), with the token estimate
    /// it read from the options (see [`buffered_estimate`]); `append`, defined
    /// there, calls it and builds the returned event from the answer.
    #[wasm_bindgen(js_name = __appendBuffered, skip_typescript)]
    pub fn append_buffered(
        &self,
        kind: JsValue,
        kind_units: i32,
        tape_len: u32,
        text_len: u32,
        estimate: f64,
        options: Option<RecordOptionsArg>,
    ) -> JsResult<()> {
        let kind_units = u32::try_from(kind_units).map_err(|_| kind_not_a_string(&kind))?;
        // Read out of the buffers before anything (an options getter)
        // could record meanwhile.
        let (kind, data) = record_buffers::take(kind_units, tape_len, text_len)?;
        let estimate = buffered_estimate(estimate, &options)?;
        // An event log appends as given: `Session.record` is what redacts.
        let answer = |event: &SessionEvent| record_buffers::answer(event, false);
        match &self.owner {
            Owner::Own(log) => answer(
                log.try_borrow_mut()
                    .map_err(|_| busy())?
                    .append(kind, data, estimate)?,
            ),
            Owner::Session(s) => {
                let options = RecordOptions {
                    token_estimate: estimate,
                    redact: false,
                };
                record_shared_then(s, kind, data, options, answer)?
            }
        }
        Ok(())
    }

    /// Every event, oldest first (a copy), including those recorded while a
    /// compile runs.
    #[wasm_bindgen(getter, unchecked_return_type = "SessionEvent[]")]
    pub fn events(&self) -> JsResult<JsValue> {
        self.read(|log| events_to_js(&log.all_events()))
    }

    /// The number of events, including those recorded while a compile runs.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> JsResult<usize> {
        self.read(|log| Ok(log.len() + log.pending_len()))
    }

    /// The events whose kind is one of `kinds`.
    #[wasm_bindgen(unchecked_return_type = "SessionEvent[]")]
    pub fn filter(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string[]")] kinds: JsValue,
    ) -> JsResult<JsValue> {
        let kinds: Vec<String> = if let Some(items) = argument_items(&kinds, "kinds")? {
            items
                .iter()
                .map(|k| string(&k, "kinds[]"))
                .collect::<Result<_>>()?
        } else {
            return Err(Thrown::from(Error::new(
                ErrorCode::InvalidArgument,
                "kinds must be an array of strings",
            )));
        };
        let refs: Vec<&str> = kinds.iter().map(String::as_str).collect();
        self.read(|log| to_js(&log.filter(&refs)))
    }

    /// The sum of every event's token estimate.
    #[wasm_bindgen(js_name = totalTokens)]
    pub fn total_tokens(&self) -> JsResult<f64> {
        self.read(|log| Ok(log.total_tokens() as f64))
    }

    /// The events at or after `timestamp` (milliseconds since the epoch).
    #[wasm_bindgen(unchecked_return_type = "SessionEvent[]")]
    pub fn since(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] timestamp: JsValue,
    ) -> JsResult<JsValue> {
        let timestamp = timestamp.as_f64().filter(|t| !t.is_nan()).ok_or_else(|| {
            to_js_error(Error::new(
                ErrorCode::InvalidArgument,
                format!("timestamp must be a number (got {})", describe(&timestamp)),
            ))
        })?;
        self.read(|log| events_to_js(log.since(timestamp)))
    }
}
