//! The seed's test_artifact_store on the memory backend, plus verified reads,
//! sessions, invalid UTF-8 and large values.
mod common;

use std::rc::Rc;

use common::block_on;
use context_compiler::artifacts::{content_id, StoreOptions};
use context_compiler::clock::SystemClock;
use context_compiler::{ArtifactStore, ErrorCode, MemoryArtifactStore};

fn store() -> MemoryArtifactStore {
    MemoryArtifactStore::new(Rc::new(SystemClock))
}

fn opts(session: Option<&str>) -> StoreOptions {
    StoreOptions {
        mime_type: Some("text/plain".into()),
        session_id: session.map(String::from),
    }
}

#[test]
fn store_retrieve_dedup() {
    block_on(async {
        let s = store();
        let content = b"Hello, this is a large tool output that should be externalized.";
        let h1 = s.store(content, "tool:echo", opts(None)).await.unwrap();
        assert_eq!(h1.size_bytes, content.len() as u64);
        assert!(!h1.summary.is_empty());
        assert_eq!(h1.artifact_id, content_id(content));
        let h2 = s.store(content, "tool:echo", opts(None)).await.unwrap();
        assert_eq!(h2.artifact_id, h1.artifact_id);
        assert_eq!(h2.created_at, h1.created_at, "dedup keeps the first handle");
        assert_eq!(s.retrieve(&h1.artifact_id).await.unwrap().unwrap(), content);
        assert!(s.exists(&h1.artifact_id).await.unwrap());
        assert!(!s.exists("nonexistent").await.unwrap());
        assert_eq!(s.retrieve("nonexistent").await.unwrap(), None);
    });
}

#[test]
fn handle_summary_truncation() {
    block_on(async {
        let s = store();
        let content = "word ".repeat(500);
        let h = s
            .store(content.as_bytes(), "tool:big", opts(None))
            .await
            .unwrap();
        assert!(h.summary.len() <= 210);
        assert_eq!(h.mime_type, "text/plain");
    });
}

#[test]
fn list_by_session_and_delete() {
    block_on(async {
        let s = store();
        let a = s.store(b"alpha", "tool:a", opts(Some("s1"))).await.unwrap();
        let b = s.store(b"beta", "tool:b", opts(Some("s2"))).await.unwrap();
        s.store(b"alpha", "tool:a", opts(Some("s2"))).await.unwrap();
        assert_eq!(s.list_handles(None).await.unwrap().len(), 2);
        let s1: Vec<String> = s
            .list_handles(Some("s1"))
            .await
            .unwrap()
            .into_iter()
            .map(|h| h.artifact_id)
            .collect();
        assert_eq!(s1, vec![a.artifact_id.clone()]);
        let s2 = s.list_handles(Some("s2")).await.unwrap();
        assert_eq!(s2.len(), 2);
        assert!(s2.iter().all(|h| h.session_id.as_deref() == Some("s2")));
        assert!(s.delete(&b.artifact_id).await.unwrap());
        assert!(!s.delete(&b.artifact_id).await.unwrap());
        assert!(!s.exists(&b.artifact_id).await.unwrap());
    });
}

#[test]
fn corrupted_content_is_an_error_never_returned() {
    block_on(async {
        let s = store();
        let h = s
            .store(b"the original content", "tool:x", opts(None))
            .await
            .unwrap();
        let mut snapshot = s.snapshot();
        snapshot[0].content[0] ^= 0x20;
        let restored = store();
        restored.restore(snapshot);
        let err = restored.retrieve(&h.artifact_id).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::ArtifactIntegrity);
        assert!(err.message().contains(&h.artifact_id));
    });
}

#[test]
fn invalid_utf8_is_stored_exactly_and_summarised_as_binary() {
    block_on(async {
        let s = store();
        let bytes = [0xffu8, 0xfe, 0x00, b'a', 0xc3];
        let h = s
            .store(
                &bytes,
                "tool:bin",
                StoreOptions {
                    mime_type: Some("application/octet-stream".into()),
                    session_id: None,
                },
            )
            .await
            .unwrap();
        assert_eq!(s.retrieve(&h.artifact_id).await.unwrap().unwrap(), bytes);
        // No replacement characters (or bytes) reach a prompt through it.
        assert_eq!(h.summary, "binary content (5 bytes)");
        assert_eq!(h.mime_type, "application/octet-stream");
    });
}

#[test]
fn fifty_megabytes_round_trip() {
    block_on(async {
        let s = store();
        let big: Vec<u8> = (0..50 * 1024 * 1024u32)
            .map(|i| b"abcdefgh \n"[(i % 10) as usize])
            .collect();
        let h = s.store(&big, "tool:huge", opts(None)).await.unwrap();
        assert_eq!(h.size_bytes, big.len() as u64);
        assert!(h.summary.len() <= 210);
        assert!(s.retrieve(&h.artifact_id).await.unwrap().unwrap() == big);
    });
}

/// A hasher that counts its calls, optionally answering a wrong digest.
struct CountingHasher {
    calls: std::cell::Cell<usize>,
    wrong: bool,
}

#[async_trait::async_trait(?Send)]
impl context_compiler::artifacts::Hasher for CountingHasher {
    async fn sha256(&self, data: &[u8]) -> context_compiler::Result<[u8; 32]> {
        self.calls.set(self.calls.get() + 1);
        let mut digest = context_compiler::artifacts::sha256(data);
        if self.wrong {
            digest[0] ^= 1;
        }
        Ok(digest)
    }
}

#[test]
fn stores_hash_with_their_hasher_and_refuse_content_it_does_not_vouch_for() {
    block_on(async {
        use context_compiler::kv::{KvArtifactStore, KvStoreOptions, MemoryKv};
        let content = b"a payload hashed by the host".repeat(100);
        let hasher = Rc::new(CountingHasher {
            calls: 0.into(),
            wrong: false,
        });
        let memory = store().with_hasher(hasher.clone());
        let kv = KvArtifactStore::new(
            MemoryKv::new(),
            Rc::new(SystemClock),
            KvStoreOptions::default(),
        )
        .unwrap()
        .with_hasher(hasher.clone());
        for s in [&memory as &dyn ArtifactStore, &kv] {
            let h = s.store(&content, "t", opts(None)).await.unwrap();
            assert_eq!(h.artifact_id, content_id(&content));
            assert_eq!(s.retrieve(&h.artifact_id).await.unwrap().unwrap(), content);
        }
        assert_eq!(hasher.calls.get(), 4);
        // A hasher that disagrees with the stored id: the read fails.
        let liar = Rc::new(CountingHasher {
            calls: 0.into(),
            wrong: true,
        });
        let memory = store().with_hasher(liar);
        let h = memory.store(&content, "t", opts(None)).await.unwrap();
        assert_ne!(h.artifact_id, content_id(&content));
        let e = memory.retrieve(&h.artifact_id).await;
        assert!(e.is_ok(), "its own ids verify");
        let honest = store();
        honest.restore(memory.snapshot());
        let e = honest.retrieve(&h.artifact_id).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::ArtifactIntegrity);
    });
}
