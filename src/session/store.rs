//! Persisting sessions: the [`SessionStore`] trait every artifact store
//! backend also implements, so a session lives where its artifacts live.

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use serde::Serialize;

use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::session::lease::leased_save;
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
        let saved = events.len();
        let session = Session::from_events(
            session_id.to_string(),
            events,
            self.clock,
            self.counter,
            self.seed,
        )?;
        session.note_saved(saved);
        Ok(session)
    }
}

/// What one [`SessionStore::save_session`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SaveReport {
    /// Events written by this save (0 when the store was already up to date).
    pub events_written: u64,
    /// Whether the whole log was rewritten (first save, a log that no longer
    /// extends the stored one, or a compaction of many small appends) rather
    /// than only the new events appended.
    pub rewritten: bool,
}

/// A session as a [`SessionStore`] reads it to save it: its id and events,
/// read in one synchronous step (no await between the reads) so they agree.
///
/// A shared [`Session`] is one; so is a session living in another
/// WebAssembly instance, read through its JS methods.
pub trait SessionSource {
    /// The session's id.
    fn session_id(&self) -> Result<String>;
    /// How many events it holds, queued ones included.
    fn event_count(&self) -> Result<usize>;
    /// The id of event `index` (below [`SessionSource::event_count`]).
    fn event_id(&self, index: usize) -> Result<String>;
    /// Its events from `start` on, oldest first.
    fn events_from(&self, start: usize) -> Result<Vec<SessionEvent>>;
    /// Told by a store that a save of its first `count` events succeeded
    /// (see [`Session::note_saved`]); nothing by default.
    fn note_saved(&self, count: usize) {
        let _ = count;
    }
}

impl SessionSource for RefCell<Session> {
    fn session_id(&self) -> Result<String> {
        Ok(read_session(self)?.session_id().to_string())
    }

    fn event_count(&self) -> Result<usize> {
        Ok(read_session(self)?.event_log().all_events().len())
    }

    fn event_id(&self, index: usize) -> Result<String> {
        read_session(self)?
            .event_log()
            .all_events()
            .get(index)
            .map(|e| e.event_id.clone())
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    format!("the session has no event {index}"),
                )
            })
    }

    fn events_from(&self, start: usize) -> Result<Vec<SessionEvent>> {
        let session = read_session(self)?;
        let events = session.event_log().all_events();
        Ok(events.get(start..).unwrap_or_default().to_vec())
    }

    fn note_saved(&self, count: usize) {
        // Only a hint for the next sync's reload: a session changed right
        // now keeps the prefix it had.
        if let Ok(session) = self.try_borrow() {
            session.note_saved(count);
        }
    }
}

/// What a save of a session does, given the head its store holds: every
/// backend decides the same way ([`plan_save`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavePlan {
    /// Nothing is saved under the id yet: write every event.
    First,
    /// The session extends the saved log: append its events from `from` on
    /// (`from` equals the session's length when it is already saved).
    Append {
        /// How many events the store holds already.
        from: usize,
    },
    /// The saved log is not a prefix of the session: another writer saved
    /// events this session has not seen (or a different log has the id). The
    /// save must fail whole with [`ErrorCode::StoreConflict`]; see
    /// [`stale_save`].
    Stale,
}

/// The plan of saving `session` over a store whose head for its id says
/// `saved`: the saved event count and the id of the last saved event
/// (`None` when nothing is saved under the id). Sessions are append-only, so
/// a save only ever appends: a session that does not extend what is saved
/// (fewer events, or a different event where the saved log ends) is stale,
/// never rewritten over what another writer saved.
pub fn plan_save(
    saved: Option<(u64, Option<&str>)>,
    session: &dyn SessionSource,
) -> Result<SavePlan> {
    let Some((saved_count, saved_last)) = saved else {
        return Ok(SavePlan::First);
    };
    let count = session.event_count()? as u64;
    if saved_count > count {
        return Ok(SavePlan::Stale);
    }
    let extends = match (saved_count, saved_last) {
        (0, _) => true,
        (n, Some(last)) => session.event_id(n as usize - 1)? == last,
        (_, None) => false,
    };
    Ok(if extends {
        SavePlan::Append {
            from: saved_count as usize,
        }
    } else {
        SavePlan::Stale
    })
}

