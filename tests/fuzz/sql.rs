//! A SQL connection answering every read with generated rows: values of
//! every type in any number of columns and rows, and the event rows a real
//! save writes, mutated. The store's reads must give a value or
//! `STORE_CORRUPT`, never a panic.

use std::cell::RefCell;
use std::rc::Rc;

use async_trait::async_trait;
use context_compiler::artifacts::ArtifactStore;
use context_compiler::clock::SystemClock;
use context_compiler::session::{SessionEnv, SessionStore};
use context_compiler::sql_store::{SqlArtifactStore, SqlConnection, SqlValue, Statement};
use context_compiler::{DefaultTokenCounter, Result};
use proptest::prelude::*;

use crate::mutate::{apply, edits, fixture};

/// One query's rows.
pub type Rows = Vec<Vec<SqlValue>>;

/// A value of any type, at the limits a reader checks.
fn value() -> impl Strategy<Value = SqlValue> {
    prop_oneof![
        Just(SqlValue::Null),
        prop_oneof![
            any::<i64>(),
            Just(-1i64),
            Just(0),
            Just(i64::MAX),
            Just(1 << 53)
        ]
        .prop_map(SqlValue::Integer),
        prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(-0.5),
            Just(1e300),
            Just(3.0)
        ]
        .prop_map(SqlValue::Real),
        "\\PC{0,12}".prop_map(SqlValue::Text),
        event_row().prop_map(SqlValue::Text),
        prop::collection::vec(any::<u8>(), 0..16).prop_map(SqlValue::Blob),
    ]
}

/// A saved event's JSON as the store keeps it, mutated.
fn event_row() -> impl Strategy<Value = String> {
    (any::<prop::sample::Index>(), edits(3)).prop_map(|(i, e)| {
        let seed = fixture("fuzz/session.json");
        let doc: serde_json::Value = serde_json::from_slice(&seed).unwrap_or_default();
        let events = doc["events"].as_array().cloned().unwrap_or_default();
        let event = i.get(&events).to_string();
        String::from_utf8_lossy(&apply(event.as_bytes(), &e, &[b"\"", b"{", b"-1"])).into_owned()
    })
}

/// The answers to a run's reads, in order (popped from the end).
pub fn answers() -> impl Strategy<Value = Vec<Rows>> {
    let row = prop::collection::vec(value(), 0..9);
    prop::collection::vec(prop::collection::vec(row, 0..4), 1..12)
}

/// The connection: the store's own schema version for `acc_meta`, the
/// generated rows for everything else.
struct Hostile {
    version: RefCell<SqlValue>,
    answers: RefCell<Vec<Rows>>,
}

#[async_trait(?Send)]
impl SqlConnection for Hostile {
    async fn query(&self, sql: &str, _params: &[SqlValue]) -> Result<Rows> {
        if sql.contains("acc_meta") {
            return Ok(vec![vec![self.version.borrow().clone()]]);
        }
        Ok(self.answers.borrow_mut().pop().unwrap_or_default())
    }

    async fn batch(&self, statements: &[Statement]) -> Result<()> {
        for s in statements {
            if s.sql.contains("INSERT INTO acc_meta") {
                if let Some(v) = s.params.first() {
                    *self.version.borrow_mut() = v.clone();
                }
            }
        }
        Ok(())
    }
}

/// Every read of a SQL store over `answers`: loading a session and its
/// events, listing sessions and handles, reading and checking an artifact.
pub async fn read_all(answers: Vec<Rows>) -> Vec<Result<()>> {
    let store = SqlArtifactStore::new(
        Hostile {
            version: RefCell::new(SqlValue::Null),
            answers: RefCell::new(answers),
        },
        Rc::new(SystemClock),
    );
    let env = || SessionEnv {
        clock: Rc::new(SystemClock),
        counter: Rc::new(DefaultTokenCounter),
        seed: 1,
    };
    let id = "ab".repeat(32);
    vec![
        store.load_session("s", env()).await.map(drop),
        store.load_events("s").await.map(drop),
        store.list_sessions().await.map(drop),
        store.list_handles(None).await.map(drop),
        store.list_handles(Some("s")).await.map(drop),
        store.retrieve(&id).await.map(drop),
        store.exists(&id).await.map(drop),
        store.load_session("s", env()).await.map(drop),
    ]
}
