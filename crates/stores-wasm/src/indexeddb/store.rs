//! The IndexedDB backend: artifacts (content and metadata in one record,
//! written in one transaction) and saved sessions (a head and one record per
//! event, appended in one transaction with the head), in three object stores.

use std::cell::Cell;
use std::rc::Rc;

use async_trait::async_trait;
use context_compiler_js::error::JsResult;
use js_sys::{Array, Object, Reflect, Uint8Array};
use serde_json::Value;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    Event, IdbDatabase, IdbFactory, IdbIndexParameters, IdbKeyRange, IdbObjectStore,
    IdbOpenDbRequest, IdbTransaction,
};

use crate::indexeddb::events::{committed, dom_error, request, request_error, NextEvent};
use context_compiler::artifacts::{
    content_id_by, sort_by_id, verify_by, ArtifactHandle, ArtifactStore, StoreOptions,
};
use context_compiler::clock::Clock;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::session::{check_optional_session_id, check_session_id};
use context_compiler::session::{
    plan_save, stale_save, SavePlan, SaveReport, SavedEvents, SessionSource, SessionStore,
};
use context_compiler_js::convert::{from_js, to_js};
use context_compiler_js::hash::JsHasher;

#[wasm_bindgen]
extern "C" {
    /// An `IDBDatabase`, seen through the `transaction` overload with options
    /// (web-sys marks it unstable).
    #[wasm_bindgen(js_name = IDBDatabase)]
    type DatabaseWithOptions;

    /// `IDBDatabase.transaction(names, mode, { durability })`.
    #[wasm_bindgen(method, catch, js_name = transaction)]
    fn transaction_with_options(
        this: &DatabaseWithOptions,
        names: &Array,
        mode: &str,
        options: &Object,
    ) -> std::result::Result<IdbTransaction, JsValue>;
}

/// The index of artifacts by the sessions that stored them.
const SESSIONS_INDEX: &str = "sessions";

/// Names of the database and its object stores.
#[derive(Debug, Clone)]
pub(super) struct Names {
    pub(super) database: String,
    pub(super) artifacts: String,
    pub(super) sessions: String,
    pub(super) events: String,
}

/// An open IndexedDB store.
pub(super) struct IdbStore {
    db: IdbDatabase,
    names: Names,
    durability: String,
    closed: Rc<Cell<bool>>,
    clock: Rc<dyn Clock>,
    _on_versionchange: Closure<dyn FnMut(Event)>,
    _on_close: Closure<dyn FnMut(Event)>,
}

fn closed_error() -> Error {
    Error::new(
        ErrorCode::StoreClosed,
        "the IndexedDB connection is closed (the database was deleted or upgraded elsewhere, or close() was called)",
    )
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::StoreCorrupt, what.to_string())
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn has_stores(db: &IdbDatabase, names: &Names) -> bool {
    let list = db.object_store_names();
    [&names.artifacts, &names.sessions, &names.events]
        .iter()
        .all(|n| list.contains(n))
}

/// Creates whichever of our object stores `db` lacks (during an upgrade).
fn create_stores(db: &IdbDatabase, names: &Names) -> JsResult<()> {
    let list = db.object_store_names();
    if !list.contains(&names.artifacts) {
        let store = db.create_object_store(&names.artifacts)?;
        let params = IdbIndexParameters::new();
        params.set_multi_entry(true);
        store.create_index_with_str_and_optional_parameters(SESSIONS_INDEX, "sessions", &params)?;
    }
    if !list.contains(&names.sessions) {
        db.create_object_store(&names.sessions)?;
    }
    if !list.contains(&names.events) {
        db.create_object_store(&names.events)?;
    }
    Ok(())
}

