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
    retry_delay_ms, SavedEvents, SavedTail, SessionEnv, SessionSource, SyncOptions,
};
use context_compiler_js::convert::whole;
use context_compiler_js::env::{seed, JsClock};

fn busy() -> Error {
    Error::new(
        ErrorCode::SessionBusy,
        "the session is being changed and cannot be synced now",
    )
}

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
        let mut session = self.inner.try_borrow_mut().map_err(|_| busy())?;
        Ok(session.merge_saved(raw)?)
    }

    /// `[known, lastEventId]`: how many of this session's first events a
    /// store is known to hold, and the id of the last of them
    /// ([`context_compiler::Session::saved_prefix`]).
    #[wasm_bindgen(js_name = __savedPrefix, skip_typescript)]
    pub fn saved_prefix(&self) -> JsResult<js_sys::Array> {
        let session = self.inner.try_borrow().map_err(|_| busy())?;
        let (known, last) = session.saved_prefix();
        let last = last.map_or(JsValue::NULL, JsValue::from_str);
        Ok(js_sys::Array::of2(&JsValue::from_f64(known as f64), &last))
    }

    /// Notes that a store holds this session's first `count` events (a
    /// save read at least that many succeeded).
    #[wasm_bindgen(js_name = __noteSaved, skip_typescript)]
    pub fn note_saved(&self, count: usize) -> JsResult<()> {
        self.inner
            .try_borrow()
            .map_err(|_| busy())?
            .note_saved(count);
        Ok(())
    }

    /// How hard this session's recent syncs had to contend
    /// ([`context_compiler::Session::sync_pace`]).
    #[wasm_bindgen(js_name = __syncPace, skip_typescript)]
    pub fn sync_pace(&self) -> JsResult<u32> {
        Ok(self.inner.try_borrow().map_err(|_| busy())?.sync_pace())
    }

    /// Notes how a sync ended: saved after `tries` saves, or gave up
    /// ([`context_compiler::Session::note_sync`]).
    #[wasm_bindgen(js_name = __noteSync, skip_typescript)]
    pub fn note_sync(&self, tries: u32, saved: bool) -> JsResult<()> {
        self.inner
            .try_borrow()
            .map_err(|_| busy())?
            .note_sync(tries, saved);
        Ok(())
    }

    /// Places what a store saved after this session's saved prefix
    /// (`__loadEventsAfter`'s answer: `events_json` from position `start`,
    /// `expected` in all) before this session's own unsaved events
    /// ([`context_compiler::Session::merge_saved_tail`]); how many were new.
    #[wasm_bindgen(js_name = __mergeSavedTail, skip_typescript)]
    pub fn merge_saved_tail(
        &self,
        events_json: &str,
        start: f64,
        expected: f64,
    ) -> JsResult<usize> {
        let id = self
            .inner
            .try_borrow()
            .map_err(|_| busy())?
            .session_id()
            .to_string();
        let corrupt = |what: String| {
            Error::new(
                ErrorCode::StoreCorrupt,
                format!("saved session {id}: {what}"),
            )
        };
        let events = serde_json::from_str(events_json)
            .map_err(|e| corrupt(format!("its events are not JSON ({e})")))?;
        let (Some(start), Some(expected)) = (whole(start), whole(expected)) else {
            return Err(corrupt("its event counts are not counts".to_string()).into());
        };
        let tail = SavedTail {
            start,
            events,
            expected,
        };
        let mut session = self.inner.try_borrow_mut().map_err(|_| busy())?;
        Ok(session.merge_saved_tail(&tail)?)
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

    /// The wait in ms before polling another writer's lease again after
    /// `waits` polls, no longer than `remaining_ms` when that is a number
    /// ([`context_compiler::session::lease_poll_ms`]).
    #[wasm_bindgen(js_name = __leasePollMs, skip_typescript)]
    pub fn lease_poll_ms(waits: u32, random: f64, remaining_ms: Option<f64>) -> f64 {
        context_compiler::session::lease_poll_ms(waits, random, remaining_ms)
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
