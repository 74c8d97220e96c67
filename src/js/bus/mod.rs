//! The bus module's classes: `EventBus` (`event_bus.rs`) and its background
//! handlers, `FactExtractor`, `SessionTimeoutMonitor`, `SleepHandler` and
//! `EpisodeSummarizer` (`js/bus.js` loads the module).

pub(crate) mod event_bus;
mod facts;
mod monitor;
mod sleep;
mod summarizer;
