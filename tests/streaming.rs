//! Streamed replies: each provider's stream shape read into deltas and a
//! whole reply, recognised from the chunks; in the runner, the deltas
//! told as they come, tool calls run when the stream is whole, and an abort
//! or a failure mid-stream recording the text received as partial.
mod common;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, session};
use context_compiler::runner::{
    run_compiled, Agent, Model, ModelAnswer, ModelReply, ModelRequest, ReplyStream, RunOptions,
    StreamDelta, StreamFormat, StreamReader,
};
use context_compiler::tools::{
    AbortSignal, ToolBridge, ToolFailure, ToolInterruptOptions, ToolOutput,
};
use context_compiler::{
    Compactor, ContextCompiler, Error, ErrorCode, HistorySelector, Layout, Result,
};
use serde_json::{json, Value};

fn text(t: &str) -> StreamDelta {
    StreamDelta::Text { text: t.into() }
}

fn call(id: &str, name: &str, args: &str) -> StreamDelta {
    StreamDelta::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments_delta: args.into(),
    }
}

/// Reads `chunks` with a reader that tells the format from them.
fn read(chunks: &[Value]) -> (Vec<StreamDelta>, Result<ModelReply>) {
    let mut reader = StreamReader::new(None);
    let mut deltas = Vec::new();
    for c in chunks {
        match reader.push(c) {
            Ok(d) => deltas.extend(d),
            Err(e) => return (deltas, Err(e)),
        }
    }
    (deltas, reader.finish())
}

/// Chat Completions: text, then a call whose arguments come in pieces, and
/// the usage chunk `stream_options.include_usage` adds.
fn openai_chunks() -> Vec<Value> {
    vec![
        json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "Let me "}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "look."}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read_logs", "arguments": ""}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"lines\""}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 20}"}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 64}}}),
    ]
}

#[test]
fn chat_completions_chunks() {
    let (deltas, reply) = read(&openai_chunks());
    assert_eq!(
        deltas,
        [
            text("Let me "),
            text("look."),
            call("call_1", "read_logs", ""),
            call("call_1", "read_logs", "{\"lines\""),
            call("call_1", "read_logs", ": 20}"),
        ]
    );
    let reply = reply.expect("reply");
    assert_eq!(reply.text, "Let me look.");
    assert_eq!(reply.tool_calls.len(), 1);
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"lines": 20})));
    let usage = reply.usage.expect("usage");
    assert_eq!(
        (
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens
        ),
        (120, 64, 9)
    );
}

#[test]
fn responses_events() {
    let chunks = vec![
        json!({"type": "response.created", "response": {"id": "resp_1"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "id": "msg_1"}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Checking"}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": " now."}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "df", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"path\":"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "\"/data\"}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1", "arguments": "{\"path\":\"/data\"}"}),
        json!({"type": "response.output_item.done", "item": {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "df", "arguments": "{\"path\":\"/data\"}"}}),
        json!({"type": "response.output_item.done", "item": {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}}),
        json!({"type": "response.completed", "response": {"usage": {"input_tokens": 300, "output_tokens": 12, "input_tokens_details": {"cached_tokens": 0}}}}),
    ];
    let (deltas, reply) = read(&chunks);
    assert_eq!(deltas[..2], [text("Checking"), text(" now.")]);
    assert_eq!(deltas[2], call("call_9", "df", "{\"path\":"));
    let reply = reply.expect("reply");
    assert_eq!(reply.text, "Checking now.");
    assert_eq!(reply.tool_calls[0].name, "df");
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"path": "/data"})));
    assert_eq!(reply.usage.map(|u| u.input_tokens), Some(300));
    let reasoning = reply.reasoning.expect("reasoning");
    assert_eq!(reasoning.items[0]["id"], "rs_1");
    let failed = read(&[
        json!({"type": "response.failed", "response": {"error": {"message": "overloaded"}}}),
    ])
    .1;
    assert_eq!(failed.expect_err("failed").code(), ErrorCode::ModelFailed);
}

