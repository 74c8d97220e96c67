//! The `SessionTimeoutMonitor`: tracks activity
//! per session and emits `session_ended` after the idle timeout and
//! `sleep_started` after the global sleep timeout.
//!
//! The monitor keeps each session's transcript (`User: …`, `Assistant: …`
//! cut to 500 characters) with its `episode_id` and `user_id`, and puts them on the
//! `session_ended` it emits.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::interrupt::Interrupt;
use super::subscription::Subscription;
use super::{BusEvent, EventBus, EventHandler};
use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};

/// The assistant text kept per turn in a transcript (default 500).
pub const ASSISTANT_TRANSCRIPT_CHARS: usize = 500;

/// Options of a [`SessionTimeoutMonitor`], in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct MonitorOptions {
    /// Idle time after which a session ends (default 30 minutes).
    pub session_idle_timeout_ms: f64,
    /// Global idle time, with no session left, after which sleep starts (2 hours).
    pub sleep_timeout_ms: f64,
    /// How often the background loop checks (default 60 s).
    pub check_interval_ms: f64,
}

impl Default for MonitorOptions {
    fn default() -> Self {
        MonitorOptions {
            session_idle_timeout_ms: 30.0 * 60_000.0,
            sleep_timeout_ms: 120.0 * 60_000.0,
            check_interval_ms: 60_000.0,
        }
    }
}

/// What the monitor knows of one session.
#[derive(Debug, Clone, Default)]
struct Tracked {
    last_activity: f64,
    agent_id: String,
    transcript: Vec<String>,
    episode_id: Option<String>,
    user_id: Option<String>,
    user_display_name: Option<String>,
}

#[derive(Default)]
struct MonitorState {
    sessions: BTreeMap<String, Tracked>,
    global_last_activity: f64,
    sleep_emitted: bool,
}

/// The session timeout monitor, registered on its bus for
/// `turn_completed` and `message_received`.
pub struct SessionTimeoutMonitor {
    bus: EventBus,
    clock: Rc<dyn Clock>,
    options: MonitorOptions,
    state: Rc<RefCell<MonitorState>>,
    subscription: Subscription,
    stop: RefCell<Interrupt>,
    running: std::cell::Cell<bool>,
}

/// The handler the monitor registers for activity events.
struct Activity {
    clock: Rc<dyn Clock>,
    state: Rc<RefCell<MonitorState>>,
}

