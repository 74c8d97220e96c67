//! The ToolInterruptHandler: a tool call with a deadline, typed events,
//! normalisation and externalisation.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{json, Map, Value};

use crate::artifacts::{ArtifactHandle, ArtifactStore, StoreOptions};
use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::normalize::aligner::PerceptionAligner;
use crate::normalize::redact::{redact, redact_json};
use crate::race::{race, First};
use crate::session::{
    record_shared_then, RecordOptions, Session, SessionEvent, ARTIFACT_STORED, TOOL_CALL,
    TOOL_ERROR, TOOL_SUCCESS, TOOL_TIMEOUT,
};
use crate::tools::look_back::{is_look_back, LookBackBridge};
use crate::tools::{AbortSignal, ToolBridge, ToolContent, ToolEvent, ToolEventKind, ToolFailure};

/// The timeout of a call when none is given (default 30 seconds).
pub const DEFAULT_TIMEOUT_MS: f64 = 30_000.0;
/// Outputs of at least this many bytes are externalised by default.
pub const DEFAULT_EXTERNALIZE_BYTES: usize = 1024;

/// How the handler externalises outputs.
#[derive(Clone)]
pub struct ToolInterruptOptions {
    /// Where large outputs go; `None` keeps every output inline.
    pub artifact_store: Option<Rc<dyn ArtifactStore>>,
    /// Outputs of at least this many bytes (after redaction) are externalised.
    pub externalize_threshold: usize,
}

impl Default for ToolInterruptOptions {
    fn default() -> Self {
        ToolInterruptOptions {
            artifact_store: None,
            externalize_threshold: DEFAULT_EXTERNALIZE_BYTES,
        }
    }
}

/// Wraps a [`ToolBridge`] with typed events recorded in a session, a deadline
/// with abort, normalisation and externalisation.
///
/// Each call records `tool_call`, then exactly one of `tool_success`,
/// `tool_error` or `tool_timeout` (with `artifact_stored` before a success
/// whose output was externalised). All of a call's events carry the same
/// `call_id` (the id of its `tool_call` event), so concurrent calls stay
/// apart. Only redacted text is kept, in the event, the session and the
/// artifact store: the output, the error message and the arguments.
pub struct ToolInterruptHandler {
    bridge: Rc<dyn ToolBridge>,
    normalizer: PerceptionAligner,
    session: Rc<RefCell<Session>>,
    clock: Rc<dyn Clock>,
    options: ToolInterruptOptions,
}

/// What a call's work ended with, before it is recorded.
enum Done {
    /// A text (or JSON) output, normalised.
    Normalized(crate::normalize::aligner::NormalizedOutput),
    /// A binary output and its MIME type.
    Binary(Vec<u8>, &'static str),
}

fn busy() -> Error {
    Error::new(
        ErrorCode::SessionBusy,
        "the session is in use by a running compile; the tool call could not be recorded",
    )
}

impl ToolInterruptHandler {
    /// A handler calling tools through `bridge`, recording into `session`.
    pub fn new(
        bridge: Rc<dyn ToolBridge>,
        normalizer: PerceptionAligner,
        session: Rc<RefCell<Session>>,
        clock: Rc<dyn Clock>,
        options: ToolInterruptOptions,
    ) -> Self {
        ToolInterruptHandler {
            bridge,
            normalizer,
            session,
            clock,
            options,
        }
    }

    /// The session the handler records into.
    pub fn session(&self) -> &Rc<RefCell<Session>> {
        &self.session
    }

    /// The store large and binary outputs go to, when the handler has one.
    pub fn artifact_store(&self) -> Option<&Rc<dyn ArtifactStore>> {
        self.options.artifact_store.as_ref()
    }

    /// The same handler with the look-back tools (`search_history`,
    /// `read_artifact` over its artifact store) run by the library in front
    /// of its bridge; their calls are recorded like any other.
    pub fn with_look_back(&self) -> ToolInterruptHandler {
        ToolInterruptHandler {
            bridge: Rc::new(LookBackBridge::new(
                Some(self.bridge.clone()),
                self.session.clone(),
                self.options.artifact_store.clone(),
            )),
            normalizer: self.normalizer.clone(),
            session: self.session.clone(),
            clock: self.clock.clone(),
            options: self.options.clone(),
        }
    }

