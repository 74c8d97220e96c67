//! The session: the ground truth of an agent run, an append-only log of typed
//! events with token counts.

pub mod approvals;
mod approving;
mod calls;
mod evidence;
mod export;
mod ids;
mod kinds;
pub mod lease;
mod log;
pub(crate) mod look_back_names;
pub mod provider_compaction;
mod redaction;
pub(crate) mod render;
pub(crate) mod search;
mod store;
mod sync;
mod usage;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::Value;

use crate::artifacts::ArtifactStore;
use crate::clock::{Clock, IdRng};
use crate::error::{Error, ErrorCode, Result};
use crate::tokens::TokenCounter;
use render::{render, Rendered};
use search::{SearchHit, SessionRecall};

pub use approvals::{ApprovalDecision, PendingApproval};
pub use evidence::{evidence_kind, EvidenceEntry, EvidencePack};
pub use export::parse_events;
pub use export::SESSION_FORMAT;
pub use ids::{check_optional_session_id, check_session_id, MAX_SESSION_ID_BYTES};
pub use kinds::{
    APPROVAL_DECIDED, APPROVAL_REQUESTED, ARTIFACT_STORED, ASSISTANT_OUTPUT, CONTEXT_COMPACTED,
    GUARD_DECISION, MEMORY_HIT, MODEL_USAGE, PHASE_RESULT, PROVIDER_COMPACTION, TOOL_CALL,
    TOOL_ERROR, TOOL_SUCCESS, TOOL_TIMEOUT, USER_INPUT,
};
pub use lease::{check_store_version, LEASE_MS};
pub use log::{CompactionState, EventLog, SessionEvent, MAX_DATA_DEPTH};
pub use redaction::{redact_event_data, RecordOptions};
pub use store::{
    plan_save, restore_session, stale_save, LeaseTake, SavePlan, SaveReport, SaveTry, SavedEvents,
    SavedTail, SessionEnv, SessionSource, SessionStore,
};
pub use sync::{
    lease_poll_ms, retry_delay_ms, sync_session, SyncOptions, SyncReport, MAX_SYNC_PACE,
};
pub use usage::{ModelUsage, UsageCorrection};

/// Told of every event recorded in a session, with the session's id (a bus
/// feed, see [`crate::bus::session_feed`]). It runs while the session is
/// borrowed, so it must not touch the session.
pub type SessionObserver = Rc<dyn Fn(&str, &SessionEvent)>;

/// A session: an id and its [`EventLog`]. The single source of truth of one
/// agent run; compiles read it, tools and the conversation append to it.
pub struct Session {
    session_id: String,
    event_log: EventLog,
    observer: Option<SessionObserver>,
    /// The recall index, brought up to date when searched.
    recall: RefCell<SessionRecall>,
    /// The token count of the latest compile of this session, which a
    /// usage recorded without its own count answers.
    last_compiled_tokens: Cell<Option<u64>>,
    /// How many of its first events a store is known to hold, in this
    /// order (see [`Session::saved_prefix`]).
    saved_prefix: Cell<usize>,
    /// How hard its recent syncs had to contend (see [`Session::sync_pace`]).
    sync_pace: Cell<u32>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("session_id", &self.session_id)
            .field("event_log", &self.event_log)
            .field("observed", &self.observer.is_some())
            .finish()
    }
}

impl Session {
    /// Creates a session with a random id, the operating system's clock and
    /// the default token counter.
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    pub fn new() -> Self {
        Session::with_env(
            None,
            Rc::new(crate::clock::SystemClock),
            Rc::new(crate::tokens::DefaultTokenCounter),
            crate::clock::os_seed(),
        )
    }

    /// Creates a session with the given id (random when `None`), clock, token
    /// counter and id seed.
    pub fn with_env(
        session_id: Option<String>,
        clock: Rc<dyn Clock>,
        counter: Rc<dyn TokenCounter>,
        seed: u64,
    ) -> Self {
        let mut rng = IdRng::new(seed);
        let session_id =
            session_id.unwrap_or_else(|| format!("{:012x}", rng.next_u64() & 0xFFFF_FFFF_FFFF));
        Session {
            session_id,
            event_log: EventLog::with_env(clock, counter, rng.next_u64()),
            observer: None,
            recall: RefCell::default(),
            last_compiled_tokens: Cell::default(),
            saved_prefix: Cell::default(),
            sync_pace: Cell::default(),
        }
    }

