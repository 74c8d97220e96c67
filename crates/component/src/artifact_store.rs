//! The `artifact-store` interface: whether externalised outputs (and saved
//! sessions) go to the host's `artifact-kv` import, to files under a
//! preopened directory or to the host's database through its `sql` import,
//! how they are laid out, and storing, reading and attaching content
//! directly.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use super::bindings::exports::agent::context_compiler::artifact_store::{
    AttachOptions, Backend, BackendOptions, Error, Guest, SqlDialect as WitDialect, SqlOptions,
    StoreOptions,
};
use super::exec::block_on;
use super::host::{HostKv, HostSql};
use super::{to_json, wit_error, Component};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use context_compiler::artifacts::{ArtifactStore, StoreOptions as CoreStoreOptions};
use context_compiler::clock::SystemClock;
use context_compiler::error::{Error as CoreError, ErrorCode};
use context_compiler::fs_store::{FsKv, StdFileSystem, DEFAULT_FS_CHUNK_BYTES};
use context_compiler::kv::{KeyValue, KvArtifactStore, KvStoreOptions};
use context_compiler::media;
use context_compiler::session::SessionStore;
use context_compiler::sql_store::{SqlArtifactStore, SqlDialect};

/// Where a selection keeps things.
#[derive(Clone)]
enum Place {
    /// The host's `artifact-kv` import.
    HostKv,
    /// Files under this directory.
    Files(PathBuf),
    /// The host's database, in this dialect, blobs sent as base64 when
    /// the flag says.
    Sql(SqlDialect, bool),
}

/// What `select` chose.
#[derive(Clone)]
struct Selection {
    place: Place,
    /// The chunk size given; `None`: the backend's default.
    chunk_bytes: Option<usize>,
    /// The key prefix.
    prefix: String,
}

/// The selected store, opened: one object seen as both stores.
#[derive(Clone)]
pub(crate) struct Opened {
    artifacts: Rc<dyn ArtifactStore>,
    sessions: Rc<dyn SessionStore>,
}

thread_local! {
    /// The store `select` opened; `None` until the first use or selection
    /// (then the host's KV with the defaults). It is kept, so that a SQL
    /// store checks its schema once per selection, not once per call.
    static SELECTED: RefCell<Option<Opened>> = const { RefCell::new(None) };
}

/// The host's KV or the files: either as one type of key-value store.
type AnyKv = Box<dyn KeyValue<Value = Vec<u8>>>;

/// One store object as both of its traits.
fn both<S: ArtifactStore + SessionStore + 'static>(store: S) -> Opened {
    let store = Rc::new(store);
    Opened {
        artifacts: store.clone(),
        sessions: store,
    }
}

/// The store `selection` names.
fn open(selection: &Selection) -> Result<Opened, CoreError> {
    let (kv, default_chunk): (AnyKv, usize) = match &selection.place {
        Place::HostKv => (Box::new(HostKv), KvStoreOptions::default().chunk_bytes),
        Place::Files(dir) => (
            Box::new(FsKv::new(StdFileSystem::new(dir.clone()))),
            DEFAULT_FS_CHUNK_BYTES,
        ),
        Place::Sql(dialect, base64) => {
            if selection.chunk_bytes.is_some() || !selection.prefix.is_empty() {
                return Err(CoreError::new(
                    ErrorCode::InvalidArgument,
                    "a sql backend takes neither chunk-bytes nor prefix (a row holds a whole artifact)",
                ));
            }
            return Ok(both(SqlArtifactStore::with_dialect(
                HostSql {
                    blobs_as_base64: *base64,
                },
                *dialect,
                Rc::new(SystemClock),
            )));
        }
    };
    let options = KvStoreOptions {
        chunk_bytes: selection.chunk_bytes.unwrap_or(default_chunk),
        prefix: selection.prefix.clone(),
        ..KvStoreOptions::default()
    };
    KvArtifactStore::new(kv, Rc::new(SystemClock), options).map(both)
}

/// The store every compile, tool call and run keeps artifacts in: the
/// selected one.
fn selected() -> Result<Opened, CoreError> {
    SELECTED.with(|s| {
        if let Some(opened) = s.borrow().as_ref() {
            return Ok(opened.clone());
        }
        let opened = open(&Selection {
            place: Place::HostKv,
            chunk_bytes: None,
            prefix: String::new(),
        })?;
        *s.borrow_mut() = Some(opened.clone());
        Ok(opened)
    })
}

/// The selected store's artifacts.
pub(crate) fn selected_store() -> Result<Rc<dyn ArtifactStore>, CoreError> {
    selected().map(|o| o.artifacts)
}

/// The selected store's saved sessions.
pub(crate) fn selected_sessions() -> Result<Rc<dyn SessionStore>, CoreError> {
    selected().map(|o| o.sessions)
}

fn invalid(message: impl Into<String>) -> Error {
    wit_error(CoreError::new(ErrorCode::InvalidArgument, message))
}

impl Guest for Component {
    fn select(backend: Backend, options: BackendOptions) -> Result<(), Error> {
        let place = match backend {
            Backend::HostKv => Place::HostKv,
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
                Place::Files(PathBuf::from(dir))
            }
            Backend::Sql(SqlOptions {
                dialect,
                blobs_as_base64,
            }) => Place::Sql(
                match dialect {
                    WitDialect::Sqlite => SqlDialect::Sqlite,
                    WitDialect::Postgres => SqlDialect::Postgres,
                },
                blobs_as_base64,
            ),
        };
        let selection = Selection {
            place,
            chunk_bytes: options.chunk_bytes.map(|c| c as usize),
            prefix: options.prefix.unwrap_or_default(),
        };
        // Bad options fail here, and the previous selection stays.
        let opened = open(&selection)?;
        SELECTED.with(|s| *s.borrow_mut() = Some(opened));
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

    fn retrieve_base64(artifact_id: String) -> Result<Option<String>, Error> {
        Ok(Self::retrieve(artifact_id)?.map(|bytes| STANDARD.encode(bytes)))
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
