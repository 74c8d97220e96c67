//! `ctx.cache`: how much of a compiled context repeats the previous compile
//! of the same session by the same compiler, and what broke the rest, for
//! each cause.
mod common;

use std::rc::Rc;

use common::{block_on, exchange, session_with};
use context_compiler::working_context::{CacheMiss, HistoryMessage, MissCause, PrefixTracker};
use context_compiler::{
    CompileOptions, ContextCompiler, DefaultTokenCounter, HistoryRecall, HistorySelector, Layout,
    Session, TokenCounter, WorkingContext,
};
use serde_json::json;

fn session(id: &str, turns: usize) -> Session {
    let counter: Rc<dyn TokenCounter> = Rc::new(DefaultTokenCounter);
    let mut s = session_with(id, counter);
    for i in 0..turns {
        say(&mut s, i);
    }
    s
}

fn say(s: &mut Session, i: usize) {
    exchange(
        s,
        &format!("question {i}: how is service {i} doing?"),
        &format!("service {i} is fine"),
    );
}

fn zoned(processors: Vec<Rc<dyn context_compiler::Processor>>) -> ContextCompiler {
    ContextCompiler::with_layout(processors, Layout::Zoned)
}

fn compile(
    compiler: &ContextCompiler,
    s: &mut Session,
    options: &CompileOptions,
) -> WorkingContext {
    block_on(compiler.compile_with(s, 8_000, options)).expect("compiled")
}

fn miss(ctx: &WorkingContext) -> CacheMiss {
    ctx.cache
        .as_ref()
        .and_then(|c| c.miss.clone())
        .expect("a miss")
}

fn cause(ctx: &WorkingContext) -> Option<MissCause> {
    ctx.cache
        .as_ref()
        .expect("a compile reports")
        .miss
        .as_ref()
        .map(|m| m.cause)
}

#[test]
fn a_growing_conversation_keeps_its_prefix_and_changes_are_named() {
    let compiler = zoned(vec![Rc::new(HistorySelector::new(1, usize::MAX))]);
    let mut s = session("cache", 5);
    let options = CompileOptions::new("You are terse.");
    let first = compile(&compiler, &mut s, &options);
    assert_eq!(cause(&first), Some(MissCause::First));
    assert_eq!(first.cache.as_ref().map(|c| c.prefix_tokens), Some(0));

    // New turns after the old ones: the whole previous context is the prefix.
    say(&mut s, 5);
    let grown = compile(&compiler, &mut s, &options);
    let report = grown.cache.clone().expect("a report");
    assert_eq!(report.miss, None, "{report:?}");
    assert_eq!(report.prefix_messages, first.to_messages().len());
    assert_eq!(report.prefix_tokens, first.token_count);

    // The same context again: everything is the prefix.
    let again = compile(&compiler, &mut s, &options);
    assert_eq!(
        again.cache.as_ref().map(|c| c.prefix_tokens),
        Some(again.token_count)
    );

    let mut changed = options.clone();
    changed.system_prompt = "You are verbose.".into();
    let ctx = compile(&compiler, &mut s, &changed);
    assert_eq!(cause(&ctx), Some(MissCause::System));
    assert_eq!(miss(&ctx).message_index, 0);

    let mut tools = changed.clone();
    tools.tools = vec![serde_json::from_value(json!({ "name": "read_logs", "description": "Read logs", "parameters": { "type": "object" } })).expect("a tool")];
    let ctx = compile(&compiler, &mut s, &tools);
    assert_eq!(cause(&ctx), Some(MissCause::Tools));

    let mut goal = tools.clone();
    goal.goal = Some("keep every service up".into());
    compile(&compiler, &mut s, &goal);
    goal.goal = Some("keep every service up, cheaply".into());
    let ctx = compile(&compiler, &mut s, &goal);
    let miss = miss(&ctx);
    assert_eq!(miss.cause, MissCause::Persistent);
    assert_eq!(miss.message_index, 1);
    assert!(ctx.cache.as_ref().is_some_and(|c| c.prefix_tokens > 0));

    // Another session of the same compiler has its own previous compile.
    let mut other = session("other", 2);
    assert_eq!(
        cause(&compile(&compiler, &mut other, &options)),
        Some(MissCause::First)
    );
}

