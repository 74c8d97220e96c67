//! The in-memory store: artifacts and saved sessions, held in memory.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use async_trait::async_trait;

use crate::artifacts::{
    content_id_by, verify_by, ArtifactHandle, ArtifactStore, Hasher, Sha2Hasher, StoreOptions,
};
use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::session::{check_optional_session_id, check_session_id};
use crate::session::{
    plan_save, stale_save, SavePlan, SaveReport, SavedEvents, SessionEvent, SessionSource,
    SessionStore,
};

/// One stored artifact: its handle, the sessions that stored it, its bytes.
/// [`MemoryArtifactStore::snapshot`] returns these and
/// [`MemoryArtifactStore::restore`] takes them back.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredArtifact {
    /// The handle (session id: the first session that stored it).
    pub handle: ArtifactHandle,
    /// Every session that stored it, in order.
    pub sessions: Vec<String>,
    /// The content.
    pub content: Vec<u8>,
}

/// An artifact store held in memory. Reads are verified like every backend's.
/// It keeps saved sessions too (see [`SessionStore`]).
pub struct MemoryArtifactStore {
    entries: RefCell<BTreeMap<String, StoredArtifact>>,
    sessions: RefCell<BTreeMap<String, Vec<SessionEvent>>>,
    clock: Rc<dyn Clock>,
    hasher: Rc<dyn Hasher>,
}

impl MemoryArtifactStore {
    /// An empty store stamping artifacts with `clock`, hashing in Rust.
    pub fn new(clock: Rc<dyn Clock>) -> Self {
        MemoryArtifactStore {
            entries: RefCell::new(BTreeMap::new()),
            sessions: RefCell::new(BTreeMap::new()),
            clock,
            hasher: Rc::new(Sha2Hasher),
        }
    }

    /// The store, hashing with `hasher`.
    pub fn with_hasher(mut self, hasher: Rc<dyn Hasher>) -> Self {
        self.hasher = hasher;
        self
    }

    /// Every stored artifact, ordered by id (for persisting the store).
    pub fn snapshot(&self) -> Vec<StoredArtifact> {
        self.entries.borrow().values().cloned().collect()
    }

    /// Adds artifacts from a snapshot. They are verified when read, like
    /// everything else, so a corrupted snapshot is never returned as content.
    pub fn restore(&self, artifacts: Vec<StoredArtifact>) {
        let mut entries = self.entries.borrow_mut();
        for a in artifacts {
            entries.insert(a.handle.artifact_id.clone(), a);
        }
    }

    fn handle_for(stored: &StoredArtifact, session_id: Option<&str>) -> ArtifactHandle {
        let mut handle = stored.handle.clone();
        if let Some(s) = session_id {
            handle.session_id = Some(s.to_string());
        }
        handle
    }
}

#[async_trait(?Send)]
impl ArtifactStore for MemoryArtifactStore {
    async fn store(
        &self,
        content: &[u8],
        source: &str,
        options: StoreOptions,
    ) -> Result<ArtifactHandle> {
        check_optional_session_id(options.session_id.as_deref())?;
        let id = content_id_by(self.hasher.as_ref(), content).await?;
        let mut entries = self.entries.borrow_mut();
        if let Some(existing) = entries.get_mut(&id) {
            if let Some(s) = &options.session_id {
                if !existing.sessions.contains(s) {
                    existing.sessions.push(s.clone());
                }
            }
            return Ok(Self::handle_for(existing, options.session_id.as_deref()));
        }
        let handle =
            ArtifactHandle::describe(id.clone(), content, source, &options, self.clock.now_ms());
        entries.insert(
            id,
            StoredArtifact {
                handle: handle.clone(),
                sessions: options.session_id.into_iter().collect(),
                content: content.to_vec(),
            },
        );
        Ok(handle)
    }

    async fn retrieve(&self, artifact_id: &str) -> Result<Option<Vec<u8>>> {
        // Copied out first: no borrow is held while the hash is awaited.
        let content = self
            .entries
            .borrow()
            .get(artifact_id)
            .map(|stored| stored.content.clone());
        match content {
            None => Ok(None),
            Some(content) => {
                verify_by(self.hasher.as_ref(), artifact_id, &content).await?;
                Ok(Some(content))
            }
        }
    }

    async fn exists(&self, artifact_id: &str) -> Result<bool> {
        Ok(self.entries.borrow().contains_key(artifact_id))
    }

    async fn list_handles(&self, session_id: Option<&str>) -> Result<Vec<ArtifactHandle>> {
        check_optional_session_id(session_id)?;
        let entries = self.entries.borrow();
        Ok(entries
            .values()
            .filter(|a| session_id.is_none_or(|s| a.sessions.iter().any(|x| x == s)))
            .map(|a| Self::handle_for(a, session_id))
            .collect())
    }

    async fn delete(&self, artifact_id: &str) -> Result<bool> {
        Ok(self.entries.borrow_mut().remove(artifact_id).is_some())
    }
}

#[async_trait(?Send)]
impl SessionStore for MemoryArtifactStore {
    async fn save_session(&self, session: &dyn SessionSource) -> Result<SaveReport> {
        let session_id = session.session_id()?;
        check_session_id(&session_id)?;
        let saved = self
            .sessions
            .borrow()
            .get(&session_id)
            .map(|s| (s.len() as u64, s.last().map(|e| e.event_id.clone())));
        let from = match plan_save(
            saved.as_ref().map(|(n, last)| (*n, last.as_deref())),
            session,
        )? {
            SavePlan::First => 0,
            SavePlan::Append { from } => from,
            SavePlan::Stale => return Err(stale_save(&session_id)),
        };
        let new = session.events_from(from)?;
        let written = new.len() as u64;
        let mut sessions = self.sessions.borrow_mut();
        let saved_log = sessions.entry(session_id).or_default();
        saved_log.extend(new);
        session.note_saved(saved_log.len());
        Ok(SaveReport {
            events_written: written,
            rewritten: saved.is_none(),
        })
    }

    async fn load_events(&self, session_id: &str) -> Result<Option<SavedEvents>> {
        check_session_id(session_id)?;
        let sessions = self.sessions.borrow();
        let Some(events) = sessions.get(session_id) else {
            return Ok(None);
        };
        let events = events
            .iter()
            .map(serde_json::to_value)
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| Error::new(ErrorCode::NotSerializable, e.to_string()))?;
        Ok(Some(SavedEvents {
            expected: events.len() as u64,
            events,
        }))
    }

    async fn list_sessions(&self) -> Result<Vec<String>> {
        Ok(self.sessions.borrow().keys().cloned().collect())
    }

    async fn delete_session(&self, session_id: &str) -> Result<bool> {
        check_session_id(session_id)?;
        Ok(self.sessions.borrow_mut().remove(session_id).is_some())
    }
}
