//! The default counter's heuristic: runs of one character class, each
//! charged by its class and length, in thousandths of a token. The
//! constants are fitted on the fixture `tests/fixtures/token_counts.json`
//! by scripts/gen-token-fixtures.mjs's samples; the main crate's
//! `DefaultTokenCounter` rounds the total up to whole tokens.

use std::ops::Range;

mod ascii;
mod masks;
#[cfg(test)]
mod reference;
mod shape;

pub use shape::{text_shape, TextShape};

// Costs in thousandths of a token.
const WORD: u64 = 1000;
const LONG_WORD_PER_CHAR: u64 = 172;
const SHORT_WORD_MILLI_CHARS: u64 = 6460;
const CAPS_PER_CHAR: u64 = 30;
const SINGLE_PUNCT: u64 = 860;
const PUNCT_RUN: u64 = 1000;
const PUNCT_RUN_PER_CHAR: u64 = 36;
const LINE_BREAK_RUN: u64 = 400;
const CJK_CHAR: u64 = 790;
const CJK_PUNCT_CHAR: u64 = 1060;
const OTHER_LETTER_RUN: u64 = 1000;
const OTHER_LETTER_PER_CHAR: u64 = 370;
const OTHER_CHAR: u64 = 720;

/// The classes of non-ASCII characters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Cjk,
    CjkPunct,
    OtherLetter,
    Whitespace,
    Other,
}

/// The class of a non-ASCII character.
fn classify(c: char) -> Class {
    match c as u32 {
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF => {
            Class::Cjk
        }
        0x3000..=0x303F | 0xFF00..=0xFFEF => Class::CjkPunct,
        _ if c.is_alphabetic() => Class::OtherLetter,
        _ if c.is_whitespace() => Class::Whitespace,
        _ => Class::Other,
    }
}

/// Tokens of `text` in thousandths of a token: runs of one character
/// class, each charged by its class and length. ASCII and non-ASCII
/// characters never share a run, so each stretch of either is counted on
/// its own: ASCII 64 bytes at a time ([`ascii::ascii_milli`]), the rest a
/// character at a time.
pub fn heuristic_milli(text: &str) -> u64 {
    // Stretches end at ASCII bytes, which are character boundaries: `get`
    // always answers.
    stretches_milli::<false>(
        text.as_bytes(),
        |range| text.get(range),
        &mut TextShape::default(),
    )
    .unwrap_or(0)
}

/// [`heuristic_milli`] and [`text_shape`] of `text` in one pass: the shape
/// is gathered from the masks the count classifies the text into.
pub fn heuristic_milli_shaped(text: &str) -> (u64, TextShape) {
    let mut shape = TextShape {
        len: text.len(),
        ..TextShape::default()
    };
    let milli =
        stretches_milli::<true>(text.as_bytes(), |range| text.get(range), &mut shape).unwrap_or(0);
    (milli, shape)
}

/// [`heuristic_milli`] of `bytes` read as UTF-8, or `None` when they are
/// not UTF-8. Only the non-ASCII stretches need checking (ASCII is UTF-8),
/// and each is checked as it is counted: no pass over the text for its
/// own sake.
pub fn heuristic_milli_utf8(bytes: &[u8]) -> Option<u64> {
    stretches_milli::<false>(
        bytes,
        |range| std::str::from_utf8(&bytes[range]).ok(),
        &mut TextShape::default(),
    )
}

/// The count of `bytes`, stretch by stretch; `non_ascii` gives the text of
/// a non-ASCII stretch (`None` ends the count with `None`). With `SHAPE`,
/// adds each stretch's measures to `shape` (but its length).
fn stretches_milli<'a, const SHAPE: bool>(
    bytes: &'a [u8],
    non_ascii: impl Fn(Range<usize>) -> Option<&'a str>,
    shape: &mut TextShape,
) -> Option<u64> {
    let mut total = 0;
    let mut i = 0;
    while i < bytes.len() {
        let ascii_end = i + ascii_len(&bytes[i..]);
        total += ascii::ascii_milli::<SHAPE>(&bytes[i..ascii_end], shape);
        let end = bytes[ascii_end..]
            .iter()
            .position(u8::is_ascii)
            .map_or(bytes.len(), |n| ascii_end + n);
        if end > ascii_end {
            total += non_ascii_milli::<SHAPE>(non_ascii(ascii_end..end)?, shape);
        }
        i = end;
    }
    Some(total)
}

/// The length of the ASCII prefix of `bytes`: 16 bytes at a time in wasm
/// with SIMD128 (a vector's high bits), 8 elsewhere.
pub fn ascii_len(bytes: &[u8]) -> usize {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        use core::arch::wasm32::*;
        let mut n = 0;
        let mut chunks = bytes.chunks_exact(16);
        for chunk in &mut chunks {
            let half = |at: usize| {
                u64::from_le_bytes(<[u8; 8]>::try_from(&chunk[at..at + 8]).unwrap_or_default())
            };
            let high = u8x16_bitmask(u64x2(half(0), half(8)));
            if high != 0 {
                return n + high.trailing_zeros() as usize;
            }
            n += 16;
        }
        n + chunks
            .remainder()
            .iter()
            .take_while(|b| b.is_ascii())
            .count()
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let mut n = 0;
        for chunk in bytes.chunks_exact(8) {
            let word = u64::from_le_bytes([
                chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
            ]);
            let high = word & 0x8080_8080_8080_8080;
            if high != 0 {
                return n + (high.trailing_zeros() / 8) as usize;
            }
            n += 8;
        }
        n + bytes[n..].iter().take_while(|b| b.is_ascii()).count()
    }
}

/// Tokens of non-ASCII `text` in thousandths of a token; with `SHAPE`,
/// each character is noted in `shape`.
fn non_ascii_milli<const SHAPE: bool>(text: &str, shape: &mut TextShape) -> u64 {
    let mut total = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let class = classify(c);
        if SHAPE {
            shape.note(c);
        }
        let mut run = 1u64;
        while let Some(d) = chars.next_if(|&d| classify(d) == class) {
            if SHAPE {
                shape.note(d);
            }
            run += 1;
        }
        total += match class {
            Class::Cjk => run * CJK_CHAR,
            Class::CjkPunct => run * CJK_PUNCT_CHAR,
            Class::OtherLetter => OTHER_LETTER_RUN + run * OTHER_LETTER_PER_CHAR,
            Class::Whitespace => LINE_BREAK_RUN,
            Class::Other => run * OTHER_CHAR,
        };
    }
    total
}
