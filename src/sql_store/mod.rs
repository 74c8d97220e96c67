//! Artifacts and sessions in SQLite, over
//! a connection the host hands in, so one implementation serves every
//! runtime's SQLite: `node:sqlite`, Deno's, `sql.js` and the official wasm
//! build in browsers, Cloudflare D1 and Durable Object storage.
//!
//! The schema ([`SCHEMA_VERSION`] 1, recorded in `acc_meta`):
//!
//! - `acc_artifacts(artifact_id, summary, size_bytes, mime_type, created_at,
//!   source, session_id, content)`: one row per artifact, its content a BLOB
//!   whose SHA-256 is `artifact_id`, verified on every read;
//! - `acc_artifact_sessions(session_id, artifact_id)`: which session stored
//!   what (`list_handles(session)`);
//! - `acc_sessions(session_id, event_count, last_event_id, saved_at)`: a saved
//!   session's head;
//! - `acc_events(session_id, seq, event)`: its events, one JSON row each;
//! - `acc_guard(ok)`, always empty: a save's first statement inserts a
//!   failing row into it when the head is no longer the one the save read,
//!   so a save that raced another aborts whole (`STORE_CONFLICT`) instead of
//!   dropping the other's events.
//!
//! Every write is one [`SqlConnection::batch`], which the host runs as a
//! transaction: a save appends the new events and moves the head together,
//! or rewrites the session whole, or does nothing.

use std::cell::Cell;
use std::rc::Rc;

use async_trait::async_trait;

use crate::artifacts::{
    content_id_by, sort_by_id, verify_by, ArtifactHandle, ArtifactStore, Hasher, Sha2Hasher,
    StoreOptions,
};
use crate::clock::Clock;
use crate::error::{Error, ErrorCode, Result};
use crate::json_text::to_json_text;
use crate::session::{
    plan_save, stale_save, SavePlan, SaveReport, SavedEvents, SessionSource, SessionStore,
};

/// The schema version this code reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

/// A value bound to a statement or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    /// `NULL`.
    Null,
    /// An integer.
    Integer(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// One statement and its positional (`?`) parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// The SQL.
    pub sql: String,
    /// Its parameters, in order.
    pub params: Vec<SqlValue>,
}

impl Statement {
    fn new(sql: &str, params: Vec<SqlValue>) -> Self {
        Statement {
            sql: sql.to_string(),
            params,
        }
    }
}

/// A connection to a SQLite database, as the host provides it.
#[async_trait(?Send)]
pub trait SqlConnection {
    /// The rows of a query, each its columns' values in `SELECT` order.
    async fn query(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>>;
    /// Runs `statements` as one transaction: all of them, or none.
    async fn batch(&self, statements: &[Statement]) -> Result<()>;
}

const CREATE: [&str; 6] = [
    "CREATE TABLE IF NOT EXISTS acc_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acc_artifacts (artifact_id TEXT PRIMARY KEY NOT NULL, summary TEXT NOT NULL, size_bytes INTEGER NOT NULL, mime_type TEXT NOT NULL, created_at REAL NOT NULL, source TEXT NOT NULL, session_id TEXT, content BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acc_artifact_sessions (session_id TEXT NOT NULL, artifact_id TEXT NOT NULL, PRIMARY KEY (session_id, artifact_id))",
    "CREATE TABLE IF NOT EXISTS acc_sessions (session_id TEXT PRIMARY KEY NOT NULL, event_count INTEGER NOT NULL, last_event_id TEXT, saved_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acc_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
    "CREATE TABLE IF NOT EXISTS acc_guard (ok INTEGER NOT NULL CHECK (ok = 1))",
];

/// The head a save read: its event count and last event id.
type Head = Option<(u64, Option<String>)>;

const HANDLE_COLUMNS: &str =
    "a.artifact_id, a.summary, a.size_bytes, a.mime_type, a.created_at, a.source, a.session_id";

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::StoreCorrupt, format!("sqlite store: {what}"))
}

fn text(v: &SqlValue, what: &str) -> Result<String> {
    match v {
        SqlValue::Text(t) => Ok(t.clone()),
        other => Err(corrupt(format!("{what} is {other:?}, not text"))),
    }
}

fn optional_text(v: &SqlValue, what: &str) -> Result<Option<String>> {
    match v {
        SqlValue::Null => Ok(None),
        other => text(other, what).map(Some),
    }
}

fn number(v: &SqlValue, what: &str) -> Result<f64> {
    match v {
        SqlValue::Integer(i) => Ok(*i as f64),
        SqlValue::Real(r) => Ok(*r),
        other => Err(corrupt(format!("{what} is {other:?}, not a number"))),
    }
}

