//! Tool calls that wait for a person: which are pending, which decision
//! stands.
//!
//! A call that waits is a `tool_call` event with no outcome, followed by an
//! `approval_requested` event naming it by `call_id`. A decision is an
//! `approval_decided` event: `{ call_id, approve, reason?, arguments?,
//! original_arguments?, request_id }` (`arguments`: the call's edited
//! arguments; `request_id`: the `approval_requested` event decided). The
//! first decision in the session's order stands; a later one for the same
//! call (two processes deciding it before they synced) is *superseded*:
//! the outcome recorded after it (naming it by `decision_id`) answers
//! nothing, so a request compiled after the merge answers the call once.
//! An unanswered call is never rendered, so no request carries a call that
//! waits.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};

/// A person's decision on a call that waits: run it, run it with edited
/// arguments, or refuse it with a reason the model is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecision {
    /// Whether the call may run.
    pub approve: bool,
    /// Why it was refused (told to the model, redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The arguments it runs with instead of the model's (an approval only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
}

impl ApprovalDecision {
    /// Reads `{ approve: true } | { approve: false, reason? } | { approve:
    /// true, args }`; anything else is [`ErrorCode::InvalidArgument`].
    pub fn from_json(value: &Value, what: &str) -> Result<ApprovalDecision> {
        let invalid = |m: String| Error::new(ErrorCode::InvalidArgument, m);
        let Value::Object(fields) = value else {
            return Err(invalid(format!(
                "{what} must be {{ approve: true }}, {{ approve: false, reason }} or {{ approve: true, args }}"
            )));
        };
        if let Some(key) = fields
            .keys()
            .find(|k| !matches!(k.as_str(), "approve" | "reason" | "args"))
        {
            return Err(invalid(format!("{what}: unknown field '{key}'")));
        }
        let approve = fields
            .get("approve")
            .and_then(Value::as_bool)
            .ok_or_else(|| invalid(format!("{what}.approve must be true or false")))?;
        let reason = match fields.get("reason") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(cut_reason(s)),
            Some(_) => return Err(invalid(format!("{what}.reason must be a string"))),
        };
        let args = match fields.get("args") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(_) => return Err(invalid(format!("{what}.args must be an object"))),
        };
        if !approve && args.is_some() {
            return Err(invalid(format!(
                "{what}: args edit a call that runs; a refused call has none"
            )));
        }
        Ok(ApprovalDecision {
            approve,
            reason,
            args,
        })
    }
}

/// The most characters of a decision's reason kept: a person's reason, not a
/// document (the model is told it).
pub const MAX_REASON_CHARS: usize = 2_000;

/// `reason`, cut after [`MAX_REASON_CHARS`] characters with a note saying so.
fn cut_reason(reason: &str) -> String {
    match reason.char_indices().nth(MAX_REASON_CHARS) {
        None => reason.to_string(),
        Some((end, _)) => format!(
            "{} [reason cut at {MAX_REASON_CHARS} characters]",
            &reason[..end]
        ),
    }
}

/// A call that waits for a decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PendingApproval {
    /// The call's id (the provider's, else its `tool_call` event's).
    pub call_id: String,
    /// The tool it calls.
    pub name: String,
    /// Its arguments, redacted.
    #[cfg_attr(test, ts(as = "crate::typescript::Json"))]
    pub arguments: Value,
    /// The `approval_requested` event's id.
    pub event_id: String,
}

/// One request and what was decided on it.
#[derive(Debug)]
struct Request {
    call_id: String,
    /// The `approval_requested` event.
    position: usize,
    /// The `tool_call` it is about, when one was recorded.
    call: Option<usize>,
    /// The decision that stands (the first).
    standing: Option<usize>,
}

/// The requests and decisions of a log, built as events are appended.
#[derive(Debug, Default)]
pub(crate) struct Approvals {
    requests: Vec<Request>,
    /// Each call id's latest request.
    by_call_id: HashMap<String, usize>,
    /// The request of each `approval_requested` event id.
    by_event: HashMap<String, usize>,
    /// The request deciding each `tool_call` position.
    by_call: HashMap<usize, usize>,
    /// The `approval_decided` event ids that came after another decision.
    superseded: HashSet<String>,
}

impl Approvals {
    /// Indexes the `approval_requested` at `position` for `call_id`, about
    /// the `tool_call` at `call` when one is recorded.
    pub(crate) fn add_request(
        &mut self,
        position: usize,
        event_id: &str,
        call_id: &str,
        call: Option<usize>,
    ) {
        let r = self.requests.len();
        self.by_event.insert(event_id.to_string(), r);
        self.requests.push(Request {
            call_id: call_id.to_string(),
            position,
            call,
            standing: None,
        });
        self.by_call_id.insert(call_id.to_string(), r);
        if let Some(c) = call {
            self.by_call.insert(c, r);
        }
    }

    /// Indexes the `approval_decided` event `event_id` at `position` on
    /// the request it names (`request_id`, its `approval_requested` event),
    /// else on `call_id`'s latest: the first decision on a request stands,
    /// a later one is superseded. Named by its request, a decision merged
    /// in after the provider reused the call id for a later call that
    /// waits still decides the call its maker saw. A decision on no
    /// request is kept as recorded.
    pub(crate) fn add_decision(
        &mut self,
        position: usize,
        event_id: &str,
        call_id: &str,
        request_id: Option<&str>,
    ) {
        let named = request_id.and_then(|id| self.by_event.get(id));
        let Some(&r) = named.or_else(|| self.by_call_id.get(call_id)) else {
            return;
        };
        match self.requests[r].standing {
            None => self.requests[r].standing = Some(position),
            Some(_) => {
                self.superseded.insert(event_id.to_string());
            }
        }
    }

