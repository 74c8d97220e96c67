//! The host's clock and entropy.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use async_trait::async_trait;
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use context_compiler::clock::Clock;

/// `Date.now()` and `setTimeout`, which Node, Deno, workerd and browsers have.
pub struct JsClock;

thread_local! {
    /// `Date.now()` as JavaScript read it just before calling in, for the
    /// clock's next reading (see [`JsClock::with_reading`]).
    static READING: Cell<Option<f64>> = const { Cell::new(None) };
}

impl JsClock {
    /// Runs `f` with `now`, `Date.now()` as the caller read it in
    /// JavaScript just before calling in, as the first reading of the
    /// clock during `f`; later readings, and any after `f`, call
    /// `Date.now()`. A record stamps its event so without a call out of
    /// wasm for the time.
    pub fn with_reading<T>(now: f64, f: impl FnOnce() -> T) -> T {
        struct Forget;
        impl Drop for Forget {
            fn drop(&mut self) {
                READING.set(None);
            }
        }
        READING.set(Some(now));
        let _forget = Forget;
        f()
    }
}

#[async_trait(?Send)]
impl Clock for JsClock {
    fn now_ms(&self) -> f64 {
        READING.take().unwrap_or_else(js_sys::Date::now)
    }

    /// Sleeps `ms`, in steps no longer than a host timer can hold (Node
    /// and browsers fire a longer `setTimeout` after 1 ms).
    async fn sleep(&self, ms: f64) {
        let mut left = ms;
        loop {
            let step = left.min(MAX_TIMER_MS);
            Sleep::new(step).await;
            left -= step;
            if left.is_nan() || left <= 0.0 {
                break;
            }
        }
    }
}

fn global_fn(name: &str) -> Option<Function> {
    Reflect::get(&js_sys::global(), &name.into())
        .ok()?
        .dyn_into::<Function>()
        .ok()
}

/// The longest delay `setTimeout` honours (2^31 - 1 ms, about 24.8 days).
const MAX_TIMER_MS: f64 = 2_147_483_647.0;

/// A `setTimeout` promise that clears its timer when dropped, so an abandoned
/// deadline does not keep the host's event loop alive, and then settles its
/// promise: a `JsFuture` whose promise never settles keeps its callbacks
/// (and what they hold) alive for good.
struct Sleep {
    done: JsFuture,
    timer: JsValue,
    resolve: Option<Function>,
}

impl Sleep {
    fn new(ms: f64) -> Sleep {
        let mut timer = JsValue::UNDEFINED;
        let mut settle = None;
        let promise = Promise::new(&mut |resolve, _reject| match global_fn("setTimeout") {
            Some(set_timeout) => {
                settle = Some(resolve.clone());
                timer = set_timeout
                    .call2(
                        &JsValue::UNDEFINED,
                        &resolve,
                        &JsValue::from_f64(ms.max(0.0)),
                    )
                    .unwrap_or(JsValue::UNDEFINED);
            }
            None => {
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }
        });
        Sleep {
            done: JsFuture::from(promise),
            timer,
            resolve: settle,
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.done).poll(cx).map(|_| ())
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if !self.timer.is_undefined() {
            if let Some(clear) = global_fn("clearTimeout") {
                let _ = clear.call1(&JsValue::UNDEFINED, &self.timer);
            }
        }
        if let Some(resolve) = self.resolve.take() {
            // Resolving a settled promise does nothing.
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    }
}

/// 64 bits from `Math.random()` (ids need uniqueness, not secrecy).
pub fn seed() -> u64 {
    let hi = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    let lo = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    (hi << 32) ^ lo ^ (js_sys::Date::now() as u64)
}
