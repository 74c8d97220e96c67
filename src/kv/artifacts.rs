//! [`KvArtifactStore`]: content-addressed artifacts in a key-value store.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use crate::artifacts::{
    hex, sort_by_id, verify_digest, ArtifactHandle, ArtifactStore, Hasher, Sha2Hasher,
    StoreOptions, SUMMARY_HEAD_BYTES,
};
use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::kv::framed::{Content, Framed, Record};
use crate::kv::{escape_key_part, KeyValue, KvValue};
use crate::race::{race, First};
use crate::session::check_optional_session_id;

/// The default largest value written to the store: 64 KiB, Deno KV's limit,
/// so the default layout fits every common store.
pub const DEFAULT_CHUNK_BYTES: usize = 64 * 1024;
/// The smallest chunk size accepted (a record header must fit in one value).
pub const MIN_CHUNK_BYTES: usize = 1024;

/// Options of a [`KvArtifactStore`].
#[derive(Debug, Clone, PartialEq)]
pub struct KvStoreOptions {
    /// The largest value written, header included; larger contents are split
    /// into chunks. At least [`MIN_CHUNK_BYTES`].
    pub chunk_bytes: usize,
    /// Put before every key, so several stores can share one key space.
    pub prefix: String,
    /// How long one backend operation may take before it fails with
    /// [`ErrorCode::StoreTimeout`]; `None` waits forever.
    pub timeout_ms: Option<f64>,
}

impl Default for KvStoreOptions {
    fn default() -> Self {
        KvStoreOptions {
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            prefix: String::new(),
            timeout_ms: None,
        }
    }
}

/// Artifacts (and saved sessions) in a [`KeyValue`] store, chunked to the
/// store's value limit and verified on every read. See the [module
/// docs](crate::kv) for the layout.
pub struct KvArtifactStore<K> {
    kv: K,
    clock: Rc<dyn Clock>,
    pub(crate) hasher: Rc<dyn Hasher>,
    pub(crate) options: KvStoreOptions,
}

