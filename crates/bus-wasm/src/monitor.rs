//! `SessionTimeoutMonitor` for JS, with an optional `{ now() }` clock.

use std::rc::Rc;

use async_trait::async_trait;
use context_compiler_js::error::JsResult;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::event_bus::bus_option;
use context_compiler::bus::{MonitorOptions, SessionTimeoutMonitor};
use context_compiler::clock::Clock;
use context_compiler::error::Result;
use context_compiler_js::convert::{option, to_js};
use context_compiler_js::env::JsClock;
use context_compiler_js::options::{number_option, MILLIS};
use context_compiler_js::promise::{require_callable, spawn};

#[wasm_bindgen(typescript_custom_section)]
const TS_MONITOR: &'static str = r#"
/** A clock: `now()` in milliseconds since the Unix epoch. */
export interface ClockLike { now(): number }
export interface SessionTimeoutMonitorOptions {
  bus: EventBus;
  /** Idle time after which a session ends (default 30 minutes). */
  sessionIdleTimeoutMs?: number;
  /** Global idle time, with no session left, after which sleep starts (default 2 hours). */
  sleepTimeoutMs?: number;
  /** How often `start()`'s loop checks (default 60 s). */
  checkIntervalMs?: number;
  /** Where time comes from (default `Date.now`); drive it by hand with `checkTimeouts()`. */
  clock?: ClockLike;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// The `SessionTimeoutMonitorOptions` object.
    #[wasm_bindgen(typescript_type = "SessionTimeoutMonitorOptions")]
    pub type SessionTimeoutMonitorOptionsArg;
}

/// A `{ now() }` object as the core's clock; sleeping uses host timers.
struct JsNowClock {
    this: JsValue,
    now: Function,
}

#[async_trait(?Send)]
impl Clock for JsNowClock {
    /// The host clock's reading; `Date.now()` if it throws or is not a number.
    fn now_ms(&self) -> f64 {
        self.now
            .call0(&self.this)
            .ok()
            .and_then(|v| v.as_f64())
            .filter(|n| n.is_finite())
            .unwrap_or_else(js_sys::Date::now)
    }

    async fn sleep(&self, ms: f64) {
        JsClock.sleep(ms).await
    }
}

fn clock(value: &JsValue) -> Result<Rc<dyn Clock>> {
    if value.is_undefined() || value.is_null() {
        return Ok(Rc::new(JsClock));
    }
    let (this, now) = require_callable(value, "now", "options.clock must be an object with now()")?;
    Ok(Rc::new(JsNowClock { this, now }))
}

/// The session timeout monitor (docs/event-bus.md).
#[wasm_bindgen(js_name = SessionTimeoutMonitor)]
pub struct JsSessionTimeoutMonitor {
    monitor: Rc<SessionTimeoutMonitor>,
}

#[wasm_bindgen(js_class = SessionTimeoutMonitor)]
impl JsSessionTimeoutMonitor {
    /// A monitor on `options.bus`, tracking activity at once; `start()` runs
    /// its periodic check.
    #[wasm_bindgen(constructor)]
    pub fn new(options: SessionTimeoutMonitorOptionsArg) -> JsResult<JsSessionTimeoutMonitor> {
        let options = Some(options);
        let bus = bus_option(&options)?;
        let defaults = MonitorOptions::default();
        let core = MonitorOptions {
            session_idle_timeout_ms: number_option(
                &options,
                "sessionIdleTimeoutMs",
                defaults.session_idle_timeout_ms,
                MILLIS,
            )?,
            sleep_timeout_ms: number_option(
                &options,
                "sleepTimeoutMs",
                defaults.sleep_timeout_ms,
                MILLIS,
            )?,
            check_interval_ms: number_option(
                &options,
                "checkIntervalMs",
                defaults.check_interval_ms,
                MILLIS,
            )?,
        };
        let clock = clock(&option(&options, "clock", "options")?)?;
        let monitor = SessionTimeoutMonitor::new(&bus, clock, core)?;
        Ok(JsSessionTimeoutMonitor {
            monitor: Rc::new(monitor),
        })
    }

    /// Starts the periodic check (does nothing if started).
    pub fn start(&self) {
        if !self.monitor.start() {
            return;
        }
        let monitor = self.monitor.clone();
        // The loop's promise is not returned: it settles when stopped.
        let _ = spawn(async move {
            monitor.run().await;
            Ok(JsValue::UNDEFINED)
        });
    }

    /// Stops the periodic check at once (no timer is left behind).
    pub fn stop(&self) {
        self.monitor.stop();
    }

    /// Checks now: emits `session_ended` for each idle session and
    /// `sleep_started` when due, and returns the events emitted.
    #[wasm_bindgen(js_name = checkTimeouts, unchecked_return_type = "BusEvent[]")]
    pub fn check_timeouts(&self) -> JsResult<JsValue> {
        Ok(to_js(&self.monitor.check_timeouts())?)
    }

    /// Sessions being tracked.
    #[wasm_bindgen(getter)]
    pub fn tracked(&self) -> usize {
        self.monitor.tracked()
    }
}
