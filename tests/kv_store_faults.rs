//! Faults under the key-value store: writes failing part-way, values altered
//! or removed behind its back, stores that cannot list or never answer.

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use async_trait::async_trait;
use common::{block_on, session, StepClock};
use context_compiler::artifacts::{ArtifactStore, StoreOptions};
use context_compiler::error::{ErrorCode, Result};
use context_compiler::kv::{KeyValue, KvArtifactStore, KvStoreOptions, MemoryKv};
use context_compiler::session::{SessionEnv, SessionStore};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::Session;
use serde_json::json;

/// Which keys' puts fail.
type KeyFilter = Box<dyn Fn(&str) -> bool>;

/// A MemoryKv that can be told to fail puts, hide `list`, never answer, or
/// answer a get with a stale value.
#[derive(Default)]
struct FaultyKv {
    inner: MemoryKv,
    /// Values the next gets of these keys return instead of the stored ones
    /// (each taken once), as an eventually consistent KV might.
    stale: RefCell<Vec<(String, Vec<u8>)>>,
    /// Fail every put whose key satisfies this, after `puts_before_failing` puts.
    fail_put: RefCell<Option<KeyFilter>>,
    puts_before_failing: Cell<usize>,
    no_list: bool,
    hang_get: Cell<bool>,
}

#[async_trait(?Send)]
impl KeyValue for FaultyKv {
    type Value = Vec<u8>;

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        if self.hang_get.get() {
            std::future::pending::<()>().await;
        }
        let stale = {
            let mut stale = self.stale.borrow_mut();
            let at = stale.iter().position(|(k, _)| k == key);
            at.map(|i| stale.remove(i).1)
        };
        match stale {
            Some(value) => Ok(Some(value)),
            None => self.inner.get(key).await,
        }
    }
    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        if let Some(f) = &*self.fail_put.borrow() {
            if f(key) {
                if self.puts_before_failing.get() == 0 {
                    return Err(context_compiler::Error::new(
                        ErrorCode::StoreFailed,
                        "injected put failure",
                    ));
                }
                self.puts_before_failing
                    .set(self.puts_before_failing.get() - 1);
            }
        }
        self.inner.put(key, value).await
    }
    async fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        if self.no_list {
            return Ok(None);
        }
        self.inner.list(prefix).await
    }
}

fn store_over(kv: FaultyKv, chunk_bytes: usize) -> KvArtifactStore<FaultyKv> {
    KvArtifactStore::new(
        kv,
        StepClock::new(1000.0, 1.0),
        KvStoreOptions {
            chunk_bytes,
            prefix: String::new(),
            timeout_ms: Some(5_000.0),
        },
    )
    .unwrap()
}

fn opts(session: Option<&str>) -> StoreOptions {
    StoreOptions {
        mime_type: None,
        session_id: session.map(str::to_string),
    }
}

fn env() -> SessionEnv {
    SessionEnv {
        clock: StepClock::new(2e12, 1.0),
        counter: Rc::new(DefaultTokenCounter),
        seed: 1,
    }
}

/// A session `id` with one user turn, saved to `store`; and its export.
async fn saved_once(store: &KvArtifactStore<FaultyKv>, id: &str) -> (RefCell<Session>, String) {
    let s = RefCell::new(session(id));
    s.borrow_mut()
        .record("user_input", json!("first"), None)
        .unwrap();
    store.save_session(&s).await.unwrap();
    let saved = s.borrow().export_json();
    (s, saved)
}

fn big(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i % 251) as u8).collect()
}

#[test]
fn layout_is_the_documented_one_and_values_fit_the_limit() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 1024);
        let small = store.store(b"small", "s", opts(Some("s/1"))).await.unwrap();
        let large = store.store(&big(3000), "s", opts(None)).await.unwrap();
        let keys = store.kv().inner.keys();
        let want = [
            format!("a/{}", large.artifact_id),
            format!("a/{}#0", large.artifact_id),
            format!("a/{}#1", large.artifact_id),
            format!("a/{}#2", large.artifact_id),
            format!("a/{}", small.artifact_id),
            format!("as/s%2F1/{}", small.artifact_id),
        ];
        let mut want = want.to_vec();
        want.sort();
        assert_eq!(keys, want);
        for k in &keys {
            assert!(store.kv().inner.raw_get(k).unwrap().len() <= 1024, "{k}");
        }
    });
}

