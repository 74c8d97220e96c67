//! `ToolEvent` and `ToolInterruptHandler` for JS, and JS tool bridges.

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use context_compiler_js::error::{JsResult, Thrown};
use js_sys::{Function, Object, Reflect};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;

use crate::artifact_store_arg::artifact_store_arg;
use crate::types::*;
use context_compiler::clock::IdRng;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{bytes, count, from_js, js_to_json, option, string, to_js};
use context_compiler_js::env::{seed, JsClock};
use context_compiler_js::error::to_js_error;
use context_compiler_js::llm::{abort, abort_controller};
use context_compiler_js::options::optional_string;
use context_compiler_js::promise::{call_and_await, require_callable, spawn};
use context_compiler_js::registry::Registration;

use crate::registry;
use context_compiler::normalize::aligner::PerceptionAligner as CoreAligner;
use context_compiler::session::Session;
use context_compiler::tools::{
    AbortSignal, CallNotes, ToolBridge, ToolEvent as CoreEvent, ToolEventInit, ToolFailure,
    ToolInterruptHandler as CoreHandler, ToolInterruptOptions, ToolOutput,
};

/// A typed tool interaction event (`tool_call`, `tool_success`,
/// `tool_error`, `tool_timeout`).
#[wasm_bindgen]
pub struct ToolEvent {
    inner: CoreEvent,
}

fn js<T: serde::Serialize + ?Sized>(v: &T) -> JsResult<JsValue> {
    to_js(v).map_err(Thrown::from)
}

#[wasm_bindgen]
impl ToolEvent {
    /// `ToolEvent.create`: `{ kind, toolName, arguments, result,
    /// error, latencyMs, normalized }`, stamped now with a fresh id.
    pub fn create(
        #[wasm_bindgen(unchecked_param_type = "ToolEventInit")] init: JsValue,
    ) -> JsResult<ToolEvent> {
        let init: ToolEventInit = from_js(&init, "ToolEvent.create")?;
        if !init.latency_ms.is_finite() || init.latency_ms < 0.0 {
            return Err(Thrown::from(Error::new(
                ErrorCode::InvalidArgument,
                "latencyMs must be a non-negative number",
            )));
        }
        let mut rng = IdRng::new(seed());
        Ok(ToolEvent {
            inner: CoreEvent::create(init, &JsClock, &mut rng),
        })
    }

    /// Time-sortable id (that of the session event that recorded it).
    #[wasm_bindgen(getter, js_name = eventId)]
    pub fn event_id(&self) -> String {
        self.inner.event_id.clone()
    }

    /// Milliseconds since the epoch.
    #[wasm_bindgen(getter)]
    pub fn timestamp(&self) -> f64 {
        self.inner.timestamp
    }

    /// `"tool_call" | "tool_success" | "tool_error" | "tool_timeout"`.
    #[wasm_bindgen(getter, unchecked_return_type = "ToolEventKindName")]
    pub fn kind(&self) -> JsValue {
        self.inner.kind.as_str().into()
    }

    /// The tool's name.
    #[wasm_bindgen(getter, js_name = toolName)]
    pub fn tool_name(&self) -> String {
        self.inner.tool_name.clone()
    }

    /// The call's arguments.
    #[wasm_bindgen(getter, unchecked_return_type = "Json")]
    pub fn arguments(&self) -> JsResult<JsValue> {
        js(&self.inner.arguments)
    }

    /// The (redacted) output, on success; otherwise `null`.
    #[wasm_bindgen(getter, unchecked_return_type = "string | null")]
    pub fn result(&self) -> JsValue {
        self.inner
            .result
            .as_deref()
            .map_or(JsValue::NULL, JsValue::from_str)
    }

    /// The failure's message, on error or timeout; otherwise `null`.
    #[wasm_bindgen(getter, unchecked_return_type = "string | null")]
    pub fn error(&self) -> JsValue {
        self.inner
            .error
            .as_deref()
            .map_or(JsValue::NULL, JsValue::from_str)
    }

    /// Milliseconds from the call to its outcome.
    #[wasm_bindgen(getter, js_name = latencyMs)]
    pub fn latency_ms(&self) -> f64 {
        self.inner.latency_ms
    }