fn anthropic_chunks() -> Vec<Value> {
    vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": [], "usage": {"input_tokens": 50, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 400, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "I'll read"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " the log."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_logs", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"lines\": "}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "5}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ]
}

#[test]
fn anthropic_events() {
    let (deltas, reply) = read(&anthropic_chunks());
    assert_eq!(deltas[0], text("I'll read"));
    assert_eq!(deltas[2], call("toolu_1", "read_logs", "{\"lines\": "));
    let reply = reply.expect("reply");
    assert_eq!(reply.text, "I'll read the log.");
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"lines": 5})));
    let usage = reply.usage.expect("usage");
    assert_eq!(
        (
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens
        ),
        (450, 400, 30)
    );
    // A block that never stopped is no call.
    let cut = &anthropic_chunks()[..9];
    let reply = read(cut).1.expect("reply");
    assert!(reply.tool_calls.is_empty());
    let error = read(&[
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ])
    .1;
    assert!(error.expect_err("error").message().contains("Overloaded"));
}

#[test]
fn anthropic_thinking_is_kept_signed() {
    let mut chunks = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The disk "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "may be full."}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCkgI"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB"}}),
        json!({"type": "content_block_stop", "index": 1}),
    ];
    chunks.extend(anthropic_chunks().into_iter().skip(1).map(|mut c| {
        // Shift the text and tool blocks after the thinking ones.
        if let Some(i) = c.get("index").and_then(Value::as_u64) {
            c["index"] = json!(i + 2);
        }
        c
    }));
    let (deltas, reply) = read(&chunks);
    assert_eq!(deltas[0], text("I'll read"), "thinking is not text");
    let reply = reply.expect("reply");
    let reasoning = reply.reasoning.expect("reasoning");
    assert_eq!(
        reasoning.items,
        [
            json!({"type": "thinking", "thinking": "The disk may be full.", "signature": "EqQBCkgI"}),
            json!({"type": "redacted_thinking", "data": "EmwKAhgB"}),
        ]
    );
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"lines": 5})));
}

#[test]
fn gemini_chunks() {
    let chunks = vec![
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Thinking about it", "thought": true}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "The disk"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": " is full."}, {"functionCall": {"id": "fc-1", "name": "du", "args": {"path": "/data"}}, "thoughtSignature": "CiQB"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 80, "candidatesTokenCount": 7}}),
    ];
    let (deltas, reply) = read(&chunks);
    assert_eq!(
        deltas,
        [
            text("The disk"),
            text(" is full."),
            call("fc-1", "du", "{\"path\":\"/data\"}")
        ]
    );
    let reply = reply.expect("reply");
    assert_eq!(reply.text, "The disk is full.");
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"path": "/data"})));
    assert_eq!(reply.tool_calls[0].signature.as_deref(), Some("CiQB"));
    assert_eq!(reply.usage.map(|u| u.input_tokens), Some(80));
}

#[test]
fn ai_sdk_full_stream_parts() {
    let chunks = vec![
        json!({"type": "start"}),
        json!({"type": "start-step", "request": {}, "warnings": []}),
        json!({"type": "text-start", "id": "t1"}),
        json!({"type": "text-delta", "id": "t1", "text": "On it"}),
        json!({"type": "text-end", "id": "t1"}),
        json!({"type": "tool-input-start", "id": "call_5", "toolName": "add"}),
        json!({"type": "tool-input-delta", "id": "call_5", "delta": "{\"a\":1,"}),
        json!({"type": "tool-input-delta", "id": "call_5", "delta": "\"b\":2}"}),
        json!({"type": "tool-input-end", "id": "call_5"}),
        json!({"type": "tool-call", "toolCallId": "call_5", "toolName": "add", "input": {"a": 1, "b": 2}}),
        json!({"type": "finish-step", "finishReason": "tool-calls", "usage": {"inputTokens": 70, "outputTokens": 11}}),
        json!({"type": "finish", "finishReason": "tool-calls", "totalUsage": {"inputTokens": 70, "outputTokens": 11, "cachedInputTokens": 10}}),
    ];
    let (deltas, reply) = read(&chunks);
    assert_eq!(
        deltas,
        [
            text("On it"),
            call("call_5", "add", "{\"a\":1,"),
            call("call_5", "add", "\"b\":2}")
        ]
    );
    let reply = reply.expect("reply");
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"a": 1, "b": 2})));
    assert_eq!(reply.usage.map(|u| u.cached_input_tokens), Some(10));
    // A call sent whole, with no input parts before it.
    let whole =
        read(&[json!({"type": "tool-call", "toolCallId": "c", "toolName": "now", "input": "{}"})]);
    assert_eq!(whole.0, [call("c", "now", "{}")]);
    let error = read(&[json!({"type": "error", "error": "rate limited"})]).1;
    assert!(error.expect_err("error").message().contains("rate limited"));
}

