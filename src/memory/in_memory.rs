//! The built-in memory backend: entries in memory, recall ranked by BM25.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use async_trait::async_trait;

use crate::clock::Clock;
use crate::error::Result;
use crate::memory::{MemoryEntry, MemoryFilter, MemoryStore};
use context_compiler_text::order::{float_descending, sort_stable_by, sort_stable_by_key};

/// BM25 parameters (the usual defaults).
const K1: f64 = 1.2;
const B: f64 = 0.75;

struct Indexed {
    entry: MemoryEntry,
    terms: HashMap<String, u32>,
    length: u32,
}

impl Indexed {
    fn new(entry: MemoryEntry) -> Indexed {
        let all = terms(&format!("{} {}", entry.key, entry.content));
        let mut counts = HashMap::new();
        for t in &all {
            *counts.entry(t.clone()).or_insert(0) += 1;
        }
        Indexed {
            entry,
            terms: counts,
            length: all.len() as u32,
        }
    }
}

/// Memory held in memory (default `InMemoryBackend`). `recall` ranks
/// entries by BM25 relevance of their key and content to the query, returns
/// only entries sharing at least one term with it, and marks them recalled.
pub struct InMemoryBackend {
    entries: RefCell<Vec<Indexed>>,
    clock: Option<Rc<dyn Clock>>,
}

