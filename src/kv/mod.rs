//! Artifacts and sessions kept in any key-value store.
//!
//! Hosts hand in a store with `get` / `put` / `delete` and optionally `list`
//! (a JS `Map`, Cloudflare Workers KV, Deno KV, Redis, the wasmtime host's
//! KV...). [`KvArtifactStore`] lays artifacts and sessions out in it:
//!
//! - `{prefix}a/{id}`: an artifact record (a JSON header, a newline, then the
//!   content when it fits in one value); `{prefix}a/{id}#{i}`: its chunks
//!   when it does not.
//! - `{prefix}as/{session}/{id}`: marks `id` as stored by `session`, so
//!   artifacts can be listed by session.
//! - `{prefix}s/{session}`: a saved session's head (its segments and their
//!   digests) in one value, written last, so a save interrupted part-way
//!   leaves the previous head, and so the previous complete session, in
//!   place. It moves by [`KeyValue::put_if`] from the head the save read, so
//!   of two writers saving from one head one succeeds and the other fails
//!   whole with [`ErrorCode::StoreConflict`](crate::error::ErrorCode::StoreConflict).
//! - `{prefix}s/{session}/{generation}/{start}-{end}`: the segment holding
//!   events `start..end`, chunked like artifacts.
//! - `{prefix}s/{session}/lease/{token}`: the lease a sync that lost
//!   repeatedly holds, written with a TTL ([`KeyValue::put_expiring`]) and
//!   named by the head (see `sessions.rs`).
//!
//! Every read is verified: an artifact whose content does not hash to its id
//! is [`ErrorCode::ArtifactIntegrity`](crate::error::ErrorCode::ArtifactIntegrity),
//! a missing chunk is [`ErrorCode::ArtifactIncomplete`](crate::error::ErrorCode::ArtifactIncomplete).

mod artifacts;
mod framed;
mod memory;
mod sessions;
mod store_frames;
pub(crate) mod value;

use async_trait::async_trait;

use crate::error::Result;

pub use artifacts::{
    KvArtifactStore, KvStoreOptions, PreparedArtifact, DEFAULT_CHUNK_BYTES, MIN_CHUNK_BYTES,
};
pub use memory::MemoryKv;
pub use value::KvValue;

/// An async key-value store of byte values (single-threaded, like every
/// WebAssembly host).
#[async_trait(?Send)]
pub trait KeyValue {
    /// The values this store holds: `Vec<u8>`, or the host's own buffers.
    type Value: KvValue;
    /// The value of `key`, or `None` when it is absent.
    async fn get(&self, key: &str) -> Result<Option<Self::Value>>;
    /// Sets `key` to `value`.
    async fn put(&self, key: &str, value: Self::Value) -> Result<()>;
    /// Removes `key` (absent keys are not an error).
    async fn delete(&self, key: &str) -> Result<()>;
    /// Every key starting with `prefix`, or `None` when this store cannot list.
    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>>;
    /// Whether this store has an atomic [`KeyValue::put_if`]. Saved
    /// sessions move their head with it, so several writers of one session
    /// never lose an event; a store without it is single-writer (see
    /// [`KvArtifactStore`]).
    fn has_put_if(&self) -> bool {
        false
    }
    /// Sets `key` to `value` only if it holds exactly the bytes of
    /// `expected` (is absent, for `None`), in one atomic step: `Ok(true)`
    /// when written, `Ok(false)` when the key held something else and
    /// nothing was written. A store without it (the default) fails with
    /// [`ErrorCode::StoreUnsupported`](crate::error::ErrorCode::StoreUnsupported).
    async fn put_if(
        &self,
        key: &str,
        value: Self::Value,
        expected: Option<&Self::Value>,
    ) -> Result<bool> {
        let _ = (value, expected);
        Err(crate::error::Error::new(
            crate::error::ErrorCode::StoreUnsupported,
            format!("put_if({key}): this key-value store has no conditional write"),
        ))
    }
    /// Whether this store keeps keys that expire by its own clock
    /// ([`KeyValue::put_expiring`]): a session's lease lives in such a key
    /// (see [`crate::session::lease`]); without it a store keeps no lease.
    fn has_expiry(&self) -> bool {
        false
    }
    /// Sets `key` to `value` for `ttl_ms` by the store's own clock (Redis's
    /// `PX`, a KV's TTL, a file's modification time): after that it is
    /// absent ([`KeyValue::is_live`]). Without it (the default):
    /// `STORE_UNSUPPORTED`.
    async fn put_expiring(&self, key: &str, value: Self::Value, ttl_ms: u64) -> Result<()> {
        let _ = (value, ttl_ms);
        Err(crate::error::Error::new(
            crate::error::ErrorCode::StoreUnsupported,
            format!("put_expiring({key}): this key-value store keeps no expiring keys"),
        ))
    }
    /// Whether `key`, written by [`KeyValue::put_expiring`], is there and
    /// has not expired (by default: whether [`KeyValue::get`] finds it).
    async fn is_live(&self, key: &str) -> Result<bool> {
        Ok(self.get(key).await?.is_some())
    }
}

/// A boxed store is a store: hosts that hold several kinds of store behind
/// one type (the JS binding's KV and filesystem stores) share one copy of
/// the store's code.
#[async_trait(?Send)]
impl<K: KeyValue + ?Sized> KeyValue for Box<K> {
    type Value = K::Value;
    async fn get(&self, key: &str) -> Result<Option<K::Value>> {
        (**self).get(key).await
    }
    async fn put(&self, key: &str, value: K::Value) -> Result<()> {
        (**self).put(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        (**self).delete(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        (**self).list(prefix).await
    }
    fn has_put_if(&self) -> bool {
        (**self).has_put_if()
    }
    async fn put_if(
        &self,
        key: &str,
        value: K::Value,
        expected: Option<&K::Value>,
    ) -> Result<bool> {
        (**self).put_if(key, value, expected).await
    }
    fn has_expiry(&self) -> bool {
        (**self).has_expiry()
    }
    async fn put_expiring(&self, key: &str, value: K::Value, ttl_ms: u64) -> Result<()> {
        (**self).put_expiring(key, value, ttl_ms).await
    }
    async fn is_live(&self, key: &str) -> Result<bool> {
        (**self).is_live(key).await
    }
}

/// `part` made safe to put between `/` separators in a key: `%`, `/` and `#`
/// are percent-encoded, so ids containing them cannot collide with the layout.
pub(crate) fn escape_key_part(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    for c in part.chars() {
        match c {
            '%' => out.push_str("%25"),
            '/' => out.push_str("%2F"),
            '#' => out.push_str("%23"),
            c => out.push(c),
        }
    }
    out
}

/// The inverse of [`escape_key_part`]; `None` for a malformed escape.
pub(crate) fn unescape_key_part(part: &str) -> Option<String> {
    let mut out = String::with_capacity(part.len());
    let mut rest = part;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3)?;
        out.push(match code {
            "25" => '%',
            "2F" => '/',
            "23" => '#',
            _ => return None,
        });
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_parts_round_trip_and_never_contain_separators() {
        for s in ["plain", "a/b#c%d", "%2F", "", "é/%"] {
            let e = escape_key_part(s);
            assert!(!e.contains('/') && !e.contains('#'), "{e}");
            assert_eq!(unescape_key_part(&e).as_deref(), Some(s));
        }
        assert_eq!(unescape_key_part("%zz"), None);
        assert_eq!(unescape_key_part("%2"), None);
    }
}
