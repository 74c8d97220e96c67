//! `EventBus` for JS: the core bus with JS handlers, persister and error
//! listener, its loop spawned by `start()`.

use std::rc::Rc;

use async_trait::async_trait;
use context_compiler_js::error::{to_js_error, JsResult};
use js_sys::{Function, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;

use context_compiler::bus::{BusEvent, BusOptions, EventBus, EventHandler};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{count, from_js, option, string, to_js};
use context_compiler_js::env::JsClock;
use context_compiler_js::promise::{call_and_await, require_callable, spawn};
use context_compiler_js::registry::Registration;

use crate::registry;

#[wasm_bindgen(typescript_custom_section)]
const TS_BUS: &'static str = r#"
import type { BusEvent } from "../../js/types/BusEvent.js";
import type { BusStats } from "../../js/types/BusStats.js";
import type { HandlerStats } from "../../js/types/HandlerStats.js";
export type { BusEvent, BusStats, HandlerStats };
import type { ContextCompilerError, InMemoryBackend, Json, MemoryEntry, MemoryFilter, MemoryStoreLike, PersistentMemory, Summarizer } from "./context_compiler.js";
/** What `emit` takes: `timestamp` (ms since the Unix epoch) defaults to the bus's clock. */
export interface BusEventInit { type: string; agentId: string; sessionId?: string | null; data?: { [key: string]: Json }; timestamp?: number }
/** A handler or persister: its throw or rejection is isolated, counted and given to `onError`. */
export type BusHandler = (event: BusEvent) => void | Promise<void>;
export interface EventBusOptions {
  /** Events that may wait; more are dropped (`emit` resolves false). Default 1,000. */
  maxQueue?: number;
  /** How long a handler may take on one event before it counts as timed out (HANDLER_TIMEOUT); default: no limit. */
  handlerTimeoutMs?: number;
  /** Told about every handler or persister failure; its own throw is ignored. */
  onError?: (error: ContextCompilerError, handler: string, event: BusEvent) => void;
}
"#;

#[wasm_bindgen]
extern "C" {
    /// The `EventBusOptions` object.
    #[wasm_bindgen(typescript_type = "EventBusOptions")]
    pub type EventBusOptionsArg;
    /// The `BusEventInit` object.
    #[wasm_bindgen(typescript_type = "BusEventInit")]
    pub type BusEventInitArg;
    /// The `BusHandler` function.
    #[wasm_bindgen(typescript_type = "BusHandler")]
    pub type BusHandlerArg;
}

/// The `EventBus` given as `options.bus` (to the bus's handlers).
pub(crate) fn bus_option<T: AsRef<JsValue>>(options: &Option<T>) -> Result<EventBus> {
    crate::registry::bus(&option(options, "bus", "options")?).ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            "options.bus must be an EventBus",
        )
    })
}

/// A JS function as a bus handler (or persister).
struct JsHandler {
    this: JsValue,
    handle: Function,
    what: String,
}

#[async_trait(?Send)]
impl EventHandler for JsHandler {
    async fn handle(&self, event: &BusEvent) -> Result<()> {
        let event = to_js(event)?;
        call_and_await(
            &self.handle,
            &self.this,
            &[event],
            ErrorCode::HandlerFailed,
            &self.what,
        )
        .await
        .map(|_| ())
    }
}

fn handler(value: &JsValue, what: &str) -> Result<JsHandler> {
    let (this, handle) = require_callable(
        value,
        "handle",
        &format!("{what} must be a function (event) => void | Promise<void>"),
    )?;
    Ok(JsHandler {
        this,
        handle,
        what: what.to_string(),
    })
}

/// The event bus (docs/event-bus.md).
#[wasm_bindgen(js_name = EventBus)]
pub struct JsEventBus {
    bus: EventBus,
    registration: Registration,
}

