//! What providers report a request cost, recorded as `model_usage` events,
//! and the correction between the session's token count and the
//! provider's that compiles derive from those events alone.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::tokens::kind::{USAGE_SLACK_TOKENS, WIDEST_USAGE_BOUNDS};

/// The tokens a provider reported for one model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ModelUsage {
    /// Every input token of the request, cached ones included.
    pub input_tokens: u64,
    /// The input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// The reply's tokens.
    #[serde(default)]
    pub output_tokens: u64,
}

/// Integers above this do not survive a trip through a JavaScript number.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// `x` as a count when it is a whole, non-negative number.
fn whole(x: f64) -> Option<u64> {
    (x >= 0.0 && x.fract() == 0.0 && x <= MAX_SAFE_INTEGER as f64).then_some(x as u64)
}

/// `n` as a count: a non-negative safe integer, else
/// [`ErrorCode::InvalidTokenCount`] naming `key`.
fn safe_count(key: &str, n: &Value) -> Result<u64> {
    match n.as_u64().or_else(|| n.as_f64().and_then(whole)) {
        Some(x) if x <= MAX_SAFE_INTEGER => Ok(x),
        _ => Err(Error::new(
            ErrorCode::InvalidTokenCount,
            format!("usage.{key} must be a non-negative safe integer (got {n})"),
        )),
    }
}

/// The field of `v` named by the first of `keys` present, as a count: a
/// non-negative safe integer, else [`ErrorCode::InvalidTokenCount`]. A key
/// `outer.inner` reads `inner` of the object `outer`, or the sum of it over
/// the array `outer` (the Agents SDK's details, one record per request);
/// where `outer` is neither, the next key is tried.
fn count(v: &Value, keys: &[&str]) -> Result<Option<u64>> {
    for key in keys {
        let (outer, inner) = key
            .split_once('.')
            .map_or((*key, None), |(o, i)| (o, Some(i)));
        let field = match (v.get(outer), inner) {
            (Some(Value::Array(records)), Some(inner)) => {
                let mut sum = 0u64;
                for n in records.iter().filter_map(|r| r.get(inner)) {
                    if !n.is_null() {
                        sum = sum.saturating_add(safe_count(key, n)?);
                    }
                }
                return safe_count(key, &Value::from(sum)).map(Some);
            }
            (Some(parent), Some(inner)) => parent.get(inner),
            (field, None) => field,
            (None, Some(_)) => None,
        };
        match field {
            // Absent, or an object whose count is absent (the SDKs' types
            // allow `{ total: undefined }`): not reported.
            None | Some(Value::Null) | Some(Value::Object(_)) => continue,
            Some(n) => return safe_count(key, n).map(Some),
        }
    }
    Ok(None)
}

