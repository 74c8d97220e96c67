//! The session timeout monitor (seed 003, phase L tests 27-33), with the
//! transcript, episode and user the seed's version left off `session_ended`.

mod common;

use std::rc::Rc;

use context_compiler::bus::{
    BusEvent, BusOptions, EventBus, MonitorOptions, SessionTimeoutMonitor,
};
use context_compiler::ErrorCode;
use serde_json::{json, Map, Value};

use common::block_on;
use common::bus::{join, yield_now, ManualClock};

const MIN: f64 = 60_000.0;

fn setup() -> (Rc<ManualClock>, EventBus, SessionTimeoutMonitor) {
    let clock = ManualClock::at(1_700_000_000_000.0);
    let bus = EventBus::new(clock.clone(), BusOptions::default()).unwrap();
    let monitor =
        SessionTimeoutMonitor::new(&bus, clock.clone(), MonitorOptions::default()).unwrap();
    (clock, bus, monitor)
}

fn activity(bus: &EventBus, kind: &str, session: &str, data: Value) {
    let data: Map<String, Value> = serde_json::from_value(data).unwrap();
    assert!(bus.emit(BusEvent::new(
        kind,
        "agent-1",
        Some(session.into()),
        data,
        0.0
    )));
    // Dispatch what is queued (the monitor learns through the bus).
    block_on(bus.stop());
}

fn types(events: &[BusEvent]) -> Vec<(String, Option<String>)> {
    events
        .iter()
        .map(|e| (e.event_type.clone(), e.session_id.clone()))
        .collect()
}

#[test]
fn activity_is_tracked_on_turn_completed_and_message_received() {
    // Seed test 27.
    let (_, bus, monitor) = setup();
    activity(&bus, "turn_completed", "s1", json!({}));
    activity(&bus, "message_received", "s2", json!({}));
    activity(&bus, "other_event", "s3", json!({}));
    assert_eq!(monitor.tracked(), 2);
}

#[test]
fn session_ended_after_the_idle_timeout_with_transcript_episode_and_user() {
    // Seed tests 28, 21-26: the transcript (assistant text cut to 500
    // characters), the episode and the user ride on session_ended.
    let (clock, bus, monitor) = setup();
    activity(
        &bus,
        "message_received",
        "s1",
        json!({"text": "How do I rotate keys?", "user_id": "u-7", "user_display_name": "Ana", "episode_id": "ep-1"}),
    );
    activity(
        &bus,
        "turn_completed",
        "s1",
        json!({"response": "x".repeat(800)}),
    );
    clock.advance(29.0 * MIN);
    assert!(monitor.check_timeouts().is_empty());
    clock.advance(2.0 * MIN);
    let out = monitor.check_timeouts();
    assert_eq!(types(&out), [("session_ended".into(), Some("s1".into()))]);
    let d = &out[0].data;
    assert_eq!(d["reason"], "idle_timeout");
    assert_eq!(d["idle_seconds"], 31 * 60);
    assert_eq!(d["episode_id"], "ep-1");
    assert_eq!(d["user_id"], "u-7");
    assert_eq!(d["user_display_name"], "Ana");
    assert_eq!(
        d["transcript"],
        format!(
            "User: How do I rotate keys?\n\nAssistant: {}",
            "x".repeat(500)
        )
    );
    assert_eq!(out[0].agent_id, "agent-1");
    // It went through the bus too.
    assert_eq!(bus.pending(), 1);
}

#[test]
fn sessions_are_tracked_independently_and_expired_ones_forgotten() {
    // Seed tests 29 and 33; a session without episode_id or user gets its
    // own id as the episode and null users.
    let (clock, bus, monitor) = setup();
    activity(&bus, "turn_completed", "s1", json!({}));
    clock.advance(20.0 * MIN);
    activity(&bus, "turn_completed", "s2", json!({}));
    clock.advance(11.0 * MIN);
    let out = monitor.check_timeouts();
    assert_eq!(types(&out), [("session_ended".into(), Some("s1".into()))]);
    assert_eq!(out[0].data["episode_id"], "s1");
    assert_eq!(out[0].data["user_id"], Value::Null);
    assert_eq!(monitor.tracked(), 1);
    assert!(monitor.check_timeouts().is_empty(), "s1 is forgotten");
    clock.advance(20.0 * MIN);
    assert_eq!(
        types(&monitor.check_timeouts()),
        [("session_ended".into(), Some("s2".into()))]
    );
    assert_eq!(monitor.tracked(), 0);
}

#[test]
fn sleep_starts_after_global_idle_only_when_no_session_is_left_and_once() {
    // Seed tests 30 and 31.
    let (clock, bus, monitor) = setup();
    activity(&bus, "turn_completed", "s1", json!({}));
    clock.advance(121.0 * MIN);
    // s1 ends first; with no session left, sleep starts in the same check.
    let out = monitor.check_timeouts();
    assert_eq!(
        types(&out),
        [
            ("session_ended".into(), Some("s1".into())),
            ("sleep_started".into(), None)
        ]
    );
    assert_eq!(out[1].agent_id, "system");
    assert_eq!(out[1].data["idle_seconds"], 121 * 60);
    clock.advance(200.0 * MIN);
    assert!(
        monitor.check_timeouts().is_empty(),
        "sleep_started is emitted once"
    );
}

