//! `KvArtifactStore` for JS: the core's key-value store over a JS object with
//! async `get` / `put` / `delete` and optional `list` (a `Map` adapter,
//! Cloudflare Workers KV, Deno KV, Redis...).

use std::rc::Rc;

use async_trait::async_trait;
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::error::{Error, ErrorCode, Result};
use crate::js::convert::{count, describe, option, string};
use crate::js::env::JsClock;
use crate::js::hash::JsHasher;
use crate::js::promise::{call_and_await, callable, require_callable, require_methods};
use crate::js::registry::{Native, Registration};
use crate::js::store_methods::store_methods;
use crate::js::stores::bytes::{stored_bytes, JsBytes};
use crate::js::stores::types::KvStoreOptionsArg;
use crate::kv::{KeyValue, KvArtifactStore as CoreStore, KvStoreOptions, DEFAULT_CHUNK_BYTES};

/// How long one KV operation may take by default before `STORE_TIMEOUT`.
const DEFAULT_TIMEOUT_MS: f64 = 30_000.0;

/// A JS key-value object seen as the core's [`KeyValue`]. Its methods are
/// looked up on every call, as JS code calling `kv.get(...)` would.
struct JsKv {
    this: JsValue,
}

const KV_SHAPE: &str = "kv must be an object with async get, put and delete methods";

impl JsKv {
    fn new(kv: &JsValue) -> Result<JsKv> {
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

/// Checks that `value`, what `call` resolved to, is an array (of `items`);
/// otherwise `STORE_INVALID_VALUE`.
pub(crate) fn resolved_array(value: &JsValue, call: &str, items: &str) -> Result<()> {
    if Array::is_array(value) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::StoreInvalidValue,
        format!(
            "{call} must resolve to an array of {items} (got {})",
            describe(value)
        ),
    ))
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

    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        if callable(&self.this, "list").is_none() {
            return Ok(None);
        }
        let arg = Object::new();
        let _ = Reflect::set(&arg, &"prefix".into(), &prefix.into());
        let v = self.call("list", &[arg.into()], "list").await?;
        resolved_array(&v, "kv.list", "keys")?;
        let mut keys = Vec::new();
        for item in Array::from(&v).iter() {
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
    let weak: std::rc::Weak<dyn crate::artifacts::ArtifactStore> =
        Rc::downgrade(&(inner.clone() as Rc<dyn crate::artifacts::ArtifactStore>));
    Ok((inner, Registration::new(Native::ArtifactStore(weak))))
}

/// Artifacts and saved sessions in a key-value store you hand in: any object
/// with async `get(key)`, `put(key, value)`, `delete(key)` and optionally
/// `list({ prefix })` (needed by `listHandles` and `listSessions`) and
/// `putIf(key, value, expected)` (sets `key` only if it holds exactly the
/// bytes of `expected`, or is absent for `null`, atomically; resolves to
/// whether it wrote). With `putIf` several writers may save one session:
/// a save from a stale copy rejects whole with `STORE_CONFLICT`. Without it
/// the store is single-writer: a save checks the head before writing and
/// reads it back after, rejecting with `STORE_CONFLICT` when it sees another
/// writer's, but two saves at the same moment can still lose one's events. Values
/// larger than `chunkBytes` are split into chunks and reassembled and
/// verified on read. Content never passes through wasm memory: `store`
/// hashes and frames your bytes before it returns (you may reuse the buffer
/// at once), and `retrieve` resolves to a view of the value `get` returned
/// (no copy), so a KV that hands out the arrays it keeps shares them with
/// you; a change to one is refused as `ARTIFACT_INTEGRITY` on the next read.
#[wasm_bindgen]
pub struct KvArtifactStore {
    inner: Rc<JsKvStore>,
    registration: Registration,
}

/// The store options of a JS options object: `chunkBytes` (default
/// `default_chunk`), `prefix`, `timeoutMs`.
pub(crate) fn store_options<T: AsRef<JsValue>>(
    options: &Option<T>,
    default_chunk: usize,
) -> Result<KvStoreOptions> {
    let chunk = count(
        &option(options, "chunkBytes", "options")?,
        "options.chunkBytes",
        ErrorCode::InvalidArgument,
    )?;
    let prefix = option(options, "prefix", "options")?;
    let prefix = if prefix.is_undefined() || prefix.is_null() {
        String::new()
    } else {
        string(&prefix, "options.prefix")?
    };
    let timeout = option(options, "timeoutMs", "options")?;
    let timeout_ms = if timeout.is_undefined() || timeout.is_null() {
        Some(DEFAULT_TIMEOUT_MS)
    } else if timeout.as_f64() == Some(f64::INFINITY) {
        None
    } else {
        Some(timeout.as_f64().ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "options.timeoutMs must be a number (got {})",
                    describe(&timeout)
                ),
            )
        })?)
    };
    Ok(KvStoreOptions {
        chunk_bytes: chunk.map_or(default_chunk, |c| c as usize),
        prefix,
        timeout_ms,
    })
}

#[wasm_bindgen]
impl KvArtifactStore {
    /// A store over `kv`. Options: `chunkBytes` (largest value written,
    /// default 65536, Deno KV's limit; at least 1024), `prefix` (put before
    /// every key), `timeoutMs` (per KV operation, default 30000; `Infinity`
    /// waits forever).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "KeyValueLike")] kv: JsValue,
        options: Option<KvStoreOptionsArg>,
    ) -> std::result::Result<KvArtifactStore, JsValue> {
        let kv: Box<dyn KeyValue<Value = JsBytes>> = Box::new(JsKv::new(&kv)?);
        let (inner, registration) =
            open_js_store(kv, store_options(&options, DEFAULT_CHUNK_BYTES)?)?;
        Ok(KvArtifactStore {
            inner,
            registration,
        })
    }
}

store_methods!(KvArtifactStore, host_bytes);
