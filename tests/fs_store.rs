//! The filesystem store on real files: seed 000's `test_fs_store_retrieve_dedup`,
//! the layout on disk, a store reopened over the same directory, a crash's
//! leftover temporary file, a write failing part-way through a save, and
//! tampered or missing files.

mod common;

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, session, StepClock};
use context_compiler::artifacts::{content_id, ArtifactStore, StoreOptions};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::kv::KvStoreOptions;
use context_compiler::session::{SessionEnv, SessionStore};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::{
    FileSystem, FsArtifactStore, FsKv, KvArtifactStore, Session, StdFileSystem,
};
use serde_json::json;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("acc-fs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn open<F: FileSystem>(fs: F) -> FsArtifactStore<F> {
    KvArtifactStore::new(
        FsKv::new(fs),
        StepClock::new(1000.0, 1.0),
        KvStoreOptions::default(),
    )
    .unwrap()
}

fn env() -> SessionEnv {
    SessionEnv {
        clock: StepClock::new(2e12, 1.0),
        counter: Rc::new(DefaultTokenCounter),
        seed: 7,
    }
}

fn text_opts() -> StoreOptions {
    StoreOptions {
        mime_type: Some("text/plain".into()),
        session_id: None,
    }
}

fn recorded(id: &str, turns: usize) -> RefCell<Session> {
    let mut s = session(id);
    for i in 0..turns {
        s.record("user_input", json!(format!("question {i}")), None)
            .unwrap();
    }
    RefCell::new(s)
}

/// A store under a fresh directory named `name`, holding `content`: the
/// directory, the store and the artifact's id.
fn stored_one(name: &str, content: &[u8]) -> (PathBuf, FsArtifactStore<StdFileSystem>, String) {
    let dir = temp_dir(name);
    let store = open(StdFileSystem::new(&dir));
    let id = block_on(store.store(content, "tool:x", text_opts()))
        .unwrap()
        .artifact_id;
    (dir, store, id)
}

/// How many events the saved session `id` loads with.
fn loaded_events<F: FileSystem>(store: &FsArtifactStore<F>, id: &str) -> usize {
    let loaded = block_on(store.load_session(id, env())).unwrap().unwrap();
    loaded.event_log().all_events().len()
}

