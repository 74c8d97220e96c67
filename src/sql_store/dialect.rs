//! The SQL each database takes: SQLite's (every runtime's SQLite, D1,
//! Durable Object storage) and PostgreSQL's. The statements are written once
//! with `?` placeholders; [`SqlDialect::sql`] numbers them for PostgreSQL.

use super::{SqlValue, Statement};

/// The database a [`super::SqlArtifactStore`] speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlDialect {
    /// SQLite: `?` placeholders, `BLOB`, one write transaction at a time.
    Sqlite,
    /// PostgreSQL: `$n` placeholders, `BYTEA`, concurrent transactions
    /// under `READ COMMITTED`.
    Postgres,
}

/// The tables of schema version 3, in each dialect. Version 1 lacked
/// `acc_sessions.version` ([`SqlDialect::migrate_v1`]), version 2 its
/// lease ([`SqlDialect::migrate_v2`]).
const SQLITE_TABLES: [&str; 6] = [
    "CREATE TABLE IF NOT EXISTS acc_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acc_artifacts (artifact_id TEXT PRIMARY KEY NOT NULL, summary TEXT NOT NULL, size_bytes INTEGER NOT NULL, mime_type TEXT NOT NULL, created_at REAL NOT NULL, source TEXT NOT NULL, session_id TEXT, content BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acc_artifact_sessions (session_id TEXT NOT NULL, artifact_id TEXT NOT NULL, PRIMARY KEY (session_id, artifact_id))",
    "CREATE TABLE IF NOT EXISTS acc_sessions (session_id TEXT PRIMARY KEY NOT NULL, event_count INTEGER NOT NULL, last_event_id TEXT, saved_at REAL NOT NULL, version INTEGER NOT NULL DEFAULT 0, lease_holder TEXT, lease_until REAL)",
    "CREATE TABLE IF NOT EXISTS acc_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
    "CREATE TABLE IF NOT EXISTS acc_guard (ok INTEGER NOT NULL CHECK (ok = 1))",
];

const POSTGRES_TABLES: [&str; 6] = [
    "CREATE TABLE IF NOT EXISTS acc_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acc_artifacts (artifact_id TEXT PRIMARY KEY NOT NULL, summary TEXT NOT NULL, size_bytes BIGINT NOT NULL, mime_type TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, source TEXT NOT NULL, session_id TEXT, content BYTEA NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acc_artifact_sessions (session_id TEXT NOT NULL, artifact_id TEXT NOT NULL, PRIMARY KEY (session_id, artifact_id))",
    "CREATE TABLE IF NOT EXISTS acc_sessions (session_id TEXT PRIMARY KEY NOT NULL, event_count BIGINT NOT NULL, last_event_id TEXT, saved_at DOUBLE PRECISION NOT NULL, version BIGINT NOT NULL DEFAULT 0, lease_holder TEXT, lease_until DOUBLE PRECISION)",
    "CREATE TABLE IF NOT EXISTS acc_events (session_id TEXT NOT NULL, seq BIGINT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
    "CREATE TABLE IF NOT EXISTS acc_guard (ok INTEGER NOT NULL CHECK (ok = 1))",
];

/// The advisory lock key PostgreSQL's schema creation holds, so that
/// workers starting together do not race `CREATE TABLE IF NOT EXISTS`
/// (which can fail on PostgreSQL's catalogue under concurrency). A
/// transaction-level lock: it ends with the transaction, or with the
/// connection of a killed worker.
const SCHEMA_LOCK: i64 = 0x6163_635f_7363_6865;

