//! Long-term memory: the store trait compiles preload from and the
//! background handlers write to, a built-in in-memory backend ranked by
//! relevance, a persisted one over any [`SessionStore`](crate::session::SessionStore),
//! and the similarity measures facts are deduplicated with.

mod in_memory;
mod persistent;
mod similarity;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};

pub use in_memory::InMemoryBackend;
pub use persistent::{PersistentMemory, MEMORY_DELETE, MEMORY_PUT, MEMORY_RECALLED};
pub use similarity::{cosine_similarity, lexical_similarity, Embedder};

/// One remembered fact.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryEntry {
    /// A unique key.
    pub key: String,
    /// The remembered text.
    pub content: String,
    /// A free-form category (e.g. `core`, `episode`, `preference`, `lesson`).
    #[serde(default)]
    pub category: String,
    /// Who or what the fact is about (the fact `subject`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// How sure the writer was, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// What wrote it (`fact_extractor`, `sleep_reflection`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When it was first stored, in ms since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<f64>,
    /// When a recall last returned it, in ms since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_recalled_at: Option<f64>,
}

impl MemoryEntry {
    /// An entry with only a key, a content and a category.
    pub fn new(key: &str, content: &str, category: &str) -> MemoryEntry {
        MemoryEntry {
            key: key.to_string(),
            content: content.to_string(),
            category: category.to_string(),
            ..MemoryEntry::default()
        }
    }

    /// The time staleness is measured from: the last recall, else the creation.
    pub fn last_used_at(&self) -> Option<f64> {
        self.last_recalled_at.or(self.created_at)
    }
}

/// Which entries [`MemoryStore::list`] returns; `None` fields match anything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryFilter {
    /// Only entries about this subject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Only entries of this category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

impl MemoryFilter {
    /// Whether `entry` passes the filter.
    pub fn matches(&self, entry: &MemoryEntry) -> bool {
        self.subject
            .as_ref()
            .is_none_or(|s| entry.subject.as_ref() == Some(s))
            && self.category.as_ref().is_none_or(|c| &entry.category == c)
    }
}

/// The error of a write on a store that only recalls.
pub fn read_only(operation: &str) -> Error {
    Error::new(
        ErrorCode::MemoryFailed,
        format!("this memory store cannot {operation}: it only recalls"),
    )
}

/// A memory service (single-threaded, no `Send` bound). Compiles only
/// recall; the background handlers also write, delete and list. A store that
/// only recalls keeps the default write methods, which fail with
/// `MEMORY_FAILED`.
#[async_trait(?Send)]
pub trait MemoryStore {
    /// Up to `limit` entries relevant to `query`, most relevant first. A
    /// store that keeps times marks them recalled now.
    async fn recall(&self, query: &str, limit: usize) -> Result<Vec<MemoryEntry>>;

    /// Stores `entry`, replacing the entry with its key (whose creation and
    /// last-recall times are kept unless `entry` sets them).
    async fn put(&self, entry: MemoryEntry) -> Result<()> {
        let _ = entry;
        Err(read_only("store entries"))
    }

    /// Removes the entry `key`; `false` when there was none.
    async fn delete(&self, key: &str) -> Result<bool> {
        let _ = key;
        Err(read_only("delete entries"))
    }

    /// Every entry passing `filter`, in insertion order.
    async fn list(&self, filter: &MemoryFilter) -> Result<Vec<MemoryEntry>> {
        let _ = filter;
        Err(read_only("list entries"))
    }
}
