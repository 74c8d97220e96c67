//! What the stores module asks of a `Session` (hidden from TypeScript): it
//! reads the events to save through `__eventCount`, `__eventId` and
//! `__eventsJson`, and hands loaded events back to `Session.__restore`, since
//! a store in the other WebAssembly instance can neither borrow this
//! module's sessions nor make them.

use std::rc::Rc;

use context_compiler_js::error::JsResult;
use wasm_bindgen::prelude::*;

use crate::session::{counter_option, JsSession};
use crate::types::ImportOptionsArg;
use context_compiler::error::{Error, ErrorCode};
use context_compiler::session::{
    retry_delay_ms, SavedEvents, SessionEnv, SessionSource, SyncOptions,
};
use context_compiler_js::env::{seed, JsClock};

#[wasm_bindgen(js_class = Session)]
impl JsSession {
    /// How many events the session holds, queued ones included.
    #[wasm_bindgen(js_name = __eventCount, skip_typescript)]
    pub fn event_count(&self) -> JsResult<usize> {
        Ok(self.inner.event_count()?)
    }

    /// The id of event `index`.
    #[wasm_bindgen(js_name = __eventId, skip_typescript)]
    pub fn event_id(&self, index: usize) -> JsResult<String> {
        Ok(self.inner.event_id(index)?)
    }

    /// The events from `start` on, as JSON text (an array, as exported).
    #[wasm_bindgen(js_name = __eventsJson, skip_typescript)]
    pub fn events_json(&self, start: usize) -> JsResult<String> {
        let events = self.inner.events_from(start)?;
        Ok(context_compiler::json_text::to_json_text(&events)
            .map_err(|e| Error::new(ErrorCode::NotSerializable, format!("session events ({e})")))?)
    }

    /// Places the events of `saved` (this session as a store holds it,
    /// loaded after a save conflicted) before this session's own that it
    /// lacks ([`context_compiler::Session::merge_saved`]); how many were new.
    #[wasm_bindgen(js_name = __mergeSaved, skip_typescript)]
    pub fn merge_saved(&self, saved: &JsSession) -> JsResult<usize> {
        let events = saved.inner.events_from(0)?;
        let raw = serde_json::to_value(&events)
            .map_err(|e| Error::new(ErrorCode::NotSerializable, format!("saved events ({e})")))?;
        let raw = raw.as_array().map(Vec::as_slice).unwrap_or_default();
        let mut session = self.inner.try_borrow_mut().map_err(|_| {
            Error::new(
                ErrorCode::SessionBusy,
                "the session is being changed and cannot be synced now",
            )
        })?;
        Ok(session.merge_saved(raw)?)
    }

    /// The wait in ms before try `next_try` of `session.sync`
    /// ([`context_compiler::session::retry_delay_ms`]).
    #[wasm_bindgen(js_name = __retryDelayMs, skip_typescript)]
    pub fn retry_delay_ms(
        next_try: u32,
        random: f64,
        base_delay_ms: f64,
        max_delay_ms: f64,
    ) -> f64 {
        let options = SyncOptions {
            max_tries: 1,
            base_delay_ms,
            max_delay_ms,
        };
        retry_delay_ms(next_try, random, &options)
    }

    /// The session `session_id` rebuilt from the `expected` events a store
    /// saved (`events_json`, as `__eventsJson` wrote them), counted with
    /// `options.tokenCounter`; anything wrong with them is `STORE_CORRUPT`.
    #[wasm_bindgen(js_name = __restore, skip_typescript)]
    pub fn restore(
        session_id: String,
        events_json: &str,
        expected: f64,
        options: Option<ImportOptionsArg>,
    ) -> JsResult<JsSession> {
        let events = serde_json::from_str(events_json).map_err(|e| {
            Error::new(
                ErrorCode::StoreCorrupt,
                format!("saved session {session_id}: its events are not JSON ({e})"),
            )
        })?;
        let env = SessionEnv {
            clock: Rc::new(JsClock),
            counter: counter_option(&options, "options")?,
            seed: seed(),
        };
        let saved = SavedEvents {
            events,
            expected: expected as u64,
        };
        Ok(JsSession::from_core(saved.restore(&session_id, env)?))
    }
}