impl ModelUsage {
    /// Reads usage as the providers report it:
    /// - `{ inputTokens, cachedInputTokens?, outputTokens? }` (this type, and
    ///   the AI SDK's);
    /// - OpenAI Chat Completions' `{ prompt_tokens, completion_tokens,
    ///   prompt_tokens_details: { cached_tokens } }`;
    /// - OpenAI Responses' `{ input_tokens, output_tokens,
    ///   input_tokens_details: { cached_tokens } }`;
    /// - Anthropic's `{ input_tokens, cache_creation_input_tokens,
    ///   cache_read_input_tokens, output_tokens }`, whose `input_tokens`
    ///   leaves out the cache's tokens (they are added back);
    /// - Gemini's `usageMetadata` `{ promptTokenCount,
    ///   cachedContentTokenCount, candidatesTokenCount }`;
    /// - the AI SDK's provider usage (`LanguageModelV4`: `{ inputTokens:
    ///   { total, noCache, cacheRead, cacheWrite }, outputTokens: { total,
    ///   ... } }`) and `ai` 7's `{ inputTokens, outputTokens,
    ///   inputTokenDetails: { cacheReadTokens } }`;
    /// - LangChain's `usage_metadata` `{ input_tokens, output_tokens,
    ///   input_token_details: { cache_read } }`, or a message holding it;
    /// - the OpenAI Agents SDK's `Usage` `{ inputTokens, outputTokens,
    ///   inputTokensDetails }`, its details one record or one per request
    ///   (`cached_tokens` summed).
    ///
    /// A count that is not a non-negative safe integer (at most 2⁵³ − 1,
    /// so that it survives a JavaScript number) is
    /// [`ErrorCode::InvalidTokenCount`]; anything else that is not usage is
    /// [`ErrorCode::InvalidArgument`].
    pub fn from_json(v: &Value) -> Result<ModelUsage> {
        let invalid = |m: &str| Error::new(ErrorCode::InvalidArgument, m.to_string());
        if !v.is_object() {
            return Err(invalid("usage must be an object"));
        }
        // A LangChain message: its `usage_metadata`.
        let v = match v.get("usage_metadata") {
            Some(inner @ Value::Object(_)) => inner,
            _ => v,
        };
        let anthropic = v.get("cache_read_input_tokens").is_some()
            || v.get("cache_creation_input_tokens").is_some();
        let input = count(
            v,
            &[
                "inputTokens.total",
                "inputTokens",
                "prompt_tokens",
                "input_tokens",
                "promptTokenCount",
            ],
        )?
        .ok_or_else(|| {
            invalid(
                "usage must have inputTokens (or prompt_tokens, input_tokens, promptTokenCount)",
            )
        })?;
        let cache_read = count(
            v,
            &[
                "inputTokens.cacheRead",
                "inputTokenDetails.cacheReadTokens",
                "cachedInputTokens",
                "cache_read_input_tokens",
                "prompt_tokens_details.cached_tokens",
                "input_tokens_details.cached_tokens",
                "input_token_details.cache_read",
                "inputTokensDetails.cached_tokens",
                "cachedContentTokenCount",
            ],
        )?
        .unwrap_or(0);
        let output = count(
            v,
            &[
                "outputTokens.total",
                "outputTokens",
                "completion_tokens",
                "output_tokens",
                "candidatesTokenCount",
            ],
        )?
        .unwrap_or(0);
        let input_tokens = if anthropic {
            let written = count(v, &["cache_creation_input_tokens"])?.unwrap_or(0);
            let total = input.saturating_add(written).saturating_add(cache_read);
            if total > MAX_SAFE_INTEGER {
                return Err(Error::new(
                    ErrorCode::InvalidTokenCount,
                    format!("usage: input, cache-write and cache-read tokens add up to {total}, more than a safe integer"),
                ));
            }
            total
        } else {
            input
        };
        Ok(ModelUsage {
            input_tokens,
            cached_input_tokens: cache_read.min(input_tokens),
            output_tokens: output,
        })
    }

    /// [`ErrorCode::InvalidTokenCount`] unless every count, and
    /// `counted_tokens`, is a safe integer.
    pub fn check(&self, counted_tokens: Option<u64>) -> Result<()> {
        let counts = [
            ("inputTokens", Some(self.input_tokens)),
            ("cachedInputTokens", Some(self.cached_input_tokens)),
            ("outputTokens", Some(self.output_tokens)),
            ("countedTokens", counted_tokens),
        ];
        match counts
            .iter()
            .find(|(_, n)| n.is_some_and(|n| n > MAX_SAFE_INTEGER))
        {
            Some((key, Some(n))) => Err(Error::new(
                ErrorCode::InvalidTokenCount,
                format!("usage.{key} must be a safe integer (got {n})"),
            )),
            _ => Ok(()),
        }
    }

    /// The `model_usage` event's data: the usage and, when known, the
    /// session's count of the request it answers (`countedTokens`).
    pub fn event_data(&self, counted_tokens: Option<u64>) -> Value {
        let mut data = json!({
            "inputTokens": self.input_tokens,
            "cachedInputTokens": self.cached_input_tokens,
            "outputTokens": self.output_tokens,
        });
        if let Some(n) = counted_tokens {
            data["countedTokens"] = json!(n);
        }
        data
    }
}

