//! [`KvValue`]: the bytes a [`KeyValue`](crate::kv::KeyValue) store hands
//! over. Natively they are a `Vec<u8>`; a host whose values live in its own
//! memory (a JS `Uint8Array`) implements the trait on its buffers, so the
//! store frames, hashes and returns content without copying it into Rust
//! memory and back.

use std::ops::Range;

use async_trait::async_trait;

use crate::artifacts::Hasher;
use crate::error::Result;

/// A value of a key-value store: what `get` returns and `put` takes.
#[async_trait(?Send)]
pub trait KvValue: Sized {
    /// A new value holding `parts`, copied from Rust memory one after another.
    fn from_parts(parts: &[&[u8]]) -> Self;
    /// A new value holding `head` followed by `body` (a record's header and
    /// its inline body).
    fn joined(head: &[u8], body: &Self) -> Self;
    /// A new value holding `parts` one after another (a body's chunks).
    fn concat(parts: &[Self]) -> Self;
    /// A copy the caller alone holds, so later changes to `self` do not reach it.
    fn snapshot(&self) -> Self;
    /// How many bytes the value holds.
    fn len(&self) -> usize;
    /// Whether the value holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Where `byte` first occurs.
    fn position(&self, byte: u8) -> Option<usize>;
    /// The bytes in `range` copied into Rust memory (a header, a summary's
    /// head). `range` lies within the value.
    fn copy_range(&self, range: Range<usize>) -> Vec<u8>;
    /// The bytes in `range`, sharing this value's memory where the host can
    /// (a chunk of a body being written). `range` lies within the value.
    fn range(&self, range: Range<usize>) -> Self;
    /// The bytes from `start` on (a record's body after its header line),
    /// without a copy where the host can. `start` is at most the length.
    fn tail(self, start: usize) -> Self;
    /// The bytes in Rust memory (moved for a `Vec`, copied for host memory).
    fn into_vec(self) -> Vec<u8>;
    /// The SHA-256 of the bytes: by `hasher`, or by the host's own crypto
    /// where the bytes are in host memory (the same digest either way).
    async fn sha256(&self, hasher: &dyn Hasher) -> Result<[u8; 32]>;
}

/// Whether two values (or absences) hold the same bytes.
pub(crate) fn same_value<V: KvValue>(a: Option<&V>, b: Option<&V>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => {
            a.len() == b.len() && a.copy_range(0..a.len()) == b.copy_range(0..b.len())
        }
        _ => false,
    }
}

#[async_trait(?Send)]
impl KvValue for Vec<u8> {
    fn from_parts(parts: &[&[u8]]) -> Self {
        parts.concat()
    }
    fn joined(head: &[u8], body: &Self) -> Self {
        [head, body.as_slice()].concat()
    }
    fn concat(parts: &[Self]) -> Self {
        parts.concat()
    }
    fn snapshot(&self) -> Self {
        self.clone()
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn position(&self, byte: u8) -> Option<usize> {
        self.iter().position(|b| *b == byte)
    }
    fn copy_range(&self, range: Range<usize>) -> Vec<u8> {
        self[range].to_vec()
    }
    fn range(&self, range: Range<usize>) -> Self {
        self[range].to_vec()
    }
    fn tail(mut self, start: usize) -> Self {
        self.drain(..start);
        self
    }
    fn into_vec(self) -> Vec<u8> {
        self
    }
    async fn sha256(&self, hasher: &dyn Hasher) -> Result<[u8; 32]> {
        hasher.sha256(self).await
    }
}
