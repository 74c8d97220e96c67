//! The sleep handler (seed 003, phase L tests 34-41): five phases over a
//! real memory, free ones first, woken by `message_received`.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use context_compiler::bus::{
    BusEvent, BusOptions, EventBus, SleepHandler, SleepOptions, SLEEP_PHASES,
};
use context_compiler::memory::{MemoryEntry, MemoryFilter};
use context_compiler::InMemoryBackend;
use serde_json::{json, Map, Value};

use common::block_on;
use common::bus::{keeper, Kept, ManualClock};
use common::model::ScriptedModel;

const DAY: f64 = 24.0 * 3_600_000.0;
const NOW: f64 = 100.0 * DAY;

const DIGEST: &str = r#"{"summary": "Early work set up the deploy pipeline.", "key_points": ["pipeline", "staging"]}"#;
const REFLECTION: &str = r#"{"patterns": ["deploy questions"], "lessons": ["Check staging first", "Ask for units", "Keep answers short", "A fourth lesson"], "summary": "A day of deploy work."}"#;
const GENERAL: &str = r#"{"subject": "deploy", "content": "Deploys run on Fridays through the staging pipeline", "confidence": 0.9}"#;

struct Setup {
    bus: EventBus,
    model: Rc<ScriptedModel>,
    memory: Rc<InMemoryBackend>,
    events: Kept,
    _sleep: SleepHandler,
}

fn setup(answers: &[std::result::Result<&str, &str>]) -> Setup {
    let clock = ManualClock::at(NOW);
    let bus = EventBus::new(clock.clone(), BusOptions::default()).unwrap();
    let model = Rc::new(ScriptedModel::new(answers));
    let memory = Rc::new(InMemoryBackend::with_clock(clock));
    let sleep = SleepHandler::new(&bus, model.clone(), memory.clone(), SleepOptions::default());
    let (persister, events) = keeper();
    bus.set_persister(Some(persister));
    Setup {
        bus,
        model,
        memory,
        events,
        _sleep: sleep,
    }
}

fn entry(
    key: &str,
    content: &str,
    category: &str,
    subject: Option<&str>,
    confidence: Option<f64>,
    age_days: f64,
) -> MemoryEntry {
    MemoryEntry {
        subject: subject.map(str::to_string),
        confidence,
        created_at: Some(NOW - age_days * DAY),
        ..MemoryEntry::new(key, content, category)
    }
}

/// A memory with work for every phase.
fn fill(memory: &InMemoryBackend) {
    // review: a doubtful fact and a near-duplicate pair.
    memory.insert(entry(
        "doubt",
        "The user might like jazz",
        "preference",
        Some("user"),
        Some(0.3),
        1.0,
    ));
    memory.insert(entry(
        "tea-1",
        "The user drinks green tea",
        "preference",
        Some("user"),
        Some(0.7),
        2.0,
    ));
    memory.insert(entry(
        "tea-2",
        "the user drinks GREEN tea.",
        "preference",
        Some("user"),
        Some(0.9),
        1.0,
    ));
    // prune: unused for 40 days, unless kept or recalled lately.
    memory.insert(entry(
        "stale",
        "An old port number was 8080",
        "technical",
        Some("service"),
        Some(0.8),
        40.0,
    ));
    memory.insert(entry(
        "core-old",
        "The agent's name is Nous",
        "core",
        None,
        None,
        40.0,
    ));
    memory.insert(entry(
        "used-old",
        "The database is Postgres",
        "technical",
        Some("db"),
        Some(0.8),
        40.0,
    ));
    memory.mark_recalled("used-old", NOW - DAY);
    // compress: two episodes older than a week.
    memory.insert(entry(
        "episode:old-1",
        "Pipeline: the user built the deploy pipeline",
        "episode",
        None,
        None,
        10.0,
    ));
    memory.insert(entry(
        "episode:old-2",
        "Staging: the user added a staging step",
        "episode",
        None,
        None,
        9.0,
    ));
    // reflect: two episodes of today.
    memory.insert(entry(
        "episode:new-1",
        "Deploy: the user asked why the deploy failed",
        "episode",
        None,
        None,
        0.2,
    ));
    memory.insert(entry(
        "episode:new-2",
        "Units: the user asked for metric units",
        "episode",
        None,
        None,
        0.1,
    ));
    // generalize: six facts about one subject.
    for i in 0..6 {
        memory.insert(entry(
            &format!("deploy-{i}"),
            &format!("Deploy detail {i}: step{i} runs on Fridays"),
            "rule",
            Some("deploy"),
            Some(0.8),
            1.0,
        ));
    }
}