fn count(v: &SqlValue, what: &str) -> Result<u64> {
    let n = number(v, what)?;
    if n < 0.0 || n.fract() != 0.0 {
        return Err(corrupt(format!("{what} is {n}, not a count")));
    }
    Ok(n as u64)
}

fn handle_of(row: &[SqlValue], session_id: Option<&str>) -> Result<ArtifactHandle> {
    let [id, summary, size, mime, created, source, session] = row else {
        return Err(corrupt(format!(
            "an artifact row has {} columns",
            row.len()
        )));
    };
    Ok(ArtifactHandle {
        artifact_id: text(id, "artifact_id")?,
        summary: text(summary, "summary")?,
        size_bytes: count(size, "size_bytes")?,
        mime_type: text(mime, "mime_type")?,
        created_at: number(created, "created_at")?,
        source: text(source, "source")?,
        session_id: match session_id {
            Some(s) => Some(s.to_string()),
            None => optional_text(session, "session_id")?,
        },
    })
}

fn str_value(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}

/// Statements deleting the rows of each of `tables` whose `column` is `value`.
fn deletes(tables: &[&str], column: &str, value: &str) -> Vec<Statement> {
    tables
        .iter()
        .map(|t| {
            Statement::new(
                &format!("DELETE FROM {t} WHERE {column} = ?"),
                vec![str_value(value)],
            )
        })
        .collect()
}

/// Artifacts and saved sessions in SQLite (see the module docs).
pub struct SqlArtifactStore<C> {
    conn: C,
    clock: Rc<dyn Clock>,
    hasher: Rc<dyn Hasher>,
    /// Whether the schema is known to be in place and current (checking it
    /// twice is harmless: every statement of the check is idempotent).
    ready: Cell<bool>,
}

impl<C: SqlConnection> SqlArtifactStore<C> {
    /// A store over `conn`, stamping artifacts with `clock`; the schema is
    /// created (or checked) by the first call.
    pub fn new(conn: C, clock: Rc<dyn Clock>) -> Self {
        SqlArtifactStore {
            conn,
            clock,
            hasher: Rc::new(Sha2Hasher),
            ready: Cell::new(false),
        }
    }

    /// The store, hashing with `hasher`.
    pub fn with_hasher(mut self, hasher: Rc<dyn Hasher>) -> Self {
        self.hasher = hasher;
        self
    }

    /// The connection.
    pub fn connection(&self) -> &C {
        &self.conn
    }

    /// Creates the tables when missing and checks the schema version: a
    /// database written by a newer version is `STORE_UNSUPPORTED`.
    async fn ensure_schema(&self) -> Result<()> {
        if self.ready.get() {
            return Ok(());
        }
        let mut create: Vec<Statement> = CREATE
            .iter()
            .map(|s| Statement::new(s, Vec::new()))
            .collect();
        create.push(Statement::new(
            "INSERT OR IGNORE INTO acc_meta (key, value) VALUES ('schema_version', ?)",
            vec![str_value(&SCHEMA_VERSION.to_string())],
        ));
        self.conn.batch(&create).await?;
        let rows = self
            .conn
            .query(
                "SELECT value FROM acc_meta WHERE key = 'schema_version'",
                &[],
            )
            .await?;
        let version = rows
            .first()
            .and_then(|r| r.first())
            .map(|v| text(v, "schema_version"))
            .transpose()?
            .and_then(|v| v.parse::<u32>().ok())
            .ok_or_else(|| corrupt("acc_meta has no schema_version"))?;
        if version > SCHEMA_VERSION {
            return Err(Error::new(
                ErrorCode::StoreUnsupported,
                format!("the database has schema version {version}; this version of the library reads {SCHEMA_VERSION}"),
            ));
        }
        self.ready.set(true);
        Ok(())
    }

    async fn rows(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        self.ensure_schema().await?;
        self.conn.query(sql, params).await
    }

    async fn write(&self, statements: &[Statement]) -> Result<()> {
        self.ensure_schema().await?;
        self.conn.batch(statements).await
    }

    /// The saved head of `session_id`.
    async fn head(&self, session_id: &str) -> Result<Head> {
        let rows = self
            .rows(
                "SELECT event_count, last_event_id FROM acc_sessions WHERE session_id = ?",
                &[str_value(session_id)],
            )
            .await?;
        match rows.first() {
            Some(row) if row.len() == 2 => Ok(Some((
                count(&row[0], "event_count")?,
                optional_text(&row[1], "last_event_id")?,
            ))),
            Some(_) => Err(corrupt(format!("the head of session {session_id}"))),
            None => Ok(None),
        }
    }
}

