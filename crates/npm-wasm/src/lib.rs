//! The npm package's main wasm module (`pkg/context_compiler_bg.wasm`).
//!
//! Everything it exports is the core crate's JavaScript binding
//! (`agent-context-compiler`, feature `js`, `src/js/`); this crate only
//! links it. It exists for the release profile: the core is built at
//! `opt-level = "z"` and linked here, with link-time optimisation, at
//! `"s"`, while the hot loops (`crates/text`: the token heuristic,
//! redaction and the JSON writer; `aho-corasick`, `regex-lite`) are built
//! at `"s"`. Measured: 416 KB gzipped against 490 KB at `"s"` throughout,
//! with counting, recording, redaction and compiling as fast (the README's
//! "Size" paragraph has the figures).
#![deny(unsafe_code)]

pub use context_compiler;