/// A string field of an event's data.
fn text(data: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| data.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

#[async_trait(?Send)]
impl EventHandler for Activity {
    async fn handle(&self, event: &BusEvent) -> Result<()> {
        let now = self.clock.now_ms();
        let mut s = self.state.borrow_mut();
        s.global_last_activity = now;
        s.sleep_emitted = false;
        let Some(session_id) = &event.session_id else {
            return Ok(());
        };
        let tracked = s.sessions.entry(session_id.clone()).or_default();
        tracked.last_activity = now;
        if !event.agent_id.is_empty() {
            tracked.agent_id = event.agent_id.clone();
        }
        let data = &event.data;
        if let Some(id) = text(data, &["episode_id"]) {
            tracked.episode_id = Some(id);
        }
        if let Some(id) = text(data, &["user_id"]) {
            tracked.user_id = Some(id);
        }
        if let Some(name) = text(data, &["user_display_name"]) {
            tracked.user_display_name = Some(name);
        }
        if event.event_type == "message_received" {
            if let Some(t) = text(data, &["text", "content", "message", "user_input"]) {
                tracked.transcript.push(format!("User: {t}"));
            }
        } else if let Some(t) = text(data, &["response", "text", "content", "response_text"]) {
            let cut: String = t.chars().take(ASSISTANT_TRANSCRIPT_CHARS).collect();
            tracked.transcript.push(format!("Assistant: {cut}"));
        }
        Ok(())
    }
}

impl SessionTimeoutMonitor {
    /// A monitor on `bus`, registered for activity at once; its background
    /// loop runs from [`SessionTimeoutMonitor::run`] after
    /// [`SessionTimeoutMonitor::start`]. Timeouts must be
    /// positive numbers of milliseconds.
    pub fn new(
        bus: &EventBus,
        clock: Rc<dyn Clock>,
        options: MonitorOptions,
    ) -> Result<SessionTimeoutMonitor> {
        for (name, v) in [
            ("sessionIdleTimeoutMs", options.session_idle_timeout_ms),
            ("sleepTimeoutMs", options.sleep_timeout_ms),
            ("checkIntervalMs", options.check_interval_ms),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("{name} must be a positive number of milliseconds"),
                ));
            }
        }
        let state = Rc::new(RefCell::new(MonitorState {
            global_last_activity: clock.now_ms(),
            ..MonitorState::default()
        }));
        let activity: Rc<dyn EventHandler> = Rc::new(Activity {
            clock: clock.clone(),
            state: state.clone(),
        });
        let ids = ["turn_completed", "message_received"]
            .iter()
            .map(|t| bus.on(t, "session-timeout-monitor", activity.clone()))
            .collect();
        Ok(SessionTimeoutMonitor {
            bus: bus.clone(),
            clock,
            options,
            state,
            subscription: Subscription::new(bus, ids),
            stop: RefCell::new(Interrupt::new()),
            running: std::cell::Cell::new(false),
        })
    }

    /// Sessions being tracked.
    pub fn tracked(&self) -> usize {
        self.state.borrow().sessions.len()
    }

    /// Emits `session_ended` for every
    /// session idle longer than the idle timeout (and forgets it), then
    /// `sleep_started` once when no session is left and the global idle time
    /// passed the sleep timeout. Returns the events it emitted.
    pub fn check_timeouts(&self) -> Vec<BusEvent> {
        let now = self.clock.now_ms();
        let mut emitted = Vec::new();
        let expired: Vec<(String, Tracked)> = {
            let mut s = self.state.borrow_mut();
            let ids: Vec<String> = s
                .sessions
                .iter()
                .filter(|(_, t)| now - t.last_activity > self.options.session_idle_timeout_ms)
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| s.sessions.remove(&id).map(|t| (id, t)))
                .collect()
        };
        for (session_id, t) in expired {
            let idle_seconds = ((now - t.last_activity) / 1000.0).floor() as i64;
            let mut data = Map::new();
            data.insert("reason".into(), json!("idle_timeout"));
            data.insert("idle_seconds".into(), json!(idle_seconds));
            data.insert(
                "episode_id".into(),
                json!(t.episode_id.unwrap_or_else(|| session_id.clone())),
            );
            data.insert("transcript".into(), json!(t.transcript.join("\n\n")));
            data.insert("user_id".into(), json!(t.user_id));
            data.insert("user_display_name".into(), json!(t.user_display_name));
            let agent = if t.agent_id.is_empty() {
                "unknown".to_string()
            } else {
                t.agent_id
            };
            let event = BusEvent::new("session_ended", agent, Some(session_id), data, now);
            self.bus.emit(event.clone());
            emitted.push(event);
        }
        let sleep = {
            let mut s = self.state.borrow_mut();
            let idle = now - s.global_last_activity;
            let due =
                idle > self.options.sleep_timeout_ms && !s.sleep_emitted && s.sessions.is_empty();
            if due {
                s.sleep_emitted = true;
            }
            due.then_some(idle)
        };
        if let Some(idle) = sleep {
            let mut data = Map::new();
            data.insert("idle_seconds".into(), json!((idle / 1000.0).floor() as i64));
            let event = BusEvent::new("sleep_started", "system", None, data, now);
            self.bus.emit(event.clone());
            emitted.push(event);
        }
        emitted
    }

    /// Arms the background loop; `false` if one is running already (then
    /// it must not be run twice). Run [`SessionTimeoutMonitor::run`] next.
    pub fn start(&self) -> bool {
        if self.running.replace(true) {
            return false;
        }
        *self.stop.borrow_mut() = Interrupt::new();
        true
    }

    /// The background loop armed by [`SessionTimeoutMonitor::start`]: checks
    /// every `check_interval_ms` until [`SessionTimeoutMonitor::stop`], even
    /// one called before the loop's first step.
    pub async fn run(&self) {
        let stop = self.stop.borrow().clone();
        while stop
            .sleep(self.clock.as_ref(), self.options.check_interval_ms)
            .await
        {
            self.check_timeouts();
        }
        self.running.set(false);
    }

    /// Ends the background loop at once (its timer is dropped).
    pub fn stop(&self) {
        self.stop.borrow().trigger();
    }
}

impl Drop for SessionTimeoutMonitor {
    fn drop(&mut self) {
        self.stop();
        self.subscription.detach();
    }
}