/// Provider tokens per counted token, derived from the session's
/// `model_usage` events in order. A call whose ratio is above the
/// correction raises it to that ratio at once (a count below the
/// provider's is what breaks a budget); a lower one lowers it slowly, by
/// [`UsageCorrection::WEIGHT`] of the difference. It is used rounded up to
/// the next 1/64, so that small moves leave the compile's budget, and with
/// it the context, unchanged. A call whose report the counter's error does
/// not explain (outside its [`TokenCounter::usage_bounds`] by more than
/// [`USAGE_SLACK_TOKENS`]: a test double, a proxy reporting cached or
/// partial counts, an SDK summing several requests) is counted as
/// rejected and not applied.
///
/// [`TokenCounter::usage_bounds`]: crate::tokens::TokenCounter::usage_bounds
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsageCorrection {
    average: f64,
    samples: usize,
    rejected: usize,
    bounds: (f64, f64),
}

impl Default for UsageCorrection {
    fn default() -> Self {
        UsageCorrection::bounded((Self::MIN, Self::MAX))
    }
}

impl UsageCorrection {
    /// The weight of each new call in the average.
    pub const WEIGHT: f64 = 0.25;
    /// The correction never goes below this…
    pub const MIN: f64 = WIDEST_USAGE_BOUNDS.0;
    /// …nor above this.
    pub const MAX: f64 = WIDEST_USAGE_BOUNDS.1;

    /// A correction applying only ratios within `bounds` (`(low, high)`,
    /// kept within [`UsageCorrection::MIN`] and [`UsageCorrection::MAX`]).
    pub fn bounded(bounds: (f64, f64)) -> Self {
        let low = if bounds.0.is_finite() {
            bounds.0.clamp(Self::MIN, Self::MAX)
        } else {
            Self::MIN
        };
        let high = if bounds.1.is_finite() {
            bounds.1.clamp(low, Self::MAX)
        } else {
            Self::MAX
        };
        UsageCorrection {
            average: 0.0,
            samples: 0,
            rejected: 0,
            bounds: (low, high),
        }
    }

    /// Takes in a `model_usage` event's data; events without both an input
    /// count and the session's count of the request are left out, and one
    /// the bounds do not explain is counted in [`UsageCorrection::rejected`].
    pub fn observe(&mut self, data: &Value) {
        let field = |k: &str| data.get(k).and_then(Value::as_u64).filter(|n| *n > 0);
        let (Some(input), Some(counted)) = (field("inputTokens"), field("countedTokens")) else {
            return;
        };
        let (low, high) = self.bounds;
        let (input, counted) = (input as f64, counted as f64);
        let slack = USAGE_SLACK_TOKENS as f64;
        // Fewer tokens than the counter's error explains: no slack (a
        // provider adds tokens, it never hides them).
        if input < low * counted || input > high * counted + slack {
            self.rejected += 1;
            return;
        }
        if input > high * counted {
            // Explained only by what a provider adds unseen (a tool-use
            // prompt): a fixed cost, not a ratio to apply to every count.
            return;
        }
        let ratio = input / counted;
        // Up at once (a count below the provider's is what breaks a
        // budget), down slowly.
        self.average = if self.samples == 0 || ratio > self.average {
            ratio
        } else {
            self.average + Self::WEIGHT * (ratio - self.average)
        };
        self.samples += 1;
    }

    /// The calls the correction comes from.
    pub fn samples(&self) -> usize {
        self.samples
    }

    /// The calls whose report was kept but not applied: outside the
    /// bounds.
    pub fn rejected(&self) -> usize {
        self.rejected
    }

