//! [`KvArtifactStore`]: content-addressed artifacts in a key-value store.

use std::rc::Rc;

use async_trait::async_trait;
use serde_json::{json, Map, Value};

use crate::artifacts::{
    content_id_by, sort_by_id, verify_by, ArtifactHandle, ArtifactStore, Hasher, Sha2Hasher,
    StoreOptions,
};
use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::kv::framed::Record;
use crate::kv::{escape_key_part, KeyValue};
use crate::race::{race, First};

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

    async fn timed<T>(
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

    pub(crate) async fn kv_get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.timed("get", key, self.kv.get(key)).await
    }

    pub(crate) async fn kv_put(&self, key: &str, value: &[u8]) -> Result<()> {
        self.timed("put", key, self.kv.put(key, value)).await
    }

    pub(crate) async fn kv_put_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        self.timed("put", key, self.kv.put_parts(key, parts)).await
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
        self.kv_put(&key, b"").await
    }
}

/// The parts of an artifact record's header this store reads back.
struct ArtifactMeta {
    handle: ArtifactHandle,
    sessions: Vec<String>,
}

fn artifact_meta(key: &str, record: &Record) -> Result<ArtifactMeta> {
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
        let id = content_id_by(self.hasher.as_ref(), content).await?;
        let key = self.artifact_key(&id);
        let session = options.session_id.as_deref();
        if let Some(record) = self.read_record(&key).await? {
            let mut meta = artifact_meta(&key, &record)?;
            if let Some(s) = session {
                if !meta.sessions.iter().any(|x| x == s) {
                    meta.sessions.push(s.to_string());
                    self.write_framed(&key, artifact_header(&meta), content)
                        .await?;
                }
                self.write_index(s, &id).await?;
            }
            return Ok(with_session(meta.handle, session));
        }
        let meta = ArtifactMeta {
            handle: ArtifactHandle::describe(
                id.clone(),
                content,
                source,
                &options,
                self.clock.now_ms(),
            ),
            sessions: options.session_id.iter().cloned().collect(),
        };
        self.write_framed(&key, artifact_header(&meta), content)
            .await?;
        if let Some(s) = session {
            self.write_index(s, &id).await?;
        }
        Ok(meta.handle)
    }

    async fn retrieve(&self, artifact_id: &str) -> Result<Option<Vec<u8>>> {
        let key = self.artifact_key(artifact_id);
        match self.read_framed(&key).await? {
            None => Ok(None),
            Some(record) => {
                verify_by(self.hasher.as_ref(), artifact_id, &record.inline).await?;
                Ok(Some(record.inline))
            }
        }
    }

    async fn exists(&self, artifact_id: &str) -> Result<bool> {
        Ok(self
            .kv_get(&self.artifact_key(artifact_id))
            .await?
            .is_some())
    }

    async fn list_handles(&self, session_id: Option<&str>) -> Result<Vec<ArtifactHandle>> {
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
