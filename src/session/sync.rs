//! Many writers, one session: [`sync_session`] saves a session that other
//! writers append to as well, merging what they saved and retrying.
//!
//! Sessions are append-only, so two writers' saves never disagree about an
//! event, only about the order: a save that finds the store moved on fails
//! whole with [`ErrorCode::StoreConflict`] (see
//! [`crate::session::SavePlan::Stale`]); `sync_session` then loads what
//! other writers saved since the events the session knows the store holds
//! ([`Session::saved_prefix`], [`SessionStore::load_events_after`]), places
//! it before the session's own unsaved events
//! ([`Session::merge_saved_tail`]) and saves again, after a jittered backoff.
//! A session whose syncs lately had to contend waits before its first save
//! too ([`Session::sync_pace`]), so the writers whose saves go through do
//! not keep the store from those backing off. The
//! saved order is the commit order, the same for every reader; the events
//! one writer saves together stay together (a tool call recorded with its
//! outcome between two syncs is never split). No lock is taken, so none can
//! outlive a killed writer.

use std::cell::RefCell;

use serde::Serialize;

use crate::clock::{Clock, IdRng};
use crate::error::{Error, ErrorCode, Result};
use crate::session::{Session, SessionStore};

/// How [`sync_session`] retries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SyncOptions {
    /// Saves tried at most before `STORE_CONFLICT` (default 8).
    pub max_tries: u32,
    /// The backoff ceiling after the first conflict, in ms (default 10),
    /// doubling after each: the wait is drawn uniformly below it.
    pub base_delay_ms: f64,
    /// The highest ceiling, in ms (default 1,000).
    pub max_delay_ms: f64,
}

impl Default for SyncOptions {
    fn default() -> Self {
        SyncOptions {
            max_tries: 8,
            base_delay_ms: 10.0,
            max_delay_ms: 1000.0,
        }
    }
}

/// What one sync (`session.sync`, [`sync_session`]) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SyncReport {
    /// Saves tried (1 when nobody else wrote meanwhile).
    pub tries: u32,
    /// Events other writers saved that were placed before this session's own.
    pub merged: u64,
    /// Events the successful save wrote.
    pub events_written: u64,
}

/// The highest [`Session::sync_pace`].
pub const MAX_SYNC_PACE: u32 = 6;

/// The wait before try `next_try` (2 or more) of a sync: "full jitter",
/// `random` (in [0, 1)) times `base_delay_ms` doubled for each conflict so
/// far, capped at `max_delay_ms`.
pub fn retry_delay_ms(next_try: u32, random: f64, options: &SyncOptions) -> f64 {
    let doublings = next_try.saturating_sub(2).min(30);
    let ceiling = (options.base_delay_ms * f64::from(1u32 << doublings)).min(options.max_delay_ms);
    random.clamp(0.0, 1.0) * ceiling.max(0.0)
}

/// Saves `session` to `store`, merging the events other writers saved
/// meanwhile and retrying on conflict (see the module docs). Resolves once
/// the session's events are saved: each is then kept exactly once. After
/// `options.max_tries` conflicts it fails with `STORE_CONFLICT`, the
/// session's own events unsaved for the next sync (merged after what the
/// store held at the previous try). Other errors fail at once, nothing lost
/// either. A session deleted meanwhile is saved again whole.
pub async fn sync_session(
    store: &dyn SessionStore,
    session: &RefCell<Session>,
    clock: &dyn Clock,
    rng: &mut IdRng,
    options: &SyncOptions,
) -> Result<SyncReport> {
    let max_tries = options.max_tries.max(1);
    let mut merged = 0u64;
    let mut tries = 0;
    let pace = session.try_borrow().map_err(|_| busy())?.sync_pace();
    if pace > 0 {
        // Paced as a retry after `pace` conflicts (see `Session::sync_pace`).
        let random = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        clock.sleep(retry_delay_ms(pace + 1, random, options)).await;
    }
    loop {
        tries += 1;
        // What the save holds at least (it reads the session when it is
        // ready to write, perhaps with more recorded by then).
        let count = session.try_borrow().map_err(|_| busy())?.event_log().len();
        let conflict = match store.save_session(session).await {
            Ok(report) => {
                let session = session.try_borrow().map_err(|_| busy())?;
                session.note_saved(count);
                session.note_sync(tries, true);
                return Ok(SyncReport {
                    tries,
                    merged,
                    events_written: report.events_written,
                });
            }
            Err(e) if e.code() == ErrorCode::StoreConflict => e,
            Err(e) => return Err(e),
        };
        let id = session
            .try_borrow()
            .map_err(|_| busy())?
            .session_id()
            .to_string();
        if tries >= max_tries {
            session
                .try_borrow()
                .map_err(|_| busy())?
                .note_sync(tries, false);
            return Err(Error::new(
                ErrorCode::StoreConflict,
                format!(
                    "session {id}: {max_tries} saves met other writers' saves ({}); the \
                     session's own events are unsaved: sync again",
                    conflict.message()
                ),
            ));
        }
        // Wait first, then load: the merged session is as fresh as can be
        // when it is saved.
        let random = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        clock
            .sleep(retry_delay_ms(tries + 1, random, options))
            .await;
        // Only what other writers saved since the events this session
        // knows the store holds.
        let (known, last) = {
            let session = session.try_borrow().map_err(|_| busy())?;
            let (known, last) = session.saved_prefix();
            (known, last.map(str::to_string))
        };
        if let Some(tail) = store.load_events_after(&id, known, last.as_deref()).await? {
            let placed = session
                .try_borrow_mut()
                .map_err(|_| busy())?
                .merge_saved_tail(&tail)?;
            merged += placed as u64;
        }
    }
}

fn busy() -> Error {
    Error::new(
        ErrorCode::SessionBusy,
        "the session is being changed and cannot be synced now",
    )
}
