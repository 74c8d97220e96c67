//! `FsArtifactStore` for JS: the core's filesystem store over a JS file
//! system object (`read`, `write`, `remove`, `list`). By default that is
//! `node:fs/promises` under `baseDir`, which the Node entry (Node and Deno)
//! installs as the host's; elsewhere pass `files` or get `STORE_UNAVAILABLE`.

use std::rc::Rc;

use async_trait::async_trait;
use context_compiler_js::error::JsResult;
use wasm_bindgen::prelude::*;

use crate::bytes::{stored_bytes, JsBytes};
use crate::js_kv::{call_method, open_js_store, resolved_array, JsKvStore};
use crate::kv::store_options;
use crate::types::FsStoreOptionsArg;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::fs_store::{FileSystem, FsKv, DEFAULT_FS_CHUNK_BYTES};
use context_compiler::kv::KeyValue;
use context_compiler_js::convert::{describe, option, string};
use context_compiler_js::fatal::with_host_as;
use context_compiler_js::promise::{callable, require_methods};
use context_compiler_js::registry::Registration;

#[wasm_bindgen]
extern "C" {
    /// The host object `js/stores.js` installs, as the file store sees it.
    type FilesHost;

    /// The host's file system under `baseDir` (Node's and Deno's
    /// `node:fs/promises`), or `undefined` where there is none.
    #[wasm_bindgen(method, catch)]
    fn files(this: &FilesHost, base_dir: &str) -> std::result::Result<JsValue, JsValue>;
}

const FILES_SHAPE: &str = "files must be an object with async read, write, remove and list methods";

/// A JS file system object seen as the core's [`FileSystem`].
struct JsFiles {
    this: JsValue,
}

impl JsFiles {
    fn new(files: &JsValue) -> Result<JsFiles> {
        require_methods(files, &["read", "write", "remove", "list"], FILES_SHAPE)?;
        Ok(JsFiles {
            this: files.clone(),
        })
    }

    /// The host's file system under `base_dir`, or `STORE_UNAVAILABLE`.
    fn host(base_dir: &str) -> Result<JsFiles> {
        let files = with_host_as(|host: &FilesHost| host.files(base_dir))
            .and_then(|r| r.ok())
            .filter(|f| !f.is_undefined() && !f.is_null());
        match files {
            Some(files) => JsFiles::new(&files),
            None => Err(Error::new(
                ErrorCode::StoreUnavailable,
                "FsArtifactStore needs a file system: Node or Deno through the package's main entry, or options.files",
            )),
        }
    }

    async fn call(&self, name: &str, args: &[JsValue], op: String) -> Result<JsValue> {
        call_method(&self.this, name, args, FILES_SHAPE, &op).await
    }
}

#[async_trait(?Send)]
impl FileSystem for JsFiles {
    type Bytes = JsBytes;

    async fn read(&self, path: &str) -> Result<Option<JsBytes>> {
        let op = format!("files.read({path})");
        let v = self.call("read", &[path.into()], op.clone()).await?;
        stored_bytes(&v, &format!("{op} result"))
    }

    async fn write_atomic(&self, path: &str, bytes: JsBytes) -> Result<()> {
        let bytes = bytes.0;
        self.call(
            "write",
            &[path.into(), bytes.into()],
            format!("files.write({path})"),
        )
        .await
        .map(|_| ())
    }

    fn has_create_new(&self) -> bool {
        callable(&self.this, "createNew").is_some()
    }

    async fn create_new(&self, path: &str, bytes: JsBytes) -> Result<bool> {
        let op = format!("files.createNew({path})");
        let v = self
            .call("createNew", &[path.into(), bytes.0.into()], op.clone())
            .await?;
        v.as_bool().ok_or_else(|| {
            Error::new(
                ErrorCode::StoreInvalidValue,
                format!("{op} must resolve to true or false (got {})", describe(&v)),
            )
        })
    }

    fn has_age(&self) -> bool {
        callable(&self.this, "ageMs").is_some()
    }

    async fn age_ms(&self, path: &str) -> Result<Option<f64>> {
        let op = format!("files.ageMs({path})");
        let v = self.call("ageMs", &[path.into()], op.clone()).await?;
        if v.is_null() || v.is_undefined() {
            return Ok(None);
        }
        v.as_f64().filter(|n| !n.is_nan()).map(Some).ok_or_else(|| {
            Error::new(
                ErrorCode::StoreInvalidValue,
                format!(
                    "{op} must resolve to a number or null (got {})",
                    describe(&v)
                ),
            )
        })
    }

    async fn remove(&self, path: &str) -> Result<()> {
        self.call("remove", &[path.into()], format!("files.remove({path})"))
            .await
            .map(|_| ())
    }

    async fn list_files(&self, dir: &str) -> Result<Vec<String>> {
        let v = self
            .call("list", &[dir.into()], format!("files.list({dir})"))
            .await?;
        resolved_array(&v, "files.list", "paths")?
            .iter()
            .map(|item| {
                item.as_string().ok_or_else(|| {
                    Error::new(
                        ErrorCode::StoreInvalidValue,
                        format!(
                            "files.list returned {} where a path was expected",
                            describe(&item)
                        ),
                    )
                })
            })
            .collect()
    }
}

/// Artifacts and saved sessions as files under `baseDir`: content-addressed
/// artifact files fanned out by id prefix, sessions as append-only segment
/// files under a head written last, every file written to a temporary name and
/// renamed into place, every read verified. Content never passes through wasm
/// memory: `store` hashes and frames your bytes before it returns, and
/// `retrieve` resolves to a view of the bytes read from the file.
#[wasm_bindgen]
pub struct FsArtifactStore {
    inner: Rc<JsKvStore>,
    registration: Registration,
}

#[wasm_bindgen]
impl FsArtifactStore {
    /// A store under `options.baseDir`. Options: `files` (a file system with
    /// async `read(path)`, `write(path, bytes)`, `remove(path)`, `list(dir)`;
    /// by default `node:fs/promises` in Node and Deno), `chunkBytes` (the
    /// largest file, default 64 MiB), `timeoutMs` (per file operation,
    /// default 30000; `Infinity` waits forever). Without a file system:
    /// `STORE_UNAVAILABLE`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: FsStoreOptionsArg) -> JsResult<FsArtifactStore> {
        let built = (|| -> Result<_> {
            let options = Some(options);
            let base_dir = option(&options, "baseDir", "options")?;
            let base_dir = string(&base_dir, "options.baseDir")?;
            if base_dir.is_empty() {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "options.baseDir must not be empty",
                ));
            }
            let files = option(&options, "files", "options")?;
            let files = if files.is_undefined() || files.is_null() {
                JsFiles::host(&base_dir)?
            } else {
                JsFiles::new(&files)?
            };
            let kv: Box<dyn KeyValue<Value = JsBytes>> = Box::new(FsKv::new(files));
            open_js_store(kv, store_options(&options, DEFAULT_FS_CHUNK_BYTES)?)
        })();
        let (inner, registration) = built?;
        Ok(FsArtifactStore {
            inner,
            registration,
        })
    }
}

context_compiler_js::store_methods!(
    FsArtifactStore,
    crate::registry::Stores,
    store = crate::host_bytes::store,
    retrieve = crate::host_bytes::retrieve
);
