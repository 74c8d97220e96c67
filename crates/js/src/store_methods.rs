//! The methods every JS artifact store class shares (artifacts and saved
//! sessions), written once here and stamped onto each class by
//! [`store_methods!`].

use std::rc::Rc;

use js_sys::{Promise, Uint8Array};
use wasm_bindgen::JsValue;

use crate::convert::{bytes, options_arg, string, to_js};
use crate::env::{seed, JsClock};
use crate::error::to_js_error;
use crate::options::{optional_session_id, optional_string};
use crate::promise::spawn;
use crate::registry::Module;
use context_compiler::artifacts::{ArtifactStore, StoreOptions};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::memory::PersistentMemory;
use context_compiler::session::{
    LeaseTake, SaveTry, SavedEvents, SessionEnv, SessionSource, SessionStore,
};

/// A promise rejected with `e` as a JS error.
pub fn reject(e: Error) -> Promise {
    Promise::reject(&to_js_error(e))
}

/// The `source` and `options` arguments of `store`.
pub fn store_args<T: AsRef<JsValue>>(
    source: &JsValue,
    options: &Option<T>,
) -> Result<(String, StoreOptions)> {
    Ok((
        string(source, "source")?,
        StoreOptions {
            mime_type: optional_string(options, "mimeType")?,
            session_id: optional_session_id(options, "sessionId")?,
        },
    ))
}

/// `store(content, source, options)`.
pub fn store<T: AsRef<JsValue>>(
    store: Rc<dyn ArtifactStore>,
    content: &JsValue,
    source: &JsValue,
    options: &Option<T>,
) -> Promise {
    let args = bytes(content, "content").and_then(|c| Ok((c, store_args(source, options)?)));
    match args {
        Ok((content, (source, opts))) => {
            spawn(async move { to_js(&store.store(&content, &source, opts).await?) })
        }
        Err(e) => reject(e),
    }
}

/// The string argument `value`, or a rejected promise (`INVALID_ARGUMENT`).
pub fn string_arg(value: &JsValue, what: &str) -> std::result::Result<String, Promise> {
    string(value, what).map_err(reject)
}

/// The `sessionId` argument (see [`crate::convert::session_id`]), or the
/// rejected promise to return.
fn session_id_arg(value: &JsValue) -> std::result::Result<String, Promise> {
    crate::convert::session_id(value, "sessionId").map_err(reject)
}

/// `retrieve(artifactId)`.
pub fn retrieve(store: Rc<dyn ArtifactStore>, artifact_id: &JsValue) -> Promise {
    let artifact_id = match string_arg(artifact_id, "artifactId") {
        Ok(id) => id,
        Err(p) => return p,
    };
    spawn(async move {
        Ok(match store.retrieve(&artifact_id).await? {
            Some(bytes) => Uint8Array::from(bytes.as_slice()).into(),
            None => JsValue::NULL,
        })
    })
}

/// `exists(artifactId)`.
pub fn exists(store: Rc<dyn ArtifactStore>, artifact_id: &JsValue) -> Promise {
    let artifact_id = match string_arg(artifact_id, "artifactId") {
        Ok(id) => id,
        Err(p) => return p,
    };
    spawn(async move { Ok(store.exists(&artifact_id).await?.into()) })
}

/// `listHandles(sessionId?)`.
pub fn list_handles(store: Rc<dyn ArtifactStore>, session_id: &JsValue) -> Promise {
    let session_id = if session_id.is_undefined() || session_id.is_null() {
        None
    } else {
        match session_id_arg(session_id) {
            Ok(id) => Some(id),
            Err(p) => return p,
        }
    };
    spawn(async move { to_js(&store.list_handles(session_id.as_deref()).await?) })
}

/// `delete(artifactId)`.
pub fn delete(store: Rc<dyn ArtifactStore>, artifact_id: &JsValue) -> Promise {
    let artifact_id = match string_arg(artifact_id, "artifactId") {
        Ok(id) => id,
        Err(p) => return p,
    };
    spawn(async move { Ok(store.delete(&artifact_id).await?.into()) })
}

/// `saveSession(session)`.
pub fn save_session<M: StoreModule>(store: Rc<dyn SessionStore>, session: &JsValue) -> Promise {
    let source = match M::session_source(session) {
        Ok(s) => s,
        Err(e) => return reject(e),
    };
    spawn(async move { to_js(&store.save_session(source.as_ref()).await?) })
}