/// Opens `names.database` (at `version`, or its current one), creating our
/// stores in the upgrade. A blocked upgrade is `STORE_BLOCKED` (the pending
/// open closes its connection if it ever succeeds).
async fn open_db(factory: &IdbFactory, names: &Names, version: Option<u32>) -> Result<IdbDatabase> {
    let what = format!("opening IndexedDB database {}", names.database);
    let req: IdbOpenDbRequest = match version {
        Some(v) => factory.open_with_u32(&names.database, v),
        None => factory.open(&names.database),
    }
    .map_err(|e| dom_error(&what, &e))?;
    let upgrade_req = req.clone();
    let upgrade_names = names.clone();
    let on_upgrade = Closure::<dyn FnMut(Event)>::new(move |_e: Event| {
        if let Ok(db) = upgrade_req.result() {
            let _ = create_stores(&db.unchecked_into(), &upgrade_names);
        }
    });
    req.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
    let event = NextEvent::new(&req, &["success", "error", "blocked"]).await;
    req.set_onupgradeneeded(None);
    match event.type_().as_str() {
        "success" => {
            let db: IdbDatabase = req
                .result()
                .map_err(|e| dom_error(&what, &e))?
                .unchecked_into();
            Ok(db)
        }
        "blocked" => {
            let late = req.clone();
            let close_late = Closure::once_into_js(move || {
                if let Ok(db) = late.result() {
                    db.unchecked_into::<IdbDatabase>().close();
                }
            });
            req.set_onsuccess(Some(close_late.unchecked_ref()));
            Err(Error::new(
                ErrorCode::StoreBlocked,
                format!("{what}: blocked by another connection that keeps an older version open"),
            ))
        }
        _ => Err(request_error(&req, &what)),
    }
}

impl IdbStore {
    /// Opens (creating or upgrading as needed) the database.
    pub(super) async fn open(
        names: Names,
        durability: String,
        clock: Rc<dyn Clock>,
    ) -> Result<IdbStore> {
        let factory = Reflect::get(&js_sys::global(), &"indexedDB".into())
            .ok()
            .and_then(|f| f.dyn_into::<IdbFactory>().ok())
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::StoreUnavailable,
                    "IndexedDB is not available in this host (use KvArtifactStore or MemoryArtifactStore)",
                )
            })?;
        let mut db = open_db(&factory, &names, None).await?;
        if !has_stores(&db, &names) {
            // The database exists without our stores: add them in an upgrade.
            let next = db.version() as u32 + 1;
            db.close();
            db = open_db(&factory, &names, Some(next)).await?;
        }
        let closed = Rc::new(Cell::new(false));
        let (flag, conn) = (closed.clone(), db.clone());
        let on_versionchange = Closure::<dyn FnMut(Event)>::new(move |_e: Event| {
            // Let the other side delete or upgrade the database.
            conn.close();
            flag.set(true);
        });
        db.set_onversionchange(Some(on_versionchange.as_ref().unchecked_ref()));
        let flag = closed.clone();
        let on_close = Closure::<dyn FnMut(Event)>::new(move |_e: Event| flag.set(true));
        db.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        Ok(IdbStore {
            db,
            names,
            durability,
            closed,
            clock,
            _on_versionchange: on_versionchange,
            _on_close: on_close,
        })
    }

    /// The database name.
    pub(super) fn database_name(&self) -> &str {
        &self.names.database
    }

    /// Closes the connection; later operations fail with `STORE_CLOSED`.
    pub(super) fn close(&self) {
        self.db.close();
        self.closed.set(true);
    }

    fn transaction(&self, stores: &[&str], write: bool) -> Result<IdbTransaction> {
        if self.closed.get() {
            return Err(closed_error());
        }
        let names: Array = stores.iter().map(|s| JsValue::from(*s)).collect();
        let tx = if write {
            let options = Object::new();
            let _ = Reflect::set(
                &options,
                &"durability".into(),
                &self.durability.as_str().into(),
            );
            self.db
                .unchecked_ref::<DatabaseWithOptions>()
                .transaction_with_options(&names, "readwrite", &options)
        } else {
            self.db.transaction_with_str_sequence(&names)
        };
        tx.map_err(|e| match dom_error("starting a transaction", &e) {
            e if e.code() == ErrorCode::StoreClosed => closed_error(),
            e => e,
        })
    }

    fn object_store(tx: &IdbTransaction, name: &str) -> Result<IdbObjectStore> {
        tx.object_store(name)
            .map_err(|e| dom_error(&format!("object store {name}"), &e))
    }

    fn events_range(session_id: &str) -> Result<IdbKeyRange> {
        let lower: Array = [JsValue::from(session_id)].into_iter().collect();
        let upper: Array = [JsValue::from(session_id), Array::new().into()]
            .into_iter()
            .collect();
        IdbKeyRange::bound(&lower, &upper).map_err(|e| dom_error("key range", &e))
    }
}

