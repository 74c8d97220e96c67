//! The npm package's event-bus module (`pkg/context_compiler_bus_bg.wasm`):
//! `EventBus` (`event_bus.rs`) and its background handlers,
//! `FactExtractor`, `SessionTimeoutMonitor`, `SleepHandler` and
//! `EpisodeSummarizer`, over the core's public API. The package loads it
//! when the first bus or handler is made (`js/bus.js`), so code that never
//! uses the bus never downloads it.
#![deny(unsafe_code)]

mod event_bus;
mod facts;
mod monitor;
mod registry;
mod sleep;
mod summarizer;
