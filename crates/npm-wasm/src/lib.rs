//! The npm package's main wasm module (`pkg/context_compiler_bg.wasm`).
//!
//! Everything it exports is the core crate's JavaScript binding
//! (`agent-context-compiler`, feature `js`, `src/js/`); this crate only
//! links it. It exists for the release profile: the core is built at
//! `opt-level = "z"` and linked here, with link-time optimisation, at
//! `"s"`. Measured, that module is ~15% smaller (gzipped) than one built
//! at `"s"` throughout, with the hot loops (`crates/text`,
//! `aho-corasick`, `regex-lite`) as fast; the core linking its own module
//! at `"z"` is smaller than at `"s"` too, but counts and redacts at half
//! speed (see the workspace's `Cargo.toml`).
#![deny(unsafe_code)]

pub use context_compiler;
