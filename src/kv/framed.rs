//! Values of any size in a store with a value-size limit: a record holding a
//! JSON header, a newline and the body when it fits; otherwise the record
//! holds the header only and the body is split into `{key}#{i}` chunks,
//! written before the record, so the record's presence means every chunk was
//! written.

use serde_json::{Map, Value};

use crate::artifacts::Hasher;
use crate::error::{Error, ErrorCode, Result};
use crate::kv::{KeyValue, KvArtifactStore, KvValue};

/// No store needs more chunks than this; a header claiming more is corrupt.
const MAX_CHUNKS: u64 = 1 << 24;

/// A record as read: its header and its body (the inline body, or once
/// [`KvArtifactStore::read_framed`] has joined them, the chunks').
pub(crate) struct Record<V> {
    /// The header (with the framing fields `chunks`, `chunkBytes`, `bytes`).
    pub(crate) header: Map<String, Value>,
    /// The body: inline (empty when chunked and not yet read).
    pub(crate) body: V,
}

impl<V> Record<V> {
    /// How many chunks hold the body (0 when inline).
    pub(crate) fn chunks(&self) -> u64 {
        self.header
            .get("chunks")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }
}

/// Content to write under a key: bytes in Rust memory, or a value of the
/// store (a host's buffer, framed and hashed where it is).
pub(crate) enum Content<'a, V> {
    /// Bytes in Rust memory (a saved session's segment, an artifact a Rust
    /// processor stores).
    Slice(&'a [u8]),
    /// A value of the store.
    Value(V),
}

impl<V: KvValue> Content<'_, V> {
    /// How many bytes the content holds.
    pub(crate) fn len(&self) -> usize {
        match self {
            Content::Slice(s) => s.len(),
            Content::Value(v) => v.len(),
        }
    }

    /// The first `n` bytes (or all of them) in Rust memory.
    pub(crate) fn head(&self, n: usize) -> Vec<u8> {
        let n = n.min(self.len());
        match self {
            Content::Slice(s) => s[..n].to_vec(),
            Content::Value(v) => v.copy_range(0..n),
        }
    }

    /// The SHA-256 of the content.
    pub(crate) async fn sha256(&self, hasher: &dyn Hasher) -> Result<[u8; 32]> {
        match self {
            Content::Slice(s) => hasher.sha256(s).await,
            Content::Value(v) => v.sha256(hasher).await,
        }
    }

    /// A new value holding `head` then the content.
    fn joined(&self, head: &[u8]) -> V {
        match self {
            Content::Slice(s) => V::from_parts(&[head, s]),
            Content::Value(v) => V::joined(head, v),
        }
    }

    /// The content as a value of its own, which later changes to the
    /// caller's buffer cannot reach.
    fn snapshot(&self) -> V {
        match self {
            Content::Slice(s) => V::from_parts(&[s]),
            Content::Value(v) => v.snapshot(),
        }
    }
}

/// Content framed under a key, ready to write: the whole record (header and
/// body), or the header and the body to split into chunks. Either way its
/// bytes are the store's own copy, taken when it was framed.
pub(crate) enum Framed<V> {
    /// The record, header and body in one value.
    Inline {
        /// Header line and body.
        value: V,
        /// Where the body starts in `value`.
        body_start: usize,
    },
    /// A header line naming the chunks, and the body they split.
    Chunked {
        /// The record's value: the header line only.
        header: Vec<u8>,
        /// The body.
        body: V,
    },
}

impl<V: KvValue> Framed<V> {
    /// The framed body, sharing the framed copy where the host can.
    pub(crate) fn body(&self) -> V {
        match self {
            Framed::Inline { value, body_start } => value.range(*body_start..value.len()),
            Framed::Chunked { body, .. } => body.range(0..body.len()),
        }
    }
}

/// The key of chunk `i` of `key`.
pub(crate) fn chunk_key(key: &str, i: u64) -> String {
    format!("{key}#{i}")
}

fn corrupt(key: &str, what: &str) -> Error {
    Error::new(ErrorCode::StoreCorrupt, format!("record {key}: {what}"))
}

/// JSON from UTF-8 bytes. Every parse goes through `serde_json::from_str`:
/// one instantiation of its parser in the module instead of two.
pub(crate) fn json_from_bytes<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
) -> std::result::Result<T, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
    serde_json::from_str(text).map_err(|e| e.to_string())
}

/// Splits a stored value into its header and inline body.
pub(crate) fn parse_record<V: KvValue>(key: &str, value: V) -> Result<Record<V>> {
    let newline = value
        .position(b'\n')
        .ok_or_else(|| corrupt(key, "no header line"))?;
    let header: Value = json_from_bytes(&value.copy_range(0..newline))
        .map_err(|e| corrupt(key, &format!("header is not JSON ({e})")))?;
    let Value::Object(header) = header else {
        return Err(corrupt(key, "header is not an object"));
    };
    let field = |name: &str| header.get(name).and_then(Value::as_u64);
    let (Some(chunks), Some(chunk_bytes), Some(bytes)) =
        (field("chunks"), field("chunkBytes"), field("bytes"))
    else {
        return Err(corrupt(key, "header lacks chunks, chunkBytes or bytes"));
    };
    let consistent = if chunks == 0 {
        bytes == (value.len() - newline - 1) as u64
    } else {
        chunks <= MAX_CHUNKS && chunk_bytes > 0 && bytes.div_ceil(chunk_bytes) == chunks
    };
    if !consistent {
        return Err(corrupt(key, "sizes in the header do not add up"));
    }
    Ok(Record {
        header,
        body: value.tail(newline + 1),
    })
}

