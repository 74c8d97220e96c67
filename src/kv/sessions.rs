//! Saved sessions in a key-value store: a head per session naming its
//! segments (each a run of events with its SHA-256), written after the
//! segments, so the head always describes a complete, verified state.
//!
//! The head (version 3) may hold the lease of a sync that lost repeatedly
//! (see [`crate::session::lease`]): its holder and a token naming the key
//! `{head}/lease/{token}`, written with a TTL by the store's own clock
//! ([`KeyValue::put_expiring`]) before the head names it. While that key
//! lives, other saves write nothing; once it expires, the lease is void. A
//! store without expiring keys keeps no lease. A head without a version is a
//! version 2 head, read as it is; one of a newer version is `STORE_VERSION`.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::artifacts::content_id_by;
use crate::error::{Error, ErrorCode, Result};
use crate::kv::framed::{json_from_bytes, parse_record, Content, Framed, Record};
use crate::kv::value::same_value;
use crate::kv::{escape_key_part, unescape_key_part, KeyValue, KvArtifactStore, KvValue};
use crate::session::check_session_id;
use crate::session::lease::{check_store_version, STORE_VERSION};
use crate::session::{plan_save, SavePlan, SaveReport, SavedEvents, SessionSource, SessionStore};
use crate::session::{LeaseTake, SaveTry};

/// After this many appended segments the next save rewrites the session as
/// one segment, so loading never takes more than this many reads (plus chunks).
const MAX_SEGMENTS: usize = 32;

/// How many times a load reads a head again when its segments changed
/// under it (another writer compacted the session meanwhile).
const LOAD_ATTEMPTS: usize = 8;

/// A head as read: its raw value and what it says.
struct StoredHead<V> {
    raw: V,
    parsed: Result<Head>,
}

/// One run of saved events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Segment {
    start: u64,
    end: u64,
    sha256: String,
}

/// A saved session's head: what a load reads first. The session's id is
/// its key's (heads written before held it too: it is ignored), so that a
/// head's size does not grow with the id's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Head {
    generation: u64,
    event_count: u64,
    last_event_id: Option<String>,
    segments: Vec<Segment>,
    /// The head's version: absent in version 2 heads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<u32>,
    /// A sync's lease on the session's next save.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lease: Option<HeadLease>,
}

