//! A compile's history is shared, not copied (issue 65): the turns and
//! inline tool results a compile selects are the session's own messages,
//! built once and shared by every later compile; a processor that changes
//! one changes a copy; a result masked, externalised or answering another
//! call is never the kept one.
mod common;

use std::rc::Rc;

use common::{block_on, session, StepClock, Upper};
use context_compiler::{
    ArtifactAttacher, ContextCompiler, HistorySelector, Layout, MemoryArtifactStore, Processor,
    Session, WorkingContext,
};
use serde_json::json;

fn zoned(processors: Vec<Rc<dyn Processor>>) -> ContextCompiler {
    ContextCompiler::with_layout(processors, Layout::Zoned)
}

fn selector() -> Rc<dyn Processor> {
    Rc::new(HistorySelector::new(1, usize::MAX))
}

/// Records a call of `search` answered with `output`.
fn search(s: &mut Session, id: &str, output: &str) {
    s.record(
        "tool_call",
        json!({"tool_name": "search", "arguments": {"q": id}, "call_id": id}),
        None,
    )
    .unwrap();
    s.record(
        "tool_success",
        json!({"tool": "search", "call_id": id, "result": output}),
        None,
    )
    .unwrap();
}

fn conversation() -> Session {
    let mut s = session("shared");
    for i in 0..6 {
        s.record("user_input", json!(format!("question {i}")), None)
            .unwrap();
        search(&mut s, &format!("call_{i}"), &format!("result {i}"));
        s.record("assistant_output", json!(format!("answer {i}")), None)
            .unwrap();
    }
    s
}

/// The message of `ctx` from event `id`.
fn message<'a>(
    ctx: &'a WorkingContext,
    id: &str,
) -> &'a Rc<context_compiler::working_context::HistoryMessage> {
    ctx.history
        .iter()
        .find(|m| m.event_id.as_deref() == Some(id))
        .unwrap_or_else(|| panic!("no message from {id}"))
}

#[test]
fn compiles_of_one_session_share_its_turns_and_inline_results() {
    block_on(async {
        let mut s = conversation();
        let compiler = zoned(vec![selector()]);
        let first = compiler.compile(&mut s, 100_000, "sys").await.unwrap();
        s.record("user_input", json!("one more question"), None)
            .unwrap();
        let second = compiler.compile(&mut s, 100_000, "sys").await.unwrap();
        let events: Vec<String> = s
            .event_log()
            .events()
            .iter()
            .map(|e| (e.event_id.clone(), e.kind.clone()))
            .filter(|(_, kind)| kind != "tool_call")
            .map(|(id, _)| id)
            .collect();
        // Every turn and result of the first compile (the pinned first turn
        // aside, which carries its zone) is the same allocation in the second.
        let mut shared = 0;
        for id in &events[1..events.len() - 1] {
            assert!(
                Rc::ptr_eq(message(&first, id), message(&second, id)),
                "{id} was copied"
            );
            shared += 1;
        }
        assert_eq!(shared, 6 * 3 - 1);
        // A tool result shared is the one its call gets.
        let result = message(&second, &events[1]);
        assert_eq!(result.tool_call_id.as_deref(), Some("call_0"));
        assert_eq!(result.content, "result 0");
        // And a compiler of its own shares them too: they are the session's.
        let other = zoned(vec![selector()])
            .compile(&mut s, 100_000, "sys")
            .await
            .unwrap();
        assert!(Rc::ptr_eq(
            message(&second, &events[2]),
            message(&other, &events[2])
        ));
    });
}

#[test]
fn a_processor_that_changes_a_shared_message_changes_a_copy() {
    block_on(async {
        let mut s = conversation();
        let plain = zoned(vec![selector()]);
        let before = plain.compile(&mut s, 100_000, "sys").await.unwrap();
        let shouted = zoned(vec![selector(), Rc::new(Upper)])
            .compile(&mut s, 100_000, "sys")
            .await
            .unwrap();
        let id = s.event_log().events()[3].event_id.clone();
        assert_eq!(message(&shouted, &id).content, "ANSWER 0");
        assert_eq!(message(&before, &id).content, "answer 0");
        let after = plain.compile(&mut s, 100_000, "sys").await.unwrap();
        assert_eq!(message(&after, &id).content, "answer 0");
        assert!(Rc::ptr_eq(message(&before, &id), message(&after, &id)));
        assert_eq!(
            serde_json::to_value(&before.history).unwrap(),
            serde_json::to_value(&after.history).unwrap()
        );
    });
}

