//! `SqliteArtifactStore` and `PostgresArtifactStore` for JS: the core's SQL
//! store, in each dialect, over a connection object with async
//! `query(sql, params)` and `batch(statements)` (the package's
//! `sqlConnection` adapters make one from `node:sqlite`, Deno's SQLite,
//! `sql.js`, Cloudflare D1 or a Durable Object's SQL storage; `pgConnection`
//! from a `pg` `Pool` or `Client`).

use std::rc::Rc;

use async_trait::async_trait;
use context_compiler_js::error::JsResult;
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{array_items, describe, own_values};
use context_compiler_js::env::JsClock;
use context_compiler_js::error::thrown_message;
use context_compiler_js::hash::JsHasher;
use context_compiler_js::promise::require_methods;
use context_compiler_js::registry::Registration;

use crate::js_kv::call_method;
use crate::registry;
use context_compiler::sql_store::{
    SqlArtifactStore as CoreStore, SqlConnection, SqlDialect, SqlValue, Statement,
};

const CONNECTION_SHAPE: &str =
    "connection must be an object with async query(sql, params) and batch(statements) methods";

/// A JS connection object seen as the core's [`SqlConnection`].
struct JsSql {
    this: JsValue,
}

fn to_js(v: &SqlValue) -> JsValue {
    match v {
        SqlValue::Null => JsValue::NULL,
        SqlValue::Integer(i) => JsValue::from_f64(*i as f64),
        SqlValue::Real(r) => JsValue::from_f64(*r),
        SqlValue::Text(t) => JsValue::from_str(t),
        SqlValue::Blob(b) => Uint8Array::from(b.as_slice()).into(),
    }
}

fn params(values: &[SqlValue]) -> Array {
    values.iter().map(to_js).collect()
}

fn invalid(what: String) -> Error {
    Error::new(ErrorCode::StoreInvalidValue, what)
}

fn from_js(v: &JsValue) -> Result<SqlValue> {
    if v.is_null() || v.is_undefined() {
        return Ok(SqlValue::Null);
    }
    if let Some(n) = v.as_f64() {
        return Ok(if n.fract() == 0.0 && n.abs() < 9.0e15 {
            SqlValue::Integer(n as i64)
        } else {
            SqlValue::Real(n)
        });
    }
    if let Some(s) = v.as_string() {
        return Ok(SqlValue::Text(s));
    }
    if v.is_bigint() {
        let n = i64::try_from(v.clone().unchecked_into::<js_sys::BigInt>())
            .map_err(|_| invalid("an integer column is out of range".into()))?;
        return Ok(SqlValue::Integer(n));
    }
    if let Some(a) = v.dyn_ref::<Uint8Array>() {
        return Ok(SqlValue::Blob(a.to_vec()));
    }
    if let Some(buf) = v.dyn_ref::<js_sys::ArrayBuffer>() {
        return Ok(SqlValue::Blob(Uint8Array::new(buf).to_vec()));
    }
    Err(invalid(format!(
        "a column value must be null, a number, a bigint, a string or bytes (got {})",
        describe(v)
    )))
}

/// What a `Proxy` among the host's rows threw, read.
fn trapped(what: &str, thrown: &JsValue) -> Error {
    invalid(format!(
        "{what} could not be read ({})",
        thrown_message(thrown)
    ))
}

fn row_values(row: &JsValue) -> Result<Vec<SqlValue>> {
    let cells = match array_items(row).map_err(|e| trapped("a row", &e))? {
        Some(cells) => cells,
        None if row.is_object() => own_values(row).map_err(|e| trapped("a row", &e))?,
        None => {
            return Err(invalid(format!(
                "a row must be an array or an object (got {})",
                describe(row)
            )))
        }
    };
    cells.iter().map(|c| from_js(&c)).collect()
}