/// The [`ErrorCode::StoreConflict`] of a save that found `session_id` saved
/// by another writer (see [`SavePlan::Stale`]): nothing was written.
pub fn stale_save(session_id: &str) -> Error {
    Error::new(
        ErrorCode::StoreConflict,
        format!(
            "saved session {session_id} holds events this session does not have (another writer \
             saved it since this session was loaded); nothing was written: load it again, append, \
             and save"
        ),
    )
}

/// A saved session's events as its store holds them, not yet checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedEvents {
    /// The stored events (JSON, as exported).
    pub events: Vec<serde_json::Value>,
    /// The count the store's own record says it saved.
    pub expected: u64,
}

impl SavedEvents {
    /// The session `session_id` rebuilt from these events (see
    /// [`restore_session`]).
    pub fn restore(&self, session_id: &str, env: SessionEnv) -> Result<Session> {
        restore_session(session_id, &self.events, self.expected, env)
    }

    /// All of these events, as a tail from the start.
    pub fn whole(self) -> SavedTail {
        SavedTail {
            start: 0,
            events: self.events,
            expected: self.expected,
        }
    }
}

/// Of a saved log of `expected` events read from position `offset` on
/// (`events`, see [`SessionStore::read_events_from`]): the
/// events after the first `known` when the event before them, `known - 1`,
/// is `last_event_id`; else the events given back (the saved log is not the
/// one the writer knew: read it whole).
fn saved_tail(
    known: u64,
    last_event_id: &str,
    expected: u64,
    offset: u64,
    mut events: Vec<serde_json::Value>,
) -> std::result::Result<SavedTail, Vec<serde_json::Value>> {
    let at = |n: u64| n.checked_sub(offset).and_then(|i| usize::try_from(i).ok());
    let before = known.checked_sub(1).and_then(at);
    let id = before
        .and_then(|i| events.get(i))
        .and_then(|e| e.get("eventId"))
        .and_then(serde_json::Value::as_str);
    match at(known) {
        Some(cut) if expected >= known && id == Some(last_event_id) => Ok(SavedTail {
            start: known,
            events: events.split_off(cut),
            expected,
        }),
        _ => Err(events),
    }
}

/// What a store saved of a session after the events a writer knew it
/// saved ([`SessionStore::load_events_after`]), not yet checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedTail {
    /// The position of the first of `events` in the saved log: the count
    /// the writer knew, or 0 when the saved log no longer begins with the
    /// events it knew (deleted and saved anew) and `events` is all of it.
    pub start: u64,
    /// The stored events from `start` on (JSON, as exported).
    pub events: Vec<serde_json::Value>,
    /// The count of the whole saved log, as the store's own record says.
    pub expected: u64,
}

