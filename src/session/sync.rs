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
//! outcome between two syncs is never split).
//!
//! A sync that lost [`LEASE_AFTER_LOSSES`] saves takes the session's lease
//! ([`crate::session::lease`]) where the store keeps one: every other save
//! then writes nothing until the holder's next save, which therefore cannot
//! lose. A save that meets another's lease waits for it; that wait is not a
//! try. The lease expires by the store's own clock ([`LEASE_MS`]), so none
//! outlives a killed writer by more than that.

use std::cell::RefCell;

use serde::Serialize;

use crate::clock::{Clock, IdRng};
use crate::error::{Error, ErrorCode, Result};
use crate::session::lease::{LEASE_AFTER_LOSSES, LEASE_MS};
use crate::session::{LeaseTake, SaveTry};
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

/// The wait before polling a lease again after `waits` polls, in ms:
/// short (a holder's save ends its lease early), jittered by `random` (in
/// [0, 1)), and no longer than the lease's remaining time when known.
pub fn lease_poll_ms(waits: u32, random: f64, remaining_ms: Option<f64>) -> f64 {
    let ceiling = (4.0 * f64::from(1u32 << waits.min(4))).min(40.0);
    let wait = (0.5 + 0.5 * random.clamp(0.0, 1.0)) * ceiling;
    match remaining_ms {
        Some(left) if left >= 0.0 => wait.min(left + 1.0),
        _ => wait,
    }
}

/// The most a sync waits on other writers' leases, in all, before it gives
/// up (`STORE_CONFLICT`): each lease lasts at most [`LEASE_MS`].
fn lease_wait_limit_ms(options: &SyncOptions) -> f64 {
    (LEASE_MS as f64) * f64::from(options.max_tries.max(1))
}

/// One sync's waits on leases: how long in all, and how many in a row.
struct LeaseWaits<'a> {
    clock: &'a dyn Clock,
    waited_ms: f64,
    in_row: u32,
    limit_ms: f64,
}

impl LeaseWaits<'_> {
    /// Waits for another writer's lease, or fails once the sync has waited
    /// its limit.
    async fn wait(&mut self, id: &str, rng: &mut IdRng, remaining_ms: Option<f64>) -> Result<()> {
        if self.waited_ms >= self.limit_ms {
            return Err(Error::new(
                ErrorCode::StoreConflict,
                format!(
                    "session {id}: waited {} ms on other writers' leases; the session's own \
                     events are unsaved: sync again",
                    self.waited_ms.round()
                ),
            ));
        }
        let wait = lease_poll_ms(self.in_row, random(rng), remaining_ms);
        self.in_row += 1;
        self.waited_ms += wait;
        self.clock.sleep(wait).await;
        Ok(())
    }
}

fn random(rng: &mut IdRng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
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
    let mut lost = 0;
    let writer = format!("{:016x}", rng.next_u64());
    let mut leases = LeaseWaits {
        clock,
        waited_ms: 0.0,
        in_row: 0,
        limit_ms: lease_wait_limit_ms(options),
    };
    let (id, pace) = {
        let session = session.try_borrow().map_err(|_| busy())?;
        (session.session_id().to_string(), session.sync_pace())
    };
    if pace > 0 {
        // Paced as a retry after `pace` conflicts (see `Session::sync_pace`).
        clock
            .sleep(retry_delay_ms(pace + 1, random(rng), options))
            .await;
    }
    loop {
        // What the save holds at least (it reads the session when it is
        // ready to write, perhaps with more recorded by then).
        let count = session.try_borrow().map_err(|_| busy())?.event_log().len();
        match store.try_save(session, &writer).await? {
            SaveTry::Saved(report) => {
                tries += 1;
                let session = session.try_borrow().map_err(|_| busy())?;
                session.note_saved(count);
                session.note_sync(tries, true);
                return Ok(SyncReport {
                    tries,
                    merged,
                    events_written: report.events_written,
                });
            }
            SaveTry::Leased { wait_ms } => {
                // Not a try: another writer's turn. Its events are merged
                // before this session's own are saved.
                leases.wait(&id, rng, wait_ms).await?;
                merged += merge_tail(store, session, &id).await?;
                continue;
            }
            SaveTry::Lost => {
                tries += 1;
                lost += 1;
            }
        }
        if tries >= max_tries {
            session
                .try_borrow()
                .map_err(|_| busy())?
                .note_sync(tries, false);
            return Err(Error::new(
                ErrorCode::StoreConflict,
                format!(
                    "session {id}: {max_tries} saves met other writers' saves; the session's \
                     own events are unsaved: sync again"
                ),
            ));
        }
        let leased =
            lost >= LEASE_AFTER_LOSSES && take_lease(store, &id, &writer, &mut leases, rng).await?;
        if !leased {
            // Wait first, then load: the merged session is as fresh as can
            // be when it is saved.
            clock
                .sleep(retry_delay_ms(tries + 1, random(rng), options))
                .await;
        }
        merged += merge_tail(store, session, &id).await?;
    }
}

/// Takes the lease of session `id` for `writer`, waiting while another
/// holds it (not a try); `false` when the store keeps none.
async fn take_lease(
    store: &dyn SessionStore,
    id: &str,
    writer: &str,
    leases: &mut LeaseWaits<'_>,
    rng: &mut IdRng,
) -> Result<bool> {
    loop {
        match store.take_lease(id, writer, LEASE_MS).await? {
            LeaseTake::Taken => return Ok(true),
            LeaseTake::Unavailable => return Ok(false),
            LeaseTake::Held { wait_ms } => leases.wait(id, rng, wait_ms).await?,
            // Another save went through meanwhile: try again at once.
            LeaseTake::Lost => {}
        }
    }
}

/// Merges into `session` what other writers saved since the events it
/// knows the store holds; how many were placed.
async fn merge_tail(store: &dyn SessionStore, session: &RefCell<Session>, id: &str) -> Result<u64> {
    let (known, last) = {
        let session = session.try_borrow().map_err(|_| busy())?;
        let (known, last) = session.saved_prefix();
        (known, last.map(str::to_string))
    };
    let Some(tail) = store.load_events_after(id, known, last.as_deref()).await? else {
        return Ok(0);
    };
    let placed = session
        .try_borrow_mut()
        .map_err(|_| busy())?
        .merge_saved_tail(&tail)?;
    Ok(placed as u64)
}

fn busy() -> Error {
    Error::new(
        ErrorCode::SessionBusy,
        "the session is being changed and cannot be synced now",
    )
}
