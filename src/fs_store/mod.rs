//! Artifacts and sessions as files under a directory:
//! `FsArtifactStore(base_dir)`.
//!
//! The store is the key-value store's layout and logic
//! ([`KvArtifactStore`]: chunking, verified reads,
//! sessions saved as append-only segments under a head written last) over
//! [`FsKv`], which keeps each key as one file:
//!
//! - every key segment becomes a path segment, percent-encoded down to
//!   `[a-z0-9_-]` (so no name is special, and none differs from another only
//!   by case), and the last one gets the suffix `.rec`, so a key never names
//!   the directory of another;
//! - a segment whose encoding is longer than [`MAX_SEGMENT_BYTES`] (a
//!   long session id: file systems take names of at most 255 bytes) is
//!   named by its hash instead, `~` and 32 hex digits, and the file
//!   `~{hash}.name` beside it keeps the segment, so listing finds the key;
//! - artifacts fan out by the first two characters of their id:
//!   `a/{id}` is `a/{id[..2]}/{id}.rec`;
//! - every file is written to a temporary name beside it, synced, and renamed
//!   into place, so a crash never leaves a partial file under a key: a reader
//!   sees the old file or the new one.
//!
//! The file operations are a [`FileSystem`]: [`StdFileSystem`] on `std::fs`
//! (native and WASI hosts), or the host's (Node's and Deno's
//! `node:fs/promises` in the npm package).

use async_trait::async_trait;

use crate::error::{Error, ErrorCode, Result};
use crate::kv::value::same_value;
use crate::kv::{KeyValue, KvArtifactStore, KvValue};

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod std_fs;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use std_fs::StdFileSystem;

/// The file operations the store needs, on paths relative to the store's
/// directory with `/` separators. Async so a JS host can implement them.
#[async_trait(?Send)]
pub trait FileSystem {
    /// The contents of files: `Vec<u8>`, or the host's own buffers.
    type Bytes: KvValue;
    /// The content of the file at `path`, or `None` when there is none.
    async fn read(&self, path: &str) -> Result<Option<Self::Bytes>>;
    /// Makes `path` hold `bytes`, atomically: written to a temporary file in
    /// the same directory, synced, then renamed over `path`. Creates missing
    /// parent directories.
    async fn write_atomic(&self, path: &str, bytes: Self::Bytes) -> Result<()>;
    /// Removes the file at `path` (an absent file is not an error).
    async fn remove(&self, path: &str) -> Result<()>;
    /// Every file under the directory `dir`, at any depth, as paths relative
    /// to the store's directory; empty when `dir` does not exist.
    async fn list_files(&self, dir: &str) -> Result<Vec<String>>;
    /// Whether [`FileSystem::create_new`] is available. With it the store
    /// moves saved sessions' heads atomically (several processes may write
    /// one session); without it the store is single-writer.
    fn has_create_new(&self) -> bool {
        false
    }
    /// Creates `path` holding `bytes` only when no file is there, atomically:
    /// the file appears complete or not at all (written to a temporary file,
    /// synced, then hard-linked to `path`, which fails when `path` exists).
    /// `Ok(false)` when a file is there already. Creates missing parent
    /// directories. Without it (the default): `STORE_UNSUPPORTED`.
    async fn create_new(&self, path: &str, bytes: Self::Bytes) -> Result<bool> {
        let _ = bytes;
        Err(Error::new(
            ErrorCode::StoreUnsupported,
            format!("create_new({path}): this file system has no exclusive create"),
        ))
    }
    /// Whether [`FileSystem::age_ms`] is available: with it (and
    /// [`FileSystem::create_new`]) the store keeps sessions' leases, in
    /// files that expire by their modification time.
    fn has_age(&self) -> bool {
        false
    }
    /// How long ago the file at `path` was last written, in ms, by the file
    /// system's modification time; `None` when there is no file. Without it
    /// (the default): `STORE_UNSUPPORTED`.
    async fn age_ms(&self, path: &str) -> Result<Option<f64>> {
        Err(Error::new(
            ErrorCode::StoreUnsupported,
            format!("age_ms({path}): this file system gives no modification times"),
        ))
    }
}

