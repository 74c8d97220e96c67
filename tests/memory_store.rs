//! Memory stores: the operations the background handlers need (put,
//! delete, list by subject, last-recall times) on the built-in memory, and
//! the persisted memory over a session store, reopened, faulted and
//! corrupted.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use async_trait::async_trait;
use context_compiler::kv::{KvArtifactStore, KvStoreOptions, MemoryKv};
use context_compiler::memory::{MemoryEntry, MemoryFilter, MemoryStore, PersistentMemory};
use context_compiler::session::{SaveReport, SavedEvents, SessionEnv, SessionSource, SessionStore};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::{Error, ErrorCode, InMemoryBackend, Result, Session};
use serde_json::json;

use common::block_on;
use common::bus::ManualClock;
use common::memory::RecallOnly;

fn env(clock: Rc<ManualClock>) -> SessionEnv {
    SessionEnv {
        clock,
        counter: Rc::new(DefaultTokenCounter),
        seed: 7,
    }
}

/// A session store over an in-memory KV whose saves can be made to fail.
struct Flaky {
    inner: KvArtifactStore<MemoryKv>,
    fail: Cell<bool>,
}

impl Flaky {
    fn new() -> Rc<Flaky> {
        Rc::new(Flaky {
            inner: KvArtifactStore::new(
                MemoryKv::new(),
                ManualClock::at(0.0),
                KvStoreOptions::default(),
            )
            .unwrap(),
            fail: Cell::new(false),
        })
    }
}

#[async_trait(?Send)]
impl SessionStore for Flaky {
    async fn save_session(&self, session: &dyn SessionSource) -> Result<SaveReport> {
        if self.fail.get() {
            return Err(Error::new(ErrorCode::StoreFailed, "injected save failure"));
        }
        self.inner.save_session(session).await
    }
    async fn load_events(&self, id: &str) -> Result<Option<SavedEvents>> {
        self.inner.load_events(id).await
    }
    async fn list_sessions(&self) -> Result<Vec<String>> {
        self.inner.list_sessions().await
    }
    async fn delete_session(&self, id: &str) -> Result<bool> {
        self.inner.delete_session(id).await
    }
}

/// The memory journalled as `name` in `store`, opened on `clock`.
async fn open(store: &Rc<Flaky>, name: &str, clock: &Rc<ManualClock>) -> PersistentMemory {
    PersistentMemory::open(store.clone(), name, env(clock.clone()))
        .await
        .unwrap()
}

fn fact(key: &str, content: &str, subject: &str) -> MemoryEntry {
    MemoryEntry {
        subject: Some(subject.to_string()),
        confidence: Some(0.8),
        source: Some("test".into()),
        ..MemoryEntry::new(key, content, "preference")
    }
}

/// The operations every writable store has, checked on `memory`.
async fn conformance(memory: &dyn MemoryStore, clock: &ManualClock) {
    clock.advance(1000.0);
    let t0 = clock.now();
    memory
        .put(fact("tea", "The user drinks green tea", "user"))
        .await
        .unwrap();
    memory
        .put(fact("db", "The database is Postgres", "infra"))
        .await
        .unwrap();
    memory
        .put(fact("units", "The user wants metric units", "user"))
        .await
        .unwrap();
    let user = MemoryFilter {
        subject: Some("user".into()),
        ..MemoryFilter::default()
    };
    let keys: Vec<String> = memory
        .list(&user)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    assert_eq!(keys, ["tea", "units"]);
    let all = memory.list(&MemoryFilter::default()).await.unwrap();
    assert!(all
        .iter()
        .all(|e| e.created_at == Some(t0) && e.last_recalled_at.is_none()));
    // Recall stamps the hits.
    clock.advance(500.0);
    let hits = memory.recall("green tea", 5).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].last_recalled_at, Some(t0 + 500.0));
    // An update keeps the creation and recall times.
    clock.advance(500.0);
    memory
        .put(fact("tea", "The user drinks green tea, no sugar", "user"))
        .await
        .unwrap();
    let tea = memory.list(&user).await.unwrap().remove(0);
    assert_eq!(tea.content, "The user drinks green tea, no sugar");
    assert_eq!(
        (tea.created_at, tea.last_recalled_at),
        (Some(t0), Some(t0 + 500.0))
    );
    // Delete.
    assert!(memory.delete("db").await.unwrap());
    assert!(!memory.delete("db").await.unwrap());
    assert_eq!(
        memory.list(&MemoryFilter::default()).await.unwrap().len(),
        2
    );
    let by_category = MemoryFilter {
        category: Some("preference".into()),
        ..MemoryFilter::default()
    };
    assert_eq!(memory.list(&by_category).await.unwrap().len(), 2);
}

#[test]
fn the_built_in_memory_has_every_write_operation() {
    let clock = ManualClock::at(1e12);
    let memory = InMemoryBackend::with_clock(clock.clone());
    block_on(conformance(&memory, &clock));
}

