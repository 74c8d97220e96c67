//! The bus module's registry: the event buses behind the JS objects handlers
//! are given (`options.bus`).

use context_compiler::bus::EventBus;
use context_compiler_js::registry::{lookup, Module, Registration};
use wasm_bindgen::JsValue;

/// The bus module, whose ids start at 2³¹.
pub(crate) struct Bus;

impl Module for Bus {
    const FIRST_ID: u32 = 1 << 31;
}

/// Registers a handle to `bus` (the bus lives as long as any handle).
pub(crate) fn register(bus: EventBus) -> Registration {
    Registration::new::<Bus, EventBus>(bus)
}

/// The event bus behind `value`.
pub(crate) fn bus(value: &JsValue) -> Option<EventBus> {
    lookup::<EventBus>(value)
}
