//! JavaScript bindings: thin wrappers that convert between JS values and
//! the core's types. No behaviour lives here that the core lacks.
//!
//! The npm package splits them over three wasm modules, each a build of this
//! crate: feature `js` is the main module (sessions, compilers, tools, the
//! in-memory store, memory), feature `js-bus` the event bus and its
//! background handlers, loaded when the first bus is made, and feature
//! `js-stores` the persistent artifact stores (`stores/`), loaded when the
//! first of them is made. They reach each other's objects only through their
//! JS methods (`Session.attachBus` calls the bus's `tryEmit`; the handlers
//! call a memory's `recall`, `put`, ...; the main module calls a store's
//! `store`, `retrieve`, ...; a store reads a session through its hidden
//! `__eventCount`, `__eventId`, `__eventsJson`).

// Shared by every module.
#[cfg(target_arch = "wasm32")]
mod alloc;
mod convert;
mod env;
mod error;
mod executor;
mod fatal;
mod options;
mod promise;
mod registry;
mod text;

// Shared by the main module and the bus module.
#[cfg(any(feature = "js", feature = "js-bus"))]
mod llm;
#[cfg(any(feature = "js", feature = "js-bus"))]
mod memory_arg;

// Shared by the main module and the stores module: what every store class
// has (its methods, hashing, `PersistentMemory`).
#[cfg(any(feature = "js", feature = "js-stores"))]
mod args;
#[cfg(any(feature = "js", feature = "js-stores"))]
mod hash;
#[cfg(any(feature = "js", feature = "js-stores"))]
mod memory;
#[cfg(any(feature = "js", feature = "js-stores"))]
mod store_methods;

// The main module's classes (sessions, compilers, tools, the in-memory
// store, memory).
#[cfg(feature = "js")]
mod main;

// The bus module's classes (the event bus and its handlers).
#[cfg(feature = "js-bus")]
mod bus;

// The stores module's classes (the persistent stores).
#[cfg(feature = "js-stores")]
mod stores;
