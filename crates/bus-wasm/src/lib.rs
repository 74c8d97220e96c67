//! The npm package's event-bus module (`pkg/context_compiler_bus_bg.wasm`).
//!
//! Everything it exports is the core crate's JavaScript binding of the
//! event bus and its handlers (`agent-context-compiler`, feature `js-bus`,
//! `src/js/bus/`); this crate only links it, as
//! `crates/npm-wasm` links the main module. The package loads it when the
//! first `EventBus` or handler is made (`js/bus.js`), so code that never
//! uses the bus never downloads it.
#![deny(unsafe_code)]

pub use context_compiler;
