//! The seed's test_session, ported, plus ids, export/import and bad input.
mod common;

use std::rc::Rc;

use common::{session, StepClock};
use context_compiler::clock::SystemClock;
use context_compiler::session::{EventLog, SESSION_FORMAT};
use context_compiler::{DefaultTokenCounter, ErrorCode, Session};
use serde_json::json;

#[test]
fn event_log_append_and_filter() {
    let mut log = EventLog::new();
    log.append("user_input", json!({"text": "hello"}), Some(10))
        .unwrap();
    log.append("memory_hit", json!({"key": "k1"}), Some(5))
        .unwrap();
    log.append("user_input", json!({"text": "world"}), Some(8))
        .unwrap();
    assert_eq!(log.events().len(), 3);
    assert_eq!(log.total_tokens(), 23);
    let filtered = log.filter(&["user_input"]);
    assert_eq!(filtered.len(), 2);
    assert!(filtered.iter().all(|e| e.kind == "user_input"));
}

#[test]
fn event_log_since() {
    let mut log = EventLog::new();
    let e1 = log
        .append("user_input", json!({"text": "a"}), Some(5))
        .unwrap()
        .clone();
    let e2 = log
        .append("tool_call", json!({"name": "echo"}), Some(10))
        .unwrap()
        .clone();
    let since = log.since(e1.timestamp);
    assert!(!since.is_empty());
    assert!(since.contains(&e2));
    assert!(log.since(e2.timestamp + 1.0).is_empty());
}

#[test]
fn session_wraps_evidence_pack() {
    let mut s = Session::new();
    assert!(!s.session_id().is_empty());
    s.record("user_input", json!({"text": "test"}), Some(7))
        .unwrap();
    assert_eq!(s.event_log().events().len(), 1);
    let pack = s.to_evidence_pack();
    assert_eq!(pack.session_id, s.session_id());
    assert_eq!(pack.entries.len(), 1);
    assert_eq!(pack.entries[0].kind, "input");
    assert_eq!(pack.entries[0].phase, "user_input");
}

#[test]
fn evidence_kinds_follow_the_seed_mapping() {
    let mut s = session("ev");
    for kind in [
        "user_input",
        "memory_hit",
        "tool_call",
        "tool_success",
        "tool_error",
        "tool_timeout",
        "guard_decision",
        "phase_result",
        "artifact_stored",
        "custom",
    ] {
        s.record(kind, json!({}), Some(1)).unwrap();
    }
    let kinds: Vec<String> = s
        .to_evidence_pack()
        .entries
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "input",
            "source",
            "tool_call",
            "output",
            "error",
            "error",
            "decision",
            "output",
            "output",
            "output"
        ]
    );
}

#[test]
fn ids_are_unique_and_time_sortable_even_within_one_millisecond() {
    let mut s = Session::with_env(
        None,
        StepClock::new(1_700_000_000_000.0, 0.0),
        Rc::new(DefaultTokenCounter),
        1,
    );
    let ids: Vec<String> = (0..500)
        .map(|i| {
            s.record("user_input", json!({"text": i}), None)
                .unwrap()
                .event_id
                .clone()
        })
        .collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "ids sort in append order");
    sorted.dedup();
    assert_eq!(sorted.len(), 500);
    assert_eq!(ids[0].len(), 25);
}

#[test]
fn timestamps_never_decrease_even_if_the_clock_does() {
    let mut s = Session::with_env(
        None,
        StepClock::new(1_700_000_000_000.0, -5.0),
        Rc::new(DefaultTokenCounter),
        1,
    );
    let a = s.record("x", json!(1), None).unwrap().timestamp;
    let b = s.record("x", json!(2), None).unwrap().timestamp;
    assert!(b >= a);
}

#[test]
fn missing_estimates_are_counted_from_content() {
    let mut s = session("est");
    let e = s
        .record("user_input", json!({"text": "hello world"}), None)
        .unwrap();
    assert_eq!(e.token_estimate, 2);
    let e = s.record("custom", json!({"a": [1, 2, 3]}), None).unwrap();
    assert!(e.token_estimate > 0);
    let e = s
        .record("user_input", json!({"text": "given"}), Some(0))
        .unwrap();
    assert_eq!(e.token_estimate, 0, "an explicit estimate is kept");
}

