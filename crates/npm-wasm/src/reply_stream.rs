//! A model's streamed reply, as JS hands it: an async iterable of chunks
//! (an OpenAI or Anthropic SDK stream, the AI SDK's `fullStream`, a Gemini
//! `generateContentStream`, an async generator) or a `ReadableStream`, read
//! as the core's [`ReplyStream`]; and `onDelta`, told of each piece.

use std::rc::Rc;

use async_trait::async_trait;
use js_sys::{Function, Reflect, Symbol};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::runner::{DeltaListener, ReplyStream, StreamDelta};
use context_compiler_js::convert::{js_to_json, to_js};
use context_compiler_js::error::thrown_message;
use context_compiler_js::llm::AbortOnDrop;
use context_compiler_js::promise::call_and_await;

/// A JS iterator of chunks: `next()` (or a stream reader's `read()`)
/// resolving to `{ done, value }`. Dropped before its end, it returns the
/// iterator (or cancels the reader) and aborts the model call's signal.
pub(crate) struct JsReplyStream {
    iterator: JsValue,
    next: Function,
    /// `return` or `cancel`, to stop the source early.
    stop: Option<Function>,
    /// The model call's signal, aborted when the stream is dropped unread.
    pending: AbortOnDrop,
    done: bool,
}

fn method(target: &JsValue, name: &str) -> Option<Function> {
    Reflect::get(target, &name.into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
}

/// Where a stream's chunks come from, before it is read.
pub(crate) struct StreamSource {
    iterator: JsValue,
    next: Function,
    stop: Option<Function>,
}

impl StreamSource {
    /// The source `answer` is, when it is a stream: an object with
    /// `Symbol.asyncIterator`, or with `getReader` (a `ReadableStream`
    /// where it is not async iterable).
    pub(crate) fn of(answer: &JsValue) -> Result<Option<Self>> {
        if !answer.is_object() {
            return Ok(None);
        }
        let failed = |e: JsValue| {
            Error::new(
                ErrorCode::ModelFailed,
                format!(
                    "the model's stream could not be read: {}",
                    thrown_message(&e)
                ),
            )
        };
        let iterable = Reflect::get(answer, &Symbol::async_iterator())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok());
        let (iterator, next, stop) = if let Some(open) = iterable {
            let iterator = open.call0(answer).map_err(failed)?;
            let next = method(&iterator, "next");
            let stop = method(&iterator, "return");
            (iterator, next, stop)
        } else if let Some(get_reader) = method(answer, "getReader") {
            let reader = get_reader.call0(answer).map_err(failed)?;
            let next = method(&reader, "read");
            let stop = method(&reader, "cancel");
            (reader, next, stop)
        } else {
            return Ok(None);
        };
        let next = next.ok_or_else(|| {
            Error::new(
                ErrorCode::ModelFailed,
                "the model's stream has no next() (or read()) method",
            )
        })?;
        Ok(Some(StreamSource {
            iterator,
            next,
            stop,
        }))
    }

    /// The stream, holding the model call's signal until it is read.
    pub(crate) fn read_with(self, pending: AbortOnDrop) -> JsReplyStream {
        JsReplyStream {
            iterator: self.iterator,
            next: self.next,
            stop: self.stop,
            pending,
            done: false,
        }
    }
}

#[async_trait(?Send)]
impl ReplyStream for JsReplyStream {
    async fn next_chunk(&mut self) -> Result<Option<Value>> {
        let step = call_and_await(
            &self.next,
            &self.iterator,
            &[],
            ErrorCode::ModelFailed,
            "the model's stream",
        )
        .await;
        let step = match step {
            Ok(step) => step,
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        let done = Reflect::get(&step, &"done".into()).is_ok_and(|d| d.is_truthy());
        if done || !step.is_object() {
            self.done = true;
            self.pending.settled();
            return Ok(None);
        }
        let value = Reflect::get(&step, &"value".into()).unwrap_or(JsValue::UNDEFINED);
        if let Some(text) = value.as_string() {
            return Ok(Some(Value::String(text)));
        }
        js_to_json(&value, "chunk").map(Some).map_err(|e| {
            Error::new(
                ErrorCode::ModelFailed,
                format!(
                    "the model's stream gave a chunk that is neither text nor JSON: {}",
                    e.message()
                ),
            )
        })
    }
}

impl Drop for JsReplyStream {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Some(stop) = &self.stop {
            // The source may reject: that is not the run's concern.
            if let Ok(p) = stop.call0(&self.iterator) {
                if let Ok(p) = p.dyn_into::<js_sys::Promise>() {
                    wasm_bindgen_futures::spawn_local(async move {
                        let _ = wasm_bindgen_futures::JsFuture::from(p).await;
                    });
                }
            }
        }
    }
}

/// `onDelta` as the runner's listener: called with `{ type: "text", text }`
/// or `{ type: "tool-call", id, name, argumentsDelta }`; a throw stops the
/// run with `HANDLER_FAILED` (what it returns is not awaited).
pub(crate) fn delta_listener(on_delta: Function) -> DeltaListener {
    Rc::new(move |delta: &StreamDelta| {
        let value = to_js(delta)?;
        on_delta
            .call1(&JsValue::UNDEFINED, &value)
            .map(|_| ())
            .map_err(|e| {
                Error::new(
                    ErrorCode::HandlerFailed,
                    format!("onDelta threw: {}", thrown_message(&e)),
                )
            })
    })
}