/// A stored artifact record's handle and sessions.
fn record_meta(record: &JsValue, id: &str) -> Result<(ArtifactHandle, Vec<String>)> {
    let handle: ArtifactHandle = from_js(&get(record, "handle"), "handle")
        .map_err(|e| corrupt(format!("artifact {id}: {}", e.message())))?;
    let sessions: Vec<String> = from_js(&get(record, "sessions"), "sessions")
        .map_err(|e| corrupt(format!("artifact {id}: {}", e.message())))?;
    Ok((handle, sessions))
}

fn with_session(mut handle: ArtifactHandle, session_id: Option<&str>) -> ArtifactHandle {
    if let Some(s) = session_id {
        handle.session_id = Some(s.to_string());
    }
    handle
}

macro_rules! js_try {
    ($e:expr, $what:expr) => {
        $e.map_err(|e| dom_error($what, &e))?
    };
}

/// The value stored under `key` (`undefined` when absent).
async fn get_value(os: &IdbObjectStore, key: &JsValue, what: &str) -> Result<JsValue> {
    let req = os.get(key).map_err(|e| dom_error(what, &e))?;
    request(req, what).await
}

/// Whether anything is stored under `key`.
async fn has_key(os: &IdbObjectStore, key: &JsValue) -> Result<bool> {
    let req = os
        .count_with_key(key)
        .map_err(|e| dom_error("counting", &e))?;
    Ok(request(req, "counting").await?.as_f64().unwrap_or(0.0) > 0.0)
}

#[async_trait(?Send)]
impl ArtifactStore for IdbStore {
    async fn store(
        &self,
        content: &[u8],
        source: &str,
        options: StoreOptions,
    ) -> Result<ArtifactHandle> {
        check_optional_session_id(options.session_id.as_deref())?;
        let id = content_id_by(&JsHasher, content).await?;
        let tx = self.transaction(&[&self.names.artifacts], true)?;
        let os = Self::object_store(&tx, &self.names.artifacts)?;
        let key = JsValue::from(id.as_str());
        let existing = get_value(&os, &key, "reading the artifact").await?;
        let session = options.session_id.as_deref();
        let handle = if existing.is_undefined() {
            let handle = ArtifactHandle::describe(
                id.clone(),
                content,
                source,
                &options,
                self.clock.now_ms(),
            );
            let record = Object::new();
            let _ = Reflect::set(&record, &"handle".into(), &to_js(&handle)?);
            let _ = Reflect::set(
                &record,
                &"sessions".into(),
                &to_js(&options.session_id.iter().collect::<Vec<_>>())?,
            );
            let _ = Reflect::set(&record, &"content".into(), &Uint8Array::from(content));
            js_try!(os.put_with_key(&record, &key), "put");
            handle
        } else {
            let (handle, mut sessions) = record_meta(&existing, &id)?;
            if let Some(s) = session {
                if !sessions.iter().any(|x| x == s) {
                    sessions.push(s.to_string());
                    let _ = Reflect::set(&existing, &"sessions".into(), &to_js(&sessions)?);
                    js_try!(os.put_with_key(&existing, &key), "put");
                }
            }
            with_session(handle, session)
        };
        committed(&tx, &format!("storing artifact {id}")).await?;
        Ok(handle)
    }