/// The file of artifact `id` under `dir`.
fn artifact_file(dir: &Path, id: &str) -> PathBuf {
    dir.join("a").join(&id[..2]).join(format!("{id}.rec"))
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(
                    p.strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    out.sort();
    out
}

#[test]
fn seed_test_fs_store_retrieve_dedup() {
    let dir = temp_dir("seed");
    let store = open(StdFileSystem::new(&dir));
    let content = b"Another large payload for filesystem storage.";
    block_on(async {
        let h1 = store
            .store(content, "tool:file_read", text_opts())
            .await
            .unwrap();
        assert_eq!(h1.size_bytes, content.len() as u64);
        let h2 = store
            .store(content, "tool:file_read", text_opts())
            .await
            .unwrap();
        assert_eq!(h2.artifact_id, h1.artifact_id);
        assert_eq!(
            store.retrieve(&h1.artifact_id).await.unwrap().as_deref(),
            Some(&content[..])
        );
        assert!(store.exists(&h1.artifact_id).await.unwrap());
        assert!(!store.exists("nonexistent").await.unwrap());
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn artifacts_fan_out_by_id_prefix_and_sessions_are_segment_files() {
    let dir = temp_dir("layout");
    let store = open(StdFileSystem::new(&dir));
    let id = content_id(b"fan out");
    block_on(async {
        store
            .store(b"fan out", "tool:x", text_opts())
            .await
            .unwrap();
        store.save_session(&recorded("Chat 1", 3)).await.unwrap();
    });
    let files = files_under(&dir);
    assert!(
        files.contains(&format!("a/{}/{id}.rec", &id[..2])),
        "{files:?}"
    );
    assert!(
        files.contains(&"s/%43hat%201.v/1".to_string()),
        "the head, version 1: {files:?}"
    );
    assert!(
        files
            .iter()
            .any(|f| f.starts_with("s/%43hat%201/") && f.ends_with(".rec")),
        "a segment: {files:?}"
    );
    assert!(
        !files.iter().any(|f| f.contains(".tmp-")),
        "no temporary file is left: {files:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_store_reopened_over_the_directory_has_everything_and_appends() {
    let dir = temp_dir("reopen");
    let session = recorded("s", 4);
    let id = block_on(async {
        let first = open(StdFileSystem::new(&dir));
        first.save_session(&session).await.unwrap();
        first
            .store(b"kept", "tool:x", text_opts())
            .await
            .unwrap()
            .artifact_id
    });
    block_on(async {
        let second = open(StdFileSystem::new(&dir));
        assert_eq!(
            second.retrieve(&id).await.unwrap().as_deref(),
            Some(&b"kept"[..])
        );
        assert_eq!(second.list_sessions().await.unwrap(), ["s"]);
        let loaded = second.load_session("s", env()).await.unwrap().unwrap();
        assert_eq!(loaded.event_log().all_events().len(), 4);
        session
            .borrow_mut()
            .record("user_input", json!("one more"), None)
            .unwrap();
        let report = second.save_session(&session).await.unwrap();
        assert_eq!((report.events_written, report.rewritten), (1, false));
    });
    assert_eq!(loaded_events(&open(StdFileSystem::new(&dir)), "s"), 5);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_temporary_file_left_by_a_crash_is_ignored() {
    let (dir, store, id) = stored_one("crash", b"whole");
    // A crash between writing a temporary file and renaming it leaves this.
    let leftover = artifact_file(&dir, &id).with_extension("rec.tmp-999-0");
    std::fs::write(&leftover, b"half a reco").unwrap();
    block_on(async {
        assert_eq!(
            store.retrieve(&id).await.unwrap().as_deref(),
            Some(&b"whole"[..])
        );
        let handles = store.list_handles(None).await.unwrap();
        assert_eq!(
            handles
                .iter()
                .map(|h| h.artifact_id.as_str())
                .collect::<Vec<_>>(),
            [id.as_str()]
        );
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// `std::fs` whose writes start failing after `writes_left` of them.
struct FailingFs {
    inner: StdFileSystem,
    writes_left: Cell<usize>,
}

#[async_trait(?Send)]
impl FileSystem for FailingFs {
    type Bytes = Vec<u8>;

    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        self.inner.read(path).await
    }
    async fn write_atomic(&self, path: &str, bytes: Vec<u8>) -> Result<()> {
        match self.writes_left.get() {
            0 => Err(Error::new(
                ErrorCode::StoreFailed,
                format!("disk full writing {path}"),
            )),
            n => {
                self.writes_left.set(n - 1);
                self.inner.write_atomic(path, bytes).await
            }
        }
    }
    async fn remove(&self, path: &str) -> Result<()> {
        self.inner.remove(path).await
    }
    async fn list_files(&self, dir: &str) -> Result<Vec<String>> {
        self.inner.list_files(dir).await
    }
}

#[test]
fn a_save_failing_part_way_keeps_the_previous_session_loadable() {
    let dir = temp_dir("fault");
    let session = recorded("s", 3);
    block_on(open(StdFileSystem::new(&dir)).save_session(&session)).unwrap();
    for turn in 0..40 {
        session
            .borrow_mut()
            .record(
                "user_input",
                json!(format!("later {turn} {}", "x".repeat(3000))),
                None,
            )
            .unwrap();
    }
    // Each allowance fails the save at a different write: never a torn session.
    for allowed in 0..3 {
        let failing = open(FailingFs {
            inner: StdFileSystem::new(&dir),
            writes_left: Cell::new(allowed),
        });
        let err = block_on(failing.save_session(&session)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreFailed, "{err}");
        let loaded = block_on(open(StdFileSystem::new(&dir)).load_session("s", env()))
            .unwrap()
            .unwrap();
        assert!(
            loaded.event_log().all_events().len() == 3
                || loaded.event_log().all_events().len() == 43,
            "{} events",
            loaded.event_log().all_events().len()
        );
    }
    let report = block_on(open(StdFileSystem::new(&dir)).save_session(&session)).unwrap();
    assert!(report.events_written > 0);
    assert_eq!(loaded_events(&open(StdFileSystem::new(&dir)), "s"), 43);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tampered_or_missing_files_are_never_returned() {
    let (dir, store, id) = stored_one("tamper", b"the real content");
    let file = artifact_file(&dir, &id);
    let mut bytes = std::fs::read(&file).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(&file, &bytes).unwrap();
    assert_eq!(
        block_on(store.retrieve(&id)).unwrap_err().code(),
        ErrorCode::ArtifactIntegrity
    );
    std::fs::remove_file(&file).unwrap();
    assert_eq!(block_on(store.retrieve(&id)).unwrap(), None);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn paths_cannot_leave_the_directory() {
    let fs = StdFileSystem::new(temp_dir("escape"));
    for path in ["../x.rec", "a/../../x.rec", "/etc/passwd"] {
        assert_eq!(
            block_on(fs.read(path)).unwrap_err().code(),
            ErrorCode::InvalidArgument,
            "{path}"
        );
    }
}

/// The versions of a conditionally written key: the newest is its value, a
/// write from anything else is refused, old ones are collected, and a stale
/// writer recreating a collected number is ignored and taken back.
#[test]
fn conditional_writes_keep_versions_and_refuse_stale_ones() {
    use context_compiler::KeyValue;
    let dir = temp_dir("versions");
    let kv = FsKv::new(StdFileSystem::new(&dir));
    block_on(async {
        // A key written by plain put (a head of a version before versions)
        // moves to version 1.
        kv.put("s/x", b"legacy".to_vec()).await.unwrap();
        assert!(!kv.put_if("s/x", b"v1".to_vec(), None).await.unwrap());
        assert!(kv
            .put_if("s/x", b"v1".to_vec(), Some(&b"legacy".to_vec()))
            .await
            .unwrap());
        assert!(!dir.join("s/x.rec").exists(), "the plain file is gone");
        assert_eq!(kv.get("s/x").await.unwrap().as_deref(), Some(&b"v1"[..]));
        let mut current = b"v1".to_vec();
        for i in 2..=100u32 {
            let next = format!("v{i}").into_bytes();
            let old = Some(b"legacy".to_vec());
            assert!(!kv.put_if("s/x", next.clone(), old.as_ref()).await.unwrap());
            assert!(
                kv.put_if("s/x", next.clone(), Some(&current))
                    .await
                    .unwrap(),
                "version {i}"
            );
            current = next;
        }
        assert_eq!(kv.get("s/x").await.unwrap(), Some(current.clone()));
        let kept = std::fs::read_dir(dir.join("s/x.v")).unwrap().count();
        assert!((60..=70).contains(&kept), "{kept} versions kept");
        // A stale writer creates a collected number again: nobody reads it,
        // and the next conditional write from the newest still succeeds.
        std::fs::write(dir.join("s/x.v/3"), b"stale").unwrap();
        assert_eq!(kv.get("s/x").await.unwrap(), Some(current.clone()));
        assert!(kv
            .put_if("s/x", b"after".to_vec(), Some(&current))
            .await
            .unwrap());
        assert_eq!(kv.get("s/x").await.unwrap().as_deref(), Some(&b"after"[..]));
        assert_eq!(kv.list("s/").await.unwrap().unwrap(), ["s/x"]);
        kv.delete("s/x").await.unwrap();
        assert_eq!(kv.get("s/x").await.unwrap(), None);
        assert_eq!(kv.list("s/").await.unwrap().unwrap(), Vec::<String>::new());
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// `std::fs` that runs `before_create` (once) just before an exclusive
/// create: another writer's work landing while this one stalls.
struct StallingFs {
    inner: StdFileSystem,
    before_create: RefCell<Option<Box<dyn FnOnce()>>>,
}

#[async_trait(?Send)]
impl FileSystem for StallingFs {
    type Bytes = Vec<u8>;
    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        self.inner.read(path).await
    }
    async fn write_atomic(&self, path: &str, bytes: Vec<u8>) -> Result<()> {
        self.inner.write_atomic(path, bytes).await
    }
    async fn remove(&self, path: &str) -> Result<()> {
        self.inner.remove(path).await
    }
    async fn list_files(&self, dir: &str) -> Result<Vec<String>> {
        self.inner.list_files(dir).await
    }
    fn has_create_new(&self) -> bool {
        true
    }
    async fn create_new(&self, path: &str, bytes: Vec<u8>) -> Result<bool> {
        let stall = self.before_create.borrow_mut().take();
        if let Some(stall) = stall {
            stall();
        }
        self.inner.create_new(path, bytes).await
    }
}

/// A writer that read version 1, then stalled while 80 others were written
/// (so version 2 was written and collected), creates version 2 again: it
/// sees it is far behind, takes it back and reports its write refused.
#[test]
fn a_writer_stalled_past_collection_takes_its_version_back() {
    use context_compiler::KeyValue;
    let dir = temp_dir("stalled");
    let other = FsKv::new(StdFileSystem::new(&dir));
    block_on(other.put_if("s/x", b"v1".to_vec(), None)).unwrap();
    let other_dir = dir.clone();
    let stalled = FsKv::new(StallingFs {
        inner: StdFileSystem::new(&dir),
        before_create: RefCell::new(Some(Box::new(move || {
            let kv = FsKv::new(StdFileSystem::new(&other_dir));
            let mut current = b"v1".to_vec();
            for i in 2..=81u32 {
                let next = format!("other {i}").into_bytes();
                assert!(block_on(kv.put_if("s/x", next.clone(), Some(&current))).unwrap());
                current = next;
            }
        }))),
    });
    let written =
        block_on(stalled.put_if("s/x", b"stale".to_vec(), Some(&b"v1".to_vec()))).unwrap();
    assert!(!written, "the stale write is refused");
    assert!(!dir.join("s/x.v/2").exists(), "and taken back");
    assert_eq!(
        block_on(other.get("s/x")).unwrap().as_deref(),
        Some(&b"other 81"[..])
    );
    let _ = std::fs::remove_dir_all(&dir);
}
