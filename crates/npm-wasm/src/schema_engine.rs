//! The [`SchemaEngine`] of the npm package: the `jsonschema` crate lives in a
//! second `.wasm` (`crates/schema-wasm`), loaded by the entry the first time
//! a `SchemaRegistry` is made (`js/schema.js`). This module asks the host for
//! it and calls it; values cross as JSON text, since the two instances share
//! no memory.

use context_compiler_js::error::{JsResult, Thrown};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler::normalize::schemas::{
    invalid, CompiledSchema, Dialect, SchemaEngine, SchemaError, ValidationResult,
};
use context_compiler_js::error::thrown_message;

#[wasm_bindgen]
extern "C" {
    /// The schema module's API (`compile`, `checkResource`).
    #[wasm_bindgen(typescript_type = "unknown")]
    pub(crate) type JsEngine;

    #[wasm_bindgen(method, catch)]
    fn compile(
        this: &JsEngine,
        schema: &str,
        dialect: &str,
        resources: &str,
    ) -> std::result::Result<JsSchema, JsValue>;

    #[wasm_bindgen(method, catch, js_name = checkResource)]
    fn check_resource(
        this: &JsEngine,
        uri: &str,
        document: &str,
    ) -> std::result::Result<(), JsValue>;

    /// A schema compiled in the schema module.
    type JsSchema;

    #[wasm_bindgen(method, catch)]
    fn validate(this: &JsSchema, data: &str) -> std::result::Result<String, JsValue>;

    #[wasm_bindgen(method)]
    fn free(this: &JsSchema);

    /// The loaded schema module; throws `NOT_INITIALIZED` in the web entry
    /// before `initSchemas()`.
    #[wasm_bindgen(method, catch, js_name = schemaEngine)]
    fn schema_engine(this: &SchemaHost) -> std::result::Result<JsEngine, JsValue>;

    /// The host object `js/instance.js` installs, as the main module sees it.
    type SchemaHost;
}

/// Compiles through the separately loaded schema module.
pub(crate) struct JsSchemaEngine(JsEngine);

impl JsSchemaEngine {
    /// The host's schema module, loading it if the entry can (Node), or the
    /// error the host threw (`NOT_INITIALIZED` before `initSchemas()`).
    pub(crate) fn load() -> JsResult<JsSchemaEngine> {
        context_compiler_js::fatal::with_host_as(|host: &SchemaHost| host.schema_engine())
            .unwrap_or_else(|| Err(JsValue::from_str("the module's host is not installed")))
            .map(JsSchemaEngine)
            .map_err(Thrown::from)
    }
}

/// A core error from what the schema module threw: its `code` when it is
/// one of ours, `INVALID_SCHEMA` otherwise (a trap in that module).
fn from_thrown(thrown: &JsValue) -> Error {
    let code = js_sys::Reflect::get(thrown, &"code".into())
        .ok()
        .and_then(|c| c.as_string())
        .and_then(|c| ErrorCode::ALL.iter().copied().find(|k| k.as_str() == c));
    match code {
        Some(code) => Error::new(code, thrown_message(thrown)),
        None => invalid(format!(
            "the schema module failed: {}",
            thrown_message(thrown)
        )),
    }
}

fn text(value: &Value) -> Result<String> {
    context_compiler::json_text::to_json_text(value)
        .map_err(|e| Error::new(ErrorCode::NotSerializable, e.to_string()))
}

impl SchemaEngine for JsSchemaEngine {
    fn check_resource(&self, uri: &str, document: &Value) -> Result<()> {
        self.0
            .check_resource(uri, &text(document)?)
            .map_err(|e| from_thrown(&e))
    }

    fn compile(
        &self,
        schema: &Value,
        dialect: Dialect,
        resources: &[(String, Value)],
    ) -> Result<Box<dyn CompiledSchema>> {
        let resources = context_compiler::json_text::to_json_text(resources)
            .map_err(|e| Error::new(ErrorCode::NotSerializable, e.to_string()))?;
        let compiled = self
            .0
            .compile(&text(schema)?, dialect.as_str(), &resources)
            .map_err(|e| from_thrown(&e))?;
        Ok(Box::new(Compiled(compiled)))
    }
}

/// A schema owned by the schema module, freed with its registration.
struct Compiled(JsSchema);

impl Drop for Compiled {
    fn drop(&mut self) {
        self.0.free();
    }
}

impl CompiledSchema for Compiled {
    fn validate(&self, data: &Value) -> ValidationResult {
        let result = text(data)
            .map_err(|e| e.message().to_string())
            .and_then(|data| self.0.validate(&data).map_err(|e| thrown_message(&e)))
            .and_then(|json| serde_json::from_str(&json).map_err(|e| e.to_string()));
        result.unwrap_or_else(|why| ValidationResult {
            valid: false,
            errors: vec![SchemaError {
                instance_path: String::new(),
                schema_path: String::new(),
                message: format!("validation could not run: {why}"),
            }],
        })
    }
}