/// The largest file the store writes by default (64 MiB): an artifact up to
/// this size is one file; a larger one is split into chunk files beside it.
pub const DEFAULT_FS_CHUNK_BYTES: usize = 64 << 20;

/// The suffix of every file that holds a key.
const RECORD_SUFFIX: &str = ".rec";

/// The suffix of the directory of a conditionally written key's versions.
const VERSIONS_SUFFIX: &str = ".v";

/// How many versions of a conditionally written key stay behind its newest
/// one. A writer that created a version numbered below those collected (it
/// read a version, stalled while this many others were written, and
/// created the next number after it was collected) sees versions more than
/// this far above its own, and withdraws it.
const KEPT_VERSIONS: u64 = 64;

/// A [`KeyValue`] store over a [`FileSystem`]: one file per key (see the
/// module docs for the layout).
pub struct FsKv<F> {
    fs: F,
}

impl<F: FileSystem> FsKv<F> {
    /// Keys kept as files of `fs`.
    pub fn new(fs: F) -> Self {
        FsKv { fs }
    }

    /// The file system the keys are kept in.
    pub fn file_system(&self) -> &F {
        &self.fs
    }
}

/// The artifacts and sessions of `FsArtifactStore`: the key-value
/// store over files.
pub type FsArtifactStore<F> = KvArtifactStore<FsKv<F>>;

/// The longest encoded key segment a file or directory is named by; a
/// longer one is named by its hash (the rest of a file name's 255 bytes
/// holds the suffixes and a temporary name's).
pub const MAX_SEGMENT_BYTES: usize = 160;

/// The suffix of the file that keeps a hashed segment.
const NAME_SUFFIX: &str = ".name";

