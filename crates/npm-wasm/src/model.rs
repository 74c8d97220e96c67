//! The model as JS gives it: a function (or an object with `respond`)
//! answering with a reply of its own shape, a provider SDK's response, an
//! AI SDK result, or a stream; and a whole reply a host's own loop got
//! (`Session.recordReply`).

use async_trait::async_trait;
use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::reply_stream::StreamSource;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::runner::{
    Model, ModelAnswer, ModelReply, ModelRequest, StreamFormat, StreamReader,
};
use context_compiler::working_context::ProviderFormat;
use context_compiler_js::convert::{array_items, js_to_json, to_js};
use context_compiler_js::error::thrown_message;
use context_compiler_js::llm::{abort, AbortOnDrop};
use context_compiler_js::promise::call_and_await;

/// A JS function (or object with `respond`) as the runner's [`Model`].
pub(crate) struct JsModel {
    /// What `respond` is called on.
    pub(crate) this: JsValue,
    /// The model function.
    pub(crate) respond: Function,
    /// The shape of the messages it gets.
    pub(crate) format: ProviderFormat,
    /// The shape of its streamed chunks, when named.
    pub(crate) stream_format: Option<StreamFormat>,
}

#[async_trait(?Send)]
impl Model for JsModel {
    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply> {
        match self.respond_streaming(request).await? {
            ModelAnswer::Reply(reply) => Ok(reply),
            ModelAnswer::Stream(mut stream) => {
                let mut reader = StreamReader::new(self.stream_format);
                while let Some(chunk) = stream.next_chunk().await? {
                    reader.push(&chunk)?;
                }
                reader.finish()
            }
        }
    }

    async fn respond_streaming(&self, request: ModelRequest<'_>) -> Result<ModelAnswer> {
        let messages = to_js(&request.context.to_provider_messages(self.format))?;
        let tools: Vec<_> = request
            .tools
            .iter()
            .map(|t| t.definition(self.format))
            .collect();
        let mut pending = AbortOnDrop::new();
        if let Some(controller) = pending.controller() {
            request
                .signal
                .on_abort(move |reason| abort(&controller, reason));
        }
        let opts = Object::new();
        let _ = Reflect::set(&opts, &"tools".into(), &to_js(&tools)?);
        if let Some(choice) = request.tool_choice {
            let _ = Reflect::set(
                &opts,
                &"toolChoice".into(),
                &to_js(&choice.for_format(self.format))?,
            );
        }
        let _ = Reflect::set(&opts, &"signal".into(), &pending.signal());
        let _ = Reflect::set(&opts, &"step".into(), &(request.step as f64).into());
        let out = call_and_await(
            &self.respond,
            &self.this,
            &[messages, opts.into()],
            ErrorCode::ModelFailed,
            "the model",
        )
        .await;
        if out.is_err() {
            pending.settled();
        }
        let out = ai_sdk_result(out?)?;
        // A stream keeps the call's signal live until it is read.
        if let Some(source) = StreamSource::of(&out)? {
            return Ok(ModelAnswer::Stream(Box::new(source.read_with(pending))));
        }
        pending.settled();
        whole_reply(&out).map(ModelAnswer::Reply)
    }
}

/// A whole reply (not a stream) read from JS: a string, a reply object, a
/// provider's response or the reply [`ai_sdk_result`] made of an AI SDK
/// result. An unusable one is `MODEL_FAILED`.
fn whole_reply(out: &JsValue) -> Result<ModelReply> {
    if let Some(text) = out.as_string() {
        return ModelReply::from_json(&serde_json::Value::String(text));
    }
    let reply = js_to_json(out, "the model's reply").map_err(|e| {
        Error::new(
            ErrorCode::ModelFailed,
            format!("the model's reply is not usable: {}", e.message()),
        )
    })?;
    ModelReply::from_json(&reply)
}

/// A whole reply as a loop of the host's own got it (see
/// `Session.recordReply`): what [`whole_reply`] reads, an AI SDK
/// `generateText` result included. A stream, or a reply that is not
/// usable, is `INVALID_ARGUMENT`.
pub(crate) fn reply_from_js(reply: JsValue) -> Result<ModelReply> {
    let as_argument = |e: Error| match e.code() {
        ErrorCode::ModelFailed => Error::new(ErrorCode::InvalidArgument, e.message().to_string()),
        _ => e,
    };
    let reply = ai_sdk_result(reply).map_err(as_argument)?;
    if StreamSource::of(&reply)?.is_some() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "recordReply takes a whole reply, not a stream: read it to its end first and pass what it gave (for the AI SDK's streamText: { text: await r.text, toolCalls: await r.toolCalls, usage: await r.usage })",
        ));
    }
    whole_reply(&reply).map_err(as_argument)
}

/// `key` of `object`, read as JS reads it (through getters); a getter that
/// throws is the model's failure.
fn field(object: &JsValue, key: &str) -> Result<JsValue> {
    Reflect::get(object, &key.into()).map_err(|e| unreadable(key, &e))
}

/// `MODEL_FAILED`: reading the reply's `key` threw `thrown`.
fn unreadable(key: &str, thrown: &JsValue) -> Error {
    Error::new(
        ErrorCode::ModelFailed,
        format!(
            "the model's reply: reading {key} threw: {}",
            thrown_message(thrown)
        ),
    )
}

/// The AI SDK's results as a reply: a `streamText` result is its
/// `fullStream`; a `generateText` result (whose fields are getters on its
/// prototype, which a JSON conversion does not see) is its last step's
/// `{ text, toolCalls, usage }`. A result whose tools the SDK ran itself
/// (several steps, or tool results) is `MODEL_FAILED`: the run records and
/// runs the calls, so the tools are given to the SDK without `execute`.
/// Anything else is returned as it is.
fn ai_sdk_result(out: JsValue) -> Result<JsValue> {
    if !out.is_object() || out.is_instance_of::<js_sys::Array>() {
        return Ok(out);
    }
    let steps = field(&out, "steps")?;
    let steps = array_items(&steps).map_err(|e| unreadable("steps", &e))?;
    let Some(steps) = steps.filter(|_| Reflect::has(&out, &"totalUsage".into()).unwrap_or(false))
    else {
        let full = field(&out, "fullStream")?;
        let is_stream =
            Reflect::has(&out, &"textStream".into()).unwrap_or(false) && full.is_object();
        return Ok(if is_stream { full } else { out });
    };
    let ran = |why: &str| {
        Err(Error::new(
            ErrorCode::ModelFailed,
            format!(
                "the AI SDK {why}: give it the tools without execute (aiSdkTools, or the \
                 ai-sdk format's tools as they come) so that the run records and runs the calls"
            ),
        ))
    };
    if steps.length() > 1 {
        return ran(&format!(
            "ran {} steps, running the tools itself",
            steps.length()
        ));
    }
    let step = steps.get(0);
    let results = field(&step, "toolResults")?;
    let results = array_items(&results).map_err(|e| unreadable("toolResults", &e))?;
    if results.is_some_and(|r| r.length() > 0) {
        return ran("ran the tools itself (the step has tool results)");
    }
    let reply = Object::new();
    for key in ["text", "toolCalls"] {
        let _ = Reflect::set(&reply, &key.into(), &field(&step, key)?);
    }
    // A provider that reported no usage leaves its counts undefined.
    let usage = field(&step, "usage")?;
    if usage.is_object() && field(&usage, "inputTokens")?.as_f64().is_some() {
        let _ = Reflect::set(&reply, &"usage".into(), &usage);
    }
    Ok(reply.into())
}
