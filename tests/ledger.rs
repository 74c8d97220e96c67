//! A context's ledger: every part of it with the events behind it, why it
//! is there and what it costs, adding up to the context's exact count; and
//! what the compile left out. (Every compile's ledger adding up is checked
//! on random sessions in `budget_property.rs`.)
mod common;

use std::collections::BTreeSet;
use std::rc::Rc;

use common::{block_on, exchange, session_with, tool_exchange};
use context_compiler::working_context::{
    ArtifactRef, DropAction, DroppedItem, Excluded, ExclusionReason, HistoryMessage,
    InclusionReason, Ledger, MemoryHit, RecalledTurn, Section, ToolResult,
};
use context_compiler::zones::Zone;
use context_compiler::{
    Compactor, CompileOptions, ContextCompiler, DefaultTokenCounter, HistorySelector, Layout,
    Session, TokenCounter, WorkingContext,
};
use serde_json::json;

fn hit(key: &str) -> MemoryHit {
    serde_json::from_value(json!({ "key": key, "content": format!("what {key} says") }))
        .expect("a memory hit")
}

fn message(role: &str, content: &str, event: &str) -> HistoryMessage {
    let mut m = HistoryMessage::new(role, content);
    m.event_id = Some(event.to_string());
    m
}

/// A zoned context holding one of everything.
fn everything() -> WorkingContext {
    let mut ctx = WorkingContext::new("You are terse.", 10_000);
    ctx.layout = Layout::Zoned;
    ctx.tool_tokens = 42;
    ctx.goal = Some("ship the release".into());
    ctx.state_digest = Some(json!({ "step": 3 }));
    ctx.pinned_memories = vec![hit("style")];
    ctx.summary = Some("Earlier the user asked for a changelog.".into());
    let mut pinned = message("user", "first question", "e0");
    pinned.zone = Some(Zone::Persistent);
    let mut thought = message("assistant", "thinking it over", "e1");
    thought.reasoning = Some(
        json!({ "format": "anthropic", "items": [{ "type": "thinking", "thinking": "a long chain of thought", "signature": "c2ln" }] }),
    );
    let mut masked = message("tool", "[output masked: 4 KB of logs]", "e3");
    masked.tool_call_id = Some("call_1".into());
    masked.masked = true;
    let mut call = message("assistant", "", "e2");
    call.tool_calls = vec![serde_json::from_value(
        json!({ "id": "call_1", "name": "read_logs", "arguments": "{}" }),
    )
    .expect("a call")];
    let mut external = message("tool", "[artifact a1] 80 KB listing", "e5");
    external.tool_call_id = Some("call_2".into());
    external.artifact = Some(
        serde_json::from_value(
            json!({ "handle": "a1", "summary": "80 KB listing", "sizeBytes": 80000 }),
        )
        .expect("a ref"),
    );
    let mut call2 = message("assistant", "", "e4");
    call2.tool_calls = vec![serde_json::from_value(
        json!({ "id": "call_2", "name": "list_files", "arguments": "{}" }),
    )
    .expect("a call")];
    let mut picture = message("user", "what is in this picture?", "e6");
    picture.media = vec![serde_json::from_value(
        json!({ "type": "image", "mediaType": "image/png", "url": "https://example.com/a.png", "tokens": 85 }),
    )
    .expect("a media part")];
    ctx.history = [pinned, thought, call, masked, call2, external, picture]
        .map(std::rc::Rc::new)
        .into();
    ctx.recalled = vec![RecalledTurn {
        event_id: "e-old".into(),
        position: 0,
        role: "user".into(),
        content: "my dentist is on Tuesday".into(),
        timestamp: 1_700_000_000_000.0,
        score: 3.0,
    }];
    ctx.memory_hits = vec![hit("dentist")];
    ctx.artifact_refs = vec![serde_json::from_value::<ArtifactRef>(
        json!({ "handle": "a2", "summary": "a report", "sizeBytes": 9000, "eventId": "e-rep" }),
    )
    .expect("a ref")];
    ctx.tool_results = vec![ToolResult {
        tool: "clock".into(),
        result: "09:00".into(),
        event_id: Some("e-clock".into()),
        tokens: None,
    }];
    ctx.task_state = Some("write the notes".into());
    ctx.dropped = vec![
        DroppedItem::new(
            Section::History,
            DropAction::Summarized,
            Some("e-s".into()),
            30,
        ),
        DroppedItem::new(
            Section::History,
            DropAction::Dropped,
            Some("e-d".into()),
            20,
        ),
        DroppedItem::new(Section::History, DropAction::Masked, Some("e3".into()), 900),
        DroppedItem::new(Section::History, DropAction::Refused, Some("e6".into()), 5),
    ];
    ctx
}