#[test]
fn text_pieces_and_unknown_streams() {
    let (deltas, reply) = read(&[json!("Hel"), json!("lo")]);
    assert_eq!(deltas, [text("Hel"), text("lo")]);
    assert_eq!(reply.expect("reply").text, "Hello");
    let e = read(&[json!({"what": "is this"})]).1.expect_err("unknown");
    assert_eq!(e.code(), ErrorCode::ModelFailed);
    assert!(e.message().contains("streamFormat"));
    // Named, the same chunk is read as that format (and adds nothing).
    let mut reader = StreamReader::new(Some(StreamFormat::Anthropic));
    assert!(reader
        .push(&json!({"what": "is this"}))
        .expect("ignored")
        .is_empty());
    assert_eq!(
        read(&[]).1.expect_err("empty").code(),
        ErrorCode::ModelFailed
    );
    for f in StreamFormat::ALL {
        assert_eq!(StreamFormat::parse(f.as_str()).expect("parse"), f);
    }
    assert!(StreamFormat::parse("sse").is_err());
    // Hostile chunks: numbers, nulls, arrays, deep nonsense, in every format.
    for f in StreamFormat::ALL {
        let mut reader = StreamReader::new(Some(f));
        for chunk in [
            json!(null),
            json!(3),
            json!([1, 2]),
            json!({"choices": 7, "candidates": "x", "type": 5, "index": {"a": 1}}),
            json!({"type": "content_block_delta", "index": null, "delta": null}),
            json!({"type": "tool-input-delta", "id": 3, "delta": {"x": 1}}),
        ] {
            let _ = reader.push(&chunk);
        }
        let _ = reader.finish();
    }
}

/// A stream replaying chunks; `then` decides what follows them.
struct Replay {
    chunks: VecDeque<Value>,
    then: After,
}

#[derive(Clone, Copy)]
enum After {
    End,
    Fail,
    Hang,
}

#[async_trait(?Send)]
impl ReplyStream for Replay {
    async fn next_chunk(&mut self) -> Result<Option<Value>> {
        match self.chunks.pop_front() {
            Some(c) => Ok(Some(c)),
            None => match self.then {
                After::End => Ok(None),
                After::Fail => Err(Error::new(ErrorCode::ModelFailed, "connection reset")),
                After::Hang => std::future::pending().await,
            },
        }
    }
}

/// A model streaming `first` on its first call and `then` chunks after.
struct Streaming {
    first: Vec<Value>,
    after_first: After,
    later: Vec<Value>,
    calls: RefCell<usize>,
}

#[async_trait(?Send)]
impl Model for Streaming {
    async fn respond(&self, _request: ModelRequest<'_>) -> Result<ModelReply> {
        Err(Error::new(ErrorCode::ModelFailed, "streams only"))
    }

