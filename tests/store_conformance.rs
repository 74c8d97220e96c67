//! The store conformance suite (tests/fixtures/store_conformance.json), run
//! natively against the memory store, the key-value store over an
//! in-memory KV, with and without Deno KV's 64 KiB value limit, and the
//! filesystem store over a temporary directory.

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::{block_on, join_all, session, StepClock};
use context_compiler::artifacts::{content_id, ArtifactStore, StoreOptions};
use context_compiler::error::ErrorCode;
use context_compiler::kv::{KvArtifactStore, KvStoreOptions, MemoryKv};
use context_compiler::session::{SavedEvents, SessionEnv, SessionSource, SessionStore};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::MemoryArtifactStore;
use context_compiler::{FsArtifactStore, FsKv, Session, StdFileSystem, DEFAULT_FS_CHUNK_BYTES};
use serde_json::json;

/// A backend under test.
trait Backend {
    type Store: ArtifactStore + SessionStore;
    fn make(&self) -> Self::Store;
    /// Alters the stored content of `id` behind the store's back.
    fn corrupt(&self, store: &Self::Store, id: &str);
    /// The size of a value that must be split into many chunks.
    fn large_size(&self) -> usize;
}

struct Memory;

impl Backend for Memory {
    type Store = MemoryArtifactStore;
    fn make(&self) -> MemoryArtifactStore {
        MemoryArtifactStore::new(StepClock::new(1000.0, 1.0))
    }
    fn corrupt(&self, store: &MemoryArtifactStore, id: &str) {
        let mut all = store.snapshot();
        let a = all.iter_mut().find(|a| a.handle.artifact_id == id).unwrap();
        a.content[0] ^= 1;
        store.restore(all);
    }
    fn large_size(&self) -> usize {
        3 << 20
    }
}

struct Kv {
    value_limit: Option<usize>,
    chunk_bytes: usize,
}

impl Backend for Kv {
    type Store = KvArtifactStore<MemoryKv>;
    fn make(&self) -> Self::Store {
        let kv = match self.value_limit {
            Some(limit) => MemoryKv::with_value_limit(limit),
            None => MemoryKv::new(),
        };
        let options = KvStoreOptions {
            chunk_bytes: self.chunk_bytes,
            prefix: "test/".into(),
            timeout_ms: None,
        };
        KvArtifactStore::new(kv, StepClock::new(1000.0, 1.0), options).unwrap()
    }
    fn corrupt(&self, store: &Self::Store, id: &str) {
        let kv = store.kv();
        // Alter the last byte of the content, inline or in the last chunk.
        let key = kv
            .keys()
            .into_iter()
            .filter(|k| k.starts_with(&format!("test/a/{id}")))
            .max()
            .unwrap();
        let mut value = kv.raw_get(&key).unwrap();
        *value.last_mut().unwrap() ^= 1;
        kv.raw_put(&key, value);
    }
    fn large_size(&self) -> usize {
        self.chunk_bytes * 40 + 123
    }
}

/// The filesystem store over a fresh temporary directory per store.
struct Fs {
    chunk_bytes: usize,
}

impl Fs {
    /// The directory this backend's stores are made in (removed after the run).
    fn parent(&self) -> std::path::PathBuf {
        std::env::temp_dir().join(format!(
            "acc-fs-store-{}-{}",
            std::process::id(),
            self.chunk_bytes
        ))
    }

    /// A directory of its own for each store.
    fn fresh_dir(&self) -> std::path::PathBuf {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        self.parent()
            .join(NEXT.fetch_add(1, Ordering::Relaxed).to_string())
    }
}

impl Backend for Fs {
    type Store = FsArtifactStore<StdFileSystem>;
    fn make(&self) -> Self::Store {
        let dir = self.fresh_dir();
        let _ = std::fs::remove_dir_all(&dir);
        let options = KvStoreOptions {
            chunk_bytes: self.chunk_bytes,
            ..KvStoreOptions::default()
        };
        let kv = FsKv::new(StdFileSystem::new(dir));
        KvArtifactStore::new(kv, StepClock::new(1000.0, 1.0), options).unwrap()
    }
    fn corrupt(&self, store: &Self::Store, id: &str) {
        // Alter the last byte of the content, in its file or its last chunk file.
        let dir = store.kv().file_system().root().join("a").join(&id[..2]);
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(id))
            .max()
            .unwrap();
        let mut value = std::fs::read(&file).unwrap();
        *value.last_mut().unwrap() ^= 1;
        std::fs::write(&file, value).unwrap();
    }
    fn large_size(&self) -> usize {
        (self.chunk_bytes * 40 + 123).min(3 << 20)
    }
}

