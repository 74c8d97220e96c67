//! The event bus (seed 003, phase L tests 1-8) and what the issue adds:
//! FIFO order, handler timeouts, stats, stop while handlers run, overflow
//! under 100,000 emits.

mod common;

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use context_compiler::bus::{BusEvent, BusOptions, EventBus};
use context_compiler::{Error, ErrorCode};
use serde_json::{json, Map};

use common::bus::{event, join, probe, yield_now, Behaviour, Log};
use common::{block_on, StepClock};

fn bus(options: BusOptions) -> EventBus {
    EventBus::new(StepClock::new(1_700_000_000_000.0, 1.0), options).unwrap()
}

/// Starts the bus, runs `body` beside its loop, then stops it.
fn with_running<F: Future<Output = ()>>(bus: &EventBus, body: F) {
    assert!(bus.start());
    block_on(join(bus.run(), async {
        body.await;
        bus.stop().await;
    }));
}

#[test]
fn emit_reaches_the_handler_and_several_handlers_of_a_type() {
    // Seed tests 1 and 2.
    let log = Log::default();
    let b = bus(BusOptions::default());
    b.on("turn_completed", "a", probe("a", &log, Behaviour::Ok, 0));
    b.on("turn_completed", "b", probe("b", &log, Behaviour::Ok, 0));
    with_running(&b, async {
        assert!(b.emit(event("turn_completed", 1)));
    });
    assert_eq!(*log.borrow(), ["a:turn_completed:1", "b:turn_completed:1"]);
    let stats = b.stats();
    assert_eq!((stats.emitted, stats.dispatched), (1, 1));
}

#[test]
fn a_failing_handler_neither_stops_the_bus_nor_the_other_handlers() {
    // Seed tests 3 and 4, and the error report.
    let log = Log::default();
    let reports = Rc::new(RefCell::new(Vec::new()));
    let seen = reports.clone();
    let b = bus(BusOptions {
        on_error: Some(Rc::new(move |name: &str, e: &BusEvent, err: &Error| {
            seen.borrow_mut()
                .push(format!("{name}:{}:{}", e.event_type, err.code()));
        })),
        ..BusOptions::default()
    });
    b.on("x", "bad", probe("bad", &log, Behaviour::Fail, 0));
    b.on("x", "good", probe("good", &log, Behaviour::Ok, 1));
    with_running(&b, async {
        b.emit(event("x", 1));
        b.emit(event("x", 2));
    });
    assert_eq!(
        *log.borrow(),
        ["bad:x:1", "good:x:1", "bad:x:2", "good:x:2"]
    );
    assert_eq!(*reports.borrow(), ["bad:x:INVALID_ARGUMENT"; 2]);
    let stats = b.stats();
    assert_eq!(stats.handler_errors, 2);
    assert_eq!(stats.handlers["bad"].errors, 2);
    assert_eq!(stats.handlers["good"].calls, 2);
    assert_eq!(stats.dispatched, 2);
}

#[test]
fn a_full_queue_drops_the_event_without_blocking() {
    // Seed test 5, under 100,000 emits to a stopped bus.
    let b = bus(BusOptions {
        max_queue: 1000,
        ..BusOptions::default()
    });
    let accepted = (0..100_000).filter(|&n| b.emit(event("x", n))).count();
    assert_eq!(accepted, 1000);
    assert_eq!(b.pending(), 1000);
    let stats = b.stats();
    assert_eq!((stats.emitted, stats.dropped), (1000, 99_000));
}

#[test]
fn stop_drains_the_queue_in_fifo_order_even_while_handlers_run() {
    // Seed test 6, plus order: the loop is busy with a slow handler when
    // stop is called; every queued event is still dispatched, in order.
    let log = Log::default();
    let b = bus(BusOptions::default());
    b.on("x", "slow", probe("slow", &log, Behaviour::Ok, 5));
    assert!(b.start());
    block_on(join(b.run(), async {
        for n in 0..10 {
            b.emit(event("x", n));
        }
        yield_now().await;
        b.stop().await;
        assert_eq!(b.pending(), 0);
    }));
    let expected: Vec<String> = (0..10).map(|n| format!("slow:x:{n}")).collect();
    assert_eq!(*log.borrow(), expected);
    assert!(!b.is_running());
}

#[test]
fn stop_without_a_loop_drains_here() {
    let log = Log::default();
    let b = bus(BusOptions::default());
    b.on("x", "h", probe("h", &log, Behaviour::Ok, 0));
    b.emit(event("x", 7));
    block_on(b.stop());
    assert_eq!(*log.borrow(), ["h:x:7"]);
}

