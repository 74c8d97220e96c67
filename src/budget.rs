//! The token budget tracker, and the plan that turns a compile's budget in
//! the provider's tokens into the count it fits the context to in the
//! session's: room kept for the reply, the correction the session's
//! recorded usage calls for, and a margin for that correction's error.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};

/// Tracks token consumption against a configured maximum (no default: a
/// budget is a conscious choice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBudget {
    max: u64,
    consumed: u64,
}

impl TokenBudget {
    /// Creates a budget of `max_tokens`, which must be positive.
    pub fn new(max_tokens: i64) -> Result<Self> {
        if max_tokens <= 0 {
            return Err(Error::new(
                ErrorCode::InvalidBudget,
                format!("max_tokens must be positive (got {max_tokens})"),
            ));
        }
        Ok(TokenBudget {
            max: max_tokens as u64,
            consumed: 0,
        })
    }

    /// Records `tokens` as consumed.
    pub fn consume(&mut self, tokens: u64) {
        self.consumed = self.consumed.saturating_add(tokens);
    }

    /// Tokens left; negative once the budget is overspent.
    pub fn remaining(&self) -> i64 {
        self.max as i64 - self.consumed.min(i64::MAX as u64) as i64
    }

    /// Whether consumption is at most the maximum.
    pub fn is_within_budget(&self) -> bool {
        self.consumed <= self.max
    }

    /// Tokens consumed beyond the maximum (zero when within budget).
    pub fn overflow(&self) -> u64 {
        self.consumed.saturating_sub(self.max)
    }

    /// The configured maximum.
    pub fn max_tokens(&self) -> u64 {
        self.max
    }

    /// Tokens consumed so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }
}

/// The share of the budget held back once a correction is in use: the
/// ratio between the provider's count and the session's moves a little
/// from one request to the next (what the context holds changes).
pub const DEFAULT_USAGE_MARGIN: f64 = 0.05;

/// How a compile's budget was spent before the context: what was asked,
/// what was kept back and why, and the count the context was fitted to.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BudgetPlan {
    /// The budget asked for, in the provider's tokens.
    pub requested: u64,
    /// Tokens kept for the reply (`reserveOutput`).
    pub reserve_output: u64,
    /// Provider tokens per counted token, from the session's `model_usage`
    /// events (1 without them, and at least 1: a provider that counts fewer
    /// never lifts the budget).
    pub correction: f64,
    /// The `model_usage` events the correction comes from.
    pub usage_samples: usize,
    /// Provider tokens held back for the correction's error (0 without a
    /// correction).
    pub margin: u64,
    /// Provider tokens held back, until recorded usage corrects the count,
    /// for the default counter's error on the kinds of content the session
    /// holds (text, dense runs such as base64, CJK: each kind's measured
    /// margin, the heaviest taken first): 0 once usage corrects it, and with
    /// a counter of the host's.
    #[serde(default)]
    pub content_margin: u64,
    /// `model_usage` reports kept but not applied to the correction: the
    /// counter's measured error does not explain them (a test double, a
    /// proxy reporting cached or partial counts, usage summed over several
    /// requests).
    #[serde(default)]
    pub rejected_usage: usize,
    /// The count the context is fitted to, in the session's tokens:
    /// `(requested - reserveOutput - margin - contentMargin) / correction`,
    /// rounded down.
    pub target: u64,
}

