//! Several writers of one session over one backend, natively: two store
//! instances over one key-value store (with and without a conditional
//! write), two over one directory, one memory store shared by two sessions.
//! Their operations interleave at seeded points; a failure is injected at
//! every write step of a save. Nothing acknowledged is lost, a stale save
//! rejects whole, and the session always loads. The JS suite
//! (tests/js/store_writers.test.mjs) runs the same over the npm package's
//! stores, real processes and a kill loop.

mod common;

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, join_all, yield_turns, StepClock};
use context_compiler::clock::{Clock, IdRng};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::kv::{KeyValue, KvArtifactStore, KvStoreOptions, MemoryKv};
use context_compiler::memory::{MemoryEntry, MemoryStore, PersistentMemory};
use context_compiler::session::{
    retry_delay_ms, sync_session, SessionEnv, SessionStore, SyncOptions,
};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::{FileSystem, FsKv, MemoryArtifactStore, Session, StdFileSystem};
use serde_json::json;

/// Seeded interleaving and write failures shared by the wrappers below.
struct Chaos {
    rng: Cell<u64>,
    writes: Cell<usize>,
    fail_at: Cell<Option<usize>>,
}

impl Chaos {
    fn new(seed: u64) -> Rc<Chaos> {
        Rc::new(Chaos {
            rng: Cell::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
            writes: Cell::new(0),
            fail_at: Cell::new(None),
        })
    }

    /// Lets the other writers run for a seeded number of turns (0 to 3).
    async fn step(&self) {
        let mut x = self.rng.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng.set(x);
        yield_turns((x % 4) as u32).await;
    }

    /// Counts one write; the armed one fails.
    fn write(&self, what: &str) -> Result<()> {
        let n = self.writes.get();
        self.writes.set(n + 1);
        if self.fail_at.get() == Some(n) {
            return Err(Error::new(
                ErrorCode::StoreFailed,
                format!("injected failure at write {n} ({what})"),
            ));
        }
        Ok(())
    }
}

/// A key-value store shared by several store instances, interleaving their
/// operations; `conditional` says whether it offers `put_if`.
struct ChaosKv {
    inner: Rc<MemoryKv>,
    chaos: Rc<Chaos>,
    conditional: bool,
}

#[async_trait(?Send)]
impl KeyValue for ChaosKv {
    type Value = Vec<u8>;
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.chaos.step().await;
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.chaos.step().await;
        self.chaos.write(&format!("put {key}"))?;
        self.inner.put(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.chaos.step().await;
        self.chaos.write(&format!("delete {key}"))?;
        self.inner.delete(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        self.chaos.step().await;
        self.inner.list(prefix).await
    }
    fn has_put_if(&self) -> bool {
        self.conditional
    }
    async fn put_if(&self, key: &str, value: Vec<u8>, expected: Option<&Vec<u8>>) -> Result<bool> {
        self.chaos.step().await;
        self.chaos.write(&format!("put_if {key}"))?;
        self.inner.put_if(key, value, expected).await
    }
}

/// Files under one directory, interleaving and failing like [`ChaosKv`].
struct ChaosFs {
    inner: StdFileSystem,
    chaos: Rc<Chaos>,
}

#[async_trait(?Send)]
impl FileSystem for ChaosFs {
    type Bytes = Vec<u8>;
    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        self.chaos.step().await;
        self.inner.read(path).await
    }
    async fn write_atomic(&self, path: &str, bytes: Vec<u8>) -> Result<()> {
        self.chaos.step().await;
        self.chaos.write(&format!("write {path}"))?;
        self.inner.write_atomic(path, bytes).await
    }
    async fn remove(&self, path: &str) -> Result<()> {
        self.chaos.step().await;
        self.chaos.write(&format!("remove {path}"))?;
        self.inner.remove(path).await
    }
    async fn list_files(&self, dir: &str) -> Result<Vec<String>> {
        self.chaos.step().await;
        self.inner.list_files(dir).await
    }
    fn has_create_new(&self) -> bool {
        true
    }
    async fn create_new(&self, path: &str, bytes: Vec<u8>) -> Result<bool> {
        self.chaos.step().await;
        self.chaos.write(&format!("create {path}"))?;
        self.inner.create_new(path, bytes).await
    }
}