#[wasm_bindgen(js_class = EventBus)]
impl JsEventBus {
    /// A stopped bus. Options: `maxQueue` (default 1,000), `handlerTimeoutMs`, `onError`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<EventBusOptionsArg>) -> JsResult<JsEventBus> {
        let max_queue = count(
            &option(&options, "maxQueue", "options")?,
            "options.maxQueue",
            ErrorCode::InvalidArgument,
        )?
        .map_or(1000, |n| n as usize);
        let timeout = option(&options, "handlerTimeoutMs", "options")?;
        let handler_timeout_ms = if timeout.is_undefined() || timeout.is_null() {
            None
        } else {
            Some(timeout.as_f64().unwrap_or(f64::NAN))
        };
        let on_error = option(&options, "onError", "options")?;
        let on_error: Option<context_compiler::bus::ErrorListener> =
            if on_error.is_undefined() || on_error.is_null() {
                None
            } else {
                let (this, f) = require_callable(
                    &on_error,
                    "onError",
                    "options.onError must be a function (error, handler, event) => void",
                )?;
                Some(Rc::new(
                    move |name: &str, event: &BusEvent, error: &Error| {
                        let event = to_js(event).unwrap_or(JsValue::NULL);
                        // The listener's own throw is ignored: it must not stop the bus.
                        let _ = f.call3(
                            &this,
                            &to_js_error(error.clone()),
                            &JsValue::from(name),
                            &event,
                        );
                    },
                ))
            };
        let bus = EventBus::new(
            Rc::new(JsClock),
            BusOptions {
                max_queue,
                handler_timeout_ms,
                on_error,
            },
        )?;
        let registration = registry::register(bus.clone());
        Ok(JsEventBus { bus, registration })
    }

    /// The id the registry knows this bus by (used by the handlers' `bus` option).
    #[wasm_bindgen(getter = __nativeId, skip_typescript)]
    pub fn native_id(&self) -> u32 {
        self.registration.id()
    }

    /// Registers `handler` for events of `type` (several per type); returns
    /// a function that unregisters it. `name` (default: the function's
    /// name) keys it in `stats` and `onError`.
    #[wasm_bindgen(unchecked_return_type = "() => boolean")]
    pub fn on(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] event_type: JsValue,
        handler_fn: BusHandlerArg,
        #[wasm_bindgen(unchecked_param_type = "string | undefined")] name: JsValue,
    ) -> JsResult<JsValue> {
        let event_type = string(&event_type, "type")?;
        let h = handler(&handler_fn, "handler")?;
        let name = if name.is_undefined() || name.is_null() {
            Reflect::get(&h.handle, &"name".into())
                .ok()
                .and_then(|n| n.as_string())
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| format!("{event_type} handler"))
        } else {
            string(&name, "name")?
        };
        let id = self.bus.on(&event_type, &name, Rc::new(h));
        let bus = self.bus.clone();
        let off = Closure::<dyn FnMut() -> bool>::new(move || bus.off(id));
        Ok(off.into_js_value())
    }

    /// Sets the persister, called for every
    /// event before its handlers; `null` removes it.
    #[wasm_bindgen(js_name = setPersister)]
    pub fn set_persister(
        &self,
        #[wasm_bindgen(unchecked_param_type = "BusHandler | null")] persister: JsValue,
    ) -> JsResult<()> {
        if persister.is_undefined() || persister.is_null() {
            self.bus.set_persister(None);
        } else {
            self.bus
                .set_persister(Some(Rc::new(handler(&persister, "persister")?)));
        }
        Ok(())
    }

    /// Queues an event stamped with the current time (unless it has a
    /// `timestamp`); resolves `false` when the queue is full and the event
    /// was dropped. Never waits for handlers.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn emit(&self, event: BusEventInitArg) -> js_sys::Promise {
        let accepted = self.event(&event).map(|e| self.bus.emit(e));
        spawn(async move { accepted.map(JsValue::from) })
    }

    /// `emit` without the promise: queues the event now and returns whether
    /// it was accepted (`false` when the queue is full). What
    /// `Session.attachBus` calls for each event it feeds.
    #[wasm_bindgen(js_name = tryEmit)]
    pub fn try_emit(&self, event: BusEventInitArg) -> JsResult<bool> {
        Ok(self.bus.emit(self.event(&event)?))
    }

    /// Starts the background loop (does nothing if started).
    pub fn start(&self) {
        if self.bus.start() {
            let bus = self.bus.clone();
            // The loop's promise is not returned: it settles when stopped.
            let _ = spawn(async move {
                bus.run().await;
                Ok(JsValue::UNDEFINED)
            });
        }
    }

    /// Stops the bus once every queued event has been dispatched.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn stop(&self) -> js_sys::Promise {
        let bus = self.bus.clone();
        spawn(async move {
            bus.stop().await;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Events waiting in the queue.
    #[wasm_bindgen(getter)]
    pub fn pending(&self) -> usize {
        self.bus.pending()
    }

    /// Whether the bus is started and not stopped.
    #[wasm_bindgen(getter)]
    pub fn running(&self) -> bool {
        self.bus.is_running()
    }

    /// The counters: emitted, dispatched, dropped, handler errors and
    /// timeouts, persister errors, and per handler.
    #[wasm_bindgen(getter, unchecked_return_type = "BusStats")]
    pub fn stats(&self) -> JsResult<JsValue> {
        Ok(to_js(&self.bus.stats())?)
    }
}

impl JsEventBus {
    /// Reads an event to emit (see [`BusEvent::from_init`]), stamped now
    /// unless it has a `timestamp`.
    fn event(&self, init: &JsValue) -> Result<BusEvent> {
        if !init.is_object() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the event must be an object { type, agentId, sessionId?, data?, timestamp? }",
            ));
        }
        // JSON has no infinities: check the number before the conversion
        // turns one into `null` (which means "now").
        let timestamp = Reflect::get(init, &"timestamp".into()).unwrap_or(JsValue::NULL);
        let absent = timestamp.is_undefined() || timestamp.is_null();
        if !absent && !timestamp.as_f64().is_some_and(f64::is_finite) {
            return Err(BusEvent::bad_timestamp());
        }
        let init: serde_json::Value = from_js(init, "event")?;
        BusEvent::from_init(&init, self.bus.clock().now_ms())
    }
}