fn env() -> SessionEnv {
    SessionEnv {
        clock: StepClock::new(2e12, 1.0),
        counter: Rc::new(DefaultTokenCounter),
        seed: 7,
    }
}

fn opts(session: Option<&str>) -> StoreOptions {
    StoreOptions {
        mime_type: None,
        session_id: session.map(str::to_string),
    }
}

fn pattern(size: usize, salt: u8) -> Vec<u8> {
    (0..size)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt))
        .collect()
}

fn recorded(id: &str, turns: usize) -> RefCell<Session> {
    let mut s = session(id);
    for i in 0..turns {
        s.record("user_input", json!(format!("question {i}")), None)
            .unwrap();
        s.record(
            "tool_success",
            json!({"tool": "t", "result": {"i": i}}),
            None,
        )
        .unwrap();
    }
    RefCell::new(s)
}

async fn run<B: Backend>(b: &B, name: &str) {
    let store = b.make();
    match name {
        "store_retrieve" => {
            let h = store
                .store(b"hello world", "tool:x", opts(None))
                .await
                .unwrap();
            assert_eq!(h.artifact_id, content_id(b"hello world"));
            assert_eq!(h.size_bytes, 11);
            assert_eq!(h.source, "tool:x");
            assert_eq!(h.mime_type, "text/plain");
            let bytes = store.retrieve(&h.artifact_id).await.unwrap();
            assert_eq!(bytes.as_deref(), Some(&b"hello world"[..]));
        }
        "absent" => {
            let id = content_id(b"never stored");
            assert_eq!(store.retrieve(&id).await.unwrap(), None);
            assert!(!store.exists(&id).await.unwrap());
            assert!(!store.delete(&id).await.unwrap());
        }
        "dedup" => {
            let a = store.store(b"same", "a", opts(None)).await.unwrap();
            let b2 = store.store(b"same", "b", opts(None)).await.unwrap();
            assert_eq!(a, b2);
            assert_eq!(store.list_handles(None).await.unwrap().len(), 1);
        }
        "exists" => {
            let h = store.store(b"here", "s", opts(None)).await.unwrap();
            assert!(store.exists(&h.artifact_id).await.unwrap());
            store.delete(&h.artifact_id).await.unwrap();
            assert!(!store.exists(&h.artifact_id).await.unwrap());
        }
        "list_by_session" => {
            let a = store.store(b"one", "s", opts(Some("s1"))).await.unwrap();
            let b2 = store.store(b"two", "s", opts(Some("s2"))).await.unwrap();
            let c = store.store(b"one", "s", opts(Some("s2"))).await.unwrap();
            assert_eq!(c.session_id.as_deref(), Some("s2"));
            let s1: Vec<_> = store.list_handles(Some("s1")).await.unwrap();
            assert_eq!(s1.len(), 1);
            assert_eq!(s1[0].artifact_id, a.artifact_id);
            assert_eq!(s1[0].session_id.as_deref(), Some("s1"));
            let mut s2: Vec<_> = store
                .list_handles(Some("s2"))
                .await
                .unwrap()
                .into_iter()
                .map(|h| h.artifact_id)
                .collect();
            s2.sort();
            let mut want = vec![a.artifact_id.clone(), b2.artifact_id.clone()];
            want.sort();
            assert_eq!(s2, want);
            assert_eq!(store.list_handles(None).await.unwrap().len(), 2);
            assert!(store.list_handles(Some("nobody")).await.unwrap().is_empty());
        }
        "delete" => {
            let h = store
                .store(b"gone soon", "s", opts(Some("s1")))
                .await
                .unwrap();
            assert!(store.delete(&h.artifact_id).await.unwrap());
            assert_eq!(store.retrieve(&h.artifact_id).await.unwrap(), None);
            assert!(store.list_handles(Some("s1")).await.unwrap().is_empty());
            assert!(store.list_handles(None).await.unwrap().is_empty());
        }
        "verified_read" => {
            let h = store
                .store(b"precious bytes", "s", opts(None))
                .await
                .unwrap();
            b.corrupt(&store, &h.artifact_id);
            let err = store.retrieve(&h.artifact_id).await.unwrap_err();
            assert_eq!(err.code(), ErrorCode::ArtifactIntegrity, "{err}");
        }
        "large_value" => {
            let content = pattern(b.large_size(), 3);
            let h = store.store(&content, "s", opts(None)).await.unwrap();
            assert_eq!(h.size_bytes, content.len() as u64);
            let back = store.retrieve(&h.artifact_id).await.unwrap().unwrap();
            assert!(back == content, "large value differs");
        }
        "concurrent_same" => {
            let content = pattern(b.large_size() / 4, 9);
            let futures = (0..8).map(|_| store.store(&content, "s", opts(None)));
            let handles = join_all(futures).await;
            let first = handles[0].as_ref().unwrap().clone();
            for h in &handles {
                assert_eq!(h.as_ref().unwrap().artifact_id, first.artifact_id);
            }
            assert_eq!(
                store.retrieve(&first.artifact_id).await.unwrap().unwrap(),
                content
            );
        }
        "concurrent_different" => {
            let contents: Vec<Vec<u8>> = (0..8).map(|i| pattern(5000 + i * 777, i as u8)).collect();
            let handles = join_all(
                contents
                    .iter()
                    .map(|c| store.store(c, "s", opts(Some("c")))),
            )
            .await;
            for (h, c) in handles.iter().zip(&contents) {
                let h = h.as_ref().unwrap();
                assert_eq!(&store.retrieve(&h.artifact_id).await.unwrap().unwrap(), c);
            }
            assert_eq!(store.list_handles(Some("c")).await.unwrap().len(), 8);
        }
        "session_round_trip" => {
            let s = recorded("round", 5);
            store.save_session(&s).await.unwrap();
            let loaded = store.load_session("round", env()).await.unwrap().unwrap();
            assert_eq!(loaded.export_json(), s.borrow().export_json());
            assert!(store
                .load_session("missing", env())
                .await
                .unwrap()
                .is_none());
        }
        "session_incremental" => {
            let s = recorded("inc", 3);
            let first = store.save_session(&s).await.unwrap();
            assert_eq!(first.events_written, 6);
            s.borrow_mut()
                .record("user_input", json!("more"), None)
                .unwrap();
            let second = store.save_session(&s).await.unwrap();
            assert_eq!((second.events_written, second.rewritten), (1, false));
            let third = store.save_session(&s).await.unwrap();
            assert_eq!(third.events_written, 0);
            let loaded = store.load_session("inc", env()).await.unwrap().unwrap();
            assert_eq!(loaded.export_json(), s.borrow().export_json());
        }
        "session_stale" => {
            let saved = recorded("same-id", 4);
            store.save_session(&saved).await.unwrap();
            // A copy loaded now, then another save from the original.
            let copy = RefCell::new(store.load_session("same-id", env()).await.unwrap().unwrap());
            saved
                .borrow_mut()
                .record("user_input", json!("from the first writer"), None)
                .unwrap();
            store.save_session(&saved).await.unwrap();
            copy.borrow_mut()
                .record("user_input", json!("from the stale copy"), None)
                .unwrap();
            let err = store.save_session(&copy).await.unwrap_err();
            assert_eq!(err.code(), ErrorCode::StoreConflict, "{err}");
            // A different log under the same id.
            let other = RefCell::new(Session::with_env(
                Some("same-id".into()),
                StepClock::new(5e12, 1.0),
                Rc::new(DefaultTokenCounter),
                99,
            ));
            other
                .borrow_mut()
                .record("user_input", json!("new log"), None)
                .unwrap();
            let err = store.save_session(&other).await.unwrap_err();
            assert_eq!(err.code(), ErrorCode::StoreConflict, "{err}");
            let loaded = store.load_session("same-id", env()).await.unwrap().unwrap();
            assert_eq!(loaded.export_json(), saved.borrow().export_json());
            assert!(store.delete_session("same-id").await.unwrap());
            store.save_session(&other).await.unwrap();
            let loaded = store.load_session("same-id", env()).await.unwrap().unwrap();
            assert_eq!(loaded.export_json(), other.borrow().export_json());
        }
        "session_tail" => {
            let s = recorded("tail", 2);
            store.save_session(&s).await.unwrap();
            for i in 0..3 {
                s.borrow_mut()
                    .record("user_input", json!(format!("more {i}")), None)
                    .unwrap();
                store.save_session(&s).await.unwrap();
            }
            let exported: serde_json::Value =
                serde_json::from_str(&s.borrow().export_json()).unwrap();
            let events = exported["events"].as_array().unwrap().clone();
            let id = |i: usize| events[i]["eventId"].as_str().unwrap().to_string();
            let tail = store
                .load_events_after("tail", 4, Some(&id(3)))
                .await
                .unwrap()
                .unwrap();
            assert_eq!((tail.start, tail.expected), (4, 7));
            assert_eq!(tail.events, events[4..]);
            let nothing_new = store
                .load_events_after("tail", 7, Some(&id(6)))
                .await
                .unwrap()
                .unwrap();
            assert_eq!((nothing_new.start, nothing_new.events.len()), (7, 0));
            for (known, last) in [
                (4, Some("not-its-id")),
                (4, None),
                (9, Some(id(3).as_str())),
                (0, None),
            ] {
                let whole = store
                    .load_events_after("tail", known, last)
                    .await
                    .unwrap()
                    .unwrap();
                assert_eq!((whole.start, whole.expected), (0, 7), "{known} {last:?}");
                assert_eq!(whole.events, events, "{known} {last:?}");
            }
            assert!(store
                .load_events_after("missing", 1, Some(&id(0)))
                .await
                .unwrap()
                .is_none());
        }
        "session_list_delete" => {
            store.save_session(&recorded("b/2", 1)).await.unwrap();
            store.save_session(&recorded("a#1", 1)).await.unwrap();
            assert_eq!(store.list_sessions().await.unwrap(), vec!["a#1", "b/2"]);
            assert!(store.delete_session("a#1").await.unwrap());
            assert!(!store.delete_session("a#1").await.unwrap());
            assert_eq!(store.list_sessions().await.unwrap(), vec!["b/2"]);
            assert!(store.load_session("a#1", env()).await.unwrap().is_none());
        }
        "session_ids" => {
            let upper = "X".repeat(1024);
            let cjk = "東".repeat(341);
            for id in [&upper, &cjk] {
                store.save_session(&recorded(id, 2)).await.unwrap();
                let loaded = store.load_session(id, env()).await.unwrap().unwrap();
                assert_eq!(loaded.session_id(), id.as_str());
                assert_eq!(loaded.event_log().len(), 4);
            }
            let mut expected = vec![upper.clone(), cjk.clone()];
            expected.sort();
            assert_eq!(store.list_sessions().await.unwrap(), expected);
            for bad in [
                "x".repeat(1025),
                "東".repeat(342),
                "a\0b".to_string(),
                String::new(),
            ] {
                let code = |e: context_compiler::Error| e.code();
                let s = RefCell::new(session(&bad));
                assert_eq!(
                    store.save_session(&s).await.map_err(code).unwrap_err(),
                    ErrorCode::InvalidArgument
                );
                assert_eq!(
                    store
                        .load_session(&bad, env())
                        .await
                        .map(|_| ())
                        .map_err(code)
                        .unwrap_err(),
                    ErrorCode::InvalidArgument
                );
                assert_eq!(
                    store.delete_session(&bad).await.map_err(code).unwrap_err(),
                    ErrorCode::InvalidArgument
                );
                assert_eq!(
                    store
                        .store(b"by a bad id", "x", opts(Some(&bad)))
                        .await
                        .map_err(code)
                        .unwrap_err(),
                    ErrorCode::InvalidArgument
                );
                assert_eq!(
                    store
                        .list_handles(Some(&bad))
                        .await
                        .map_err(code)
                        .unwrap_err(),
                    ErrorCode::InvalidArgument
                );
            }
            assert_eq!(
                store.list_sessions().await.unwrap(),
                expected,
                "nothing written"
            );
            assert!(
                store.list_handles(None).await.unwrap().is_empty(),
                "nothing stored"
            );
        }
        other => panic!("no behaviour named {other}"),
    }
}