impl<K: KeyValue> KvArtifactStore<K> {
    /// The record at `key` without its chunks; `None` when absent.
    pub(crate) async fn read_record(&self, key: &str) -> Result<Option<Record<K::Value>>> {
        match self.kv_get(key).await? {
            None => Ok(None),
            Some(value) => parse_record(key, value).map(Some),
        }
    }

    /// The record at `key` with its whole body; a missing chunk is
    /// [`ErrorCode::ArtifactIncomplete`], never a shorter body.
    pub(crate) async fn read_framed(&self, key: &str) -> Result<Option<Record<K::Value>>> {
        let Some(mut record) = self.read_record(key).await? else {
            return Ok(None);
        };
        let chunks = record.chunks();
        if chunks > 0 {
            let mut parts = Vec::new();
            for i in 0..chunks {
                let chunk = self.kv_get(&chunk_key(key, i)).await?.ok_or_else(|| {
                    Error::new(
                        ErrorCode::ArtifactIncomplete,
                        format!("{key}: chunk {i} of {chunks} is missing"),
                    )
                })?;
                parts.push(chunk);
            }
            record.body = K::Value::concat(&parts);
        }
        Ok(Some(record))
    }

    /// Frames `content` under `key` with `header`, at once (no await): in
    /// one value when it fits, otherwise as a header naming chunks. The
    /// framed bytes are the store's own copy, so the caller's buffer may
    /// change once this returns.
    pub(crate) fn frame(
        &self,
        key: &str,
        mut header: Map<String, Value>,
        content: &Content<'_, K::Value>,
    ) -> Result<Framed<K::Value>> {
        let limit = self.options.chunk_bytes;
        let bytes = content.len();
        header.insert("bytes".into(), bytes.into());
        header.insert("chunkBytes".into(), limit.into());
        header.insert("chunks".into(), 0.into());
        let mut line = crate::json_text::to_json_text(&header)
            .map(String::into_bytes)
            .map_err(|e| Error::new(ErrorCode::StoreFailed, format!("{key}: header ({e})")))?;
        line.push(b'\n');
        if line.len() + bytes <= limit {
            return Ok(Framed::Inline {
                value: content.joined(&line),
                body_start: line.len(),
            });
        }
        // Too large for one value with its header: chunks, named by a
        // header line that must fit alone.
        let chunks = bytes.div_ceil(limit);
        header.insert("chunks".into(), chunks.into());
        let mut line = crate::json_text::to_json_text(&header)
            .map(String::into_bytes)
            .map_err(|e| Error::new(ErrorCode::StoreFailed, format!("{key}: header ({e})")))?;
        line.push(b'\n');
        if line.len() > limit {
            return Err(Error::new(
                ErrorCode::StoreFailed,
                format!(
                    "{key}: the record header ({} bytes) does not fit in one value of {limit} bytes",
                    line.len()
                ),
            ));
        }
        Ok(Framed::Chunked {
            header: line,
            body: content.snapshot(),
        })
    }

    /// Writes a framed record under `key`: chunks first and the record
    /// last. When a chunk's write fails, the chunks already written are
    /// removed (best effort) and the record is not written, so the value
    /// stays absent (or as it was).
    pub(crate) async fn write_frame(&self, key: &str, framed: Framed<K::Value>) -> Result<()> {
        let (header, body) = match framed {
            Framed::Inline { value, .. } => return self.kv_put(key, value).await,
            Framed::Chunked { header, body } => (header, body),
        };
        let limit = self.options.chunk_bytes;
        let chunks = body.len().div_ceil(limit);
        for i in 0..chunks {
            let chunk = body.range(i * limit..((i + 1) * limit).min(body.len()));
            if let Err(e) = self.kv_put(&chunk_key(key, i as u64), chunk).await {
                self.delete_chunks(key, i as u64).await;
                return Err(e.context(format!("writing chunk {i} of {chunks} of {key}")));
            }
        }
        self.kv_put(key, K::Value::from_parts(&[&header])).await
    }

    /// Frames and writes `content` under `key` with `header` (see
    /// [`Self::frame`] and [`Self::write_frame`]).
    pub(crate) async fn write_framed(
        &self,
        key: &str,
        header: Map<String, Value>,
        content: &Content<'_, K::Value>,
    ) -> Result<()> {
        let framed = self.frame(key, header, content)?;
        self.write_frame(key, framed).await
    }

    /// Deletes the record at `key`, then its chunks (the record goes first, so
    /// a deletion interrupted part-way never leaves a record without chunks).
    pub(crate) async fn delete_framed(&self, key: &str, chunks: u64) -> Result<()> {
        self.kv_delete(key).await?;
        for i in 0..chunks {
            self.kv_delete(&chunk_key(key, i)).await?;
        }
        Ok(())
    }

    /// Removes chunks `0..count` of `key`, ignoring failures (cleanup after a
    /// failed write; leftovers are unreachable and overwritten by a retry).
    pub(crate) async fn delete_chunks(&self, key: &str, count: u64) {
        for i in 0..count {
            let _ = self.kv_delete(&chunk_key(key, i)).await;
        }
    }
}
