//! Memory-store helpers for tests.

use async_trait::async_trait;
use context_compiler::memory::{MemoryEntry, MemoryStore};
use context_compiler::Result;

/// A memory that recalls nothing and keeps the trait's default writes,
/// which fail.
pub struct RecallOnly;

#[async_trait(?Send)]
impl MemoryStore for RecallOnly {
    async fn recall(&self, _: &str, _: usize) -> Result<Vec<MemoryEntry>> {
        Ok(Vec::new())
    }
}
