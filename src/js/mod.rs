//! JavaScript bindings (feature `js`): thin wrappers that convert between JS
//! values and the core's types. No behaviour lives here that the core lacks.

#[cfg(target_arch = "wasm32")]
mod alloc;
mod artifacts;
mod budget;
mod bus;
mod compiler;
mod context_window;
mod convert;
mod counter;
mod env;
mod error;
mod executor;
mod facts;
mod fatal;
mod fs;
mod hash;
mod indexeddb;
mod kv;
mod llm;
mod memory;
mod monitor;
mod normalize;
mod options;
mod processors;
mod promise;
mod registry;
mod runner;
mod schema_engine;
mod session;
mod sleep;
mod sql;
mod store_methods;
mod summarizer;
mod text;
mod tools;
pub(crate) mod types;
mod working_context;
