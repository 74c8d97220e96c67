//! Finds the Rust object behind a JS instance of one of our classes.
//!
//! wasm-bindgen cannot borrow an exported struct out of a `JsValue` held in
//! an array or options object, so each native processor and store registers a
//! weak reference under a numeric id, exposed to JS as the hidden getter
//! `__nativeId`. The JS object keeps the strong reference; dropping it (via
//! `free()` or garbage collection) unregisters it.
//!
//! Each of the package's modules has its own registry, and hands out ids
//! from its own range of the `u32`s: an object of another module is never
//! mistaken for one of ours, it is simply not found (and taken through its
//! JS methods where that is allowed).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
#[cfg(feature = "js")]
use std::rc::Rc;
#[cfg(any(feature = "js", feature = "js-stores"))]
use std::rc::Weak;

use js_sys::Reflect;
use wasm_bindgen::JsValue;

#[cfg(any(feature = "js", feature = "js-stores"))]
use crate::artifacts::ArtifactStore;
#[cfg(feature = "js-bus")]
use crate::bus::EventBus;
#[cfg(feature = "js")]
use crate::compiler::Processor;
#[cfg(feature = "js")]
use crate::js::main::compiler::CompilerSpec;
#[cfg(any(feature = "js", feature = "js-stores"))]
use crate::memory::MemoryStore;
#[cfg(feature = "js")]
use crate::normalize::aligner::PerceptionAligner;
#[cfg(feature = "js")]
use crate::session::Session;
#[cfg(feature = "js")]
use crate::tools::ToolInterruptHandler;

/// A registered native object. (The stores module registers its stores and
/// memories, which keeps their `__nativeId`s apart from every other
/// module's, but never looks one up.)
#[cfg_attr(not(feature = "js"), allow(dead_code))]
#[derive(Clone)]
pub(crate) enum Native {
    #[cfg(feature = "js")]
    Processor(Weak<dyn Processor>),
    #[cfg(any(feature = "js", feature = "js-stores"))]
    ArtifactStore(Weak<dyn ArtifactStore>),
    #[cfg(any(feature = "js", feature = "js-stores"))]
    Memory(Weak<dyn MemoryStore>),
    #[cfg(feature = "js")]
    Aligner(Weak<PerceptionAligner>),
    #[cfg(feature = "js")]
    Session(Weak<RefCell<Session>>),
    /// A handle to an event bus (the bus lives as long as any handle).
    #[cfg(feature = "js-bus")]
    Bus(EventBus),
    /// A JS `ContextCompiler`'s processors and layout.
    #[cfg(feature = "js")]
    Compiler(Weak<RefCell<CompilerSpec>>),
    /// A tool interrupt handler.
    #[cfg(feature = "js")]
    ToolHandler(Weak<ToolInterruptHandler>),
}

/// The first id this module hands out: the main module's ids are below
/// 2³⁰, the stores module's from 2³⁰ and the bus module's from 2³¹.
const FIRST_ID: u32 = if cfg!(feature = "js") {
    1
} else if cfg!(feature = "js-stores") {
    1 << 30
} else {
    1 << 31
};
/// The last: after it, ids start again from [`FIRST_ID`].
const LAST_ID: u32 = FIRST_ID + ((1 << 30) - 2);

thread_local! {
    static NEXT: Cell<u32> = const { Cell::new(FIRST_ID) };
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
        n.set(if id >= LAST_ID { FIRST_ID } else { id + 1 });
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
#[cfg_attr(not(any(feature = "js", feature = "js-bus")), allow(dead_code))]
pub(crate) fn lookup(value: &JsValue) -> Option<Native> {
    if !value.is_object() {
        return None;
    }
    let id = Reflect::get(value, &"__nativeId".into()).ok()?.as_f64()?;
    OBJECTS.with(|o| o.borrow().get(&(id as u32)).cloned())
}

#[cfg(feature = "js")]
/// The live processor behind `value`.
pub(crate) fn processor(value: &JsValue) -> Option<Rc<dyn Processor>> {
    match lookup(value)? {
        Native::Processor(w) => w.upgrade(),
        _ => None,
    }
}

#[cfg(feature = "js")]
/// The live artifact store behind `value`.
pub(crate) fn artifact_store(value: &JsValue) -> Option<Rc<dyn ArtifactStore>> {
    match lookup(value)? {
        Native::ArtifactStore(w) => w.upgrade(),
        _ => None,
    }
}

#[cfg(feature = "js")]
/// The live memory store behind `value`.
pub(crate) fn memory(value: &JsValue) -> Option<Rc<dyn MemoryStore>> {
    match lookup(value)? {
        Native::Memory(w) => w.upgrade(),
        _ => None,
    }
}

#[cfg(feature = "js")]
/// The live perception aligner behind `value`.
pub(crate) fn aligner(value: &JsValue) -> Option<Rc<PerceptionAligner>> {
    match lookup(value)? {
        Native::Aligner(w) => w.upgrade(),
        _ => None,
    }
}

#[cfg(feature = "js")]
/// The live session behind `value`.
pub(crate) fn session(value: &JsValue) -> Option<Rc<RefCell<Session>>> {
    match lookup(value)? {
        Native::Session(w) => w.upgrade(),
        _ => None,
    }
}

#[cfg(feature = "js-bus")]
/// The event bus behind `value`.
#[allow(unreachable_patterns)] // the bus module registers buses only
pub(crate) fn bus(value: &JsValue) -> Option<EventBus> {
    match lookup(value)? {
        Native::Bus(b) => Some(b),
        _ => None,
    }
}

#[cfg(feature = "js")]
/// The live `ContextCompiler` behind `value`.
pub(crate) fn compiler(value: &JsValue) -> Option<Rc<RefCell<CompilerSpec>>> {
    match lookup(value)? {
        Native::Compiler(w) => w.upgrade(),
        _ => None,
    }
}

#[cfg(feature = "js")]
/// The live `ToolInterruptHandler` behind `value`.
pub(crate) fn tool_handler(value: &JsValue) -> Option<Rc<ToolInterruptHandler>> {
    match lookup(value)? {
        Native::ToolHandler(w) => w.upgrade(),
        _ => None,
    }
}