#[test]
fn empty_kind_is_rejected() {
    let mut s = session("k");
    let err = s.record("", json!({}), None).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert!(s.event_log().is_empty());
}

fn sample() -> Session {
    let mut s = session("round-trip");
    s.record(
        "user_input",
        json!({"text": "héllo", "z": 1, "a": [1.5, null, true]}),
        None,
    )
    .unwrap();
    s.record(
        "tool_success",
        json!({"tool": "calc", "result": {"b": 2, "a": 1}}),
        Some(3),
    )
    .unwrap();
    s.record(
        "artifact_stored",
        json!({"handle": "ab", "event_id": "x", "size_bytes": 9}),
        None,
    )
    .unwrap();
    s.record("custom_kind", json!("just a string"), None)
        .unwrap();
    s
}

#[test]
fn export_import_round_trips_exactly() {
    let s = sample();
    let exported = s.export_json();
    assert!(exported.contains(SESSION_FORMAT));
    let imported = Session::import_json(
        &exported,
        Rc::new(SystemClock),
        Rc::new(DefaultTokenCounter),
        3,
    )
    .unwrap();
    assert_eq!(imported.export_json(), exported);
    assert_eq!(imported.session_id(), "round-trip");
    assert_eq!(imported.event_log().events(), s.event_log().events());
    assert_eq!(
        imported.event_log().total_tokens(),
        s.event_log().total_tokens()
    );
    assert!(
        imported.event_log().externalized("x").is_some(),
        "indices are rebuilt"
    );
    // Key order inside data is preserved.
    assert!(exported.find("\"z\"").unwrap() < exported.find("\"a\":[").unwrap());
}

#[test]
fn appends_after_import_keep_ids_sortable_and_unique() {
    let s = sample();
    let clock = StepClock::new(1_700_000_000_000.0, 0.0);
    let mut imported =
        Session::import_json(&s.export_json(), clock, Rc::new(DefaultTokenCounter), 9).unwrap();
    let before: Vec<String> = imported
        .event_log()
        .events()
        .iter()
        .map(|e| e.event_id.clone())
        .collect();
    let new_id = imported
        .record("user_input", json!("next"), None)
        .unwrap()
        .event_id
        .clone();
    assert!(
        before.iter().all(|id| *id < new_id),
        "{new_id} sorts after {before:?}"
    );
}

fn import_err(doc: &str) -> String {
    let err = Session::import_json(doc, Rc::new(SystemClock), Rc::new(DefaultTokenCounter), 1)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidSessionImport);
    err.message().to_string()
}

#[test]
fn malformed_imports_name_what_is_wrong() {
    let good: serde_json::Value = serde_json::from_str(&sample().export_json()).unwrap();
    assert!(import_err("{not json").contains("not valid JSON"));
    assert!(import_err("[]").contains("expected an object"));
    let mut v = good.clone();
    v["format"] = json!("other");
    assert!(import_err(&v.to_string()).contains("$.format"));
    let mut v = good.clone();
    v["version"] = json!(2);
    assert!(import_err(&v.to_string()).contains("$.version"));
    let mut v = good.clone();
    v["events"][1]["tokenEstimate"] = json!(-1);
    assert!(import_err(&v.to_string()).contains("$.events[1].tokenEstimate"));
    let mut v = good.clone();
    v["events"][2]["tokenEstimate"] = json!(1.5);
    assert!(import_err(&v.to_string()).contains("$.events[2].tokenEstimate"));
    let mut v = good.clone();
    v["events"][0]["kind"] = json!("");
    assert!(import_err(&v.to_string()).contains("$.events[0].kind"));
    let mut v = good.clone();
    v["events"][1]["eventId"] = v["events"][0]["eventId"].clone();
    assert!(import_err(&v.to_string()).contains("duplicate event id"));
    let mut v = good.clone();
    v["events"][0]["timestamp"] = json!(8e15);
    assert!(import_err(&v.to_string()).contains("must not decrease"));
    let mut v = good.clone();
    v["events"][0]["extra"] = json!(1);
    assert!(import_err(&v.to_string()).contains("unknown field \"extra\""));
    let mut v = good.clone();
    v["events"][3].as_object_mut().unwrap().remove("data");
    assert!(import_err(&v.to_string()).contains("missing field \"data\""));
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(import_err(&deep).contains("not valid JSON"));
}