#[test]
fn the_persister_sees_every_event_first_and_its_failure_is_isolated() {
    // Seed test 7.
    let log = Log::default();
    let b = bus(BusOptions::default());
    b.set_persister(Some(probe("db", &log, Behaviour::Fail, 0)));
    b.on("x", "h", probe("h", &log, Behaviour::Ok, 0));
    with_running(&b, async {
        b.emit(event("x", 1));
        b.emit(event("other", 2));
    });
    assert_eq!(*log.borrow(), ["db:x:1", "h:x:1", "db:other:2"]);
    assert_eq!(b.stats().persist_errors, 2);
}

#[test]
fn an_event_type_without_handlers_is_no_error() {
    // Seed test 8.
    let b = bus(BusOptions::default());
    with_running(&b, async {
        b.emit(event("nobody_listens", 1));
    });
    let stats = b.stats();
    assert_eq!(
        (stats.dispatched, stats.handler_errors, stats.persist_errors),
        (1, 0, 0)
    );
}

#[test]
fn a_handler_that_never_settles_times_out_and_the_queue_moves_on() {
    let log = Log::default();
    let reports = Rc::new(RefCell::new(Vec::new()));
    let seen = reports.clone();
    let b = bus(BusOptions {
        handler_timeout_ms: Some(50.0),
        on_error: Some(Rc::new(move |name: &str, _: &BusEvent, err: &Error| {
            seen.borrow_mut().push((name.to_string(), err.code()));
        })),
        ..BusOptions::default()
    });
    b.on("x", "stuck", probe("stuck", &log, Behaviour::Hang, 0));
    b.on("x", "fine", probe("fine", &log, Behaviour::Ok, 0));
    with_running(&b, async {
        b.emit(event("x", 1));
        b.emit(event("x", 2));
    });
    assert_eq!(
        *log.borrow(),
        ["stuck:x:1", "fine:x:1", "stuck:x:2", "fine:x:2"]
    );
    assert_eq!(
        *reports.borrow(),
        [
            ("stuck".to_string(), ErrorCode::HandlerTimeout),
            ("stuck".to_string(), ErrorCode::HandlerTimeout)
        ]
    );
    let stats = b.stats();
    assert_eq!((stats.handler_timeouts, stats.dispatched), (2, 2));
}

#[test]
fn unsubscribing_stops_delivery() {
    let log = Log::default();
    let b = bus(BusOptions::default());
    let id = b.on("x", "h", probe("h", &log, Behaviour::Ok, 0));
    assert!(b.off(id));
    assert!(!b.off(id));
    with_running(&b, async {
        b.emit(event("x", 1));
    });
    assert!(log.borrow().is_empty());
}

#[test]
fn start_twice_is_refused_and_bad_options_are_errors() {
    let b = bus(BusOptions::default());
    assert!(b.start());
    assert!(!b.start());
    for options in [
        BusOptions {
            max_queue: 0,
            ..BusOptions::default()
        },
        BusOptions {
            handler_timeout_ms: Some(f64::NAN),
            ..BusOptions::default()
        },
        BusOptions {
            handler_timeout_ms: Some(-1.0),
            ..BusOptions::default()
        },
    ] {
        let err = EventBus::new(StepClock::new(0.0, 1.0), options)
            .err()
            .expect("an error");
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
    }
}

#[test]
fn events_serialise_with_the_binding_keys_and_the_seed_payload_keys() {
    let mut data = Map::new();
    data.insert("episode_id".into(), json!("ep-1"));
    data.insert("idle_seconds".into(), json!(1800));
    let e = BusEvent::new("session_ended", "a", Some("s".into()), data, 5.0);
    assert_eq!(
        serde_json::to_value(&e).unwrap(),
        json!({"type": "session_ended", "agentId": "a", "sessionId": "s",
               "data": {"episode_id": "ep-1", "idle_seconds": 1800}, "timestamp": 5.0})
    );
}

#[test]
fn an_emitted_event_keeps_its_timestamp_or_takes_now() {
    let init = json!({"type": "t", "agentId": "a"});
    assert_eq!(BusEvent::from_init(&init, 5.0).unwrap().timestamp, 5.0);
    let init = json!({"type": "t", "agentId": "a", "timestamp": 1234.5});
    assert_eq!(BusEvent::from_init(&init, 5.0).unwrap().timestamp, 1234.5);
    let init = json!({"type": "t", "agentId": "a", "timestamp": null});
    assert_eq!(BusEvent::from_init(&init, 5.0).unwrap().timestamp, 5.0);
    for bad in [json!("soon"), json!(true), json!({})] {
        let init = json!({"type": "t", "agentId": "a", "timestamp": bad});
        let e = BusEvent::from_init(&init, 5.0).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("event.timestamp"), "{}", e.message());
    }
}