impl SqlDialect {
    /// `sql` with its `?` placeholders as this dialect writes them (`$1`,
    /// `$2`, … for PostgreSQL). The statements are the store's own, with no
    /// `?` inside a literal.
    pub fn sql(self, sql: &str) -> String {
        match self {
            SqlDialect::Sqlite => sql.to_string(),
            SqlDialect::Postgres => {
                let mut out = String::with_capacity(sql.len() + 8);
                let mut n = 0;
                for c in sql.chars() {
                    if c == '?' {
                        n += 1;
                        out.push('$');
                        out.push_str(&n.to_string());
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }

    /// The statements creating the tables when missing, first of all the
    /// lock that serialises them on PostgreSQL.
    pub(super) fn create_tables(self) -> Vec<String> {
        let (lock, tables) = match self {
            SqlDialect::Sqlite => (None, SQLITE_TABLES),
            SqlDialect::Postgres => (
                Some(format!("SELECT pg_advisory_xact_lock({SCHEMA_LOCK})")),
                POSTGRES_TABLES,
            ),
        };
        lock.into_iter()
            .chain(tables.iter().map(|t| t.to_string()))
            .collect()
    }

    /// The statements bringing a schema version 1 database to version 2:
    /// the head gains the version a save compares and moves.
    pub(super) fn migrate_v1(self) -> Vec<String> {
        let column = match self {
            SqlDialect::Sqlite => "INTEGER",
            SqlDialect::Postgres => "BIGINT",
        };
        vec![
            format!("ALTER TABLE acc_sessions ADD COLUMN version {column} NOT NULL DEFAULT 0"),
            "UPDATE acc_meta SET value = '2' WHERE key = 'schema_version'".to_string(),
        ]
    }

    /// The statements bringing a schema version 2 database to version 3:
    /// the head gains its lease (holder, and its end by the database's clock).
    pub(super) fn migrate_v2(self) -> Vec<String> {
        let real = match self {
            SqlDialect::Sqlite => "REAL",
            SqlDialect::Postgres => "DOUBLE PRECISION",
        };
        vec![
            "ALTER TABLE acc_sessions ADD COLUMN lease_holder TEXT".to_string(),
            format!("ALTER TABLE acc_sessions ADD COLUMN lease_until {real}"),
            "UPDATE acc_meta SET value = '3' WHERE key = 'schema_version'".to_string(),
        ]
    }

    /// The database's own clock, in ms since the epoch, as an SQL
    /// expression: a lease expires by it, never by a writer's clock.
    pub(super) fn now_ms(self) -> &'static str {
        match self {
            SqlDialect::Sqlite => "((julianday('now') - 2440587.5) * 86400000.0)",
            SqlDialect::Postgres => "CAST(EXTRACT(EPOCH FROM now()) * 1000 AS DOUBLE PRECISION)",
        }
    }

    /// `write` (an `INSERT` or `UPDATE` of one head row) followed by what
    /// aborts the transaction when it changed no row: the row-count check of
    /// an optimistic save. SQLite reads `changes()`; PostgreSQL runs the
    /// write in a `WITH` and inserts a row `acc_guard`'s CHECK refuses when
    /// it returned none. Under PostgreSQL's `READ COMMITTED`, an `UPDATE …
    /// WHERE version = ?` racing another save waits for it, then finds the
    /// version moved and changes nothing, so the guard fires.
    pub(super) fn checked(self, write: &str, params: Vec<SqlValue>) -> Vec<Statement> {
        match self {
            SqlDialect::Sqlite => vec![
                Statement::new(write, params),
                Statement::new(
                    "INSERT INTO acc_guard (ok) SELECT 0 WHERE changes() = 0",
                    Vec::new(),
                ),
            ],
            SqlDialect::Postgres => vec![Statement::new(
                &self.sql(&format!(
                    "WITH moved AS ({write} RETURNING 1) INSERT INTO acc_guard (ok) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM moved)"
                )),
                params,
            )],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SqlDialect;

    #[test]
    fn postgres_numbers_placeholders_in_order() {
        assert_eq!(
            SqlDialect::Postgres.sql("SELECT a FROM t WHERE b = ? AND c = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $2"
        );
        assert_eq!(SqlDialect::Sqlite.sql("b = ?"), "b = ?");
    }

    #[test]
    fn a_checked_write_is_one_statement_on_postgres_and_two_on_sqlite() {
        let w =
            "UPDATE acc_sessions SET version = version + 1 WHERE session_id = ? AND version = ?";
        let pg = SqlDialect::Postgres.checked(w, Vec::new());
        assert_eq!(pg.len(), 1);
        assert!(pg[0]
            .sql
            .contains("WHERE session_id = $1 AND version = $2 RETURNING 1"));
        assert_eq!(SqlDialect::Sqlite.checked(w, Vec::new()).len(), 2);
    }
}
