//! Memory persisted in any [`SessionStore`]: the memory's changes are an
//! append-only journal kept as a session, so it lives wherever sessions do
//! (memory, an injected KV, IndexedDB, the wasmtime host's KV) and is saved
//! incrementally and crash-safely by the same code.
//!
//! The journal's events: [`MEMORY_PUT`] `{ entry }`, [`MEMORY_DELETE`]
//! `{ key }` and [`MEMORY_RECALLED`] `{ at: { key: ms } }`. Opening replays
//! them into an [`InMemoryBackend`], which serves recalls.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use super::{InMemoryBackend, MemoryEntry, MemoryFilter, MemoryStore};
use crate::error::{Error, ErrorCode, Result};
use crate::lock::AsyncLock;
use crate::session::{record_shared_as_given, SaveReport, Session, SessionEnv, SessionStore};

/// Journal event: an entry stored (`{ entry }`).
pub const MEMORY_PUT: &str = "memory_put";
/// Journal event: an entry removed (`{ key }`).
pub const MEMORY_DELETE: &str = "memory_delete";
/// Journal event: entries recalled (`{ at: { key: ms } }`).
pub const MEMORY_RECALLED: &str = "memory_recalled";

/// How many times a save merges another writer's changes and tries again
/// before giving up with `STORE_CONFLICT`.
const MERGE_ATTEMPTS: usize = 8;

/// A [`MemoryStore`] whose every change is saved to a [`SessionStore`]
/// before the write returns. Recall times are saved with the next write or
/// [`PersistentMemory::save`].
pub struct PersistentMemory {
    index: InMemoryBackend,
    journal: RefCell<Session>,
    store: Rc<dyn SessionStore>,
    env: SessionEnv,
    unsaved_recalls: RefCell<BTreeMap<String, f64>>,
    save_lock: AsyncLock,
}

fn corrupt(journal: &str, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::StoreCorrupt,
        format!("memory journal {journal}: {what}"),
    )
}

impl PersistentMemory {
    /// Opens the memory journalled as session `journal_id` in `store`
    /// (empty when there is none yet). A journal event that cannot be
    /// replayed is `STORE_CORRUPT`.
    pub async fn open(
        store: Rc<dyn SessionStore>,
        journal_id: &str,
        env: SessionEnv,
    ) -> Result<PersistentMemory> {
        if journal_id.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "the memory's journal id must not be empty",
            ));
        }
        let index = InMemoryBackend::with_clock(env.clock.clone());
        let journal = match store.load_session(journal_id, env.clone()).await? {
            Some(session) => {
                for event in session.event_log().all_events().iter() {
                    replay(&index, journal_id, &event.kind, &event.data)?;
                }
                session
            }
            None => Session::with_env(
                Some(journal_id.to_string()),
                env.clock.clone(),
                env.counter.clone(),
                env.seed,
            ),
        };
        Ok(PersistentMemory {
            index,
            journal: RefCell::new(journal),
            store,
            env,
            unsaved_recalls: RefCell::default(),
            save_lock: AsyncLock::new(),
        })
    }

    /// The journal's session id.
    pub fn journal_id(&self) -> String {
        self.journal.borrow().session_id().to_string()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Every entry passing `filter`, in insertion order.
    pub fn entries(&self, filter: &MemoryFilter) -> Vec<MemoryEntry> {
        self.index.entries(filter)
    }

    /// Writes what is not saved yet (recall times included). A failed save
    /// loses nothing: the next one writes it. When another writer (another
    /// process, or another `PersistentMemory` over the same store) saved the
    /// journal since, its changes are merged first: this memory's unsaved
    /// changes go after them, as if made last.
    pub async fn save(&self) -> Result<SaveReport> {
        let _turn = self.save_lock.lock().await;
        let recalls = std::mem::take(&mut *self.unsaved_recalls.borrow_mut());
        if !recalls.is_empty() {
            let at: Map<String, Value> = recalls.into_iter().map(|(k, t)| (k, json!(t))).collect();
            record_shared_as_given(
                &self.journal,
                MEMORY_RECALLED.to_string(),
                json!({ "at": at }),
                Some(0),
                |_| (),
            )?;
        }
        let mut attempts = 0;
        loop {
            match self.store.save_session(&self.journal).await {
                Err(e) if e.code() == ErrorCode::StoreConflict && attempts < MERGE_ATTEMPTS => {
                    attempts += 1;
                    self.merge_saved().await?;
                }
                saved => return saved,
            }
        }
    }

    /// Puts the journal as saved now before this memory's own events that
    /// it lacks, and rebuilds the entries from the result.
    async fn merge_saved(&self) -> Result<()> {
        let journal_id = self.journal_id();
        let Some(mut merged) = self
            .store
            .load_session(&journal_id, self.env.clone())
            .await?
        else {
            return Ok(()); // deleted meanwhile: the next save writes it whole
        };
        let ours: Vec<(String, Value)> = {
            let journal = self.journal.borrow();
            let mine = journal.event_log().all_events();
            let saved = merged.event_log().all_events();
            let common = mine
                .iter()
                .zip(saved.iter())
                .take_while(|(a, b)| a.event_id == b.event_id)
                .count();
            mine[common..]
                .iter()
                .filter(|e| !saved.iter().any(|s| s.event_id == e.event_id))
                .map(|e| (e.kind.clone(), e.data.clone()))
                .collect()
        };
        for (kind, data) in ours {
            merged.record_as_given(kind, data, Some(0))?;
        }
        self.index.clear();
        for event in merged.event_log().all_events().iter() {
            replay(&self.index, &journal_id, &event.kind, &event.data)?;
        }
        *self.journal.borrow_mut() = merged;
        Ok(())
    }

    /// Records a journal event: it counts nothing (it never enters a
    /// context) and holds memory entries, no tool's text to redact.
    fn journal(&self, kind: &str, data: Value) -> Result<()> {
        record_shared_as_given(&self.journal, kind.to_string(), data, Some(0), |_| ())
    }
}

