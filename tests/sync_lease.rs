//! A sync that lost repeatedly takes the session's lease (src/session/lease.rs),
//! scripted: the stores below let the test decide when another writer's
//! save runs (just before this writer's compare-and-set of the head), so
//! every interleaving is deterministic. On a key-value store with expiring
//! keys and on a directory: the holder cannot lose its next try, other saves
//! write nothing meanwhile (and waiting does not count as a try), and the
//! lease expires by the store's own clock. Also: the head's version (3) and
//! a direct save telling the session what it saved.

mod common;

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, StepClock};
use context_compiler::clock::{Clock, IdRng};
use context_compiler::error::{ErrorCode, Result};
use context_compiler::kv::{KeyValue, KvArtifactStore, KvStoreOptions, MemoryKv};
use context_compiler::session::{
    check_store_version, sync_session, LeaseTake, SaveTry, SessionEnv, SessionStore, SyncOptions,
    LEASE_MS,
};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::{FileSystem, FsKv, MemoryArtifactStore, Session, StdFileSystem};
use serde_json::json;

fn env(clock: &Rc<StepClock>, seed: u64) -> SessionEnv {
    SessionEnv {
        clock: clock.clone(),
        counter: Rc::new(DefaultTokenCounter),
        seed,
    }
}

fn say(session: &RefCell<Session>, text: &str) {
    session
        .borrow_mut()
        .record("user_input", json!(text), None)
        .unwrap();
}

async fn load(store: &dyn SessionStore, clock: &Rc<StepClock>, seed: u64) -> RefCell<Session> {
    let env = env(clock, seed);
    let loaded = store.load_session("s", env.clone()).await.unwrap();
    RefCell::new(loaded.unwrap_or_else(|| env.session("s", Vec::new()).unwrap()))
}

fn texts(session: &Session) -> Vec<String> {
    session
        .event_log()
        .all_events()
        .iter()
        .filter_map(|e| e.data.as_str().map(str::to_string))
        .collect()
}

/// Another writer, saving with plain saves through its own store over the
/// same backend: it loads, records one event and saves.
struct Rival {
    store: Rc<dyn SessionStore>,
    clock: Rc<StepClock>,
    saved: Cell<u32>,
    refused: Cell<u32>,
}

impl Rival {
    async fn save_one(&self) {
        let n = self.saved.get() + self.refused.get();
        let session = load(self.store.as_ref(), &self.clock, 7_000 + u64::from(n)).await;
        say(&session, &format!("rival-{n}"));
        match self.store.save_session(&session).await {
            Ok(_) => self.saved.set(self.saved.get() + 1),
            Err(e) if e.code() == ErrorCode::StoreConflict => {
                self.refused.set(self.refused.get() + 1)
            }
            Err(e) => panic!("rival: {e}"),
        }
    }
}

/// The script: before each of this writer's compare-and-sets of a head
/// that saves (not one that takes a lease), while `races` lasts, the
/// rival saves first.
struct Script {
    rival: RefCell<Option<Rc<Rival>>>,
    races: Cell<u32>,
}

impl Script {
    fn new() -> Rc<Script> {
        Rc::new(Script {
            rival: RefCell::new(None),
            races: Cell::new(0),
        })
    }

    async fn before_cas(&self, value: &[u8]) {
        let takes_lease = value.windows(8).any(|w| w == b"\"lease\":");
        if takes_lease || self.races.get() == 0 {
            return;
        }
        self.races.set(self.races.get() - 1);
        let rival = self.rival.borrow().clone();
        if let Some(rival) = rival {
            rival.save_one().await;
        }
    }
}

/// A key-value store whose head compare-and-sets follow the script.
struct ScriptedKv {
    inner: Rc<MemoryKv>,
    script: Rc<Script>,
}

#[async_trait(?Send)]
impl KeyValue for ScriptedKv {
    type Value = Vec<u8>;
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.inner.put(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        self.inner.list(prefix).await
    }
    fn has_put_if(&self) -> bool {
        true
    }
    async fn put_if(&self, key: &str, value: Vec<u8>, expected: Option<&Vec<u8>>) -> Result<bool> {
        self.script.before_cas(&value).await;
        self.inner.put_if(key, value, expected).await
    }
    fn has_expiry(&self) -> bool {
        self.inner.has_expiry()
    }
    async fn put_expiring(&self, key: &str, value: Vec<u8>, ttl_ms: u64) -> Result<()> {
        self.inner.put_expiring(key, value, ttl_ms).await
    }
}