fn sleep_started(s: &Setup) {
    let mut data = Map::new();
    data.insert("idle_seconds".into(), json!(7200));
    s.bus
        .emit(BusEvent::new("sleep_started", "system", None, data, NOW));
    block_on(s.bus.stop());
}

fn completed(s: &Setup) -> Vec<BusEvent> {
    s.events
        .borrow()
        .iter()
        .filter(|e| e.event_type == "sleep_completed")
        .cloned()
        .collect()
}

fn keys(memory: &InMemoryBackend) -> Vec<String> {
    memory
        .entries(&MemoryFilter::default())
        .into_iter()
        .map(|e| e.key)
        .collect()
}

#[test]
fn all_five_phases_run_in_order_and_each_changes_memory() {
    // Seed tests 34, 36 and 37.
    let s = setup(&[Ok(DIGEST), Ok(REFLECTION), Ok(GENERAL)]);
    fill(&s.memory);
    let memory = s.memory.clone();
    let seen_at_first_call = Rc::new(RefCell::new(None));
    let seen = seen_at_first_call.clone();
    s.model.on_call(move |_| {
        seen.borrow_mut().get_or_insert_with(|| keys(&memory));
    });
    sleep_started(&s);
    let done = completed(&s);
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].data["phases_completed"], json!(SLEEP_PHASES));
    assert_eq!(done[0].data["interrupted"], json!(false));
    assert_eq!(done[0].data["phases_failed"], json!([]));
    assert_eq!(
        done[0].data["changes"],
        json!({"review": 2, "prune": 1, "compress": 2, "reflect": 4, "generalize": 6})
    );
    assert_eq!(done[0].agent_id, "system");
    // Free phases ran before the first model call.
    let before = seen_at_first_call.borrow().clone().unwrap();
    for gone in ["doubt", "tea-1", "stale"] {
        assert!(
            !before.contains(&gone.to_string()),
            "{gone} was removed before any model call"
        );
    }
    let prompts = s.model.asked();
    assert_eq!(prompts.len(), 3);
    assert!(prompts[0].contains("Compress them into one digest"));
    assert!(prompts[0].contains(
        "- Pipeline: the user built the deploy pipeline\n- Staging: the user added a staging step"
    ));
    assert!(prompts[1].starts_with("You are an AI agent reviewing your recent activity"));
    assert!(prompts[2].starts_with("These facts are about the same topic"));
    assert!(prompts[2].contains("- Deploy detail 5: step5 runs on Fridays"));

    let after = s.memory.entries(&MemoryFilter::default());
    let has = |key: &str| after.iter().any(|e| e.key == key);
    assert!(has("tea-2") && has("core-old") && has("used-old"));
    assert!(!has("episode:old-1") && !has("episode:old-2"));
    assert!(has("episode:new-1") && has("episode:new-2"));
    let digest: Vec<&MemoryEntry> = after
        .iter()
        .filter(|e| e.category == "episode_digest")
        .collect();
    assert_eq!(digest.len(), 1);
    assert_eq!(
        digest[0].content,
        "Early work set up the deploy pipeline. Key points: pipeline; staging."
    );
    let deploy: Vec<&MemoryEntry> = after
        .iter()
        .filter(|e| e.subject.as_deref() == Some("deploy"))
        .collect();
    assert_eq!(deploy.len(), 1, "six facts generalized into one");
    assert_eq!(
        deploy[0].content,
        "Deploys run on Fridays through the staging pipeline"
    );
    assert_eq!(deploy[0].category, "rule");
    assert_eq!(deploy[0].confidence, Some(0.9));
    assert_eq!(s.bus.stats().handler_errors, 0);
}

