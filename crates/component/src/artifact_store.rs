//! The `artifact-store` interface: whether externalised outputs go to the
//! host's `artifact-kv` import or to files under a preopened directory, how
//! they are laid out, and storing, reading and attaching content directly.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use super::bindings::exports::agent::context_compiler::artifact_store::{
    AttachOptions, Backend, BackendOptions, Error, Guest, StoreOptions,
};
use super::exec::block_on;
use super::host::HostKv;
use super::{to_json, wit_error, Component};
use context_compiler::artifacts::{ArtifactStore, StoreOptions as CoreStoreOptions};
use context_compiler::clock::SystemClock;
use context_compiler::error::{Error as CoreError, ErrorCode};
use context_compiler::fs_store::{FsKv, StdFileSystem, DEFAULT_FS_CHUNK_BYTES};
use context_compiler::kv::{KeyValue, KvArtifactStore, KvStoreOptions};
use context_compiler::media;

/// What `select` chose.
#[derive(Clone, Default)]
struct Selection {
    /// The directory; `None`: the host's KV.
    files: Option<PathBuf>,
    /// The chunk size given; `None`: the backend's default.
    chunk_bytes: Option<usize>,
    /// The key prefix.
    prefix: String,
}

thread_local! {
    /// The selection every store is opened with.
    static SELECTED: RefCell<Selection> = RefCell::default();
}

/// The host's KV or the files: either as one type of key-value store.
type AnyKv = Box<dyn KeyValue<Value = Vec<u8>>>;

/// The store `selection` names.
fn open(selection: &Selection) -> Result<Rc<KvArtifactStore<AnyKv>>, CoreError> {
    let (kv, default_chunk): (AnyKv, usize) = match &selection.files {
        None => (Box::new(HostKv), KvStoreOptions::default().chunk_bytes),
        Some(dir) => (
            Box::new(FsKv::new(StdFileSystem::new(dir.clone()))),
            DEFAULT_FS_CHUNK_BYTES,
        ),
    };
    let options = KvStoreOptions {
        chunk_bytes: selection.chunk_bytes.unwrap_or(default_chunk),
        prefix: selection.prefix.clone(),
        ..KvStoreOptions::default()
    };
    KvArtifactStore::new(kv, Rc::new(SystemClock), options).map(Rc::new)
}

/// The artifact store every compile, tool call and run uses: the selected one.
pub(crate) fn selected_store() -> Result<Rc<KvArtifactStore<AnyKv>>, CoreError> {
    SELECTED.with(|s| open(&s.borrow()))
}

fn invalid(message: impl Into<String>) -> Error {
    wit_error(CoreError::new(ErrorCode::InvalidArgument, message))
}

impl Guest for Component {
    fn select(backend: Backend, options: BackendOptions) -> Result<(), Error> {
        let files = match backend {
            Backend::HostKv => None,
            Backend::Files(dir) => {
                if dir.is_empty() {
                    return Err(invalid("the directory must not be empty"));
                }
                std::fs::create_dir_all(&dir).map_err(|e| {
                    wit_error(CoreError::new(
                        ErrorCode::StoreUnavailable,
                        format!("cannot use {dir:?} for artifacts ({e}); is it inside a directory the host preopened?"),
                    ))
                })?;
                Some(PathBuf::from(dir))
            }
        };
        let selection = Selection {
            files,
            chunk_bytes: options.chunk_bytes.map(|c| c as usize),
            prefix: options.prefix.unwrap_or_default(),
        };
        // Bad options fail here, and the previous selection stays.
        open(&selection)?;
        SELECTED.with(|s| *s.borrow_mut() = selection);
        Ok(())
    }

    fn store_content(
        content: Vec<u8>,
        source: String,
        options: StoreOptions,
    ) -> Result<String, Error> {
        let store = selected_store()?;
        let options = CoreStoreOptions {
            mime_type: options.mime_type,
            session_id: options.session_id,
        };
        let handle = block_on(store.store(&content, &source, options)).and_then(|r| r)?;
        to_json(&handle)
    }

    fn retrieve(artifact_id: String) -> Result<Option<Vec<u8>>, Error> {
        let store = selected_store()?;
        Ok(block_on(store.retrieve(&artifact_id)).and_then(|r| r)?)
    }

    fn attach_media(bytes: Vec<u8>, options: AttachOptions) -> Result<String, Error> {
        let store = selected_store()?;
        let options = media::AttachOptions {
            media_type: options.media_type,
            filename: options.filename,
            detail: options.detail,
            source: options.source.unwrap_or_else(|| "user".into()),
            session_id: options.session_id,
        };
        let part = block_on(media::attach(store.as_ref(), &bytes, options)).and_then(|r| r)?;
        to_json(&part)
    }
}