    async fn retrieve(&self, artifact_id: &str) -> Result<Option<Vec<u8>>> {
        let tx = self.transaction(&[&self.names.artifacts], false)?;
        let os = Self::object_store(&tx, &self.names.artifacts)?;
        let record = get_value(&os, &artifact_id.into(), "reading the artifact").await?;
        if record.is_undefined() {
            return Ok(None);
        }
        let content = get(&record, "content")
            .dyn_into::<Uint8Array>()
            .map_err(|_| {
                corrupt(format!(
                    "artifact {artifact_id}: content is not a Uint8Array"
                ))
            })?
            .to_vec();
        verify_by(&JsHasher, artifact_id, &content).await?;
        Ok(Some(content))
    }

    async fn exists(&self, artifact_id: &str) -> Result<bool> {
        let tx = self.transaction(&[&self.names.artifacts], false)?;
        let os = Self::object_store(&tx, &self.names.artifacts)?;
        has_key(&os, &artifact_id.into()).await
    }

    async fn list_handles(&self, session_id: Option<&str>) -> Result<Vec<ArtifactHandle>> {
        check_optional_session_id(session_id)?;
        let tx = self.transaction(&[&self.names.artifacts], false)?;
        let os = Self::object_store(&tx, &self.names.artifacts)?;
        let req = match session_id {
            Some(s) => js_try!(
                js_try!(os.index(SESSIONS_INDEX), "index").get_all_with_key(&s.into()),
                "getAll"
            ),
            None => js_try!(os.get_all(), "getAll"),
        };
        let records = request(req, "listing artifacts").await?;
        let mut handles = Vec::new();
        for record in Array::from(&records).iter() {
            let (handle, _) = record_meta(&record, "in listing")?;
            handles.push(with_session(handle, session_id));
        }
        sort_by_id(&mut handles);
        Ok(handles)
    }

    async fn delete(&self, artifact_id: &str) -> Result<bool> {
        let tx = self.transaction(&[&self.names.artifacts], true)?;
        let os = Self::object_store(&tx, &self.names.artifacts)?;
        let key = JsValue::from(artifact_id);
        let existed = has_key(&os, &key).await?;
        js_try!(os.delete(&key), "delete");
        committed(&tx, &format!("deleting artifact {artifact_id}")).await?;
        Ok(existed)
    }
}