#[test]
fn a_moving_window_and_compaction_are_named() {
    let compiler = zoned(vec![Rc::new(HistorySelector::new(0, 4))]);
    let mut s = session("window", 12);
    let options = CompileOptions::new("You are terse.");
    let before = compile(&compiler, &mut s, &options);
    for i in 12..16 {
        say(&mut s, i);
    }
    let ctx = compile(&compiler, &mut s, &options);
    let miss = miss(&ctx);
    assert_eq!(miss.cause, MissCause::Window, "{miss:?}");
    // It names the turn the previous compile had at that place, and the
    // one there now.
    let (was, now) = miss
        .detail
        .strip_prefix("the window moved: this message was ")
        .and_then(|rest| rest.split_once(", is now "))
        .unwrap_or_else(|| panic!("{}", miss.detail));
    let has =
        |c: &WorkingContext, id: &str| c.history.iter().any(|h| h.event_id.as_deref() == Some(id));
    assert!(has(&before, was) && !has(&ctx, was), "{}", miss.detail);
    assert!(has(&ctx, now), "{}", miss.detail);

    let compacting = zoned(vec![
        Rc::new(HistorySelector::new(1, usize::MAX)),
        Rc::new(context_compiler::Compactor::new()),
    ]);
    let mut s = session("compaction", 40);
    let small =
        |s: &mut Session| block_on(compacting.compile_with(s, 600, &options)).expect("compiled");
    let first = small(&mut s);
    assert!(first.summary.is_some(), "compaction ran");
    for i in 40..60 {
        say(&mut s, i);
    }
    let ctx = small(&mut s);
    assert_eq!(cause(&ctx), Some(MissCause::Compaction), "{:?}", ctx.cache);
}

#[test]
fn recall_is_named_when_the_recalled_turns_are_not_repeated() {
    let compiler = zoned(vec![
        Rc::new(HistorySelector::new(0, 40)),
        Rc::new(HistoryRecall::new().with_distinction(0.0)),
    ]);
    let mut s = session("recall", 30);
    s.record(
        "user_input",
        json!({ "content": "how is service 3 doing?" }),
        None,
    )
    .expect("recorded");
    let options = CompileOptions::new("You are terse.");
    let first = compile(&compiler, &mut s, &options);
    assert!(!first.recalled.is_empty(), "recall ran");
    s.record("assistant_output", json!({ "content": "fine" }), None)
        .expect("recorded");
    s.record("user_input", json!({ "content": "and service 17?" }), None)
        .expect("recorded");
    let ctx = compile(&compiler, &mut s, &options);
    assert_eq!(cause(&ctx), Some(MissCause::Recall), "{:?}", ctx.cache);
}

#[test]
fn a_turn_shown_differently_or_with_other_media_is_named() {
    let counter = DefaultTokenCounter;
    let mut ctx = WorkingContext::new("You are terse.", 1_000);
    ctx.layout = Layout::Zoned;
    let mut turn = HistoryMessage::new("user", "the logs: line 1, line 2, line 3");
    turn.event_id = Some("e1".into());
    let mut answer = HistoryMessage::new("assistant", "noted");
    answer.event_id = Some("e2".into());
    ctx.history = vec![turn.into(), answer.into()];
    let tracker = PrefixTracker::new();
    tracker.observe("s", &ctx, &counter);

    let mut cut = ctx.clone();
    let first = std::rc::Rc::make_mut(&mut cut.history[0]);
    first.content = "the logs: line 1 … [cut]".into();
    first.tokens = None;
    let report = tracker.observe("s", &cut, &counter);
    let miss = report.miss.expect("a miss");
    assert_eq!((miss.cause, miss.message_index), (MissCause::History, 1));
    assert!(miss.detail.contains("e1"), "{}", miss.detail);

    let mut pictured = cut.clone();
    std::rc::Rc::make_mut(&mut pictured.history[0]).media = vec![serde_json::from_value(
        json!({ "type": "image", "mediaType": "image/png", "url": "https://example.com/a.png", "tokens": 85 }),
    )
    .expect("a media part")];
    let report = tracker.observe("s", &pictured, &counter);
    assert_eq!(report.miss.map(|m| m.cause), Some(MissCause::Media));
}

/// One compiler serving many threads remembers the most recently compiled
/// [`PrefixTracker::SESSIONS`]: the tracker stays that size, and a thread
/// compiled again after it was forgotten reports its miss as `first`.
#[test]
fn a_compiler_serving_many_threads_forgets_the_least_recent() {
    let tracker = Rc::new(PrefixTracker::new());
    let compiler = zoned(vec![Rc::new(HistorySelector::new(1, usize::MAX))])
        .with_prefix_tracker(tracker.clone());
    let options = CompileOptions::new("You are an SRE.");
    let mut first = session("thread-first", 2);
    compile(&compiler, &mut first, &options);
    assert_eq!(cause(&compile(&compiler, &mut first, &options)), None);
    for i in 0..PrefixTracker::SESSIONS + 50 {
        let mut s = session(&format!("thread-{i}"), 1);
        compile(&compiler, &mut s, &options);
    }
    assert_eq!(tracker.len(), PrefixTracker::SESSIONS);
    assert_eq!(
        cause(&compile(&compiler, &mut first, &options)),
        Some(MissCause::First)
    );
}
