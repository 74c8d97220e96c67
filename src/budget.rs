//! The token budget tracker.

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
}