impl<K: KeyValue> KvArtifactStore<K> {
    /// A store over `kv`, stamping artifacts with `clock`. Fails with
    /// [`ErrorCode::InvalidArgument`] for a chunk size under
    /// [`MIN_CHUNK_BYTES`] or a timeout that is not a positive number.
    pub fn new(kv: K, clock: Rc<dyn Clock>, options: KvStoreOptions) -> Result<Self> {
        if options.chunk_bytes < MIN_CHUNK_BYTES {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "chunkBytes must be at least {MIN_CHUNK_BYTES} (got {})",
                    options.chunk_bytes
                ),
            ));
        }
        if let Some(t) = options.timeout_ms {
            if !(t.is_finite() && t > 0.0) {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("timeoutMs must be a positive number (got {t})"),
                ));
            }
        }
        Ok(KvArtifactStore {
            kv,
            clock,
            hasher: Rc::new(Sha2Hasher),
            options,
        })
    }

    /// The store, hashing content (artifacts and session segments) with
    /// `hasher` instead of in Rust.
    pub fn with_hasher(mut self, hasher: Rc<dyn Hasher>) -> Self {
        self.hasher = hasher;
        self
    }

    /// The underlying key-value store.
    pub fn kv(&self) -> &K {
        &self.kv
    }

    pub(crate) async fn timed<T>(
        &self,
        op: &str,
        key: &str,
        f: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        let result = match self.options.timeout_ms {
            None => f.await,
            Some(ms) => match race(f, self.clock.sleep(ms)).await {
                First::Left(r) => r,
                First::Right(()) => Err(Error::new(
                    ErrorCode::StoreTimeout,
                    format!("did not settle within {ms} ms"),
                )),
            },
        };
        result.map_err(|e| e.context(format!("{op}({key})")))
    }

    pub(crate) async fn kv_get(&self, key: &str) -> Result<Option<K::Value>> {
        self.timed("get", key, self.kv.get(key)).await
    }

    pub(crate) async fn kv_put(&self, key: &str, value: K::Value) -> Result<()> {
        self.timed("put", key, self.kv.put(key, value)).await
    }

    pub(crate) async fn kv_delete(&self, key: &str) -> Result<()> {
        self.timed("delete", key, self.kv.delete(key)).await
    }

    /// Keys under `prefix`; [`ErrorCode::StoreUnsupported`] when the store
    /// cannot list.
    pub(crate) async fn kv_list(&self, prefix: &str) -> Result<Vec<String>> {
        self.timed("list", prefix, self.kv.list(prefix))
            .await?
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::StoreUnsupported,
                    "listing needs a key-value store with list({ prefix })",
                )
            })
    }

    fn artifact_key(&self, id: &str) -> String {
        format!("{}a/{}", self.options.prefix, escape_key_part(id))
    }

    fn session_index_prefix(&self, session_id: &str) -> String {
        format!("{}as/{}/", self.options.prefix, escape_key_part(session_id))
    }

    async fn write_index(&self, session_id: &str, id: &str) -> Result<()> {
        let key = format!("{}{}", self.session_index_prefix(session_id), id);
        self.kv_put(&key, K::Value::from_parts(&[])).await
    }

    /// Stores `value` (a value of the store, e.g. the host's buffer) like
    /// [`ArtifactStore::store`], without copying it into Rust memory: it is
    /// hashed and framed where it is, and read only until then.
    pub async fn store_value(
        &self,
        value: K::Value,
        source: &str,
        options: StoreOptions,
    ) -> Result<ArtifactHandle> {
        self.store_content(Content::Value(value), source, options)
            .await
    }

    /// The first, synchronous half of [`Self::store_value`] for a caller
    /// that already has `value`'s SHA-256 (`digest`): describes and frames
    /// it now, so the caller's buffer may change as soon as this returns.
    /// [`Self::store_prepared`] writes it.
    pub fn prepare_value(
        &self,
        value: K::Value,
        digest: &[u8; 32],
        source: &str,
        options: StoreOptions,
    ) -> Result<PreparedArtifact<K::Value>> {
        self.prepare(&Content::Value(value), digest, source, options)
    }

    /// Writes an artifact [`Self::prepare_value`] framed (or adds its
    /// session to the artifact already stored under its id) and returns its
    /// handle.
    pub async fn store_prepared(
        &self,
        prepared: PreparedArtifact<K::Value>,
    ) -> Result<ArtifactHandle> {
        let PreparedArtifact { key, meta, framed } = prepared;
        let id = meta.handle.artifact_id.clone();
        let session = meta.handle.session_id.clone();
        let session = session.as_deref();
        if let Some(record) = self.read_record(&key).await? {
            let mut existing = artifact_meta(&key, &record)?;
            if let Some(s) = session {
                if !existing.sessions.iter().any(|x| x == s) {
                    existing.sessions.push(s.to_string());
                    let body = Content::Value(framed.body());
                    self.write_framed(&key, artifact_header(&existing), &body)
                        .await?;
                }
                self.write_index(s, &id).await?;
            }
            return Ok(with_session(existing.handle, session));
        }
        self.write_frame(&key, framed).await?;
        if let Some(s) = session {
            self.write_index(s, &id).await?;
        }
        Ok(meta.handle)
    }

    /// The content of `artifact_id` as a value of the store, verified, or
    /// `None` when absent: [`ArtifactStore::retrieve`] without copying it
    /// into Rust memory.
    pub async fn retrieve_value(&self, artifact_id: &str) -> Result<Option<K::Value>> {
        let key = self.artifact_key(artifact_id);
        match self.read_framed(&key).await? {
            None => Ok(None),
            Some(record) => {
                verify_digest(
                    artifact_id,
                    &record.body.sha256(self.hasher.as_ref()).await?,
                )?;
                Ok(Some(record.body))
            }
        }
    }

    async fn store_content(
        &self,
        content: Content<'_, K::Value>,
        source: &str,
        options: StoreOptions,
    ) -> Result<ArtifactHandle> {
        let digest = content.sha256(self.hasher.as_ref()).await?;
        let prepared = self.prepare(&content, &digest, source, options)?;
        drop(content);
        self.store_prepared(prepared).await
    }

    fn prepare(
        &self,
        content: &Content<'_, K::Value>,
        digest: &[u8; 32],
        source: &str,
        options: StoreOptions,
    ) -> Result<PreparedArtifact<K::Value>> {
        check_optional_session_id(options.session_id.as_deref())?;
        let id = hex(digest);
        let key = self.artifact_key(&id);
        let meta = ArtifactMeta {
            sessions: options.session_id.iter().cloned().collect(),
            handle: ArtifactHandle::describe_head(
                id,
                &content.head(SUMMARY_HEAD_BYTES),
                content.len(),
                source,
                &options,
                self.clock.now_ms(),
            ),
        };
        let framed = self.frame(&key, artifact_header(&meta), content)?;
        Ok(PreparedArtifact { key, meta, framed })
    }
}