    /// Places `saved`, the log another writer saved under this session's
    /// id (events as exported, checked like an import), before this
    /// session's events that it lacks: the saved log first, in its commit
    /// order, then this session's own unsaved events in theirs, so the
    /// session extends what is saved and its next save appends. An own
    /// event stamped before the event now ahead of it takes that event's
    /// timestamp. Returns how many saved events were new to this session.
    /// The session's observer is not told of them: they were recorded
    /// elsewhere.
    pub fn merge_saved(&mut self, saved: &[Value]) -> Result<usize> {
        self.merge_saved_after(0, saved, saved.len() as u64)
    }

    /// Like [`Session::merge_saved`], with only what a store saved after
    /// the events this session knows it holds ([`Session::saved_prefix`]),
    /// as [`SessionStore::load_events_after`] reads it: its events stay
    /// where they are, counted, and only the new ones are counted. A tail
    /// whose length disagrees with its count is [`ErrorCode::StoreCorrupt`].
    pub fn merge_saved_tail(&mut self, tail: &SavedTail) -> Result<usize> {
        if tail.start.saturating_add(tail.events.len() as u64) != tail.expected {
            return Err(Error::new(
                ErrorCode::StoreCorrupt,
                format!(
                    "saved session {}: the stored events do not match its head",
                    self.session_id
                ),
            ));
        }
        let start = usize::try_from(tail.start).unwrap_or(usize::MAX);
        self.merge_saved_after(start, &tail.events, tail.expected)
    }

    fn merge_saved_after(&mut self, start: usize, saved: &[Value], expected: u64) -> Result<usize> {
        let saved = parse_events(saved, "saved")?;
        let (log, placed) = self.event_log.merged(start, saved)?;
        self.event_log = log;
        self.recall = RefCell::default();
        self.saved_prefix
            .set(usize::try_from(expected).unwrap_or(usize::MAX));
        Ok(placed)
    }

    /// How many of this session's first events a store is known to hold in
    /// this order (0 when none is known: a new or imported session), and
    /// the id of the last of them. Set when the session is loaded, saved by
    /// a sync ([`Session::note_saved`]) or merged with what a store holds.
    pub fn saved_prefix(&self) -> (u64, Option<&str>) {
        let events = self.event_log.events();
        let known = self.saved_prefix.get().min(events.len());
        let last = known
            .checked_sub(1)
            .and_then(|i| events.get(i))
            .map(|e| e.event_id.as_str());
        (known as u64, last)
    }

    /// Notes that a store holds this session's first `count` events, in
    /// this order (a save of them succeeded).
    pub fn note_saved(&self, count: usize) {
        self.saved_prefix.set(count);
    }

    /// How hard this session's recent syncs had to contend with other
    /// writers, from 0 to [`sync::MAX_SYNC_PACE`]: a sync waits before its
    /// first save as a retry after `pace` conflicts would (see
    /// [`retry_delay_ms`]), so that a writer whose saves just went through
    /// does not take the store again ahead of those backing off.
    pub fn sync_pace(&self) -> u32 {
        self.sync_pace.get()
    }