fn percent_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        match b {
            b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The name of `segment` in a path: percent-encoded, or `~` and its hash
/// when that is longer than [`MAX_SEGMENT_BYTES`].
fn encode_segment(segment: &str) -> String {
    let encoded = percent_encode(segment);
    if encoded.len() <= MAX_SEGMENT_BYTES {
        return encoded;
    }
    format!(
        "~{}",
        &crate::artifacts::content_id(segment.as_bytes())[..32]
    )
}

/// Whether a path segment is a hashed one (see [`encode_segment`]).
fn is_hashed(segment: &str) -> bool {
    segment.len() == 33 && segment.starts_with('~')
}

fn decode_segment(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The directory segments and the artifact fan-out of encoded `segments`.
fn with_fan_out(mut segments: Vec<String>) -> Vec<String> {
    if segments.len() >= 2 && segments[0] == "a" {
        let fan: String = segments[1].chars().take(2).collect();
        segments.insert(1, fan);
    }
    segments
}

/// The file that holds `key`.
pub(crate) fn key_path(key: &str) -> String {
    let segments = with_fan_out(key.split('/').map(encode_segment).collect());
    format!("{}{RECORD_SUFFIX}", segments.join("/"))
}

/// The path of the file that keeps the hashed segment `parts[i]` of a
/// path: beside it.
fn keeper(parts: &[&str], i: usize) -> String {
    let mut at = parts[..i].join("/");
    if !at.is_empty() {
        at.push('/');
    }
    format!("{at}{}{NAME_SUFFIX}", parts[i])
}

/// The segments of `key` named by their hash, as `(the file keeping it,
/// the segment)`.
fn hashed_names(key: &str) -> Vec<(String, String)> {
    let raw: Vec<&str> = key.split('/').collect();
    let encoded = with_fan_out(raw.iter().map(|s| encode_segment(s)).collect());
    let parts: Vec<&str> = encoded.iter().map(String::as_str).collect();
    let fanned = parts.len() > raw.len();
    (0..parts.len())
        .filter(|&i| is_hashed(parts[i]))
        .map(|i| {
            let segment = raw[if fanned && i >= 2 { i - 1 } else { i }];
            (keeper(&parts, i), segment.to_string())
        })
        .collect()
}

/// The key a file holds, or `None` for a file that holds none (a temporary
/// file, or one the store did not write); a hashed segment is read by
/// `named` from the path of the file that keeps it.
fn path_key_named(path: &str, named: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let stem = path.strip_suffix(RECORD_SUFFIX)?;
    let parts: Vec<&str> = stem.split('/').collect();
    let fanned = parts.len() >= 3 && parts[0] == "a";
    let mut decoded = Vec::with_capacity(parts.len());
    for (i, segment) in parts.iter().enumerate() {
        if fanned && i == 1 {
            continue;
        }
        decoded.push(if is_hashed(segment) {
            named(&keeper(&parts, i))?
        } else {
            decode_segment(segment)?
        });
    }
    let key = decoded.join("/");
    (key_path(&key) == path).then_some(key)
}

/// The directory holding the versions of `key` (written by `put_if`):
/// `s/x.rec`'s are in `s/x.v/`, one file per version named by its number. A
/// key segment never contains a `.`, so no key's file or directory is there.
fn versions_dir(key: &str) -> String {
    let path = key_path(key);
    let stem = path.strip_suffix(RECORD_SUFFIX).unwrap_or(&path);
    format!("{stem}{VERSIONS_SUFFIX}")
}

/// The key a file under a versions directory belongs to, or `None` for any
/// other file (a hashed segment read by `named`, see [`path_key_named`]).
fn version_key(path: &str, named: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let (dir, name) = path.rsplit_once('/')?;
    let stem = dir.strip_suffix(VERSIONS_SUFFIX)?;
    name.parse::<u64>().ok()?;
    path_key_named(&format!("{stem}{RECORD_SUFFIX}"), named)
}

/// The directory to walk for the keys starting with `prefix`.
fn list_dir(prefix: &str) -> String {
    let mut whole: Vec<String> = prefix.split('/').map(encode_segment).collect();
    whole.pop(); // the partial last segment
    if whole.first().map(String::as_str) == Some("a") {
        whole.truncate(1);
    }
    whole.join("/")
}

impl<F: FileSystem> FsKv<F> {
    /// The version numbers in `dir`, ascending.
    async fn versions(&self, dir: &str) -> Result<Vec<u64>> {
        let prefix = format!("{dir}/");
        let mut numbers: Vec<u64> = self
            .fs
            .list_files(dir)
            .await?
            .iter()
            .filter_map(|p| p.strip_prefix(&prefix)?.parse().ok())
            .collect();
        context_compiler_text::order::sort_stable_by_key(&mut numbers, |&n| (n, 0));
        Ok(numbers)
    }

    /// Writes the files that keep `key`'s hashed segments, when they do not
    /// hold them yet (before the key's own file: a listing then finds it).
    async fn keep_names(&self, key: &str) -> Result<()> {
        for (path, segment) in hashed_names(key) {
            let kept = self.fs.read(&path).await?.map(KvValue::into_vec);
            if kept.as_deref() != Some(segment.as_bytes()) {
                let bytes = F::Bytes::from_parts(&[segment.as_bytes()]);
                self.fs.write_atomic(&path, bytes).await?;
            }
        }
        Ok(())
    }

    /// The newest version of the key whose versions are in `dir` and its
    /// number, or `None` when it has none (a version collected between the
    /// listing and the read is skipped for the one before it).
    async fn newest_version(&self, dir: &str) -> Result<Option<(u64, F::Bytes)>> {
        for n in self.versions(dir).await?.into_iter().rev() {
            if let Some(bytes) = self.fs.read(&format!("{dir}/{n}")).await? {
                return Ok(Some((n, bytes)));
            }
        }
        Ok(None)
    }
}

#[async_trait(?Send)]
impl<F: FileSystem> KeyValue for FsKv<F> {
    type Value = F::Bytes;

    /// The key's file, or else the newest of its versions.
    async fn get(&self, key: &str) -> Result<Option<F::Bytes>> {
        if let Some(bytes) = self.fs.read(&key_path(key)).await? {
            return Ok(Some(bytes));
        }
        Ok(self
            .newest_version(&versions_dir(key))
            .await?
            .map(|(_, bytes)| bytes))
    }

    async fn put(&self, key: &str, value: F::Bytes) -> Result<()> {
        self.keep_names(key).await?;
        self.fs.write_atomic(&key_path(key), value).await
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.fs.remove(&key_path(key)).await?;
        let dir = versions_dir(key);
        for n in self.versions(&dir).await? {
            self.fs.remove(&format!("{dir}/{n}")).await?;
        }
        Ok(())
    }

    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        let dir = list_dir(prefix);
        let files = self.fs.list_files(&dir).await?;
        // The segments named by their hash: those kept in the listing, and
        // those of the listed directory itself (kept above it).
        let mut names = std::collections::HashMap::new();
        let keepers = files
            .iter()
            .filter(|f| f.ends_with(NAME_SUFFIX))
            .cloned()
            .chain(
                hashed_names(&format!("{prefix}x"))
                    .into_iter()
                    .map(|(p, _)| p),
            );
        for keeper in keepers {
            if let Some(bytes) = self.fs.read(&keeper).await? {
                if let Ok(segment) = String::from_utf8(bytes.into_vec()) {
                    names.insert(keeper, segment);
                }
            }
        }
        let named = |keeper: &str| names.get(keeper).cloned();
        let mut keys: Vec<String> = files
            .iter()
            .filter_map(|p| path_key_named(p, &named).or_else(|| version_key(p, &named)))
            .filter(|k| k.starts_with(prefix))
            .collect();
        context_compiler_text::order::sort_stable_by(&mut keys, |a, b| a.cmp(b));
        keys.dedup();
        Ok(Some(keys))
    }

    fn has_put_if(&self) -> bool {
        self.fs.has_create_new()
    }

    fn has_expiry(&self) -> bool {
        self.fs.has_create_new() && self.fs.has_age()
    }

    /// The key's file holding `ttl_ms`: it expires `ttl_ms` after its
    /// modification time (the value is not kept).
    async fn put_expiring(&self, key: &str, value: F::Bytes, ttl_ms: u64) -> Result<()> {
        let _ = value;
        self.keep_names(key).await?;
        let ttl = ttl_ms.to_string();
        self.fs
            .write_atomic(&key_path(key), F::Bytes::from_parts(&[ttl.as_bytes()]))
            .await
    }

    /// Whether the key's file was written less than the time it holds ago.
    async fn is_live(&self, key: &str) -> Result<bool> {
        let path = key_path(key);
        let Some(bytes) = self.fs.read(&path).await? else {
            return Ok(false);
        };
        let ttl = String::from_utf8(bytes.into_vec())
            .ok()
            .and_then(|t| t.parse::<f64>().ok());
        let Some(ttl) = ttl else {
            return Ok(false);
        };
        Ok(self.fs.age_ms(&path).await?.is_some_and(|age| age < ttl))
    }

    /// Versions: the key's value is the newest file of its versions
    /// directory, and a write creates the next number there exclusively, so
    /// of two writers from one version exactly one succeeds. A key still
    /// held in its plain file (written by `put`, or by a version before
    /// conditional writes) moves to version 1.
    async fn put_if(
        &self,
        key: &str,
        value: F::Bytes,
        expected: Option<&F::Bytes>,
    ) -> Result<bool> {
        let plain = key_path(key);
        let dir = versions_dir(key);
        let newest = self.newest_version(&dir).await?;
        let mut legacy = self.fs.read(&plain).await?;
        if newest.is_some() && legacy.is_some() {
            // Left by a move to versions that stopped before removing it.
            self.fs.remove(&plain).await?;
            legacy = None;
        }
        let (base, current) = match newest {
            Some((n, bytes)) => (n, Some(bytes)),
            None => (0, legacy.take()),
        };
        if !same_value(current.as_ref(), expected) {
            return Ok(false);
        }
        let next = base + 1;
        self.keep_names(key).await?;
        if !self.fs.create_new(&format!("{dir}/{next}"), value).await? {
            return Ok(false);
        }
        let after = self.versions(&dir).await?;
        if after.last().is_some_and(|&n| n > next + KEPT_VERSIONS) {
            // `next` was collected long ago and created again by this stale
            // write: nobody reads it; take it back.
            self.fs.remove(&format!("{dir}/{next}")).await?;
            return Ok(false);
        }
        if current.is_some() && base == 0 {
            self.fs.remove(&plain).await?;
        }
        for n in after.into_iter().filter(|&n| n + KEPT_VERSIONS < next) {
            let _ = self.fs.remove(&format!("{dir}/{n}")).await;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key a file holds, no segment hashed.
    fn path_key(path: &str) -> Option<String> {
        path_key_named(path, &|_| None)
    }

    #[test]
    fn keys_map_to_files_and_back() {
        let id = "ab".repeat(32);
        for (key, path) in [
            (format!("a/{id}"), format!("a/ab/{id}.rec")),
            (format!("a/{id}#3"), format!("a/ab/{id}%233.rec")),
            ("s/Chat 1".to_string(), "s/%43hat%201.rec".to_string()),
            (
                "s/Chat 1/2/0-5".to_string(),
                "s/%43hat%201/2/0-5.rec".to_string(),
            ),
            ("as/x.rec/y".to_string(), "as/x%2Erec/y.rec".to_string()),
            ("p%2Fq".to_string(), "p%252%46q.rec".to_string()),
        ] {
            assert_eq!(key_path(&key), path);
            assert_eq!(path_key(&path).as_deref(), Some(key.as_str()));
        }
    }

    #[test]
    fn a_key_is_never_the_directory_of_another() {
        // "s/x" is the file s/x.rec; "s/x.rec/1" lives in s/x%2Erec/.
        assert_eq!(key_path("s/x"), "s/x.rec");
        assert_eq!(key_path("s/x.rec/1"), "s/x%2Erec/1.rec");
        assert_ne!(key_path("s/A"), key_path("s/a"));
    }

    #[test]
    fn files_the_store_did_not_write_hold_no_key() {
        for path in [
            "a/ab/abc.rec.tmp-1",
            "s/x.txt",
            "s/%ZZ.rec",
            "s/X.rec",
            "a/zz/ab.rec",
        ] {
            assert_eq!(path_key(path), None, "{path}");
        }
    }

    #[test]
    fn a_long_segment_is_named_by_its_hash_and_kept_beside_it() {
        let id = "東".repeat(300);
        let key = format!("s/{id}/2/0-5");
        let path = key_path(&key);
        let hashed = &path[2..35];
        assert!(is_hashed(hashed), "{path}");
        assert!(path.split('/').all(|s| s.len() <= MAX_SEGMENT_BYTES + 4));
        let names = hashed_names(&key);
        assert_eq!(names, [(format!("s/{hashed}.name"), id.clone())]);
        assert_eq!(path_key(&path), None, "unread, the hash names no key");
        let named = |p: &str| (p == names[0].0).then(|| id.clone());
        assert_eq!(path_key_named(&path, &named).as_deref(), Some(key.as_str()));
        // A name file that says another segment names nothing.
        let wrong = |_: &str| Some("other".to_string());
        assert_eq!(path_key_named(&path, &wrong), None);
        assert_eq!(hashed_names("s/short/1"), []);
    }

    #[test]
    fn listing_walks_the_prefix_directory() {
        assert_eq!(list_dir("a/"), "a");
        assert_eq!(list_dir("as/chat 1/"), "as/chat%201");
        assert_eq!(list_dir("s/"), "s");
        assert_eq!(list_dir("pre/a/"), "pre/a");
        assert_eq!(list_dir(""), "");
    }
}
