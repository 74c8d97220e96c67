//! Finds the Rust object behind a JS instance of one of our classes.
//!
//! wasm-bindgen cannot borrow an exported struct out of a `JsValue` held in
//! an array or options object, so each native processor and store registers a
//! weak reference under a numeric id, exposed to JS as the hidden getter
//! `__nativeId`. The JS object keeps the strong reference; dropping it (via
//! `free()` or garbage collection) unregisters it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use js_sys::Reflect;
use wasm_bindgen::JsValue;

use crate::artifacts::ArtifactStore;
use crate::bus::EventBus;
use crate::compiler::Processor;
use crate::js::compiler::CompilerSpec;
use crate::memory::MemoryStore;
use crate::normalize::aligner::PerceptionAligner;
use crate::session::Session;
use crate::tools::ToolInterruptHandler;

/// A registered native object.
#[derive(Clone)]
pub(crate) enum Native {
    Processor(Weak<dyn Processor>),
    ArtifactStore(Weak<dyn ArtifactStore>),
    Memory(Weak<dyn MemoryStore>),
    Aligner(Weak<PerceptionAligner>),
    Session(Weak<RefCell<Session>>),
    /// A handle to an event bus (the bus lives as long as any handle).
    Bus(EventBus),
    /// A JS `ContextCompiler`'s processors and layout.
    Compiler(Weak<RefCell<CompilerSpec>>),
    /// A tool interrupt handler.
    ToolHandler(Weak<ToolInterruptHandler>),
}

thread_local! {
    static NEXT: Cell<u32> = const { Cell::new(1) };
    static OBJECTS: RefCell<HashMap<u32, Native>> = RefCell::new(HashMap::new());
}

/// A native object's entry in the registry, held by the JS object that owns
/// it: dropping the JS object (`free()` or garbage collection) unregisters it.
pub(crate) struct Registration(u32);

impl Registration {
    /// Registers `native` for as long as the returned guard lives.
    pub(crate) fn new(native: Native) -> Registration {
        Registration(register(native))
    }

    /// The id exposed to JS as `__nativeId`.
    pub(crate) fn id(&self) -> u32 {
        self.0
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        unregister(self.0);
    }
}

/// Registers `native` and returns its id.
fn register(native: Native) -> u32 {
    let id = NEXT.with(|n| {
        let id = n.get();
        n.set(id.wrapping_add(1).max(1));
        id
    });
    OBJECTS.with(|o| o.borrow_mut().insert(id, native));
    id
}

/// Removes `id` (when its [`Registration`] is dropped). Never panics: after
/// a trap left the registry borrowed, the garbage collector still frees
/// objects, and a panic there would end the process.
fn unregister(id: u32) {
    OBJECTS.with(|o| {
        if let Ok(mut objects) = o.try_borrow_mut() {
            objects.remove(&id);
        }
    });
}

/// The native object behind `value`, if it is a live instance of our classes.
pub(crate) fn lookup(value: &JsValue) -> Option<Native> {
    if !value.is_object() {
        return None;
    }
    let id = Reflect::get(value, &"__nativeId".into()).ok()?.as_f64()?;
    OBJECTS.with(|o| o.borrow().get(&(id as u32)).cloned())
}

/// The live processor behind `value`.
pub(crate) fn processor(value: &JsValue) -> Option<Rc<dyn Processor>> {
    match lookup(value)? {
        Native::Processor(w) => w.upgrade(),
        _ => None,
    }
}

/// The live artifact store behind `value`.
pub(crate) fn artifact_store(value: &JsValue) -> Option<Rc<dyn ArtifactStore>> {
    match lookup(value)? {
        Native::ArtifactStore(w) => w.upgrade(),
        _ => None,
    }
}

/// The live memory store behind `value`.
pub(crate) fn memory(value: &JsValue) -> Option<Rc<dyn MemoryStore>> {
    match lookup(value)? {
        Native::Memory(w) => w.upgrade(),
        _ => None,
    }
}

/// The live perception aligner behind `value`.
pub(crate) fn aligner(value: &JsValue) -> Option<Rc<PerceptionAligner>> {
    match lookup(value)? {
        Native::Aligner(w) => w.upgrade(),
        _ => None,
    }
}

/// The live session behind `value`.
pub(crate) fn session(value: &JsValue) -> Option<Rc<RefCell<Session>>> {
    match lookup(value)? {
        Native::Session(w) => w.upgrade(),
        _ => None,
    }
}

/// The event bus behind `value`.
pub(crate) fn bus(value: &JsValue) -> Option<EventBus> {
    match lookup(value)? {
        Native::Bus(b) => Some(b),
        _ => None,
    }
}

/// The live `ContextCompiler` behind `value`.
pub(crate) fn compiler(value: &JsValue) -> Option<Rc<RefCell<CompilerSpec>>> {
    match lookup(value)? {
        Native::Compiler(w) => w.upgrade(),
        _ => None,
    }
}

/// The live `ToolInterruptHandler` behind `value`.
pub(crate) fn tool_handler(value: &JsValue) -> Option<Rc<ToolInterruptHandler>> {
    match lookup(value)? {
        Native::ToolHandler(w) => w.upgrade(),
        _ => None,
    }
}
