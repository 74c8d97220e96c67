//! Values of any size in a store with a value-size limit: a record holding a
//! JSON header, a newline and the body when it fits; otherwise the record
//! holds the header only and the body is split into `{key}#{i}` chunks,
//! written before the record, so the record's presence means every chunk was
//! written.

use serde_json::{Map, Value};

use crate::artifacts::Hasher;
use crate::error::{Error, ErrorCode, Result};
use crate::kv::KvValue;

/// No store needs more chunks than this; a header claiming more is corrupt.
const MAX_CHUNKS: u64 = 1 << 24;

/// A record as read: its header and its body (the inline body, or once
/// `KvArtifactStore::read_framed` has joined them, the chunks').
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
    pub(crate) fn joined(&self, head: &[u8]) -> V {
        match self {
            Content::Slice(s) => V::from_parts(&[head, s]),
            Content::Value(v) => V::joined(head, v),
        }
    }

    /// The content as a value of its own, which later changes to the
    /// caller's buffer cannot reach.
    pub(crate) fn snapshot(&self) -> V {
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
