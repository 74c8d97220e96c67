//! Finds the Rust object behind a JS instance of one of a module's classes.
//!
//! wasm-bindgen cannot borrow an exported struct out of a `JsValue` held in
//! an array or options object, so each native processor, store, session, ...
//! registers what other code needs of it (usually a weak reference, e.g. a
//! `Weak<dyn Processor>`) under a numeric id, exposed to JS as the hidden
//! getter `__nativeId`. The JS object keeps the strong reference; dropping it
//! (via `free()` or garbage collection) unregisters it. A lookup names the
//! type it wants and finds only an object registered as that type.
//!
//! Each of the package's modules links its own copy of this crate, so it has
//! its own registry, and hands out ids from its own range of the `u32`s (its
//! [`Module::FIRST_ID`]): an object of another module is never mistaken for
//! one of ours, it is simply not found (and taken through its JS methods
//! where that is allowed).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use js_sys::Reflect;
use wasm_bindgen::JsValue;

/// A wasm module of the package: where its registry's ids start.
pub trait Module: 'static {
    /// The first id the module hands out. The main module's ids are below
    /// 2³⁰, the stores module's from 2³⁰ and the bus module's from 2³¹.
    const FIRST_ID: u32;
}

/// How many ids a module hands out before it starts again from its first.
const IDS_PER_MODULE: u32 = (1 << 30) - 1;

thread_local! {
    /// The next id (0 before the first registration).
    static NEXT: Cell<u32> = const { Cell::new(0) };
    static OBJECTS: RefCell<HashMap<u32, Box<dyn Any>>> = RefCell::new(HashMap::new());
}

/// A native object's entry in the registry, held by the JS object that owns
/// it: dropping the JS object (`free()` or garbage collection) unregisters it.
pub struct Registration(u32);

impl Registration {
    /// Registers `native` in module `M`'s range for as long as the returned
    /// guard lives; [`lookup`] finds it as a `T`.
    pub fn new<M: Module, T: 'static>(native: T) -> Registration {
        Registration(register(M::FIRST_ID, Box::new(native)))
    }

    /// The id exposed to JS as `__nativeId`.
    pub fn id(&self) -> u32 {
        self.0
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        unregister(self.0);
    }
}

/// Registers `native` and returns its id, the next in the range starting at
/// `first`.
fn register(first: u32, native: Box<dyn Any>) -> u32 {
    let last = first + (IDS_PER_MODULE - 1);
    let id = NEXT.with(|n| {
        let id = match n.get() {
            id if (first..=last).contains(&id) => id,
            _ => first,
        };
        n.set(if id >= last { first } else { id + 1 });
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

/// What was registered as a `T` behind `value`, if it is a live instance of
/// this module's classes that registered one.
pub fn lookup<T: Clone + 'static>(value: &JsValue) -> Option<T> {
    if !value.is_object() {
        return None;
    }
    let id = Reflect::get(value, &"__nativeId".into()).ok()?.as_f64()?;
    if !(0.0..=f64::from(u32::MAX)).contains(&id) {
        return None;
    }
    OBJECTS.with(|o| {
        let objects = o.try_borrow().ok()?;
        objects.get(&(id as u32))?.downcast_ref::<T>().cloned()
    })
}

/// The live object registered as a `Weak<T>` behind `value` (a processor,
/// a store, a session, ...), or `None`.
pub fn live<T: ?Sized + 'static>(value: &JsValue) -> Option<Rc<T>> {
    lookup::<Weak<T>>(value)?.upgrade()
}