/// `__trySave(session, writer)`: one try of `session.sync`'s save by
/// `writer` ([`SessionStore::try_save`]), as `{ outcome: "saved", report }`,
/// `{ outcome: "lost" }` or `{ outcome: "leased", waitMs }`.
pub fn try_save<M: StoreModule>(
    store: Rc<dyn SessionStore>,
    session: &JsValue,
    writer: &JsValue,
) -> Promise {
    let args = M::session_source(session).and_then(|s| Ok((s, string(writer, "writer")?)));
    let (source, writer) = match args {
        Ok(args) => args,
        Err(e) => return reject(e),
    };
    spawn(async move {
        let outcome = match store.try_save(source.as_ref(), &writer).await? {
            SaveTry::Saved(report) => serde_json::json!({ "outcome": "saved", "report": report }),
            SaveTry::Lost => serde_json::json!({ "outcome": "lost" }),
            SaveTry::Leased { wait_ms } => {
                serde_json::json!({ "outcome": "leased", "waitMs": wait_ms })
            }
        };
        to_js(&outcome)
    })
}

/// `__takeLease(sessionId, writer, ttlMs)`: `session.sync` takes the
/// session's lease ([`SessionStore::take_lease`]), as `{ outcome, waitMs }`
/// with `outcome` `"taken"`, `"held"`, `"lost"` or `"unavailable"`.
pub fn take_lease(
    store: Rc<dyn SessionStore>,
    session_id: &JsValue,
    writer: &JsValue,
    ttl_ms: &JsValue,
) -> Promise {
    let args = session_id_arg(session_id).and_then(|id| {
        let writer = string_arg(writer, "writer")?;
        let ttl = crate::convert::count(ttl_ms, "ttlMs", ErrorCode::InvalidArgument)
            .map_err(reject)?
            .unwrap_or(context_compiler::session::LEASE_MS);
        Ok((id, writer, ttl))
    });
    let (session_id, writer, ttl) = match args {
        Ok(args) => args,
        Err(p) => return p,
    };
    spawn(async move {
        let (outcome, wait) = match store.take_lease(&session_id, &writer, ttl).await? {
            LeaseTake::Taken => ("taken", None),
            LeaseTake::Held { wait_ms } => ("held", wait_ms),
            LeaseTake::Lost => ("lost", None),
            LeaseTake::Unavailable => ("unavailable", None),
        };
        to_js(&serde_json::json!({ "outcome": outcome, "waitMs": wait }))
    })
}

/// What a module that has store classes tells the shared store methods: how
/// it reads a session argument and makes a loaded session, and its
/// `PersistentMemory` class.
pub trait StoreModule: Module {
    /// The session `value` names: in the main module, one of its own; in the
    /// stores module, a main-module session read through its JS methods.
    fn session_source(value: &JsValue) -> Result<Rc<dyn SessionSource>>;

    /// A loaded session for JS: in the main module, a `Session` made here; in
    /// the stores module, a main-module `Session` made by the main module
    /// from the saved events.
    fn restored(session_id: &str, saved: SavedEvents, options: &JsValue) -> Result<JsValue>;

    /// An opened memory as the module's `PersistentMemory` class.
    fn memory(memory: PersistentMemory) -> JsValue;
}

/// `openMemory(name)`: the persisted memory journalled as session `name`.
pub fn open_memory<M: StoreModule>(store: Rc<dyn SessionStore>, name: &JsValue) -> Promise {
    let name = if name.is_undefined() || name.is_null() {
        "memory".to_string()
    } else {
        match string_arg(name, "name") {
            Ok(n) => n,
            Err(p) => return p,
        }
    };
    spawn(async move {
        let env = SessionEnv {
            clock: Rc::new(JsClock),
            counter: Rc::new(context_compiler::tokens::DefaultTokenCounter),
            seed: seed(),
        };
        let memory = PersistentMemory::open(store, &name, env).await?;
        Ok(M::memory(memory))
    })
}

/// `loadSession(sessionId, options)`.
pub fn load_session<M: StoreModule, T: AsRef<JsValue>>(
    store: Rc<dyn SessionStore>,
    session_id: &JsValue,
    options: &Option<T>,
) -> Promise {
    let session_id = match session_id_arg(session_id) {
        Ok(id) => id,
        Err(p) => return p,
    };
    if let Err(e) = options_arg(options, "options") {
        return reject(e);
    }
    let options: JsValue = options
        .as_ref()
        .map_or(JsValue::UNDEFINED, |o| o.as_ref().clone());
    spawn(async move {
        match store.load_events(&session_id).await? {
            Some(saved) => M::restored(&session_id, saved, &options),
            None => Ok(JsValue::NULL),
        }
    })
}

