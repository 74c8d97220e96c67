//! Long-term memory that compiles preload: a store trait and a built-in
//! in-memory backend ranked by relevance.

mod in_memory;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::Result;

pub use in_memory::InMemoryBackend;

/// One remembered fact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryEntry {
    /// A unique key.
    pub key: String,
    /// The remembered text.
    pub content: String,
    /// A free-form category (e.g. `core`, `episode`, `fact`).
    #[serde(default)]
    pub category: String,
}

/// A memory service that recalls entries relevant to a query, most relevant
/// first (single-threaded, no `Send` bound).
#[async_trait(?Send)]
pub trait MemoryStore {
    /// Up to `limit` entries relevant to `query`, most relevant first.
    async fn recall(&self, query: &str, limit: usize) -> Result<Vec<MemoryEntry>>;
}