/// The statement that aborts a save's transaction when the head of
/// `session_id` is no longer `head` (a CHECK failure in `acc_guard`).
fn head_guard(session_id: &str, head: &Head) -> Statement {
    match head {
        None => Statement::new(
            "INSERT INTO acc_guard (ok) SELECT 0 WHERE EXISTS (SELECT 1 FROM acc_sessions WHERE session_id = ?)",
            vec![str_value(session_id)],
        ),
        Some((n, last)) => Statement::new(
            "INSERT INTO acc_guard (ok) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM acc_sessions WHERE session_id = ? AND event_count = ? AND last_event_id IS ?)",
            vec![
                str_value(session_id),
                SqlValue::Integer(*n as i64),
                last.as_deref().map_or(SqlValue::Null, str_value),
            ],
        ),
    }
}

#[async_trait(?Send)]
impl<C: SqlConnection> ArtifactStore for SqlArtifactStore<C> {
    async fn store(
        &self,
        content: &[u8],
        source: &str,
        options: StoreOptions,
    ) -> Result<ArtifactHandle> {
        let id = content_id_by(self.hasher.as_ref(), content).await?;
        let handle =
            ArtifactHandle::describe(id.clone(), content, source, &options, self.clock.now_ms());
        let mut statements = vec![Statement::new(
            "INSERT OR IGNORE INTO acc_artifacts (artifact_id, summary, size_bytes, mime_type, created_at, source, session_id, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                str_value(&id),
                str_value(&handle.summary),
                SqlValue::Integer(handle.size_bytes as i64),
                str_value(&handle.mime_type),
                SqlValue::Real(handle.created_at),
                str_value(source),
                options.session_id.as_deref().map_or(SqlValue::Null, str_value),
                SqlValue::Blob(content.to_vec()),
            ],
        )];
        if let Some(s) = &options.session_id {
            statements.push(Statement::new(
                "INSERT OR IGNORE INTO acc_artifact_sessions (session_id, artifact_id) VALUES (?, ?)",
                vec![str_value(s), str_value(&id)],
            ));
        }
        self.write(&statements).await?;
        // The stored handle: the first store's, when this content was there already.
        let rows = self
            .rows(
                &format!("SELECT {HANDLE_COLUMNS} FROM acc_artifacts a WHERE a.artifact_id = ?"),
                &[str_value(&id)],
            )
            .await?;
        match rows.first() {
            Some(row) => handle_of(row, options.session_id.as_deref()),
            None => Err(corrupt(format!(
                "artifact {id} was written but is not there"
            ))),
        }
    }

    async fn retrieve(&self, artifact_id: &str) -> Result<Option<Vec<u8>>> {
        let rows = self
            .rows(
                "SELECT content FROM acc_artifacts WHERE artifact_id = ?",
                &[str_value(artifact_id)],
            )
            .await?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let content = match row.into_iter().next() {
            Some(SqlValue::Blob(b)) => b,
            Some(SqlValue::Text(t)) => t.into_bytes(),
            other => {
                return Err(corrupt(format!(
                    "the content of {artifact_id} is {other:?}"
                )))
            }
        };
        verify_by(self.hasher.as_ref(), artifact_id, &content).await?;
        Ok(Some(content))
    }

    async fn exists(&self, artifact_id: &str) -> Result<bool> {
        let rows = self
            .rows(
                "SELECT 1 FROM acc_artifacts WHERE artifact_id = ?",
                &[str_value(artifact_id)],
            )
            .await?;
        Ok(!rows.is_empty())
    }

    async fn list_handles(&self, session_id: Option<&str>) -> Result<Vec<ArtifactHandle>> {
        let rows = match session_id {
            None => self.rows(&format!("SELECT {HANDLE_COLUMNS} FROM acc_artifacts a"), &[]).await?,
            Some(s) => {
                self.rows(
                    &format!("SELECT {HANDLE_COLUMNS} FROM acc_artifacts a JOIN acc_artifact_sessions x ON x.artifact_id = a.artifact_id WHERE x.session_id = ?"),
                    &[str_value(s)],
                )
                .await?
            }
        };
        let mut handles = rows
            .iter()
            .map(|r| handle_of(r, session_id))
            .collect::<Result<Vec<_>>>()?;
        sort_by_id(&mut handles);
        Ok(handles)
    }

    async fn delete(&self, artifact_id: &str) -> Result<bool> {
        if !self.exists(artifact_id).await? {
            return Ok(false);
        }
        self.write(&deletes(
            &["acc_artifacts", "acc_artifact_sessions"],
            "artifact_id",
            artifact_id,
        ))
        .await?;
        Ok(true)
    }
}