    /// Provider tokens per counted token: 1 without calls, else the
    /// average rounded up to the next 1/64.
    pub fn factor(&self) -> f64 {
        if self.samples == 0 {
            return 1.0;
        }
        ((self.average * 64.0).ceil() / 64.0).clamp(Self::MIN, Self::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_shape_is_read() {
        let usage = |v: Value| ModelUsage::from_json(&v).expect("usage");
        let ours = usage(json!({"inputTokens": 100, "cachedInputTokens": 40, "outputTokens": 7}));
        assert_eq!(
            (
                ours.input_tokens,
                ours.cached_input_tokens,
                ours.output_tokens
            ),
            (100, 40, 7)
        );
        let chat = usage(json!({"prompt_tokens": 100, "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 40}}));
        assert_eq!(chat, ours);
        let responses = usage(json!({"input_tokens": 100, "output_tokens": 7,
            "input_tokens_details": {"cached_tokens": 40}, "total_tokens": 107}));
        assert_eq!(responses, ours);
        let anthropic = usage(
            json!({"input_tokens": 50, "cache_creation_input_tokens": 10,
            "cache_read_input_tokens": 40, "output_tokens": 7}),
        );
        assert_eq!(anthropic, ours);
        let gemini = usage(
            json!({"promptTokenCount": 100, "cachedContentTokenCount": 40,
            "candidatesTokenCount": 7, "totalTokenCount": 107}),
        );
        assert_eq!(gemini, ours);
    }

    #[test]
    fn the_sdks_usage_shapes_are_read() {
        let usage = |v: Value| ModelUsage::from_json(&v).expect("usage");
        let ours = ModelUsage {
            input_tokens: 100,
            cached_input_tokens: 40,
            output_tokens: 7,
        };
        for shape in [
            // LanguageModelV4, what a middleware sees.
            json!({"inputTokens": {"total": 100, "noCache": 60, "cacheRead": 40, "cacheWrite": 0},
                   "outputTokens": {"total": 7, "text": 5, "reasoning": 2}}),
            // ai 7's generateText result.
            json!({"inputTokens": 100, "outputTokens": 7, "totalTokens": 107,
                   "inputTokenDetails": {"noCacheTokens": 60, "cacheReadTokens": 40, "cacheWriteTokens": 0}}),
            // LangChain's usage_metadata, and a message holding it.
            json!({"input_tokens": 100, "output_tokens": 7, "total_tokens": 107,
                   "input_token_details": {"cache_read": 40, "cache_creation": 0}}),
            json!({"content": "hi", "usage_metadata": {"input_tokens": 100, "output_tokens": 7,
                   "total_tokens": 107, "input_token_details": {"cache_read": 40}}}),
            // The Agents SDK's Usage: details as one record, or one per request.
            json!({"requests": 1, "inputTokens": 100, "outputTokens": 7, "totalTokens": 107,
                   "inputTokensDetails": {"cached_tokens": 40}}),
            json!({"requests": 2, "inputTokens": 100, "outputTokens": 7, "totalTokens": 107,
                   "inputTokensDetails": [{"cached_tokens": 25}, {"cached_tokens": 15}]}),
        ] {
            assert_eq!(usage(shape.clone()), ours, "{shape}");
        }
        // Counts the SDKs' types leave undefined (absent, or null from
        // JSON) are not reported, not refused.
        for shape in [
            json!({"inputTokens": {"total": 100, "cacheRead": 40}, "outputTokens": {"total": null}}),
            json!({"inputTokens": {"total": 100, "cacheRead": 40}, "outputTokens": {}}),
            json!({"inputTokens": {"total": 100, "cacheRead": 40, "noCache": null}, "outputTokens": {"text": null}}),
        ] {
            assert_eq!(
                usage(shape.clone()),
                ModelUsage {
                    output_tokens: 0,
                    ..ours
                },
                "{shape}"
            );
        }
        let e = ModelUsage::from_json(&json!({"inputTokens": {}})).expect_err("no input count");
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let e =
            ModelUsage::from_json(&json!({"inputTokens": {"total": 1e300}})).expect_err("refused");
        assert_eq!(e.code(), ErrorCode::InvalidTokenCount);
        let e = ModelUsage::from_json(
            &json!({"inputTokens": 1, "inputTokensDetails": [{"cached_tokens": -1}]}),
        )
        .expect_err("refused");
        assert_eq!(e.code(), ErrorCode::InvalidTokenCount);
    }

    #[test]
    fn bad_usage_is_refused_with_a_code() {
        for bad in [json!(3), json!({}), json!({"outputTokens": 3})] {
            let e = ModelUsage::from_json(&bad).expect_err("refused");
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        for bad in [
            json!({"inputTokens": -1}),
            json!({"inputTokens": 1.5}),
            json!({"inputTokens": "many"}),
            json!({"inputTokens": 1e300}),
            json!({"inputTokens": 9_007_199_254_740_992_u64}),
            json!({"inputTokens": u64::MAX}),
            json!({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 1e20}}),
            json!({"input_tokens": 1, "cache_creation_input_tokens": f64::MAX}),
            json!({"input_tokens": MAX_SAFE_INTEGER, "cache_read_input_tokens": 1}),
        ] {
            let e = ModelUsage::from_json(&bad).expect_err("refused");
            assert_eq!(e.code(), ErrorCode::InvalidTokenCount, "{bad}");
        }
        let largest =
            json!({"inputTokens": MAX_SAFE_INTEGER, "outputTokens": 9.007_199_254_740_991e15});
        let usage = ModelUsage::from_json(&largest).expect("the largest safe integer is a count");
        assert_eq!(
            (usage.input_tokens, usage.output_tokens),
            (MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
        );
    }

    #[test]
    fn the_correction_is_damped_and_rounded_up() {
        let mut c = UsageCorrection::default();
        assert_eq!(c.factor(), 1.0);
        c.observe(&json!({"inputTokens": 120, "countedTokens": 100}));
        assert_eq!(c.factor(), 1.203125, "1.2 rounded up to 77/64");
        c.observe(&json!({"inputTokens": 100, "countedTokens": 100}));
        // Down slowly: 1.2 + 0.25 (1.0 - 1.2) = 1.15 → 74/64.
        assert_eq!(c.factor(), 1.15625);
        c.observe(&json!({"inputTokens": 130, "countedTokens": 100}));
        assert_eq!(c.factor(), 1.3125, "up at once: 1.3 → 84/64");
        c.observe(&json!({"inputTokens": 100, "countedTokens": 100}));
        assert_eq!(c.factor(), 1.234375, "1.3 - 0.075 = 1.225 → 79/64");
        c.observe(&json!({"inputTokens": 100}));
        c.observe(&json!({"inputTokens": 0, "countedTokens": 100}));
        assert_eq!(c.samples(), 4, "calls without both counts are left out");
        c.observe(&json!({"inputTokens": 1_000_000, "countedTokens": 1}));
        assert!(c.factor() <= UsageCorrection::MAX);
    }

    #[test]
    fn a_report_the_bounds_do_not_explain_is_rejected_not_applied() {
        let mut c = UsageCorrection::bounded(crate::tokens::kind::DEFAULT_USAGE_BOUNDS);
        // 10 input tokens for a request counted at 3,000; 100,000 for 1,000.
        c.observe(&json!({"inputTokens": 10, "countedTokens": 3000}));
        c.observe(&json!({"inputTokens": 100_000, "countedTokens": 1000}));
        assert_eq!((c.samples(), c.rejected(), c.factor()), (0, 2, 1.0));
        // Anthropic's ~1.35 × is applied; a small request's fixed overhead
        // is explained but not applied (a fixed cost, not a ratio).
        c.observe(&json!({"inputTokens": 1350, "countedTokens": 1000}));
        c.observe(&json!({"inputTokens": 400, "countedTokens": 20}));
        assert_eq!((c.samples(), c.rejected()), (1, 2));
        assert_eq!(c.factor(), 1.359375, "1.35 rounded up to 87/64");
        // A report below the count is never explained by the slack: one
        // token for a short request is rejected.
        c.observe(&json!({"inputTokens": 1, "countedTokens": 40}));
        assert_eq!((c.samples(), c.rejected()), (1, 3));
        // Bounds outside the range are kept within it.
        let wide = UsageCorrection::bounded((f64::NAN, 100.0));
        assert_eq!(wide.bounds, (UsageCorrection::MIN, UsageCorrection::MAX));
    }
}