#[test]
fn every_part_is_accounted_for_with_its_reason_and_events() {
    let counter = DefaultTokenCounter;
    let ctx = everything();
    let ledger = ctx.ledger(&counter);
    let total: u64 = ledger.included.iter().map(|p| p.tokens).sum();
    assert_eq!(total, ctx.exact_token_count(&counter));
    let reasons: BTreeSet<String> = ledger
        .included
        .iter()
        .map(|p| format!("{:?}", p.reason))
        .collect();
    for reason in [
        "System",
        "Tools",
        "Pinned",
        "Selected",
        "Recalled",
        "Summary",
        "Masked",
        "Externalised",
        "Memory",
        "Goal",
        "State",
        "Task",
        "ToolResult",
        "Reasoning",
        "Media",
    ] {
        assert!(
            reasons.contains(reason),
            "{reason} missing from {reasons:?}"
        );
    }
    let find = |reason: InclusionReason| {
        ledger
            .included
            .iter()
            .filter(move |p| p.reason == reason)
            .collect::<Vec<_>>()
    };
    assert_eq!(find(InclusionReason::Pinned)[0].zone, Zone::Persistent);
    assert_eq!(find(InclusionReason::Pinned)[0].event_ids, ["e0"]);
    assert_eq!(find(InclusionReason::Masked)[0].event_ids, ["e3"]);
    assert_eq!(find(InclusionReason::Reasoning)[0].event_ids, ["e1"]);
    assert_eq!(find(InclusionReason::Media)[0].tokens, 85);
    assert_eq!(find(InclusionReason::Tools)[0].tokens, 42);
    assert_eq!(find(InclusionReason::Recalled)[0].event_ids, ["e-old"]);
    assert_eq!(find(InclusionReason::Recalled)[0].zone, Zone::Recent);
    assert_eq!(find(InclusionReason::Summary)[0].event_ids, ["e-s"]);
    assert_eq!(find(InclusionReason::Summary)[0].zone, Zone::Working);
    let externalised: Vec<&str> = find(InclusionReason::Externalised)
        .iter()
        .flat_map(|p| p.event_ids.iter().map(String::as_str))
        .collect();
    assert_eq!(externalised, ["e5", "e-rep"]);
    assert_eq!(find(InclusionReason::ToolResult)[0].event_ids, ["e-clock"]);
    // The goal is in PERSISTENT and restated in RECENT.
    let goals: Vec<Zone> = find(InclusionReason::Goal).iter().map(|p| p.zone).collect();
    assert_eq!(goals, [Zone::Persistent, Zone::Recent]);
    // Each zone's parts add up to what the zone costs.
    for zone in Zone::ALL {
        let parts: u64 = ledger
            .included
            .iter()
            .filter(|p| p.zone == zone)
            .map(|p| p.tokens)
            .sum();
        assert_eq!(parts, ctx.zone_usage_of(&counter).get(zone), "{zone:?}");
    }
    let excluded: Vec<(ExclusionReason, u64)> = ledger
        .excluded
        .iter()
        .map(|e| (e.reason, e.tokens))
        .collect();
    assert_eq!(
        excluded,
        [
            (ExclusionReason::Compacted, 30),
            (ExclusionReason::Budget, 20),
            (ExclusionReason::Masked, 900),
            (ExclusionReason::Refused, 5),
        ]
    );
}

