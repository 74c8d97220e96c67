//! Seed 004's `ContextCompiler`, here `ContextWindow`: every behaviour the
//! seed states, and that a compile never exceeds `max_context_tokens`.
mod common;

use std::rc::Rc;

use common::StepClock;
use context_compiler::context_window::{
    DEFAULT_MESSAGE_IMPORTANCE, DEFAULT_RECENT_IMPORTANCE, FAILED_TOOL_IMPORTANCE,
    SUCCESSFUL_TOOL_IMPORTANCE,
};
use context_compiler::tokens::{DefaultTokenCounter, TokenCounter};
use context_compiler::working_context::DropAction;
use context_compiler::{
    CompactionLevel, ContextWindow, ErrorCode, Zone, ZoneBudgets, COMPACT_EMERGENCY, COMPACT_FULL,
    COMPACT_LIGHT, DEFAULT_ZONE_BUDGETS,
};
use serde_json::json;

/// One token per character, no per-message overhead: exact arithmetic.
struct CharCounter;

impl TokenCounter for CharCounter {
    fn count(&self, text: &str) -> u64 {
        text.chars().count() as u64
    }
}

fn window(max: u64) -> ContextWindow {
    ContextWindow::new(
        max,
        None,
        Rc::new(DefaultTokenCounter),
        StepClock::new(1_700_000_000_000.0, 1.0),
    )
    .unwrap()
}

fn char_window(max: u64) -> ContextWindow {
    ContextWindow::new(max, None, Rc::new(CharCounter), StepClock::new(0.0, 1.0)).unwrap()
}

/// The seed's usage example.
fn seed_example() -> ContextWindow {
    let mut w = window(128_000);
    w.set_system_prompt("You are a helpful coding assistant.");
    w.set_goal("Build a REST API for user management");
    w.set_user_preferences(json!({"language": "en", "verbosity": "concise"}))
        .unwrap();
    w.set_policies(vec![
        "Never expose PII".into(),
        "Always validate input".into(),
    ]);
    w.set_tool_definitions(vec![
        json!({"name": "code_writer"}),
        json!({"name": "bash"}),
    ])
    .unwrap();
    w.set_brain_digest(json!({"active_concept": "rest_api", "confidence": 0.85}))
        .unwrap();
    w.set_task_state("Creating the User model");
    w.append_message("user", "Create the user model", None)
        .unwrap();
    w.append_message("assistant", "Here is the User model...", None)
        .unwrap();
    w.append_tool_result("code_writer", "file created: models/user.py", true)
        .unwrap();
    w.add_recent_message("user", "Now add validation", Some(0.9))
        .unwrap();
    w
}

#[test]
fn constants_are_the_seeds() {
    assert_eq!(COMPACT_LIGHT, 0.80);
    assert_eq!(COMPACT_FULL, 0.90);
    assert_eq!(COMPACT_EMERGENCY, 0.95);
    assert_eq!(
        (
            DEFAULT_ZONE_BUDGETS.system,
            DEFAULT_ZONE_BUDGETS.persistent,
            DEFAULT_ZONE_BUDGETS.working,
            DEFAULT_ZONE_BUDGETS.recent
        ),
        (0.12, 0.08, 0.40, 0.40)
    );
}