    /// The normalised output, on success; otherwise `null`.
    #[wasm_bindgen(getter, unchecked_return_type = "NormalizedOutput | null")]
    pub fn normalized(&self) -> JsResult<JsValue> {
        match &self.inner.normalized {
            Some(n) => js(n),
            None => Ok(JsValue::NULL),
        }
    }

    /// The artifact the output was externalised to; otherwise `null`.
    #[wasm_bindgen(getter, unchecked_return_type = "ArtifactHandle | null")]
    pub fn artifact(&self) -> JsResult<JsValue> {
        match &self.inner.artifact {
            Some(a) => js(a),
            None => Ok(JsValue::NULL),
        }
    }

    /// The event as a plain object.
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "ToolEventData")]
    pub fn to_json(&self) -> JsResult<JsValue> {
        js(&self.inner)
    }
}

/// A tool bridge supplied by JS: an object with `execute(name, args,
/// { signal })` or a bare function with the same parameters, sync or async.
struct JsToolBridge {
    this: JsValue,
    execute: Function,
}

impl JsToolBridge {
    fn from_js(value: &JsValue) -> Result<JsToolBridge> {
        let (this, execute) = require_callable(
            value,
            "execute",
            "options.bridge must be an object with execute(name, args, { signal }) or a function",
        )?;
        Ok(JsToolBridge { this, execute })
    }
}

#[async_trait(?Send)]
impl ToolBridge for JsToolBridge {
    async fn execute(
        &self,
        name: &str,
        arguments: &Value,
        signal: &AbortSignal,
        _deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        let opts = Object::new();
        if let Some(controller) = abort_controller() {
            let js_signal =
                Reflect::get(&controller, &"signal".into()).unwrap_or(JsValue::UNDEFINED);
            let _ = Reflect::set(&opts, &"signal".into(), &js_signal);
            signal.on_abort(move |reason| abort(&controller, reason));
        }
        let args = to_js(arguments).map_err(|e| e.message().to_string())?;
        let out = call_and_await(
            &self.execute,
            &self.this,
            &[name.into(), args, opts.into()],
            ErrorCode::InvalidArgument,
            "execute",
        )
        .await
        .map_err(|e| {
            // Keep the thrown value's own message (`event.error == "boom"`).
            let m = e.message();
            m.split_once(": ").map_or(m, |(_, rest)| rest).to_string()
        })?;
        if let Some(s) = out.as_string() {
            return Ok(ToolOutput::Text(s));
        }
        if out.is_undefined() {
            return Ok(ToolOutput::Text(String::new()));
        }
        if out.is_instance_of::<js_sys::ArrayBuffer>() || js_sys::ArrayBuffer::is_view(&out) {
            // A Buffer from fs.readFile, a Uint8Array, an ArrayBuffer.
            return bytes(&out, "tool result")
                .map(ToolOutput::Bytes)
                .map_err(|e| ToolFailure::Failed(e.message().to_string()));
        }
        js_to_json(&out, "tool result")
            .map(ToolOutput::Json)
            .map_err(|e| ToolFailure::Failed(e.message().to_string()))
    }
}

/// Builds a core handler recording into `session` from the options `get`
/// reads: `bridge` (required), `normalizer`, `artifactStore`,
/// `externalizeThreshold`.
pub(crate) fn handler_from_options(
    get: &dyn Fn(&str) -> Result<JsValue>,
    session: Rc<RefCell<Session>>,
) -> Result<CoreHandler> {
    let bridge = JsToolBridge::from_js(&get("bridge")?)?;
    let normalizer = get("normalizer")?;
    let normalizer = if normalizer.is_undefined() || normalizer.is_null() {
        CoreAligner::default()
    } else {
        registry::aligner(&normalizer)
            .map(|a| (*a).clone())
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    "options.normalizer must be a PerceptionAligner",
                )
            })?
    };
    let store = get("artifactStore")?;
    let artifact_store = if store.is_undefined() || store.is_null() {
        None
    } else {
        Some(artifact_store_arg(&store, "options.artifactStore")?)
    };
    let threshold = count(
        &get("externalizeThreshold")?,
        "options.externalizeThreshold",
        ErrorCode::InvalidArgument,
    )?
    .map_or(context_compiler::tools::DEFAULT_EXTERNALIZE_BYTES, |n| {
        n as usize
    });
    Ok(CoreHandler::new(
        Rc::new(bridge),
        normalizer,
        session,
        Rc::new(JsClock),
        ToolInterruptOptions {
            artifact_store,
            externalize_threshold: threshold,
        },
    ))
}