/// An artifact described and framed by [`KvArtifactStore::prepare_value`],
/// ready for [`KvArtifactStore::store_prepared`] to write.
pub struct PreparedArtifact<V> {
    key: String,
    meta: ArtifactMeta,
    framed: Framed<V>,
}

/// The parts of an artifact record's header this store reads back.
struct ArtifactMeta {
    handle: ArtifactHandle,
    sessions: Vec<String>,
}

fn artifact_meta<V>(key: &str, record: &Record<V>) -> Result<ArtifactMeta> {
    let parsed = (|| {
        let handle: ArtifactHandle =
            serde_json::from_value(record.header.get("handle")?.clone()).ok()?;
        let sessions: Vec<String> =
            serde_json::from_value(record.header.get("sessions")?.clone()).ok()?;
        Some(ArtifactMeta { handle, sessions })
    })();
    parsed.ok_or_else(|| {
        Error::new(
            ErrorCode::StoreCorrupt,
            format!("record {key}: header lacks a valid handle or sessions"),
        )
    })
}

fn artifact_header(meta: &ArtifactMeta) -> Map<String, Value> {
    let mut header = Map::new();
    header.insert("handle".into(), json!(meta.handle));
    header.insert("sessions".into(), json!(meta.sessions));
    header
}

fn with_session(mut handle: ArtifactHandle, session_id: Option<&str>) -> ArtifactHandle {
    if let Some(s) = session_id {
        handle.session_id = Some(s.to_string());
    }
    handle
}

#[async_trait(?Send)]
impl<K: KeyValue> ArtifactStore for KvArtifactStore<K> {
    async fn store(
        &self,
        content: &[u8],
        source: &str,
        options: StoreOptions,
    ) -> Result<ArtifactHandle> {
        self.store_content(Content::Slice(content), source, options)
            .await
    }

    async fn retrieve(&self, artifact_id: &str) -> Result<Option<Vec<u8>>> {
        Ok(self
            .retrieve_value(artifact_id)
            .await?
            .map(KvValue::into_vec))
    }

    async fn exists(&self, artifact_id: &str) -> Result<bool> {
        Ok(self
            .kv_get(&self.artifact_key(artifact_id))
            .await?
            .is_some())
    }

    async fn list_handles(&self, session_id: Option<&str>) -> Result<Vec<ArtifactHandle>> {
        check_optional_session_id(session_id)?;
        let ids: Vec<String> = match session_id {
            Some(s) => {
                let prefix = self.session_index_prefix(s);
                self.kv_list(&prefix)
                    .await?
                    .into_iter()
                    .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string))
                    .collect()
            }
            None => {
                let prefix = format!("{}a/", self.options.prefix);
                self.kv_list(&prefix)
                    .await?
                    .into_iter()
                    .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string))
                    .filter(|rest| !rest.contains('#') && !rest.contains('/'))
                    .collect()
            }
        };
        let mut handles = Vec::with_capacity(ids.len());
        for id in ids {
            let key = self.artifact_key(&id);
            // An index entry whose artifact was deleted is skipped.
            if let Some(record) = self.read_record(&key).await? {
                handles.push(with_session(
                    artifact_meta(&key, &record)?.handle,
                    session_id,
                ));
            }
        }
        sort_by_id(&mut handles);
        Ok(handles)
    }

    async fn delete(&self, artifact_id: &str) -> Result<bool> {
        let key = self.artifact_key(artifact_id);
        let Some(record) = self.read_record(&key).await? else {
            return Ok(false);
        };
        let sessions = artifact_meta(&key, &record)
            .map(|m| m.sessions)
            .unwrap_or_default();
        self.delete_framed(&key, record.chunks()).await?;
        for s in sessions {
            let index = format!("{}{}", self.session_index_prefix(&s), artifact_id);
            self.kv_delete(&index).await?;
        }
        Ok(true)
    }
}