/// Lower-cased alphanumeric terms of `text` (CJK characters are terms on their own).
pub(crate) fn terms(text: &str) -> Vec<String> {
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
    /// An empty memory that stamps entries with the operating system's clock
    /// (on `wasm32-unknown-unknown`, which has none, it keeps no times; use
    /// [`InMemoryBackend::with_clock`]).
    pub fn new() -> Self {
        #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
        let clock: Option<Rc<dyn Clock>> = Some(Rc::new(crate::clock::SystemClock));
        #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
        let clock: Option<Rc<dyn Clock>> = None;
        InMemoryBackend {
            entries: RefCell::default(),
            clock,
        }
    }

    /// An empty memory whose creation and recall times come from `clock`.
    pub fn with_clock(clock: Rc<dyn Clock>) -> Self {
        InMemoryBackend {
            entries: RefCell::default(),
            clock: Some(clock),
        }
    }

    fn now(&self) -> Option<f64> {
        self.clock.as_ref().map(|c| c.now_ms())
    }

    /// Stores (or replaces) the entry `key` with only a content and a category.
    pub fn store(&self, key: &str, content: &str, category: &str) {
        self.insert(MemoryEntry::new(key, content, category));
    }

    /// Stores `entry`, replacing the entry with its key. Creation and
    /// last-recall times missing from `entry` are kept from the replaced
    /// entry, or the creation time is set to now.
    pub fn insert(&self, mut entry: MemoryEntry) {
        let mut entries = self.entries.borrow_mut();
        let existing = entries.iter().position(|e| e.entry.key == entry.key);
        if let Some(i) = existing {
            let old = &entries[i].entry;
            entry.created_at = entry.created_at.or(old.created_at);
            entry.last_recalled_at = entry.last_recalled_at.or(old.last_recalled_at);
        }
        if entry.created_at.is_none() {
            entry.created_at = self.now();
        }
        let indexed = Indexed::new(entry);
        match existing {
            Some(i) => entries[i] = indexed,
            None => entries.push(indexed),
        }
    }

    /// Removes every entry.
    pub fn clear(&self) {
        self.entries.borrow_mut().clear();
    }

    /// Removes the entry `key`; `false` when there was none.
    pub fn forget(&self, key: &str) -> bool {
        let mut entries = self.entries.borrow_mut();
        let before = entries.len();
        entries.retain(|e| e.entry.key != key);
        entries.len() != before
    }

    /// The entry `key`.
    pub fn get(&self, key: &str) -> Option<MemoryEntry> {
        self.entries
            .borrow()
            .iter()
            .find(|e| e.entry.key == key)
            .map(|e| e.entry.clone())
    }

    /// Every entry passing `filter`, in insertion order.
    pub fn entries(&self, filter: &MemoryFilter) -> Vec<MemoryEntry> {
        self.entries
            .borrow()
            .iter()
            .filter(|e| filter.matches(&e.entry))
            .map(|e| e.entry.clone())
            .collect()
    }

    /// Sets the last-recall time of `key` (when it is stored).
    pub fn mark_recalled(&self, key: &str, at: f64) {
        if let Some(e) = self
            .entries
            .borrow_mut()
            .iter_mut()
            .find(|e| e.entry.key == key)
        {
            e.entry.last_recalled_at = Some(at);
        }
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
    /// insertion order. Does not mark them recalled.
    pub fn search(&self, query: &str, limit: usize) -> Vec<MemoryEntry> {
        let entries = self.entries.borrow();
        let n = entries.len() as f64;
        if entries.is_empty() || limit == 0 {
            return Vec::new();
        }
        let avg_len = entries.iter().map(|e| e.length as f64).sum::<f64>() / n;
        let mut query_terms = terms(query);
        sort_stable_by(&mut query_terms, |a, b| a.cmp(b));
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
        sort_stable_by_key(&mut scored, |&(score, _)| (float_descending(score), 0));
        scored
            .into_iter()
            .take(limit)
            .map(|(_, i)| entries[i].entry.clone())
            .collect()
    }

    /// [`InMemoryBackend::search`], marking the hits recalled now.
    pub fn recall_now(&self, query: &str, limit: usize) -> Vec<MemoryEntry> {
        let mut hits = self.search(query, limit);
        if let Some(now) = self.now() {
            for hit in &mut hits {
                self.mark_recalled(&hit.key, now);
                hit.last_recalled_at = Some(now);
            }
        }
        hits
    }
}

impl Default for InMemoryBackend {
    fn default() -> Self {
        InMemoryBackend::new()
    }
}

#[async_trait(?Send)]
impl MemoryStore for InMemoryBackend {
    async fn recall(&self, query: &str, limit: usize) -> Result<Vec<MemoryEntry>> {
        Ok(self.recall_now(query, limit))
    }

    async fn put(&self, entry: MemoryEntry) -> Result<()> {
        self.insert(entry);
        Ok(())
    }

    async fn delete(&self, key: &str) -> Result<bool> {
        Ok(self.forget(key))
    }

    async fn list(&self, filter: &MemoryFilter) -> Result<Vec<MemoryEntry>> {
        Ok(self.entries(filter))
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
    fn times_are_kept_across_replacement_and_set_by_recall() {
        let m = InMemoryBackend::new();
        m.insert(MemoryEntry {
            created_at: Some(5.0),
            ..MemoryEntry::new("k", "alpha", "fact")
        });
        assert_eq!(m.get("k").and_then(|e| e.last_recalled_at), None);
        let hit = m.recall_now("alpha", 1);
        let recalled = hit[0].last_recalled_at.expect("recall stamps the hit");
        m.store("k", "alpha beta", "fact");
        let e = m.get("k").expect("replaced, not removed");
        assert_eq!(e.created_at, Some(5.0));
        assert_eq!(e.last_recalled_at, Some(recalled));
        assert!(m.search("alpha", 1)[0].last_recalled_at == Some(recalled));
    }

    #[test]
    fn entries_filter_by_subject_and_category() {
        let m = InMemoryBackend::new();
        m.insert(MemoryEntry {
            subject: Some("user".into()),
            ..MemoryEntry::new("a", "likes tea", "preference")
        });
        m.insert(MemoryEntry {
            subject: Some("deploy".into()),
            ..MemoryEntry::new("b", "runs on Fridays", "rule")
        });
        let by_subject = MemoryFilter {
            subject: Some("user".into()),
            ..MemoryFilter::default()
        };
        assert_eq!(m.entries(&by_subject).len(), 1);
        let by_category = MemoryFilter {
            category: Some("rule".into()),
            ..MemoryFilter::default()
        };
        assert_eq!(m.entries(&by_category)[0].key, "b");
        assert_eq!(m.entries(&MemoryFilter::default()).len(), 2);
    }

    #[test]
    fn cjk_queries_match() {
        let m = InMemoryBackend::new();
        m.store("zh", "今天天气很好", "");
        assert_eq!(m.search("天气", 1).len(), 1);
    }
}