/// Calls tools through a bridge with a deadline, records typed events in a
/// session, normalises and externalises outputs.
#[wasm_bindgen]
pub struct ToolInterruptHandler {
    inner: Rc<CoreHandler>,
    registration: Registration,
}

#[wasm_bindgen]
impl ToolInterruptHandler {
    /// Options: `bridge` (required), `session` (required), `normalizer` (a
    /// `PerceptionAligner`; an empty one by default), `artifactStore` and
    /// `externalizeThreshold` (bytes, default 1024).
    #[wasm_bindgen(constructor)]
    pub fn new(options: ToolInterruptHandlerOptionsArg) -> JsResult<ToolInterruptHandler> {
        let options = Some(options);
        let get = |k: &str| option(&options, k, "options");
        let session = registry::session(&get("session")?).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                "options.session must be a Session",
            )
        })?;
        let inner = Rc::new(handler_from_options(&get, session)?);
        let registration = registry::register(Rc::downgrade(&inner));
        Ok(ToolInterruptHandler {
            inner,
            registration,
        })
    }

    #[wasm_bindgen(getter = __nativeId, skip_typescript)]
    /// Registry id (internal).
    pub fn native_id(&self) -> u32 {
        self.registration.id()
    }

    /// Calls `name` with `args`; resolves to a `ToolEvent` of kind
    /// `tool_success`, `tool_error` or `tool_timeout` (failures are events,
    /// not rejections). Options: `timeoutMs` (default 30,000); `callId`,
    /// the provider's id of the call, recorded on the `tool_call` and its
    /// outcome, so rendered requests pair them under that id;
    /// `thoughtSignature` and `reasoning`, sent back with the call (as
    /// `recordReply` gives them in a call's `callOptions`).
    #[wasm_bindgen(unchecked_return_type = "Promise<ToolEvent>")]
    pub fn call(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Json")] args: JsValue,
        options: Option<CallOptionsArg>,
    ) -> js_sys::Promise {
        // The tool's name, its arguments, the timeout and the call's notes.
        type Prepared = (String, Value, Option<f64>, Map<String, Value>);
        let prepared = (|| -> Result<Prepared> {
            let name = string(&name, "name")?;
            let args = if args.is_undefined() {
                Value::Object(Default::default())
            } else {
                js_to_json(&args, "args")?
            };
            let timeout = option(&options, "timeoutMs", "options")?;
            let timeout = if timeout.is_undefined() || timeout.is_null() {
                None
            } else {
                match timeout.as_f64() {
                    Some(t) if t > 0.0 && t.is_finite() => Some(t),
                    _ => {
                        return Err(Error::new(
                            ErrorCode::InvalidArgument,
                            "options.timeoutMs must be a positive number",
                        ))
                    }
                }
            };
            let reasoning = option(&options, "reasoning", "options")?;
            let notes = CallNotes {
                call_id: optional_string(&options, "callId")?,
                thought_signature: optional_string(&options, "thoughtSignature")?,
                reasoning: if reasoning.is_undefined() || reasoning.is_null() {
                    None
                } else {
                    Some(js_to_json(&reasoning, "options.reasoning")?)
                },
            }
            .into_map()?;
            Ok((name, args, timeout, notes))
        })();
        let (name, args, timeout, notes) = match prepared {
            Ok(p) => p,
            Err(e) => return js_sys::Promise::reject(&to_js_error(e)),
        };
        let handler = self.inner.clone();
        spawn(async move {
            let event = handler
                .call_noted(&name, args, timeout, None, notes)
                .await?;
            Ok(ToolEvent { inner: event }.into())
        })
    }
}
