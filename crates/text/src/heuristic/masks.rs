//! Character classes of 64 ASCII bytes at a time, one bit per byte.
//!
//! In wasm with SIMD128 (every engine the package supports has it) a block
//! is four 16-byte vectors compared against each class; elsewhere a byte
//! table. Both give the same masks; the counter's arithmetic runs on them.

/// One block's classes: bit `i` is byte `i` (only ASCII blocks).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Masks {
    /// `a-z`.
    pub(super) lower: u64,
    /// `A-Z`.
    pub(super) upper: u64,
    /// `0-9`.
    pub(super) digit: u64,
    /// `' '`.
    pub(super) space: u64,
    /// `\n`, `\r`, `\t`.
    pub(super) line_break: u64,
    /// Printable ASCII that is not a letter or digit.
    pub(super) punct: u64,
    /// Other control characters and DEL.
    pub(super) other: u64,
    /// `+`, `/` and `=` (part of [`Self::punct`]): only when classified for
    /// a text's shape (`SHAPE`), 0 otherwise.
    pub(super) run_symbol: u64,
}

impl Masks {
    /// Keeps only the bytes under `valid`.
    fn only(self, valid: u64) -> Masks {
        Masks {
            lower: self.lower & valid,
            upper: self.upper & valid,
            digit: self.digit & valid,
            space: self.space & valid,
            line_break: self.line_break & valid,
            punct: self.punct & valid,
            other: self.other & valid,
            run_symbol: self.run_symbol & valid,
        }
    }
}

/// `N` bytes from the start of `bytes`, zero-padded.
fn padded<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = bytes.len().min(N);
    out[..n].copy_from_slice(&bytes[..n]);
    out
}

/// Bits `0..n` set (`n <= 64`).
fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// The classes of up to 64 ASCII bytes (bits past their end are clear);
/// [`Masks::run_symbol`] too when `SHAPE`.
pub(super) fn classify<const SHAPE: bool>(bytes: &[u8]) -> Masks {
    match <&[u8; 64]>::try_from(bytes) {
        Ok(block) => classify_block::<SHAPE>(block),
        Err(_) => classify_block::<SHAPE>(&padded(bytes)).only(low_bits(bytes.len())),
    }
}

/// The classes of 64 ASCII bytes.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn classify_block<const SHAPE: bool>(block: &[u8; 64]) -> Masks {
    use core::arch::wasm32::*;
    let mut m = Masks::default();
    let mut printable = 0u64;
    for (k, chunk) in block.chunks_exact(16).enumerate() {
        // Two 8-byte loads: built from 16 bytes, the vector took 16 loads.
        let half = |at: usize| {
            u64::from_le_bytes(<[u8; 8]>::try_from(&chunk[at..at + 8]).unwrap_or_default())
        };
        let v = u64x2(half(0), half(8));
        // `lo..lo + len` by a signed compare (one instruction on x64, where
        // an unsigned one takes three): bytes moved so the range starts at
        // -128.
        let in_range = |lo: u8, len: u8| {
            let moved = u8x16_add(v, u8x16_splat(0x80u8.wrapping_sub(lo)));
            i8x16_lt(moved, i8x16_splat(len.wrapping_sub(0x80) as i8))
        };
        let is = |b: u8| u8x16_eq(v, u8x16_splat(b));
        let at = 16 * k;
        let bits = |x: v128| u64::from(u8x16_bitmask(x)) << at;
        m.lower |= bits(in_range(b'a', 26));
        m.upper |= bits(in_range(b'A', 26));
        m.digit |= bits(in_range(b'0', 10));
        m.space |= bits(is(b' '));
        m.line_break |= bits(v128_or(v128_or(is(b'\n'), is(b'\r')), is(b'\t')));
        printable |= bits(in_range(0x21, 94));
        if SHAPE {
            m.run_symbol |= bits(v128_or(v128_or(is(b'+'), is(b'/')), is(b'=')));
        }
    }
    // The other two classes follow from these, a block at a time: printable
    // ASCII that is not a letter or digit, and what is in no class so far
    // (other control characters and DEL).
    m.punct = printable & !(m.lower | m.upper | m.digit);
    m.other = !(printable | m.space | m.line_break);
    m
}

