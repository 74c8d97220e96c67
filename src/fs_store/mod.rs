//! Artifacts and sessions as files under a directory: seed 000's
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

use crate::error::Result;
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
}

/// The largest file the store writes by default (64 MiB): an artifact up to
/// this size is one file; a larger one is split into chunk files beside it.
pub const DEFAULT_FS_CHUNK_BYTES: usize = 64 << 20;

/// The suffix of every file that holds a key.
const RECORD_SUFFIX: &str = ".rec";

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

/// The artifacts and sessions of seed 000's `FsArtifactStore`: the key-value
/// store over files.
pub type FsArtifactStore<F> = KvArtifactStore<FsKv<F>>;

fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        match b {
            b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
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

/// The key a file holds, or `None` for a file that holds none (a temporary
/// file, or one the store did not write).
pub(crate) fn path_key(path: &str) -> Option<String> {
    let path = path.strip_suffix(RECORD_SUFFIX)?;
    let mut segments: Vec<&str> = path.split('/').collect();
    if segments.len() >= 3 && segments[0] == "a" {
        segments.remove(1);
    }
    let decoded: Option<Vec<String>> = segments.into_iter().map(decode_segment).collect();
    let key = decoded?.join("/");
    (key_path(&key) == format!("{path}{RECORD_SUFFIX}")).then_some(key)
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

#[async_trait(?Send)]
impl<F: FileSystem> KeyValue for FsKv<F> {
    type Value = F::Bytes;

    async fn get(&self, key: &str) -> Result<Option<F::Bytes>> {
        self.fs.read(&key_path(key)).await
    }

    async fn put(&self, key: &str, value: F::Bytes) -> Result<()> {
        self.fs.write_atomic(&key_path(key), value).await
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.fs.remove(&key_path(key)).await
    }

    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        let files = self.fs.list_files(&list_dir(prefix)).await?;
        let mut keys: Vec<String> = files
            .iter()
            .filter_map(|p| path_key(p))
            .filter(|k| k.starts_with(prefix))
            .collect();
        keys.sort();
        Ok(Some(keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn listing_walks_the_prefix_directory() {
        assert_eq!(list_dir("a/"), "a");
        assert_eq!(list_dir("as/chat 1/"), "as/chat%201");
        assert_eq!(list_dir("s/"), "s");
        assert_eq!(list_dir("pre/a/"), "pre/a");
        assert_eq!(list_dir(""), "");
    }
}
