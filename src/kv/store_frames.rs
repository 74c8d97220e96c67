//! A key-value artifact store reading and writing framed records (the
//! format is `framed.rs`'s): a record with its chunks, written chunks first
//! and deleted record first.

use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::kv::framed::{chunk_key, parse_record, Content, Framed, Record};
use crate::kv::{KeyValue, KvArtifactStore, KvValue};

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
        let line = header_line(key, &header)?;
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
        let line = header_line(key, &header)?;
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

/// A record's header line: its JSON text and a newline.
fn header_line(key: &str, header: &Map<String, Value>) -> Result<Vec<u8>> {
    let mut line = crate::json_text::to_json_text(header)
        .map(String::into_bytes)
        .map_err(|e| Error::new(ErrorCode::StoreFailed, format!("{key}: header ({e})")))?;
    line.push(b'\n');
    Ok(line)
}