    async fn respond_streaming(&self, _request: ModelRequest<'_>) -> Result<ModelAnswer> {
        let n = {
            let mut calls = self.calls.borrow_mut();
            *calls += 1;
            *calls
        };
        let (chunks, then) = if n == 1 {
            (self.first.clone(), self.after_first)
        } else {
            (self.later.clone(), After::End)
        };
        Ok(ModelAnswer::Stream(Box::new(Replay {
            chunks: chunks.into(),
            then,
        })))
    }
}

struct Logs;

#[async_trait(?Send)]
impl ToolBridge for Logs {
    async fn execute(
        &self,
        _name: &str,
        arguments: &Value,
        _signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        Ok(ToolOutput::Text(format!(
            "{} lines read",
            arguments["lines"]
        )))
    }
}

fn agent(model: Streaming) -> Agent {
    let shared = Rc::new(RefCell::new(session("stream")));
    let handler = common::tool_handler(Rc::new(Logs), &shared, ToolInterruptOptions::default());
    Agent {
        session: shared,
        compiler: ContextCompiler::with_layout(
            vec![
                Rc::new(HistorySelector::default()),
                Rc::new(Compactor::default()),
            ],
            Layout::Zoned,
        ),
        model: Rc::new(model),
        tools: Some(Rc::new(handler)),
        guard: None,
    }
}

fn events(agent: &Agent) -> Vec<(String, Value)> {
    agent
        .session
        .borrow()
        .event_log()
        .events()
        .iter()
        .map(|e| (e.kind.clone(), e.data.clone()))
        .collect()
}

#[test]
fn a_streamed_run_tells_each_delta_and_runs_the_calls_when_whole() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let a = agent(Streaming {
        first: openai_chunks(),
        after_first: After::End,
        later: vec![
            json!({"choices": [{"delta": {"content": "20 lines, all fine."}, "finish_reason": "stop"}]}),
        ],
        calls: RefCell::new(0),
    });
    let mut options = RunOptions::new(4000, "You are an SRE.");
    let sink = seen.clone();
    options.on_delta = Some(Rc::new(move |d: &StreamDelta| {
        sink.borrow_mut().push(d.clone());
        Ok(())
    }));
    let result = block_on(run_compiled("Why did the job fail?", &a, &options)).expect("run");
    assert_eq!(result.result, "20 lines, all fine.");
    assert_eq!(seen.borrow().len(), 6);
    let kinds: Vec<String> = events(&a).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        kinds,
        [
            "user_input",
            "model_usage",
            "assistant_output",
            "tool_call",
            "tool_success",
            "assistant_output"
        ]
    );
    assert_eq!(events(&a)[4].1["result"], json!("20 lines read"));
}

#[test]
fn an_abort_mid_stream_records_the_text_received_as_partial_and_no_call() {
    let mut chunks = openai_chunks();
    chunks.truncate(5); // text, and a call whose arguments never finished
    let a = agent(Streaming {
        first: chunks,
        after_first: After::Hang,
        later: Vec::new(),
        calls: RefCell::new(0),
    });
    let options = RunOptions::new(4000, "You are an SRE.");
    let signal = options.signal.clone();
    let deltas = Rc::new(RefCell::new(0));
    let count = deltas.clone();
    let mut options = options;
    options.on_delta = Some(Rc::new(move |_d: &StreamDelta| {
        *count.borrow_mut() += 1;
        if *count.borrow() == 4 {
            signal.abort("the user pressed stop");
        }
        Ok(())
    }));
    let e = block_on(run_compiled("Why?", &a, &options)).expect_err("aborted");
    assert_eq!(e.code(), ErrorCode::Aborted);
    let recorded = events(&a);
    assert_eq!(recorded.len(), 2, "{recorded:?}");
    assert_eq!(recorded[1].0, "assistant_output");
    assert_eq!(
        recorded[1].1,
        json!({"text": "Let me look.", "partial": true})
    );
}

