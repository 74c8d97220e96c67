//! The built-in memory class for JS, `InMemoryBackend` (the main module's;
//! what it shares with `PersistentMemory` is in `memory.rs`).

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use crate::js::args::StringArg;
use crate::js::convert::{string, to_js};
use crate::js::env::JsClock;
use crate::js::error::to_js_error;
use crate::js::memory::{
    entry_arg, filter_arg, memory_methods, registration, MemoryEntryArg, MemoryFilterArg,
};
use crate::js::promise::spawn;
use crate::js::registry::Registration;
use crate::memory::{InMemoryBackend as CoreMemory, MemoryStore};

#[wasm_bindgen(typescript_custom_section)]
const TS_MEMORY: &'static str = r#"
/** Which entries `list` returns; absent fields match anything. */
export interface MemoryFilter {
  subject?: string;
  category?: string;
}
"#;

/// The built-in memory: entries held in memory, recall ranked by BM25.
#[wasm_bindgen]
pub struct InMemoryBackend {
    inner: Rc<CoreMemory>,
    registration: Registration,
}

#[wasm_bindgen]
impl InMemoryBackend {
    /// An empty memory.
    #[wasm_bindgen(constructor)]
    pub fn new() -> InMemoryBackend {
        let inner = Rc::new(CoreMemory::with_clock(Rc::new(JsClock)));
        let registration = registration(&inner);
        InMemoryBackend {
            inner,
            registration,
        }
    }

    /// Stores (or replaces) the entry `key` with a content and a category.
    pub fn store(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] content: JsValue,
        category: Option<StringArg>,
    ) -> std::result::Result<(), JsValue> {
        let category: Option<JsValue> = category.map(Into::into);
        let key = string(&key, "key")?;
        let content = string(&content, "content")?;
        let category = match category.filter(|c| !c.is_undefined() && !c.is_null()) {
            Some(c) => string(&c, "category")?,
            None => String::new(),
        };
        self.inner.store(&key, &content, &category);
        Ok(())
    }

    /// Stores `entry` (with its subject, confidence, source...), replacing
    /// the entry with its key; its creation and last-recall times are kept
    /// unless `entry` sets them.
    pub fn put(&self, entry: MemoryEntryArg) -> std::result::Result<(), JsValue> {
        self.inner.insert(entry_arg(&entry)?);
        Ok(())
    }

    /// Removes the entry `key`; `false` when there was none.
    pub fn forget(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> std::result::Result<bool, JsValue> {
        Ok(self.inner.forget(&string(&key, "key")?))
    }

    /// Removes the entry `key` (the memory-store name of `forget`).
    pub fn delete(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> std::result::Result<bool, JsValue> {
        self.forget(key)
    }
}

impl Default for InMemoryBackend {
    fn default() -> Self {
        InMemoryBackend::new()
    }
}

memory_methods!(InMemoryBackend);
