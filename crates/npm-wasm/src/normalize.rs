//! `redact`, `SchemaRegistry` and `PerceptionAligner` for JS.

use std::cell::RefCell;
use std::rc::Rc;

use context_compiler_js::error::{JsResult, Thrown};
use wasm_bindgen::prelude::*;

use crate::schema_engine::JsSchemaEngine;
use context_compiler::error::{Error, ErrorCode, Result};
use context_compiler_js::convert::{bytes, js_to_json, string, to_js};
use context_compiler_js::registry::Registration;

use crate::registry;
use context_compiler::normalize::aligner::PerceptionAligner as CoreAligner;
use context_compiler::normalize::redact::redact as core_redact;
use context_compiler::normalize::schemas::SchemaRegistry as CoreRegistry;
use context_compiler_js::text::js_string;

fn js<T: serde::Serialize + ?Sized>(v: &T) -> JsResult<JsValue> {
    to_js(v).map_err(Thrown::from)
}

/// Replaces every secret in `text` with `[REDACTED:<rule>]`; returns the
/// redacted text and where each secret was (`{ rule, start, end }`, UTF-8 byte
/// offsets into the original).
#[wasm_bindgen(unchecked_return_type = "Redaction")]
pub fn redact(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> JsResult<JsValue> {
    let redaction = core_redact(&string(&text, "text")?);
    // The text goes back as a string of its own: through JSON it would be
    // escaped and parsed again, which costs more than redacting it.
    let out = js_sys::Object::new();
    js_sys::Reflect::set(&out, &"text".into(), &JsValue::from_str(&redaction.text))?;
    js_sys::Reflect::set(&out, &"findings".into(), &js(&redaction.findings)?)?;
    Ok(out.into())
}

/// Per-tool output JSON Schemas (draft 2020-12 unless `$schema` says
/// otherwise), validated with the `jsonschema` crate in the package's
/// separately loaded schema module.
#[wasm_bindgen]
pub struct SchemaRegistry {
    pub(crate) inner: Rc<RefCell<CoreRegistry>>,
}

#[wasm_bindgen]
impl SchemaRegistry {
    /// An empty registry. The first one loads the schema module (Node);
    /// in the web entry, `await initSchemas()` first, or this throws
    /// `NOT_INITIALIZED`.
    #[wasm_bindgen(constructor)]
    pub fn new() -> JsResult<SchemaRegistry> {
        let engine = JsSchemaEngine::load()?;
        Ok(SchemaRegistry {
            inner: Rc::new(RefCell::new(CoreRegistry::with_engine(Rc::new(engine)))),
        })
    }

    /// Registers (or replaces) `tool`'s output schema; an invalid schema
    /// throws `INVALID_SCHEMA`.
    pub fn register(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] tool: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Json")] schema: JsValue,
    ) -> JsResult<()> {
        let tool = string(&tool, "tool")?;
        let schema = js_to_json(&schema, "schema")?;
        self.inner
            .borrow_mut()
            .register(&tool, schema)
            .map_err(Thrown::from)
    }

    /// The schema registered for `tool`, or `undefined`.
    #[wasm_bindgen(unchecked_return_type = "Json | undefined")]
    pub fn get(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] tool: JsValue,
    ) -> JsResult<JsValue> {
        match self.inner.borrow().get(&string(&tool, "tool")?) {
            Some(schema) => js(schema),
            None => Ok(JsValue::UNDEFINED),
        }
    }

    /// Validates `data` against `tool`'s schema: `{ valid, errors }` (data,
    /// not an exception). Tools without a schema pass.
    #[wasm_bindgen(unchecked_return_type = "ValidationResult")]
    pub fn validate(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] tool: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Json")] data: JsValue,
    ) -> JsResult<JsValue> {
        let tool = string(&tool, "tool")?;
        let data = js_to_json(&data, "data")?;
        js(&self.inner.borrow().validate(&tool, &data))
    }

    /// Registers every `outputSchema` of an MCP `tools/list` result; returns
    /// the names registered.
    #[wasm_bindgen(js_name = autoDiscover)]
    pub fn auto_discover(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Json")] tools: JsValue,
    ) -> JsResult<Vec<String>> {
        let tools = js_to_json(&tools, "tools")?;
        self.inner
            .borrow_mut()
            .auto_discover(&tools)
            .map_err(Thrown::from)
    }

    /// Makes `document` available to `$ref`s as `uri` (never fetched).
    #[wasm_bindgen(js_name = addResource)]
    pub fn add_resource(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] uri: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Json")] document: JsValue,
    ) -> JsResult<()> {
        let uri = string(&uri, "uri")?;
        let document = js_to_json(&document, "document")?;
        self.inner
            .borrow_mut()
            .add_resource(&uri, document)
            .map_err(Thrown::from)
    }
}

/// Normalises tool outputs: parse, validate, redact, summarise.
#[wasm_bindgen]
pub struct PerceptionAligner {
    pub(crate) inner: Rc<CoreAligner>,
    registration: Registration,
}

/// The text of a raw output: strings as is, bytes as (lossy) UTF-8, anything
/// else serialised as JSON.
pub(crate) fn raw_text(raw: &JsValue) -> Result<String> {
    if let Some(s) = js_string(raw) {
        return Ok(s);
    }
    if raw.is_instance_of::<js_sys::ArrayBuffer>() || js_sys::ArrayBuffer::is_view(raw) {
        return Ok(String::from_utf8_lossy(&bytes(raw, "raw")?).into_owned());
    }
    if raw.is_undefined() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "raw output is undefined",
        ));
    }
    Ok(js_to_json(raw, "raw")?.to_string())
}

#[wasm_bindgen]
impl PerceptionAligner {
    /// An aligner validating against `registry` (shared: schemas registered
    /// later apply too).
    #[wasm_bindgen(constructor)]
    pub fn new(registry: &SchemaRegistry) -> PerceptionAligner {
        let inner = Rc::new(CoreAligner::new(registry.inner.clone()));
        let registration = registry::register(Rc::downgrade(&inner));
        PerceptionAligner {
            inner,
            registration,
        }
    }

    #[wasm_bindgen(getter = __nativeId, skip_typescript)]
    /// Registry id (internal).
    pub fn native_id(&self) -> u32 {
        self.registration.id()
    }

    /// Normalises a raw output (a string, bytes, or any JSON value):
    /// `{ valid, data, isJson, summaryConcise, summaryDetailed, redactedFields,
    /// validationErrors }`.
    #[wasm_bindgen(unchecked_return_type = "NormalizedOutput")]
    pub fn normalize(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] tool: JsValue,
        #[wasm_bindgen(unchecked_param_type = "string | Uint8Array | Json")] raw: JsValue,
    ) -> JsResult<JsValue> {
        let tool = string(&tool, "tool")?;
        let text = raw_text(&raw)?;
        js(&self.inner.normalize(&tool, &text))
    }
}
