//! The npm package's main wasm module (`pkg/context_compiler_bg.wasm`):
//! sessions and event logs, the compilers and their processors, the context
//! window, tools and their normaliser, the turn runner, the in-memory
//! artifact store and memory, token counting and hashing (`js/instance.js`
//! loads the module).
//!
//! Thin wrappers over the core's public API (`agent-context-compiler`) with
//! what the modules share from `crates/js`. Built at `opt-level = "s"` with
//! link-time optimisation while the core is built at `"z"` (the
//! workspace's release profile; `docs/benchmarks.md`, "Size").
#![deny(unsafe_code)]

mod artifact_store_arg;
mod artifacts;
mod budget;
mod compiler;
mod context_window;
mod counter;
mod in_memory;
mod ledger_columns;
mod media;
mod memory;
mod model;
mod normalize;
mod processors;
mod record_buffers;
mod registry;
mod render_memo;
mod reply_stream;
mod runner;
mod schema_engine;
mod session;
mod session_saving;
mod store_module;
mod tape;
mod tools;
mod tracer;
mod types;
mod working_context;
