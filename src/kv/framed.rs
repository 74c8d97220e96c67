//! Values of any size in a store with a value-size limit: a record holding a
//! JSON header, a newline and the body when it fits; otherwise the record
//! holds the header only and the body is split into `{key}#{i}` chunks,
//! written before the record, so the record's presence means every chunk was
//! written.

use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::kv::{KeyValue, KvArtifactStore};

/// No store needs more chunks than this; a header claiming more is corrupt.
const MAX_CHUNKS: u64 = 1 << 24;
/// Initial capacity cap, so a corrupt size cannot reserve gigabytes up front.
const MAX_PREALLOCATION: u64 = 64 << 20;

/// A record as read: its header and its inline body (empty when chunked).
pub(crate) struct Record {
    /// The header (with the framing fields `chunks`, `chunkBytes`, `bytes`).
    pub(crate) header: Map<String, Value>,
    /// The body when it is inline.
    pub(crate) inline: Vec<u8>,
}

impl Record {
    /// How many chunks hold the body (0 when inline).
    pub(crate) fn chunks(&self) -> u64 {
        self.header
            .get("chunks")
            .and_then(Value::as_u64)
            .unwrap_or(0)
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
pub(crate) fn parse_record(key: &str, value: Vec<u8>) -> Result<Record> {
    let newline = value
        .iter()
        .position(|b| *b == b'\n')
        .ok_or_else(|| corrupt(key, "no header line"))?;
    let header: Value = json_from_bytes(&value[..newline])
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
    let mut inline = value;
    inline.drain(..=newline);
    Ok(Record { header, inline })
}

impl<K: KeyValue> KvArtifactStore<K> {
    /// The record at `key` without its chunks; `None` when absent.
    pub(crate) async fn read_record(&self, key: &str) -> Result<Option<Record>> {
        match self.kv_get(key).await? {
            None => Ok(None),
            Some(value) => parse_record(key, value).map(Some),
        }
    }

    /// The record at `key` with its whole body; a missing chunk is
    /// [`ErrorCode::ArtifactIncomplete`], never a shorter body.
    pub(crate) async fn read_framed(&self, key: &str) -> Result<Option<Record>> {
        let Some(mut record) = self.read_record(key).await? else {
            return Ok(None);
        };
        let chunks = record.chunks();
        if chunks > 0 {
            let bytes = record
                .header
                .get("bytes")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let mut body = Vec::with_capacity(bytes.min(MAX_PREALLOCATION) as usize);
            for i in 0..chunks {
                let chunk = self.kv_get(&chunk_key(key, i)).await?.ok_or_else(|| {
                    Error::new(
                        ErrorCode::ArtifactIncomplete,
                        format!("{key}: chunk {i} of {chunks} is missing"),
                    )
                })?;
                body.extend_from_slice(&chunk);
            }
            record.inline = body;
        }
        Ok(Some(record))
    }

    /// Writes `body` under `key` with `header`: inline when it fits in one
    /// value, otherwise chunks first and the record last. When a chunk's
    /// write fails, the chunks already written are removed (best effort) and
    /// the record is not written, so the value stays absent (or as it was).
    pub(crate) async fn write_framed(
        &self,
        key: &str,
        mut header: Map<String, Value>,
        body: &[u8],
    ) -> Result<()> {
        let limit = self.options.chunk_bytes;
        header.insert("bytes".into(), body.len().into());
        header.insert("chunkBytes".into(), limit.into());
        header.insert("chunks".into(), 0.into());
        let inline_header = crate::json_text::to_json_text(&header)
            .map(String::into_bytes)
            .map_err(|e| Error::new(ErrorCode::StoreFailed, format!("{key}: header ({e})")))?;
        if inline_header.len() + 1 + body.len() <= limit {
            return self.kv_put_parts(key, &[&inline_header, b"\n", body]).await;
        }
        let chunks = body.len().div_ceil(limit);
        header.insert("chunks".into(), chunks.into());
        let mut value = crate::json_text::to_json_text(&header)
            .map(String::into_bytes)
            .map_err(|e| Error::new(ErrorCode::StoreFailed, format!("{key}: header ({e})")))?;
        value.push(b'\n');
        if value.len() > limit {
            return Err(Error::new(
                ErrorCode::StoreFailed,
                format!(
                    "{key}: the record header ({} bytes) does not fit in one value of {limit} bytes",
                    value.len()
                ),
            ));
        }
        for (i, chunk) in body.chunks(limit).enumerate() {
            if let Err(e) = self.kv_put(&chunk_key(key, i as u64), chunk).await {
                self.delete_chunks(key, i as u64).await;
                return Err(e.context(format!("writing chunk {i} of {chunks} of {key}")));
            }
        }
        self.kv_put(key, &value).await
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