    /// Records a call's event: its text was redacted on the way in (the
    /// output in steps, under the call's deadline), so not again.
    fn record(&self, kind: &str, data: Value) -> Result<SessionEvent> {
        let options = RecordOptions {
            redact: false,
            ..RecordOptions::default()
        };
        record_shared_then(&self.session, kind, data, options, SessionEvent::clone)
    }

    /// Records `run`'s outcome, naming the decision it ran after.
    fn record_outcome(
        &self,
        run: &CallRun<'_>,
        kind: &str,
        mut data: Value,
    ) -> Result<SessionEvent> {
        if let (Some(decision), Value::Object(fields)) = (run.decision_id, &mut data) {
            fields.insert("decision_id".into(), json!(decision));
        }
        self.record(kind, data)
    }

    /// Indexes for recall the whole output stored for the outcome
    /// `event_id` (its event holds only a summary). When the session is
    /// busy this is left to
    /// [`crate::session::Session::index_stored_outputs`].
    fn index_stored(&self, event_id: &str, output: &str) {
        if let Ok(session) = self.session.try_borrow() {
            let position = session
                .event_log()
                .all_events()
                .iter()
                .rposition(|e| e.event_id == event_id);
            if let Some(position) = position {
                session.index_stored_output(position, output.as_bytes());
            }
        }
    }

    /// Stores a call's output in `store` and records `artifact_stored`;
    /// `data` (the success's record) gets the handle, or why the store
    /// failed (`None` then: the caller keeps the output inline or says it
    /// was not kept). `Err` only when the session cannot be written.
    async fn store_output(
        &self,
        store: &dyn ArtifactStore,
        tool_name: &str,
        call_id: &str,
        content: &[u8],
        mime_type: &str,
        data: &mut Value,
    ) -> Result<Option<ArtifactHandle>> {
        let source = format!("tool:{tool_name}");
        let session_id = self
            .session
            .try_borrow()
            .map_err(|_| busy())?
            .session_id()
            .to_string();
        let options = StoreOptions {
            mime_type: Some(mime_type.into()),
            session_id: Some(session_id),
        };
        match store.store(content, &source, options).await {
            Ok(handle) => {
                self.record(
                    ARTIFACT_STORED,
                    json!({"handle": handle.artifact_id, "source": source, "size_bytes": handle.size_bytes,
                           "summary": handle.summary, "mime_type": handle.mime_type, "call_id": call_id}),
                )?;
                data["handle"] = json!(handle.artifact_id);
                data["size_bytes"] = json!(handle.size_bytes);
                Ok(Some(handle))
            }
            Err(e) => {
                data["externalize_error"] = json!(e.to_string());
                Ok(None)
            }
        }
    }

    /// Records the success of a call whose output is binary: the bytes go
    /// to the artifact store whole (whatever their size), and the session,
    /// the event and every prompt get a line saying what they are and where
    /// (never the bytes, never base64). Without a store the line says they
    /// were not kept.
    async fn binary_success(
        &self,
        run: &CallRun<'_>,
        latency_ms: f64,
        bytes: Vec<u8>,
        mime_type: &str,
        event: impl Fn(ToolEventKind, SessionEvent) -> ToolEvent,
    ) -> Result<ToolEvent> {
        let (tool_name, call_id) = (run.tool_name, run.call_id);
        let size = bytes.len();
        let mut data = json!({
            "tool": tool_name,
            "call_id": call_id,
            "latency_ms": latency_ms,
            "valid": true,
            "mime_type": mime_type,
            "summary": format!("binary output: {size} bytes ({mime_type})"),
        });
        let mut artifact = None;
        let mut kept = "not kept: the handler has no artifact store".to_string();
        if let Some(store) = self.options.artifact_store.as_ref() {
            artifact = self
                .store_output(
                    store.as_ref(),
                    tool_name,
                    call_id,
                    &bytes,
                    mime_type,
                    &mut data,
                )
                .await?;
            kept = match &artifact {
                Some(handle) => format!("stored as artifact {}", handle.artifact_id),
                None => "not kept: the artifact store failed".to_string(),
            };
            // An image or a PDF goes to the model as itself (see
            // crate::media), when its header reads.
            if let Some(handle) = &artifact {
                if let Ok(mut part) = crate::media::describe(&bytes, Some(mime_type)) {
                    part.artifact = Some(handle.artifact_id.clone());
                    if let Ok(v) = serde_json::to_value(&part) {
                        data["media"] = json!([v]);
                    }
                }
            }
        }
        let text = format!("[binary output: {size} bytes ({mime_type}), {kept}]");
        if artifact.is_none() {
            data["result"] = json!(text);
        }
        let recorded = self.record_outcome(run, TOOL_SUCCESS, data)?;
        Ok(ToolEvent {
            result: Some(text),
            artifact,
            ..event(ToolEventKind::Success, recorded)
        })
    }

