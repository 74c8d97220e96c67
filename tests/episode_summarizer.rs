//! The episode summariser (seed 003, phase L tests 9-14), with a scripted
//! model: what it is asked, what it answers, and what reaches the bus.

mod common;

use std::rc::Rc;

use context_compiler::bus::{
    BusEvent, BusOptions, EpisodeSummarizer, EventBus, SummarizerOptions, MIDDLE_TRUNCATED,
};
use serde_json::{json, Map, Value};

use common::block_on;
use common::bus::{keeper, probe, Behaviour, Kept, Log, ManualClock};
use common::model::ScriptedModel;

const SUMMARY: &str = r#"{"title":"Key rotation","summary":"The user rotated keys.","key_points":["a"],"outcome":"resolved","topics":["security"]}"#;

struct Setup {
    bus: EventBus,
    model: Rc<ScriptedModel>,
    summarized: Log,
    kept: Kept,
    _summarizer: EpisodeSummarizer,
}

fn setup(answer: std::result::Result<&str, &str>) -> Setup {
    let bus = EventBus::new(ManualClock::at(5.0), BusOptions::default()).unwrap();
    let model = Rc::new(ScriptedModel::new(&[answer]));
    let summarizer = EpisodeSummarizer::new(&bus, model.clone(), SummarizerOptions::default());
    let summarized = Log::default();
    bus.on(
        "episode_summarized",
        "probe",
        probe("out", &summarized, Behaviour::Ok, 0),
    );
    let (persister, kept) = keeper();
    bus.set_persister(Some(persister));
    Setup {
        bus,
        model,
        summarized,
        kept,
        _summarizer: summarizer,
    }
}

fn session_ended(s: &Setup, data: Value) {
    let data: Map<String, Value> = serde_json::from_value(data).unwrap();
    s.bus.emit(BusEvent::new(
        "session_ended",
        "nous",
        Some("s-1".into()),
        data,
        0.0,
    ));
    block_on(s.bus.stop());
}

/// The `episode_summarized` events that reached the bus, caught by a persister.
fn capture(s: &Setup) -> Vec<BusEvent> {
    s.kept
        .borrow()
        .iter()
        .filter(|e| e.event_type == "episode_summarized")
        .cloned()
        .collect()
}

fn transcript(chars: usize) -> String {
    "User: hello\n\n".chars().cycle().take(chars).collect()
}

#[test]
fn a_session_with_a_transcript_is_summarized_and_the_summary_emitted() {
    // Seed tests 9 and 12.
    let s = setup(Ok(SUMMARY));
    session_ended(
        &s,
        json!({"episode_id": "ep-1", "transcript": transcript(200), "user_id": "u-1"}),
    );
    let kept = capture(&s);
    let prompts = s.model.prompts.borrow();
    assert_eq!(prompts.len(), 1);
    assert!(prompts[0].0.contains(&transcript(200)));
    assert!(prompts[0]
        .0
        .starts_with("Given the following conversation transcript"));
    assert_eq!(prompts[0].1, 500);
    assert_eq!(kept.len(), 1);
    let e = &kept[0];
    assert_eq!(
        (e.agent_id.as_str(), e.session_id.as_deref()),
        ("nous", Some("s-1"))
    );
    assert_eq!(e.data["episode_id"], "ep-1");
    assert_eq!(e.data["user_id"], "u-1");
    assert_eq!(e.data["summary"]["title"], "Key rotation");
    assert_eq!(e.timestamp, 5.0);
    assert_eq!(*s.summarized.borrow(), ["out:episode_summarized:null"]);
}

#[test]
fn short_transcripts_and_events_without_an_episode_are_skipped() {
    // Seed tests 10 and 11.
    let s = setup(Ok(SUMMARY));
    session_ended(
        &s,
        json!({"episode_id": "ep-1", "transcript": transcript(49)}),
    );
    session_ended(&s, json!({"transcript": transcript(500)}));
    session_ended(
        &s,
        json!({"episode_id": null, "transcript": transcript(500)}),
    );
    session_ended(&s, json!({"episode_id": "ep-2"}));
    assert!(s.model.prompts.borrow().is_empty());
    assert!(s.summarized.borrow().is_empty());
    assert_eq!(s.bus.stats().handler_errors, 0);
}

#[test]
fn a_model_failure_or_garbage_is_counted_and_nothing_is_emitted() {
    // Seed test 13, and the seed's JSON decode failure.
    for answer in [
        Err("provider down"),
        Ok("Sure! Here is your summary: it went well."),
        Ok("[1, 2, 3]"),
        Ok(""),
    ] {
        let s = setup(answer);
        session_ended(
            &s,
            json!({"episode_id": "ep-1", "transcript": transcript(300)}),
        );
        assert!(s.summarized.borrow().is_empty(), "{answer:?}");
        let stats = s.bus.stats();
        assert_eq!(stats.handlers["episode-summarizer"].errors, 1, "{answer:?}");
    }
}

#[test]
fn a_fenced_json_answer_is_accepted() {
    let s = setup(Ok("```json\n{\"title\":\"t\",\"summary\":\"s\"}\n```"));
    session_ended(
        &s,
        json!({"episode_id": "ep-1", "transcript": transcript(300)}),
    );
    assert_eq!(s.summarized.borrow().len(), 1);
}

#[test]
fn long_transcripts_keep_head_and_tail_around_the_marker() {
    // Seed test 14: over 8,000 characters, 3,800 from each end.
    let s = setup(Ok(SUMMARY));
    let long: String = (0..9000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    session_ended(&s, json!({"episode_id": "ep-1", "transcript": long}));
    let prompt = s.model.prompts.borrow()[0].0.clone();
    let expected = format!(
        "{}{MIDDLE_TRUNCATED}{}",
        &long[..3800],
        &long[9000 - 3800..]
    );
    assert!(prompt.contains(&expected));
    assert!(!prompt.contains(&long[..3801]));
    // Exactly 8,000 characters are kept whole.
    let s = setup(Ok(SUMMARY));
    let exact: String = "é".repeat(8000);
    session_ended(&s, json!({"episode_id": "ep-1", "transcript": exact}));
    assert!(s.model.prompts.borrow()[0].0.contains(&"é".repeat(8000)));
}
