//! The npm package's stores module (`pkg/context_compiler_stores_bg.wasm`):
//! the persistent artifact stores (`KvArtifactStore`,
//! `IndexedDbArtifactStore`, `FsArtifactStore`, `SqliteArtifactStore`) and
//! their `PersistentMemory`, over the core's public API. The package loads it
//! when the first of them is made (`js/stores.js`), so code that keeps its
//! artifacts in memory never downloads it. It reads the main module's
//! sessions through their JS methods (`session_source.rs`).
#![deny(unsafe_code)]

mod bytes;
mod fs;
mod host_bytes;
mod indexeddb;
mod js_kv;
mod kv;
mod memory;
mod registry;
mod session_source;
mod sql;
mod store_module;
mod types;