#[test]
fn the_single_system_layout_and_the_placeholder_are_accounted_for() {
    let counter = DefaultTokenCounter;
    let mut ctx = everything();
    ctx.layout = Layout::SingleSystem;
    // A conversation opening with the assistant gets the placeholder.
    ctx.history.remove(0);
    let ledger = ctx.ledger(&counter);
    let total: u64 = ledger.included.iter().map(|p| p.tokens).sum();
    assert_eq!(total, ctx.exact_token_count(&counter));
    let reasons: Vec<InclusionReason> = ledger.included.iter().map(|p| p.reason).collect();
    assert!(
        reasons.contains(&InclusionReason::Placeholder),
        "{reasons:?}"
    );
    assert!(reasons.contains(&InclusionReason::Memory), "{reasons:?}");
    assert!(
        reasons.contains(&InclusionReason::ToolResult),
        "{reasons:?}"
    );
    let system: u64 = ledger
        .included
        .iter()
        .filter(|p| p.zone == Zone::System)
        .map(|p| p.tokens)
        .sum();
    assert_eq!(system, ctx.zone_usage_of(&counter).get(Zone::System));
}

/// A session of 60 exchanges (session `id`, the default counter) and a
/// zoned compiler that compacts: at 1,500 tokens it folds most of them.
fn sixty_turns_and_a_compactor(id: &str) -> (Rc<dyn TokenCounter>, Session, ContextCompiler) {
    let counter: Rc<dyn TokenCounter> = Rc::new(DefaultTokenCounter);
    let mut s = session_with(id, counter.clone());
    for i in 0..60 {
        exchange(
            &mut s,
            &format!("question {i} about the deployment of service {i} and its logs"),
            &format!("answer {i}: the service {i} deployed after two retries, see the runbook"),
        );
    }
    let compiler = ContextCompiler::with_layout(
        vec![
            Rc::new(HistorySelector::new(1, usize::MAX)),
            Rc::new(Compactor::new()),
        ],
        Layout::Zoned,
    );
    (counter, s, compiler)
}

#[test]
fn a_compile_s_ledger_names_what_compaction_folded() {
    let (counter, mut s, compiler) = sixty_turns_and_a_compactor("ledger");
    let ctx = block_on(compiler.compile_with(&mut s, 1_500, &CompileOptions::new("Be brief.")))
        .expect("compiled");
    let ledger = ctx.ledger(counter.as_ref());
    let total: u64 = ledger.included.iter().map(|p| p.tokens).sum();
    assert_eq!(total, ctx.token_count);
    let summary: Vec<_> = ledger
        .included
        .iter()
        .filter(|p| p.reason == InclusionReason::Summary)
        .collect();
    assert_eq!(summary.len(), 1, "{:?}", ledger.included);
    let compacted = compacted_ids(&ledger);
    assert!(!compacted.is_empty());
    assert_eq!(
        summary[0].event_ids.iter().collect::<BTreeSet<_>>(),
        compacted
    );
    // No turn is both shown and folded into the summary.
    for part in ledger
        .included
        .iter()
        .filter(|p| p.reason != InclusionReason::Summary)
    {
        for id in &part.event_ids {
            assert!(!compacted.contains(id), "{id} both in and out");
        }
    }
}

/// The events the ledger's `compacted` exclusions name.
fn compacted_ids(ledger: &Ledger) -> BTreeSet<&String> {
    ledger
        .excluded
        .iter()
        .filter(|e| e.reason == ExclusionReason::Compacted)
        .flat_map(|e| &e.event_ids)
        .collect()
}

/// The ledger's `window` entry, if it has one.
fn window_entry(ledger: &Ledger) -> Option<&Excluded> {
    ledger
        .excluded
        .iter()
        .find(|e| e.reason == ExclusionReason::Window)
}

