//! The persisted memory class for JS, `PersistentMemory`, and what it shares
//! with the main module's `InMemoryBackend` (memory stores supplied by JS are
//! in `memory_arg.rs`). Both the main module and the stores module have the
//! class, each over its own stores: each stamps it with
//! [`persistent_memory_class!`](crate::persistent_memory_class).

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::convert::from_js;
use crate::registry::{Module, Registration};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::memory::{MemoryEntry, MemoryFilter, MemoryStore};

#[wasm_bindgen]
extern "C" {
    /// A `MemoryEntry` object.
    #[wasm_bindgen(typescript_type = "MemoryEntry")]
    pub type MemoryEntryArg;
    /// A `MemoryFilter` object.
    #[wasm_bindgen(typescript_type = "MemoryFilter")]
    pub type MemoryFilterArg;
}

/// A `MemoryEntry` argument: its key must not be empty.
pub fn entry_arg(entry: &JsValue) -> Result<MemoryEntry> {
    let entry: MemoryEntry = from_js(entry, "entry")?;
    if entry.key.is_empty() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "entry.key must not be empty",
        ));
    }
    Ok(entry)
}

/// A `MemoryFilter` argument (none: every entry).
pub fn filter_arg(filter: Option<MemoryFilterArg>) -> Result<MemoryFilter> {
    match filter.map(JsValue::from) {
        Some(f) if !f.is_undefined() && !f.is_null() => from_js(&f, "filter"),
        _ => Ok(MemoryFilter::default()),
    }
}

/// Registers a memory store in module `M`'s registry, where the main
/// module's compilers and processors find it.
pub fn registration<M: Module>(inner: &Rc<impl MemoryStore + 'static>) -> Registration {
    let store: Rc<dyn MemoryStore> = inner.clone();
    Registration::new::<M, _>(Rc::downgrade(&store))
}

/// Declares the `PersistentMemory` class in a module whose registry is
/// `$module`'s (the main module and the stores module each declare it, over
/// their own stores): memory journalled into one of the module's stores.
#[macro_export]
macro_rules! persistent_memory_class {
    ($module:ty) => {
        use $crate::context_compiler::memory::MemoryStore as _;

        /// Memory persisted in an artifact store's sessions: every change is
        /// journalled and saved before its promise resolves, so the memory survives
        /// reloads and restarts wherever the store keeps sessions. Opened with
        /// `store.openMemory(name)`.
        #[wasm_bindgen]
        pub struct PersistentMemory {
            inner: std::rc::Rc<$crate::context_compiler::memory::PersistentMemory>,
            registration: $crate::registry::Registration,
        }

        impl PersistentMemory {
            /// Wraps an opened core memory.
            pub fn wrap(
                inner: $crate::context_compiler::memory::PersistentMemory,
            ) -> PersistentMemory {
                let inner = std::rc::Rc::new(inner);
                let registration = $crate::memory::registration::<$module>(&inner);
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
            pub fn put(&self, entry: $crate::memory::MemoryEntryArg) -> js_sys::Promise {
                let entry = match $crate::memory::entry_arg(&entry) {
                    Ok(e) => e,
                    Err(e) => return js_sys::Promise::reject(&$crate::error::to_js_error(e)),
                };
                let inner = self.inner.clone();
                $crate::promise::spawn(async move {
                    inner.put(entry).await?;
                    Ok(wasm_bindgen::JsValue::UNDEFINED)
                })
            }

            /// Removes the entry `key` and saves; resolves to `false` when there was none.
            #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
            pub fn delete(
                &self,
                #[wasm_bindgen(unchecked_param_type = "string")] key: wasm_bindgen::JsValue,
            ) -> js_sys::Promise {
                let key = match $crate::convert::string(&key, "key") {
                    Ok(k) => k,
                    Err(e) => return js_sys::Promise::reject(&$crate::error::to_js_error(e)),
                };
                let inner = self.inner.clone();
                $crate::promise::spawn(async move { Ok(inner.delete(&key).await?.into()) })
            }

            /// Writes what is not saved yet (recall times included).
            #[wasm_bindgen(unchecked_return_type = "Promise<SaveReport>")]
            pub fn save(&self) -> js_sys::Promise {
                let inner = self.inner.clone();
                $crate::promise::spawn(async move { $crate::convert::to_js(&inner.save().await?) })
            }
        }
        $crate::memory_methods!(PersistentMemory);
    };
}

/// The methods both memory classes share, stamped onto each.
#[macro_export]
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
                filter: Option<$crate::memory::MemoryFilterArg>,
            ) -> $crate::error::JsResult<wasm_bindgen::JsValue> {
                Ok($crate::convert::to_js(
                    &self.inner.entries(&$crate::memory::filter_arg(filter)?),
                )?)
            }

            /// Resolves to up to `limit` (default 5) entries relevant to
            /// `query`, best first, and marks them recalled now.
            #[wasm_bindgen(unchecked_return_type = "Promise<MemoryEntry[]>")]
            pub fn recall(
                &self,
                #[wasm_bindgen(unchecked_param_type = "string")] query: wasm_bindgen::JsValue,
                #[wasm_bindgen(unchecked_optional_param_type = "number")] limit: Option<
                    wasm_bindgen::JsValue,
                >,
            ) -> js_sys::Promise {
                let args = $crate::convert::string(&query, "query").and_then(|q| {
                    let limit = limit.unwrap_or(wasm_bindgen::JsValue::UNDEFINED);
                    let code = $crate::context_compiler::error::ErrorCode::InvalidArgument;
                    Ok((q, $crate::convert::count(&limit, "limit", code)?))
                });
                let (query, limit) = match args {
                    Ok(a) => a,
                    Err(e) => return js_sys::Promise::reject(&$crate::error::to_js_error(e)),
                };
                let store: std::rc::Rc<dyn $crate::context_compiler::memory::MemoryStore> =
                    self.inner.clone();
                $crate::promise::spawn(async move {
                    $crate::convert::to_js(
                        &store
                            .recall(&query, limit.map_or(5, |n| n as usize))
                            .await?,
                    )
                })
            }
        }
    };
}
