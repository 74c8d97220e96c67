//! `IndexedDbArtifactStore` for JS: artifacts and saved sessions in
//! IndexedDB, in a page or a web worker.

mod events;
mod store;

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::env::JsClock;
use context_compiler_js::options::optional_string;
use context_compiler_js::promise::spawn;
use context_compiler_js::registry::Registration;

use crate::registry;
use crate::types::IndexedDbStoreOptionsArg;

use store::{IdbStore, Names};

/// Content-addressed artifacts and saved sessions in IndexedDB. Each write is
/// one transaction: an artifact's content and metadata land together or not
/// at all, and a session save appends its events and moves its head together.
/// Quota, blocked and closed databases reject with `STORE_QUOTA_EXCEEDED`,
/// `STORE_BLOCKED` and `STORE_CLOSED`.
#[wasm_bindgen]
pub struct IndexedDbArtifactStore {
    inner: Rc<IdbStore>,
    registration: Registration,
}

fn names(options: &Option<IndexedDbStoreOptionsArg>) -> Result<(Names, String)> {
    let database = optional_string(options, "databaseName")?
        .unwrap_or_else(|| "agent-context-compiler".into());
    let artifacts = optional_string(options, "storeName")?.unwrap_or_else(|| "artifacts".into());
    let sessions =
        optional_string(options, "sessionStoreName")?.unwrap_or_else(|| "sessions".into());
    let durability = optional_string(options, "durability")?.unwrap_or_else(|| "default".into());
    if !["default", "strict", "relaxed"].contains(&durability.as_str()) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            format!("options.durability must be \"default\", \"strict\" or \"relaxed\" (got \"{durability}\")"),
        ));
    }
    let events = format!("{sessions}.events");
    if [&database, &artifacts, &sessions]
        .iter()
        .any(|n| n.is_empty())
        || artifacts == sessions
        || artifacts == events
    {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "databaseName, storeName and sessionStoreName must be non-empty, and the store names distinct",
        ));
    }
    Ok((
        Names {
            database,
            artifacts,
            sessions,
            events,
        },
        durability,
    ))
}

#[wasm_bindgen]
impl IndexedDbArtifactStore {
    /// Opens the store, creating the database and its object stores when
    /// missing. Options: `databaseName` (default `"agent-context-compiler"`),
    /// `storeName` (default `"artifacts"`), `sessionStoreName` (default
    /// `"sessions"`), `durability` of writes (`"default"`, `"strict"`,
    /// `"relaxed"`). Rejects with `STORE_UNAVAILABLE` where there is no
    /// IndexedDB (Node, Deno, workerd).
    #[wasm_bindgen(unchecked_return_type = "Promise<IndexedDbArtifactStore>")]
    pub fn open(options: Option<IndexedDbStoreOptionsArg>) -> js_sys::Promise {
        let parsed = names(&options);
        spawn(async move {
            let (names, durability) = parsed?;
            let inner = Rc::new(IdbStore::open(names, durability, Rc::new(JsClock)).await?);
            let weak: std::rc::Weak<dyn context_compiler::artifacts::ArtifactStore> = Rc::downgrade(
                &(inner.clone() as Rc<dyn context_compiler::artifacts::ArtifactStore>),
            );
            Ok(IndexedDbArtifactStore {
                inner,
                registration: registry::register(weak),
            }
            .into())
        })
    }

    /// The database's name.
    #[wasm_bindgen(getter, js_name = databaseName)]
    pub fn database_name(&self) -> String {
        self.inner.database_name().to_string()
    }

    /// Closes the connection; later calls reject with `STORE_CLOSED`.
    pub fn close(&self) {
        self.inner.close();
    }
}

context_compiler_js::store_methods!(IndexedDbArtifactStore, crate::registry::Stores);