impl BudgetPlan {
    /// The plan for `requested` tokens keeping `reserve_output` for the
    /// reply, with a `correction` (provider tokens per counted token) from
    /// `usage_samples` calls, and `margin_share` of the rest held back when
    /// there are any. A reserve that leaves nothing, or a margin share
    /// outside `[0, 1)`, is [`ErrorCode::InvalidBudget`].
    pub fn new(
        requested: u64,
        reserve_output: u64,
        correction: f64,
        usage_samples: usize,
        margin_share: f64,
    ) -> Result<BudgetPlan> {
        if !(0.0..1.0).contains(&margin_share) {
            return Err(Error::new(
                ErrorCode::InvalidBudget,
                format!("usageMargin must be at least 0 and below 1 (got {margin_share})"),
            ));
        }
        let available = requested.checked_sub(reserve_output).filter(|n| *n > 0).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidBudget,
                format!(
                    "reserveOutput ({reserve_output}) leaves no room for the context in a budget of {requested}"
                ),
            )
        })?;
        let samples = usage_samples;
        // A provider that reports fewer tokens than the session counts
        // never lifts the budget: the correction only ever shrinks it.
        let factor = if correction.is_finite() && correction > 1.0 {
            correction
        } else {
            1.0
        };
        let margin = if samples == 0 {
            0
        } else {
            (available as f64 * margin_share).ceil() as u64
        };
        let target = ((available.saturating_sub(margin)) as f64 / factor).floor() as u64;
        Ok(BudgetPlan {
            requested,
            reserve_output,
            correction: factor,
            usage_samples: samples,
            margin,
            content_margin: 0,
            rejected_usage: 0,
            target: target.max(1),
        })
    }

    /// This plan holding back `content_margin` more tokens when no usage
    /// corrects it (with usage, the correction measures the real ratio and
    /// the plan is unchanged).
    pub fn with_content_margin(mut self, content_margin: u64) -> BudgetPlan {
        if self.usage_samples == 0 {
            let available = self.requested.saturating_sub(self.reserve_output);
            let margin = content_margin.min(available.saturating_sub(1));
            self.content_margin = margin;
            self.target = (available - margin).max(1);
        }
        self
    }

    /// The space `with_content_margin` takes its margin from: the budget
    /// less the reply's reserve.
    pub fn available(&self) -> u64 {
        self.requested.saturating_sub(self.reserve_output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The specification's test_budget_tracking.
    #[test]
    fn budget_tracking() {
        let mut b = TokenBudget::new(100).unwrap();
        assert_eq!(b.remaining(), 100);
        assert!(b.is_within_budget());
        b.consume(60);
        assert_eq!(b.remaining(), 40);
        assert!(b.is_within_budget());
        b.consume(50);
        assert_eq!(b.remaining(), -10);
        assert!(!b.is_within_budget());
        assert_eq!(b.overflow(), 10);
        assert_eq!(b.max_tokens(), 100);
        assert_eq!(b.consumed(), 110);
    }

    // The specification's test_budget_requires_explicit_max.
    #[test]
    fn budget_requires_explicit_max() {
        for bad in [0, -1] {
            let err = TokenBudget::new(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidBudget);
            assert!(err.message().contains("max_tokens must be positive"));
        }
    }

    #[test]
    fn without_usage_the_target_is_the_budget_less_the_reserve() {
        let plan = BudgetPlan::new(1000, 200, 1.0, 0, 0.05).expect("plan");
        assert_eq!((plan.target, plan.margin, plan.correction), (800, 0, 1.0));
    }

    #[test]
    fn a_provider_counting_fewer_tokens_never_lifts_the_budget() {
        let plan = BudgetPlan::new(1000, 0, 0.5, 3, 0.05).unwrap();
        assert_eq!(plan.correction, 1.0);
        assert!(plan.target + plan.margin <= 1000, "{plan:?}");
    }

    #[test]
    fn a_correction_shrinks_the_target_and_holds_a_margin() {
        let plan = BudgetPlan::new(1000, 0, 1.25, 1, 0.05).expect("plan");
        assert_eq!(plan.margin, 50);
        assert_eq!(plan.target, 760, "950 / 1.25");
        assert!((plan.target as f64 * plan.correction) as u64 + plan.margin <= 1000);
    }

    #[test]
    fn a_content_margin_holds_only_until_usage_corrects_the_count() {
        let plan = BudgetPlan::new(1000, 200, 1.0, 0, 0.05)
            .unwrap()
            .with_content_margin(120);
        assert_eq!((plan.content_margin, plan.target), (120, 680));
        let corrected = BudgetPlan::new(1000, 200, 1.25, 1, 0.05)
            .unwrap()
            .with_content_margin(120);
        assert_eq!((corrected.content_margin, corrected.target), (0, 608));
    }

    #[test]
    fn a_reserve_that_leaves_nothing_is_refused() {
        for (budget, reserve) in [(100, 100), (100, 500)] {
            let e = BudgetPlan::new(budget, reserve, 1.0, 0, 0.05).expect_err("refused");
            assert_eq!(e.code(), ErrorCode::InvalidBudget);
        }
        for share in [-0.1, 1.0, f64::NAN] {
            let e = BudgetPlan::new(100, 0, 1.0, 1, share).expect_err("refused");
            assert_eq!(e.code(), ErrorCode::InvalidBudget);
        }
    }
}
