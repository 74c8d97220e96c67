//! The default counter on ASCII text, 64 bytes at a time without a branch
//! per run.
//!
//! The heuristic charges each run of one character class by its length.
//! Here every charge is a count of bits: a run is counted at its first bit
//! (`x & !prev(x)`), a run of at least `n + 1` bytes at the bit `n` places
//! into it, and so on; carries hold what the previous block ended with and
//! a look at the next block's first byte tells where a run ends. The
//! result is exactly the run-by-run definition's (`reference.rs` in the
//! tests), for any split of the text into blocks.

use super::masks::{classify, Masks};
use super::shape::{AsciiRuns, TextShape};
use super::{
    CAPS_PER_CHAR, LINE_BREAK_RUN, LONG_WORD_PER_CHAR, OTHER_CHAR, PUNCT_RUN, PUNCT_RUN_PER_CHAR,
    SHORT_WORD_MILLI_CHARS, SINGLE_PUNCT, WORD,
};

/// Letters of a word part that cost nothing beyond [`WORD`]: a part of `n`
/// letters costs `LONG_WORD_PER_CHAR` a letter past the first
/// `SHORT_WORD_MILLI_CHARS / 1000`, rounded down, which for whole parts is
/// `LONG_WORD_PER_CHAR` for each letter past the sixth, less
/// [`LONG_PART_DISCOUNT`].
const FREE_LETTERS: u64 = SHORT_WORD_MILLI_CHARS / 1000;
/// See [`FREE_LETTERS`]: `ceil(6.46 × 172) − 6 × 172`.
const LONG_PART_DISCOUNT: u64 = (SHORT_WORD_MILLI_CHARS * LONG_WORD_PER_CHAR).div_ceil(1000)
    - FREE_LETTERS * LONG_WORD_PER_CHAR;
const _: () = assert!(
    FREE_LETTERS == 6,
    "the long-part mask below looks 6 letters back"
);

/// What a block hands to the next: its masks (for the bits just before the
/// next block's first byte) and the length of the digit run it ends with.
#[derive(Default)]
struct Carry {
    letters: u64,
    caps: u64,
    continued: u64,
    long: u64,
    space: u64,
    double_space: u64,
    line_break: u64,
    punct: u64,
    punct4: u64,
    digit_run: u64,
}

/// `x` moved one byte later, with `before`'s last bit first.
fn prev(x: u64, before: u64) -> u64 {
    (x << 1) | (before >> 63)
}

/// `x` moved `n` bytes later (`1 <= n < 64`), with `before`'s last bits first.
fn prev_n(x: u64, before: u64, n: u32) -> u64 {
    (x << n) | (before >> (64 - n))
}

/// `x` moved one byte earlier, with `after`'s first bit last.
fn next(x: u64, after: u64) -> u64 {
    (x >> 1) | (after << 63)
}

fn pop(x: u64) -> u64 {
    u64::from(x.count_ones())
}

fn is_punct(b: u8) -> bool {
    b.is_ascii_graphic() && !b.is_ascii_alphanumeric()
}

/// Thousandths of a token in one ASCII byte on its own: a run of one.
fn lone_byte_milli(b: u8) -> u64 {
    match b {
        b' ' => 0,
        b'\n' | b'\r' | b'\t' => LINE_BREAK_RUN,
        b if b.is_ascii_alphanumeric() => WORD,
        b if is_punct(b) => SINGLE_PUNCT,
        _ => OTHER_CHAR,
    }
}

/// Thousandths of a token in `bytes`, all ASCII, preceded and followed by
/// a run boundary; with `SHAPE`, adds the measures of `bytes` to `shape`
/// (but its length), from the same masks.
pub(super) fn ascii_milli<const SHAPE: bool>(bytes: &[u8], shape: &mut TextShape) -> u64 {
    if let [b] = bytes {
        if SHAPE {
            shape.visible += usize::from(b.is_ascii_graphic());
        }
        return lone_byte_milli(*b);
    }
    let blocks = bytes.len().div_ceil(64);
    let load = |k: usize| classify::<SHAPE>(&bytes[64 * k..bytes.len().min(64 * (k + 1))]);
    let mut carry = Carry::default();
    let mut runs = AsciiRuns::default();
    let (mut added, mut removed) = (0u64, 0u64);
    let mut current = if blocks > 0 {
        load(0)
    } else {
        Masks::default()
    };
    for k in 0..blocks {
        let after = if k + 1 < blocks {
            load(k + 1)
        } else {
            Masks::default()
        };
        let (a, r) = block_milli(&current, &after, &mut carry, bytes, 64 * k);
        added += a;
        removed += r;
        if SHAPE {
            runs.block(&current, shape);
        }
        current = after;
    }
    if SHAPE {
        runs.end(shape);
    }
    // A run of one punctuation character is discounted where it is found,
    // possibly before all of its bytes are charged: subtract at the end.
    added - removed
}

