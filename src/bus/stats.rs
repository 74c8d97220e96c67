//! The bus's counters.

use std::collections::BTreeMap;

use serde::Serialize;

/// One handler's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct HandlerStats {
    /// Events it was called with.
    pub calls: u64,
    /// Calls that failed (threw or rejected).
    pub errors: u64,
    /// Calls that did not settle within the handler timeout.
    pub timeouts: u64,
}

/// The bus's counters (`bus.stats` in JS).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BusStats {
    /// Events accepted by `emit`.
    pub emitted: u64,
    /// Events dispatched to the persister and their handlers.
    pub dispatched: u64,
    /// Events `emit` dropped because the queue was full.
    pub dropped: u64,
    /// Handler calls that failed.
    pub handler_errors: u64,
    /// Handler calls that timed out.
    pub handler_timeouts: u64,
    /// Persister calls that failed.
    pub persist_errors: u64,
    /// Per handler name.
    pub handlers: BTreeMap<String, HandlerStats>,
}

impl BusStats {
    /// The counters of handler `name`, created at zero.
    pub(super) fn handler(&mut self, name: &str) -> &mut HandlerStats {
        self.handlers.entry(name.to_string()).or_default()
    }
}