#[test]
fn reflection_stores_its_summary_and_three_lessons_as_facts() {
    // Seed test 39.
    let s = setup(&[Ok(REFLECTION)]);
    fill(&s.memory);
    // Only reflection has work: no old episodes, no large cluster.
    for key in ["episode:old-1", "episode:old-2"] {
        s.memory.forget(key);
    }
    for i in 0..6 {
        s.memory.forget(&format!("deploy-{i}"));
    }
    sleep_started(&s);
    let prompts = s.model.asked();
    assert_eq!(prompts.len(), 1);
    assert!(prompts[0].contains("- Units: the user asked for metric units\n\n- Deploy: the user asked why the deploy failed"), "newest first");
    let reflections = s.memory.entries(&MemoryFilter {
        subject: Some("daily_reflection".into()),
        ..MemoryFilter::default()
    });
    assert_eq!(reflections.len(), 1);
    assert_eq!(reflections[0].content, "A day of deploy work.");
    assert_eq!(reflections[0].confidence, Some(0.8));
    assert_eq!(reflections[0].source.as_deref(), Some("sleep_reflection"));
    let lessons: Vec<String> = s
        .memory
        .entries(&MemoryFilter {
            subject: Some("lesson_learned".into()),
            ..MemoryFilter::default()
        })
        .into_iter()
        .map(|e| {
            assert_eq!(e.confidence, Some(0.7));
            e.content
        })
        .collect();
    assert_eq!(
        lessons,
        ["Check staging first", "Ask for units", "Keep answers short"]
    );
    // A later compile recalls the lesson.
    let hits = block_on(context_compiler::MemoryStore::recall(
        &*s.memory,
        "check staging",
        1,
    ))
    .unwrap();
    assert_eq!(hits[0].content, "Check staging first");
}

#[test]
fn reflection_is_skipped_with_fewer_than_two_recent_episodes() {
    // Seed test 40.
    let s = setup(&[Ok(REFLECTION)]);
    s.memory.insert(entry(
        "episode:new-1",
        "Deploy: one episode today",
        "episode",
        None,
        None,
        0.1,
    ));
    s.memory.insert(entry(
        "episode:week",
        "Older: an episode three days ago",
        "episode",
        None,
        None,
        3.0,
    ));
    sleep_started(&s);
    assert!(s.model.asked().is_empty());
    let done = completed(&s);
    assert_eq!(done[0].data["phases_completed"], json!(SLEEP_PHASES));
    assert_eq!(done[0].data["changes"]["reflect"], json!(0));
}

#[test]
fn message_received_wakes_the_sleep_after_the_running_phase() {
    // Seed tests 35 and 38: the phase in progress (compress) finishes, the
    // rest are skipped.
    let s = setup(&[Ok(DIGEST), Ok(REFLECTION), Ok(GENERAL)]);
    fill(&s.memory);
    let bus = s.bus.clone();
    s.model.on_call(move |_| {
        let mut data = Map::new();
        data.insert("n".into(), json!(1));
        bus.emit(BusEvent::new(
            "message_received",
            "nous",
            Some("s-2".into()),
            data,
            NOW,
        ));
    });
    sleep_started(&s);
    let done = completed(&s);
    assert_eq!(
        done[0].data["phases_completed"],
        json!(["review", "prune", "compress"])
    );
    assert_eq!(done[0].data["interrupted"], json!(true));
    assert_eq!(s.model.asked().len(), 1, "no model call after the wake-up");
    assert!(s.memory.get("episode:old-1").is_none(), "compress finished");
    assert!(s.memory.get("deploy-0").is_some(), "generalize was skipped");
    // The message itself still reached the bus, after the sleep.
    let types: Vec<String> = s
        .events
        .borrow()
        .iter()
        .map(|e| e.event_type.clone())
        .collect();
    assert_eq!(
        types,
        ["sleep_started", "message_received", "sleep_completed"]
    );
}