    /// Notes how a sync ended: saved after `tries` saves, or gave up. A
    /// sync that lost a race (more than two tries: the first save of a
    /// shared session meets the events others saved since, which is no
    /// race) or gave up raises the pace; one saved at its first try lowers
    /// it.
    pub fn note_sync(&self, tries: u32, saved: bool) {
        let pace = self.sync_pace.get();
        self.sync_pace.set(match (saved, tries) {
            (false, _) | (true, 3..) => (pace + 1).min(sync::MAX_SYNC_PACE),
            (true, 2) => pace,
            (true, _) => pace.saturating_sub(1),
        });
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The events matching `query` best, at most `limit` (at most
    /// [`crate::recall::MAX_SEARCH_LIMIT`]), most relevant first: BM25 over
    /// every text the session holds (see [`crate::recall`]). The index takes
    /// in the events recorded since the last search first, so a search
    /// costs the new events' indexing and the query's postings, and
    /// recording costs nothing more.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let events = self.event_log.all_events();
        let mut recall = self.recall.borrow_mut();
        recall.catch_up(&events);
        recall.search(&events, query, limit)
    }

    /// As [`Session::search`], the query widened by the terms of the events
    /// that match it best (pseudo-relevance feedback), for recall: it finds
    /// what the best matches speak of in words the query does not use.
    pub fn search_expanded(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let events = self.event_log.all_events();
        let mut recall = self.recall.borrow_mut();
        recall.catch_up(&events);
        recall.search_expanded(&events, query, limit)
    }

    /// The tool outcomes whose output went to an artifact store (their
    /// events hold a summary and the handle) and is not indexed yet: each
    /// one's position in the log and its handle.
    pub fn unindexed_outputs(&self) -> Vec<(usize, String)> {
        let recall = self.recall.borrow();
        self.event_log
            .all_events()
            .iter()
            .enumerate()
            .filter(|(position, _)| !recall.has_stored(*position))
            .filter_map(|(position, e)| match render(&e.kind, &e.data)? {
                Rendered::Artifact(a) => Some((position, a.handle)),
                _ => None,
            })
            .collect()
    }

    /// Indexes `output`, the whole output stored for the tool outcome at
    /// `position` (see [`Session::unindexed_outputs`]), so a search finds
    /// it by any part and not only by its summary. Bytes that are not
    /// UTF-8 text are not indexed (and not asked for again).
    pub fn index_stored_output(&self, position: usize, output: &[u8]) {
        let text = std::str::from_utf8(output).unwrap_or("");
        self.recall.borrow_mut().add_stored(position, text);
    }

    /// Indexes every stored output not indexed yet (see
    /// [`Session::unindexed_outputs`]), read from `store` and verified:
    /// how many were. An output the store does not have is left out; one it
    /// fails to read is tried again by the next call.
    pub async fn index_stored_outputs(&self, store: &dyn ArtifactStore) -> usize {
        let mut indexed = 0;
        for (position, handle) in self.unindexed_outputs() {
            match store.retrieve(&handle).await {
                Ok(Some(bytes)) => {
                    self.index_stored_output(position, &bytes);
                    indexed += 1;
                }
                Ok(None) => self.index_stored_output(position, b""),
                Err(_) => {}
            }
        }
        indexed
    }

    /// The session's event log.
    pub fn event_log(&self) -> &EventLog {
        &self.event_log
    }

    /// Records an event. When `token_estimate` is `None` the session's token
    /// counter estimates it from the event's content. A tool event's
    /// output, error and arguments are redacted first (see
    /// [`redact_event_data`]); [`Session::record_with`] can leave them as
    /// they are.
    pub fn record(
        &mut self,
        kind: impl Into<String>,
        data: Value,
        token_estimate: Option<u64>,
    ) -> Result<&SessionEvent> {
        self.record_with(kind, data, RecordOptions::estimate(token_estimate))
    }

    /// Records an event as `options` say: its token estimate, and whether a
    /// tool event's output, error and arguments are redacted first (they
    /// are by default; the count is of the redacted data).
    pub fn record_with(
        &mut self,
        kind: impl Into<String>,
        mut data: Value,
        options: RecordOptions,
    ) -> Result<&SessionEvent> {
        let kind = kind.into();
        if options.redact {
            redact_event_data(&kind, &mut data);
        }
        self.record_as_given(kind, data, options.token_estimate)
    }

    /// Records an event as given, nothing redacted: for the library's own
    /// records that never hold a tool's text (a memory journal), through a
    /// path that does not link the redaction rules into modules without
    /// them.
    pub(crate) fn record_as_given(
        &mut self,
        kind: String,
        data: Value,
        token_estimate: Option<u64>,
    ) -> Result<&SessionEvent> {
        let event = self.event_log.append(kind, data, token_estimate)?;
        if let Some(observe) = &self.observer {
            observe(&self.session_id, event);
        }
        Ok(event)
    }

    /// Records what a provider reported a model call cost (a `model_usage`
    /// event), with `counted_tokens`, the session's count of that request:
    /// by default the count of the latest compile of this session. Compiles
    /// derive their correction from these events (see
    /// [`EventLog::usage_correction`]). A count above 2⁵³ − 1 is
    /// [`ErrorCode::InvalidTokenCount`].
    pub fn record_usage(
        &mut self,
        usage: &ModelUsage,
        counted_tokens: Option<u64>,
    ) -> Result<&SessionEvent> {
        usage.check(counted_tokens)?;
        let data = self.usage_event_data(usage, counted_tokens);
        self.record(MODEL_USAGE, data, None)
    }

    /// The data of the `model_usage` event [`Session::record_usage`]
    /// records (to record it with [`record_shared`]).
    pub fn usage_event_data(&self, usage: &ModelUsage, counted_tokens: Option<u64>) -> Value {
        usage.event_data(counted_tokens.or(self.last_compiled_tokens.get()))
    }

    /// Remembers a compile's token count for [`Session::record_usage`].
    pub(crate) fn note_compiled(&self, tokens: u64) {
        self.last_compiled_tokens.set(Some(tokens));
    }

    /// Sets (or with `None` removes) the observer told of every event
    /// recorded from now on.
    pub fn set_observer(&mut self, observer: Option<SessionObserver>) {
        self.observer = observer;
    }

    /// Indexes the events recorded while the session was borrowed for
    /// reading (see [`record_shared`]).
    pub fn flush(&mut self) {
        self.event_log.flush();
    }

    /// The session's evidence: one entry per event, with the kind mapping.
    pub fn to_evidence_pack(&self) -> EvidencePack {
        EvidencePack {
            session_id: self.session_id.clone(),
            entries: self
                .event_log
                .all_events()
                .iter()
                .map(|e| EvidenceEntry {
                    timestamp: e.timestamp,
                    phase: e.kind.clone(),
                    kind: evidence_kind(&e.kind).to_string(),
                    data: e.data.clone(),
                })
                .collect(),
        }
    }
}

/// Records an event in a shared session. Recording never waits for and
/// never fails because of a compile: when nothing else holds the session
/// the event is appended; while a compile reads it, the event is stamped,
/// counted and returned now and indexed when the compile ends (readers see
/// it at once through [`EventLog::all_events`]). A tool event's output,
/// error and arguments are redacted first, as [`Session::record`] does.
pub fn record_shared(
    session: &RefCell<Session>,
    kind: impl Into<String>,
    data: Value,
    token_estimate: Option<u64>,
) -> Result<SessionEvent> {
    record_shared_then(
        session,
        kind,
        data,
        RecordOptions::estimate(token_estimate),
        SessionEvent::clone,
    )
}

/// [`record_shared`] as `options` say, returning what `then` takes from the
/// recorded event instead of a copy of it.
pub fn record_shared_then<T>(
    session: &RefCell<Session>,
    kind: impl Into<String>,
    data: Value,
    options: RecordOptions,
    then: impl FnOnce(&SessionEvent) -> T,
) -> Result<T> {
    let kind = kind.into();
    let mut data = data;
    if options.redact {
        redact_event_data(&kind, &mut data);
    }
    record_shared_as_given(session, kind, data, options.token_estimate, then)
}

/// [`record_shared_then`] with nothing redacted (see
/// [`Session::record_as_given`]).
pub(crate) fn record_shared_as_given<T>(
    session: &RefCell<Session>,
    kind: String,
    data: Value,
    token_estimate: Option<u64>,
    then: impl FnOnce(&SessionEvent) -> T,
) -> Result<T> {
    if let Ok(mut s) = session.try_borrow_mut() {
        return s.record_as_given(kind, data, token_estimate).map(then);
    }
    match session.try_borrow() {
        Ok(s) => {
            let event = s.event_log.enqueue(kind, data, token_estimate)?;
            if let Some(observe) = &s.observer {
                observe(&s.session_id, &event);
            }
            Ok(then(&event))
        }
        // Only a synchronous write holds the session mutably, and no code
        // path records from inside one.
        Err(_) => Err(Error::new(
            ErrorCode::SessionBusy,
            "the session is being written to",
        )),
    }
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}
