//! The `sessions` interface: the session resource.

use std::cell::RefCell;
use std::rc::Rc;

use super::bindings::exports::agent::context_compiler::sessions::{
    Error, Guest, GuestSession, RecordOptions, SearchHit, Session as SessionHandle, UsageOptions,
};
use super::{parse_json, to_json, wit_error, Component};
use context_compiler::clock::{os_seed, SystemClock};
use context_compiler::error::{self, ErrorCode};
use context_compiler::recall::MAX_SEARCH_LIMIT;
use context_compiler::runner::{record_host_reply, ModelReply};
use context_compiler::session::{ModelUsage, Session};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::tools::look_back::LookBack;
use context_compiler::{ArtifactStore, ProviderFormat};

use super::artifact_store::selected_store;
use super::exec::block_on;

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

impl SessionResource {
    /// The session, borrowed for reading, or `session-busy`.
    fn read(&self) -> Result<std::cell::Ref<'_, Session>, Error> {
        self.inner.try_borrow().map_err(|_| busy())
    }
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
        )?;
        Ok(SessionHandle::new(SessionResource {
            inner: Rc::new(RefCell::new(session)),
        }))
    }

    fn session_id(&self) -> Result<String, Error> {
        Ok(self.read()?.session_id().to_string())
    }

    fn record(
        &self,
        kind: String,
        data_json: String,
        token_estimate: Option<u64>,
    ) -> Result<String, Error> {
        let data = parse_json(&data_json, "data-json")?;
        let mut session = self.inner.try_borrow_mut().map_err(|_| busy())?;
        let event = session.record(&kind, data, token_estimate)?;
        to_json(event)
    }

    fn record_with(
        &self,
        kind: String,
        data_json: String,
        options: RecordOptions,
    ) -> Result<String, Error> {
        let data = parse_json(&data_json, "data-json")?;
        let mut session = self.inner.try_borrow_mut().map_err(|_| busy())?;
        let options = context_compiler::session::RecordOptions {
            token_estimate: options.token_estimate,
            redact: options.redact.unwrap_or(true),
        };
        let event = session.record_with(&kind, data, options)?;
        to_json(event)
    }

    fn record_usage(&self, usage_json: String, options: UsageOptions) -> Result<String, Error> {
        let usage = ModelUsage::from_json(&parse_json(&usage_json, "usage-json")?)?;
        let mut session = self.inner.try_borrow_mut().map_err(|_| busy())?;
        let event = session.record_usage(&usage, options.counted_tokens)?;
        to_json(event)
    }

    fn record_reply(&self, reply_json: String) -> Result<String, Error> {
        let reply =
            ModelReply::from_json(&parse_json(&reply_json, "reply-json")?).map_err(|e| {
                wit_error(error::Error::new(
                    ErrorCode::InvalidArgument,
                    e.message().to_string(),
                ))
            })?;
        to_json(&record_host_reply(&self.inner, &reply)?)
    }

    fn record_compaction(&self, output_json: String, format: String) -> Result<String, Error> {
        let output = parse_json(&output_json, "output-json")?;
        let format = ProviderFormat::parse(&format)?;
        let mut session = self.inner.try_borrow_mut().map_err(|_| busy())?;
        let id = session.record_provider_compaction(&output, format)?;
        let event = session
            .event_log()
            .events()
            .iter()
            .rev()
            .find(|e| e.event_id == id);
        to_json(&event)
    }

    fn events_json(&self) -> Result<String, Error> {
        to_json(&self.read()?.event_log().all_events())
    }

    fn length(&self) -> Result<u64, Error> {
        let s = self.read()?;
        Ok((s.event_log().len() + s.event_log().pending_len()) as u64)
    }

    fn total_tokens(&self) -> Result<u64, Error> {
        Ok(self.read()?.event_log().total_tokens())
    }

    fn export_json(&self) -> Result<String, Error> {
        Ok(self.read()?.export_json())
    }

    fn search(&self, query: String, limit: u32) -> Result<Vec<SearchHit>, Error> {
        if !(1..=MAX_SEARCH_LIMIT as u32).contains(&limit) {
            return Err(wit_error(error::Error::new(
                ErrorCode::InvalidArgument,
                format!("limit must be 1 to {MAX_SEARCH_LIMIT} (got {limit})"),
            )));
        }
        Ok(self
            .read()?
            .search(&query, limit as usize)
            .into_iter()
            .map(|h| SearchHit {
                event_id: h.event_id,
                position: h.position as u64,
                kind: h.kind,
                score: h.score,
                relevance: h.relevance,
                distinction: h.distinction,
            })
            .collect())
    }

    fn look_back(&self, name: String, arguments_json: String) -> Result<String, Error> {
        let arguments = parse_json(&arguments_json, "arguments-json")?;
        let store: Rc<dyn ArtifactStore> = selected_store().map_err(wit_error)?;
        let look_back = LookBack::new(self.inner.clone(), Some(store));
        let answer = block_on(look_back.call(&name, &arguments))
            .and_then(|r| r)
            .map_err(wit_error)?;
        to_json(&answer)
    }
}