#[test]
fn values_stored_in_place_are_the_records_store_writes() {
    block_on(async {
        for size in [100, 3000] {
            let content = big(size);
            let by_slice = store_over(FaultyKv::default(), 1024);
            let in_place = store_over(FaultyKv::default(), 1024);
            let a = by_slice
                .store(&content, "s", opts(Some("one")))
                .await
                .unwrap();
            let b = in_place
                .store_value(content.clone(), "s", opts(Some("one")))
                .await
                .unwrap();
            assert_eq!(a, b);
            // Prepared from a digest, then written: the session is added to
            // the artifact already there, as store() adds it.
            let digest = context_compiler::artifacts::sha256(&content);
            let prepared = in_place
                .prepare_value(content.clone(), &digest, "s", opts(Some("two")))
                .unwrap();
            let c = in_place.store_prepared(prepared).await.unwrap();
            by_slice
                .store(&content, "s", opts(Some("two")))
                .await
                .unwrap();
            assert_eq!(c.artifact_id, a.artifact_id);
            assert_eq!(c.session_id.as_deref(), Some("two"));
            let keys = by_slice.kv().inner.keys();
            assert_eq!(in_place.kv().inner.keys(), keys);
            for key in &keys {
                assert_eq!(
                    in_place.kv().inner.raw_get(key),
                    by_slice.kv().inner.raw_get(key),
                    "{key}"
                );
            }
            let back = in_place.retrieve_value(&a.artifact_id).await.unwrap();
            assert_eq!(back.as_deref(), Some(content.as_slice()));
            // A digest that is not the content's is caught on the read.
            let wrong = store_over(FaultyKv::default(), 1024);
            let prepared = wrong
                .prepare_value(content.clone(), &[7; 32], "s", opts(None))
                .unwrap();
            let h = wrong.store_prepared(prepared).await.unwrap();
            let err = wrong.retrieve_value(&h.artifact_id).await.unwrap_err();
            assert_eq!(err.code(), ErrorCode::ArtifactIntegrity);
        }
    });
}

#[test]
fn a_put_failing_midway_through_a_chunked_write_leaves_nothing_behind() {
    block_on(async {
        let kv = FaultyKv::default();
        *kv.fail_put.borrow_mut() = Some(Box::new(|k: &str| k.contains('#')));
        kv.puts_before_failing.set(2);
        let store = store_over(kv, 1024);
        let content = big(10_000);
        let err = store
            .store(&content, "s", opts(Some("s")))
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreFailed);
        assert!(err.message().contains("chunk 2"), "{err}");
        assert!(
            store.kv().inner.keys().is_empty(),
            "{:?}",
            store.kv().inner.keys()
        );
        let id = context_compiler::artifacts::content_id(&content);
        assert!(!store.exists(&id).await.unwrap());
        // The store recovers: the same write succeeds once the KV does.
        *store.kv().fail_put.borrow_mut() = None;
        let h = store.store(&content, "s", opts(Some("s"))).await.unwrap();
        assert_eq!(
            store.retrieve(&h.artifact_id).await.unwrap().unwrap(),
            content
        );
    });
}

#[test]
fn a_missing_chunk_is_an_error_never_a_truncated_artifact() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 1024);
        let h = store.store(&big(5000), "s", opts(None)).await.unwrap();
        store
            .kv()
            .inner
            .raw_delete(&format!("a/{}#3", h.artifact_id));
        let err = store.retrieve(&h.artifact_id).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::ArtifactIncomplete, "{err}");
        assert!(err.message().contains("chunk 3 of 5"), "{err}");
    });
}

#[test]
fn an_altered_chunk_is_an_integrity_error() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 1024);
        let h = store.store(&big(5000), "s", opts(None)).await.unwrap();
        let key = format!("a/{}#1", h.artifact_id);
        let mut v = store.kv().inner.raw_get(&key).unwrap();
        v.truncate(10);
        store.kv().inner.raw_put(&key, v);
        let err = store.retrieve(&h.artifact_id).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::ArtifactIntegrity, "{err}");
    });
}

