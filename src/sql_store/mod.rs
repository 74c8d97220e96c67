//! Artifacts and sessions in SQL, over a connection the host hands in, so
//! one implementation serves every runtime's SQLite (`node:sqlite`, Deno's,
//! `sql.js` and the official wasm build in browsers, Cloudflare D1 and
//! Durable Object storage) and PostgreSQL ([`SqlDialect`]).
//!
//! The schema ([`SCHEMA_VERSION`] 3, recorded in `acc_meta`):
//!
//! - `acc_artifacts(artifact_id, summary, size_bytes, mime_type, created_at,
//!   source, session_id, content)`: one row per artifact, its content a BLOB
//!   (`BYTEA`) whose SHA-256 is `artifact_id`, verified on every read;
//! - `acc_artifact_sessions(session_id, artifact_id)`: which session stored
//!   what (`list_handles(session)`);
//! - `acc_sessions(session_id, event_count, last_event_id, saved_at,
//!   version, lease_holder, lease_until)`: a saved session's head, `version`
//!   moved by every save and every lease taken; the lease of a sync that
//!   lost repeatedly (see [`crate::session::lease`]), ending at
//!   `lease_until` by the database's clock (PostgreSQL's `now()`,
//!   SQLite's `julianday('now')`), which every other save respects;
//! - `acc_events(session_id, seq, event)`: its events, one JSON row each;
//! - `acc_guard(ok)`, always empty: a save moves the head with `UPDATE …
//!   WHERE version = ?` (or inserts it, the first time) and then inserts a
//!   row this table's CHECK refuses when that changed no row, so a save that
//!   raced another aborts whole (`STORE_CONFLICT`) instead of dropping the
//!   other's events. The check counts rows, so it holds under PostgreSQL's
//!   `READ COMMITTED` with any number of writers, not only under SQLite's
//!   one writer at a time.
//!
//! Every write is one [`SqlConnection::batch`], which the host runs as a
//! transaction: a save moves the head and appends the new events together,
//! or does nothing. A load reads the head and the rows in one statement,
//! so one snapshot. Older databases (version 1: no `version` column;
//! version 2: no lease) are read as they are and migrated by the first
//! write; a database of a newer version is `STORE_VERSION`.

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
use crate::session::lease::check_store_version;
use crate::session::{check_optional_session_id, check_session_id};
use crate::session::{plan_save, SavePlan, SaveReport, SavedEvents, SessionSource, SessionStore};
use crate::session::{LeaseTake, SaveTry};

mod dialect;

pub use dialect::SqlDialect;

/// The schema version this code reads and writes.
pub const SCHEMA_VERSION: u32 = crate::session::lease::STORE_VERSION;

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

/// A saved session's head: its event count, last event id, version, and
/// the lease it holds, if live: its holder and remaining ms.
#[derive(Debug, Clone, PartialEq)]
struct Head {
    count: u64,
    last: Option<String>,
    version: i64,
    lease: Option<(String, f64)>,
}

impl Head {
    /// The remaining ms of a live lease held by another than `writer`.
    fn leased_against(&self, writer: Option<&str>) -> Option<f64> {
        match &self.lease {
            Some((holder, left)) if Some(holder.as_str()) != writer => Some(*left),
            _ => None,
        }
    }
}

const HANDLE_COLUMNS: &str =
    "a.artifact_id, a.summary, a.size_bytes, a.mime_type, a.created_at, a.source, a.session_id";

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::StoreCorrupt, format!("sql store: {what}"))
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