#[test]
fn no_sleep_while_a_session_is_active_and_activity_resets_the_sleep_flag() {
    // Seed tests 31 and 32: a session with a longer idle timeout than the
    // sleep timeout keeps the agent awake.
    let clock = ManualClock::at(0.0);
    let bus = EventBus::new(clock.clone(), BusOptions::default()).unwrap();
    let monitor = SessionTimeoutMonitor::new(
        &bus,
        clock.clone(),
        MonitorOptions {
            session_idle_timeout_ms: 300.0 * MIN,
            ..MonitorOptions::default()
        },
    )
    .unwrap();
    activity(&bus, "turn_completed", "s1", json!({}));
    clock.advance(150.0 * MIN);
    assert!(monitor.check_timeouts().is_empty(), "s1 is still active");
    clock.advance(151.0 * MIN);
    assert_eq!(monitor.check_timeouts().len(), 2);
    // New activity resets the flag: after another quiet spell, sleep again.
    activity(&bus, "message_received", "s2", json!({}));
    clock.advance(301.0 * MIN);
    assert_eq!(
        types(&monitor.check_timeouts()),
        [
            ("session_ended".into(), Some("s2".into())),
            ("sleep_started".into(), None)
        ]
    );
}

#[test]
fn the_loop_checks_every_interval_and_stops_at_once() {
    let (clock, bus, monitor) = setup();
    activity(&bus, "turn_completed", "s1", json!({}));
    assert!(monitor.start());
    assert!(!monitor.start(), "one loop at a time");
    block_on(join(monitor.run(), async {
        // Each check interval (60 s) moves the manual clock on; 31 minutes
        // of checks end s1.
        while monitor.tracked() > 0 {
            yield_now().await;
        }
        monitor.stop();
    }));
    assert_eq!(clock.sleeps.get(), 31);
    assert_eq!(bus.pending(), 1);
    // A stop before the loop's first step still ends it.
    assert!(monitor.start());
    monitor.stop();
    block_on(monitor.run());
    assert_eq!(clock.sleeps.get(), 31);
}

#[test]
fn bad_options_are_errors_and_dropping_unregisters() {
    let clock = ManualClock::at(0.0);
    let bus = EventBus::new(clock.clone(), BusOptions::default()).unwrap();
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = SessionTimeoutMonitor::new(
            &bus,
            clock.clone(),
            MonitorOptions {
                check_interval_ms: bad,
                ..MonitorOptions::default()
            },
        )
        .err()
        .expect("an error");
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
    }
    let monitor =
        SessionTimeoutMonitor::new(&bus, clock.clone(), MonitorOptions::default()).unwrap();
    assert_eq!(bus.stats().handlers["session-timeout-monitor"].calls, 0);
    drop(monitor);
    activity(&bus, "turn_completed", "s1", json!({}));
    assert_eq!(bus.stats().handlers["session-timeout-monitor"].calls, 0);
}

#[test]
fn a_session_attached_to_the_bus_feeds_the_monitor_itself() {
    // Seed tests 21-26 end to end: recording user input and assistant output
    // in a session is all it takes.
    use context_compiler::bus::{session_feed, FeedOptions};
    use context_compiler::tokens::DefaultTokenCounter;
    use context_compiler::Session;

    let (clock, bus, monitor) = setup();
    let mut session = Session::with_env(
        Some("chat-1".into()),
        clock.clone(),
        Rc::new(DefaultTokenCounter),
        1,
    );
    session.set_observer(Some(session_feed(
        &bus,
        FeedOptions {
            agent_id: "nous".into(),
            user_id: Some("u-7".into()),
            user_display_name: None,
            episode_id: Some("ep-3".into()),
        },
    )));
    session
        .record("user_input", json!("Which region do we deploy to?"), None)
        .unwrap();
    session
        .record(
            "tool_success",
            json!({"tool": "lookup", "result": "eu-west-3"}),
            None,
        )
        .unwrap();
    session
        .record("assistant_output", json!({"text": "y".repeat(700)}), None)
        .unwrap();
    let queued = bus.pending();
    block_on(bus.stop());
    assert_eq!(
        queued, 2,
        "only user input and assistant output are emitted"
    );
    assert_eq!(monitor.tracked(), 1);
    clock.advance(31.0 * MIN);
    let out = monitor.check_timeouts();
    assert_eq!(
        types(&out),
        [("session_ended".into(), Some("chat-1".into()))]
    );
    let d = &out[0].data;
    assert_eq!(
        d["transcript"],
        format!(
            "User: Which region do we deploy to?\n\nAssistant: {}",
            "y".repeat(500)
        )
    );
    assert_eq!(
        (d["episode_id"].as_str(), d["user_id"].as_str()),
        (Some("ep-3"), Some("u-7"))
    );
    assert_eq!(out[0].agent_id, "nous");
    // Detached, the session emits nothing.
    session.set_observer(None);
    session.record("user_input", json!("more"), None).unwrap();
    assert_eq!(bus.pending(), 1, "only the monitor's session_ended");
}
