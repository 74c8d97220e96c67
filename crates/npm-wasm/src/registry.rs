//! The main module's registry: the native objects behind the JS objects a
//! caller passes in (processors, stores, memories, sessions, compilers,
//! tool handlers, aligners), found by the type they were registered as (a
//! compiler's own lookup is `compiler::registered`).

use std::cell::RefCell;
use std::rc::Rc;

use context_compiler::artifacts::ArtifactStore;
use context_compiler::compiler::Processor;
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::session::Session;
use context_compiler::tools::ToolInterruptHandler;
use context_compiler_js::registry::{live, Module, Registration};
use wasm_bindgen::JsValue;

/// The main module, whose ids are below 2³⁰.
pub(crate) struct Main;

impl Module for Main {
    const FIRST_ID: u32 = 1;
}

/// Registers `native` in the main module's registry.
pub(crate) fn register<T: 'static>(native: T) -> Registration {
    Registration::new::<Main, T>(native)
}

/// The live processor behind `value`.
pub(crate) fn processor(value: &JsValue) -> Option<Rc<dyn Processor>> {
    live::<dyn Processor>(value)
}

/// The live artifact store behind `value`.
pub(crate) fn artifact_store(value: &JsValue) -> Option<Rc<dyn ArtifactStore>> {
    live::<dyn ArtifactStore>(value)
}

/// The live perception aligner behind `value`.
pub(crate) fn aligner(value: &JsValue) -> Option<Rc<PerceptionAligner>> {
    live::<PerceptionAligner>(value)
}

/// The live session behind `value`.
pub(crate) fn session(value: &JsValue) -> Option<Rc<RefCell<Session>>> {
    live::<RefCell<Session>>(value)
}

/// The live `ToolInterruptHandler` behind `value`.
pub(crate) fn tool_handler(value: &JsValue) -> Option<Rc<ToolInterruptHandler>> {
    live::<ToolInterruptHandler>(value)
}
