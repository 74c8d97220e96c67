//! Time and entropy, supplied by the host.
//!
//! The core never reads the system clock directly: on `wasm32-unknown-unknown`
//! there is none, so every binding hands in a [`Clock`].

/// A source of wall-clock time, in milliseconds since the Unix epoch.
pub trait Clock {
    /// The current time in milliseconds since the Unix epoch.
    fn now_ms(&self) -> f64;
}

/// The operating system's clock (not available on `wasm32-unknown-unknown`).
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl Clock for SystemClock {
    fn now_ms(&self) -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0)
    }
}

/// A seed from the operating system's randomness (not available on
/// `wasm32-unknown-unknown`, where the binding supplies one).
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub fn os_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(SystemClock.now_ms().to_bits());
    h.finish()
}

/// A small deterministic pseudo-random generator (SplitMix64) used for ids.
/// Ids need uniqueness, not secrecy.
#[derive(Debug, Clone)]
pub struct IdRng(u64);

impl IdRng {
    /// Creates a generator from a seed.
    pub fn new(seed: u64) -> Self {
        IdRng(seed)
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_rng_is_deterministic_and_varied() {
        let mut a = IdRng::new(7);
        let mut b = IdRng::new(7);
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs[0], xs[1]);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_ms() > 1_577_836_800_000.0);
    }
}
