//! Main-module sessions in the stores module: saved and loaded across the
//! two WebAssembly instances.
//!
//! A session to save lives in the other instance, so it is read through its
//! hidden methods (`__eventCount()`, `__eventId(i)`, `__eventsJson(start)`),
//! each a synchronous call: a store reads what it saves in one step, with no
//! await between the reads, so they agree. A loaded session is made by the
//! main module (`Session.__restore`, reached through the host object
//! `js/stores.js` installs) from the saved events.

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::session::{parse_events, SavedEvents, SessionEvent, SessionSource};
use context_compiler_js::error::from_thrown;
use context_compiler_js::fatal::with_host_as;
use context_compiler_js::promise::require_methods;

#[wasm_bindgen]
extern "C" {
    /// The host object `js/stores.js` installs, as the stores module sees it.
    type SessionHost;

    /// The main module's `Session.__restore(sessionId, eventsJson, expected,
    /// options)`: a main-module `Session` from saved events.
    #[wasm_bindgen(method, catch, js_name = restoreSession)]
    fn restore_session(
        this: &SessionHost,
        session_id: &str,
        events_json: &str,
        expected: f64,
        options: &JsValue,
    ) -> std::result::Result<JsValue, JsValue>;
}

/// The main-module `Session` `session_id` made from `saved` (counted with
/// `options.tokenCounter`); saved events that make no valid session are
/// `STORE_CORRUPT`.
pub(crate) fn restore(session_id: &str, saved: &SavedEvents, options: &JsValue) -> Result<JsValue> {
    let json = context_compiler::json_text::to_json_text(&saved.events).map_err(|e| {
        Error::new(
            ErrorCode::StoreCorrupt,
            format!("saved session {session_id}: {e}"),
        )
    })?;
    let restored = with_host_as(|host: &SessionHost| {
        host.restore_session(session_id, &json, saved.expected as f64, options)
    })
    .ok_or_else(|| {
        Error::new(
            ErrorCode::StoreFailed,
            "the stores module was loaded without its host: load it through the package",
        )
    })?;
    restored.map_err(|e| {
        from_thrown(
            &e,
            ErrorCode::StoreCorrupt,
            &format!("saved session {session_id}"),
        )
    })
}

const SESSION_SHAPE: &str = "session must be a Session";

/// A main-module `Session` seen as a [`SessionSource`].
pub(crate) struct JsSessionSource {
    this: JsValue,
}

impl JsSessionSource {
    /// `value`, checked to be a session (`INVALID_ARGUMENT` otherwise).
    pub(crate) fn new(value: &JsValue) -> Result<JsSessionSource> {
        require_methods(
            value,
            &["__eventCount", "__eventId", "__eventsJson"],
            SESSION_SHAPE,
        )?;
        Ok(JsSessionSource {
            this: value.clone(),
        })
    }

    /// Calls the session's method `name`: what it throws (`SESSION_BUSY`
    /// while it is being changed, `MODULE_POISONED` once the main module has
    /// trapped) keeps its code.
    fn call(&self, name: &str, arg: Option<f64>) -> Result<JsValue> {
        let method: Function = js_sys::Reflect::get(&self.this, &name.into())
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!("{SESSION_SHAPE} (no {name})"),
                )
            })?;
        let returned = match arg {
            Some(a) => method.call1(&self.this, &a.into()),
            None => method.call0(&self.this),
        };
        returned.map_err(|e| from_thrown(&e, ErrorCode::StoreFailed, &format!("session.{name}")))
    }

    fn string(&self, name: &str, arg: Option<f64>) -> Result<String> {
        self.call(name, arg)?.as_string().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{SESSION_SHAPE} (its {name} did not return a string)"),
            )
        })
    }
}

impl SessionSource for JsSessionSource {
    fn session_id(&self) -> Result<String> {
        let id = js_sys::Reflect::get(&self.this, &"sessionId".into())
            .map_err(|e| from_thrown(&e, ErrorCode::StoreFailed, "session.sessionId"))?;
        id.as_string().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{SESSION_SHAPE} (its sessionId is not a string)"),
            )
        })
    }

    fn event_count(&self) -> Result<usize> {
        let count = self.call("__eventCount", None)?.as_f64();
        match count {
            Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64 => Ok(n as usize),
            _ => Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("{SESSION_SHAPE} (its __eventCount is not a count)"),
            )),
        }
    }

    fn event_id(&self, index: usize) -> Result<String> {
        self.string("__eventId", Some(index as f64))
    }

    fn note_saved(&self, count: usize) {
        // A hint only (`session.sync` reloads less after it): a session
        // without the method, or one closed meanwhile, is left as it is.
        let _ = self.call("__noteSaved", Some(count as f64));
    }

    fn events_from(&self, start: usize) -> Result<Vec<SessionEvent>> {
        let json = self.string("__eventsJson", Some(start as f64))?;
        let raw: Vec<serde_json::Value> = serde_json::from_str(&json).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{SESSION_SHAPE} (its events are not JSON: {e})"),
            )
        })?;
        parse_events(&raw, "events")
    }
}
