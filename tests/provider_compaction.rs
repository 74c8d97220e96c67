//! The providers' own compaction, passed through: Anthropic's `compaction`
//! block (from a reply, whole or streamed) and the output of OpenAI's
//! `responses.compact` (recorded by the host) are kept as they came and
//! sent first in their own format in place of the turns before them; every
//! other format leaves them out (`refused`) and keeps the turns. Replies
//! are scripted from the SDKs' own types (`BetaCompactionBlock`,
//! `BetaCompactionContentBlockDelta`, `CompactedResponse`).
mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::first_reply::FirstReply;
use common::{block_on, exchange, session};
use context_compiler::runner::{run_compiled, Agent, RunOptions, StreamFormat, StreamReader};
use context_compiler::session::provider_compaction::ANTHROPIC_COMPACTION_BETA;
use context_compiler::tools::{ToolInterruptOptions, ToolOutput};
use context_compiler::working_context::checker::check_request;
use context_compiler::working_context::{DropAction, ExclusionReason, InclusionReason};
use context_compiler::{
    CompileOptions, ContextCompiler, ErrorCode, HistorySelector, Layout, ProviderFormat, Session,
};
use serde_json::{json, Value};

/// A secret-looking string the compaction's summary quotes: redaction
/// would change it, and the signature covers it.
const SECRET: &str = "sk-proj-4fGh8JkL2mN6pQ9rStUvWxYz0123456789abcdefAB";

/// An Anthropic `BetaCompactionBlock` as a reply carries it.
fn block() -> Value {
    json!({
        "type": "compaction",
        "content": format!("Summary: the user runs nightly jobs; the key {SECRET} was rotated."),
        "encrypted_content": "EqQBCkYIBxgCKkBopaque",
        "signature": "sig-4f1a",
    })
}

fn compiler() -> ContextCompiler {
    ContextCompiler::with_layout(vec![Rc::new(HistorySelector::default())], Layout::Zoned)
}

/// A session with three earlier exchanges, then a run whose first reply is
/// `first`: the second request, and the session.
fn run_with(first: Value) -> (Value, Rc<RefCell<Session>>) {
    let mut s = session("provider-compaction");
    exchange(&mut s, "We run nightly jobs on /data.", "Noted.");
    exchange(&mut s, "The old key was rotated yesterday.", "Understood.");
    exchange(&mut s, "Jobs write reports to /data/out.", "Got it.");
    let shared = Rc::new(RefCell::new(s));
    let handler = common::tool_handler(
        Rc::new(common::FixedBridge(|| {
            ToolOutput::Text("/data 100% used".into())
        })),
        &shared,
        ToolInterruptOptions::default(),
    );
    let model = Rc::new(FirstReply::new(first, ProviderFormat::Anthropic));
    let agent = Agent {
        session: shared.clone(),
        compiler: compiler(),
        model: model.clone(),
        tools: Some(Rc::new(handler)),
        guard: None,
    };
    let mut options = RunOptions::new(4000, "You are an SRE.");
    options.compile.format = Some(ProviderFormat::Anthropic);
    block_on(run_compiled("Why did the job fail?", &agent, &options)).expect("run");
    let request = model.seen.borrow()[1].clone();
    (request, shared)
}

fn reply_with_block() -> Value {
    json!({"type": "message", "role": "assistant", "content": [
        block(),
        {"type": "tool_use", "id": "toolu_1", "name": "df", "input": {}}
    ]})
}

fn compile(s: &mut Session, format: ProviderFormat) -> context_compiler::WorkingContext {
    let mut options = CompileOptions::new("You are an SRE.");
    options.format = Some(format);
    block_on(compiler().compile_with(s, 4000, &options)).expect("compile")
}