/// Saving and loading sessions.
///
/// Saving is incremental: only the events appended since the last save are
/// written, and a save that fails part-way leaves the previous complete state
/// loadable.
#[async_trait(?Send)]
pub trait SessionStore {
    /// Saves `session` under its id. The session is read only while its
    /// new events are serialised, never across the backend's awaits. A
    /// successful save tells the session what it holds
    /// ([`SessionSource::note_saved`]). Another writer's live lease (see
    /// [`crate::session::lease`]) makes it `STORE_CONFLICT`, nothing written.
    async fn save_session(&self, session: &dyn SessionSource) -> Result<SaveReport>;
    /// One try of a sync's save by `writer` (an id of the sync): a save that
    /// respects other writers' leases, and ends `writer`'s own. By default a
    /// [`SessionStore::save_session`], its `STORE_CONFLICT` lost.
    async fn try_save(&self, session: &dyn SessionSource, writer: &str) -> Result<SaveTry> {
        let _ = writer;
        match self.save_session(session).await {
            Ok(report) => Ok(SaveTry::Saved(report)),
            Err(e) if e.code() == ErrorCode::StoreConflict => Ok(SaveTry::Lost),
            Err(e) => Err(e),
        }
    }
    /// Takes the lease of `session_id` for `writer` for `ttl_ms` by the
    /// store's own clock (see [`crate::session::lease`]); by default there
    /// is none ([`LeaseTake::Unavailable`]).
    async fn take_lease(&self, session_id: &str, writer: &str, ttl_ms: u64) -> Result<LeaseTake> {
        let _ = (session_id, writer, ttl_ms);
        Ok(LeaseTake::Unavailable)
    }
    /// The events saved under `session_id`, or `None` when there is none.
    async fn load_events(&self, session_id: &str) -> Result<Option<SavedEvents>>;
    /// The saved log of `session_id` from position `from` on, or from any
    /// earlier position: its count as the store's record says, the position
    /// of the first event read, and the events; `None` when nothing is
    /// saved under the id. By default the whole log (from 0); backends that
    /// can read the end alone (segments, rows) do.
    async fn read_events_from(
        &self,
        session_id: &str,
        from: u64,
    ) -> Result<Option<(u64, u64, Vec<serde_json::Value>)>> {
        let _ = from;
        Ok(self
            .load_events(session_id)
            .await?
            .map(|saved| (saved.expected, 0, saved.events)))
    }
    /// The events saved under `session_id` after the first `known`, which a
    /// writer knows it saved, the last of them `last_event_id` (what a
    /// sync reloads after a conflict: only what other writers added); all
    /// of them when the saved log no longer begins with those (see
    /// [`SavedTail::start`]). `None` when nothing is saved under the id.
    /// Reads from event `known - 1` on ([`SessionStore::read_events_from`])
    /// to check it.
    async fn load_events_after(
        &self,
        session_id: &str,
        known: u64,
        last_event_id: Option<&str>,
    ) -> Result<Option<SavedTail>> {
        if let (Some(last), Some(before)) = (last_event_id, known.checked_sub(1)) {
            let Some((expected, offset, events)) =
                self.read_events_from(session_id, before).await?
            else {
                return Ok(None);
            };
            match saved_tail(known, last, expected, offset, events) {
                Ok(tail) => return Ok(Some(tail)),
                // The whole log, read already: not the one this writer
                // saved into (deleted and saved anew).
                Err(events) if offset == 0 => {
                    return Ok(Some(SavedEvents { events, expected }.whole()))
                }
                Err(_) => {}
            }
        }
        Ok(self.load_events(session_id).await?.map(SavedEvents::whole))
    }
    /// The session saved under `session_id`, or `None` when there is none;
    /// stored events that do not make a valid session are
    /// [`ErrorCode::StoreCorrupt`].
    async fn load_session(&self, session_id: &str, env: SessionEnv) -> Result<Option<Session>> {
        self.load_events(session_id)
            .await?
            .map(|saved| saved.restore(session_id, env))
            .transpose()
    }
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

/// Borrows `session` for reading, or fails with [`ErrorCode::SessionBusy`]
/// (events recorded during a compile are read too, through
/// [`crate::session::EventLog::all_events`]).
fn read_session(session: &RefCell<Session>) -> Result<std::cell::Ref<'_, Session>> {
    session.try_borrow().map_err(|_| {
        Error::new(
            ErrorCode::SessionBusy,
            "the session is being changed and cannot be saved now",
        )
    })
}

/// What one try of a sync's save did ([`crate::session::SessionStore::try_save`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SaveTry {
    /// Saved.
    Saved(SaveReport),
    /// Another writer's save moved the head first: nothing was written.
    Lost,
    /// Another writer holds the session's lease: nothing was written, and
    /// the try does not count. `wait_ms`: how long the lease still runs, when
    /// the store can tell.
    Leased {
        /// The lease's remaining time by the store's clock, if known.
        wait_ms: Option<f64>,
    },
}

impl SaveTry {
    /// What a plain save (`save_session`) of `session_id` makes of this
    /// try: its report, or `STORE_CONFLICT` saying why nothing was written.
    pub fn into_saved(self, session_id: &str) -> Result<SaveReport> {
        match self {
            SaveTry::Saved(report) => Ok(report),
            SaveTry::Lost => Err(stale_save(session_id)),
            SaveTry::Leased { .. } => Err(leased_save(session_id)),
        }
    }
}

/// What taking a session's lease did ([`crate::session::SessionStore::take_lease`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LeaseTake {
    /// The writer holds the lease: its next save cannot lose while it runs.
    Taken,
    /// Another writer holds a live lease (`wait_ms`: its remaining time by the
    /// store's clock, if known).
    Held {
        /// The lease's remaining time, if the store can tell.
        wait_ms: Option<f64>,
    },
    /// Another save moved the head while the lease was being taken.
    Lost,
    /// No lease here: the store keeps none (no clock of its own to expire
    /// it), or nothing is saved under the id yet.
    Unavailable,
}