/// `__loadEventsAfter(sessionId, known, lastEventId)`: what `session.sync`
/// reloads after a conflict ([`SessionStore::load_events_after`]), as
/// `{ eventsJson, start, expected }`, or `null` when nothing is saved.
pub fn load_events_after(
    store: Rc<dyn SessionStore>,
    session_id: &JsValue,
    known: &JsValue,
    last_event_id: &JsValue,
) -> Promise {
    let args = session_id_arg(session_id).and_then(|id| {
        let known = crate::convert::count(known, "known", ErrorCode::InvalidArgument)
            .map_err(reject)?
            .unwrap_or(0);
        let last = if last_event_id.is_null() || last_event_id.is_undefined() {
            None
        } else {
            Some(string_arg(last_event_id, "lastEventId")?)
        };
        Ok((id, known, last))
    });
    let (session_id, known, last) = match args {
        Ok(args) => args,
        Err(p) => return p,
    };
    spawn(async move {
        let Some(tail) = store
            .load_events_after(&session_id, known, last.as_deref())
            .await?
        else {
            return Ok(JsValue::NULL);
        };
        let events_json = serde_json::to_string(&tail.events)
            .map_err(|e| Error::new(ErrorCode::StoreCorrupt, format!("saved events ({e})")))?;
        to_js(&serde_json::json!({
            "eventsJson": events_json,
            "start": tail.start,
            "expected": tail.expected,
        }))
    })
}

/// `listSessions()`.
pub fn list_sessions(store: Rc<dyn SessionStore>) -> Promise {
    spawn(async move { to_js(&store.list_sessions().await?) })
}

/// `deleteSession(sessionId)`.
pub fn delete_session(store: Rc<dyn SessionStore>, session_id: &JsValue) -> Promise {
    let session_id = match session_id_arg(session_id) {
        Ok(id) => id,
        Err(p) => return p,
    };
    spawn(async move { Ok(store.delete_session(&session_id).await?.into()) })
}