#[test]
fn an_anthropic_compaction_block_goes_first_and_folds_the_turns_before_it() {
    let (request, shared) = run_with(reply_with_block());
    assert!(check_request(&request, ProviderFormat::Anthropic).is_empty());
    let messages = request["messages"].as_array().expect("messages");
    // Byte-exact, nothing redacted: its signature covers its content.
    assert_eq!(messages[0]["role"], "assistant");
    assert_eq!(messages[0]["content"][0], block());
    assert!(request.to_string().contains(SECRET));
    assert_eq!(request["betas"], json!([ANTHROPIC_COMPACTION_BETA]));
    let text = request.to_string();
    for folded in [
        "nightly jobs on /data",
        "rotated yesterday",
        "Why did the job fail?",
    ] {
        assert!(!text.contains(folded), "{folded} was folded: {text}");
    }
    assert!(text.contains("tool_use"), "the reply's call stays after it");
    // Recorded once, as it came, before the reply's call.
    let s = shared.borrow();
    let log = s.event_log();
    let recorded: Vec<_> = log
        .events()
        .iter()
        .filter(|e| e.kind == "provider_compaction")
        .collect();
    assert_eq!(recorded.len(), 1);
    assert_eq!(
        recorded[0].data,
        json!({"format": "anthropic", "items": [block()]})
    );
    // The ledger lists the turns before it as compacted, itself as a part.
    drop(s);
    let mut s = shared.borrow_mut();
    let ctx = compile(&mut s, ProviderFormat::Anthropic);
    assert!(ctx.token_count <= ctx.budget);
    let ledger = ctx.ledger_for(&s);
    let at = ledger
        .included
        .iter()
        .position(|p| p.reason == InclusionReason::ProviderCompaction)
        .expect("its part");
    assert!(ledger.included[at].tokens > 0);
    // In the order of the messages: first in the conversation.
    assert!(ledger.included[..at]
        .iter()
        .all(|p| p.reason == InclusionReason::System || p.reason == InclusionReason::Tools));
    let first_user = s.event_log().events()[0].event_id.clone();
    assert!(ledger
        .excluded
        .iter()
        .any(|e| e.reason == ExclusionReason::Compacted && e.event_ids.contains(&first_user)));
    let total: u64 = ledger.included.iter().map(|p| p.tokens).sum();
    assert_eq!(total, ctx.token_count);
}

#[test]
fn a_streamed_compaction_block_is_assembled_as_the_whole_one() {
    let mut reader = StreamReader::new(Some(StreamFormat::Anthropic));
    let chunks = [
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 9, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block":
            {"type": "compaction", "content": null, "encrypted_content": null}}),
        json!({"type": "content_block_delta", "index": 0, "delta":
            {"type": "compaction_delta", "content": block()["content"], "encrypted_content": "EqQBCkYIBxgCKkBopaque"}}),
        json!({"type": "content_block_delta", "index": 0, "delta":
            {"type": "signature_delta", "signature": "sig-4f1a"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Done."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_stop"}),
    ];
    for c in &chunks {
        reader.push(c).expect("chunk");
    }
    let reply = reader.finish().expect("reply");
    assert_eq!(reply.compaction.as_deref(), Some(&block()));
    assert_eq!(reply.text, "Done.");
}

#[test]
fn other_formats_leave_it_out_and_keep_the_turns() {
    let (_, shared) = run_with(reply_with_block());
    let mut s = shared.borrow_mut();
    let id = s
        .event_log()
        .events()
        .iter()
        .find(|e| e.kind == "provider_compaction")
        .map(|e| e.event_id.clone())
        .expect("recorded");
    for format in [
        ProviderFormat::OpenAi,
        ProviderFormat::OpenAiResponses,
        ProviderFormat::Gemini,
        ProviderFormat::AiSdk,
        ProviderFormat::Plain,
    ] {
        let ctx = compile(&mut s, format);
        let request = ctx.to_provider_messages(format);
        let text = request.to_string();
        assert!(!text.contains("compaction"), "{format:?}: {text}");
        assert!(!text.contains("sig-4f1a"), "{format:?}");
        assert!(
            text.contains("nightly jobs on /data"),
            "{format:?} keeps the turns"
        );
        assert!(check_request(&request, format).is_empty(), "{format:?}");
        assert!(ctx
            .dropped
            .iter()
            .any(|d| d.action == DropAction::Refused && d.event_id.as_deref() == Some(&id)));
        assert!(ctx.provider_compaction.is_none());
    }
    // Never searchable, never a turn.
    assert!(s.search("rotated", 10).iter().all(|h| h.event_id != id));
}

