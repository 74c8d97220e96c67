//! Calls that wait for a person: a run records them and stops; a later run
//! (in any process that loaded the session) records the decisions and goes
//! on. Nothing but the session holds the pause (see
//! [`crate::session::approvals`]).

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::normalize::redact::{redact, redact_json};
use crate::race::{race, First};
use crate::runner::{RequestedToolCall, RunOptions};
use crate::session::{
    record_shared, record_shared_then, ApprovalDecision, PendingApproval, RecordOptions, Session,
    APPROVAL_DECIDED, APPROVAL_REQUESTED, TOOL_CALL, TOOL_ERROR,
};
use crate::tools::{ToolEvent, ToolEventKind};
use std::cell::RefCell;

/// Decides which of the model's calls wait for a person (beside the tools
/// whose spec says `needs_approval`).
#[async_trait(?Send)]
pub trait ApprovalPolicy {
    /// Whether `call` waits. An error makes it wait: a check that failed
    /// does not let a call run unasked.
    async fn needs_approval(&self, call: &RequestedToolCall) -> Result<bool>;
}

/// Brings the session up to date with what other processes saved (the
/// host's `session.sync(store)`), after a run recorded its decisions and
/// before it runs a decided call: a decision another process made first is
/// then seen, and this run's own does not stand.
#[async_trait(?Send)]
pub trait SessionSync {
    /// Syncs the session.
    async fn sync(&self) -> Result<()>;
}

/// A decision this run made that another process's, earlier in the
/// session's order, superseded: the call was not run again.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SupersededDecision {
    /// The call decided twice.
    pub call_id: String,
    /// This run's `approval_decided` event, which does not stand.
    pub event_id: String,
}

fn busy() -> Error {
    Error::new(ErrorCode::SessionBusy, "the session is being written to")
}

/// Whether each of `calls` waits for a decision: its tool's spec says so,
/// or the run's policy does (a failing policy makes it wait). A call whose
/// arguments are unreadable never waits (it is refused).
pub(crate) async fn waiting(options: &RunOptions, calls: &[RequestedToolCall]) -> Vec<bool> {
    let mut out = Vec::with_capacity(calls.len());
    for call in calls {
        let spec_says = options
            .tools
            .iter()
            .any(|t| t.name == call.name && t.needs_approval);
        let waits = if call.arguments.is_err() {
            false
        } else if spec_says {
            true
        } else if let Some(policy) = &options.needs_approval {
            // A policy that fails, or never answers before the run is
            // cancelled, makes the call wait.
            match race(policy.needs_approval(call), options.signal.aborted()).await {
                First::Left(answer) => answer.unwrap_or(true),
                First::Right(_) => true,
            }
        } else {
            false
        };
        out.push(waits);
    }
    out
}

/// Records `call` (with `notes`) and that it waits for a decision.
pub(crate) fn request(
    session: &RefCell<Session>,
    call: &RequestedToolCall,
    notes: Map<String, Value>,
) -> Result<()> {
    let arguments = call.arguments.clone().unwrap_or_else(|_| json!({}));
    let lost = !redact_json(&mut arguments.clone()).is_empty();
    let mut data = json!({ "tool_name": call.name, "arguments": arguments });
    if lost {
        // The session keeps them redacted: the call cannot run as asked.
        data["secrets_redacted"] = json!(true);
    }
    if let Value::Object(fields) = &mut data {
        fields.extend(notes);
    }
    let recorded = record_shared(session, TOOL_CALL, data, None)?;
    let call_id = crate::session::render::call_id_of(&recorded.data)
        .map_or(recorded.event_id.clone(), str::to_string);
    let data = {
        let s = session.try_borrow().map_err(|_| busy())?;
        s.approval_request_data(&call_id)?
    };
    record_shared(session, APPROVAL_REQUESTED, data, None)?;
    Ok(())
}

/// The calls waiting in `session`.
pub(crate) fn pending(session: &RefCell<Session>) -> Result<Vec<PendingApproval>> {
    Ok(session
        .try_borrow()
        .map_err(|_| busy())?
        .event_log()
        .pending_approvals())
}

/// Checks that every decision names a call that waits, before anything is
/// recorded.
pub(crate) fn check_decisions(
    session: &RefCell<Session>,
    decisions: &[(String, ApprovalDecision)],
) -> Result<()> {
    let s = session.try_borrow().map_err(|_| busy())?;
    for (call_id, decision) in decisions {
        s.approval_decision_data(call_id, decision)?;
    }
    let mut seen = std::collections::HashSet::new();
    if let Some((dup, _)) = decisions.iter().find(|(id, _)| !seen.insert(id)) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("tool call '{dup}' is decided twice"),
        ));
    }
    Ok(())
}

