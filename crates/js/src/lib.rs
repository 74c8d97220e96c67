//! What the npm package's wasm modules share of their JavaScript binding.
//!
//! The package is three wasm modules, each a crate of its own over the
//! core's public API: `crates/npm-wasm` (the main module: sessions,
//! compilers, tools, the in-memory store, memory), `crates/bus-wasm` (the
//! event bus and its background handlers, loaded with the first bus) and
//! `crates/stores-wasm` (the persistent artifact stores, loaded with the
//! first of them). They reach each other's objects only through their JS
//! methods (`Session.attachBus` calls the bus's `tryEmit`; the handlers call
//! a memory's `recall`, `put`, ...; the main module calls a store's `store`,
//! `retrieve`, ...; a store reads a session through its hidden
//! `__eventCount`, `__eventId`, `__eventsJson`).
//!
//! This crate holds what every one of them needs: value conversion
//! ([`convert`], [`text`], [`options`]), JS errors ([`error`]), promises and
//! the task executor ([`promise`], [`executor`]), the registry of native
//! objects ([`registry`]), the host's clock and randomness ([`env`]), trap
//! reports and the allocator ([`fatal`]), the byte comparison the modules
//! link in place of the builtins' (`compare`), and the pieces two modules share:
//! the model and memory arguments ([`llm`], [`memory_arg`]), hashing
//! ([`hash`]), and the store and memory methods each module stamps onto its
//! own classes ([`store_methods!`], [`memory_methods!`]). It exports no class:
//! a module exports exactly the classes its crate declares.

#[cfg(target_arch = "wasm32")]
mod alloc;
pub mod args;
#[cfg(any(target_arch = "wasm32", test))]
mod compare;
pub mod convert;
pub mod embedder;
pub mod env;
pub mod error;
pub mod executor;
pub mod fatal;
pub mod hash;
pub mod llm;
pub mod memory;
pub mod memory_arg;
pub mod options;
pub mod promise;
pub mod registry;
pub mod store_methods;
pub mod text;

/// The core, for the macros this crate exports (`$crate::context_compiler`).
pub use context_compiler;
