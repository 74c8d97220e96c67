//! The `sessions` interface: the session resource.

use std::cell::RefCell;
use std::rc::Rc;

use super::bindings::exports::agent::context_compiler::sessions::{
    Error, Guest, GuestSession, Session as SessionHandle,
};
use super::{parse_json, to_json, wit_error, Component};
use crate::clock::{os_seed, SystemClock};
use crate::error::{self, ErrorCode};
use crate::session::Session;
use crate::tokens::DefaultTokenCounter;

/// A session resource: the core session, shared with tool calls.
pub(crate) struct SessionResource {
    pub(crate) inner: Rc<RefCell<Session>>,
}

fn busy() -> Error {
    wit_error(error::Error::new(
        ErrorCode::SessionBusy,
        "the session is in use by a running call",
    ))
}

impl Guest for Component {
    type Session = SessionResource;
}

impl GuestSession for SessionResource {
    fn new(session_id: Option<String>) -> Self {
        let session = Session::with_env(
            session_id.filter(|s| !s.is_empty()),
            Rc::new(SystemClock),
            Rc::new(DefaultTokenCounter),
            os_seed(),
        );
        SessionResource {
            inner: Rc::new(RefCell::new(session)),
        }
    }

    fn import_json(json: String) -> Result<SessionHandle, Error> {
        let session = Session::import_json(
            &json,
            Rc::new(SystemClock),
            Rc::new(DefaultTokenCounter),
            os_seed(),
        )
        .map_err(wit_error)?;
        Ok(SessionHandle::new(SessionResource {
            inner: Rc::new(RefCell::new(session)),
        }))
    }

    fn session_id(&self) -> String {
        self.inner
            .try_borrow()
            .map(|s| s.session_id().to_string())
            .unwrap_or_default()
    }

    fn record(
        &self,
        kind: String,
        data_json: String,
        token_estimate: Option<u64>,
    ) -> Result<String, Error> {
        let data = parse_json(&data_json, "data-json")?;
        let mut session = self.inner.try_borrow_mut().map_err(|_| busy())?;
        let event = session
            .record(&kind, data, token_estimate)
            .map_err(wit_error)?;
        to_json(event)
    }

    fn events_json(&self) -> String {
        self.inner
            .try_borrow()
            .ok()
            .and_then(|s| serde_json::to_string(&s.event_log().all_events()).ok())
            .unwrap_or_else(|| "[]".into())
    }

    fn length(&self) -> u64 {
        self.inner
            .try_borrow()
            .map(|s| (s.event_log().len() + s.event_log().pending_len()) as u64)
            .unwrap_or(0)
    }

    fn total_tokens(&self) -> u64 {
        self.inner
            .try_borrow()
            .map(|s| s.event_log().total_tokens())
            .unwrap_or(0)
    }

    fn export_json(&self) -> String {
        self.inner
            .try_borrow()
            .map(|s| s.export_json())
            .unwrap_or_default()
    }
}