#[test]
fn a_stream_that_fails_or_a_listener_that_fails_keeps_the_text() {
    let chunks = openai_chunks()[..3].to_vec();
    let a = agent(Streaming {
        first: chunks.clone(),
        after_first: After::Fail,
        later: Vec::new(),
        calls: RefCell::new(0),
    });
    let e = block_on(run_compiled("Why?", &a, &RunOptions::new(4000, "S."))).expect_err("failed");
    assert_eq!(e.code(), ErrorCode::ModelFailed);
    assert!(e.message().contains("connection reset"));
    assert_eq!(events(&a)[1].1["partial"], json!(true));

    let b = agent(Streaming {
        first: chunks,
        after_first: After::End,
        later: Vec::new(),
        calls: RefCell::new(0),
    });
    let mut options = RunOptions::new(4000, "S.");
    options.on_delta = Some(Rc::new(|d: &StreamDelta| match d {
        StreamDelta::Text { text } if text == "look." => Err(Error::new(
            ErrorCode::HandlerFailed,
            "onDelta threw: the page is gone",
        )),
        _ => Ok(()),
    }));
    let e = block_on(run_compiled("Why?", &b, &options)).expect_err("failed");
    assert_eq!(e.code(), ErrorCode::HandlerFailed);
    assert_eq!(
        events(&b)[1].1,
        json!({"text": "Let me look.", "partial": true})
    );
}

/// A Chat Completions stream that ends after the chunk naming a call, before
/// any arguments or a finish reason: the call does not run (once it ran as
/// `delete_branch({})`); the run fails with MODEL_FAILED keeping the text.
/// A call whose arguments arrived whole runs without a finish reason (some
/// servers leave it out).
#[test]
fn a_stream_cut_after_naming_a_call_runs_no_call() {
    let cut = vec![
        json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Deleting it."}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "delete_branch", "arguments": ""}}]}, "finish_reason": null}]}),
    ];
    let mut reader = StreamReader::new(None);
    for c in &cut {
        reader.push(c).unwrap();
    }
    assert_eq!(reader.unfinished_call(), Some("delete_branch"));
    assert!(reader.finish().unwrap().tool_calls.is_empty());
    let a = agent(Streaming {
        first: cut.clone(),
        after_first: After::End,
        later: Vec::new(),
        calls: RefCell::new(0),
    });
    let e = block_on(run_compiled("Clean up", &a, &RunOptions::new(4000, "S."))).expect_err("cut");
    assert_eq!(e.code(), ErrorCode::ModelFailed);
    assert!(e.message().contains("delete_branch"), "{}", e.message());
    let recorded = events(&a);
    assert!(
        recorded.iter().all(|(k, _)| k != "tool_call"),
        "{recorded:?}"
    );
    assert_eq!(
        recorded.last().unwrap().1,
        json!({"text": "Deleting it.", "partial": true})
    );
    // Half its arguments: cut too.
    let mut half = cut.clone();
    half.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"name\": \"ma"}}]}, "finish_reason": null}]}));
    let mut reader = StreamReader::new(None);
    half.iter().for_each(|c| {
        reader.push(c).unwrap();
    });
    assert_eq!(reader.unfinished_call(), Some("delete_branch"));
    // Whole arguments and no finish reason: it runs.
    let mut whole = openai_chunks();
    whole.retain(|c| c["choices"][0]["finish_reason"] != "tool_calls");
    let b = agent(Streaming {
        first: whole,
        after_first: After::End,
        later: vec![json!({"choices": [{"delta": {"content": "Done."}, "finish_reason": "stop"}]})],
        calls: RefCell::new(0),
    });
    let result = block_on(run_compiled("Read", &b, &RunOptions::new(4000, "S."))).expect("run");
    assert_eq!(result.result, "Done.");
    assert!(events(&b).iter().any(|(k, _)| k == "tool_success"));
}