#[test]
fn malformed_and_hostile_records_are_corrupt_not_panics() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 1024);
        let id = context_compiler::artifacts::content_id(b"x");
        let key = format!("a/{id}");
        let hostile: Vec<Vec<u8>> = vec![
            b"no newline at all".to_vec(),
            b"not json\nx".to_vec(),
            b"[1,2]\nx".to_vec(),
            b"{\"chunks\":0,\"chunkBytes\":1,\"bytes\":99}\nx".to_vec(),
            b"{\"chunks\":18446744073709551615,\"chunkBytes\":1,\"bytes\":18446744073709551615}\n"
                .to_vec(),
            b"{\"chunks\":1,\"chunkBytes\":0,\"bytes\":1}\n".to_vec(),
            vec![0xff, 0xfe, b'\n', b'x'],
        ];
        for value in hostile {
            store.kv().inner.raw_put(&key, value.clone());
            let err = store.retrieve(&id).await.unwrap_err();
            assert_eq!(err.code(), ErrorCode::StoreCorrupt, "{value:?}: {err}");
        }
        // A record with valid framing but no handle.
        store.kv().inner.raw_put(
            &key,
            b"{\"chunks\":0,\"chunkBytes\":1024,\"bytes\":1}\nx".to_vec(),
        );
        let err = store.list_handles(None).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreCorrupt, "{err}");
    });
}

#[test]
fn a_save_interrupted_before_its_head_leaves_the_previous_state_loadable() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 1024);
        let (s, saved) = saved_once(&store, "crashy").await;
        for i in 0..30 {
            s.borrow_mut()
                .record(
                    "user_input",
                    json!(format!("lots of words in turn {i}")),
                    None,
                )
                .unwrap();
        }
        // The segment (chunked) is written, the head's put fails.
        *store.kv().fail_put.borrow_mut() = Some(Box::new(|k: &str| k == "s/crashy"));
        let err = store.save_session(&s).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreFailed);
        let loaded = store.load_session("crashy", env()).await.unwrap().unwrap();
        assert_eq!(loaded.export_json(), saved);
        // The next save succeeds and brings the store up to date.
        *store.kv().fail_put.borrow_mut() = None;
        let report = store.save_session(&s).await.unwrap();
        assert_eq!(report.events_written, 30);
        let loaded = store.load_session("crashy", env()).await.unwrap().unwrap();
        assert_eq!(loaded.export_json(), s.borrow().export_json());
    });
}

#[test]
fn a_save_failing_on_a_segment_chunk_leaves_the_previous_state_loadable() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 1024);
        let (s, saved) = saved_once(&store, "chunky").await;
        s.borrow_mut()
            .record("user_input", json!("word ".repeat(2000)), None)
            .unwrap();
        *store.kv().fail_put.borrow_mut() = Some(Box::new(|k: &str| k.contains('#')));
        store.kv().puts_before_failing.set(1);
        assert!(store.save_session(&s).await.is_err());
        let loaded = store.load_session("chunky", env()).await.unwrap().unwrap();
        assert_eq!(loaded.export_json(), saved);
    });
}

#[test]
fn altered_or_missing_session_segments_are_corrupt() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 1024);
        saved_once(&store, "victim").await;
        let seg = store
            .kv()
            .inner
            .keys()
            .into_iter()
            .find(|k| k.starts_with("s/victim/"))
            .unwrap();
        let mut v = store.kv().inner.raw_get(&seg).unwrap();
        let n = v.len();
        v[n - 3] ^= 1;
        store.kv().inner.raw_put(&seg, v);
        let err = store.load_session("victim", env()).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreCorrupt, "{err}");
        store.kv().inner.raw_delete(&seg);
        let err = store.load_session("victim", env()).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreCorrupt, "{err}");
        assert!(err.message().contains("missing"), "{err}");
        // Deleting the session clears it, corrupt or not.
        assert!(store.delete_session("victim").await.unwrap());
        assert!(store.kv().inner.keys().is_empty());
    });
}

#[test]
fn many_small_saves_are_compacted_into_one_segment() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 64 * 1024);
        let s = RefCell::new(session("chatty"));
        let mut rewrites = 0;
        for i in 0..40 {
            s.borrow_mut().record("user_input", json!(i), None).unwrap();
            if store.save_session(&s).await.unwrap().rewritten {
                rewrites += 1;
            }
        }
        assert_eq!(rewrites, 2, "the first save and one compaction");
        let segments = store
            .kv()
            .inner
            .keys()
            .into_iter()
            .filter(|k| k.starts_with("s/chatty/"))
            .count();
        assert!(segments <= 32, "{segments} segments kept");
        let loaded = store.load_session("chatty", env()).await.unwrap().unwrap();
        assert_eq!(loaded.export_json(), s.borrow().export_json());
    });
}

#[test]
fn listing_without_list_is_unsupported_but_everything_else_works() {
    block_on(async {
        let store = store_over(
            FaultyKv {
                no_list: true,
                ..FaultyKv::default()
            },
            1024,
        );
        let h = store.store(b"x", "s", opts(Some("s"))).await.unwrap();
        assert_eq!(store.retrieve(&h.artifact_id).await.unwrap().unwrap(), b"x");
        let err = store.list_handles(Some("s")).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreUnsupported);
        let err = store.list_sessions().await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreUnsupported);
        saved_once(&store, "no-list").await;
        assert!(store
            .load_session("no-list", env())
            .await
            .unwrap()
            .is_some());
        assert!(store.delete_session("no-list").await.unwrap());
    });
}

