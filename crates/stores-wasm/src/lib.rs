//! The npm package's stores module (`pkg/context_compiler_stores_bg.wasm`).
//!
//! Everything it exports is the core crate's JavaScript binding of the
//! persistent artifact stores (`agent-context-compiler`, feature
//! `js-stores`, `src/js/stores/`); this crate only links it, as
//! `crates/npm-wasm` links the main module. The package loads it when the
//! first `KvArtifactStore`, `IndexedDbArtifactStore`, `FsArtifactStore` or
//! `SqliteArtifactStore` is made (`js/stores.js`), so code that keeps its
//! artifacts in memory never downloads it.
#![deny(unsafe_code)]

pub use context_compiler;