#[async_trait(?Send)]
impl SessionStore for IdbStore {
    async fn save_session(&self, session: &dyn SessionSource) -> Result<SaveReport> {
        let session_id = session.session_id()?;
        check_session_id(&session_id)?;
        let tx = self.transaction(&[&self.names.sessions, &self.names.events], true)?;
        let heads = Self::object_store(&tx, &self.names.sessions)?;
        let events_store = Self::object_store(&tx, &self.names.events)?;
        let key = JsValue::from(session_id.as_str());
        let head = get_value(&heads, &key, "reading the session head").await?;
        let saved_count = get(&head, "eventCount").as_f64();
        let saved_last = get(&head, "lastEventId").as_string();
        let (report, count) = {
            // Read the session in one step: no await until it is written.
            let count = session.event_count()?;
            let saved = match (head.is_undefined(), saved_count) {
                (true, _) => None,
                (false, Some(n)) if n >= 0.0 && n.fract() == 0.0 => {
                    Some((n as u64, saved_last.as_deref()))
                }
                (false, _) => {
                    return Err(corrupt(format!(
                        "saved session {session_id}: its head has no event count"
                    )))
                }
            };
            let (start, first) = match plan_save(saved, session)? {
                SavePlan::First => (0, true),
                SavePlan::Append { from } => (from, false),
                SavePlan::Stale => return Err(stale_save(&session_id)),
            };
            if !first && start == count {
                session.note_saved(count);
                return Ok(SaveReport {
                    events_written: 0,
                    rewritten: false,
                });
            }
            if first {
                let range = Self::events_range(&session_id)?;
                js_try!(events_store.delete(&range), "delete");
            }
            let events = session.events_from(start)?;
            for (i, event) in (start..).zip(events.iter()) {
                let json = context_compiler::json_text::to_json_text(event)
                    .map_err(|e| Error::new(ErrorCode::NotSerializable, e.to_string()))?;
                let event_key: Array =
                    [JsValue::from(session_id.as_str()), JsValue::from(i as f64)]
                        .into_iter()
                        .collect();
                js_try!(events_store.put_with_key(&json.into(), &event_key), "put");
            }
            let new_head = Object::new();
            let _ = Reflect::set(&new_head, &"sessionId".into(), &key);
            let _ = Reflect::set(&new_head, &"eventCount".into(), &(count as f64).into());
            let last = events
                .last()
                .map(|e| JsValue::from(e.event_id.as_str()))
                .unwrap_or(JsValue::NULL);
            let _ = Reflect::set(&new_head, &"lastEventId".into(), &last);
            js_try!(heads.put_with_key(&new_head, &key), "put");
            let report = SaveReport {
                events_written: events.len() as u64,
                rewritten: first,
            };
            (report, count)
        };
        committed(&tx, &format!("saving session {session_id}")).await?;
        session.note_saved(count);
        Ok(report)
    }

    async fn load_events(&self, session_id: &str) -> Result<Option<SavedEvents>> {
        check_session_id(session_id)?;
        let tx = self.transaction(&[&self.names.sessions, &self.names.events], false)?;
        let heads = Self::object_store(&tx, &self.names.sessions)?;
        let events_store = Self::object_store(&tx, &self.names.events)?;
        let head = get_value(&heads, &session_id.into(), "reading the session head").await?;
        if head.is_undefined() {
            return Ok(None);
        }
        let range = Self::events_range(session_id)?;
        let stored = request(
            js_try!(events_store.get_all_with_key(&range), "getAll"),
            "reading session events",
        )
        .await?;
        let mut raw = Vec::new();
        for (i, item) in Array::from(&stored).iter().enumerate() {
            let text = item.as_string().ok_or_else(|| {
                corrupt(format!(
                    "saved session {session_id}: event {i} is not a string"
                ))
            })?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| corrupt(format!("saved session {session_id}: event {i} ({e})")))?;
            raw.push(value);
        }
        let expected = get(&head, "eventCount").as_f64().unwrap_or(-1.0);
        let expected = if expected >= 0.0 {
            expected as u64
        } else {
            u64::MAX
        };
        Ok(Some(SavedEvents {
            events: raw,
            expected,
        }))
    }

    async fn list_sessions(&self) -> Result<Vec<String>> {
        let tx = self.transaction(&[&self.names.sessions], false)?;
        let heads = Self::object_store(&tx, &self.names.sessions)?;
        let keys = request(
            js_try!(heads.get_all_keys(), "getAllKeys"),
            "listing sessions",
        )
        .await?;
        let mut ids: Vec<String> = Array::from(&keys)
            .iter()
            .filter_map(|k| k.as_string())
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    async fn delete_session(&self, session_id: &str) -> Result<bool> {
        check_session_id(session_id)?;
        let tx = self.transaction(&[&self.names.sessions, &self.names.events], true)?;
        let heads = Self::object_store(&tx, &self.names.sessions)?;
        let events_store = Self::object_store(&tx, &self.names.events)?;
        let key = JsValue::from(session_id);
        let existed = has_key(&heads, &key).await?;
        js_try!(heads.delete(&key), "delete");
        let range = Self::events_range(session_id)?;
        js_try!(events_store.delete(&range), "delete");
        committed(&tx, &format!("deleting session {session_id}")).await?;
        Ok(existed)
    }
}