fn integer(v: &SqlValue, what: &str) -> Result<i64> {
    match v {
        SqlValue::Integer(i) => Ok(*i),
        other => Err(corrupt(format!("{what} is {other:?}, not an integer"))),
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

/// Artifacts and saved sessions in SQL (see the module docs).
pub struct SqlArtifactStore<C> {
    conn: C,
    dialect: SqlDialect,
    clock: Rc<dyn Clock>,
    hasher: Rc<dyn Hasher>,
    /// The schema version known to be in place, 0 before it is checked
    /// (checking it twice is harmless: every statement of the check is
    /// idempotent).
    schema: Cell<u32>,
}

impl<C: SqlConnection> SqlArtifactStore<C> {
    /// A store over the SQLite connection `conn`, stamping artifacts with
    /// `clock`; the schema is created (or checked, or migrated) by the first
    /// call.
    pub fn new(conn: C, clock: Rc<dyn Clock>) -> Self {
        SqlArtifactStore::with_dialect(conn, SqlDialect::Sqlite, clock)
    }

    /// A store over `conn`, a connection to a database speaking `dialect`.
    pub fn with_dialect(conn: C, dialect: SqlDialect, clock: Rc<dyn Clock>) -> Self {
        SqlArtifactStore {
            conn,
            dialect,
            clock,
            hasher: Rc::new(Sha2Hasher),
            schema: Cell::new(0),
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

    /// Creates the tables when missing and checks the schema version: an
    /// older database is read as it is and migrated for a write (`write`),
    /// one written by a newer version is `STORE_VERSION`.
    async fn ensure_schema(&self, write: bool) -> Result<()> {
        let known = self.schema.get();
        if known == SCHEMA_VERSION || (known > 0 && !write) {
            return Ok(());
        }
        let mut create: Vec<Statement> = self
            .dialect
            .create_tables()
            .iter()
            .map(|s| Statement::new(s, Vec::new()))
            .collect();
        create.push(Statement::new(
            &self.dialect.sql(
                "INSERT INTO acc_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT DO NOTHING",
            ),
            vec![str_value(&SCHEMA_VERSION.to_string())],
        ));
        self.conn.batch(&create).await?;
        let mut version = self.schema_version().await?;
        check_store_version(version, SCHEMA_VERSION, "the database's schema")?;
        while write && version < SCHEMA_VERSION {
            let steps = match version {
                1 => self.dialect.migrate_v1(),
                _ => self.dialect.migrate_v2(),
            };
            let migrate: Vec<Statement> = steps
                .iter()
                .map(|s| Statement::new(s, Vec::new()))
                .collect();
            // Another writer migrating at the same time makes this batch
            // fail (the column is there): the version read again decides.
            let migrated = self.conn.batch(&migrate).await;
            let now = self.schema_version().await?;
            if now == version {
                migrated?;
            }
            version = now;
        }
        self.schema.set(version);
        Ok(())
    }

    async fn schema_version(&self) -> Result<u32> {
        let rows = self
            .conn
            .query(
                "SELECT value FROM acc_meta WHERE key = 'schema_version'",
                &[],
            )
            .await?;
        rows.first()
            .and_then(|r| r.first())
            .map(|v| text(v, "schema_version"))
            .transpose()?
            .and_then(|v| v.parse::<u32>().ok())
            .ok_or_else(|| corrupt("acc_meta has no schema_version"))
    }

    async fn rows(&self, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        self.ensure_schema(false).await?;
        self.conn.query(&self.dialect.sql(sql), params).await
    }

    /// Runs `statements` (made by [`Self::statement`] or
    /// [`SqlDialect::checked`]) as one transaction.
    async fn write(&self, statements: Vec<Statement>) -> Result<()> {
        self.ensure_schema(true).await?;
        self.conn.batch(&statements).await
    }

    /// Statements deleting the rows of each of `tables` whose `column` is `value`.
    fn deletes(&self, tables: &[&str], column: &str, value: &str) -> Vec<Statement> {
        tables
            .iter()
            .map(|t| {
                self.statement(
                    &format!("DELETE FROM {t} WHERE {column} = ?"),
                    vec![str_value(value)],
                )
            })
            .collect()
    }

    /// `sql` and `params` as a statement of this store's dialect.
    fn statement(&self, sql: &str, params: Vec<SqlValue>) -> Statement {
        Statement::new(&self.dialect.sql(sql), params)
    }

    /// The saved events of `session_id` from position `from` on that its
    /// head counts, and that count; `None` when nothing is saved under it.
    /// One statement, so one snapshot: a save, or a delete and a save anew,
    /// committed meanwhile is either all in what it reads or not at all.
    async fn events_from(
        &self,
        session_id: &str,
        from: u64,
    ) -> Result<Option<(u64, Vec<serde_json::Value>)>> {
        let rows = self
            .rows(
                "SELECT s.event_count, e.event FROM acc_sessions s LEFT JOIN acc_events e ON e.session_id = s.session_id AND e.seq >= ? AND e.seq < s.event_count WHERE s.session_id = ? ORDER BY e.seq",
                &[
                    SqlValue::Integer(i64::try_from(from).unwrap_or(i64::MAX)),
                    str_value(session_id),
                ],
            )
            .await?;
        let Some(expected) = rows.first().and_then(|r| r.first()) else {
            return Ok(None);
        };
        let expected = count(expected, "event_count")?;
        let events = rows
            .iter()
            .filter_map(|r| r.get(1).filter(|v| **v != SqlValue::Null))
            .map(|v| {
                let t = text(v, "event")?;
                serde_json::from_str(&t)
                    .map_err(|e| corrupt(format!("an event of session {session_id}: {e}")))
            })
            .collect::<Result<Vec<serde_json::Value>>>()?;
        Ok(Some((expected, events)))
    }

    /// The head of `session_id` (read for a write: the schema is current).
    async fn head(&self, session_id: &str) -> Result<Option<Head>> {
        self.ensure_schema(true).await?;
        let now = self.dialect.now_ms();
        let rows = self
            .rows(
                &format!("SELECT event_count, last_event_id, version, lease_holder, CASE WHEN lease_until > {now} THEN lease_until - {now} END FROM acc_sessions WHERE session_id = ?"),
                &[str_value(session_id)],
            )
            .await?;
        match rows.first().map(Vec::as_slice) {
            Some([n, last, version, holder, left]) => Ok(Some(Head {
                count: count(n, "event_count")?,
                last: optional_text(last, "last_event_id")?,
                version: integer(version, "version")?,
                lease: match (optional_text(holder, "lease_holder")?, left) {
                    (Some(holder), SqlValue::Integer(_) | SqlValue::Real(_)) => {
                        Some((holder, number(left, "the lease's remaining time")?))
                    }
                    _ => None,
                },
            })),
            Some(_) => Err(corrupt(format!("the head of session {session_id}"))),
            None => Ok(None),
        }
    }

    /// The statements moving the head of `id` from `saved` to `count`
    /// events ending with `last`, which abort the transaction when another
    /// save moved it first.
    fn move_head(
        &self,
        id: &str,
        saved: Option<&Head>,
        count: usize,
        last: Option<&str>,
    ) -> Vec<Statement> {
        let last = last.map_or(SqlValue::Null, str_value);
        let now = SqlValue::Real(self.clock.now_ms());
        match saved {
            None => self.dialect.checked(
                "INSERT INTO acc_sessions (session_id, event_count, last_event_id, saved_at, version) VALUES (?, ?, ?, ?, 1) ON CONFLICT (session_id) DO NOTHING",
                vec![str_value(id), SqlValue::Integer(count as i64), last, now],
            ),
            Some(head) => self.dialect.checked(
                "UPDATE acc_sessions SET event_count = ?, last_event_id = ?, saved_at = ?, version = version + 1, lease_holder = NULL, lease_until = NULL WHERE session_id = ? AND version = ?",
                vec![
                    SqlValue::Integer(count as i64),
                    last,
                    now,
                    str_value(id),
                    SqlValue::Integer(head.version),
                ],
            ),
        }
    }

    /// A save of `session` by `writer` (a sync's) or by a plain save
    /// (`None`): it respects another writer's live lease and ends its own.
    async fn save_as(&self, session: &dyn SessionSource, writer: Option<&str>) -> Result<SaveTry> {
        let id = session.session_id()?;
        check_session_id(&id)?;
        let saved = self.head(&id).await?;
        if let Some(left) = saved.as_ref().and_then(|h| h.leased_against(writer)) {
            return Ok(SaveTry::Leased {
                wait_ms: Some(left),
            });
        }
        // Read the session in one step: no await until it is serialised.
        let count = session.event_count()?;
        let plan = plan_save(
            saved.as_ref().map(|h| (h.count, h.last.as_deref())),
            session,
        )?;
        let (from, rewritten) = match plan {
            SavePlan::First => (0, true),
            SavePlan::Append { from } => (from, false),
            SavePlan::Stale => return Ok(SaveTry::Lost),
        };
        if !rewritten && from == count {
            session.note_saved(count);
            return Ok(SaveTry::Saved(SaveReport {
                events_written: 0,
                rewritten: false,
            }));
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
        let last = events.last().map(|(e, _)| e.as_str());
        // The head moves first: a racing save waits on its row, then finds
        // it moved and aborts before writing an event.
        let mut statements = self.move_head(&id, saved.as_ref(), count, last);
        if rewritten {
            statements.extend(self.deletes(&["acc_events"], "session_id", &id));
        }
        for (seq, (_, json)) in (from..).zip(events.iter()) {
            statements.push(self.statement(
                "INSERT INTO acc_events (session_id, seq, event) VALUES (?, ?, ?)",
                vec![
                    str_value(&id),
                    SqlValue::Integer(seq as i64),
                    str_value(json),
                ],
            ));
        }
        if let Err(e) = self.write(statements).await {
            // The guard (or an append's key) failed because another save
            // moved the head (or took its lease) since this one read it:
            // nothing was written.
            let now = self.head(&id).await.ok().flatten();
            if let Some(left) = now.as_ref().and_then(|h| h.leased_against(writer)) {
                return Ok(SaveTry::Leased {
                    wait_ms: Some(left),
                });
            }
            if now.map(|h| h.version) != saved.map(|h| h.version) {
                return Ok(SaveTry::Lost);
            }
            return Err(e);
        }
        session.note_saved(count);
        Ok(SaveTry::Saved(SaveReport {
            events_written: events.len() as u64,
            rewritten,
        }))
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
        check_optional_session_id(options.session_id.as_deref())?;
        let id = content_id_by(self.hasher.as_ref(), content).await?;
        let handle =
            ArtifactHandle::describe(id.clone(), content, source, &options, self.clock.now_ms());
        let mut statements = vec![self.statement(
            "INSERT INTO acc_artifacts (artifact_id, summary, size_bytes, mime_type, created_at, source, session_id, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
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
            statements.push(self.statement(
                "INSERT INTO acc_artifact_sessions (session_id, artifact_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                vec![str_value(s), str_value(&id)],
            ));
        }
        self.write(statements).await?;
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
        check_optional_session_id(session_id)?;
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
        self.write(self.deletes(
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
        self.save_as(session, None).await?.into_saved(&id)
    }

    async fn try_save(&self, session: &dyn SessionSource, writer: &str) -> Result<SaveTry> {
        self.save_as(session, Some(writer)).await
    }

    async fn take_lease(&self, session_id: &str, writer: &str, ttl_ms: u64) -> Result<LeaseTake> {
        check_session_id(session_id)?;
        let Some(head) = self.head(session_id).await? else {
            return Ok(LeaseTake::Unavailable);
        };
        if let Some(left) = head.leased_against(Some(writer)) {
            return Ok(LeaseTake::Held {
                wait_ms: Some(left),
            });
        }
        let now = self.dialect.now_ms();
        let take = self.dialect.checked(
            &format!("UPDATE acc_sessions SET lease_holder = ?, lease_until = {now} + ?, version = version + 1 WHERE session_id = ? AND (lease_holder IS NULL OR lease_holder = ? OR lease_until IS NULL OR lease_until <= {now})"),
            vec![
                str_value(writer),
                SqlValue::Real(ttl_ms as f64),
                str_value(session_id),
                str_value(writer),
            ],
        );
        if let Err(e) = self.write(take).await {
            return match self.head(session_id).await? {
                None => Ok(LeaseTake::Unavailable),
                Some(h) => match h.leased_against(Some(writer)) {
                    Some(left) => Ok(LeaseTake::Held {
                        wait_ms: Some(left),
                    }),
                    None if h == head => Err(e),
                    None => Ok(LeaseTake::Lost),
                },
            };
        }
        Ok(LeaseTake::Taken)
    }
    async fn load_events(&self, session_id: &str) -> Result<Option<SavedEvents>> {
        check_session_id(session_id)?;
        Ok(self
            .events_from(session_id, 0)
            .await?
            .map(|(expected, events)| SavedEvents { events, expected }))
    }

    /// The rows from position `from` on.
    async fn read_events_from(
        &self,
        session_id: &str,
        from: u64,
    ) -> Result<Option<(u64, u64, Vec<serde_json::Value>)>> {
        check_session_id(session_id)?;
        Ok(self
            .events_from(session_id, from)
            .await?
            .map(|(expected, events)| (expected, from, events)))
    }

    async fn list_sessions(&self) -> Result<Vec<String>> {
        let rows = self
            .rows("SELECT session_id FROM acc_sessions", &[])
            .await?;
        // Sorted here: each database's collation orders text its own way.
        let mut ids = rows
            .iter()
            .map(|r| {
                r.first()
                    .map_or_else(|| Err(corrupt("a session row")), |v| text(v, "session_id"))
            })
            .collect::<Result<Vec<_>>>()?;
        context_compiler_text::order::sort_stable_by(&mut ids, |a, b| a.cmp(b));
        Ok(ids)
    }

    async fn delete_session(&self, session_id: &str) -> Result<bool> {
        check_session_id(session_id)?;
        let exists = !self
            .rows(
                "SELECT 1 FROM acc_sessions WHERE session_id = ?",
                &[str_value(session_id)],
            )
            .await?
            .is_empty();
        if exists {
            self.write(self.deletes(&["acc_events", "acc_sessions"], "session_id", session_id))
                .await?;
        }
        Ok(exists)
    }
}
