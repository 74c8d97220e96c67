//! `MemoryArtifactStore` for JS.

use std::rc::Rc;

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::artifacts::{
    ArtifactHandle, ArtifactStore, MemoryArtifactStore as CoreStore, StoredArtifact,
};
use crate::error::{Error, ErrorCode};
use crate::js::convert::{bytes, from_js, to_js};
use crate::js::env::JsClock;
use crate::js::error::to_js_error;
use crate::js::hash::{content_id_now, JsHasher};
use crate::js::registry::{Native, Registration};
use crate::js::store_methods::store_methods;

/// Content-addressed artifacts (and saved sessions) held in memory, verified
/// on every read.
#[wasm_bindgen]
pub struct MemoryArtifactStore {
    inner: Rc<CoreStore>,
    registration: Registration,
}

store_methods!(MemoryArtifactStore);

#[wasm_bindgen]
impl MemoryArtifactStore {
    /// An empty store.
    #[wasm_bindgen(constructor)]
    pub fn new() -> MemoryArtifactStore {
        let inner = Rc::new(CoreStore::new(Rc::new(JsClock)).with_hasher(Rc::new(JsHasher)));
        let weak: std::rc::Weak<dyn ArtifactStore> =
            Rc::downgrade(&(inner.clone() as Rc<dyn ArtifactStore>));
        let registration = Registration::new(Native::ArtifactStore(weak));
        MemoryArtifactStore {
            inner,
            registration,
        }
    }

    /// Every stored artifact with its bytes, for persisting the store.
    #[wasm_bindgen(unchecked_return_type = "StoredArtifact[]")]
    pub fn snapshot(&self) -> std::result::Result<JsValue, JsValue> {
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
    ) -> std::result::Result<(), JsValue> {
        if !Array::is_array(&artifacts) {
            return Err(to_js_error(Error::new(
                ErrorCode::InvalidArgument,
                "restore expects an array from snapshot()",
            )));
        }
        let mut restored = Vec::new();
        for (i, item) in Array::from(&artifacts).iter().enumerate() {
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
) -> std::result::Result<String, JsValue> {
    let content = bytes(&content, "content")?;
    Ok(content_id_now(&content))
}
