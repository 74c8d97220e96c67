//! Saved sessions in a key-value store: a head per session naming its
//! segments (each a run of events with its SHA-256), written after the
//! segments, so the head always describes a complete, verified state.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::artifacts::content_id_by;
use crate::error::{Error, ErrorCode, Result};
use crate::kv::framed::{json_from_bytes, Content, Record};
use crate::kv::{escape_key_part, unescape_key_part, KeyValue, KvArtifactStore, KvValue};
use crate::session::{SaveReport, SavedEvents, SessionSource, SessionStore};

/// After this many appended segments the next save rewrites the session as
/// one segment, so loading never takes more than this many reads (plus chunks).
const MAX_SEGMENTS: usize = 32;

/// One run of saved events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Segment {
    start: u64,
    end: u64,
    sha256: String,
}

/// A saved session's head: what a load reads first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Head {
    session_id: String,
    generation: u64,
    event_count: u64,
    last_event_id: Option<String>,
    segments: Vec<Segment>,
}

fn corrupt(session_id: &str, what: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::StoreCorrupt,
        format!("saved session {session_id}: {what}"),
    )
}

impl<K: KeyValue> KvArtifactStore<K> {
    fn sessions_prefix(&self) -> String {
        format!("{}s/", self.options.prefix)
    }

    fn head_key(&self, session_id: &str) -> String {
        format!("{}{}", self.sessions_prefix(), escape_key_part(session_id))
    }

    /// Where a segment is written: its digest is part of the key, so a save
    /// never overwrites a segment another save (or a stale head) wrote.
    fn segment_key(&self, session_id: &str, generation: u64, seg: &Segment) -> String {
        let digest = seg.sha256.get(..16).unwrap_or(&seg.sha256);
        format!(
            "{}/{generation}/{}-{}-{digest}",
            self.head_key(session_id),
            seg.start,
            seg.end
        )
    }

    /// Where saves before write-once keys put a segment (read, never written).
    fn legacy_segment_key(&self, session_id: &str, generation: u64, seg: &Segment) -> String {
        format!(
            "{}/{generation}/{}-{}",
            self.head_key(session_id),
            seg.start,
            seg.end
        )
    }

    /// A segment's record and the key it was found under: its own key, or
    /// the legacy one.
    async fn read_segment(
        &self,
        session_id: &str,
        generation: u64,
        seg: &Segment,
    ) -> Result<Option<(String, Record<K::Value>)>> {
        for key in [
            self.segment_key(session_id, generation, seg),
            self.legacy_segment_key(session_id, generation, seg),
        ] {
            if let Some(record) = self.read_framed(&key).await? {
                return Ok(Some((key, record)));
            }
        }
        Ok(None)
    }

    async fn read_head(&self, session_id: &str) -> Result<Option<Head>> {
        let key = self.head_key(session_id);
        let Some(record) = self.read_framed(&key).await? else {
            return Ok(None);
        };
        let head: Head = json_from_bytes(&record.body.into_vec())
            .map_err(|e| corrupt(session_id, format!("head is malformed ({e})")))?;
        Ok(Some(head))
    }

    async fn delete_segments(&self, session_id: &str, head: &Head) -> Result<()> {
        for seg in &head.segments {
            for key in [
                self.segment_key(session_id, head.generation, seg),
                self.legacy_segment_key(session_id, head.generation, seg),
            ] {
                if let Some(record) = self.read_record(&key).await? {
                    self.delete_framed(&key, record.chunks()).await?;
                }
            }
        }
        Ok(())
    }
}

