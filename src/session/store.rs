//! Persisting sessions: the [`SessionStore`] trait every artifact store
//! backend also implements, so a session lives where its artifacts live.

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use serde::Serialize;

use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::session::{Session, SessionEvent};
use crate::tokens::TokenCounter;

/// What a loaded session is given for the events appended after loading.
#[derive(Clone)]
pub struct SessionEnv {
    /// The clock stamping new events.
    pub clock: Rc<dyn Clock>,
    /// The token counter of new events.
    pub counter: Rc<dyn TokenCounter>,
    /// The seed of new event ids.
    pub seed: u64,
}

impl SessionEnv {
    /// The session `session_id` of already validated `events`, counted and
    /// continued in this environment; fails when the counter cannot count
    /// them.
    pub fn session(self, session_id: &str, events: Vec<SessionEvent>) -> Result<Session> {
        Session::from_events(
            session_id.to_string(),
            events,
            self.clock,
            self.counter,
            self.seed,
        )
    }
}

/// What one [`SessionStore::save_session`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveReport {
    /// Events written by this save (0 when the store was already up to date).
    pub events_written: u64,
    /// Whether the whole log was rewritten (first save, a log that no longer
    /// extends the stored one, or a compaction of many small appends) rather
    /// than only the new events appended.
    pub rewritten: bool,
}

/// Saving and loading sessions.
///
/// Saving is incremental: only the events appended since the last save are
/// written, and a save that fails part-way leaves the previous complete state
/// loadable.
#[async_trait(?Send)]
pub trait SessionStore {
    /// Saves `session` under its id. The session is borrowed only while its
    /// new events are serialised, never across the backend's awaits.
    async fn save_session(&self, session: &RefCell<Session>) -> Result<SaveReport>;
    /// The session saved under `session_id`, or `None` when there is none.
    async fn load_session(&self, session_id: &str, env: SessionEnv) -> Result<Option<Session>>;
    /// The ids of every saved session, sorted.
    async fn list_sessions(&self) -> Result<Vec<String>>;
    /// Deletes the saved session; `false` when there was none.
    async fn delete_session(&self, session_id: &str) -> Result<bool>;
}

/// Rebuilds a saved session from its stored events (JSON, as exported),
/// checking them like an import: anything wrong is [`ErrorCode::StoreCorrupt`].
/// For [`SessionStore`] implementations: `expected_events` is the count the
/// store's own record says it saved, so a lost event is an error too.
pub fn restore_session(
    session_id: &str,
    raw: &[serde_json::Value],
    expected_events: u64,
    env: SessionEnv,
) -> Result<Session> {
    let corrupt = |what: &str| {
        Error::new(
            ErrorCode::StoreCorrupt,
            format!("saved session {session_id}: {what}"),
        )
    };
    if raw.len() as u64 != expected_events {
        return Err(corrupt("the stored events do not match its head"));
    }
    let events = crate::session::parse_events(raw, "events").map_err(|e| corrupt(e.message()))?;
    env.session(session_id, events)
}

/// Borrows `session` for reading, or fails with [`ErrorCode::SessionBusy`].
/// For [`SessionStore`] implementations: serialise what to save under this
/// borrow (with [`crate::session::EventLog::all_events`], so events recorded
/// during a compile are saved too) and drop it before any await.
pub fn read_session(session: &RefCell<Session>) -> Result<std::cell::Ref<'_, Session>> {
    session.try_borrow().map_err(|_| {
        Error::new(
            ErrorCode::SessionBusy,
            "the session is being changed and cannot be saved now",
        )
    })
}