/// A `CompactedResponse` from `responses.compact`.
fn compacted_response() -> Value {
    json!({
        "id": "cmp_1",
        "object": "response.compaction",
        "created_at": 1_767_000_000,
        "output": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "We run nightly jobs on /data."}]},
            {"type": "compaction", "id": "cmp_item_1", "encrypted_content": "gAAAAABopaque"}
        ],
        "usage": {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150,
                  "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
    })
}

#[test]
fn a_responses_compact_output_is_sent_in_place_of_what_it_folded() {
    let mut s = session("responses-compact");
    exchange(&mut s, "We run nightly jobs on /data.", "Noted.");
    exchange(&mut s, "The old key was rotated yesterday.", "Understood.");
    s.record_provider_compaction(&compacted_response(), ProviderFormat::OpenAiResponses)
        .expect("recorded");
    exchange(&mut s, "Why did the job fail?", "The disk is full.");
    let ctx = compile(&mut s, ProviderFormat::OpenAiResponses);
    let request = ctx.to_provider_messages(ProviderFormat::OpenAiResponses);
    assert!(check_request(&request, ProviderFormat::OpenAiResponses).is_empty());
    let input = request["input"].as_array().expect("input");
    assert_eq!(
        input[..2],
        compacted_response()["output"].as_array().expect("output")[..]
    );
    let text = request.to_string();
    assert!(!text.contains("rotated yesterday"));
    assert!(text.contains("Why did the job fail?"));
    assert!(ctx.token_count <= ctx.budget);
    // In Anthropic's format it is left out.
    let ctx = compile(&mut s, ProviderFormat::Anthropic);
    let text = ctx
        .to_provider_messages(ProviderFormat::Anthropic)
        .to_string();
    assert!(!text.contains("gAAAAABopaque") && text.contains("rotated yesterday"));
}

#[test]
fn what_is_not_a_compaction_is_invalid_argument() {
    let mut s = session("invalid");
    let bad = [
        (json!({"output": []}), ProviderFormat::OpenAiResponses),
        (
            json!([{"type": "compaction", "encrypted_content": "a"}, {"type": "message", "role": "user", "content": "x"}]),
            ProviderFormat::OpenAiResponses,
        ),
        (
            json!([{"type": "compaction"}, {"type": "compaction"}]),
            ProviderFormat::OpenAiResponses,
        ),
        (
            json!({"type": "text", "text": "hi"}),
            ProviderFormat::Anthropic,
        ),
        (json!("compaction"), ProviderFormat::Anthropic),
        (block(), ProviderFormat::Gemini),
    ];
    for (output, format) in bad {
        let e = s
            .record_provider_compaction(&output, format)
            .expect_err("invalid");
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{output}");
    }
    assert_eq!(s.event_log().len(), 0);
    // A message holding the block is taken for the block.
    s.record_provider_compaction(&reply_with_block(), ProviderFormat::Anthropic)
        .expect("from a message");
    assert_eq!(s.event_log().events()[0].data["items"], json!([block()]));
}

#[test]
fn check_request_knows_where_compaction_goes() {
    let rules = |request: Value, format| -> Vec<String> {
        check_request(&request, format)
            .into_iter()
            .map(|v| v.rule.to_string())
            .collect()
    };
    let user = json!({"role": "user", "content": "Why?"});
    let ok = json!({"betas": [ANTHROPIC_COMPACTION_BETA], "messages": [
        {"role": "assistant", "content": [block()]}, user]});
    assert!(rules(ok, ProviderFormat::Anthropic).is_empty());
    let not_first = json!({"betas": [ANTHROPIC_COMPACTION_BETA], "messages": [
        user, {"role": "assistant", "content": [{"type": "text", "text": "Hi"}, block()]}]});
    assert_eq!(
        rules(not_first, ProviderFormat::Anthropic),
        ["anthropic.compaction_first"]
    );
    let two = json!({"betas": [ANTHROPIC_COMPACTION_BETA], "messages": [
        {"role": "assistant", "content": [block(), block()]}, user]});
    assert_eq!(
        rules(two, ProviderFormat::Anthropic),
        ["anthropic.compaction_one"]
    );
    let no_beta = json!({"messages": [{"role": "assistant", "content": [block()]}, user]});
    assert_eq!(
        rules(no_beta, ProviderFormat::Anthropic),
        ["anthropic.compaction_beta"]
    );
    let item = json!({"type": "compaction", "encrypted_content": "gAAA"});
    let answer = json!({"type": "message", "role": "assistant", "content": "Hi"});
    let question = json!({"type": "message", "role": "user", "content": "Why?"});
    let responses =
        |input: Vec<Value>| rules(json!({"input": input}), ProviderFormat::OpenAiResponses);
    assert!(responses(vec![question.clone(), item.clone(), answer.clone()]).is_empty());
    assert_eq!(
        responses(vec![answer.clone(), item.clone()]),
        ["openai_responses.compaction_first"]
    );
    assert_eq!(
        responses(vec![item.clone(), item.clone(), question]),
        ["openai_responses.compaction_one"]
    );
}

