//! The stores module's registry. It registers its stores and memories, which keeps their `__nativeId`s
//! apart from every other module's, but never looks one up: the main module
//! reaches them through their JS methods.

use context_compiler_js::registry::{Module, Registration};

/// The stores module, whose ids start at 2³⁰.
pub(crate) struct Stores;

impl Module for Stores {
    const FIRST_ID: u32 = 1 << 30;
}

/// Registers `native` in the stores module's registry.
pub(crate) fn register<T: 'static>(native: T) -> Registration {
    Registration::new::<Stores, T>(native)
}
