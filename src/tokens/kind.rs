//! The kinds of content whose count the default counter gets wrong by
//! different amounts, and the margin each needs until a session's recorded
//! usage measures the real ratio (issue 62, item 6).
//!
//! Measured by `bench/counter_error.mjs` against `o200k_base` and
//! `cl100k_base` on the fixture `tests/fixtures/counter_error.json` (JSON,
//! code, logs, prose, CJK, base64 and minified text, the benches' tool
//! outputs and `read_artifact` pages); `tests/counter_margins.rs` asserts
//! that each margin covers its kind's samples at the 99th percentile in
//! both tokenizers, and that the usage bounds cover every sample.

use context_compiler_text::text_shape;
pub use context_compiler_text::TextShape;

/// What a text mostly is, as far as the default counter's error goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContentKind {
    /// Prose, code, JSON, logs, minified text: what the counter is
    /// calibrated on.
    Text,
    /// Long runs of letters and digits without separators (base64, hex
    /// digests): each tokenizer splits them more finely than the counter.
    Dense,
    /// Latin text with Chinese, Japanese or Korean words in it.
    Mixed,
    /// Chinese, Japanese and Korean: `cl100k_base` counts them at up to
    /// twice the counter's count.
    Cjk,
}

impl ContentKind {
    /// Every kind, in [`ContentKind::index`] order.
    pub const ALL: [ContentKind; 4] = [
        ContentKind::Text,
        ContentKind::Dense,
        ContentKind::Mixed,
        ContentKind::Cjk,
    ];

    /// The kind's position in [`ContentKind::ALL`].
    pub fn index(self) -> usize {
        match self {
            ContentKind::Text => 0,
            ContentKind::Dense => 1,
            ContentKind::Mixed => 2,
            ContentKind::Cjk => 3,
        }
    }

    /// Exact tokens per counted token that the kind's texts stay within at
    /// the 99th percentile in both `o200k_base` and `cl100k_base`, in
    /// thousandths.
    pub fn margin_milli(self) -> u64 {
        match self {
            ContentKind::Text => 1170,
            ContentKind::Dense => 1410,
            ContentKind::Mixed => 1460,
            ContentKind::Cjk => 2150,
        }
    }

    /// The kind of `text`: CJK when at least half of its visible
    /// characters are Chinese, Japanese or Korean, mixed when at least one
    /// in 25 is; dense when at least a third of its bytes are in runs of 32
    /// or more letters, digits, `+`, `/` and `=` holding at least 3 digits;
    /// text otherwise (see [`TextShape`]). One pass over the bytes, and one
    /// over the characters beyond ASCII when there are any; the default
    /// counter measures it while it counts
    /// ([`crate::tokens::TokenCounter::count_with_kind`]).
    pub fn of(text: &str) -> ContentKind {
        ContentKind::of_shape(&text_shape(text))
    }

    /// The kind of a text of this shape (see [`ContentKind::of`]).
    pub fn of_shape(shape: &TextShape) -> ContentKind {
        let TextShape {
            len,
            visible,
            cjk,
            dense,
        } = *shape;
        if visible > 0 && cjk * 2 >= visible {
            ContentKind::Cjk
        } else if visible > 0 && cjk * 25 >= visible {
            ContentKind::Mixed
        } else if dense * 3 >= len.max(1) {
            ContentKind::Dense
        } else {
            ContentKind::Text
        }
    }
}

/// The usage ratios (provider tokens per counted token of a whole request)
/// the default counter's error explains, `(low, high)`: the fixture's
/// smallest exact/counted ratio in either tokenizer less a fifth (providers
/// whose tokenizers count fewer), and its largest in `cl100k_base` or 1.4 ×
/// its largest in `o200k_base` (Anthropic counts about 1.2–1.4 × `o200k`),
/// rounded outwards; `tests/counter_margins.rs` checks them.
pub const DEFAULT_USAGE_BOUNDS: (f64, f64) = (0.5, 2.25);

/// Tokens a provider adds to a request that no counter sees (a tool-use
/// system prompt, chat templates): a report up to this many tokens above
/// the upper bound is explained by the count (a fixed cost: not applied as
/// a ratio, not rejected); below the lower bound there is no slack.
pub const USAGE_SLACK_TOKENS: u64 = 512;

/// The widest provider tokens per counted token any usage report may
/// correct a count by, `(low, high)`: the bounds of a counter whose error
/// is not known, and the limits of every session's usage correction.
pub const WIDEST_USAGE_BOUNDS: (f64, f64) = (0.25, 4.0);

/// Token totals of content by [`ContentKind`], and the provider tokens
/// they could cost at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContentTokens([u64; 4]);

impl ContentTokens {
    /// Adds `tokens` of `kind`.
    pub fn add(&mut self, kind: ContentKind, tokens: u64) {
        let slot = &mut self.0[kind.index()];
        *slot = slot.saturating_add(tokens);
    }

    /// The tokens of `kind`.
    pub fn of(&self, kind: ContentKind) -> u64 {
        self.0[kind.index()]
    }

    /// Tokens to hold back from `available` so that any choice of this
    /// content (and text the compile writes, counted as
    /// [`ContentKind::Text`]) that the counter fits in what is left stays
    /// within `available` exact tokens: the worst case takes the kinds with
    /// the largest margin first.
    pub fn margin(&self, available: u64) -> u64 {
        let mut kinds = ContentKind::ALL;
        kinds.sort_by_key(|k| std::cmp::Reverse(k.margin_milli()));
        // In thousandths of a token.
        let room = u128::from(available) * 1000;
        let (mut cost, mut fitted) = (0u128, 0u128);
        for kind in kinds {
            let m = u128::from(kind.margin_milli());
            let tokens = u128::from(self.of(kind));
            let take = tokens.min((room - cost) / m);
            cost += take * m;
            fitted += take;
            if take < tokens {
                return available - fitted as u64;
            }
        }
        let text = u128::from(ContentKind::Text.margin_milli());
        fitted += (room - cost) / text;
        available - (fitted.min(u128::from(available)) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(
            ContentKind::of("The deploy finished at noon."),
            ContentKind::Text
        );
        assert_eq!(ContentKind::of("{\"a\": [1, 2, 3]}"), ContentKind::Text);
        assert_eq!(
            ContentKind::of("服务器在凌晨三点重新启动"),
            ContentKind::Cjk
        );
        assert_eq!(
            ContentKind::of("aGVsbG8gd29ybGQgMTIzNDU2Nzg5MCBhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5eg=="),
            ContentKind::Dense
        );
        assert_eq!(ContentKind::of(""), ContentKind::Text);
    }

    #[test]
    fn the_worst_case_takes_the_heaviest_kinds_first() {
        let mut c = ContentTokens::default();
        assert_eq!(c.margin(1000), 1000 - 854, "text only: 1000 / 1.17");
        c.add(ContentKind::Cjk, 100);
        // 100 CJK tokens cost 215; the 785 left hold 670 text tokens.
        assert_eq!(c.margin(1000), 1000 - 770);
        c.add(ContentKind::Cjk, 10_000);
        assert_eq!(c.margin(1000), 1000 - 465, "1000 / 2.15");
        assert_eq!(c.margin(0), 0);
    }
}
