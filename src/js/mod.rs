//! JavaScript bindings: thin wrappers that convert between JS values and
//! the core's types. No behaviour lives here that the core lacks.
//!
//! The npm package splits them over two wasm modules, each a build of this
//! crate: feature `js` is the main module (sessions, compilers, tools,
//! stores, memory), feature `js-bus` the event bus and its background
//! handlers, loaded when the first bus is made. The two reach each other's
//! objects only through their JS methods (`Session.attachBus` calls the
//! bus's `tryEmit`; the handlers call a memory's `recall`, `put`, ...).

// Shared by both modules.
#[cfg(target_arch = "wasm32")]
mod alloc;
mod convert;
mod env;
mod error;
mod executor;
mod fatal;
mod llm;
mod memory_arg;
mod options;
mod promise;
mod registry;
mod text;

// The main module.
#[cfg(feature = "js")]
mod artifacts;
#[cfg(feature = "js")]
mod budget;
#[cfg(feature = "js")]
mod compiler;
#[cfg(feature = "js")]
mod context_window;
#[cfg(feature = "js")]
mod counter;
#[cfg(feature = "js")]
mod fs;
#[cfg(feature = "js")]
mod hash;
#[cfg(feature = "js")]
mod indexeddb;
#[cfg(feature = "js")]
mod kv;
#[cfg(feature = "js")]
mod memory;
#[cfg(feature = "js")]
mod normalize;
#[cfg(feature = "js")]
mod processors;
#[cfg(feature = "js")]
mod runner;
#[cfg(feature = "js")]
mod schema_engine;
#[cfg(feature = "js")]
mod session;
#[cfg(feature = "js")]
mod sql;
#[cfg(feature = "js")]
mod store_methods;
#[cfg(feature = "js")]
mod tools;
#[cfg(feature = "js")]
pub(crate) mod types;
#[cfg(feature = "js")]
mod working_context;

// The bus module.
#[cfg(feature = "js-bus")]
mod bus;
#[cfg(feature = "js-bus")]
mod facts;
#[cfg(feature = "js-bus")]
mod monitor;
#[cfg(feature = "js-bus")]
mod sleep;
#[cfg(feature = "js-bus")]
mod summarizer;