fn nested(levels: usize) -> serde_json::Value {
    let mut v = json!("leaf");
    for i in 0..levels {
        v = if i % 2 == 0 {
            json!([v])
        } else {
            json!({ "k": v })
        };
    }
    v
}

#[test]
fn whatever_record_accepts_round_trips_and_deeper_data_is_refused() {
    use context_compiler::session::MAX_DATA_DEPTH;
    let mut s = session("deep");
    s.record("user_input", json!("before"), None).unwrap();
    for levels in [MAX_DATA_DEPTH - 2, MAX_DATA_DEPTH] {
        s.record("note", nested(levels), None).unwrap();
    }
    let err = s
        .record("note", nested(MAX_DATA_DEPTH + 1), None)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotSerializable);
    assert!(err.message().contains("deeper than"));
    let exported = s.export_json();
    let back = Session::import_json(
        &exported,
        Rc::new(SystemClock),
        Rc::new(DefaultTokenCounter),
        1,
    )
    .unwrap();
    assert_eq!(back.export_json(), exported);
    assert_eq!(back.event_log().len(), 3);
}

#[test]
fn imported_timestamps_beyond_a_date_are_refused() {
    let mut good: serde_json::Value = serde_json::from_str(&sample().export_json()).unwrap();
    good["events"][0]["timestamp"] = json!(1e300);
    assert!(import_err(&good.to_string()).contains("timestamp"));
    good["events"][0]["timestamp"] = json!(8.64e15 + 1.0);
    assert!(import_err(&good.to_string()).contains("timestamp"));
}

/// `record` redacts a tool event's output, error and arguments before they
/// are stored, exported or counted (the README records `tool_success`
/// directly); `record_with { redact: false }` records them as given.
#[test]
fn recording_a_tool_event_redacts_its_secrets() {
    use context_compiler::session::RecordOptions;
    const TOKEN: &str = "sk-proj-4fGh8JkL2mN6pQ9rStUvWxYz0123456789abcdefAB";
    let mut s = Session::new();
    let result = format!("config loaded: OPENAI_API_KEY={TOKEN}\n").repeat(40);
    let success = s
        .record(
            "tool_success",
            json!({"tool": "env", "result": result}),
            None,
        )
        .unwrap()
        .clone();
    assert!(!success.data.to_string().contains(TOKEN));
    let redacted = success.data["result"].as_str().unwrap().to_string();
    assert_eq!(
        success.token_estimate,
        s.event_log().counter().count(&redacted),
        "counted after redaction"
    );
    s.record(
        "tool_error",
        json!({"tool": "env", "error": format!("bad key {TOKEN}")}),
        None,
    )
    .unwrap();
    s.record(
        "tool_call",
        json!({"tool_name": "login", "arguments": {"apiKey": TOKEN}}),
        None,
    )
    .unwrap();
    s.record("tool_success", json!(format!("key={TOKEN}")), None)
        .unwrap();
    assert!(!s.export_json().contains(TOKEN), "{}", s.export_json());
    // The caller that redacted itself.
    let given = s
        .record_with(
            "tool_success",
            json!({"tool": "env", "result": format!("key={TOKEN}")}),
            RecordOptions {
                token_estimate: None,
                redact: false,
            },
        )
        .unwrap();
    assert!(given.data.to_string().contains(TOKEN));
    // A user's own words are recorded as given.
    let user = s
        .record("user_input", json!({"text": TOKEN}), None)
        .unwrap();
    assert_eq!(user.data["text"], TOKEN);
}
