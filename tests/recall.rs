//! `Session::search`: the recall index over every text a session holds,
//! kept incrementally and identical to one rebuilt from the same events.
mod common;

use std::rc::Rc;

use common::{session, StepClock};
use context_compiler::recall::{SearchHit, CHUNK_BYTES, MAX_SEARCH_LIMIT};
use context_compiler::{DefaultTokenCounter, Session};
use proptest::prelude::*;
use serde_json::json;

fn ids(hits: &[SearchHit]) -> Vec<usize> {
    hits.iter().map(|h| h.position).collect()
}

fn reimported(s: &Session) -> Session {
    Session::import_json(
        &s.export_json(),
        StepClock::new(1_800_000_000_000.0, 1.0),
        Rc::new(DefaultTokenCounter),
        7,
    )
    .expect("its own export imports")
}

#[test]
fn turns_tool_calls_outputs_and_summaries_are_found() {
    let mut s = session("recall");
    s.record(
        "user_input",
        json!({"content": "Book me a flight to Lisbon on Friday"}),
        None,
    )
    .unwrap();
    s.record(
        "assistant_output",
        json!({"content": "Looking for flights now."}),
        None,
    )
    .unwrap();
    s.record(
        "tool_call",
        json!({"call_id": "c1", "tool_name": "search_flights", "arguments": {"city": "Lisbon"}}),
        None,
    )
    .unwrap();
    s.record(
        "tool_success",
        json!({"call_id": "c1", "tool_name": "search_flights", "result": "TP1351 departs 09:40 from gate B12"}),
        None,
    )
    .unwrap();
    s.record(
        "user_input",
        json!({"content": "What about the weather?"}),
        None,
    )
    .unwrap();
    let hits = s.search("which gate does the plane leave from", 10);
    assert_eq!(hits[0].position, 3, "{hits:?}");
    assert_eq!(hits[0].kind, "tool_success");
    assert_eq!(hits[0].event_id, s.event_log().events()[3].event_id);
    let hits = s.search("search_flights", 10);
    assert!(
        ids(&hits).contains(&2),
        "the call's name and arguments are indexed: {hits:?}"
    );
    assert!(s.search("Lisbon", 1).len() == 1);
    assert!(s.search("nothing matches this", 10).is_empty());
}

#[test]
fn a_long_output_is_found_by_its_far_end() {
    let mut s = session("long");
    let mut text = "filler words repeated ".repeat(CHUNK_BYTES / 10);
    text.push_str("the checksum mismatch happened in pkg/verify.rs");
    s.record(
        "tool_success",
        json!({"tool_name": "read", "result": text}),
        None,
    )
    .unwrap();
    s.record("user_input", json!({"content": "filler words"}), None)
        .unwrap();
    let hits = s.search("checksum mismatch", 10);
    assert_eq!(ids(&hits), [0]);
    assert_eq!(ids(&s.search("pkg/verify.rs", 10)), [0]);
}

#[test]
fn a_widened_search_finds_what_the_best_matches_speak_of_in_other_words() {
    let mut s = session("widened");
    for text in [
        "We had a family dinner with the kids on Sunday.",
        "The kids loved the dinosaur museum, the bones were so cool.",
        "Camping with the kids: marshmallows by the fire.",
        "My car broke down on the motorway again.",
        "The quarterly report is due on Friday.",
    ] {
        s.record("user_input", json!({ "content": text }), None)
            .unwrap();
    }
    let query = "What does the family do together?";
    // The question's own words find the dinner alone ("the", "what", "does"
    // and "do" are function words, not searched by).
    assert_eq!(ids(&s.search(query, 10)), [0]);
    // Widened by what the dinner speaks of, the kids' other outings come too,
    // after it; the car and the report do not.
    let widened = ids(&s.search_expanded(query, 10));
    assert_eq!(widened[0], 0);
    assert!(widened.contains(&1) && widened.contains(&2), "{widened:?}");
    assert!(
        !widened.contains(&3) && !widened.contains(&4),
        "{widened:?}"
    );
}

#[test]
fn limit_is_capped() {
    let mut s = session("many");
    for i in 0..(MAX_SEARCH_LIMIT + 20) {
        s.record(
            "user_input",
            json!({"content": format!("note {i} about apples")}),
            None,
        )
        .unwrap();
    }
    assert_eq!(s.search("apples", 1000).len(), MAX_SEARCH_LIMIT);
    assert_eq!(s.search("apples", 3).len(), 3);
}

#[test]
fn hostile_texts_are_indexed_without_failing() {
    let mut s = session("hostile");
    let texts = [
        "\u{0}".repeat(10_000),
        "A".repeat(1 << 20),
        "東京".repeat(5_000),
        "\u{fffd}\u{301}".repeat(3_000),
        "/".repeat(50_000),
        (0..20_000)
            .map(|i| char::from_u32(0x20 + (i * 7919) % 0xD000).unwrap_or('x'))
            .collect(),
    ];
    for t in &texts {
        s.record("tool_success", json!({"tool_name": "t", "result": t}), None)
            .unwrap();
    }
    s.record("user_input", json!({"content": "東京 and AAAA"}), None)
        .unwrap();
    let hits = s.search("東京", 10);
    assert!(ids(&hits).contains(&2), "{hits:?}");
    let _ = s.search(&"x".repeat(100_000), 10);
}

fn event() -> impl Strategy<Value = (String, String)> {
    let words = prop::sample::select(vec![
        "alpha",
        "beta",
        "gamma",
        "delta",
        "flight",
        "Lisbon",
        "2024-05-01",
        "src/main.rs",
        "東京都",
        "running",
        "ran",
        "x",
        "",
    ]);
    let text = prop::collection::vec(words, 0..12).prop_map(|w| w.join(" "));
    let kind = prop::sample::select(vec![
        "user_input",
        "assistant_output",
        "tool_success",
        "tool_call",
    ]);
    (kind.prop_map(str::to_string), text)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Searching as events arrive gives what a session rebuilt from the same
    /// events gives, after an export and import too.
    #[test]
    fn incremental_equals_rebuilt(events in prop::collection::vec(event(), 1..40), query in event()) {
        let mut grown = session("grown");
        for (i, (kind, text)) in events.iter().enumerate() {
            let data = match kind.as_str() {
                "tool_call" => json!({"call_id": format!("c{i}"), "tool_name": "t", "arguments": {"q": text}}),
                "tool_success" => json!({"call_id": format!("c{i}"), "tool_name": "t", "result": text}),
                _ => json!({"content": text}),
            };
            grown.record(kind, data, None).unwrap();
            if i % 3 == 0 {
                let _ = grown.search(&query.1, 5);
            }
        }
        let imported = reimported(&grown);
        let a = grown.search(&query.1, 10);
        let b = imported.search(&query.1, 10);
        prop_assert_eq!(ids(&a), ids(&b));
        for (x, y) in a.iter().zip(&b) {
            prop_assert_eq!(x.score.to_bits(), y.score.to_bits());
        }
    }
}