/// A backend several store instances share.
trait Backend {
    /// A new store instance over the backend, with its own interleaving.
    fn store(&self, chaos: Rc<Chaos>) -> Rc<dyn SessionStore>;
    /// Whether writers racing on it keep every acknowledged event (a KV
    /// without a conditional write is single-writer).
    fn multi_writer(&self) -> bool {
        true
    }
}

struct SharedKv {
    kv: Rc<MemoryKv>,
    conditional: bool,
    chunk_bytes: usize,
}

impl SharedKv {
    fn new(conditional: bool, chunk_bytes: usize) -> SharedKv {
        SharedKv {
            kv: Rc::new(MemoryKv::new()),
            conditional,
            chunk_bytes,
        }
    }
}

impl Backend for SharedKv {
    fn store(&self, chaos: Rc<Chaos>) -> Rc<dyn SessionStore> {
        let kv = ChaosKv {
            inner: self.kv.clone(),
            chaos,
            conditional: self.conditional,
        };
        let options = KvStoreOptions {
            chunk_bytes: self.chunk_bytes,
            ..KvStoreOptions::default()
        };
        Rc::new(KvArtifactStore::new(kv, StepClock::new(1000.0, 1.0), options).unwrap())
    }
    fn multi_writer(&self) -> bool {
        self.conditional
    }
}

struct SharedDir {
    dir: PathBuf,
}

