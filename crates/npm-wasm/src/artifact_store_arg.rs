//! The artifact stores the main module takes as arguments (an
//! `ArtifactAttacher`'s store, a tool handler's `artifactStore`): one of its
//! own (`MemoryArtifactStore`, found in the registry), or any object with
//! async `store`, `retrieve`, `exists`, `listHandles` and `delete`, called
//! through those methods: the stores module's KV, IndexedDB, file and SQLite
//! stores, or a store written in JS.

use std::rc::Rc;

use async_trait::async_trait;
use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

use crate::registry;
use context_compiler::artifacts::{ArtifactHandle, ArtifactStore, StoreOptions};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{bytes, describe, from_js};
use context_compiler_js::error::from_thrown;
use context_compiler_js::promise::{call_and_await_mapped, require_callable, require_methods};

/// The methods a store object must have.
const METHODS: [&str; 5] = ["store", "retrieve", "exists", "listHandles", "delete"];

/// The store `value` names (`what` says which argument it is, for errors):
/// `INVALID_ARGUMENT` when it is neither ours nor has the store methods.
pub(crate) fn artifact_store_arg(value: &JsValue, what: &str) -> Result<Rc<dyn ArtifactStore>> {
    if let Some(store) = registry::artifact_store(value) {
        return Ok(store);
    }
    require_methods(
        value,
        &METHODS,
        &format!("{what} must be an artifact store (an object with async store, retrieve, exists, listHandles and delete methods)"),
    )?;
    Ok(Rc::new(JsArtifactStore {
        this: value.clone(),
    }))
}

/// A JS store object seen as the core's [`ArtifactStore`]. Its methods are
/// looked up on every call, as JS code calling `store.retrieve(...)` would.
struct JsArtifactStore {
    this: JsValue,
}

impl JsArtifactStore {
    /// Calls `this[name](...args)` and awaits it. What it throws or rejects
    /// with keeps its code when it has one of ours (`ARTIFACT_INTEGRITY`,
    /// `STORE_TIMEOUT`, ... from the stores module) and is `STORE_FAILED`
    /// otherwise.
    async fn call(&self, name: &str, args: &[JsValue]) -> Result<JsValue> {
        let (_, f) = require_callable(
            &self.this,
            name,
            &format!("the artifact store has no {name} method"),
        )
        .map_err(|e| Error::new(ErrorCode::StoreFailed, e.message()))?;
        call_and_await_mapped(&f, &self.this, args, |e, how| {
            from_thrown(e, ErrorCode::StoreFailed, &format!("store.{name} {how}"))
        })
        .await
    }
}

/// `STORE_INVALID_VALUE`: `store.{name}` resolved to something else than `expected`.
fn invalid(name: &str, expected: &str, value: &JsValue) -> Error {
    Error::new(
        ErrorCode::StoreInvalidValue,
        format!(
            "store.{name} must resolve to {expected} (got {})",
            describe(value)
        ),
    )
}

fn boolean(name: &str, value: JsValue) -> Result<bool> {
    value
        .as_bool()
        .ok_or_else(|| invalid(name, "a boolean", &value))
}

#[async_trait(?Send)]
impl ArtifactStore for JsArtifactStore {
    async fn store(
        &self,
        content: &[u8],
        source: &str,
        options: StoreOptions,
    ) -> Result<ArtifactHandle> {
        let js_options = Object::new();
        if let Some(mime) = &options.mime_type {
            let _ = Reflect::set(&js_options, &"mimeType".into(), &mime.into());
        }
        if let Some(session) = &options.session_id {
            let _ = Reflect::set(&js_options, &"sessionId".into(), &session.into());
        }
        let content = js_sys::Uint8Array::from(content);
        let handle = self
            .call("store", &[content.into(), source.into(), js_options.into()])
            .await?;
        from_js(&handle, "store.store's handle")
            .map_err(|e| Error::new(ErrorCode::StoreInvalidValue, e.message()))
    }

    async fn retrieve(&self, artifact_id: &str) -> Result<Option<Vec<u8>>> {
        let content = self.call("retrieve", &[artifact_id.into()]).await?;
        if content.is_null() || content.is_undefined() {
            return Ok(None);
        }
        bytes(&content, "store.retrieve's content")
            .map(Some)
            .map_err(|_| invalid("retrieve", "bytes or null", &content))
    }

    async fn exists(&self, artifact_id: &str) -> Result<bool> {
        boolean("exists", self.call("exists", &[artifact_id.into()]).await?)
    }

    async fn list_handles(&self, session_id: Option<&str>) -> Result<Vec<ArtifactHandle>> {
        let session = session_id.map_or(JsValue::UNDEFINED, JsValue::from);
        let handles = self.call("listHandles", &[session]).await?;
        from_js(&handles, "store.listHandles's handles")
            .map_err(|e| Error::new(ErrorCode::StoreInvalidValue, e.message()))
    }

    async fn delete(&self, artifact_id: &str) -> Result<bool> {
        boolean("delete", self.call("delete", &[artifact_id.into()]).await?)
    }
}