#[async_trait(?Send)]
impl<K: KeyValue> SessionStore for KvArtifactStore<K> {
    async fn save_session(&self, session: &dyn SessionSource) -> Result<SaveReport> {
        let session_id = session.session_id()?;
        // A corrupt head is replaced by a full rewrite; other failures
        // (an unreachable store, a timeout) fail the save.
        let old = match self.read_head(&session_id).await {
            Ok(head) => head,
            Err(e) if e.code() == ErrorCode::StoreCorrupt => None,
            Err(e) => return Err(e),
        };

        // Read the session in one step: no await until it is serialised.
        let (mut head, segment, body, rewritten) = {
            let count = session.event_count()? as u64;
            let last_event_id = match count {
                0 => None,
                n => Some(session.event_id(n as usize - 1)?),
            };
            let appendable = match old.as_ref() {
                Some(h) if h.event_count <= count && h.segments.len() < MAX_SEGMENTS => {
                    let extends = h.event_count == 0
                        || h.last_event_id.as_deref()
                            == Some(session.event_id(h.event_count as usize - 1)?.as_str());
                    extends.then_some(h)
                }
                _ => None,
            };
            let (head, start) = match appendable {
                Some(h) if h.event_count == count => {
                    return Ok(SaveReport {
                        events_written: 0,
                        rewritten: false,
                    })
                }
                Some(h) => (h.clone(), h.event_count),
                None => (
                    Head {
                        session_id: session_id.clone(),
                        generation: old.as_ref().map_or(0, |h| h.generation + 1),
                        event_count: 0,
                        last_event_id: None,
                        segments: Vec::new(),
                    },
                    0,
                ),
            };
            let body = crate::json_text::to_json_text(&session.events_from(start as usize)?)
                .map(String::into_bytes)
                .map_err(|e| {
                    Error::new(ErrorCode::NotSerializable, format!("session events ({e})"))
                })?;
            // Hashed below, once nothing is borrowed.
            let segment = Segment {
                start,
                end: count,
                sha256: String::new(),
            };
            let mut head = head;
            head.event_count = count;
            head.last_event_id = last_event_id;
            (head, segment, body, appendable.is_none())
        };

        let mut segment = segment;
        segment.sha256 = content_id_by(self.hasher.as_ref(), &body).await?;
        let key = self.segment_key(&session_id, head.generation, &segment);
        self.write_framed(&key, Map::new(), &Content::Slice(&body))
            .await?;
        // Another writer may have saved this session since its head was
        // read: then this save is a conflict, not a silent merge.
        let current = match self.read_head(&session_id).await {
            Ok(head) => head,
            Err(e) if e.code() == ErrorCode::StoreCorrupt => None,
            Err(e) => return Err(e),
        };
        if current != old {
            if let Some(record) = self.read_record(&key).await.ok().flatten() {
                let _ = self.delete_framed(&key, record.chunks()).await;
            }
            return Err(Error::new(
                ErrorCode::StoreConflict,
                format!(
                    "saved session {session_id} was changed by another save while this one ran; \
                     load it again (or save under another id)"
                ),
            ));
        }
        let written = segment.end - segment.start;
        head.segments.push(segment);
        let head_body = crate::json_text::to_json_text(&head)
            .map(String::into_bytes)
            .map_err(|e| Error::new(ErrorCode::StoreFailed, format!("session head ({e})")))?;
        self.write_framed(
            &self.head_key(&session_id),
            Map::new(),
            &Content::Slice(&head_body),
        )
        .await?;
        if rewritten {
            if let Some(old) = old {
                // The new head is in place; the old generation is garbage.
                let _ = self.delete_segments(&session_id, &old).await;
            }
        }
        Ok(SaveReport {
            events_written: written,
            rewritten,
        })
    }

    async fn load_events(&self, session_id: &str) -> Result<Option<SavedEvents>> {
        let Some(head) = self.read_head(session_id).await? else {
            return Ok(None);
        };
        let mut raw: Vec<Value> = Vec::new();
        for seg in &head.segments {
            let (key, record) = self
                .read_segment(session_id, head.generation, seg)
                .await
                .map_err(|e| corrupt(session_id, e.message()))?
                .ok_or_else(|| {
                    let key = self.segment_key(session_id, head.generation, seg);
                    corrupt(session_id, format!("segment {key} is missing"))
                })?;
            let body = record.body.into_vec();
            if content_id_by(self.hasher.as_ref(), &body).await? != seg.sha256 {
                return Err(corrupt(
                    session_id,
                    format!("segment {key} does not match its digest"),
                ));
            }
            let events: Vec<Value> = json_from_bytes(&body)
                .map_err(|e| corrupt(session_id, format!("segment {key} ({e})")))?;
            if events.len() as u64 != seg.end - seg.start {
                return Err(corrupt(
                    session_id,
                    format!("segment {key} has the wrong length"),
                ));
            }
            raw.extend(events);
        }
        Ok(Some(SavedEvents {
            events: raw,
            expected: head.event_count,
        }))
    }

    async fn list_sessions(&self) -> Result<Vec<String>> {
        let prefix = self.sessions_prefix();
        let mut ids: Vec<String> = self
            .kv_list(&prefix)
            .await?
            .iter()
            .filter_map(|k| k.strip_prefix(&prefix))
            .filter(|rest| !rest.contains('/') && !rest.contains('#'))
            .filter_map(unescape_key_part)
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    async fn delete_session(&self, session_id: &str) -> Result<bool> {
        let key = self.head_key(session_id);
        let Some(record) = self.read_record(&key).await? else {
            return Ok(false);
        };
        let head = self.read_head(session_id).await.ok().flatten();
        // The head goes first: from then on the session is gone, whatever
        // happens to the segment deletions that follow.
        self.delete_framed(&key, record.chunks()).await?;
        if let Some(head) = head {
            self.delete_segments(session_id, &head).await?;
        }
        // Segments orphaned by interrupted saves, when the store can list.
        if let Ok(keys) = self.kv_list(&format!("{key}/")).await {
            for k in keys {
                self.kv_delete(&k).await?;
            }
        }
        Ok(true)
    }
}