/// A lease held in a head: its holder and the token of its expiring key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct HeadLease {
    holder: String,
    token: String,
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

    /// The head of `session_id` as stored (the raw value a conditional
    /// write compares against) and parsed; a head that cannot be parsed is
    /// `Err` beside its raw value.
    async fn read_head(&self, session_id: &str) -> Result<Option<StoredHead<K::Value>>> {
        let key = self.head_key(session_id);
        let Some(raw) = self.kv_get(&key).await? else {
            return Ok(None);
        };
        let parsed = self.parse_head(session_id, &key, &raw).await;
        if let Ok(head) = &parsed {
            // Never replaced as unreadable: a newer version's head.
            check_store_version(
                head.version.unwrap_or(2),
                STORE_VERSION,
                &format!("the head of saved session {session_id}"),
            )?;
        }
        Ok(Some(StoredHead { raw, parsed }))
    }

    async fn parse_head(&self, session_id: &str, key: &str, raw: &K::Value) -> Result<Head> {
        let record = parse_record(key, raw.range(0..raw.len()))
            .map_err(|e| corrupt(session_id, e.message()))?;
        let body = if record.chunks() > 0 {
            // A head written by a version that chunked large heads.
            self.read_framed(key)
                .await?
                .ok_or_else(|| corrupt(session_id, "head vanished while read"))?
                .body
        } else {
            record.body
        };
        json_from_bytes(&body.into_vec())
            .map_err(|e| corrupt(session_id, format!("head is malformed ({e})")))
    }

    /// The expiring key of a lease whose token is `token`.
    fn lease_key(&self, session_id: &str, token: &str) -> String {
        format!(
            "{}/lease/{}",
            self.head_key(session_id),
            escape_key_part(token)
        )
    }

    /// Whether `head` holds a live lease of another than `writer`.
    async fn leased_against(
        &self,
        session_id: &str,
        head: &Head,
        writer: Option<&str>,
    ) -> Result<bool> {
        match &head.lease {
            Some(lease) if Some(lease.holder.as_str()) != writer => {
                self.kv()
                    .is_live(&self.lease_key(session_id, &lease.token))
                    .await
            }
            _ => Ok(false),
        }
    }

    /// Removes the expiring key of the lease `head` held (it ended).
    async fn drop_lease_key(&self, session_id: &str, head: Option<&Head>) {
        if let Some(lease) = head.and_then(|h| h.lease.as_ref()) {
            let _ = self
                .kv_delete(&self.lease_key(session_id, &lease.token))
                .await;
        }
    }

    /// `head` framed as one value, or `None` when it does not fit in one.
    fn frame_head(&self, key: &str, head: &Head) -> Result<Option<K::Value>> {
        let body = crate::json_text::to_json_text(head)
            .map(String::into_bytes)
            .map_err(|e| Error::new(ErrorCode::StoreFailed, format!("session head ({e})")))?;
        Ok(match self.frame(key, Map::new(), &Content::Slice(&body))? {
            Framed::Inline { value, .. } => Some(value),
            Framed::Chunked { .. } => None,
        })
    }

    /// Moves the head at `key` from `expected` to `new`: atomically where the
    /// store has a conditional write; otherwise (a single-writer store) by
    /// checking it, writing it and reading it back. `false` when another
    /// writer moved it first.
    async fn move_head(
        &self,
        key: &str,
        new: K::Value,
        expected: Option<&K::Value>,
    ) -> Result<bool> {
        if self.kv().has_put_if() {
            return self
                .timed("putIf", key, self.kv().put_if(key, new, expected))
                .await;
        }
        let current = self.kv_get(key).await?;
        if !same_value(current.as_ref(), expected) {
            return Ok(false);
        }
        let written = new.snapshot();
        self.kv_put(key, new).await?;
        Ok(same_value(self.kv_get(key).await?.as_ref(), Some(&written)))
    }

    /// The events of `head`'s segments from the first that holds position
    /// `from` on, each verified against its digest, and the position of the
    /// first event read.
    async fn read_segments(
        &self,
        session_id: &str,
        head: &Head,
        from: u64,
    ) -> Result<(u64, Vec<Value>)> {
        let first = head
            .segments
            .iter()
            .position(|seg| seg.end > from)
            .unwrap_or(head.segments.len());
        let offset = head
            .segments
            .get(first)
            .map_or(head.event_count, |s| s.start);
        let mut raw: Vec<Value> = Vec::new();
        for seg in &head.segments[first..] {
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
        Ok((offset, raw))
    }

    /// The saved log of `session_id` from the segment holding position
    /// `from` on: its head's event count, the position of the first event
    /// read, and the events. A segment missing or replaced under a head
    /// another writer has moved since is a head read too early: it is read
    /// again.
    async fn read_log(
        &self,
        session_id: &str,
        from: u64,
    ) -> Result<Option<(u64, u64, Vec<Value>)>> {
        let mut attempts = 0;
        loop {
            let Some(stored) = self.read_head(session_id).await? else {
                return Ok(None);
            };
            let head = stored.parsed?;
            match self.read_segments(session_id, &head, from).await {
                Ok((offset, events)) => return Ok(Some((head.event_count, offset, events))),
                Err(e) => {
                    attempts += 1;
                    let now = self.kv_get(&self.head_key(session_id)).await?;
                    if attempts >= LOAD_ATTEMPTS || same_value(now.as_ref(), Some(&stored.raw)) {
                        return Err(e);
                    }
                }
            }
        }
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

    /// A save of `session` by `writer` (a sync's) or by a plain save
    /// (`None`): it respects another writer's live lease and ends its own.
    async fn save_as(&self, session: &dyn SessionSource, writer: Option<&str>) -> Result<SaveTry> {
        let session_id = session.session_id()?;
        check_session_id(&session_id)?;
        let key = self.head_key(&session_id);
        let stored = self.read_head(&session_id).await?;
        // A head that cannot be read is replaced, conditionally on its bytes.
        let old = stored.as_ref().and_then(|h| h.parsed.as_ref().ok());
        if let Some(h) = old {
            if self.leased_against(&session_id, h, writer).await? {
                return Ok(SaveTry::Leased { wait_ms: None });
            }
        }

        // Read the session in one step: no await until it is serialised.
        let (head, segment, body, compacting) = {
            let count = session.event_count()? as u64;
            let plan = plan_save(
                old.map(|h| (h.event_count, h.last_event_id.as_deref())),
                session,
            )?;
            let from = match plan {
                SavePlan::Stale => return Ok(SaveTry::Lost),
                SavePlan::Append { from } if from as u64 == count => {
                    session.note_saved(count as usize);
                    return Ok(SaveTry::Saved(SaveReport {
                        events_written: 0,
                        rewritten: false,
                    }));
                }
                SavePlan::Append { from } => Some(from as u64),
                SavePlan::First => None,
            };
            let last_event_id = match count {
                0 => None,
                n => Some(session.event_id(n as usize - 1)?),
            };
            let generation = old.map_or(0, |h| h.generation + 1);
            let fresh = Head {
                generation,
                event_count: count,
                last_event_id,
                segments: Vec::new(),
                version: Some(STORE_VERSION),
                lease: None,
            };
            // Appended while the head stays small (and fits in one value);
            // otherwise the whole log as one segment of a new generation.
            let appended = match (from, old) {
                (Some(from), Some(h)) if h.segments.len() < MAX_SEGMENTS => {
                    let mut head = h.clone();
                    head.version = Some(STORE_VERSION);
                    head.lease = None;
                    head.event_count = fresh.event_count;
                    head.last_event_id = fresh.last_event_id.clone();
                    let mut probe = head.clone();
                    probe.segments.push(Segment {
                        start: from,
                        end: count,
                        sha256: "0".repeat(64),
                    });
                    matches!(self.frame_head(&key, &probe), Ok(Some(_))).then_some((head, from))
                }
                _ => None,
            };
            let compacting = old.is_some() && appended.is_none();
            let (head, start) = appended.unwrap_or((fresh, 0));
            let body = crate::json_text::to_json_text(&session.events_from(start as usize)?)
                .map(String::into_bytes)
                .map_err(|e| {
                    Error::new(ErrorCode::NotSerializable, format!("session events ({e})"))
                })?;
            let segment = Segment {
                start,
                end: count,
                sha256: String::new(), // hashed below, once nothing is borrowed
            };
            (head, segment, body, compacting || from.is_none())
        };
        let mut segment = segment;
        segment.sha256 = content_id_by(self.hasher.as_ref(), &body).await?;
        let mut head = head;
        head.segments.push(segment.clone());
        let new_head = match self.frame_head(&key, &head)? {
            Some(value) => value,
            None => {
                return Err(Error::new(
                    ErrorCode::StoreFailed,
                    format!(
                        "the head of session {session_id} does not fit in one value of {} bytes \
                         (its id or last event id is too long for chunkBytes)",
                        self.options.chunk_bytes
                    ),
                ))
            }
        };
        let segment_key = self.segment_key(&session_id, head.generation, &segment);
        self.write_framed(&segment_key, Map::new(), &Content::Slice(&body))
            .await?;
        let moved = self
            .move_head(&key, new_head, stored.as_ref().map(|h| &h.raw))
            .await?;
        if !moved {
            // Another writer's head won. Its segments are keyed by their
            // digests, so this one is garbage unless that head names it
            // (the same events, saved by both).
            let theirs = self.read_head(&session_id).await.ok().flatten();
            let named = theirs
                .as_ref()
                .and_then(|h| h.parsed.as_ref().ok())
                .is_some_and(|h| {
                    h.segments
                        .iter()
                        .any(|s| self.segment_key(&session_id, h.generation, s) == segment_key)
                });
            if !named {
                if let Some(record) = self.read_record(&segment_key).await.ok().flatten() {
                    let _ = self.delete_framed(&segment_key, record.chunks()).await;
                }
            }
            if let Some(h) = theirs.as_ref().and_then(|h| h.parsed.as_ref().ok()) {
                if self.leased_against(&session_id, h, writer).await? {
                    return Ok(SaveTry::Leased { wait_ms: None });
                }
            }
            return Ok(SaveTry::Lost);
        }
        self.drop_lease_key(&session_id, old).await;
        if compacting {
            if let Some(old) = old {
                // The new head is in place; the old generation is garbage.
                let _ = self.delete_segments(&session_id, old).await;
            }
        }
        session.note_saved(segment.end as usize);
        Ok(SaveTry::Saved(SaveReport {
            events_written: segment.end - segment.start,
            rewritten: compacting,
        }))
    }
}

#[async_trait(?Send)]
impl<K: KeyValue> SessionStore for KvArtifactStore<K> {
    async fn save_session(&self, session: &dyn SessionSource) -> Result<SaveReport> {
        let id = session.session_id()?;
        self.save_as(session, None).await?.into_saved(&id)
    }

    async fn try_save(&self, session: &dyn SessionSource, writer: &str) -> Result<SaveTry> {
        self.save_as(session, Some(writer)).await
    }

    async fn take_lease(&self, session_id: &str, writer: &str, ttl_ms: u64) -> Result<LeaseTake> {
        check_session_id(session_id)?;
        if !self.kv().has_put_if() || !self.kv().has_expiry() {
            return Ok(LeaseTake::Unavailable);
        }
        let Some(stored) = self.read_head(session_id).await? else {
            return Ok(LeaseTake::Unavailable);
        };
        let Ok(old) = &stored.parsed else {
            return Ok(LeaseTake::Unavailable);
        };
        if self.leased_against(session_id, old, Some(writer)).await? {
            return Ok(LeaseTake::Held { wait_ms: None });
        }
        // A token of this writer and this head: a lease taken again from
        // another head has another key.
        let mut seed = writer.as_bytes().to_vec();
        seed.extend(stored.raw.snapshot().into_vec());
        let token = content_id_by(self.hasher.as_ref(), &seed).await?;
        let token = token.get(..24).unwrap_or(&token).to_string();
        let lease_key = self.lease_key(session_id, &token);
        self.kv()
            .put_expiring(&lease_key, K::Value::from_parts(&[b"1"]), ttl_ms)
            .await?;
        let mut head = old.clone();
        head.version = Some(STORE_VERSION);
        head.lease = Some(HeadLease {
            holder: writer.to_string(),
            token,
        });
        let key = self.head_key(session_id);
        let Some(new_head) = self.frame_head(&key, &head)? else {
            let _ = self.kv_delete(&lease_key).await;
            return Ok(LeaseTake::Unavailable);
        };
        if !self.move_head(&key, new_head, Some(&stored.raw)).await? {
            let _ = self.kv_delete(&lease_key).await;
            return Ok(LeaseTake::Lost);
        }
        // The lease the head held before (expired, or this writer's) ended.
        if old
            .lease
            .as_ref()
            .is_some_and(|l| l.token != head.lease.as_ref().map_or("", |n| n.token.as_str()))
        {
            self.drop_lease_key(session_id, Some(old)).await;
        }
        Ok(LeaseTake::Taken)
    }

    async fn load_events(&self, session_id: &str) -> Result<Option<SavedEvents>> {
        check_session_id(session_id)?;
        Ok(self
            .read_log(session_id, 0)
            .await?
            .map(|(expected, _, events)| SavedEvents { events, expected }))
    }

    /// The segments from the one holding position `from` on.
    async fn read_events_from(
        &self,
        session_id: &str,
        from: u64,
    ) -> Result<Option<(u64, u64, Vec<Value>)>> {
        check_session_id(session_id)?;
        self.read_log(session_id, from).await
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
        context_compiler_text::order::sort_stable_by(&mut ids, |a, b| a.cmp(b));
        Ok(ids)
    }

    async fn delete_session(&self, session_id: &str) -> Result<bool> {
        check_session_id(session_id)?;
        let key = self.head_key(session_id);
        let Some(record) = self.read_record(&key).await? else {
            return Ok(false);
        };
        let head = self
            .read_head(session_id)
            .await
            .ok()
            .flatten()
            .and_then(|h| h.parsed.ok());
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
