//! `KvArtifactStore` for JS: the core's key-value store over a JS object with
//! async `get` / `put` / `delete` and optional `list` (a `Map` adapter,
//! Cloudflare Workers KV, Deno KV, Redis...).

use std::rc::Rc;

use context_compiler_js::error::JsResult;
use wasm_bindgen::prelude::*;

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{count, describe, option, string};
use context_compiler_js::registry::Registration;

use crate::bytes::JsBytes;
use crate::js_kv::{open_js_store, JsKv, JsKvStore, DEFAULT_TIMEOUT_MS};
use crate::types::KvStoreOptionsArg;
use context_compiler::kv::{KeyValue, KvStoreOptions, DEFAULT_CHUNK_BYTES};

/// Artifacts and saved sessions in a key-value store you hand in: any object
/// with async `get(key)`, `put(key, value)`, `delete(key)` and optionally
/// `list({ prefix })` (needed by `listHandles` and `listSessions`) and
/// `putIf(key, value, expected)` (sets `key` only if it holds exactly the
/// bytes of `expected`, or is absent for `null`, atomically; resolves to
/// whether it wrote). With `putIf` several writers may save one session:
/// a save from a stale copy rejects whole with `STORE_CONFLICT`. Without it
/// the store is single-writer: a save checks the head before writing and
/// reads it back after, rejecting with `STORE_CONFLICT` when it sees another
/// writer's, but two saves at the same moment can still lose one's events.
/// With `putExpiring(key, value, ttlMs)` too (a key the store expires by its
/// own clock), a `session.sync` that lost repeatedly takes the session's
/// lease. Values
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
    ) -> JsResult<KvArtifactStore> {
        let kv: Box<dyn KeyValue<Value = JsBytes>> = Box::new(JsKv::new(&kv)?);
        let (inner, registration) =
            open_js_store(kv, store_options(&options, DEFAULT_CHUNK_BYTES)?)?;
        Ok(KvArtifactStore {
            inner,
            registration,
        })
    }
}

context_compiler_js::store_methods!(
    KvArtifactStore,
    crate::registry::Stores,
    store = crate::host_bytes::store,
    retrieve = crate::host_bytes::retrieve
);