/// One block's charges, and the discounts of same-character punctuation
/// runs found in it; updates `c` for the next block. Inlined into both
/// forms of [`ascii_milli`] (with two callers it was not, and the call cost
/// recording ~5%).
#[inline(always)]
fn block_milli(m: &Masks, after: &Masks, c: &mut Carry, bytes: &[u8], base: usize) -> (u64, u64) {
    // Letters: words split into parts at camelCase and ALLCAPS boundaries.
    // A part is lower-case letters with at most one capital first; a capital
    // run not followed by a lower-case letter is a caps part.
    let letters = m.lower | m.upper;
    let next_lower = next(m.lower, after.lower);
    let capital_first = m.upper & next_lower;
    let caps = m.upper & !next_lower;
    let part_start = (m.lower & !prev(letters, c.letters)) | capital_first;
    let continued = (m.lower | capital_first) & !part_start;
    let caps_start = caps & !prev(caps, c.caps);
    // Letters at least six places into their part: the long-part charge.
    let long = (1..=5).fold(continued, |acc, n| acc & prev_n(continued, c.continued, n));
    let long_start = long & !prev(long, c.long);
    let mut added = WORD * (pop(part_start) + pop(caps_start))
        + LONG_WORD_PER_CHAR * pop(long)
        + CAPS_PER_CHAR * (pop(caps) - pop(caps_start));
    let mut removed = LONG_PART_DISCOUNT * pop(long_start);

    // Digits: a token per three digits of a run, rounded up, i.e. one at
    // each offset 0, 3, 6, ... into it.
    let mut digits = m.digit;
    let mut thirds = 0;
    if c.digit_run > 0 && digits & 1 == 1 {
        // The run the previous block ended with goes on for `r` bytes, at
        // offsets `t..t + r`.
        let r = u64::from(digits.trailing_ones());
        let t = c.digit_run;
        thirds += (t + r - 1) / 3 - (t - 1) / 3;
        digits &= if r == 64 { 0 } else { !((1u64 << r) - 1) };
    }
    // Each run's first digit, then the digit three places on while the
    // run goes on that far: a step of three per round, not one.
    let three = digits & (digits << 1) & (digits << 2);
    let mut at_offset = digits & !(digits << 1);
    while at_offset != 0 {
        thirds += pop(at_offset);
        at_offset = (at_offset << 3) & three;
    }
    added += WORD * thirds;
    c.digit_run = if m.digit == u64::MAX {
        c.digit_run + 64
    } else {
        u64::from(m.digit.leading_ones())
    };

    // Spaces: a run of two or more is a token.
    let double_space = m.space & prev(m.space, c.space);
    added += WORD * pop(double_space & !prev(double_space, c.double_space));
    // Line breaks and tabs: a fixed charge a run.
    added += LINE_BREAK_RUN * pop(m.line_break & !prev(m.line_break, c.line_break));
    added += OTHER_CHAR * pop(m.other);

    // Punctuation: a lone character, or a run charged by its length; a run
    // of four or more of one character is a single token.
    let p = m.punct;
    let starts = p & !prev(p, c.punct);
    let singles = pop(starts & !next(p, after.punct));
    let runs = pop(starts);
    added += SINGLE_PUNCT * singles
        + PUNCT_RUN * (runs - singles)
        + PUNCT_RUN_PER_CHAR * (pop(p) - runs);
    let punct4 = (1..=3).fold(p, |acc, n| acc & prev_n(p, c.punct, n));
    let mut fourth = punct4 & !prev(punct4, c.punct4);
    while fourth != 0 {
        let start = base + fourth.trailing_zeros() as usize - 3;
        fourth &= fourth - 1;
        let first = bytes[start];
        let run = bytes[start..].iter().take_while(|&&b| is_punct(b)).count();
        if bytes[start..start + run].iter().all(|&b| b == first) {
            removed += PUNCT_RUN_PER_CHAR * (run as u64 - 1);
        }
    }

    *c = Carry {
        letters,
        caps,
        continued,
        long,
        space: m.space,
        double_space,
        line_break: m.line_break,
        punct: p,
        punct4,
        digit_run: c.digit_run,
    };
    (added, removed)
}