#[test]
fn the_persisted_memory_has_every_write_operation_and_reopens_the_same() {
    block_on(async {
        let clock = ManualClock::at(1e12);
        let store = Flaky::new();
        let memory = open(&store, "memory", &clock).await;
        conformance(&memory, &clock).await;
        // Recall times are written by the next save.
        clock.advance(100.0);
        memory.recall("metric units", 1).await.unwrap();
        let recalled = clock.now();
        memory.save().await.unwrap();
        let before = memory.list(&MemoryFilter::default()).await.unwrap();

        let reopened = open(&store, "memory", &clock).await;
        let after = reopened.list(&MemoryFilter::default()).await.unwrap();
        assert_eq!(after, before);
        assert_eq!(after[1].last_recalled_at, Some(recalled));
        assert_eq!(reopened.recall("green tea", 1).await.unwrap()[0].key, "tea");
        // The journal is a session like any other, under its id.
        assert_eq!(store.list_sessions().await.unwrap(), ["memory"]);
        // Another journal id is another memory.
        let other = open(&store, "other", &clock).await;
        assert!(other.is_empty());
    });
}

#[test]
fn a_failed_save_reports_the_error_and_loses_nothing() {
    block_on(async {
        let clock = ManualClock::at(1e12);
        let store = Flaky::new();
        let memory = open(&store, "m", &clock).await;
        memory.put(fact("a", "first fact", "x")).await.unwrap();
        store.fail.set(true);
        let err = memory.put(fact("b", "second fact", "x")).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreFailed);
        let err = memory.delete("a").await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreFailed);
        // Still served from memory.
        assert_eq!(memory.len(), 1);
        assert_eq!(memory.recall("second", 1).await.unwrap()[0].key, "b");
        store.fail.set(false);
        let report = memory.save().await.unwrap();
        assert_eq!(report.events_written, 3, "put b, delete a, recall b");
        let reopened = open(&store, "m", &clock).await;
        let keys: Vec<String> = reopened
            .list(&MemoryFilter::default())
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.key)
            .collect();
        assert_eq!(keys, ["b"]);
    });
}

#[test]
fn concurrent_writes_are_saved_one_after_another() {
    block_on(async {
        let clock = ManualClock::at(1e12);
        let store = Flaky::new();
        let memory = open(&store, "m", &clock).await;
        let writes =
            (0..20).map(|i| memory.put(fact(&format!("k{i}"), &format!("fact number {i}"), "x")));
        let results = futures_join_all(writes).await;
        assert!(results.iter().all(Result::is_ok), "{results:?}");
        let reopened = open(&store, "m", &clock).await;
        assert_eq!(reopened.len(), 20);
    });
}

/// Polls every future until all are done (no runtime needed).
async fn futures_join_all<F: std::future::Future>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output> {
    let mut pending: Vec<std::pin::Pin<Box<F>>> = futures.map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (f, slot) in pending.iter_mut().zip(out.iter_mut()) {
            if slot.is_none() {
                if let std::task::Poll::Ready(v) = f.as_mut().poll(cx) {
                    *slot = Some(v);
                }
            }
        }
        if out.iter().all(Option::is_some) {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    out.into_iter().flatten().collect()
}

#[test]
fn a_corrupt_journal_is_store_corrupt_not_a_panic() {
    block_on(async {
        let clock = ManualClock::at(1e12);
        let store = Flaky::new();
        for (kind, data) in [
            ("memory_put", json!({"entry": {"key": 5}})),
            ("memory_put", json!({})),
            ("memory_delete", json!({"key": null})),
            ("memory_recalled", json!({"at": {"k": "soon"}})),
            ("user_input", json!("not a memory event")),
        ] {
            let journal = RefCell::new(Session::with_env(
                Some("bad".into()),
                clock.clone(),
                Rc::new(DefaultTokenCounter),
                1,
            ));
            journal
                .borrow_mut()
                .record(kind, data.clone(), None)
                .unwrap();
            store.delete_session("bad").await.unwrap();
            store.save_session(&journal).await.unwrap();
            let err = PersistentMemory::open(store.clone(), "bad", env(clock.clone()))
                .await
                .err()
                .unwrap_or_else(|| panic!("{kind} {data} opened"));
            assert_eq!(err.code(), ErrorCode::StoreCorrupt, "{kind} {data}");
        }
        let err = PersistentMemory::open(store, "", env(clock))
            .await
            .err()
            .unwrap();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
    });
}

#[test]
fn a_recall_only_store_refuses_writes_with_memory_failed() {
    block_on(async {
        let err = RecallOnly
            .put(MemoryEntry::new("k", "v", ""))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::MemoryFailed);
        assert_eq!(
            RecallOnly.delete("k").await.unwrap_err().code(),
            ErrorCode::MemoryFailed
        );
        assert_eq!(
            RecallOnly
                .list(&MemoryFilter::default())
                .await
                .unwrap_err()
                .code(),
            ErrorCode::MemoryFailed
        );
    });
}