/// The fixture's behaviour names; `run` panics on a name it does not implement.
fn behaviours() -> Vec<String> {
    let text = std::fs::read_to_string("tests/fixtures/store_conformance.json").unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["behaviours"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect()
}

fn run_all<B: Backend>(b: &B) {
    let names = behaviours();
    assert!(names.len() >= 14, "the fixture lists the behaviours");
    for name in names {
        block_on(run(b, &name));
    }
}

#[test]
fn memory_store_conforms() {
    run_all(&Memory);
}

#[test]
fn kv_store_conforms() {
    run_all(&Kv {
        value_limit: None,
        chunk_bytes: 64 * 1024,
    });
}

#[test]
fn kv_store_with_deno_value_limit_conforms() {
    run_all(&Kv {
        value_limit: Some(64 * 1024),
        chunk_bytes: 64 * 1024,
    });
}

fn run_fs(backend: Fs) {
    run_all(&backend);
    let _ = std::fs::remove_dir_all(backend.parent());
}

#[test]
fn fs_store_conforms() {
    run_fs(Fs {
        chunk_bytes: DEFAULT_FS_CHUNK_BYTES,
    });
}

#[test]
fn fs_store_with_chunk_files_conforms() {
    run_fs(Fs { chunk_bytes: 4096 });
}

#[test]
fn kv_store_with_tiny_chunks_conforms() {
    run_all(&Kv {
        value_limit: Some(1024),
        chunk_bytes: 1024,
    });
}

/// A store of one's own, written with the public helpers only: it saves the
/// whole log as JSON and restores it checked.
#[derive(Default)]
struct ThirdPartyStore {
    saved: RefCell<std::collections::BTreeMap<String, (u64, String)>>,
}

#[async_trait::async_trait(?Send)]
impl SessionStore for ThirdPartyStore {
    async fn save_session(
        &self,
        session: &dyn SessionSource,
    ) -> context_compiler::Result<context_compiler::SaveReport> {
        let events = session.events_from(0)?;
        let body = serde_json::to_string(&events).unwrap();
        let (id, count) = (session.session_id()?, events.len() as u64);
        self.saved.borrow_mut().insert(id, (count, body));
        Ok(context_compiler::SaveReport {
            events_written: count,
            rewritten: true,
        })
    }
    async fn load_events(&self, session_id: &str) -> context_compiler::Result<Option<SavedEvents>> {
        let Some((expected, body)) = self.saved.borrow().get(session_id).cloned() else {
            return Ok(None);
        };
        let events: Vec<serde_json::Value> = serde_json::from_str(&body).unwrap();
        Ok(Some(SavedEvents { events, expected }))
    }
    async fn list_sessions(&self) -> context_compiler::Result<Vec<String>> {
        Ok(self.saved.borrow().keys().cloned().collect())
    }
    async fn delete_session(&self, session_id: &str) -> context_compiler::Result<bool> {
        Ok(self.saved.borrow_mut().remove(session_id).is_some())
    }
}

#[test]
fn a_third_party_store_builds_on_the_public_helpers() {
    block_on(async {
        let store = ThirdPartyStore::default();
        let s = RefCell::new(session("third"));
        s.borrow_mut()
            .record("user_input", json!("hi"), None)
            .unwrap();
        store.save_session(&s).await.unwrap();
        let env = || SessionEnv {
            clock: Rc::new(context_compiler::clock::SystemClock),
            counter: Rc::new(DefaultTokenCounter),
            seed: 1,
        };
        let back = store.load_session("third", env()).await.unwrap().unwrap();
        assert_eq!(back.export_json(), s.borrow().export_json());
        // A store whose record says more events than it holds: corrupt.
        store.saved.borrow_mut().get_mut("third").unwrap().0 = 2;
        let err = store.load_session("third", env()).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreCorrupt);
    });
}
