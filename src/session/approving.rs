//! Recording a request for a person's decision on a tool call, and the
//! decision (see [`crate::session::approvals`] for what they mean).

use serde_json::{json, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::normalize::redact::redact_json;
use crate::session::render;
use crate::session::{
    ApprovalDecision, Session, SessionEvent, APPROVAL_DECIDED, APPROVAL_REQUESTED,
};

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

impl Session {
    /// The data of the `approval_requested` event for the recorded,
    /// unanswered `tool_call` under `call_id`; [`ErrorCode::InvalidArgument`]
    /// when there is none or it was asked about already.
    pub fn approval_request_data(&self, call_id: &str) -> Result<Value> {
        let log = self.event_log();
        let call = log.unanswered_call(call_id).ok_or_else(|| {
            invalid(format!(
                "no recorded tool call '{call_id}' is waiting for its outcome"
            ))
        })?;
        if log.approval_for_call(call).is_some() {
            return Err(invalid(format!(
                "tool call '{call_id}' already waits for a decision"
            )));
        }
        let data = &log.events()[call].data;
        Ok(json!({
            "call_id": call_id,
            "tool_name": render::call_name(data),
            "arguments": render::call_arguments(data),
        }))
    }

    /// The data of the `approval_decided` event recording `decision` on the
    /// call `call_id` waits for; [`ErrorCode::InvalidArgument`] when no call
    /// of that id waits (unknown, or decided already).
    pub fn approval_decision_data(
        &self,
        call_id: &str,
        decision: &ApprovalDecision,
    ) -> Result<Value> {
        let log = self.event_log();
        let pending = log
            .pending_approvals()
            .into_iter()
            .find(|p| p.call_id == call_id);
        let Some(pending) = pending else {
            return Err(invalid(match log.approval_request(call_id) {
                Some((_, Some(_))) => format!("tool call '{call_id}' was decided already"),
                _ => format!("no tool call '{call_id}' waits for a decision"),
            }));
        };
        let mut data = json!({
            "call_id": call_id,
            "tool_name": pending.name,
            "approve": decision.approve,
            "request_id": pending.event_id,
        });
        if let Some(reason) = &decision.reason {
            data["reason"] = json!(reason);
        }
        if let Some(args) = &decision.args {
            if !redact_json(&mut args.clone()).is_empty() {
                // The session keeps them redacted: the call cannot run as edited.
                data["secrets_redacted"] = json!(true);
            }
            data["arguments"] = args.clone();
            data["original_arguments"] = pending.arguments;
        }
        Ok(data)
    }

    /// Records that the recorded, unanswered `tool_call` `call_id` waits for
    /// a person's decision (an `approval_requested` event).
    pub fn request_approval(&mut self, call_id: &str) -> Result<&SessionEvent> {
        let data = self.approval_request_data(call_id)?;
        self.record(APPROVAL_REQUESTED, data, None)
    }

    /// Records `decision` on the call `call_id` waits for (an
    /// `approval_decided` event; its reason and edited arguments redacted).
    pub fn decide_approval(
        &mut self,
        call_id: &str,
        decision: &ApprovalDecision,
    ) -> Result<&SessionEvent> {
        let data = self.approval_decision_data(call_id, decision)?;
        self.record(APPROVAL_DECIDED, data, None)
    }
}
