//! The host's clock and entropy.

use crate::clock::Clock;

/// `Date.now()`, which every JS host has.
pub(crate) struct JsClock;

impl Clock for JsClock {
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}

/// 64 bits from `Math.random()` (ids need uniqueness, not secrecy).
pub(crate) fn seed() -> u64 {
    let hi = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    let lo = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    (hi << 32) ^ lo ^ (js_sys::Date::now() as u64)
}
