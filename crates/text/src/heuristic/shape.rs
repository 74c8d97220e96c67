//! What kind of content a text is, as far as the default counter's error
//! goes (the core's `ContentKind`): how many of its characters are visible,
//! how many of those are Chinese, Japanese or Korean, and how many of its
//! bytes are in long runs of letters and digits (base64, hex digests).
//!
//! [`text_shape`] is the definition, a byte at a time;
//! [`super::heuristic_milli_shaped`] gathers the same measures while it
//! counts, from the masks the counter classifies each 64 bytes into
//! ([`AsciiRuns`] for ASCII, [`TextShape::note`] for the characters beyond
//! it): recording an event counts its text and needs its kind, and a
//! second pass over the text cost more than the count.

use super::masks::Masks;

/// A run of letters, digits, `+`, `/` and `=` at least this long, with at
/// least [`DENSE_DIGITS`] digits in it, is dense.
const DENSE_RUN: usize = 32;
/// See [`DENSE_RUN`].
const DENSE_DIGITS: usize = 3;

/// The measures of a text its kind is decided by.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TextShape {
    /// The text's length in bytes.
    pub len: usize,
    /// Characters that are neither whitespace nor control characters.
    pub visible: usize,
    /// Visible characters that are Chinese, Japanese or Korean (or CJK
    /// punctuation).
    pub cjk: usize,
    /// Bytes in runs of at least [`DENSE_RUN`] ASCII letters, digits, `+`,
    /// `/` and `=` holding at least [`DENSE_DIGITS`] digits.
    pub dense: usize,
}

impl TextShape {
    /// Notes a character beyond ASCII.
    pub(super) fn note(&mut self, c: char) {
        if !c.is_whitespace() {
            self.visible += 1;
            self.cjk += usize::from(is_cjk(c));
        }
    }
}

/// Whether `c` is a Chinese, Japanese or Korean character (or CJK
/// punctuation).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x3000..=0x30FF | 0x3130..=0x318F | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF)
}

/// [`BYTE_CLASS`] bits: a letter, digit, `+`, `/` or `=`…
const RUN: u8 = 1;
/// …a digit…
const DIGIT: u8 = 2;
/// …a visible ASCII character…
const VISIBLE: u8 = 4;
/// …a byte of a character beyond ASCII.
const NON_ASCII: u8 = 8;

/// What each byte is, for [`text_shape`]'s one pass.
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

/// The shape of `text`: one pass over the bytes, and one over the
/// characters beyond ASCII when there are any.
pub fn text_shape(text: &str) -> TextShape {
    let bytes = text.as_bytes();
    let mut shape = TextShape {
        len: bytes.len(),
        ..TextShape::default()
    };
    let (mut run, mut digits) = (0usize, 0usize);
    let mut non_ascii = false;
    for &b in bytes {
        let class = BYTE_CLASS[usize::from(b)];
        if class & RUN != 0 {
            run += 1;
            digits += usize::from(class & DIGIT != 0);
        } else if run > 0 {
            if run >= DENSE_RUN && digits >= DENSE_DIGITS {
                shape.dense += run;
            }
            run = 0;
            digits = 0;
        }
        shape.visible += usize::from(class & VISIBLE != 0);
        non_ascii |= class & NON_ASCII != 0;
    }
    if run >= DENSE_RUN && digits >= DENSE_DIGITS {
        shape.dense += run;
    }
    if non_ascii {
        for c in text.chars().filter(|c| !c.is_ascii()) {
            shape.note(c);
        }
    }
    shape
}

/// Whether `x` has [`DENSE_RUN`] (32) bits set in a row.
fn has_dense_run(x: u64) -> bool {
    const _: () = assert!(DENSE_RUN == 32, "the shifts below double up to 32");
    let mut y = x;
    y &= y >> 1;
    y &= y >> 2;
    y &= y >> 4;
    y &= y >> 8;
    y &= y >> 16;
    y != 0
}

fn pop(x: u64) -> usize {
    x.count_ones() as usize
}

/// [`TextShape`]'s ASCII measures, 64 bytes at a time from the counter's
/// masks: the run of letters, digits, `+`, `/` and `=` a block ends with
/// goes on into the next.
#[derive(Default)]
pub(super) struct AsciiRuns {
    /// The length of the run the previous block ended with (0: none).
    len: usize,
    /// The digits in it.
    digits: usize,
}

impl AsciiRuns {
    /// Adds a block's measures to `shape` (the masks of a partial block
    /// are clear past its end).
    pub(super) fn block(&mut self, m: &Masks, shape: &mut TextShape) {
        shape.visible += pop(m.lower | m.upper | m.digit | m.punct);
        let run = m.lower | m.upper | m.digit | m.run_symbol;
        let mut rest = run;
        if self.len > 0 {
            let n = run.trailing_ones();
            if n == 64 {
                self.len += 64;
                self.digits += pop(m.digit);
                return;
            }
            let head = (1u64 << n) - 1;
            self.len += n as usize;
            self.digits += pop(m.digit & head);
            self.end(shape);
            rest &= !head;
        }
        // The run at the block's end goes on into the next block; the
        // others end here. Only a block holding one of 32 bytes or more
        // looks at them one by one.
        let top = rest.leading_ones();
        let tail = if top == 0 { 0 } else { u64::MAX << (64 - top) };
        let mut inner = rest & !tail;
        if has_dense_run(inner) {
            while inner != 0 {
                let start = inner.trailing_zeros();
                // Bit 63 is clear (it is the tail's): a run of at most 63.
                let len = (inner >> start).trailing_ones();
                let bits = ((1u64 << len) - 1) << start;
                if len as usize >= DENSE_RUN && pop(m.digit & bits) >= DENSE_DIGITS {
                    shape.dense += len as usize;
                }
                inner &= !bits;
            }
        }
        self.len = top as usize;
        self.digits = pop(m.digit & tail);
    }

    /// Ends the run going on (at the end of an ASCII stretch).
    pub(super) fn end(&mut self, shape: &mut TextShape) {
        if self.len >= DENSE_RUN && self.digits >= DENSE_DIGITS {
            shape.dense += self.len;
        }
        self.len = 0;
        self.digits = 0;
    }
}