/// Files whose head versions' exclusive creates follow the script.
struct ScriptedFs {
    inner: StdFileSystem,
    script: Rc<Script>,
}

#[async_trait(?Send)]
impl FileSystem for ScriptedFs {
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
        self.script.before_cas(&bytes).await;
        self.inner.create_new(path, bytes).await
    }
    fn has_age(&self) -> bool {
        true
    }
    async fn age_ms(&self, path: &str) -> Result<Option<f64>> {
        self.inner.age_ms(path).await
    }
}

/// A backend: a store for the writer under test (scripted) and one for
/// the rival and the checks (plain), sharing the data.
struct Backend {
    scripted: Rc<dyn SessionStore>,
    plain: Rc<dyn SessionStore>,
    script: Rc<Script>,
    clock: Rc<StepClock>,
    /// Makes every lease of the backend expire now, by the store's clock.
    expire: Box<dyn Fn()>,
    _dir: Option<TempDir>,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A store over `kv`, stamping with `clock`.
fn kv_store<K: KeyValue>(kv: K, clock: &Rc<StepClock>) -> KvArtifactStore<K> {
    KvArtifactStore::new(kv, clock.clone(), KvStoreOptions::default()).unwrap()
}

fn kv_backend() -> Backend {
    let clock = StepClock::new(1e12, 0.0);
    let kv = Rc::new(MemoryKv::with_clock(clock.clone()));
    let script = Script::new();
    let scripted = kv_store(
        ScriptedKv {
            inner: kv.clone(),
            script: script.clone(),
        },
        &clock,
    );
    let plain = kv_store(
        ScriptedKv {
            inner: kv,
            script: Script::new(),
        },
        &clock,
    );
    let expiring = clock.clone();
    Backend {
        scripted: Rc::new(scripted),
        plain: Rc::new(plain),
        script,
        clock,
        expire: Box::new(move || block_on(expiring.sleep(LEASE_MS as f64 + 1.0))),
        _dir: None,
    }
}

fn files_backend(name: &str) -> Backend {
    // One directory per backend: the tests run side by side in one process.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("acc-lease-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let clock = StepClock::new(1e12, 0.0);
    let script = Script::new();
    let scripted = kv_store(
        FsKv::new(ScriptedFs {
            inner: StdFileSystem::new(&dir),
            script: script.clone(),
        }),
        &clock,
    );
    let plain = kv_store(FsKv::new(StdFileSystem::new(&dir)), &clock);
    let root = dir.clone();
    Backend {
        scripted: Rc::new(scripted),
        plain: Rc::new(plain),
        script,
        clock,
        // The lease file's time, set back past its lease.
        expire: Box::new(move || {
            let back =
                std::time::SystemTime::now() - std::time::Duration::from_millis(LEASE_MS + 1_000);
            for path in lease_files(&root) {
                let file = std::fs::File::options().write(true).open(&path).unwrap();
                file.set_modified(back).unwrap();
            }
        }),
        _dir: Some(TempDir(dir)),
    }
}

/// The lease files under `dir`.
fn lease_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().contains("/lease/")
                && path.extension().is_some_and(|e| e == "rec")
            {
                out.push(path);
            }
        }
    }
    out
}

fn backends() -> Vec<(&'static str, Backend)> {
    vec![("kv", kv_backend()), ("files", files_backend("b"))]
}

/// The rival saves before every save of the writer under test: without a
/// lease it would lose every try and give up; with it, it loses two, takes
/// the lease, and its third try goes through while the rival's save
/// between is refused, nothing written.
#[test]
fn a_writer_that_lost_twice_takes_the_lease_and_cannot_lose_its_next_try() {
    for (name, b) in backends() {
        block_on(async {
            let first = load(b.plain.as_ref(), &b.clock, 1).await;
            say(&first, "first");
            b.plain.save_session(&first).await.unwrap();
            let writer = load(b.scripted.as_ref(), &b.clock, 2).await;
            say(&writer, "mine");
            let rival = Rc::new(Rival {
                store: b.plain.clone(),
                clock: b.clock.clone(),
                saved: Cell::new(0),
                refused: Cell::new(0),
            });
            *b.script.rival.borrow_mut() = Some(rival.clone());
            b.script.races.set(1_000);
            let mut rng = IdRng::new(9);
            let report = sync_session(
                b.scripted.as_ref(),
                &writer,
                b.clock.as_ref(),
                &mut rng,
                &SyncOptions::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("{name}: the sync gave up: {e}"));
            assert_eq!(report.tries, 3, "{name}: two lost, then the leased try");
            assert_eq!(rival.saved.get(), 2, "{name}");
            assert_eq!(
                rival.refused.get(),
                1,
                "{name}: the rival respected the lease"
            );
            let saved = load(b.plain.as_ref(), &b.clock, 3).await;
            assert_eq!(
                texts(&saved.borrow()),
                ["first", "rival-0", "rival-1", "mine"],
                "{name}"
            );
            // The lease ended with the holder's save: a plain save goes through.
            say(&saved, "after");
            b.plain.save_session(&saved).await.unwrap();
        });
    }
}