#[test]
fn turns_the_window_never_reached_are_one_window_entry() {
    let mut s = session_with("window", Rc::new(DefaultTokenCounter));
    for i in 0..30 {
        exchange(
            &mut s,
            &format!("question {i} about service {i}"),
            &format!("answer {i}: service {i} is up"),
        );
    }
    let windowed =
        ContextCompiler::with_layout(vec![Rc::new(HistorySelector::new(1, 6))], Layout::Zoned);
    let ctx = block_on(windowed.compile_with(&mut s, 50_000, &CompileOptions::new("Be brief.")))
        .expect("compiled");
    let ledger = ctx.ledger_for(&s);
    let named: BTreeSet<&String> = ledger
        .included
        .iter()
        .flat_map(|p| &p.event_ids)
        .chain(ledger.excluded.iter().flat_map(|e| &e.event_ids))
        .collect();
    let unreached: Vec<_> = s
        .event_log()
        .events()
        .iter()
        .filter(|e| !named.contains(&e.event_id))
        .collect();
    let windows = ledger
        .excluded
        .iter()
        .filter(|e| e.reason == ExclusionReason::Window)
        .count();
    assert_eq!(windows, 1, "{:?}", ledger.excluded);
    let window = window_entry(&ledger).expect("a window entry");
    assert!(unreached.len() > 40, "a window of 6 turns leaves most out");
    assert_eq!(window.count, Some(unreached.len() as u64));
    assert_eq!(
        window.tokens,
        unreached.iter().map(|e| e.token_estimate).sum::<u64>()
    );
    assert!(window.event_ids.is_empty());
    // The ledger without the session has no window entry; the parts agree.
    let alone = ctx.ledger(&DefaultTokenCounter);
    assert_eq!(alone.included, ledger.included);
    assert!(window_entry(&alone).is_none());

    // A window that reaches every turn leaves nothing out.
    let whole = ContextCompiler::with_layout(
        vec![Rc::new(HistorySelector::new(1, usize::MAX))],
        Layout::Zoned,
    );
    let ctx = block_on(whole.compile_with(&mut s, 50_000, &CompileOptions::new("Be brief.")))
        .expect("compiled");
    assert!(window_entry(&ctx.ledger_for(&s)).is_none());
    // Against a session shorter than the one compiled: no window entry.
    let other = session_with("other", Rc::new(DefaultTokenCounter));
    let ctx = block_on(windowed.compile_with(&mut s, 50_000, &CompileOptions::new("Be brief.")))
        .expect("compiled");
    assert!(window_entry(&ctx.ledger_for(&other)).is_none());
}

/// A summary written by an earlier compile and carried into this one names
/// the turns it stands for: its part lists them and they are `compacted`,
/// not outside the window; an assistant message of calls names its
/// `tool_call` events.
#[test]
fn a_carried_summary_names_its_turns_and_calls_name_their_events() {
    let (counter, mut s, compiler) = sixty_turns_and_a_compactor("carried");
    let options = CompileOptions::new("Be brief.");
    let first = block_on(compiler.compile_with(&mut s, 1_500, &options)).expect("compiled");
    let first_ledger = first.ledger(counter.as_ref());
    let folded_first: BTreeSet<String> =
        compacted_ids(&first_ledger).into_iter().cloned().collect();
    assert!(!folded_first.is_empty());
    s.record("user_input", json!({"text": "check the disk"}), None)
        .unwrap();
    let call = tool_exchange(&mut s, "df", json!({"path": "/"}), "91% used");
    let ctx = block_on(compiler.compile_with(&mut s, 1_500, &options)).expect("compiled");
    assert!(ctx.summary.is_some());
    let ledger = ctx.ledger_for(&s);
    let summary = ledger
        .included
        .iter()
        .find(|p| p.reason == InclusionReason::Summary)
        .expect("a summary part");
    let listed: BTreeSet<&String> = summary.event_ids.iter().collect();
    for id in &folded_first {
        assert!(listed.contains(id), "{id} folded earlier, not listed");
    }
    let compacted = compacted_ids(&ledger);
    assert_eq!(listed, compacted);
    // Every event the compile read is named once: shown, or excluded.
    let named: Vec<&String> = ledger
        .included
        .iter()
        .filter(|p| p.reason != InclusionReason::Summary)
        .flat_map(|p| &p.event_ids)
        .collect();
    for id in &named {
        assert!(!compacted.contains(id), "{id} both in and out");
    }
    assert!(
        window_entry(&ledger).is_none(),
        "every turn is shown or folded: {:?}",
        ledger.excluded
    );
    // The assistant message of the call names the tool_call event.
    assert!(named.contains(&&call), "{:?}", ledger.included);
}
