//! The input guard a run asks before calling the model (the guard
//! pipeline, injected).

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};

/// What the guard decided about one input.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GuardDecision {
    /// Whether the input may reach the model.
    pub allowed: bool,
    /// The threat level (`"none"` when the guard gives none).
    pub threat_level: String,
    /// Why, when blocked (or any note).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl GuardDecision {
    /// Input allowed, no threat.
    pub fn allow() -> Self {
        GuardDecision {
            allowed: true,
            threat_level: "none".into(),
            reason: None,
        }
    }

    /// Input blocked, for `reason`.
    pub fn block(threat_level: impl Into<String>, reason: impl Into<String>) -> Self {
        GuardDecision {
            allowed: false,
            threat_level: threat_level.into(),
            reason: Some(reason.into()),
        }
    }

    /// Reads a guard's answer: a boolean, or `{ allowed, threatLevel |
    /// threat_level, reason }`. Anything else is [`ErrorCode::GuardFailed`].
    pub fn from_json(value: &Value) -> Result<GuardDecision> {
        let failed = |m: &str| Error::new(ErrorCode::GuardFailed, m.to_string());
        match value {
            Value::Bool(allowed) => Ok(GuardDecision {
                allowed: *allowed,
                threat_level: "none".into(),
                reason: None,
            }),
            Value::Object(o) => {
                let allowed = o
                    .get("allowed")
                    .and_then(Value::as_bool)
                    .ok_or_else(|| failed("the guard's decision must have a boolean `allowed`"))?;
                let text = |keys: &[&str]| {
                    keys.iter()
                        .find_map(|k| o.get(*k).and_then(Value::as_str))
                        .map(str::to_string)
                };
                Ok(GuardDecision {
                    allowed,
                    threat_level: text(&["threatLevel", "threat_level"])
                        .unwrap_or_else(|| "none".into()),
                    reason: text(&["reason"]),
                })
            }
            _ => Err(failed(
                "the guard must return a boolean or { allowed, threatLevel?, reason? }",
            )),
        }
    }

    /// The `guard_decision` event's data: `allowed` and
    /// `threat_level`, and the reason.
    pub fn event_data(&self) -> Value {
        let mut data = serde_json::json!({
            "allowed": self.allowed,
            "threat_level": self.threat_level,
        });
        if let Some(r) = &self.reason {
            data["reason"] = Value::String(r.clone());
        }
        data
    }
}

/// Decides whether an input may reach the model (single-threaded).
#[async_trait(?Send)]
pub trait Guard {
    /// Evaluates `input`.
    async fn evaluate(&self, input: &str) -> Result<GuardDecision>;
}
