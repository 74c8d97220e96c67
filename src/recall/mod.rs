//! Recall over a session: the session's lexical index (kept by the session
//! itself, [`crate::session::Session::search`]), the measures over its hits,
//! and the embedding model that ranks them by meaning.

pub mod embedder;

pub(crate) use crate::session::search::event_text;
pub use crate::session::search::{
    SearchHit, SessionRecall, CHUNK_BYTES, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT,
};
pub use context_compiler_recall::{stats, Hit, RecallIndex, Terms, MAX_DISTINCTION};