    /// Whether the decision `event_id` came after another on its call.
    pub(crate) fn is_superseded(&self, decision_id: &str) -> bool {
        self.superseded.contains(decision_id)
    }

    /// The position of the decision that stands on the `tool_call` at
    /// `call_position`, if it was asked about and decided.
    pub(crate) fn standing_for_call(&self, call_position: usize) -> Option<usize> {
        self.by_call
            .get(&call_position)
            .and_then(|&r| self.requests[r].standing)
    }

    /// The `approval_requested` position about the `tool_call` at
    /// `call_position`, if it was asked about.
    pub(crate) fn request_for_call(&self, call_position: usize) -> Option<usize> {
        self.by_call
            .get(&call_position)
            .map(|&r| self.requests[r].position)
    }

    /// The `tool_call` positions asked about whose decision stands, each
    /// with that decision's position, in the decisions' order.
    pub(crate) fn decided_calls(&self) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = self
            .by_call
            .iter()
            .filter_map(|(&call, &r)| self.requests[r].standing.map(|d| (call, d)))
            .collect();
        out.sort_by_key(|&(_, d)| d);
        out
    }

    /// The latest request for `call_id`: its `approval_requested` position
    /// and standing decision.
    pub(crate) fn request(&self, call_id: &str) -> Option<(usize, Option<usize>)> {
        self.by_call_id
            .get(call_id)
            .map(|&r| (self.requests[r].position, self.requests[r].standing))
    }

    /// The requests with no decision yet, oldest first: the
    /// `approval_requested` positions, their call ids and the `tool_call`
    /// positions they are about. Two calls of one reply under one id (a
    /// provider that reuses ids) are both here; a request about no recorded
    /// call only while it is its id's latest.
    pub(crate) fn pending(&self) -> impl Iterator<Item = (usize, &str, Option<usize>)> {
        self.requests
            .iter()
            .enumerate()
            .filter(|(r, q)| {
                q.standing.is_none()
                    && (q.call.is_some() || self.by_call_id.get(&q.call_id) == Some(r))
            })
            .map(|(_, q)| (q.position, q.call_id.as_str(), q.call))
    }
}

/// The edited arguments a standing decision's data carries, if any.
pub(crate) fn edited_arguments(decision: &Value) -> Option<&Value> {
    decision
        .get("approve")
        .and_then(Value::as_bool)
        .filter(|a| *a)
        .and_then(|_| decision.get("arguments"))
        .filter(|a| a.is_object())
}

/// The `approval_requested` event a decision names, if any.
pub(crate) fn request_of(decision: &Value) -> Option<&str> {
    decision.get("request_id").and_then(Value::as_str)
}

/// The decision an outcome was recorded after (`decision_id`), if any.
pub(crate) fn decision_of(outcome: &Value) -> Option<&str> {
    crate::json_text::member(outcome, "decision_id").and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_decision_stands_and_a_later_one_is_superseded() {
        let mut a = Approvals::default();
        a.add_request(1, "r1", "c1", Some(0));
        assert_eq!(a.pending().collect::<Vec<_>>(), vec![(1, "c1", Some(0))]);
        a.add_decision(2, "d1", "c1", None);
        a.add_decision(4, "d2", "c1", Some("r1"));
        assert!(!a.is_superseded("d1"));
        assert!(a.is_superseded("d2"));
        assert_eq!(a.standing_for_call(0), Some(2));
        assert_eq!(a.pending().count(), 0);
    }

    #[test]
    fn decisions_read_every_shape_and_refuse_the_rest() {
        let ok = |v: Value| ApprovalDecision::from_json(&v, "d");
        assert!(ok(json!({"approve": true})).is_ok_and(|d| d.approve));
        assert!(ok(json!({"approve": false, "reason": "no"}))
            .is_ok_and(|d| d.reason.as_deref() == Some("no")));
        assert!(ok(json!({"approve": true, "args": {"x": 1}})).is_ok_and(|d| d.args.is_some()));
        for bad in [
            json!(true),
            json!({}),
            json!({"approve": "yes"}),
            json!({"approve": true, "args": [1]}),
            json!({"approve": false, "args": {"x": 1}}),
            json!({"approve": true, "aprove": true}),
            json!({"approve": false, "reason": 3}),
        ] {
            let e = ok(bad.clone()).err();
            assert_eq!(
                e.map(|e| e.code()),
                Some(ErrorCode::InvalidArgument),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_long_reason_is_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_REASON_CHARS + 10);
        let d = ApprovalDecision::from_json(&json!({"approve": false, "reason": long}), "d");
        let reason = d.ok().and_then(|d| d.reason).unwrap_or_default();
        assert!(reason.starts_with(&"é".repeat(MAX_REASON_CHARS)));
        assert!(reason.ends_with("[reason cut at 2000 characters]"));
        assert_eq!(
            reason.chars().filter(|c| *c == 'é').count(),
            MAX_REASON_CHARS
        );
    }

    #[test]
    fn only_an_approval_edits_the_arguments() {
        assert!(edited_arguments(&json!({"approve": true, "arguments": {"a": 1}})).is_some());
        assert!(edited_arguments(&json!({"approve": false, "arguments": {"a": 1}})).is_none());
        assert!(edited_arguments(&json!({"approve": true})).is_none());
    }
}