#[async_trait(?Send)]
impl<C: SqlConnection> SessionStore for SqlArtifactStore<C> {
    async fn save_session(&self, session: &dyn SessionSource) -> Result<SaveReport> {
        let id = session.session_id()?;
        let saved = self.head(&id).await?;
        // Read the session in one step: no await until it is serialised.
        let count = session.event_count()?;
        let plan = plan_save(
            saved.as_ref().map(|(n, last)| (*n, last.as_deref())),
            session,
        )?;
        let (from, rewritten) = match plan {
            SavePlan::First => (0, true),
            SavePlan::Append { from } => (from, false),
            SavePlan::Stale => return Err(stale_save(&id)),
        };
        if !rewritten && from == count {
            return Ok(SaveReport {
                events_written: 0,
                rewritten: false,
            });
        }
        let events = session
            .events_from(from)?
            .iter()
            .map(|e| {
                Ok((
                    e.event_id.clone(),
                    to_json_text(e)
                        .map_err(|e| Error::new(ErrorCode::StoreFailed, e.to_string()))?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut statements = Vec::with_capacity(events.len() + 3);
        statements.push(head_guard(&id, &saved));
        if rewritten {
            statements.push(Statement::new(
                "DELETE FROM acc_events WHERE session_id = ?",
                vec![str_value(&id)],
            ));
        }
        for (seq, (_, json)) in (from..).zip(events.iter()) {
            statements.push(Statement::new(
                "INSERT INTO acc_events (session_id, seq, event) VALUES (?, ?, ?)",
                vec![
                    str_value(&id),
                    SqlValue::Integer(seq as i64),
                    str_value(json),
                ],
            ));
        }
        statements.push(Statement::new(
            "INSERT OR REPLACE INTO acc_sessions (session_id, event_count, last_event_id, saved_at) VALUES (?, ?, ?, ?)",
            vec![
                str_value(&id),
                SqlValue::Integer(count as i64),
                events.last().map_or(SqlValue::Null, |(e, _)| str_value(e)),
                SqlValue::Real(self.clock.now_ms()),
            ],
        ));
        if let Err(e) = self.write(&statements).await {
            // The guard (or an append's key) failed because another save
            // moved the head since this one read it: nothing was written.
            if self.head(&id).await.ok().as_ref() != Some(&saved) {
                return Err(Error::new(
                    ErrorCode::StoreConflict,
                    format!("session {id} was saved by another writer while this save ran; nothing was written (load it again)"),
                ));
            }
            return Err(e);
        }
        Ok(SaveReport {
            events_written: events.len() as u64,
            rewritten,
        })
    }

    async fn load_events(&self, session_id: &str) -> Result<Option<SavedEvents>> {
        let head = self
            .rows(
                "SELECT event_count FROM acc_sessions WHERE session_id = ?",
                &[str_value(session_id)],
            )
            .await?;
        let Some(expected) = head.first().and_then(|r| r.first()) else {
            return Ok(None);
        };
        let expected = count(expected, "event_count")?;
        // The events the head counts: a save committed since the head was
        // read only adds events after them.
        let rows = self
            .rows(
                "SELECT event FROM acc_events WHERE session_id = ? AND seq < ? ORDER BY seq",
                &[str_value(session_id), SqlValue::Integer(expected as i64)],
            )
            .await?;
        let raw = rows
            .iter()
            .map(|r| {
                let t = r
                    .first()
                    .map(|v| text(v, "event"))
                    .transpose()?
                    .unwrap_or_default();
                serde_json::from_str(&t)
                    .map_err(|e| corrupt(format!("an event of session {session_id}: {e}")))
            })
            .collect::<Result<Vec<serde_json::Value>>>()?;
        Ok(Some(SavedEvents {
            events: raw,
            expected,
        }))
    }

    async fn list_sessions(&self) -> Result<Vec<String>> {
        let rows = self
            .rows(
                "SELECT session_id FROM acc_sessions ORDER BY session_id",
                &[],
            )
            .await?;
        rows.iter()
            .map(|r| {
                r.first()
                    .map_or_else(|| Err(corrupt("a session row")), |v| text(v, "session_id"))
            })
            .collect()
    }

    async fn delete_session(&self, session_id: &str) -> Result<bool> {
        let exists = !self
            .rows(
                "SELECT 1 FROM acc_sessions WHERE session_id = ?",
                &[str_value(session_id)],
            )
            .await?
            .is_empty();
        if exists {
            self.write(&deletes(
                &["acc_events", "acc_sessions"],
                "session_id",
                session_id,
            ))
            .await?;
        }
        Ok(exists)
    }
}
