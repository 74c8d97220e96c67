//! The host's imports seen as the core's traits: its key-value store as a
//! [`KeyValue`], its database as a [`SqlConnection`], its tools as a
//! [`ToolBridge`], its embedding model as an [`Embedder`], its text model as
//! an [`Llm`].

use async_trait::async_trait;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;

use super::bindings::agent::context_compiler::{artifact_kv, embedder, llm, sql, tool_bridge};
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::kv::KeyValue;
use context_compiler::llm::{Llm, LlmOptions};
use context_compiler::recall::embedder::{EmbedRole, Embedder};
use context_compiler::sql_store::{SqlConnection, SqlValue, Statement};
use context_compiler::tools::{AbortSignal, ToolBridge, ToolFailure, ToolOutput};

/// The host's `artifact-kv` import.
pub(crate) struct HostKv;

/// A store import's failure: `store-failed`, naming the operation.
fn failed(op: &str, message: String) -> Error {
    Error::new(
        ErrorCode::StoreFailed,
        format!("host {op} failed: {message}"),
    )
}

#[async_trait(?Send)]
impl KeyValue for HostKv {
    type Value = Vec<u8>;

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        artifact_kv::get(key).map_err(|m| failed("kv get", m))
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        artifact_kv::put(key, &value).map_err(|m| failed("kv put", m))
    }

    async fn delete(&self, key: &str) -> Result<()> {
        artifact_kv::delete(key).map_err(|m| failed("kv delete", m))
    }

    async fn list(&self, prefix: &str) -> Result<Option<Vec<String>>> {
        artifact_kv::list_keys(prefix).map_err(|m| failed("kv list", m))
    }

    fn has_put_if(&self) -> bool {
        true
    }

    async fn put_if(&self, key: &str, value: Vec<u8>, expected: Option<&Vec<u8>>) -> Result<bool> {
        artifact_kv::put_if(key, &value, expected.map(Vec::as_slice))
            .map_err(|m| failed("kv put-if", m))
    }
}

/// The host's `sql` import.
pub(crate) struct HostSql {
    /// Send blobs as `sql-value::base64` (`sql-options.blobs-as-base64`).
    pub(crate) blobs_as_base64: bool,
}

impl HostSql {
    /// `value` as the import takes it.
    fn to_wit(&self, value: &SqlValue) -> sql::SqlValue {
        match value {
            SqlValue::Null => sql::SqlValue::Null,
            SqlValue::Integer(i) => sql::SqlValue::Integer(*i),
            SqlValue::Real(r) => sql::SqlValue::Real(*r),
            SqlValue::Text(t) => sql::SqlValue::Text(t.clone()),
            SqlValue::Blob(b) if self.blobs_as_base64 => sql::SqlValue::Base64(STANDARD.encode(b)),
            SqlValue::Blob(b) => sql::SqlValue::Blob(b.clone()),
        }
    }

    fn params(&self, params: &[SqlValue]) -> Vec<sql::SqlValue> {
        params.iter().map(|p| self.to_wit(p)).collect()
    }
}

/// A value the host returned; base64 that does not decode is
/// `store-invalid-value`.
fn from_wit(value: sql::SqlValue) -> Result<SqlValue> {
    Ok(match value {
        sql::SqlValue::Null => SqlValue::Null,
        sql::SqlValue::Integer(i) => SqlValue::Integer(i),
        sql::SqlValue::Real(r) => SqlValue::Real(r),
        sql::SqlValue::Text(t) => SqlValue::Text(t),
        sql::SqlValue::Blob(b) => SqlValue::Blob(b),
        sql::SqlValue::Base64(t) => SqlValue::Blob(STANDARD.decode(t).map_err(|e| {
            Error::new(
                ErrorCode::StoreInvalidValue,
                format!("the host's sql query returned base64 that does not decode ({e})"),
            )
        })?),
    })
}

#[async_trait(?Send)]
impl SqlConnection for HostSql {
    async fn query(&self, text: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let rows = sql::query(text, &self.params(params)).map_err(|m| failed("sql query", m))?;
        rows.into_iter()
            .map(|row| row.into_iter().map(from_wit).collect())
            .collect()
    }

    async fn batch(&self, statements: &[Statement]) -> Result<()> {
        let statements: Vec<sql::Statement> = statements
            .iter()
            .map(|s| sql::Statement {
                sql: s.sql.clone(),
                params: self.params(&s.params),
            })
            .collect();
        sql::batch(&statements).map_err(|m| failed("sql batch", m))
    }
}

/// The host's `tool-bridge` import; the host enforces the deadline.
pub(crate) struct HostBridge;

#[async_trait(?Send)]
impl ToolBridge for HostBridge {
    async fn execute(
        &self,
        name: &str,
        arguments: &Value,
        _signal: &AbortSignal,
        deadline_ms: f64,
    ) -> std::result::Result<ToolOutput, ToolFailure> {
        let timeout = deadline_ms.max(0.0).ceil() as u64;
        match tool_bridge::call_tool(name, &arguments.to_string(), timeout) {
            Ok(text) => Ok(ToolOutput::Text(text)),
            Err(tool_bridge::ToolFailure::Timeout(m)) => Err(ToolFailure::TimedOut(m)),
            Err(tool_bridge::ToolFailure::Failed(m)) => Err(ToolFailure::Failed(m)),
        }
    }
}

/// The host's `embedder` import, given `timeout_ms` for each batch.
pub(crate) struct HostEmbedder {
    /// How long the host may take to embed one batch.
    pub(crate) timeout_ms: u64,
}

#[async_trait(?Send)]
impl Embedder for HostEmbedder {
    async fn embed(&self, texts: &[String], role: EmbedRole) -> Result<Vec<Vec<f32>>> {
        let role = match role {
            EmbedRole::Query => embedder::EmbedRole::Query,
            EmbedRole::Passage => embedder::EmbedRole::Passage,
        };
        embedder::embed(texts, role, self.timeout_ms).map_err(|m| {
            Error::new(
                ErrorCode::ProcessorFailed,
                format!("the host's embedder failed: {m}"),
            )
        })
    }
}

/// The host's `llm` import.
pub(crate) struct HostLlm;

#[async_trait(?Send)]
impl Llm for HostLlm {
    async fn complete(&self, prompt: &str, options: LlmOptions) -> Result<String> {
        llm::complete(prompt, options.max_tokens).map_err(|m| {
            Error::new(
                ErrorCode::ProcessorFailed,
                format!("the host's llm failed: {m}"),
            )
        })
    }
}
