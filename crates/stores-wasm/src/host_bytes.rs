//! `store` and `retrieve` of the KV and file stores, whose values stay in JS
//! memory ([`JsBytes`]): the caller's bytes are hashed by the host's crypto
//! and copied once, into the record written; a retrieved artifact is the
//! value read (a view of it past the record's header, or its chunks joined),
//! verified where it lies.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::JsValue;

use crate::bytes::content_bytes;
use crate::js_kv::JsKvStore;
use context_compiler::kv::KvValue;
use context_compiler_js::convert::to_js;
use context_compiler_js::hash::host_sync;
use context_compiler_js::promise::spawn;
use context_compiler_js::store_methods::{reject, store_args, string_arg};

/// `store(content, source, options)`. With a synchronous host hash the
/// content is hashed and framed before this returns, so the caller may
/// reuse its buffer at once; without one it is copied first.
pub(crate) fn store<T: AsRef<JsValue>>(
    store: Rc<JsKvStore>,
    content: &JsValue,
    source: &JsValue,
    options: &Option<T>,
) -> Promise {
    let args =
        content_bytes(content, "content").and_then(|c| Ok((c, store_args(source, options)?)));
    let (content, (source, options)) = match args {
        Ok(args) => args,
        Err(e) => return reject(e),
    };
    match host_sync(&content.0) {
        Some(digest) => match store.prepare_value(content, &digest, &source, options) {
            Ok(prepared) => spawn(async move { to_js(&store.store_prepared(prepared).await?) }),
            Err(e) => reject(e),
        },
        None => {
            let content = content.snapshot();
            spawn(async move { to_js(&store.store_value(content, &source, options).await?) })
        }
    }
}

/// `retrieve(artifactId)`: a plain `Uint8Array` viewing the value the store
/// read (no copy), or `null`.
pub(crate) fn retrieve(store: Rc<JsKvStore>, artifact_id: &JsValue) -> Promise {
    let artifact_id = match string_arg(artifact_id, "artifactId") {
        Ok(id) => id,
        Err(p) => return p,
    };
    spawn(async move {
        Ok(match store.retrieve_value(&artifact_id).await? {
            Some(bytes) => bytes.0.into(),
            None => JsValue::NULL,
        })
    })
}