/// 16 MiB of every kind of delta, in 128-byte pieces: text, tool-call
/// arguments and Anthropic's thinking. Kept whole per piece, a reader copies
/// what it holds on each delta (about a terabyte here) and never finishes;
/// appended, it reads them at the speed of the bytes.
#[test]
fn every_delta_kind_accumulates_in_linear_time() {
    const PIECES: usize = 1 << 17;
    let piece = "abcdefgh".repeat(16);
    let whole = piece.repeat(PIECES);
    let arguments = |i: usize| match i {
        0 => format!("{{\"x\":\"{piece}"),
        i if i == PIECES - 1 => format!("{piece}\"}}"),
        _ => piece.clone(),
    };
    // Each format's chunks for piece `i`.
    type Chunks<'a> = Box<dyn Fn(usize) -> Vec<Value> + 'a>;
    let streams: Vec<(&str, Chunks)> = vec![
        (
            "anthropic",
            Box::new(|i| {
                let mut c = vec![
                    json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": piece}}),
                    json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": piece}}),
                    json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": arguments(i)}}),
                ];
                if i == 0 {
                    c.splice(0..0, [
                        json!({"type": "message_start", "message": {"usage": {"input_tokens": 1}}}),
                        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
                        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "big"}}),
                    ]);
                }
                if i == PIECES - 1 {
                    c.push(json!({"type": "content_block_stop", "index": 2}));
                }
                c
            }),
        ),
        (
            "openai",
            Box::new(|i| {
                let finish = if i == PIECES - 1 {
                    json!("tool_calls")
                } else {
                    Value::Null
                };
                vec![
                    json!({"choices": [{"index": 0, "finish_reason": finish, "delta": {
                        "content": piece,
                        "tool_calls": [{"index": 0, "id": if i == 0 { "c1" } else { "" }, "function": {"name": if i == 0 { "big" } else { "" }, "arguments": arguments(i)}}]
                    }}]}),
                ]
            }),
        ),
        (
            "responses",
            Box::new(|i| {
                let mut c = vec![
                    json!({"type": "response.output_text.delta", "item_id": "m1", "delta": piece}),
                    json!({"type": "response.function_call_arguments.delta", "item_id": "f1", "delta": arguments(i)}),
                ];
                if i == 0 {
                    c.insert(0, json!({"type": "response.output_item.added", "item": {"type": "function_call", "id": "f1", "call_id": "c1", "name": "big"}}));
                }
                if i == PIECES - 1 {
                    c.push(json!({"type": "response.output_item.done", "item": {"type": "function_call", "id": "f1", "call_id": "c1", "name": "big", "arguments": format!("{{\"x\":\"{whole}\"}}")}}));
                }
                c
            }),
        ),
        (
            "ai-sdk",
            Box::new(|i| {
                let mut c = vec![
                    json!({"type": "text-delta", "id": "t", "text": piece}),
                    json!({"type": "tool-input-delta", "id": "c1", "delta": arguments(i)}),
                ];
                if i == 0 {
                    c.insert(
                        0,
                        json!({"type": "tool-input-start", "id": "c1", "toolName": "big"}),
                    );
                }
                if i == PIECES - 1 {
                    c.push(json!({"type": "tool-call", "toolCallId": "c1", "toolName": "big", "input": format!("{{\"x\":\"{whole}\"}}")}));
                }
                c
            }),
        ),
    ];
    let started = std::time::Instant::now();
    for (name, chunks) in &streams {
        let mut reader = StreamReader::new(None);
        for i in 0..PIECES {
            for c in chunks(i) {
                reader.push(&c).expect(name);
            }
        }
        let reply = reader.finish().expect(name);
        assert_eq!(reply.text.len(), whole.len(), "{name}: text");
        assert!(reply.text == whole, "{name}: text in order");
        let args = reply.tool_calls[0].arguments.as_ref().expect(name);
        assert!(
            args["x"].as_str() == Some(whole.as_str()),
            "{name}: arguments"
        );
        if *name == "anthropic" {
            let thought = &reply.reasoning.expect("reasoning").items[0]["thinking"];
            assert!(
                thought.as_str() == Some(whole.as_str()),
                "thinking in order"
            );
        }
    }
    // A bound twenty times what a debug build takes here (6 s), which the
    // copying reader misses by hours.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );
}