/// Stamps the shared artifact and session methods onto a store class whose
/// `inner` field is an `Rc` of a type implementing both store traits, in the
/// module `$module` (a [`StoreModule`]). With `store = f, retrieve = g` (the
/// KV and file stores, whose values stay in JS memory), those two methods are
/// `f` and `g`, which pass content through without copying it into wasm.
#[macro_export]
macro_rules! store_methods {
    ($js:ident, $module:ty) => {
        $crate::store_methods!(
            @impl $js,
            $module,
            $crate::store_methods::store,
            $crate::store_methods::retrieve
        );
    };
    ($js:ident, $module:ty, store = $store:path, retrieve = $retrieve:path) => {
        $crate::store_methods!(@impl $js, $module, $store, $retrieve);
    };
    (@impl $js:ident, $module:ty, $store:path, $retrieve:path) => {
        #[wasm_bindgen]
        impl $js {
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
                content: wasm_bindgen::JsValue,
                #[wasm_bindgen(unchecked_param_type = "string")] source: wasm_bindgen::JsValue,
                options: Option<$crate::args::StoreOptionsArg>,
            ) -> js_sys::Promise {
                $store(self.inner.clone(), &content, &source, &options)
            }

            /// Resolves to the content of `artifactId`, verified against its hash, or
            /// `null` when absent. Altered content rejects with `ARTIFACT_INTEGRITY`,
            /// a missing chunk with `ARTIFACT_INCOMPLETE`.
            #[wasm_bindgen(unchecked_return_type = "Promise<Uint8Array | null>")]
            pub fn retrieve(
                &self,
                #[wasm_bindgen(js_name = artifactId, unchecked_param_type = "string")]
                artifact_id: wasm_bindgen::JsValue,
            ) -> js_sys::Promise {
                $retrieve(self.inner.clone(), &artifact_id)
            }

            /// Resolves to whether `artifactId` is stored.
            #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
            pub fn exists(
                &self,
                #[wasm_bindgen(js_name = artifactId, unchecked_param_type = "string")]
                artifact_id: wasm_bindgen::JsValue,
            ) -> js_sys::Promise {
                $crate::store_methods::exists(self.inner.clone(), &artifact_id)
            }

            /// Resolves to every handle, or those stored by `sessionId`, sorted by id.
            #[wasm_bindgen(js_name = listHandles, unchecked_return_type = "Promise<ArtifactHandle[]>")]
            pub fn list_handles(
                &self,
                #[wasm_bindgen(js_name = sessionId)] session_id: Option<
                    $crate::args::StringArg,
                >,
            ) -> js_sys::Promise {
                let session_id: wasm_bindgen::JsValue = session_id.map_or(wasm_bindgen::JsValue::UNDEFINED, Into::into);
                $crate::store_methods::list_handles(self.inner.clone(), &session_id)
            }

            /// Deletes `artifactId`; resolves to `false` when it was not stored.
            #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
            pub fn delete(
                &self,
                #[wasm_bindgen(js_name = artifactId, unchecked_param_type = "string")]
                artifact_id: wasm_bindgen::JsValue,
            ) -> js_sys::Promise {
                $crate::store_methods::delete(self.inner.clone(), &artifact_id)
            }

            /// Saves `session` under its id, writing only the events appended since
            /// its last save; a save that fails part-way leaves the previous saved
            /// state loadable.
            #[wasm_bindgen(js_name = saveSession, unchecked_return_type = "Promise<SaveReport>")]
            pub fn save_session(
                &self,
                #[wasm_bindgen(unchecked_param_type = "Session")] session: wasm_bindgen::JsValue,
            ) -> js_sys::Promise {
                $crate::store_methods::save_session::<$module>(self.inner.clone(), &session)
            }

            /// One try of `session.sync`'s save by `writer` (internal).
            #[wasm_bindgen(js_name = __trySave, skip_typescript)]
            pub fn try_save(
                &self,
                session: wasm_bindgen::JsValue,
                writer: wasm_bindgen::JsValue,
            ) -> js_sys::Promise {
                $crate::store_methods::try_save::<$module>(self.inner.clone(), &session, &writer)
            }

            /// `session.sync` takes the session's lease for `writer` (internal).
            #[wasm_bindgen(js_name = __takeLease, skip_typescript)]
            pub fn take_lease(
                &self,
                #[wasm_bindgen(js_name = sessionId)] session_id: wasm_bindgen::JsValue,
                writer: wasm_bindgen::JsValue,
                #[wasm_bindgen(js_name = ttlMs)] ttl_ms: wasm_bindgen::JsValue,
            ) -> js_sys::Promise {
                $crate::store_methods::take_lease(
                    self.inner.clone(),
                    &session_id,
                    &writer,
                    &ttl_ms,
                )
            }

            /// Resolves to the session saved under `sessionId`, or `null`. Options:
            /// `tokenCounter` for the events recorded after loading.
            #[wasm_bindgen(js_name = loadSession, unchecked_return_type = "Promise<Session | null>")]
            pub fn load_session(
                &self,
                #[wasm_bindgen(js_name = sessionId, unchecked_param_type = "string")]
                session_id: wasm_bindgen::JsValue,
                options: Option<$crate::args::ImportOptionsArg>,
            ) -> js_sys::Promise {
                $crate::store_methods::load_session::<$module, _>(
                    self.inner.clone(),
                    &session_id,
                    &options,
                )
            }

            /// What `session.sync` reloads after a conflict: the events saved
            /// after the first `known` (internal).
            #[wasm_bindgen(js_name = __loadEventsAfter, skip_typescript)]
            pub fn load_events_after(
                &self,
                #[wasm_bindgen(js_name = sessionId)] session_id: wasm_bindgen::JsValue,
                known: wasm_bindgen::JsValue,
                #[wasm_bindgen(js_name = lastEventId)] last_event_id: wasm_bindgen::JsValue,
            ) -> js_sys::Promise {
                $crate::store_methods::load_events_after(
                    self.inner.clone(),
                    &session_id,
                    &known,
                    &last_event_id,
                )
            }

            /// Opens the memory persisted in this store as the session `name`
            /// (default `"memory"`): resolves to a `PersistentMemory`, empty
            /// the first time. Rejects with `STORE_CORRUPT` when the journal
            /// cannot be replayed.
            #[wasm_bindgen(js_name = openMemory, unchecked_return_type = "Promise<PersistentMemory>")]
            pub fn open_memory(
                &self,
                #[wasm_bindgen(unchecked_optional_param_type = "string")] name: Option<wasm_bindgen::JsValue>,
            ) -> js_sys::Promise {
                $crate::store_methods::open_memory::<$module>(
                    self.inner.clone(),
                    &name.unwrap_or(wasm_bindgen::JsValue::UNDEFINED),
                )
            }

            /// Resolves to the ids of every saved session, sorted.
            #[wasm_bindgen(js_name = listSessions, unchecked_return_type = "Promise<string[]>")]
            pub fn list_sessions(&self) -> js_sys::Promise {
                $crate::store_methods::list_sessions(self.inner.clone())
            }

            /// Deletes a saved session; resolves to `false` when there was none.
            #[wasm_bindgen(js_name = deleteSession, unchecked_return_type = "Promise<boolean>")]
            pub fn delete_session(
                &self,
                #[wasm_bindgen(js_name = sessionId, unchecked_param_type = "string")]
                session_id: wasm_bindgen::JsValue,
            ) -> js_sys::Promise {
                $crate::store_methods::delete_session(self.inner.clone(), &session_id)
            }
        }
    };
}