#[test]
fn zone_ratios_default_and_custom() {
    let w = window(100_000);
    assert_eq!(w.zone_budgets(), DEFAULT_ZONE_BUDGETS);
    assert_eq!(w.zone_budgets().tokens(Zone::Working, 100_000), 40_000);
    let custom = ZoneBudgets {
        system: 0.2,
        persistent: 0.1,
        working: 0.3,
        recent: 0.4,
    };
    let w = ContextWindow::new(
        1_000,
        Some(custom),
        Rc::new(DefaultTokenCounter),
        StepClock::new(0.0, 1.0),
    )
    .unwrap();
    assert_eq!(w.zone_budgets().tokens(Zone::System, 1_000), 200);
    assert_eq!(w.zone_budgets().tokens(Zone::Recent, 1_000), 400);
    let bad = ZoneBudgets {
        recent: -0.1,
        ..DEFAULT_ZONE_BUDGETS
    };
    let err = ContextWindow::new(
        1_000,
        Some(bad),
        Rc::new(CharCounter),
        StepClock::new(0.0, 1.0),
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    let err =
        ContextWindow::new(0, None, Rc::new(CharCounter), StepClock::new(0.0, 1.0)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidBudget);
}

#[test]
fn every_heading_the_seed_names_and_the_goal_at_both_ends() {
    let ctx = seed_example().compile();
    let m = &ctx.messages;
    let system = &m[0].content;
    assert_eq!(m[0].role, "system");
    assert!(system.starts_with("You are a helpful coding assistant."));
    assert!(system.contains("## Policies\n- Never expose PII\n- Always validate input"));
    assert!(system.contains("## Available Tools\n- code_writer\n- bash"));
    assert!(system.contains("## User Preferences\n{\"language\":\"en\",\"verbosity\":\"concise\"}"));
    let persistent = &m[1].content;
    assert!(persistent.starts_with("## Current Goal\nBuild a REST API for user management"));
    assert!(persistent
        .contains("## Brain State\n{\"active_concept\":\"rest_api\",\"confidence\":0.85}"));
    // WORKING: the conversation and the tool result, in order.
    assert_eq!(
        (m[2].role.as_str(), m[2].content.as_str()),
        ("user", "Create the user model")
    );
    assert_eq!(m[3].role, "assistant");
    assert_eq!(
        (m[4].role.as_str(), m[4].content.as_str()),
        ("tool", "[code_writer] file created: models/user.py")
    );
    // RECENT: task state first, the hot message, the goal restated last.
    assert_eq!(m[5].content, "## Current Task\nCreating the User model");
    assert_eq!(m[6].content, "Now add validation");
    let last = m.last().unwrap();
    assert_eq!(
        last.content,
        "## Goal (restated)\nBuild a REST API for user management"
    );
    assert!(!ctx.compaction_needed);
    assert_eq!(ctx.compaction_level, CompactionLevel::None);
    assert!(ctx.dropped.is_empty());
}

#[test]
fn importance_defaults_and_clamping() {
    let mut w = window(10_000);
    w.append_message("user", "a", None).unwrap();
    w.append_message("user", "b", Some(1.7)).unwrap();
    w.append_message("user", "c", Some(-3.0)).unwrap();
    w.append_tool_result("t", "ok", true).unwrap();
    w.append_tool_result("t", "boom", false).unwrap();
    w.add_recent_message("user", "d", None).unwrap();
    w.add_recent_message("user", "e", Some(f64::INFINITY))
        .unwrap();
    let imp: Vec<f64> = w.working_items().iter().map(|i| i.importance).collect();
    assert_eq!(
        imp,
        vec![
            DEFAULT_MESSAGE_IMPORTANCE,
            1.0,
            0.0,
            SUCCESSFUL_TOOL_IMPORTANCE,
            FAILED_TOOL_IMPORTANCE
        ]
    );
    assert_eq!(
        (
            DEFAULT_MESSAGE_IMPORTANCE,
            SUCCESSFUL_TOOL_IMPORTANCE,
            FAILED_TOOL_IMPORTANCE
        ),
        (0.5, 0.4, 0.8)
    );
    let recent: Vec<f64> = w.recent_items().iter().map(|i| i.importance).collect();
    assert_eq!(recent, vec![DEFAULT_RECENT_IMPORTANCE, 1.0]);
    assert_eq!(DEFAULT_RECENT_IMPORTANCE, 0.7);
    assert_eq!(w.working_items()[4].metadata["success"], json!(false));
    assert_eq!(w.working_items()[4].content, "[t failed] boom");
    let err = w.append_message("user", "x", Some(f64::NAN)).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert_eq!(w.working_items().len(), 5, "a rejected item is not added");
    // Items are stamped by the clock, in order.
    assert!(w.working_items()[0].timestamp < w.working_items()[1].timestamp);
}

#[test]
fn thresholds_at_exactly_80_90_95_percent() {
    for (len, level) in [
        (79, CompactionLevel::None),
        (80, CompactionLevel::Light),
        (89, CompactionLevel::Light),
        (90, CompactionLevel::Full),
        (94, CompactionLevel::Full),
        (95, CompactionLevel::Emergency),
        (100, CompactionLevel::Emergency),
    ] {
        let mut w = char_window(100);
        w.add_recent_message("user", &"x".repeat(len), None)
            .unwrap();
        assert_eq!(w.get_compaction_level(), level, "{len}");
        let ctx = w.compile();
        assert_eq!(ctx.compaction_level, level, "{len}");
        assert_eq!(ctx.compaction_needed, level != CompactionLevel::None);
        assert_eq!(ctx.total_tokens, len as u64);
        let stats = w.get_stats();
        assert_eq!(stats.compaction_level, level);
        assert!((stats.utilization - len as f64 / 100.0).abs() < 1e-12);
        assert_eq!(stats.demand_ratio, stats.utilization);
    }
    // Over the window: utilization is capped at 1.0 (seed 004's range).
    let mut w = char_window(100);
    w.append_message("user", &"x".repeat(1330), None).unwrap();
    let stats = w.get_stats();
    assert_eq!(stats.utilization, 1.0);
    assert!(stats.demand_ratio > 13.0);
    assert_eq!(stats.compaction_level, CompactionLevel::Emergency);
}

#[test]
fn light_and_full_compaction_keep_only_a_summary_in_working_memory() {
    let mut w = seed_example();
    w.write_scratchpad("remember the email index");
    w.compact_working_memory("User model created; validation next.")
        .unwrap();
    assert_eq!(w.working_items().len(), 1);
    assert_eq!(w.working_items()[0].role, "system");
    assert!(w.working_items()[0]
        .content
        .contains("User model created; validation next."));
    assert!(w.scratchpad_notes().is_empty());
    assert_eq!(w.recent_items().len(), 1, "RECENT is kept");
    let ctx = w.compile();
    assert!(
        ctx.messages[0].content.contains("## Policies"),
        "SYSTEM is kept"
    );
    assert!(
        ctx.messages[1].content.contains("## Brain State"),
        "PERSISTENT is kept"
    );
    assert!(ctx
        .messages
        .iter()
        .any(|m| m.content.contains("## Current Task")));
}

#[test]
fn emergency_compaction_keeps_goal_summary_and_last_two_recent_items() {
    let mut w = seed_example();
    w.add_recent_message("assistant", "Adding validators", None)
        .unwrap();
    w.add_recent_message("user", "Use pydantic", None).unwrap();
    w.write_scratchpad("note");
    w.emergency_compact("Built the model; adding validation.")
        .unwrap();
    let stats = w.get_stats();
    assert_eq!(stats.working_items, 1);
    assert_eq!(stats.scratchpad_notes, 0);
    assert_eq!(stats.recent_items, 2);
    assert!(stats.goal_set);
    let recent: Vec<&str> = w
        .recent_items()
        .iter()
        .map(|i| i.content.as_str())
        .collect();
    assert_eq!(recent, vec!["Adding validators", "Use pydantic"]);
    let ctx = w.compile();
    let all: Vec<&str> = ctx.messages.iter().map(|m| m.content.as_str()).collect();
    assert!(all
        .iter()
        .any(|c| c.contains("Built the model; adding validation.")));
    assert!(!all.iter().any(|c| c.contains("## Brain State")));
    assert!(!all.iter().any(|c| c.contains("## Current Task")));
    assert!(all[1].contains("## Current Goal"));
    assert!(all.last().unwrap().contains("## Goal (restated)"));
}

#[test]
fn stats_agree_with_compile() {
    let mut w = seed_example();
    w.write_scratchpad("check the email index");
    let stats = w.get_stats();
    let ctx = w.compile();
    assert_eq!(stats.max_context_tokens, 128_000);
    assert_eq!(stats.system_tokens, ctx.zone_usage.system);
    assert_eq!(stats.persistent_tokens, ctx.zone_usage.persistent);
    assert_eq!(stats.working_tokens, ctx.zone_usage.working);
    assert_eq!(stats.recent_tokens, ctx.zone_usage.recent);
    assert_eq!(stats.total_tokens_estimate, ctx.total_tokens);
    assert_eq!(stats.working_items, 3);
    assert_eq!(stats.scratchpad_notes, 1);
    assert_eq!(stats.recent_items, 1);
    assert_eq!(stats.compaction_level, ctx.compaction_level);
    assert!(stats.goal_set);
    // The total is the messages' exact count under the window's counter.
    let counter = DefaultTokenCounter;
    let exact: u64 = ctx
        .messages
        .iter()
        .map(|m| counter.count(&m.content) + counter.message_overhead())
        .sum();
    assert_eq!(exact, ctx.total_tokens);
    assert!(!window(10).get_stats().goal_set);
}

#[test]
fn compile_never_exceeds_the_window_and_leaves_the_least_important_out_first() {
    let mut w = char_window(100);
    w.set_system_prompt("S");
    w.append_message("user", &"a".repeat(30), Some(0.9))
        .unwrap();
    w.append_message("user", &"b".repeat(30), Some(0.1))
        .unwrap();
    w.append_tool_result("t", &"c".repeat(30), true).unwrap();
    w.add_recent_message("user", &"d".repeat(20), None).unwrap();
    let stats = w.get_stats();
    assert!(stats.total_tokens_estimate > 100);
    let ctx = w.compile();
    assert!(ctx.total_tokens <= 100);
    assert_eq!(ctx.compaction_level, CompactionLevel::Emergency);
    // The 0.1 message goes first, then the 0.4 tool result; 0.9 stays.
    assert_eq!(ctx.dropped[0].action, DropAction::Dropped);
    assert!(ctx.messages.iter().any(|m| m.content.starts_with("aaa")));
    assert!(!ctx.messages.iter().any(|m| m.content.starts_with("bbb")));
    assert_eq!(ctx.messages.last().unwrap().content, "d".repeat(20));
    // The window itself is unchanged.
    assert_eq!(w.working_items().len(), 3);

    // A single item larger than the window is truncated, never exceeded.
    let mut w = char_window(50);
    w.add_recent_message("user", &"z".repeat(500), None)
        .unwrap();
    let ctx = w.compile();
    assert!(ctx.total_tokens <= 50);
    assert_eq!(ctx.dropped[0].action, DropAction::Truncated);
    for max in [1, 2, 7, 33] {
        let ctx = seed_example_with(max).compile();
        assert!(ctx.total_tokens <= max, "{max}");
    }
}

fn seed_example_with(max: u64) -> ContextWindow {
    let mut w = ContextWindow::new(
        max,
        None,
        Rc::new(DefaultTokenCounter),
        StepClock::new(0.0, 1.0),
    )
    .unwrap();
    let full = seed_example();
    w.set_system_prompt("You are a helpful coding assistant.");
    w.set_goal(full.goal().unwrap());
    w.append_message("user", "Create the user model", None)
        .unwrap();
    w.add_recent_message("user", "Now add validation", None)
        .unwrap();
    w
}

#[test]
fn bad_shapes_are_rejected() {
    let mut w = window(1000);
    assert_eq!(
        w.set_tool_definitions(vec![json!({"description": "no name"})])
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    assert!(w.set_user_preferences(json!([1])).is_err());
    assert!(w.set_brain_digest(json!("x")).is_err());
}