    /// Calls `tool_name` with `arguments`, giving up after `timeout_ms`
    /// (default 30 s). A failing or late tool is an event, not an error; an
    /// `Err` means the session could not be written (or the timeout is invalid).
    pub async fn call(
        &self,
        tool_name: &str,
        arguments: Value,
        timeout_ms: Option<f64>,
    ) -> Result<ToolEvent> {
        self.call_with(tool_name, arguments, timeout_ms, None).await
    }

    /// Like [`ToolInterruptHandler::call`], and also gives up when `cancel`
    /// is raised: the tool's own signal is raised and the call ends as a
    /// `tool_error` saying it was cancelled, so every recorded call has an
    /// outcome.
    pub async fn call_with(
        &self,
        tool_name: &str,
        arguments: Value,
        timeout_ms: Option<f64>,
        cancel: Option<&AbortSignal>,
    ) -> Result<ToolEvent> {
        self.call_noted(tool_name, arguments, timeout_ms, cancel, Map::new())
            .await
    }

    /// Like [`ToolInterruptHandler::call_with`], with `notes` (what the
    /// provider asks back with the call: its thought signature, the turn's
    /// reasoning; `call_id`, the provider's id of the call) added to the
    /// `tool_call` event's data. The outcome names the call by that
    /// `call_id` when given, else by the `tool_call` event's id.
    pub async fn call_noted(
        &self,
        tool_name: &str,
        arguments: Value,
        timeout_ms: Option<f64>,
        cancel: Option<&AbortSignal>,
        notes: Map<String, Value>,
    ) -> Result<ToolEvent> {
        let timeout_ms = checked_timeout(timeout_ms)?;
        // The tool gets its arguments as given; the session, the events and
        // every prompt only ever see them redacted.
        let mut recorded_arguments = arguments.clone();
        redact_json(&mut recorded_arguments);
        let mut data = json!({"tool_name": tool_name, "arguments": recorded_arguments});
        if let Value::Object(fields) = &mut data {
            fields.extend(notes);
        }
        let call = self.record(TOOL_CALL, data)?;
        let call_id = crate::session::render::call_id_of(&call.data)
            .map_or_else(|| call.event_id.clone(), str::to_string);
        // The other calls of the reply, run together with this one, record
        // theirs before any outcome is: the reply's calls stay together.
        crate::join::yield_now().await;
        let run = CallRun {
            tool_name,
            call_id: &call_id,
            decision_id: None,
        };
        self.run_call(run, arguments, recorded_arguments, timeout_ms, cancel)
            .await
    }

    /// Runs a call recorded earlier that waited for a person's decision
    /// (`decision_id`, its `approval_decided` event): with `arguments` (the
    /// call's, or the decision's edited ones), recording only its outcome,
    /// which names `call_id` and the decision. Otherwise as
    /// [`ToolInterruptHandler::call_with`].
    pub async fn run_decided(
        &self,
        tool_name: &str,
        call_id: &str,
        arguments: Value,
        timeout_ms: Option<f64>,
        cancel: Option<&AbortSignal>,
        decision_id: &str,
    ) -> Result<ToolEvent> {
        let timeout_ms = checked_timeout(timeout_ms)?;
        let mut recorded_arguments = arguments.clone();
        redact_json(&mut recorded_arguments);
        let run = CallRun {
            tool_name,
            call_id,
            decision_id: Some(decision_id),
        };
        self.run_call(run, arguments, recorded_arguments, timeout_ms, cancel)
            .await
    }