#[test]
fn a_store_that_never_answers_times_out() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 1024);
        store.kv().hang_get.set(true);
        let err = store.retrieve("abc").await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreTimeout);
        assert!(err.message().contains("get(a/abc)"), "{err}");
    });
}

#[test]
fn bad_options_are_invalid_arguments() {
    for options in [
        KvStoreOptions {
            chunk_bytes: 100,
            ..KvStoreOptions::default()
        },
        KvStoreOptions {
            timeout_ms: Some(0.0),
            ..KvStoreOptions::default()
        },
        KvStoreOptions {
            timeout_ms: Some(f64::NAN),
            ..KvStoreOptions::default()
        },
    ] {
        let err = KvArtifactStore::new(MemoryKv::new(), StepClock::new(0.0, 1.0), options)
            .err()
            .unwrap();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
    }
}

#[test]
fn the_deepest_data_record_accepts_saves_and_loads() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 64 * 1024);
        let (s, _) = saved_once(&store, "deep").await;
        let mut v = json!("leaf");
        for _ in 0..context_compiler::session::MAX_DATA_DEPTH {
            v = json!([v]);
        }
        s.borrow_mut().record("note", v, None).unwrap();
        store.save_session(&s).await.unwrap();
        let loaded = store.load_session("deep", env()).await.unwrap().unwrap();
        assert_eq!(loaded.export_json(), s.borrow().export_json());
    });
}

/// Two writers of one session id, the second reading a stale head: no
/// segment the first wrote is overwritten, and the save is a conflict.
#[test]
fn a_stale_head_never_overwrites_a_segment_and_is_a_conflict() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 64 * 1024);
        let (a, _) = saved_once(&store, "shared").await;
        a.borrow_mut()
            .record("user_input", json!("second"), None)
            .unwrap();
        let head_key = "s/shared";
        let stale_head = store.kv().inner.raw_get(head_key).unwrap();
        // B starts from A's first save.
        let b = RefCell::new(
            Session::import_json(
                &a.borrow().export_json(),
                Rc::new(context_compiler::clock::SystemClock),
                Rc::new(DefaultTokenCounter),
                7,
            )
            .unwrap(),
        );
        a.borrow_mut()
            .record("assistant_output", json!("from A"), None)
            .unwrap();
        store.save_session(&a).await.unwrap();
        let before: Vec<(String, Vec<u8>)> = store
            .kv()
            .inner
            .keys()
            .into_iter()
            .map(|k| (k.clone(), store.kv().inner.raw_get(&k).unwrap()))
            .collect();
        b.borrow_mut()
            .record("assistant_output", json!("from B"), None)
            .unwrap();
        store
            .kv()
            .stale
            .borrow_mut()
            .push((head_key.to_string(), stale_head));
        let err = store.save_session(&b).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreConflict, "{err}");
        for (k, v) in &before {
            assert_eq!(store.kv().inner.raw_get(k).as_ref(), Some(v), "{k} changed");
        }
        let loaded = store.load_session("shared", env()).await.unwrap().unwrap();
        assert_eq!(loaded.export_json(), a.borrow().export_json());
    });
}

/// Sessions saved before segment keys carried their digest still load.
#[test]
fn segments_under_legacy_keys_still_load() {
    block_on(async {
        let store = store_over(FaultyKv::default(), 64 * 1024);
        let (s, saved) = saved_once(&store, "old").await;
        drop(s);
        let mut renamed = 0;
        for key in store.kv().inner.keys() {
            // "s/old/0/0-1-<digest>" was written as "s/old/0/0-1".
            let parts: Vec<&str> = key.split('/').collect();
            if parts.len() == 4 && parts[0] == "s" {
                let range: Vec<&str> = parts[3].split('-').collect();
                let legacy = format!("s/old/{}/{}-{}", parts[2], range[0], range[1]);
                let value = store.kv().inner.raw_get(&key).unwrap();
                store.kv().inner.raw_delete(&key);
                store.kv().inner.raw_put(&legacy, value);
                renamed += 1;
            }
        }
        assert_eq!(renamed, 1);
        let loaded = store.load_session("old", env()).await.unwrap().unwrap();
        assert_eq!(loaded.export_json(), saved);
    });
}
