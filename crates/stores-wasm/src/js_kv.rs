//! A key-value store written in JS (an object with async `get` / `put` /
//! `delete` and optional `list`, `putIf`: a `Map` adapter, Cloudflare
//! Workers KV, Deno KV, Redis...) as the core's `KeyValue`, and the core's
//! store over it, which the KV and file store classes wrap.

use std::rc::Rc;

use async_trait::async_trait;
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{array_items, describe};
use context_compiler_js::env::JsClock;
use context_compiler_js::error::thrown_message;
use context_compiler_js::hash::JsHasher;
use context_compiler_js::promise::{call_and_await, callable, require_callable, require_methods};
use context_compiler_js::registry::Registration;

use crate::bytes::{stored_bytes, JsBytes};
use crate::registry;
use context_compiler::kv::{KeyValue, KvArtifactStore as CoreStore, KvStoreOptions};

/// How long one KV operation may take by default before `STORE_TIMEOUT`.
pub(crate) const DEFAULT_TIMEOUT_MS: f64 = 30_000.0;

/// A JS key-value object seen as the core's [`KeyValue`]. Its methods are
/// looked up on every call, as JS code calling `kv.get(...)` would.
pub(crate) struct JsKv {
    this: JsValue,
}

const KV_SHAPE: &str = "kv must be an object with async get, put and delete methods";

impl JsKv {
    pub(crate) fn new(kv: &JsValue) -> Result<JsKv> {
        require_methods(kv, &["get", "put", "delete"], KV_SHAPE)?;
        Ok(JsKv { this: kv.clone() })
    }

    async fn call(&self, name: &str, args: &[JsValue], op: &str) -> Result<JsValue> {
        call_method(&self.this, name, args, KV_SHAPE, &format!("kv.{op}")).await
    }
}

/// Calls `this[name](...args)` and awaits it; a missing method or a throw or
/// rejection is `STORE_FAILED` naming `op` (`shape` says what `this` must be).
pub(crate) async fn call_method(
    this: &JsValue,
    name: &str,
    args: &[JsValue],
    shape: &str,
    op: &str,
) -> Result<JsValue> {
    let (_, f) = require_callable(this, name, &format!("{shape} (no {name})"))
        .map_err(|e| Error::new(ErrorCode::StoreFailed, e.message()))?;
    call_and_await(&f, this, args, ErrorCode::StoreFailed, op).await
}

/// The items of `value`, what `call` resolved to, when it is an array (of
/// `items`), read with catching calls; otherwise (or when a `Proxy`'s trap
/// throws) `STORE_INVALID_VALUE`.
pub(crate) fn resolved_array(value: &JsValue, call: &str, items: &str) -> Result<Array> {
    match array_items(value) {
        Ok(Some(array)) => Ok(array),
        Ok(None) => Err(Error::new(
            ErrorCode::StoreInvalidValue,
            format!(
                "{call} must resolve to an array of {items} (got {})",
                describe(value)
            ),
        )),
        Err(thrown) => Err(Error::new(
            ErrorCode::StoreInvalidValue,
            format!(
                "{call}'s answer could not be read ({})",
                thrown_message(&thrown)
            ),
        )),
    }
}

#[async_trait(?Send)]
impl KeyValue for JsKv {
    type Value = JsBytes;

    async fn get(&self, key: &str) -> Result<Option<JsBytes>> {
        let v = self
            .call("get", &[key.into()], &format!("get({key})"))
            .await?;
        stored_bytes(&v, &format!("kv.get({key}) result"))
    }

    async fn put(&self, key: &str, value: JsBytes) -> Result<()> {
        self.call("put", &[key.into(), value.0.into()], &format!("put({key})"))
            .await
            .map(|_| ())
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.call("delete", &[key.into()], &format!("delete({key})"))
            .await
            .map(|_| ())
    }

    fn has_put_if(&self) -> bool {
        callable(&self.this, "putIf").is_some()
    }

    async fn put_if(&self, key: &str, value: JsBytes, expected: Option<&JsBytes>) -> Result<bool> {
        let expected = expected.map_or(JsValue::NULL, |e| e.0.clone().into());
        let op = format!("putIf({key})");
        let v = self
            .call("putIf", &[key.into(), value.0.into(), expected], &op)
            .await?;
        v.as_bool().ok_or_else(|| {
            Error::new(
                ErrorCode::StoreInvalidValue,
                format!(
                    "kv.{op} must resolve to true or false (got {})",
                    describe(&v)
                ),
            )
        })
    }

    fn has_expiry(&self) -> bool {
        callable(&self.this, "putExpiring").is_some()
    }

    async fn put_expiring(&self, key: &str, value: JsBytes, ttl_ms: u64) -> Result<()> {
        let op = format!("putExpiring({key})");
        self.call(
            "putExpiring",
            &[key.into(), value.0.into(), (ttl_ms as f64).into()],
            &op,
        )
        .await
        .map(|_| ())
    }

    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        if callable(&self.this, "list").is_none() {
            return Ok(None);
        }
        let arg = Object::new();
        let _ = Reflect::set(&arg, &"prefix".into(), &prefix.into());
        let v = self.call("list", &[arg.into()], "list").await?;
        let mut keys = Vec::new();
        for item in resolved_array(&v, "kv.list", "keys")?.iter() {
            let key = item.as_string().or_else(|| {
                ["key", "name"]
                    .iter()
                    .find_map(|field| Reflect::get(&item, &(*field).into()).ok()?.as_string())
            });
            match key {
                Some(k) if k.starts_with(prefix) => keys.push(k),
                Some(_) => {}
                None => {
                    return Err(Error::new(
                        ErrorCode::StoreInvalidValue,
                        format!(
                            "kv.list returned {} where a key was expected",
                            describe(&item)
                        ),
                    ))
                }
            }
        }
        Ok(Some(keys))
    }
}

/// The core's key-value store as the JS stores hold it: over any boxed
/// [`KeyValue`], so the KV and filesystem stores share one copy of its code.
pub(crate) type JsKvStore = CoreStore<Box<dyn KeyValue<Value = JsBytes>>>;

/// The JS store over `kv` with `options`, hashing with the host's crypto,
/// and its registration (so processors and tool handlers can use it).
pub(crate) fn open_js_store(
    kv: Box<dyn KeyValue<Value = JsBytes>>,
    options: KvStoreOptions,
) -> Result<(Rc<JsKvStore>, Registration)> {
    let inner =
        Rc::new(CoreStore::new(kv, Rc::new(JsClock), options)?.with_hasher(Rc::new(JsHasher)));
    let weak: std::rc::Weak<dyn context_compiler::artifacts::ArtifactStore> =
        Rc::downgrade(&(inner.clone() as Rc<dyn context_compiler::artifacts::ArtifactStore>));
    Ok((inner, registry::register(weak)))
}
