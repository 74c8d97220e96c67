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
    /// text otherwise. One pass over the bytes, and one over the characters
    /// beyond ASCII when there are any.
    pub fn of(text: &str) -> ContentKind {
        let bytes = text.as_bytes();
        let (mut visible, mut dense, mut run, mut digits) = (0usize, 0usize, 0usize, 0usize);
        let mut non_ascii = false;
        for &b in bytes {
            let class = BYTE_CLASS[usize::from(b)];
            if class & RUN != 0 {
                run += 1;
                digits += usize::from(class & DIGIT != 0);
            } else if run > 0 {
                if run >= 32 && digits >= 3 {
                    dense += run;
                }
                run = 0;
                digits = 0;
            }
            visible += usize::from(class & VISIBLE != 0);
            non_ascii |= class & NON_ASCII != 0;
        }
        if run >= 32 && digits >= 3 {
            dense += run;
        }
        // Characters beyond ASCII, only where there are any.
        let mut cjk = 0usize;
        if non_ascii {
            for c in text.chars().filter(|c| !c.is_ascii() && !c.is_whitespace()) {
                visible += 1;
                cjk += usize::from(is_cjk(c));
            }
        }
        if visible > 0 && cjk * 2 >= visible {
            ContentKind::Cjk
        } else if visible > 0 && cjk * 25 >= visible {
            ContentKind::Mixed
        } else if dense * 3 >= text.len().max(1) {
            ContentKind::Dense
        } else {
            ContentKind::Text
        }
    }
}

/// [`BYTE_CLASS`] bits: a letter, digit, `+`, `/` or `=`…
const RUN: u8 = 1;
/// …a digit…
const DIGIT: u8 = 2;
/// …a visible ASCII character…
const VISIBLE: u8 = 4;
/// …a byte of a character beyond ASCII.
const NON_ASCII: u8 = 8;

/// What each byte is, for [`ContentKind::of`]'s one pass.
const BYTE_CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = if !c.is_ascii() {
            NON_ASCII
        } else {
            let run = c.is_ascii_alphanumeric() || c == b'+' || c == b'/' || c == b'=';
            (if run { RUN } else { 0 })
                | (if c.is_ascii_digit() { DIGIT } else { 0 })
                | (if c.is_ascii_whitespace() || c.is_ascii_control() {
                    0
                } else {
                    VISIBLE
                })
        };
        b += 1;
    }
    table
};

/// Whether `c` is a Chinese, Japanese or Korean character (or CJK
/// punctuation).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x3000..=0x30FF | 0x3130..=0x318F | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF)
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
