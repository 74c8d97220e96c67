//! What the stores module tells the shared store methods (`crates/js`,
//! `store_methods!`): a session to save is a main-module `Session` read
//! through its JS methods, a loaded one is made by the main module, and a
//! memory opens as this module's `PersistentMemory`.

use std::rc::Rc;

use context_compiler::error::Result;
use context_compiler::memory::PersistentMemory as CoreMemory;
use context_compiler::session::{SavedEvents, SessionSource};
use context_compiler_js::store_methods::StoreModule;
use wasm_bindgen::JsValue;

use crate::memory::PersistentMemory;
use crate::registry::Stores;
use crate::session_source::{restore, JsSessionSource};

impl StoreModule for Stores {
    fn session_source(value: &JsValue) -> Result<Rc<dyn SessionSource>> {
        Ok(Rc::new(JsSessionSource::new(value)?))
    }

    fn restored(session_id: &str, saved: SavedEvents, options: &JsValue) -> Result<JsValue> {
        restore(session_id, &saved, options)
    }

    fn memory(memory: CoreMemory) -> JsValue {
        PersistentMemory::wrap(memory).into()
    }
}
