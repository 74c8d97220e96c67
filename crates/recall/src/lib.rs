//! The context compiler's recall index, in a crate of its own so that it
//! can be built for speed while the core is built for size (the core's
//! `opt-level = "z"` made indexing three times slower, the segmentation
//! and stemming it instantiates included):
//!
//! - [`Terms`]: the terms a text is indexed and searched by;
//! - [`RecallIndex`]: an inverted index ranked with Okapi BM25, built
//!   incrementally;
//! - [`stats`]: how far one score stands out from the rest.
//!
//! Nothing here depends on the host or on the session: it indexes texts
//! under keys. The core (`agent-context-compiler`) keeps a session's index
//! up to date from its events and re-exports it.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod ascii;
mod index;
mod packed;
pub mod stats;
mod stop;
mod terms;

pub use index::{Hit, RecallIndex, MAX_DISTINCTION};
pub use terms::Terms;

/// The maps of words and keys: hashed with foldhash, several times faster
/// than the standard SipHash on short words. Its seed is not secret (on
/// wasm it comes from addresses), so words made to collide could slow
/// indexing down; `serde_json`'s maps (hashbrown's default, foldhash) take
/// the same text with the same exposure.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
