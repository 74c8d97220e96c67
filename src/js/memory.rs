//! `InMemoryBackend` for JS, and JS-supplied memory stores.

use std::rc::Rc;

use async_trait::async_trait;
use js_sys::Function;
use wasm_bindgen::prelude::*;

use crate::error::{Error, ErrorCode, Result};
use crate::js::convert::{from_js, string, to_js};
use crate::js::error::to_js_error;
use crate::js::promise::{call_and_await, require_callable, spawn};
use crate::js::registry::{Native, Registration};
use crate::js::types::StringArg;
use crate::memory::{InMemoryBackend as CoreMemory, MemoryEntry, MemoryStore};

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
        let inner = Rc::new(CoreMemory::new());
        let weak: std::rc::Weak<dyn MemoryStore> =
            Rc::downgrade(&(inner.clone() as Rc<dyn MemoryStore>));
        let registration = Registration::new(Native::Memory(weak));
        InMemoryBackend {
            inner,
            registration,
        }
    }

    #[wasm_bindgen(getter = __nativeId, skip_typescript)]
    /// Registry id (internal).
    pub fn native_id(&self) -> u32 {
        self.registration.id()
    }

    /// Stores (or replaces) the entry `key`.
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

    /// Removes the entry `key`; `false` when there was none.
    pub fn forget(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue,
    ) -> std::result::Result<bool, JsValue> {
        Ok(self.inner.forget(&string(&key, "key")?))
    }

    /// The number of entries.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> usize {
        self.inner.len()
    }

    /// Resolves to up to `limit` (default 5) entries relevant to `query`, best first.
    #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry[]>")]
    pub fn recall(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
        limit: Option<u32>,
    ) -> js_sys::Promise {
        let query = match string(&query, "query") {
            Ok(q) => q,
            Err(e) => return js_sys::Promise::reject(&to_js_error(e)),
        };
        let inner = self.inner.clone();
        spawn(async move { to_js(&inner.recall(&query, limit.unwrap_or(5) as usize).await?) })
    }
}

impl Default for InMemoryBackend {
    fn default() -> Self {
        InMemoryBackend::new()
    }
}

/// A memory store supplied by JS: an object with `recall(query, limit)` or a
/// bare function `(query, limit) => entries`, sync or async.
pub(crate) struct JsMemoryStore {
    this: JsValue,
    recall: Function,
}

impl JsMemoryStore {
    /// Wraps `value`, or fails when it has no `recall` to call.
    pub(crate) fn from_js(value: &JsValue) -> Result<Self> {
        let (this, recall) = require_callable(
            value,
            "recall",
            "memory must be an InMemoryBackend, an object with recall(query, limit), or a function",
        )?;
        Ok(JsMemoryStore { this, recall })
    }
}

#[async_trait(?Send)]
impl MemoryStore for JsMemoryStore {
    async fn recall(&self, query: &str, limit: usize) -> Result<Vec<MemoryEntry>> {
        let args = [JsValue::from_str(query), JsValue::from_f64(limit as f64)];
        let value = call_and_await(
            &self.recall,
            &self.this,
            &args,
            ErrorCode::MemoryFailed,
            "memory recall",
        )
        .await?;
        from_js(&value, "memory recall result")
            .map_err(|e| Error::new(ErrorCode::MemoryFailed, e.message()))
    }
}
