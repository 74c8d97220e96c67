//! Memory stores supplied by JS, and [`memory_arg`], which takes one of
//! ours or one of those. Shared by both modules: the bus module's handlers
//! reach the main module's `InMemoryBackend` and `PersistentMemory` through
//! their JS methods, as they would a store written in JS.

use std::rc::Rc;

use async_trait::async_trait;
use js_sys::Function;
use wasm_bindgen::JsValue;

use crate::convert::{from_js, to_js};
use crate::promise::{call_and_await, callable, require_callable};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::memory::{read_only, MemoryEntry, MemoryFilter, MemoryStore};

/// A memory store supplied by JS: an object with `recall(query, limit)` (or
/// a bare function `(query, limit) => entries`), sync or async, and for the
/// background handlers `put(entry)`, `delete(key)` and `list(filter)`.
pub struct JsMemoryStore {
    this: JsValue,
    recall: Function,
    put: Option<Function>,
    delete: Option<Function>,
    list: Option<Function>,
}

impl JsMemoryStore {
    /// Wraps `value`, or fails when it has no `recall` to call.
    pub fn from_js(value: &JsValue) -> Result<Self> {
        let (this, recall) = require_callable(
            value,
            "recall",
            "memory must be an InMemoryBackend, a PersistentMemory, an object with recall(query, limit), or a function",
        )?;
        let method = |name: &str| {
            if value.is_function() {
                None
            } else {
                callable(value, name).map(|(_, f)| f)
            }
        };
        Ok(JsMemoryStore {
            put: method("put"),
            delete: method("delete"),
            list: method("list"),
            this,
            recall,
        })
    }

    /// Wraps `value` for a handler that writes: it must also have `put`,
    /// `delete` and `list`.
    pub fn writable(value: &JsValue) -> Result<Self> {
        let store = JsMemoryStore::from_js(value)?;
        if store.put.is_none() || store.delete.is_none() || store.list.is_none() {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                "options.memory must be an InMemoryBackend, a PersistentMemory, or an object with recall, put, delete and list",
            ));
        }
        Ok(store)
    }

    async fn call(
        &self,
        f: &Option<Function>,
        operation: &str,
        args: &[JsValue],
    ) -> Result<JsValue> {
        let f = f.as_ref().ok_or_else(|| read_only(operation))?;
        call_and_await(f, &self.this, args, ErrorCode::MemoryFailed, operation).await
    }
}

/// The memory store behind `value`: one of ours, or one written in JS
/// (which must be able to write when `writable`).
pub fn memory_arg(value: &JsValue, writable: bool) -> Result<Rc<dyn MemoryStore>> {
    if let Some(native) = crate::registry::live::<dyn MemoryStore>(value) {
        return Ok(native);
    }
    Ok(Rc::new(if writable {
        JsMemoryStore::writable(value)?
    } else {
        JsMemoryStore::from_js(value)?
    }))
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

    async fn put(&self, entry: MemoryEntry) -> Result<()> {
        self.call(&self.put, "memory put", &[to_js(&entry)?])
            .await?;
        Ok(())
    }

    async fn delete(&self, key: &str) -> Result<bool> {
        let out = self
            .call(&self.delete, "memory delete", &[key.into()])
            .await?;
        Ok(out.as_bool().unwrap_or(true))
    }

    async fn list(&self, filter: &MemoryFilter) -> Result<Vec<MemoryEntry>> {
        let value = self
            .call(&self.list, "memory list", &[to_js(filter)?])
            .await?;
        from_js(&value, "memory list result")
            .map_err(|e| Error::new(ErrorCode::MemoryFailed, e.message()))
    }
}
