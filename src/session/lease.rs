//! A sync's turn of its own: the lease a writer that lost its save's race
//! repeatedly takes in the session's head (see [`crate::session::sync_session`]).
//!
//! While a lease is live, every other save of the session respects it (it
//! writes nothing and reports [`SaveTry::Leased`](crate::session::SaveTry::Leased)), so the holder's next
//! save cannot lose. A lease is short ([`LEASE_MS`]) and expires by the
//! store's own clock (PostgreSQL's `now()`, SQLite's, a key's TTL in Redis,
//! the lease file's modification time on a directory), never by a writer's:
//! a killed holder delays the others by at most that long. The holder's
//! save ends it.

use crate::error::{Error, ErrorCode, Result};

/// How long a lease lasts, in ms, unless the holder's save ends it first.
pub const LEASE_MS: u64 = 2_000;

/// After how many lost saves in one sync the writer takes the lease.
pub const LEASE_AFTER_LOSSES: u32 = 2;

/// The version of the session head (and the SQL schema) this library
/// writes: 3 added the lease. Version 2 stores are read as they are and
/// migrated by the first write.
pub const STORE_VERSION: u32 = 3;

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
