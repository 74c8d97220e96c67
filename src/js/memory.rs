//! The persisted memory class for JS, `PersistentMemory`, and what it shares
//! with `InMemoryBackend` (`in_memory.rs`; memory stores supplied by JS are
//! in `memory_arg.rs`). Both the main module and the stores module have it:
//! each opens memories over its own stores.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use crate::error::{Error, ErrorCode, Result};
use crate::js::convert::{from_js, string, to_js};
use crate::js::error::to_js_error;
use crate::js::promise::spawn;
use crate::js::registry::{Native, Registration};
use crate::memory::{MemoryEntry, MemoryFilter, MemoryStore, PersistentMemory as CorePersistent};

#[wasm_bindgen]
extern "C" {
    /// A `MemoryEntry` object.
    #[wasm_bindgen(typescript_type = "MemoryEntry")]
    pub type MemoryEntryArg;
    /// A `MemoryFilter` object.
    #[wasm_bindgen(typescript_type = "MemoryFilter")]
    pub type MemoryFilterArg;
}

pub(crate) fn entry_arg(entry: &JsValue) -> Result<MemoryEntry> {
    let entry: MemoryEntry = from_js(entry, "entry")?;
    if entry.key.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "entry.key must not be empty",
        ));
    }
    Ok(entry)
}

pub(crate) fn filter_arg(filter: Option<MemoryFilterArg>) -> Result<MemoryFilter> {
    match filter.map(JsValue::from) {
        Some(f) if !f.is_undefined() && !f.is_null() => from_js(&f, "filter"),
        _ => Ok(MemoryFilter::default()),
    }
}

pub(crate) fn registration(inner: &Rc<impl MemoryStore + 'static>) -> Registration {
    let store: Rc<dyn MemoryStore> = inner.clone();
    Registration::new(Native::Memory(Rc::downgrade(&store)))
}

/// Memory persisted in an artifact store's sessions: every change is
/// journalled and saved before its promise resolves, so the memory survives
/// reloads and restarts wherever the store keeps sessions. Opened with
/// `store.openMemory(name)`.
#[wasm_bindgen]
pub struct PersistentMemory {
    inner: Rc<CorePersistent>,
    registration: Registration,
}

impl PersistentMemory {
    /// Wraps an opened core memory.
    pub(crate) fn wrap(inner: CorePersistent) -> PersistentMemory {
        let inner = Rc::new(inner);
        let registration = registration(&inner);
        PersistentMemory {
            inner,
            registration,
        }
    }
}

#[wasm_bindgen]
impl PersistentMemory {
    /// The id of the session its journal is saved as.
    #[wasm_bindgen(getter, js_name = journalId)]
    pub fn journal_id(&self) -> String {
        self.inner.journal_id()
    }

    /// Stores `entry` and saves; a failed save rejects, and the change is
    /// kept and written by the next save.
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn put(&self, entry: MemoryEntryArg) -> Promise {
        let entry = match entry_arg(&entry) {
            Ok(e) => e,
            Err(e) => return Promise::reject(&to_js_error(e)),
        };
        let inner = self.inner.clone();
        spawn(async move {
            inner.put(entry).await?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Removes the entry `key` and saves; resolves to `false` when there was none.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn delete(&self, #[wasm_bindgen(unchecked_param_type = "string")] key: JsValue) -> Promise {
        let key = match string(&key, "key") {
            Ok(k) => k,
            Err(e) => return Promise::reject(&to_js_error(e)),
        };
        let inner = self.inner.clone();
        spawn(async move { Ok(inner.delete(&key).await?.into()) })
    }

    /// Writes what is not saved yet (recall times included).
    #[wasm_bindgen(unchecked_return_type = "Promise<SaveReport>")]
    pub fn save(&self) -> Promise {
        let inner = self.inner.clone();
        spawn(async move { to_js(&inner.save().await?) })
    }
}

/// The methods both memory classes share, stamped onto each.
macro_rules! memory_methods {
    ($js:ident) => {
        #[wasm_bindgen]
        impl $js {
            #[wasm_bindgen(getter = __nativeId, skip_typescript)]
            /// Registry id (internal).
            pub fn native_id(&self) -> u32 {
                self.registration.id()
            }

            /// The number of entries.
            #[wasm_bindgen(getter)]
            pub fn size(&self) -> usize {
                self.inner.len()
            }

            /// Every entry passing `filter` (by `subject`, `category`), in insertion order.
            #[wasm_bindgen(unchecked_return_type = "MemoryEntry[]")]
            pub fn list(
                &self,
                filter: Option<MemoryFilterArg>,
            ) -> std::result::Result<JsValue, JsValue> {
                Ok(to_js(&self.inner.entries(&filter_arg(filter)?))?)
            }

            /// Resolves to up to `limit` (default 5) entries relevant to
            /// `query`, best first, and marks them recalled now.
            #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry[]>")]
            pub fn recall(
                &self,
                #[wasm_bindgen(unchecked_param_type = "string")] query: JsValue,
                #[wasm_bindgen(unchecked_optional_param_type = "number")] limit: Option<JsValue>,
            ) -> Promise {
                let args = string(&query, "query").and_then(|q| {
                    let limit = limit.unwrap_or(JsValue::UNDEFINED);
                    let code = $crate::error::ErrorCode::InvalidArgument;
                    Ok((q, $crate::js::convert::count(&limit, "limit", code)?))
                });
                let (query, limit) = match args {
                    Ok(a) => a,
                    Err(e) => return Promise::reject(&to_js_error(e)),
                };
                let store: Rc<dyn MemoryStore> = self.inner.clone();
                spawn(async move {
                    to_js(
                        &store
                            .recall(&query, limit.map_or(5, |n| n as usize))
                            .await?,
                    )
                })
            }
        }
    };
}

memory_methods!(PersistentMemory);

#[cfg(feature = "js")]
pub(crate) use memory_methods;