impl SharedDir {
    fn new(name: &str) -> SharedDir {
        let dir = std::env::temp_dir().join(format!("acc-writers-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        SharedDir { dir }
    }
}

impl Drop for SharedDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Backend for SharedDir {
    fn store(&self, chaos: Rc<Chaos>) -> Rc<dyn SessionStore> {
        let fs = ChaosFs {
            inner: StdFileSystem::new(&self.dir),
            chaos,
        };
        Rc::new(
            KvArtifactStore::new(
                FsKv::new(fs),
                StepClock::new(1000.0, 1.0),
                KvStoreOptions::default(),
            )
            .unwrap(),
        )
    }
}

/// One memory store, shared by every writer (it has no backend of its own).
struct SharedMemory(Rc<MemoryArtifactStore>);

impl Backend for SharedMemory {
    fn store(&self, _chaos: Rc<Chaos>) -> Rc<dyn SessionStore> {
        self.0.clone()
    }
}

fn backends(name: &str) -> Vec<(String, Box<dyn Backend>)> {
    vec![
        (
            "kv with putIf".into(),
            Box::new(SharedKv::new(true, 64 * 1024)),
        ),
        (
            "kv with putIf, 1 KiB chunks".into(),
            Box::new(SharedKv::new(true, 1024)),
        ),
        (
            "kv without putIf".into(),
            Box::new(SharedKv::new(false, 64 * 1024)),
        ),
        ("directory".into(), Box::new(SharedDir::new(name))),
        (
            "memory".into(),
            Box::new(SharedMemory(Rc::new(MemoryArtifactStore::new(
                StepClock::new(1000.0, 1.0),
            )))),
        ),
    ]
}

/// A backend's name, the backend, and store instances over it.
type RacingStores = (String, Box<dyn Backend>, Vec<Rc<dyn SessionStore>>);

/// Three store instances over each backend that several writers may share,
/// each interleaving by its own seed; the backend is kept beside them (a
/// directory is removed when it is dropped).
fn racing_stores(tag: &str, seed: u64) -> Vec<RacingStores> {
    backends(tag)
        .into_iter()
        .filter(|(_, backend)| backend.multi_writer())
        .map(|(name, backend)| {
            let stores = (0..3)
                .map(|w| backend.store(Chaos::new(seed * 10 + w)))
                .collect();
            (name, backend, stores)
        })
        .collect()
}

thread_local! {
    static NEXT_SEED: Cell<u64> = const { Cell::new(1) };
}

/// A fresh environment for a loaded session: its own id seed, so two
/// writers never make the same event id.
fn env() -> SessionEnv {
    let seed = NEXT_SEED.with(|n| {
        let s = n.get();
        n.set(s + 1);
        s
    });
    SessionEnv {
        clock: StepClock::new(2e12 + seed as f64 * 1e6, 1.0),
        counter: Rc::new(DefaultTokenCounter),
        seed: seed.wrapping_mul(0xA24B_AED4_963E_E407),
    }
}

fn fresh(id: &str) -> Session {
    let env = env();
    Session::with_env(Some(id.to_string()), env.clock, env.counter, env.seed)
}

async fn load(store: &dyn SessionStore, id: &str) -> Session {
    match store.load_session(id, env()).await {
        Ok(Some(s)) => s,
        Ok(None) => fresh(id),
        Err(e) => panic!("session {id} does not load: {e}"),
    }
}

/// The texts of a session's user inputs, in order.
fn texts(session: &Session) -> Vec<String> {
    session
        .event_log()
        .all_events()
        .iter()
        .filter_map(|e| e.data.as_str().map(str::to_string))
        .collect()
}

fn say(session: &mut Session, text: &str) {
    session.record("user_input", json!(text), None).unwrap();
}

/// Loads, appends one event and saves, `count` times; on `STORE_CONFLICT`
/// loads again and appends again, as docs/storage.md says. The texts whose save
/// resolved, and how many conflicts there were.
async fn writer(
    store: Rc<dyn SessionStore>,
    id: &str,
    name: &str,
    count: usize,
) -> (Vec<String>, usize) {
    let mut acknowledged = Vec::new();
    let mut conflicts = 0;
    for i in 0..count {
        let text = format!("{name}-{i}");
        loop {
            let mut session = load(store.as_ref(), id).await;
            say(&mut session, &text);
            match store.save_session(&RefCell::new(session)).await {
                Ok(_) => break,
                Err(e) if e.code() == ErrorCode::StoreConflict => conflicts += 1,
                Err(e) => panic!("{name}'s save failed: {e}"),
            }
        }
        acknowledged.push(text);
    }
    (acknowledged, conflicts)
}

#[test]
fn a_stale_save_rejects_whole_on_every_backend() {
    for (name, backend) in backends("stale") {
        let (a_store, b_store) = (backend.store(Chaos::new(1)), backend.store(Chaos::new(2)));
        block_on(async {
            let mut base = fresh("s");
            say(&mut base, "first");
            a_store.save_session(&RefCell::new(base)).await.unwrap();
            let mut a = load(a_store.as_ref(), "s").await;
            let mut b = load(b_store.as_ref(), "s").await;
            say(&mut a, "from a");
            say(&mut b, "from b");
            a_store.save_session(&RefCell::new(a)).await.unwrap();
            let err = b_store.save_session(&RefCell::new(b)).await.unwrap_err();
            assert_eq!(err.code(), ErrorCode::StoreConflict, "{name}: {err}");
            let loaded = load(b_store.as_ref(), "s").await;
            assert_eq!(texts(&loaded), ["first", "from a"], "{name}");
        });
    }
}

#[test]
fn racing_writers_keep_every_acknowledged_event() {
    for seed in 0..6u64 {
        for (name, _backend, stores) in racing_stores(&format!("race{seed}"), seed) {
            let results =
                block_on(join_all(stores.iter().enumerate().map(|(w, store)| {
                    writer(store.clone(), "shared", ["a", "b", "c"][w], 8)
                })));
            let loaded = block_on(load(stores[0].as_ref(), "shared"));
            let mut saved = texts(&loaded);
            let mut acknowledged: Vec<String> =
                results.iter().flat_map(|(a, _)| a.clone()).collect();
            saved.sort();
            acknowledged.sort();
            assert_eq!(
                saved, acknowledged,
                "{name}, seed {seed}: each acknowledged event exactly once"
            );
            if name != "memory" {
                let conflicts: usize = results.iter().map(|(_, c)| c).sum();
                assert!(
                    conflicts > 0,
                    "{name}, seed {seed}: the writers never raced"
                );
            }
        }
    }
}

#[test]
fn a_failure_at_any_write_of_a_save_keeps_the_saved_session() {
    for (name, backend) in backends("fail") {
        if name == "memory" {
            continue; // no writes to fail
        }
        let mut step = 0;
        loop {
            let id = format!("s{step}");
            let chaos = Chaos::new(step as u64);
            let store = backend.store(chaos.clone());
            let mut session = fresh(&id);
            say(&mut session, "saved 1");
            say(&mut session, "saved 2");
            let session = RefCell::new(session);
            block_on(store.save_session(&session)).unwrap();
            for i in 0..40 {
                // Enough to split into chunks over 1 KiB values.
                say(
                    &mut session.borrow_mut(),
                    &format!("new {i} {}", "x".repeat(60)),
                );
            }
            let before = chaos.writes.get();
            chaos.fail_at.set(Some(before + step));
            let result = block_on(store.save_session(&session));
            chaos.fail_at.set(None);
            let failed_at_all = chaos.writes.get() > before + step;
            let loaded = block_on(load(store.as_ref(), &id));
            let n = loaded.event_log().all_events().len();
            match &result {
                Ok(_) => assert_eq!(n, 42, "{name}, failure at write {step}: acknowledged"),
                Err(e) => {
                    assert_eq!(e.code(), ErrorCode::StoreFailed, "{name}: {e}");
                    assert!(
                        n == 2 || n == 42,
                        "{name}, failure at write {step}: {n} events"
                    );
                }
            }
            // Whatever happened, the next save completes it.
            block_on(store.save_session(&session)).unwrap();
            assert_eq!(
                block_on(load(store.as_ref(), &id))
                    .event_log()
                    .all_events()
                    .len(),
                42
            );
            if !failed_at_all {
                assert!(step > 0, "{name}: a save wrote nothing");
                break;
            }
            step += 1;
        }
    }
}

fn fact(key: &str) -> MemoryEntry {
    MemoryEntry::new(key, &format!("fact {key}"), "core")
}

#[test]
fn two_persistent_memories_over_one_store_keep_every_fact() {
    for (name, backend) in backends("memory") {
        if !backend.multi_writer() {
            continue;
        }
        let (one, two) = block_on(async {
            let one = PersistentMemory::open(backend.store(Chaos::new(3)), "facts", env())
                .await
                .unwrap();
            let two = PersistentMemory::open(backend.store(Chaos::new(4)), "facts", env())
                .await
                .unwrap();
            (one, two)
        });
        block_on(join_all((0..3).map(|i| {
            let (one, two) = (&one, &two);
            async move {
                one.put(fact(&format!("one-{i}"))).await.unwrap();
                two.put(fact(&format!("two-{i}"))).await.unwrap();
            }
        })));
        let reopened = block_on(PersistentMemory::open(
            backend.store(Chaos::new(5)),
            "facts",
            env(),
        ))
        .unwrap();
        assert_eq!(reopened.len(), 6, "{name}: every fact whose put resolved");
    }
}

/// Holds one session for its whole life, recording `count` turns (a user
/// input, then a tool call and its outcome) and syncing after each. The
/// texts of the user inputs whose sync resolved.
async fn syncing_writer(
    store: Rc<dyn SessionStore>,
    id: &str,
    name: &str,
    count: usize,
    seed: u64,
) -> (Vec<String>, u32) {
    let session = RefCell::new(fresh(id));
    let clock = StepClock::new(0.0, 1.0);
    let mut rng = IdRng::new(seed);
    let mut acknowledged = Vec::new();
    let mut tries = 0;
    for i in 0..count {
        let text = format!("{name}-{i}");
        {
            let mut s = session.borrow_mut();
            say(&mut s, &text);
            let call = s
                .record("tool_call", json!({"tool": "t", "args": {"n": i}}), None)
                .unwrap()
                .event_id
                .clone();
            s.record(
                "tool_success",
                json!({"tool": "t", "result": text, "call_event_id": call}),
                None,
            )
            .unwrap();
        }
        let report = sync_session(
            store.as_ref(),
            &session,
            clock.as_ref(),
            &mut rng,
            &SyncOptions {
                max_tries: 1000,
                ..SyncOptions::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{name}'s sync failed: {e}"));
        tries += report.tries;
        acknowledged.push(text);
    }
    (acknowledged, tries)
}

#[test]
fn syncing_writers_keep_every_event_once_in_one_order_with_calls_beside_outcomes() {
    for seed in 0..4u64 {
        for (name, _backend, stores) in racing_stores(&format!("sync{seed}"), seed) {
            let results = block_on(join_all(stores.iter().enumerate().map(|(w, store)| {
                syncing_writer(
                    store.clone(),
                    "shared",
                    ["a", "b", "c"][w],
                    6,
                    seed + w as u64,
                )
            })));
            let loaded = block_on(load(stores[0].as_ref(), "shared"));
            let events = loaded.event_log().all_events();
            let mut saved: Vec<String> = events
                .iter()
                .filter(|e| e.kind == "user_input")
                .filter_map(|e| e.data.as_str().map(str::to_string))
                .collect();
            let mut acknowledged: Vec<String> =
                results.iter().flat_map(|(a, _)| a.clone()).collect();
            saved.sort();
            acknowledged.sort();
            assert_eq!(saved, acknowledged, "{name}, seed {seed}: each event once");
            assert_eq!(events.len(), 3 * 6 * 3, "{name}, seed {seed}");
            // A turn's three events, recorded together, stay together.
            for (i, e) in events.iter().enumerate() {
                if e.kind == "user_input" {
                    assert_eq!(events[i + 1].kind, "tool_call", "{name}, seed {seed}");
                    assert_eq!(events[i + 2].kind, "tool_success", "{name}, seed {seed}");
                    assert_eq!(
                        events[i + 2].data["call_event_id"].as_str(),
                        Some(events[i + 1].event_id.as_str())
                    );
                }
            }
            assert!(
                events.windows(2).all(|w| w[0].timestamp <= w[1].timestamp),
                "{name}, seed {seed}: times never decrease"
            );
            // Every reader sees one order.
            let again = block_on(load(stores[1].as_ref(), "shared"));
            let ids = |s: &Session| -> Vec<String> {
                s.event_log()
                    .all_events()
                    .iter()
                    .map(|e| e.event_id.clone())
                    .collect()
            };
            assert_eq!(ids(&loaded), ids(&again));
            if name != "memory" {
                let tries: u32 = results.iter().map(|(_, t)| t).sum();
                assert!(tries > 18, "{name}, seed {seed}: the writers never raced");
            }
        }
    }
}

/// A store whose every save conflicts: another writer always got there first.
struct AlwaysAhead {
    inner: MemoryArtifactStore,
    others: Cell<u32>,
}

#[async_trait(?Send)]
impl SessionStore for AlwaysAhead {
    async fn save_session(
        &self,
        session: &dyn context_compiler::session::SessionSource,
    ) -> Result<context_compiler::session::SaveReport> {
        // Another writer saves one event first.
        let id = session.session_id()?;
        let mut other = match self.inner.load_session(&id, env()).await? {
            Some(s) => s,
            None => fresh(&id),
        };
        let n = self.others.get();
        self.others.set(n + 1);
        say(&mut other, &format!("other-{n}"));
        self.inner.save_session(&RefCell::new(other)).await?;
        self.inner.save_session(session).await
    }
    async fn load_events(
        &self,
        session_id: &str,
    ) -> Result<Option<context_compiler::session::SavedEvents>> {
        self.inner.load_events(session_id).await
    }
    async fn list_sessions(&self) -> Result<Vec<String>> {
        self.inner.list_sessions().await
    }
    async fn delete_session(&self, session_id: &str) -> Result<bool> {
        self.inner.delete_session(session_id).await
    }
}

#[test]
fn a_sync_that_always_loses_gives_up_after_max_tries_with_nothing_lost() {
    let store = AlwaysAhead {
        inner: MemoryArtifactStore::new(StepClock::new(1000.0, 1.0)),
        others: Cell::new(0),
    };
    let session = RefCell::new(fresh("busy"));
    say(&mut session.borrow_mut(), "mine");
    let clock = StepClock::new(0.0, 0.0);
    let err = block_on(sync_session(
        &store,
        &session,
        clock.as_ref(),
        &mut IdRng::new(7),
        &SyncOptions::default(),
    ))
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreConflict);
    assert!(err.message().contains("8 saves"), "{}", err.message());
    // Eight tries, seven merges: the session holds the others' first seven
    // events before its own, unsaved.
    let held = texts(&session.borrow());
    assert_eq!(held.last().map(String::as_str), Some("mine"));
    assert_eq!(held.len(), 8);
    assert!(!texts(&block_on(load(&store.inner, "busy"))).contains(&"mine".to_string()));
    // The backoff waited between tries, within the jitter's ceilings.
    let waited = clock.now_ms();
    let ceiling: f64 = (2..=8)
        .map(|t| retry_delay_ms(t, 1.0, &SyncOptions::default()))
        .sum();
    assert!(waited > 0.0 && waited <= ceiling, "{waited} of {ceiling}");
}

#[test]
fn a_sync_after_the_session_was_deleted_saves_it_again_whole() {
    let store = MemoryArtifactStore::new(StepClock::new(1000.0, 1.0));
    let session = RefCell::new(fresh("gone"));
    say(&mut session.borrow_mut(), "one");
    let clock = StepClock::new(0.0, 0.0);
    let mut rng = IdRng::new(1);
    let options = SyncOptions::default();
    let mut sync = || {
        block_on(sync_session(
            &store,
            &session,
            clock.as_ref(),
            &mut rng,
            &options,
        ))
        .unwrap()
    };
    sync();
    assert!(block_on(store.delete_session("gone")).unwrap());
    say(&mut session.borrow_mut(), "two");
    let report = sync();
    assert_eq!((report.tries, report.events_written), (1, 2));
    assert_eq!(texts(&block_on(load(&store, "gone"))), ["one", "two"]);
}

#[test]
fn retry_delays_are_jittered_below_a_doubling_ceiling() {
    let o = SyncOptions::default();
    assert_eq!(retry_delay_ms(2, 1.0, &o), 10.0);
    assert_eq!(retry_delay_ms(3, 1.0, &o), 20.0);
    assert_eq!(retry_delay_ms(8, 1.0, &o), 640.0);
    assert_eq!(retry_delay_ms(20, 1.0, &o), 1000.0);
    assert_eq!(retry_delay_ms(5, 0.5, &o), 40.0);
    assert_eq!(retry_delay_ms(5, -3.0, &o), 0.0);
}

/// A store that reports the events each reload after a conflict handed
/// back, and refuses to read a whole saved log.
struct TailOnly {
    inner: KvArtifactStore<MemoryKv>,
    reloaded: RefCell<Vec<(u64, usize)>>,
}

#[async_trait(?Send)]
impl SessionStore for TailOnly {
    async fn save_session(
        &self,
        session: &dyn context_compiler::session::SessionSource,
    ) -> Result<context_compiler::session::SaveReport> {
        self.inner.save_session(session).await
    }
    async fn load_events(
        &self,
        _session_id: &str,
    ) -> Result<Option<context_compiler::session::SavedEvents>> {
        Err(Error::new(
            ErrorCode::StoreFailed,
            "a sync read the whole saved log",
        ))
    }
    async fn load_events_after(
        &self,
        session_id: &str,
        known: u64,
        last_event_id: Option<&str>,
    ) -> Result<Option<context_compiler::session::SavedTail>> {
        let tail = self
            .inner
            .load_events_after(session_id, known, last_event_id)
            .await?;
        if let Some(t) = &tail {
            self.reloaded.borrow_mut().push((t.start, t.events.len()));
        }
        Ok(tail)
    }
    async fn list_sessions(&self) -> Result<Vec<String>> {
        self.inner.list_sessions().await
    }
    async fn delete_session(&self, session_id: &str) -> Result<bool> {
        self.inner.delete_session(session_id).await
    }
}

#[test]
fn a_conflicted_sync_reloads_only_what_other_writers_saved_since_its_last_save() {
    let store = TailOnly {
        inner: KvArtifactStore::new(
            MemoryKv::new(),
            StepClock::new(1000.0, 1.0),
            KvStoreOptions::default(),
        )
        .unwrap(),
        reloaded: RefCell::default(),
    };
    let clock = StepClock::new(0.0, 0.0);
    let mut rng = IdRng::new(3);
    let sync = |session: &RefCell<Session>, rng: &mut IdRng| {
        block_on(sync_session(
            &store,
            session,
            clock.as_ref(),
            rng,
            &SyncOptions::default(),
        ))
        .unwrap()
    };
    let mine = RefCell::new(fresh("shared"));
    for i in 0..50 {
        say(&mut mine.borrow_mut(), &format!("mine-{i}"));
    }
    assert_eq!(sync(&mine, &mut rng).tries, 1);
    // Another writer loads it, adds two events and saves.
    let theirs = RefCell::new(block_on(load(&store.inner, "shared")));
    say(&mut theirs.borrow_mut(), "theirs-0");
    say(&mut theirs.borrow_mut(), "theirs-1");
    block_on(store.inner.save_session(&theirs)).unwrap();
    say(&mut mine.borrow_mut(), "mine-50");
    let report = sync(&mine, &mut rng);
    assert_eq!((report.tries, report.merged), (2, 2));
    assert_eq!(
        *store.reloaded.borrow(),
        [(50, 2)],
        "only the two new events"
    );
    let held = texts(&mine.borrow());
    assert_eq!(held[49..], ["mine-49", "theirs-0", "theirs-1", "mine-50"]);
    assert_eq!(texts(&block_on(load(&store.inner, "shared"))), held);
    // A loaded session knows what it holds too, and so does one saved
    // directly (its own save above told it): only what the other writer
    // saved after that comes back.
    say(&mut theirs.borrow_mut(), "theirs-2");
    let report = sync(&theirs, &mut rng);
    assert_eq!((report.tries, report.merged), (2, 1));
    assert_eq!(store.reloaded.borrow()[1], (52, 1));
    assert_eq!(
        texts(&block_on(load(&store.inner, "shared")))[50..],
        ["theirs-0", "theirs-1", "mine-50", "theirs-2"]
    );
}

#[test]
fn a_merged_tail_counts_only_the_events_new_to_the_session() {
    let store = KvArtifactStore::new(
        MemoryKv::new(),
        StepClock::new(1000.0, 1.0),
        KvStoreOptions::default(),
    )
    .unwrap();
    let counter = common::CountingCounter::new();
    let env = env();
    let mine = RefCell::new(Session::with_env(
        Some("counted".into()),
        env.clock,
        counter.clone(),
        env.seed,
    ));
    for i in 0..40 {
        say(&mut mine.borrow_mut(), &format!("mine-{i}"));
    }
    block_on(store.save_session(&mine)).unwrap();
    mine.borrow().note_saved(40);
    let theirs = RefCell::new(block_on(load(&store, "counted")));
    say(&mut theirs.borrow_mut(), "theirs");
    block_on(store.save_session(&theirs)).unwrap();
    say(&mut mine.borrow_mut(), "mine-40");
    let (known, last) = {
        let s = mine.borrow();
        let (known, last) = s.saved_prefix();
        (known, last.map(str::to_string))
    };
    assert_eq!(known, 40);
    let tail = block_on(store.load_events_after("counted", known, last.as_deref()))
        .unwrap()
        .unwrap();
    let before = counter.calls.get();
    assert_eq!(mine.borrow_mut().merge_saved_tail(&tail).unwrap(), 1);
    assert_eq!(
        counter.calls.get() - before,
        1,
        "one event counted: the new one"
    );
    assert_eq!(mine.borrow().saved_prefix().0, 41);
    let held = texts(&mine.borrow());
    assert_eq!(held[39..], ["mine-39", "theirs", "mine-40"]);
    // The counts kept are the ones a fresh count gives.
    let recounted = SessionEnv {
        clock: StepClock::new(0.0, 1.0),
        counter: Rc::new(DefaultTokenCounter),
        seed: 1,
    }
    .session("counted", mine.borrow().event_log().events().to_vec())
    .unwrap();
    assert_eq!(
        recounted.event_log().total_tokens(),
        mine.borrow().event_log().total_tokens()
    );
    // A tail whose length disagrees with its count is refused whole.
    let mut bad = tail.clone();
    bad.expected += 1;
    let err = mine.borrow_mut().merge_saved_tail(&bad).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreCorrupt);
    assert_eq!(texts(&mine.borrow()), held);
}

#[test]
fn a_session_whose_syncs_lost_races_paces_its_next_first_save() {
    let store = AlwaysAhead {
        inner: MemoryArtifactStore::new(StepClock::new(1000.0, 1.0)),
        others: Cell::new(0),
    };
    let session = RefCell::new(fresh("paced"));
    say(&mut session.borrow_mut(), "mine");
    let clock = StepClock::new(0.0, 0.0);
    let mut rng = IdRng::new(11);
    let options = SyncOptions {
        max_tries: 3,
        ..SyncOptions::default()
    };
    assert_eq!(session.borrow().sync_pace(), 0);
    block_on(sync_session(
        &store,
        &session,
        clock.as_ref(),
        &mut rng,
        &options,
    ))
    .unwrap_err();
    assert_eq!(session.borrow().sync_pace(), 1, "a sync that gave up");
    // Alone now: the first save waits, within the first retry's ceiling.
    let alone = MemoryArtifactStore::new(StepClock::new(1000.0, 1.0));
    let before = clock.now_ms();
    let report = block_on(sync_session(
        &alone,
        &session,
        clock.as_ref(),
        &mut rng,
        &options,
    ))
    .unwrap();
    let waited = clock.now_ms() - before;
    assert_eq!(report.tries, 1);
    assert!(
        waited > 0.0 && waited <= retry_delay_ms(2, 1.0, &options),
        "{waited}"
    );
    assert_eq!(session.borrow().sync_pace(), 0, "saved at the first try");
    say(&mut session.borrow_mut(), "again");
    let before = clock.now_ms();
    block_on(sync_session(
        &alone,
        &session,
        clock.as_ref(),
        &mut rng,
        &options,
    ))
    .unwrap();
    assert_eq!(clock.now_ms(), before, "no wait once syncs go through");
    // The pace follows the tries: up on a lost race, kept at two (the
    // first save of a shared session meets what others saved: no race),
    // capped.
    let s = session.borrow();
    for (tries, saved, pace) in [(3, true, 1), (2, true, 1), (5, true, 2), (1, true, 1)] {
        s.note_sync(tries, saved);
        assert_eq!(s.sync_pace(), pace, "{tries} {saved}");
    }
    for _ in 0..20 {
        s.note_sync(8, false);
    }
    assert_eq!(s.sync_pace(), context_compiler::session::MAX_SYNC_PACE);
}
