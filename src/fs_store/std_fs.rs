//! [`StdFileSystem`]: the store's file operations on `std::fs`, for native
//! hosts and WASI (a directory the host preopens).

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;

use super::FileSystem;
use crate::error::{Error, ErrorCode, Result};

/// Files under one directory, through `std::fs`.
#[derive(Debug, Clone)]
pub struct StdFileSystem {
    root: PathBuf,
}

impl StdFileSystem {
    /// Files under `root` (created on first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        StdFileSystem { root: root.into() }
    }

    /// The directory the files are under.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, relative: &str) -> Result<PathBuf> {
        if relative.split('/').any(|s| s == ".." || s == ".") || relative.starts_with('/') {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!("path {relative:?} leaves the store's directory"),
            ));
        }
        Ok(self.root.join(relative))
    }
}

fn failed(op: &str, path: &Path, e: std::io::Error) -> Error {
    let code = match e.kind() {
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => ErrorCode::StoreQuotaExceeded,
        _ => ErrorCode::StoreFailed,
    };
    Error::new(code, format!("{op} {}: {e}", path.display()))
}

/// A name no other write uses at the same time: this process's count of
/// writes and the time (`std::process::id` panics on WASI, so not the pid).
fn temporary_name(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{nanos:x}-{n}"));
    path.with_file_name(name)
}

/// `bytes` in a new temporary file beside `full` (its directory created),
/// synced; its path.
fn synced(full: &Path, bytes: &[u8]) -> Result<PathBuf> {
    if let Some(parent) = full.parent() {
        fs::create_dir_all(parent).map_err(|e| failed("creating", parent, e))?;
    }
    let temporary = temporary_name(full);
    let written = (|| {
        let mut file = fs::File::create_new(&temporary)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temporary);
        return Err(failed("writing", full, e));
    }
    Ok(temporary)
}

fn walk(dir: &Path, relative: &str, out: &mut Vec<String>) -> std::io::Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        // An entry another writer renamed or removed since the directory
        // was read (a temporary file renamed into place) is gone, not an
        // error: where the file type needs a stat of its own (WASI), that
        // stat finds nothing.
        let gone = |e: &std::io::Error| e.kind() == ErrorKind::NotFound;
        let entry = match entry {
            Err(e) if gone(&e) => continue,
            entry => entry?,
        };
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue; // not a name the store writes
        };
        let child = if relative.is_empty() {
            name
        } else {
            format!("{relative}/{name}")
        };
        let file_type = match entry.file_type() {
            Err(e) if gone(&e) => continue,
            file_type => file_type?,
        };
        if file_type.is_dir() {
            walk(&entry.path(), &child, out)?;
        } else {
            out.push(child);
        }
    }
    Ok(())
}

#[async_trait(?Send)]
impl FileSystem for StdFileSystem {
    type Bytes = Vec<u8>;

    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let full = self.path(path)?;
        match fs::read(&full) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(failed("reading", &full, e)),
        }
    }

    async fn write_atomic(&self, path: &str, bytes: Vec<u8>) -> Result<()> {
        let full = self.path(path)?;
        let temporary = synced(&full, &bytes)?;
        if let Err(e) = fs::rename(&temporary, &full) {
            let _ = fs::remove_file(&temporary);
            return Err(failed("writing", &full, e));
        }
        Ok(())
    }

    fn has_create_new(&self) -> bool {
        true
    }

    fn has_age(&self) -> bool {
        true
    }

    /// By the file's modification time against the system clock (on a
    /// network file system, the server's time as the client sees it).
    async fn age_ms(&self, path: &str) -> Result<Option<f64>> {
        let full = self.path(path)?;
        let modified = match fs::metadata(&full).and_then(|m| m.modified()) {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(failed("reading the time of", &full, e)),
        };
        // A time ahead of the clock is a file written just now.
        let age = std::time::SystemTime::now()
            .duration_since(modified)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        Ok(Some(age))
    }

    async fn create_new(&self, path: &str, bytes: Vec<u8>) -> Result<bool> {
        let full = self.path(path)?;
        let temporary = synced(&full, &bytes)?;
        // A hard link fails when `full` exists, and shows it whole or not at all.
        let linked = match fs::hard_link(&temporary, &full) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        };
        let _ = fs::remove_file(&temporary);
        linked.map_err(|e| failed("creating", &full, e))
    }

    async fn remove(&self, path: &str) -> Result<()> {
        let full = self.path(path)?;
        match fs::remove_file(&full) {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(failed("removing", &full, e)),
            _ => Ok(()),
        }
    }

    async fn list_files(&self, dir: &str) -> Result<Vec<String>> {
        let full = if dir.is_empty() {
            self.root.clone()
        } else {
            self.path(dir)?
        };
        let mut out = Vec::new();
        walk(&full, dir, &mut out).map_err(|e| failed("listing", &full, e))?;
        Ok(out)
    }
}
