//! The providers' own response objects as a model's reply: a Chat
//! Completion, a Responses response, an Anthropic message, a Gemini
//! `GenerateContentResponse` and the AI SDK's `generateText` result, each
//! read into its text, tool calls and usage.
use context_compiler::runner::ModelReply;
use context_compiler::{ErrorCode, ProviderFormat};
use serde_json::json;

fn read(v: serde_json::Value) -> ModelReply {
    ModelReply::from_json(&v).expect("a usable reply")
}

#[test]
fn a_chat_completion() {
    let reply = read(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Checking.", "refusal": null,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "df", "arguments": "{\"path\":\"/data\"}"}}]
        }}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129, "prompt_tokens_details": {"cached_tokens": 64}}
    }));
    assert_eq!(reply.text, "Checking.");
    assert_eq!(reply.tool_calls[0].name, "df");
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"path": "/data"})));
    assert_eq!(
        reply.usage.map(|u| (u.input_tokens, u.cached_input_tokens)),
        Some((120, 64))
    );
}

#[test]
fn a_responses_response() {
    let reply = read(json!({
        "id": "resp_1", "object": "response", "status": "completed",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": "The disk is full.", "annotations": []}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "du", "arguments": "{\"path\":\"/data\"}", "status": "completed"}
        ],
        "usage": {"input_tokens": 300, "output_tokens": 12, "input_tokens_details": {"cached_tokens": 0}, "total_tokens": 312}
    }));
    assert_eq!(reply.text, "The disk is full.");
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"path": "/data"})));
    assert_eq!(reply.usage.map(|u| u.input_tokens), Some(300));
    // The reasoning item, to send back while the loop runs.
    let reasoning = reply.reasoning.expect("reasoning");
    assert_eq!(reasoning.format, ProviderFormat::OpenAiResponses);
    assert_eq!(reasoning.items[0]["encrypted_content"], "gAAA");
}

#[test]
fn an_anthropic_message() {
    let reply = read(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [
            {"type": "thinking", "thinking": "The user wants…", "signature": "EqQB"},
            {"type": "text", "text": "I'll read the log."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_logs", "input": {"lines": 5}}
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 50, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 400, "output_tokens": 30}
    }));
    assert_eq!(reply.text, "I'll read the log.");
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"lines": 5})));
    assert_eq!(reply.usage.map(|u| u.input_tokens), Some(450));
    // The signed thinking block, to send back while the loop runs.
    let reasoning = reply.reasoning.expect("reasoning");
    assert_eq!(reasoning.format, ProviderFormat::Anthropic);
    assert_eq!(
        reasoning.items,
        [json!({"type": "thinking", "thinking": "The user wants…", "signature": "EqQB"})]
    );
    assert_eq!(
        context_compiler::runner::Reasoning::from_json(&reasoning.to_json()),
        Some(reasoning)
    );
}

#[test]
fn a_gemini_response() {
    let reply = read(json!({
        "candidates": [{"content": {"role": "model", "parts": [
            {"text": "Let me think", "thought": true},
            {"text": "The disk is full."},
            {"functionCall": {"id": "fc-1", "name": "du", "args": {"path": "/data"}}, "thoughtSignature": "CiQB"}
        ]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 80, "candidatesTokenCount": 7, "totalTokenCount": 87}
    }));
    assert_eq!(reply.text, "The disk is full.");
    assert_eq!(reply.tool_calls[0].name, "du");
    assert_eq!(reply.tool_calls[0].signature.as_deref(), Some("CiQB"));
    assert_eq!(reply.reasoning, None);
    assert_eq!(reply.tool_calls[0].arguments, Ok(json!({"path": "/data"})));
    assert_eq!(reply.usage.map(|u| u.input_tokens), Some(80));
}

#[test]
fn an_ai_sdk_generate_text_result() {
    let reply = read(json!({
        "text": "",
        "toolCalls": [{"type": "tool-call", "toolCallId": "c1", "toolName": "add", "input": {"a": 1, "b": 2}}],
        "usage": {"inputTokens": 70, "outputTokens": 11, "cachedInputTokens": 10}
    }));
    assert_eq!(reply.tool_calls[0].name, "add");
    assert_eq!(reply.usage.map(|u| u.cached_input_tokens), Some(10));
}

#[test]
fn empty_or_broken_provider_responses_are_model_failures() {
    for bad in [
        json!({"choices": []}),
        json!({"choices": [{"message": {"role": "assistant", "content": null}}]}),
        json!({"output": []}),
        json!({"candidates": [{"content": {"parts": [{"text": "hidden", "thought": true}]}}]}),
        json!({"candidates": "x"}),
        json!({"output": [{"type": "function_call", "arguments": "{}"}]}),
    ] {
        let e = ModelReply::from_json(&bad).expect_err("refused");
        assert_eq!(e.code(), ErrorCode::ModelFailed, "{bad}");
    }
}

/// What a response says of itself is read from each provider's shape and
/// bounded: a provider's id or model of any length is cut, its finish
/// reasons are at most a few (evidence for a span, never trusted whole).
#[test]
fn response_descriptions_are_read_and_bounded() {
    use context_compiler::runner::ResponseMeta;
    let gemini = ModelReply::from_json(&json!({
        "responseId": "r-1", "modelVersion": "gemini-2.5-pro",
        "candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}, "finishReason": "STOP"}]
    }))
    .unwrap();
    assert_eq!(gemini.response.id.as_deref(), Some("r-1"));
    assert_eq!(gemini.response.model.as_deref(), Some("gemini-2.5-pro"));
    assert_eq!(gemini.response.finish_reasons, vec!["STOP"]);
    let responses = ModelReply::from_json(&json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-4.1",
        "output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hi"}]}]
    }))
    .unwrap();
    assert_eq!(responses.response.finish_reasons, vec!["completed"]);
    let ai_sdk = ModelReply::from_json(
        &json!({"text": "Hi", "finishReason": "stop", "response": {"id": "x", "modelId": "m"}}),
    )
    .unwrap();
    assert_eq!(
        (
            ai_sdk.response.id.as_deref(),
            ai_sdk.response.model.as_deref()
        ),
        (Some("x"), Some("m"))
    );
    let hostile = ModelReply::from_json(&json!({
        "id": "i".repeat(1_000_000), "model": 42,
        "choices": (0..100).map(|_| json!({"finish_reason": "stop", "message": {"content": "Hi"}})).collect::<Vec<_>>()
    }))
    .unwrap();
    assert_eq!(
        hostile.response.id.map(|s| s.len()),
        Some(ResponseMeta::MAX_CHARS)
    );
    assert_eq!(hostile.response.model, None);
    assert_eq!(
        hostile.response.finish_reasons.len(),
        ResponseMeta::MAX_REASONS
    );
}