#[test]
fn a_kept_result_is_not_shared_once_externalised() {
    block_on(async {
        let mut s = session("externalised");
        s.record("user_input", json!("find it"), None).unwrap();
        // Small enough to be kept (under the attacher's default threshold),
        // then externalised by an attacher with a lower one.
        let big = "a line of the search output that goes on\n".repeat(20);
        search(&mut s, "call_big", &big);
        s.record("assistant_output", json!("found it"), None)
            .unwrap();
        s.record("user_input", json!("and then?"), None).unwrap();
        let id = s.event_log().events()[2].event_id.clone();
        let inline = zoned(vec![selector()])
            .compile(&mut s, 100_000, "sys")
            .await
            .unwrap();
        assert_eq!(message(&inline, &id).content, big);
        let again = zoned(vec![selector()])
            .compile(&mut s, 100_000, "sys")
            .await
            .unwrap();
        assert!(
            Rc::ptr_eq(message(&inline, &id), message(&again, &id)),
            "kept"
        );
        let store = Rc::new(MemoryArtifactStore::new(StepClock::new(0.0, 1.0)));
        let attached = zoned(vec![selector(), Rc::new(ArtifactAttacher::new(store, 100))])
            .compile(&mut s, 100_000, "sys")
            .await
            .unwrap();
        let handle = message(&attached, &id);
        assert!(
            handle.content.starts_with("[artifact "),
            "{}",
            handle.content
        );
        // Recorded as externalised: a plain compile now shows the handle
        // too, not the result kept inline before.
        let later = zoned(vec![selector()])
            .compile(&mut s, 100_000, "sys")
            .await
            .unwrap();
        let later = message(&later, &id);
        assert!(later.content.starts_with("[artifact "), "{}", later.content);
        assert!(!Rc::ptr_eq(later, message(&inline, &id)));
    });
}

#[test]
fn a_renamed_call_gets_a_result_that_says_so_and_is_never_kept() {
    block_on(async {
        let mut s = session("renamed");
        s.record("user_input", json!("look it up"), None).unwrap();
        s.record(
            "tool_call",
            json!({"tool_name": "web search!", "arguments": {}, "call_id": "c1"}),
            None,
        )
        .unwrap();
        s.record(
            "tool_success",
            json!({"tool": "web search!", "call_id": "c1", "result": "nothing"}),
            None,
        )
        .unwrap();
        let id = s.event_log().events()[2].event_id.clone();
        let compiler = zoned(vec![selector()]);
        let first = compiler.compile(&mut s, 100_000, "sys").await.unwrap();
        let second = compiler.compile(&mut s, 100_000, "sys").await.unwrap();
        let (a, b) = (message(&first, &id), message(&second, &id));
        assert!(
            a.content.starts_with("[called as \"web search!\""),
            "{}",
            a.content
        );
        assert_eq!(a, b);
        assert!(!Rc::ptr_eq(a, b));
    });
}

#[test]
fn a_large_result_or_turn_is_built_for_each_compile_not_kept() {
    block_on(async {
        let mut s = session("large");
        let pasted = "a pasted line of a long file\n".repeat(1_000);
        s.record("user_input", json!(pasted), None).unwrap();
        let output = "an output line\n".repeat(100);
        search(&mut s, "call_large", &output);
        s.record("user_input", json!("and?"), None).unwrap();
        let (turn, result) = {
            let events = s.event_log().events();
            (events[0].event_id.clone(), events[2].event_id.clone())
        };
        let compiler = zoned(vec![selector()]);
        let a = compiler.compile(&mut s, 100_000, "sys").await.unwrap();
        let b = compiler.compile(&mut s, 100_000, "sys").await.unwrap();
        for id in [&turn, &result] {
            assert_eq!(message(&a, id), message(&b, id));
            assert!(
                !Rc::ptr_eq(message(&a, id), message(&b, id)),
                "{id} was kept"
            );
        }
        assert_eq!(message(&b, &result).content, output);
    });
}