/// Applies one journal event to `index`.
fn replay(index: &InMemoryBackend, journal: &str, kind: &str, data: &Value) -> Result<()> {
    match kind {
        MEMORY_PUT => {
            let entry: MemoryEntry = data
                .get("entry")
                .cloned()
                .ok_or_else(|| corrupt(journal, "a memory_put without its entry"))
                .and_then(|v| {
                    serde_json::from_value(v)
                        .map_err(|e| corrupt(journal, format!("a memory_put entry: {e}")))
                })?;
            index.insert(entry);
        }
        MEMORY_DELETE => {
            let key = data
                .get("key")
                .and_then(Value::as_str)
                .ok_or_else(|| corrupt(journal, "a memory_delete without its key"))?;
            index.forget(key);
        }
        MEMORY_RECALLED => {
            let at = data
                .get("at")
                .and_then(Value::as_object)
                .ok_or_else(|| corrupt(journal, "a memory_recalled without its times"))?;
            for (key, time) in at {
                let time = time
                    .as_f64()
                    .ok_or_else(|| corrupt(journal, "a recall time that is not a number"))?;
                index.mark_recalled(key, time);
            }
        }
        other => {
            return Err(corrupt(
                journal,
                format!("an event of unknown kind {other:?}"),
            ))
        }
    }
    Ok(())
}

#[async_trait(?Send)]
impl MemoryStore for PersistentMemory {
    async fn recall(&self, query: &str, limit: usize) -> Result<Vec<MemoryEntry>> {
        let hits = self.index.recall_now(query, limit);
        let mut unsaved = self.unsaved_recalls.borrow_mut();
        for hit in &hits {
            if let Some(at) = hit.last_recalled_at {
                unsaved.insert(hit.key.clone(), at);
            }
        }
        Ok(hits)
    }

    async fn put(&self, entry: MemoryEntry) -> Result<()> {
        let key = entry.key.clone();
        self.index.insert(entry);
        let stored = self
            .index
            .get(&key)
            .ok_or_else(|| Error::new(ErrorCode::MemoryFailed, "the entry was not stored"))?;
        let value = serde_json::to_value(&stored)
            .map_err(|e| Error::new(ErrorCode::MemoryFailed, e.to_string()))?;
        self.journal(MEMORY_PUT, json!({ "entry": value }))?;
        self.save().await.map(|_| ())
    }

    async fn delete(&self, key: &str) -> Result<bool> {
        if !self.index.forget(key) {
            return Ok(false);
        }
        self.unsaved_recalls.borrow_mut().remove(key);
        self.journal(MEMORY_DELETE, json!({ "key": key }))?;
        self.save().await.map(|_| true)
    }

    async fn list(&self, filter: &MemoryFilter) -> Result<Vec<MemoryEntry>> {
        Ok(self.entries(filter))
    }
}