/// The classes of 64 ASCII bytes, 8 at a time: a byte's high bit is free
/// (ASCII), so adding a constant to every byte of a word sets it exactly
/// for the bytes at or above a bound, with no carry between them.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn classify_block<const SHAPE: bool>(block: &[u8; 64]) -> Masks {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut m = Masks::default();
    for (k, chunk) in block.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or_default());
        // High bit of each byte `b` in `lo..=hi` (both below 0x80).
        let in_range = |lo: u8, hi: u8| {
            let at_least = x.wrapping_add(u64::from(0x80 - lo) * ONES);
            let above = x.wrapping_add(u64::from(0x7F - hi) * ONES);
            at_least & !above & HIGH
        };
        let lower = in_range(b'a', b'z');
        let upper = in_range(b'A', b'Z');
        let digit = in_range(b'0', b'9');
        let space = in_range(b' ', b' ');
        let line_break = in_range(b'\n', b'\n') | in_range(b'\r', b'\r') | in_range(b'\t', b'\t');
        let punct = in_range(0x21, 0x7E) & !(lower | upper | digit);
        let other = !(lower | upper | digit | space | line_break | punct) & HIGH;
        // The 8 high bits, gathered into the low byte.
        let at = 8 * k;
        let bits = |h: u64| ((h >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) << at;
        m.lower |= bits(lower);
        m.upper |= bits(upper);
        m.digit |= bits(digit);
        m.space |= bits(space);
        m.line_break |= bits(line_break);
        m.punct |= bits(punct);
        m.other |= bits(other);
        if SHAPE {
            m.run_symbol |=
                bits(in_range(b'+', b'+') | in_range(b'/', b'/') | in_range(b'=', b'='));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Masks {
        /// Every mask, in declaration order.
        fn each(&self) -> [u64; 7] {
            [
                self.lower,
                self.upper,
                self.digit,
                self.space,
                self.line_break,
                self.punct,
                self.other,
            ]
        }
    }

    #[test]
    fn every_ascii_byte_has_exactly_one_class() {
        let mut block = [0u8; 64];
        for start in [0u8, 64] {
            for (i, b) in block.iter_mut().enumerate() {
                *b = start + i as u8;
            }
            let all = classify::<false>(&block[..]).each();
            assert_eq!(all.iter().fold(0, |a, x| a | x), u64::MAX);
            assert_eq!(all.iter().map(|x| x.count_ones()).sum::<u32>(), 64);
        }
        let m = classify::<false>(&[b'-'; 3]);
        assert_eq!(
            (m.punct, m.other),
            (0b111, 0),
            "bits past the end are clear"
        );
    }

    #[test]
    fn each_byte_lands_in_its_own_class_at_its_own_bit() {
        let class_of = |b: u8| match b {
            b'a'..=b'z' => 0,
            b'A'..=b'Z' => 1,
            b'0'..=b'9' => 2,
            b' ' => 3,
            b'\n' | b'\r' | b'\t' => 4,
            0x21..=0x7E => 5,
            _ => 6,
        };
        let mut seed = 7u64;
        for _ in 0..200 {
            let mut block = [0u8; 64];
            for b in block.iter_mut() {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                *b = (seed >> 57) as u8;
            }
            let unshaped = classify::<false>(&block[..]);
            let masks = unshaped.each();
            assert_eq!(unshaped.run_symbol, 0);
            let shaped = classify::<true>(&block[..]);
            assert_eq!(shaped.each(), masks, "the shape adds a mask, changes none");
            for (i, &b) in block.iter().enumerate() {
                for (c, mask) in masks.iter().enumerate() {
                    assert_eq!(mask >> i & 1 == 1, class_of(b) == c, "byte {b:#x} at {i}");
                }
                assert_eq!(
                    shaped.run_symbol >> i & 1 == 1,
                    matches!(b, b'+' | b'/' | b'='),
                    "byte {b:#x} at {i}"
                );
            }
        }
    }
}