    /// Runs the recorded call `run` and records its outcome.
    async fn run_call(
        &self,
        run: CallRun<'_>,
        arguments: Value,
        recorded_arguments: Value,
        timeout_ms: f64,
        cancel: Option<&AbortSignal>,
    ) -> Result<ToolEvent> {
        let CallRun {
            tool_name, call_id, ..
        } = run;
        let start = self.clock.now_ms();
        let signal = AbortSignal::new();
        let cancelled = async {
            match cancel {
                Some(c) => c.aborted().await,
                None => std::future::pending().await,
            }
        };
        // Normalisation counts inside the call's time: a large output is
        // normalised in steps, so the deadline (and a cancel) can end it.
        let work = async {
            let output = self
                .bridge
                .execute(tool_name, &arguments, &signal, timeout_ms)
                .await?;
            Ok(match output.into_content() {
                ToolContent::Text(raw) => {
                    let normalized = self
                        .normalizer
                        .normalize_in_steps(tool_name, &raw, self.clock.as_ref())
                        .await;
                    Done::Normalized(normalized)
                }
                ToolContent::Binary { bytes, mime_type } => Done::Binary(bytes, mime_type),
            })
        };
        let outcome = race(work, race(self.clock.sleep(timeout_ms), cancelled)).await;
        let latency_ms = (self.clock.now_ms() - start).max(0.0);
        let event = |kind, recorded: SessionEvent| ToolEvent {
            event_id: recorded.event_id,
            timestamp: recorded.timestamp,
            kind,
            tool_name: tool_name.to_string(),
            arguments: recorded_arguments.clone(),
            result: None,
            error: None,
            latency_ms,
            normalized: None,
            artifact: None,
        };
        let outcome = match outcome {
            First::Right(First::Left(())) => {
                let message = format!("tool '{tool_name}' timed out after {timeout_ms} ms");
                signal.abort(&message);
                Err(ToolFailure::TimedOut(message))
            }
            First::Right(First::Right(reason)) => {
                let message = format!("tool '{tool_name}' was cancelled: {reason}");
                signal.abort(&message);
                Err(ToolFailure::Failed(message))
            }
            First::Left(result) => result,
        };
        match outcome {
            Err(ToolFailure::TimedOut(message)) => {
                let message = redact(&message).text;
                let recorded = self.record_outcome(
                    &run,
                    TOOL_TIMEOUT,
                    json!({"tool": tool_name, "call_id": call_id, "latency_ms": latency_ms, "timeout_ms": timeout_ms, "error": message}),
                )?;
                Ok(ToolEvent {
                    error: Some(message),
                    ..event(ToolEventKind::Timeout, recorded)
                })
            }
            Err(ToolFailure::Failed(message)) => {
                let message = redact(&message).text;
                let recorded = self.record_outcome(
                    &run,
                    TOOL_ERROR,
                    json!({"tool": tool_name, "call_id": call_id, "latency_ms": latency_ms, "error": message}),
                )?;
                Ok(ToolEvent {
                    error: Some(message),
                    ..event(ToolEventKind::Error, recorded)
                })
            }
            Ok(Done::Binary(bytes, mime_type)) => {
                self.binary_success(&run, latency_ms, bytes, mime_type, event)
                    .await
            }
            Ok(Done::Normalized(normalized)) => {
                let text = match &normalized.data {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let mut data = json!({
                    "tool": tool_name,
                    "call_id": call_id,
                    "latency_ms": latency_ms,
                    "valid": normalized.valid,
                    "summary": normalized.summary_concise,
                });
                let mut artifact = None;
                if let Some(store) = self.options.artifact_store.as_ref().filter(|_| {
                    text.len() >= self.options.externalize_threshold && !is_look_back(tool_name)
                }) {
                    let mime = if normalized.is_json {
                        "application/json"
                    } else {
                        "text/plain"
                    };
                    // Nothing is lost: when the store fails the output stays
                    // inline, and why is recorded.
                    artifact = self
                        .store_output(
                            store.as_ref(),
                            tool_name,
                            call_id,
                            text.as_bytes(),
                            mime,
                            &mut data,
                        )
                        .await?;
                }
                if artifact.is_none() {
                    data["result"] = json!(text);
                }
                let recorded = self.record_outcome(&run, TOOL_SUCCESS, data)?;
                if artifact.is_some() {
                    self.index_stored(&recorded.event_id, &text);
                }
                Ok(ToolEvent {
                    result: Some(text),
                    normalized: Some(normalized),
                    artifact,
                    ..event(ToolEventKind::Success, recorded)
                })
            }
        }
    }
}

/// A recorded call being run: its tool, its id, and the decision it runs
/// after, if it waited for one.
struct CallRun<'a> {
    tool_name: &'a str,
    call_id: &'a str,
    decision_id: Option<&'a str>,
}

/// `timeout_ms` or the default, when positive and finite.
fn checked_timeout(timeout_ms: Option<f64>) -> Result<f64> {
    let timeout_ms = timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if timeout_ms.is_nan() || timeout_ms <= 0.0 || !timeout_ms.is_finite() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("timeoutMs must be a positive number (got {timeout_ms})"),
        ));
    }
    Ok(timeout_ms)
}
