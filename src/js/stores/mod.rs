//! The stores module's classes: the persistent artifact stores
//! (`KvArtifactStore`, `IndexedDbArtifactStore`, `FsArtifactStore`,
//! `SqliteArtifactStore`), and how they read the main module's sessions
//! (`session_source.rs`).

mod bytes;
mod fs;
pub(crate) mod host_bytes;
mod indexeddb;
mod kv;
// In a build with the main module's classes too, sessions are saved natively.
#[cfg(not(feature = "js"))]
mod session_source;
mod sql;
mod types;

#[cfg(not(feature = "js"))]
pub(crate) use session_source::{restore as restore_session, JsSessionSource};
