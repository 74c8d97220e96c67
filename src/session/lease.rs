//! A sync's turn of its own: the lease a writer that lost its save's race
//! repeatedly takes in the session's head (see [`crate::session::sync_session`]).
//!
//! While a lease is live, every other save of the session respects it (it
//! writes nothing and reports [`SaveTry::Leased`]), so the holder's next
//! save cannot lose. A lease is short ([`LEASE_MS`]) and expires by the
//! store's own clock (PostgreSQL's `now()`, SQLite's, a key's TTL in Redis,
//! the lease file's modification time on a directory), never by a writer's:
//! a killed holder delays the others by at most that long. The holder's
//! save ends it.

use crate::error::{Error, ErrorCode, Result};
use crate::session::SaveReport;

/// How long a lease lasts, in ms, unless the holder's save ends it first.
pub const LEASE_MS: u64 = 2_000;

/// After how many lost saves in one sync the writer takes the lease.
pub const LEASE_AFTER_LOSSES: u32 = 2;

/// The version of the session head (and the SQL schema) this library
/// writes: 3 added the lease. Version 2 stores are read as they are and
/// migrated by the first write.
pub const STORE_VERSION: u32 = 3;

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
            SaveTry::Lost => Err(crate::session::stale_save(session_id)),
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

/// [`ErrorCode::StoreVersion`] unless a reader of `reads` can read stored
/// data of version `found` (written by this version or an older one).
pub fn check_store_version(found: u32, reads: u32, what: &str) -> Result<()> {
    if found <= reads {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::StoreVersion,
        format!(
            "{what} has version {found}, written by a newer version of the library; this one \
             reads versions up to {reads}: upgrade the library"
        ),
    ))
}

/// The [`ErrorCode::StoreConflict`] of a plain save that met another
/// writer's lease on `session_id`: nothing was written.
pub fn leased_save(session_id: &str) -> Error {
    Error::new(
        ErrorCode::StoreConflict,
        format!(
            "session {session_id} is leased by another writer's sync for its next save (at most \
             {LEASE_MS} ms); nothing was written: save again after it, or use session.sync"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_refuses_newer_data_with_store_version() {
        assert!(check_store_version(2, 3, "x").is_ok());
        assert!(check_store_version(3, 3, "x").is_ok());
        let e = check_store_version(3, 2, "the head of session s").unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreVersion);
        assert!(e.message().contains("version 3"), "{}", e.message());
    }
}
