//! `MemoryArtifactStore` for JS.

use std::rc::Rc;

use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::js::types::*;

use crate::artifacts::{
    ArtifactHandle, ArtifactStore, MemoryArtifactStore as CoreStore, StoreOptions, StoredArtifact,
};
use crate::error::{Error, ErrorCode, Result};
use crate::js::convert::{bytes, from_js, option, string, to_js};
use crate::js::env::JsClock;
use crate::js::error::to_js_error;
use crate::js::promise::spawn;
use crate::js::registry::{Native, Registration};

/// Content-addressed artifacts held in memory, verified on every read.
#[wasm_bindgen]
pub struct MemoryArtifactStore {
    inner: Rc<CoreStore>,
    registration: Registration,
}

fn optional_string<T: AsRef<JsValue>>(options: &Option<T>, key: &str) -> Result<Option<String>> {
    let v = option(options, key, "options")?;
    if v.is_undefined() || v.is_null() {
        Ok(None)
    } else {
        string(&v, &format!("options.{key}")).map(Some)
    }
}

fn reject(e: Error) -> js_sys::Promise {
    js_sys::Promise::reject(&to_js_error(e))
}

#[wasm_bindgen]
impl MemoryArtifactStore {
    /// An empty store.
    #[wasm_bindgen(constructor)]
    pub fn new() -> MemoryArtifactStore {
        let inner = Rc::new(CoreStore::new(Rc::new(JsClock)));
        let weak: std::rc::Weak<dyn ArtifactStore> =
            Rc::downgrade(&(inner.clone() as Rc<dyn ArtifactStore>));
        let registration = Registration::new(Native::ArtifactStore(weak));
        MemoryArtifactStore {
            inner,
            registration,
        }
    }

    #[wasm_bindgen(getter = __nativeId, skip_typescript)]
    /// Registry id (internal).
    pub fn native_id(&self) -> u32 {
        self.registration.id()
    }

    /// Stores `content` (bytes or a string) and resolves to its handle; the
    /// same content resolves to the same handle. Options: `mimeType`,
    /// `sessionId`.
    #[wasm_bindgen(unchecked_return_type = "Promise<ArtifactHandle>")]
    pub fn store(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer | string")]
        content: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string")] source: JsValue,
        options: Option<StoreOptionsArg>,
    ) -> js_sys::Promise {
        let args = (|| -> Result<_> {
            Ok((
                bytes(&content, "content")?,
                string(&source, "source")?,
                StoreOptions {
                    mime_type: optional_string(&options, "mimeType")?,
                    session_id: optional_string(&options, "sessionId")?,
                },
            ))
        })();
        let (content, source, opts) = match args {
            Ok(a) => a,
            Err(e) => return reject(e),
        };
        let store = self.inner.clone();
        spawn(async move { to_js(&store.store(&content, &source, opts).await?) })
    }

    /// Resolves to the content of `artifactId` (verified against its hash), or
    /// `null` when absent. A corrupted artifact rejects with `ARTIFACT_INTEGRITY`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array | null>")]
    pub fn retrieve(
        &self,
        #[wasm_bindgen(js_name = artifactId)] artifact_id: String,
    ) -> js_sys::Promise {
        let store = self.inner.clone();
        spawn(async move {
            Ok(match store.retrieve(&artifact_id).await? {
                Some(bytes) => Uint8Array::from(bytes.as_slice()).into(),
                None => JsValue::NULL,
            })
        })
    }

    /// Resolves to whether `artifactId` is stored.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn exists(
        &self,
        #[wasm_bindgen(js_name = artifactId)] artifact_id: String,
    ) -> js_sys::Promise {
        let store = self.inner.clone();
        spawn(async move { Ok(store.exists(&artifact_id).await?.into()) })
    }

    /// Resolves to every handle, or those stored by `sessionId`.
    #[wasm_bindgen(js_name = listHandles, unchecked_return_type = "Promise<ArtifactHandle[]>")]
    pub fn list_handles(
        &self,
        #[wasm_bindgen(js_name = sessionId)] session_id: Option<String>,
    ) -> js_sys::Promise {
        let store = self.inner.clone();
        spawn(async move { to_js(&store.list_handles(session_id.as_deref()).await?) })
    }

    /// Deletes `artifactId`; resolves to `false` when it was not stored.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn delete(
        &self,
        #[wasm_bindgen(js_name = artifactId)] artifact_id: String,
    ) -> js_sys::Promise {
        let store = self.inner.clone();
        spawn(async move { Ok(store.delete(&artifact_id).await?.into()) })
    }

    /// Every stored artifact with its bytes, for persisting the store.
    #[wasm_bindgen(unchecked_return_type = "StoredArtifact[]")]
    pub fn snapshot(&self) -> std::result::Result<JsValue, JsValue> {
        let out = Array::new();
        for a in self.inner.snapshot() {
            let obj = Object::new();
            Reflect::set(
                &obj,
                &"handle".into(),
                &to_js(&a.handle).map_err(to_js_error)?,
            )?;
            Reflect::set(
                &obj,
                &"sessions".into(),
                &to_js(&a.sessions).map_err(to_js_error)?,
            )?;
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
            let handle: ArtifactHandle =
                from_js(&get("handle"), &format!("{what}.handle")).map_err(to_js_error)?;
            let sessions: Vec<String> =
                from_js(&get("sessions"), &format!("{what}.sessions")).map_err(to_js_error)?;
            let content =
                bytes(&get("content"), &format!("{what}.content")).map_err(to_js_error)?;
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
