//! The built-in memory backend: entries in memory, recall ranked by BM25.

use std::cell::RefCell;
use std::collections::HashMap;

use async_trait::async_trait;

use crate::error::Result;
use crate::memory::{MemoryEntry, MemoryStore};

/// BM25 parameters (the usual defaults).
const K1: f64 = 1.2;
const B: f64 = 0.75;

struct Indexed {
    entry: MemoryEntry,
    terms: HashMap<String, u32>,
    length: u32,
}

/// Memory held in memory (the seed's `InMemoryBackend`). `recall` ranks
/// entries by BM25 relevance of their key and content to the query, and
/// returns only entries sharing at least one term with it.
#[derive(Default)]
pub struct InMemoryBackend {
    entries: RefCell<Vec<Indexed>>,
}

/// Lower-cased alphanumeric terms of `text` (CJK characters are terms on their own).
fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() {
            let cjk = matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF);
            if cjk {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                out.push(c.to_string());
            } else {
                current.extend(c.to_lowercase());
            }
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

impl InMemoryBackend {
    /// An empty memory.
    pub fn new() -> Self {
        InMemoryBackend::default()
    }

    /// Stores (or replaces) the entry `key`.
    pub fn store(&self, key: &str, content: &str, category: &str) {
        let all = terms(&format!("{key} {content}"));
        let mut counts = HashMap::new();
        for t in &all {
            *counts.entry(t.clone()).or_insert(0) += 1;
        }
        let indexed = Indexed {
            entry: MemoryEntry {
                key: key.to_string(),
                content: content.to_string(),
                category: category.to_string(),
            },
            terms: counts,
            length: all.len() as u32,
        };
        let mut entries = self.entries.borrow_mut();
        match entries.iter_mut().find(|e| e.entry.key == key) {
            Some(existing) => *existing = indexed,
            None => entries.push(indexed),
        }
    }

    /// Removes the entry `key`; `false` when there was none.
    pub fn forget(&self, key: &str) -> bool {
        let mut entries = self.entries.borrow_mut();
        let before = entries.len();
        entries.retain(|e| e.entry.key != key);
        entries.len() != before
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.borrow().len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.borrow().is_empty()
    }

    /// Entries ranked by BM25 score against `query`, best first, ties in
    /// insertion order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<MemoryEntry> {
        let entries = self.entries.borrow();
        let n = entries.len() as f64;
        if entries.is_empty() || limit == 0 {
            return Vec::new();
        }
        let avg_len = entries.iter().map(|e| e.length as f64).sum::<f64>() / n;
        let mut query_terms = terms(query);
        query_terms.sort();
        query_terms.dedup();
        let idf: Vec<f64> = query_terms
            .iter()
            .map(|t| {
                let df = entries.iter().filter(|e| e.terms.contains_key(t)).count() as f64;
                ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
            })
            .collect();
        let mut scored: Vec<(f64, usize)> = entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                let mut score = 0.0;
                for (t, w) in query_terms.iter().zip(&idf) {
                    if let Some(&tf) = e.terms.get(t) {
                        let tf = tf as f64;
                        let norm = 1.0 - B + B * e.length as f64 / avg_len.max(1.0);
                        score += w * tf * (K1 + 1.0) / (tf + K1 * norm);
                    }
                }
                (score > 0.0).then_some((score, i))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .take(limit)
            .map(|(_, i)| entries[i].entry.clone())
            .collect()
    }
}

#[async_trait(?Send)]
impl MemoryStore for InMemoryBackend {
    async fn recall(&self, query: &str, limit: usize) -> Result<Vec<MemoryEntry>> {
        Ok(self.search(query, limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_ranks_by_relevance() {
        let m = InMemoryBackend::new();
        m.store("fact1", "Python is a programming language", "core");
        m.store("fact2", "Rust is systems programming", "core");
        m.store("fact3", "The weather in Paris is mild", "core");
        let hits = m.search("Tell me about Python programming", 5);
        assert_eq!(hits[0].key, "fact1");
        assert_eq!(hits.len(), 2, "the weather shares no term");
        assert!(m.search("nothing relevant here", 5).is_empty());
    }

    #[test]
    fn store_replaces_by_key_and_forget_removes() {
        let m = InMemoryBackend::new();
        m.store("k", "old text", "");
        m.store("k", "new text", "");
        assert_eq!(m.len(), 1);
        assert_eq!(m.search("new", 1)[0].content, "new text");
        assert!(m.forget("k"));
        assert!(!m.forget("k"));
        assert!(m.is_empty());
    }

    #[test]
    fn cjk_queries_match() {
        let m = InMemoryBackend::new();
        m.store("zh", "今天天气很好", "");
        assert_eq!(m.search("天气", 1).len(), 1);
    }
}
