//! The npm package's JSON Schema module: [`JsonSchemaEngine`] behind a small
//! wasm-bindgen API, built into its own `.wasm` so the main module stays
//! small. The main module's `SchemaRegistry` calls it through
//! `js/schema.js`; values cross as JSON text (the two modules share no
//! memory).

use context_compiler::error::Error;
use context_compiler::normalize::schemas::{
    CompiledSchema, Dialect, JsonSchemaEngine, SchemaEngine,
};
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// A compiled schema, owned by the main module's registry (which frees it).
#[wasm_bindgen]
pub struct Schema {
    compiled: Box<dyn CompiledSchema>,
}

#[wasm_bindgen]
impl Schema {
    /// Validates `data_json`; the `ValidationResult` as JSON text. Text
    /// that is not JSON throws `INVALID_ARGUMENT`.
    pub fn validate(&self, data_json: &str) -> Result<String, JsValue> {
        let data = parse(data_json, "data")?;
        serde_json::to_string(&self.compiled.validate(&data))
            .map_err(|e| js_error("NOT_SERIALIZABLE", &e))
    }
}

/// Compiles `schema_json` in `dialect` (`draft4` ... `draft2020-12`)
/// against `resources_json` (`[[uri, document], ...]`); throws an `Error`
/// with `code` `INVALID_SCHEMA` if it does not compile.
#[wasm_bindgen]
pub fn compile(schema_json: &str, dialect: &str, resources_json: &str) -> Result<Schema, JsValue> {
    let schema = parse(schema_json, "schema")?;
    let dialect = Dialect::parse(dialect)
        .ok_or_else(|| js_error("INVALID_ARGUMENT", &format!("unknown dialect '{dialect}'")))?;
    let resources: Vec<(String, Value)> = serde_json::from_str(resources_json)
        .map_err(|e| js_error("INVALID_ARGUMENT", &format!("resources: {e}")))?;
    JsonSchemaEngine
        .compile(&schema, dialect, &resources)
        .map(|compiled| Schema { compiled })
        .map_err(|e| coded(&e))
}

/// Checks that `document_json` can be the `$ref` target `uri`; throws
/// `INVALID_SCHEMA` if not.
#[wasm_bindgen(js_name = checkResource)]
pub fn check_resource(uri: &str, document_json: &str) -> Result<(), JsValue> {
    let document = parse(document_json, "document")?;
    JsonSchemaEngine
        .check_resource(uri, &document)
        .map_err(|e| coded(&e))
}

fn parse(json: &str, what: &str) -> Result<Value, JsValue> {
    serde_json::from_str(json).map_err(|e| js_error("INVALID_ARGUMENT", &format!("{what}: {e}")))
}

fn coded(e: &Error) -> JsValue {
    js_error(e.code().as_str(), &e.message())
}

/// An `Error` with a `code`, as the main module's errors have.
fn js_error(code: &str, message: &dyn std::fmt::Display) -> JsValue {
    let error = js_sys::Error::new(&message.to_string());
    // Setting a property on a fresh Error cannot fail.
    let _ = js_sys::Reflect::set(&error, &"code".into(), &code.into());
    error.into()
}