#[test]
fn a_message_before_the_sleep_does_not_wake_it_and_a_new_sleep_starts_fresh() {
    let s = setup(&[Ok(DIGEST)]);
    s.bus.emit(BusEvent::new(
        "message_received",
        "nous",
        None,
        Map::new(),
        NOW,
    ));
    sleep_started(&s);
    let s2_done = completed(&s);
    assert_eq!(s2_done[0].data["interrupted"], json!(false));
    sleep_started(&s);
    assert_eq!(completed(&s).len(), 2);
    assert_eq!(completed(&s)[1].data["interrupted"], json!(false));
}

#[test]
fn a_failing_model_fails_its_phases_only_and_the_bus_goes_on() {
    // Seed test 41.
    for answer in [
        Err("provider down"),
        Ok("no JSON here"),
        Ok("{\"unrelated\": true}"),
    ] {
        let s = setup(&[answer]);
        fill(&s.memory);
        sleep_started(&s);
        let done = completed(&s);
        assert_eq!(done.len(), 1, "{answer:?}");
        assert_eq!(
            done[0].data["phases_completed"],
            json!(["review", "prune"]),
            "{answer:?}"
        );
        let failed: Vec<Value> = done[0].data["phases_failed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["phase"].clone())
            .collect();
        assert_eq!(
            failed,
            [json!("compress"), json!("reflect"), json!("generalize")]
        );
        assert_eq!(s.bus.stats().handlers["sleep-handler"].errors, 1);
        // Nothing the failed phases would have removed is gone.
        assert!(s.memory.get("episode:old-1").is_some());
        assert!(s.memory.get("deploy-0").is_some());
        // The bus still dispatches.
        s.bus
            .emit(BusEvent::new("anything", "a", None, Map::new(), NOW));
        block_on(s.bus.stop());
        assert_eq!(s.events.borrow().last().unwrap().event_type, "anything");
    }
}

#[test]
fn episode_summaries_seen_on_the_bus_become_episodes_in_memory() {
    let s = setup(&[Ok(REFLECTION)]);
    for (id, title) in [("ep-1", "Deploy"), ("ep-2", "Units")] {
        let mut data = Map::new();
        data.insert("episode_id".into(), json!(id));
        data.insert("user_id".into(), json!("u-7"));
        data.insert(
            "summary".into(),
            json!({"title": title, "summary": format!("The user worked on {title}.")}),
        );
        s.bus.emit(BusEvent::new(
            "episode_summarized",
            "nous",
            Some("s".into()),
            data,
            NOW,
        ));
    }
    let mut no_summary = Map::new();
    no_summary.insert("episode_id".into(), json!("ep-3"));
    s.bus.emit(BusEvent::new(
        "episode_summarized",
        "nous",
        None,
        no_summary,
        NOW,
    ));
    sleep_started(&s);
    let ep = s.memory.get("episode:ep-1").expect("kept");
    assert_eq!(ep.content, "Deploy: The user worked on Deploy.");
    assert_eq!(ep.category, "episode");
    assert_eq!(ep.subject.as_deref(), Some("u-7"));
    assert!(s.memory.get("episode:ep-3").is_none());
    // They are what reflection reads.
    assert_eq!(s.model.asked().len(), 1);
    assert!(s.model.asked()[0].contains("- Units: The user worked on Units."));
}

#[test]
fn dropping_the_handler_unregisters_it() {
    let s = setup(&[Ok(DIGEST)]);
    let Setup {
        bus,
        _sleep,
        events,
        ..
    } = s;
    drop(_sleep);
    bus.emit(BusEvent::new(
        "sleep_started",
        "system",
        None,
        Map::new(),
        NOW,
    ));
    block_on(bus.stop());
    assert!(events
        .borrow()
        .iter()
        .all(|e| e.event_type != "sleep_completed"));
    assert!(bus.stats().handlers["sleep-handler"].calls == 0);
}