/// A decided call still to run or refuse, as the session holds it.
pub(crate) struct Decided {
    /// The call's id.
    pub call_id: String,
    /// Its tool.
    pub tool_name: String,
    /// The arguments it runs with (edited ones, or the call's), redacted.
    pub arguments: Value,
    /// Whether it may run.
    pub approve: bool,
    /// Why it was refused.
    pub reason: Option<String>,
    /// The standing `approval_decided` event's id.
    pub event_id: String,
    /// Whether the arguments it runs with lost a secret to redaction.
    pub secrets_redacted: bool,
}

/// Records each decision; the call id and event id of each.
pub(crate) fn record_decisions(
    session: &RefCell<Session>,
    decisions: &[(String, ApprovalDecision)],
) -> Result<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(decisions.len());
    for (call_id, decision) in decisions {
        let data = {
            let s = session.try_borrow().map_err(|_| busy())?;
            s.approval_decision_data(call_id, decision)?
        };
        let event_id = record_shared_then(
            session,
            APPROVAL_DECIDED,
            data,
            RecordOptions::default(),
            |e| e.event_id.clone(),
        )?;
        out.push((call_id.clone(), event_id));
    }
    Ok(out)
}

/// The calls whose decision stands and that have no outcome: this run's
/// decisions, and any an earlier run recorded but did not carry out (it
/// stopped, or its process died, in between).
pub(crate) fn to_carry_out(session: &RefCell<Session>) -> Result<Vec<Decided>> {
    let s = session.try_borrow().map_err(|_| busy())?;
    let log = s.event_log();
    Ok(log
        .decided_unanswered()
        .into_iter()
        .map(|(call, decision)| {
            let data = &log.events()[decision].data;
            let text = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
            // The edited arguments', else the call's own.
            let sent = match data.get("arguments") {
                Some(_) => data,
                None => &log.events()[call].data,
            };
            Decided {
                call_id: text("call_id").unwrap_or_default(),
                tool_name: text("tool_name").unwrap_or_else(|| "unknown".into()),
                arguments: log.sent_arguments(call),
                approve: data.get("approve").and_then(Value::as_bool) == Some(true),
                reason: text("reason"),
                event_id: log.events()[decision].event_id.clone(),
                secrets_redacted: sent.get("secrets_redacted") == Some(&Value::Bool(true)),
            }
        })
        .collect())
}

/// Whether the decision `event_id` does not stand (another came first).
pub(crate) fn superseded(session: &RefCell<Session>, event_id: &str) -> Result<bool> {
    Ok(session
        .try_borrow()
        .map_err(|_| busy())?
        .event_log()
        .is_superseded_decision(event_id))
}

/// What the model is told of a call a person rejected, and why (redacted).
pub(crate) fn rejection(d: &Decided) -> String {
    match d.reason.as_deref().filter(|r| !r.trim().is_empty()) {
        Some(reason) => format!("a person rejected this call: {}", redact(reason).text),
        None => "a person rejected this call".to_string(),
    }
}

/// Why an approved call cannot run, if its arguments (as the session holds
/// them) lost a secret to redaction: run, it would get the placeholder in
/// the secret's place (a password set to `[REDACTED:secret-key]`).
pub(crate) fn lost_secret(d: &Decided) -> Option<String> {
    d.secrets_redacted.then(|| {
        "the call's arguments held a secret, which the session does not keep (it records them redacted), so it was not run with the placeholder in the secret's place: call it again in a way that needs no secret in its arguments".to_string()
    })
}

/// Records the outcome of a decided call that does not run: a `tool_error`
/// with `message` (redacted by the caller), naming the decision.
pub(crate) fn record_refusal(
    session: &RefCell<Session>,
    d: &Decided,
    message: String,
) -> Result<ToolEvent> {
    let recorded = record_shared(
        session,
        TOOL_ERROR,
        json!({
            "tool": d.tool_name,
            "call_id": d.call_id,
            "latency_ms": 0.0,
            "error": message,
            "rejected": !d.approve,
            "decision_id": d.event_id,
        }),
        None,
    )?;
    Ok(ToolEvent {
        event_id: recorded.event_id,
        timestamp: recorded.timestamp,
        kind: ToolEventKind::Error,
        tool_name: d.tool_name.clone(),
        arguments: d.arguments.clone(),
        result: None,
        error: Some(message),
        latency_ms: 0.0,
        normalized: None,
        artifact: None,
    })
}