#[async_trait(?Send)]
impl SqlConnection for JsSql {
    async fn query(&self, sql: &str, values: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let rows = call_method(
            &self.this,
            "query",
            &[sql.into(), params(values).into()],
            CONNECTION_SHAPE,
            "connection.query",
        )
        .await?;
        let Some(rows) = array_items(&rows).map_err(|e| trapped("connection.query's rows", &e))?
        else {
            return Err(invalid(format!(
                "connection.query must resolve to an array of rows (got {})",
                describe(&rows)
            )));
        };
        rows.iter().map(|r| row_values(&r)).collect()
    }

    async fn batch(&self, statements: &[Statement]) -> Result<()> {
        let list: Array = statements
            .iter()
            .map(|s| {
                let o = Object::new();
                let _ = Reflect::set(&o, &"sql".into(), &s.sql.as_str().into());
                let _ = Reflect::set(&o, &"params".into(), &params(&s.params));
                JsValue::from(o)
            })
            .collect();
        call_method(
            &self.this,
            "batch",
            &[list.into()],
            CONNECTION_SHAPE,
            "connection.batch",
        )
        .await
        .map(|_| ())
    }
}

/// Artifacts and saved sessions in SQLite: artifacts as rows with their content in a BLOB,
/// verified on read; saved sessions as a head row and one row per event,
/// every write one transaction. The schema is created, and its version
/// checked, by the first call.
#[wasm_bindgen]
pub struct SqliteArtifactStore {
    inner: Rc<CoreStore<JsSql>>,
    registration: Registration,
}

#[wasm_bindgen]
impl SqliteArtifactStore {
    /// A store over `connection`: an object with async `query(sql, params)`
    /// (resolving to rows, arrays or objects of column values in `SELECT`
    /// order) and `batch(statements)` (running `[{ sql, params }]` as one
    /// transaction). `sqlConnection(db)` makes one from the usual engines.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "SqlConnectionLike")] connection: JsValue,
    ) -> JsResult<SqliteArtifactStore> {
        let (inner, registration) = open(connection, SqlDialect::Sqlite)?;
        Ok(SqliteArtifactStore {
            inner,
            registration,
        })
    }
}

/// The core store over `connection` in `dialect`, registered.
fn open(connection: JsValue, dialect: SqlDialect) -> Result<(Rc<CoreStore<JsSql>>, Registration)> {
    require_methods(&connection, &["query", "batch"], CONNECTION_SHAPE)?;
    let inner = Rc::new(
        CoreStore::with_dialect(JsSql { this: connection }, dialect, Rc::new(JsClock))
            .with_hasher(Rc::new(JsHasher)),
    );
    let weak: std::rc::Weak<dyn context_compiler::artifacts::ArtifactStore> =
        Rc::downgrade(&(inner.clone() as Rc<dyn context_compiler::artifacts::ArtifactStore>));
    Ok((inner, registry::register(weak)))
}

context_compiler_js::store_methods!(SqliteArtifactStore, crate::registry::Stores);

/// Artifacts and saved sessions in PostgreSQL: the same tables as
/// `SqliteArtifactStore` (content in `BYTEA`, verified on read; one row per
/// event), every write one transaction, and a save that raced another
/// failing whole by `UPDATE … WHERE version = $n` and a row-count check,
/// safe under `READ COMMITTED` with any number of writers. The schema is
/// created (or migrated) by the first call.
#[wasm_bindgen]
pub struct PostgresArtifactStore {
    inner: Rc<CoreStore<JsSql>>,
    registration: Registration,
}

#[wasm_bindgen]
impl PostgresArtifactStore {
    /// A store over `connection`, an object with async `query(sql, params)`
    /// (`$1` placeholders; rows as arrays or objects of column values in
    /// `SELECT` order, `BIGINT`s as numbers) and `batch(statements)`
    /// (running `[{ sql, params }]` in one transaction on one connection).
    /// `pgConnection(pool)` makes one from a `pg` `Pool` or `Client`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "SqlConnectionLike")] connection: JsValue,
    ) -> JsResult<PostgresArtifactStore> {
        let (inner, registration) = open(connection, SqlDialect::Postgres)?;
        Ok(PostgresArtifactStore {
            inner,
            registration,
        })
    }
}

context_compiler_js::store_methods!(PostgresArtifactStore, crate::registry::Stores);
