//! `MemoryArtifactStore` for JS.

use std::rc::Rc;

use context_compiler_js::error::{JsResult, Thrown};
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

use context_compiler::artifacts::{ArtifactHandle, ArtifactStore};
use context_compiler::error::{Error, ErrorCode};
use context_compiler::mem_store::{MemoryArtifactStore as CoreStore, StoredArtifact};
use context_compiler_js::convert::{argument_items, bytes, from_js, to_js};
use context_compiler_js::env::JsClock;
use context_compiler_js::hash::{content_id_now, JsHasher};
use context_compiler_js::registry::Registration;

use crate::registry;

/// Content-addressed artifacts (and saved sessions) held in memory, verified
/// on every read.
#[wasm_bindgen]
pub struct MemoryArtifactStore {
    inner: Rc<CoreStore>,
    registration: Registration,
}

context_compiler_js::store_methods!(MemoryArtifactStore, crate::registry::Main);

#[wasm_bindgen]
impl MemoryArtifactStore {
    /// An empty store.
    #[wasm_bindgen(constructor)]
    pub fn new() -> MemoryArtifactStore {
        let inner = Rc::new(CoreStore::new(Rc::new(JsClock)).with_hasher(Rc::new(JsHasher)));
        let weak: std::rc::Weak<dyn ArtifactStore> =
            Rc::downgrade(&(inner.clone() as Rc<dyn ArtifactStore>));
        let registration = registry::register(weak);
        MemoryArtifactStore {
            inner,
            registration,
        }
    }

    /// Every stored artifact with its bytes, for persisting the store.
    #[wasm_bindgen(unchecked_return_type = "StoredArtifact[]")]
    pub fn snapshot(&self) -> JsResult<JsValue> {
        let out = Array::new();
        for a in self.inner.snapshot() {
            let obj = Object::new();
            Reflect::set(&obj, &"handle".into(), &to_js(&a.handle)?)?;
            Reflect::set(&obj, &"sessions".into(), &to_js(&a.sessions)?)?;
            Reflect::set(
                &obj,
                &"content".into(),
                &Uint8Array::from(a.content.as_slice()),
            )?;
            out.push(&obj);
        }
        Ok(out.into())
    }

    /// Adds artifacts from a snapshot. They are verified when read, so a
    /// corrupted snapshot is never returned as content.
    pub fn restore(
        &self,
        #[wasm_bindgen(unchecked_param_type = "StoredArtifact[]")] artifacts: JsValue,
    ) -> JsResult<()> {
        let Some(items) = argument_items(&artifacts, "artifacts")? else {
            return Err(Thrown::from(Error::new(
                ErrorCode::InvalidArgument,
                "restore expects an array from snapshot()",
            )));
        };
        let mut restored = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let what = format!("artifacts[{i}]");
            let get = |k: &str| Reflect::get(&item, &k.into()).unwrap_or(JsValue::UNDEFINED);
            let handle: ArtifactHandle = from_js(&get("handle"), &format!("{what}.handle"))?;
            let sessions: Vec<String> = from_js(&get("sessions"), &format!("{what}.sessions"))?;
            let content = bytes(&get("content"), &format!("{what}.content"))?;
            restored.push(StoredArtifact {
                handle,
                sessions,
                content,
            });
        }
        self.inner.restore(restored);
        Ok(())
    }
}

impl Default for MemoryArtifactStore {
    fn default() -> Self {
        MemoryArtifactStore::new()
    }
}

/// The artifact id of `content` (bytes or a string): its SHA-256, lower-case hex.
#[wasm_bindgen(js_name = contentId)]
pub fn content_id(
    #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer | string")] content: JsValue,
) -> JsResult<String> {
    let content = bytes(&content, "content")?;
    Ok(content_id_now(&content))
}
