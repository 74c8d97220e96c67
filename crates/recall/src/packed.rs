//! Short words packed in a number, and the hash of such numbers: the index
//! looks each word of a text up by it, so both are cheap where the index
//! runs. wasm32 multiplies 64-bit numbers natively but not into 128 bits,
//! which foldhash folds and builds there from four 32-bit multiplies: a
//! catch-up of 10^5 events took about 15% longer with it.

use std::hash::{BuildHasher, Hasher};

/// `word`'s bytes and length packed in one number, when it has at most 15
/// bytes: equal numbers are equal words.
#[inline]
pub(crate) fn packed(word: &str) -> Option<u128> {
    let bytes = word.as_bytes();
    if bytes.len() > 15 {
        return None;
    }
    let mut packed = [0u8; 16];
    packed[..bytes.len()].copy_from_slice(bytes);
    packed[15] = bytes.len() as u8;
    Some(u128::from_le_bytes(packed))
}

/// Odd constants of the mix (from murmur3 and the golden ratio).
const K0: u64 = 0x9E37_79B9_7F4A_7C15;
const K1: u64 = 0xC2B2_AE3D_27D4_EB4F;

/// Builds [`PackedHasher`]s with seeds of its own, drawn once per map (from
/// foldhash's per-process seed), so which words share a bucket cannot be
/// told from the words alone.
#[derive(Clone, Debug)]
pub(crate) struct PackedState {
    seeds: [u64; 2],
}

impl Default for PackedState {
    fn default() -> Self {
        let random = foldhash::fast::RandomState::default();
        PackedState {
            seeds: [random.hash_one(0x5eed_u64), random.hash_one(0xf00d_u64)],
        }
    }
}

impl BuildHasher for PackedState {
    type Hasher = PackedHasher;

    fn build_hasher(&self) -> PackedHasher {
        PackedHasher {
            seeds: self.seeds,
            hash: 0,
        }
    }
}

/// Hashes a packed word: each half mixed with its seed and multiplied,
/// then folded with murmur3's finaliser so that every bit of the word
/// reaches the bits a table picks its bucket and tag by.
#[derive(Debug)]
pub(crate) struct PackedHasher {
    seeds: [u64; 2],
    hash: u64,
}

impl PackedHasher {
    #[inline]
    fn mix(&mut self, lo: u64, hi: u64) {
        let a = (lo ^ self.seeds[0]).wrapping_mul(K0);
        let b = (hi ^ self.seeds[1]).wrapping_mul(K1);
        // The high halves of the products depend on every bit of the
        // word and the seed: rotated down to where a table reads.
        self.hash = (self.hash ^ a ^ b).rotate_left(20);
    }
}

impl Hasher for PackedHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }

    #[inline]
    fn write_u128(&mut self, v: u128) {
        self.mix(v as u64, (v >> 64) as u64);
    }

    /// Any other value, eight bytes at a time (the index hashes only
    /// packed words).
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word), chunk.len() as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_keeps_bytes_and_length() {
        assert_ne!(packed("ab"), packed("abc"));
        assert_ne!(packed("ab"), packed("ba"));
        assert_eq!(packed("ab"), packed("ab"));
        assert_eq!(
            packed("fifteen-bytes!!").map(|p| (p >> 120) as u8),
            Some(15)
        );
        assert_eq!(packed("sixteen-bytes!!!"), None);
        assert!(packed("").is_some());
    }

    #[test]
    fn words_differing_in_any_byte_spread_over_buckets() {
        // Words that differ only in their high bytes, only in their low
        // bytes, or short words fill a 4,096-bucket table (10 words a
        // bucket on average) evenly, with a random seed or none, and the
        // top 7 bits (a table's tag) take many values.
        let patterns: [fn(u32) -> String; 3] = [
            |i| format!("zzzzzzzzzz{i:05}"),
            |i| format!("{i:05}zzzzzzzzzz"),
            |i| format!("w{i:05}"),
        ];
        for state in [PackedState::default(), PackedState { seeds: [0, 0] }] {
            for word in patterns {
                let mut buckets = vec![0u32; 4096];
                let mut tags = std::collections::HashSet::new();
                for i in 0..40_960u32 {
                    let hash = state.hash_one(packed(&word(i)).unwrap_or(0));
                    buckets[(hash & 4095) as usize] += 1;
                    tags.insert(hash >> 57);
                }
                let most = buckets.iter().copied().max().unwrap_or(0);
                assert!(most < 30, "{}: {most} words in one bucket", word(0));
                assert!(tags.len() > 100, "{}: {} tags", word(0), tags.len());
            }
        }
    }

    #[test]
    fn other_values_hash_by_every_byte() {
        let state = PackedState::default();
        assert_ne!(state.hash_one("abcdefghi"), state.hash_one("abcdefghj"));
        assert_ne!(state.hash_one(1u8), state.hash_one(2u8));
    }
}