/// Step by step: a live lease turns every other save away without a
/// write (a plain save with `STORE_CONFLICT`, a sync's try as `Leased`,
/// another lease as `Held`), the holder saves, and a lease whose time
/// has run out by the store's clock is void.
#[test]
fn a_lease_is_respected_until_its_holder_saves_or_it_expires() {
    for (name, b) in backends() {
        block_on(async {
            let store = b.plain.as_ref();
            let base = load(store, &b.clock, 1).await;
            say(&base, "base");
            store.save_session(&base).await.unwrap();
            let a = load(store, &b.clock, 2).await;
            let c = load(store, &b.clock, 3).await;
            say(&a, "a");
            say(&c, "c");
            assert_eq!(
                store.take_lease("s", "A", LEASE_MS).await.unwrap(),
                LeaseTake::Taken
            );
            assert!(matches!(
                store.take_lease("s", "C", LEASE_MS).await.unwrap(),
                LeaseTake::Held { .. }
            ));
            assert!(matches!(
                store.try_save(&c, "C").await.unwrap(),
                SaveTry::Leased { .. }
            ));
            let plain = store.save_session(&c).await.unwrap_err();
            assert_eq!(plain.code(), ErrorCode::StoreConflict, "{name}");
            assert!(plain.message().contains("leased"), "{}", plain.message());
            assert!(matches!(
                store.try_save(&a, "A").await.unwrap(),
                SaveTry::Saved(_)
            ));
            assert_eq!(store.try_save(&c, "C").await.unwrap(), SaveTry::Lost);

            // A lease that outlives its time by the store's clock is void.
            let b2 = load(store, &b.clock, 4).await;
            let d = load(store, &b.clock, 5).await;
            say(&b2, "b");
            say(&d, "d");
            assert_eq!(
                store.take_lease("s", "B", LEASE_MS).await.unwrap(),
                LeaseTake::Taken
            );
            assert!(matches!(
                store.try_save(&d, "D").await.unwrap(),
                SaveTry::Leased { .. }
            ));
            (b.expire)();
            assert!(matches!(
                store.try_save(&d, "D").await.unwrap(),
                SaveTry::Saved(_)
            ));
            assert_eq!(store.try_save(&b2, "B").await.unwrap(), SaveTry::Lost);
            let saved = load(store, &b.clock, 6).await;
            assert_eq!(texts(&saved.borrow()), ["base", "a", "d"], "{name}");
        });
    }
}

/// Waiting on a lease is not a try: a sync allowed one try waits out
/// another writer's lease (by the store's clock) and saves.
#[test]
fn waiting_on_a_lease_does_not_count_as_a_try() {
    let b = kv_backend();
    block_on(async {
        let store = b.plain.as_ref();
        let base = load(store, &b.clock, 1).await;
        say(&base, "base");
        store.save_session(&base).await.unwrap();
        let w = load(store, &b.clock, 2).await;
        say(&w, "w");
        assert_eq!(
            store.take_lease("s", "holder", LEASE_MS).await.unwrap(),
            LeaseTake::Taken
        );
        let options = SyncOptions {
            max_tries: 1,
            ..SyncOptions::default()
        };
        let report = sync_session(store, &w, b.clock.as_ref(), &mut IdRng::new(3), &options)
            .await
            .unwrap();
        assert_eq!(report.tries, 1);
        let saved = load(store, &b.clock, 3).await;
        assert_eq!(texts(&saved.borrow()), ["base", "w"]);
    });
}

