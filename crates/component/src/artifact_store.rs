//! The `artifact-store` interface: whether externalised outputs go to the
//! host's `artifact-kv` import or to files under a preopened directory.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use super::bindings::exports::agent::context_compiler::artifact_store::{Backend, Error, Guest};
use super::host::HostKv;
use super::{wit_error, Component};
use context_compiler::clock::SystemClock;
use context_compiler::error::{Error as CoreError, ErrorCode};
use context_compiler::fs_store::{FsKv, StdFileSystem, DEFAULT_FS_CHUNK_BYTES};
use context_compiler::kv::{KeyValue, KvArtifactStore, KvStoreOptions};

thread_local! {
    /// The selected directory; `None`: the host's KV.
    static FILES: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// The host's KV or the files: either as one type of key-value store.
type AnyKv = Box<dyn KeyValue<Value = Vec<u8>>>;

/// The artifact store every compile and tool call uses: the selected one.
pub(crate) fn selected_store() -> Result<Rc<KvArtifactStore<AnyKv>>, Error> {
    let (kv, chunk_bytes): (AnyKv, usize) = match FILES.with(|f| f.borrow().clone()) {
        None => (Box::new(HostKv), KvStoreOptions::default().chunk_bytes),
        Some(dir) => (
            Box::new(FsKv::new(StdFileSystem::new(dir))),
            DEFAULT_FS_CHUNK_BYTES,
        ),
    };
    let options = KvStoreOptions {
        chunk_bytes,
        ..KvStoreOptions::default()
    };
    KvArtifactStore::new(kv, Rc::new(SystemClock), options)
        .map(Rc::new)
        .map_err(wit_error)
}

impl Guest for Component {
    fn select(backend: Backend) -> Result<(), Error> {
        let files = match backend {
            Backend::HostKv => None,
            Backend::Files(dir) => {
                if dir.is_empty() {
                    return Err(wit_error(CoreError::new(
                        ErrorCode::InvalidArgument,
                        "the directory must not be empty",
                    )));
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
        FILES.with(|f| *f.borrow_mut() = files);
        Ok(())
    }
}
