//! Time and entropy, supplied by the host.
//!
//! The core never reads the system clock directly: on `wasm32-unknown-unknown`
//! there is none, so every binding hands in a [`Clock`].

use async_trait::async_trait;

/// Wall-clock time and timers: what timeouts and idle monitors need.
#[async_trait(?Send)]
pub trait Clock {
    /// The current time in milliseconds since the Unix epoch.
    fn now_ms(&self) -> f64;

    /// Completes after `ms` milliseconds (at once for zero or less).
    async fn sleep(&self, ms: f64);
}

/// The operating system's clock (not available on `wasm32-unknown-unknown`).
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
#[async_trait(?Send)]
impl Clock for SystemClock {
    fn now_ms(&self) -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64() * 1000.0)
            .unwrap_or(0.0)
    }

    async fn sleep(&self, ms: f64) {
        if ms > 0.0 && ms.is_finite() {
            timer::sleep(std::time::Duration::from_secs_f64(ms / 1000.0)).await;
        }
    }
}

/// A timer future for hosts with an operating-system clock.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod timer {
    use std::time::Duration;

    /// Native: a helper thread wakes the task, so any executor works.
    #[cfg(not(target_family = "wasm"))]
    pub(super) async fn sleep(duration: Duration) {
        use std::sync::{Arc, Mutex};
        use std::task::{Poll, Waker};
        let state: Arc<Mutex<(bool, Option<Waker>)>> = Arc::new(Mutex::new((false, None)));
        let mut started = false;
        std::future::poll_fn(|cx| {
            let mut s = match state.lock() {
                Ok(s) => s,
                Err(poisoned) => poisoned.into_inner(),
            };
            if s.0 {
                return Poll::Ready(());
            }
            s.1 = Some(cx.waker().clone());
            if !started {
                started = true;
                let shared = state.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(duration);
                    let mut s = match shared.lock() {
                        Ok(s) => s,
                        Err(poisoned) => poisoned.into_inner(),
                    };
                    s.0 = true;
                    if let Some(w) = s.1.take() {
                        w.wake();
                    }
                });
            }
            Poll::Pending
        })
        .await
    }

    /// WASI: single-threaded and driven by a blocking executor, so block.
    #[cfg(target_family = "wasm")]
    pub(super) async fn sleep(duration: Duration) {
        std::thread::sleep(duration);
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