#[test]
fn the_budget_counts_it_and_holds() {
    let mut s = session("budget");
    exchange(&mut s, "We run nightly jobs on /data.", "Noted.");
    let big = json!({"type": "compaction", "content": "word ".repeat(2000), "signature": "s"});
    s.record_provider_compaction(&big, ProviderFormat::Anthropic)
        .expect("recorded");
    exchange(&mut s, "Why did the job fail?", "The disk is full.");
    let mut options = CompileOptions::new("You are an SRE.");
    options.format = Some(ProviderFormat::Anthropic);
    let ctx = block_on(compiler().compile_with(&mut s, 8000, &options)).expect("compile");
    let c = ctx.provider_compaction.as_ref().expect("sent");
    assert!(c.tokens >= 2000, "{}", c.tokens);
    assert!(ctx.token_count >= c.tokens && ctx.token_count <= ctx.budget);
    // Too small a budget for it is an error, never an overflow.
    match block_on(compiler().compile_with(&mut s, 1500, &options)) {
        Ok(ctx) => assert!(ctx.token_count <= ctx.budget),
        Err(e) => assert_eq!(e.code(), ErrorCode::BudgetTooSmall),
    }
}

#[test]
fn a_reply_paused_after_compaction_is_asked_again_with_the_block_first() {
    // `pause_after_compaction`: the reply is the block alone.
    let paused = json!({"type": "message", "role": "assistant", "content": [block()],
        "stop_reason": "compaction", "usage": {"input_tokens": 150000, "output_tokens": 40}});
    let mut s = session("paused");
    exchange(&mut s, "We run nightly jobs on /data.", "Noted.");
    let shared = Rc::new(RefCell::new(s));
    let model = Rc::new(FirstReply::new(paused, ProviderFormat::Anthropic));
    let agent = Agent {
        session: shared.clone(),
        compiler: compiler(),
        model: model.clone(),
        tools: None,
        guard: None,
    };
    let mut options = RunOptions::new(4000, "You are an SRE.");
    options.compile.format = Some(ProviderFormat::Anthropic);
    let result = block_on(run_compiled("Why did the job fail?", &agent, &options)).expect("run");
    assert_eq!(result.result, "The disk is full.");
    let second = model.seen.borrow()[1].clone();
    assert_eq!(second["messages"][0]["content"][0], block());
    assert!(check_request(&second, ProviderFormat::Anthropic).is_empty());
    // The block is recorded; no empty answer is.
    let s = shared.borrow();
    let kinds: Vec<&str> = s
        .event_log()
        .events()
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == "provider_compaction")
            .count(),
        1
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "assistant_output").count(),
        2,
        "{kinds:?}"
    );
    // Streamed, the block alone is a reply too.
    let mut reader = StreamReader::new(Some(StreamFormat::Anthropic));
    for c in [
        json!({"type": "content_block_start", "index": 0, "content_block": block()}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "compaction"}}),
    ] {
        reader.push(&c).expect("chunk");
    }
    assert_eq!(
        reader.finish().expect("reply").compaction.as_deref(),
        Some(&block())
    );
}
