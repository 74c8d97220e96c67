//! The built-in memory class for JS, `InMemoryBackend` (the main module's;
//! what it shares with `PersistentMemory` is in `memory.rs`).

use std::rc::Rc;

use context_compiler_js::error::JsResult;
use wasm_bindgen::prelude::*;

use context_compiler::memory::InMemoryBackend as CoreMemory;
use context_compiler_js::args::StringArg;
use context_compiler_js::convert::string;
use context_compiler_js::env::JsClock;
use context_compiler_js::memory::{entry_arg, registration, MemoryEntryArg};
use context_compiler_js::registry::Registration;

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
        let registration = registration::<crate::registry::Main>(&inner);
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
    ) -> JsResult<()> {
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
    pub fn put(&self, entry: MemoryEntryArg) -> JsResult<()> {
        self.inner.insert(entry_arg(&entry)?);
        Ok(())
    }

    /// Removes the entry `key`; `false` when there was none.
    pub fn forget(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> JsResult<bool> {
        Ok(self.inner.forget(&string(&key, "key")?))
    }

    /// Removes the entry `key` (the memory-store name of `forget`).
    pub fn delete(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> JsResult<bool> {
        self.forget(key)
    }
}

impl Default for InMemoryBackend {
    fn default() -> Self {
        InMemoryBackend::new()
    }
}

context_compiler_js::memory_methods!(InMemoryBackend);