/// A key-value store without expiring keys keeps no lease: syncs work as
/// before.
#[test]
fn a_store_without_expiring_keys_keeps_no_lease() {
    block_on(async {
        let clock = StepClock::new(1e12, 0.0);
        let store = kv_store(MemoryKv::new(), &clock);
        let s = load(&store, &clock, 1).await;
        say(&s, "x");
        store.save_session(&s).await.unwrap();
        assert_eq!(
            store.take_lease("s", "A", LEASE_MS).await.unwrap(),
            LeaseTake::Unavailable
        );
    });
}

/// The KV head as a version 3 writer frames it (tests/fixtures/kv_head_v3.json).
const HEAD_V3: &str = include_str!("fixtures/kv_head_v3.json");

fn framed(body: &str) -> Vec<u8> {
    format!(
        "{{\"chunks\":0,\"chunkBytes\":65536,\"bytes\":{}}}\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The head's version: a reader of version 2 meeting the committed
/// version 3 head fails with `STORE_VERSION` (the check every reader
/// makes); this version reads it, reads a version 2 head (no version) and
/// writes version 3 over it, and refuses a version 4 head without
/// replacing it.
#[test]
fn the_head_is_version_3_and_a_newer_one_is_store_version() {
    let fixture: serde_json::Value = serde_json::from_str(HEAD_V3).unwrap();
    let version = fixture["version"].as_u64().unwrap() as u32;
    assert_eq!(version, 3);
    let old = check_store_version(version, 2, "the fixture head").unwrap_err();
    assert_eq!(old.code(), ErrorCode::StoreVersion);
    block_on(async {
        let clock = StepClock::new(1e12, 0.0);
        let kv = Rc::new(MemoryKv::new());
        let store = kv_store(
            ScriptedKv {
                inner: kv.clone(),
                script: Script::new(),
            },
            &clock,
        );
        let s = load(&store, &clock, 1).await;
        say(&s, "one");
        store.save_session(&s).await.unwrap();
        let head = String::from_utf8(kv.raw_get("s/s").unwrap()).unwrap();
        let body: serde_json::Value =
            serde_json::from_str(head.split_once('\n').unwrap().1).unwrap();
        assert_eq!(body["version"], 3, "{head}");
        assert_eq!(
            body.as_object().unwrap().keys().collect::<Vec<_>>(),
            fixture.as_object().unwrap().keys().collect::<Vec<_>>(),
            "the fixture is a head as written"
        );

        // A version 2 head: read, and migrated by the next write.
        let mut v2 = body.clone();
        v2.as_object_mut().unwrap().remove("version");
        kv.raw_put("s/s", framed(&v2.to_string()));
        let s = load(&store, &clock, 2).await;
        assert_eq!(texts(&s.borrow()), ["one"]);
        say(&s, "two");
        store.save_session(&s).await.unwrap();
        let head = String::from_utf8(kv.raw_get("s/s").unwrap()).unwrap();
        assert!(head.contains("\"version\":3"), "{head}");

        // A version 4 head: refused, and left in place.
        let head_now = head.replace("\"version\":3", "\"version\":4");
        kv.raw_put("s/s", head_now.clone().into_bytes());
        let e = store.load_session("s", env(&clock, 3)).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreVersion, "{e}");
        say(&s, "three");
        let e = store.save_session(&s).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreVersion, "{e}");
        assert_eq!(kv.raw_get("s/s").unwrap(), head_now.into_bytes());
    });
}

/// A direct save tells the session what the store holds, so the next
/// sync reloads only what others saved after it.
#[test]
fn a_direct_save_updates_the_saved_prefix() {
    let dir = files_backend("prefix");
    let clock = StepClock::new(1e12, 0.0);
    let stores: Vec<(&str, Rc<dyn SessionStore>)> = vec![
        ("memory", Rc::new(MemoryArtifactStore::new(clock.clone()))),
        ("kv", Rc::new(kv_store(MemoryKv::new(), &clock))),
        ("files", dir.plain.clone()),
    ];
    for (name, store) in stores {
        block_on(async {
            let s = load(store.as_ref(), &clock, 1).await;
            say(&s, "one");
            say(&s, "two");
            store.save_session(&s).await.unwrap();
            assert_eq!(s.borrow().saved_prefix().0, 2, "{name}");
            say(&s, "three");
            store.save_session(&s).await.unwrap();
            assert_eq!(s.borrow().saved_prefix().0, 3, "{name}");
        });
    }
}
