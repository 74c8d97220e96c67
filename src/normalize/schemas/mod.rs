//! Per-tool output JSON Schemas.
//!
//! Draft 2020-12 (MCP's default dialect) is used unless a schema's `$schema`
//! names another draft (draft 7 is the other one tested). References resolve
//! only against documents added with [`SchemaRegistry::add_resource`]: nothing
//! is ever fetched from a network.
//!
//! The registry compiles schemas through a [`SchemaEngine`]: natively and in
//! the component that is [`JsonSchemaEngine`] (the `jsonschema` crate,
//! feature `jsonschema`); the npm package keeps it out of its main module and
//! loads it as a second module the first time a registry is made.

#[cfg(feature = "jsonschema")]
mod jsonschema_engine;

use std::collections::HashMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};

#[cfg(feature = "jsonschema")]
pub use jsonschema_engine::JsonSchemaEngine;

/// A JSON Schema dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dialect {
    /// Draft 4.
    Draft4,
    /// Draft 6.
    Draft6,
    /// Draft 7.
    Draft7,
    /// Draft 2019-09.
    Draft201909,
    /// Draft 2020-12 (the default, as in MCP).
    Draft202012,
}

impl Dialect {
    /// The dialect a `$schema` URI names, if it names a known one.
    fn from_uri(uri: &str) -> Option<Dialect> {
        let known = [
            ("draft-04", Dialect::Draft4),
            ("draft-06", Dialect::Draft6),
            ("draft-07", Dialect::Draft7),
            ("2019-09", Dialect::Draft201909),
            ("2020-12", Dialect::Draft202012),
        ];
        known.iter().find(|(k, _)| uri.contains(k)).map(|(_, d)| *d)
    }

    /// The dialect's stable name (`draft4` ... `draft2020-12`), as it crosses
    /// to a separately loaded engine.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Draft4 => "draft4",
            Dialect::Draft6 => "draft6",
            Dialect::Draft7 => "draft7",
            Dialect::Draft201909 => "draft2019-09",
            Dialect::Draft202012 => "draft2020-12",
        }
    }

    /// The dialect named `name` (see [`Dialect::as_str`]).
    pub fn parse(name: &str) -> Option<Dialect> {
        [
            Dialect::Draft4,
            Dialect::Draft6,
            Dialect::Draft7,
            Dialect::Draft201909,
            Dialect::Draft202012,
        ]
        .into_iter()
        .find(|d| d.as_str() == name)
    }
}

/// One reason an instance failed validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct SchemaError {
    /// JSON Pointer to the failing part of the instance (`""` for the root).
    pub instance_path: String,
    /// JSON Pointer to the failing keyword in the schema.
    pub schema_path: String,
    /// What is wrong.
    pub message: String,
}

/// The result of validating an instance: data, not an exception.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ValidationResult {
    /// Whether the instance is valid (or no schema is registered for the tool).
    pub valid: bool,
    /// Every error, empty when valid.
    pub errors: Vec<SchemaError>,
}

/// A schema compiled by a [`SchemaEngine`].
pub trait CompiledSchema {
    /// Every way `data` fails the schema (none: valid).
    fn validate(&self, data: &Value) -> ValidationResult;
}

/// What compiles JSON Schemas for a [`SchemaRegistry`].
pub trait SchemaEngine {
    /// Checks that `document` can be a `$ref` target named `uri`; an
    /// `INVALID_SCHEMA` error if not.
    fn check_resource(&self, uri: &str, document: &Value) -> Result<()>;

    /// Compiles `schema` in `dialect` (unless its `$schema` says otherwise),
    /// its references resolved against `resources` only; an
    /// `INVALID_SCHEMA` error if it does not compile.
    fn compile(
        &self,
        schema: &Value,
        dialect: Dialect,
        resources: &[(String, Value)],
    ) -> Result<Box<dyn CompiledSchema>>;
}

struct Registered {
    schema: Value,
    compiled: Box<dyn CompiledSchema>,
}

/// Registry of per-tool output JSON Schemas.
pub struct SchemaRegistry {
    schemas: HashMap<String, Registered>,
    resources: Vec<(String, Value)>,
    default_dialect: Dialect,
    engine: Option<Rc<dyn SchemaEngine>>,
}

impl Default for SchemaRegistry {
    /// An empty registry on the built-in engine (with feature `jsonschema`;
    /// without it, one that validates every tool as having no schema and
    /// refuses registrations).
    fn default() -> Self {
        #[cfg(feature = "jsonschema")]
        let engine: Option<Rc<dyn SchemaEngine>> = Some(Rc::new(JsonSchemaEngine));
        #[cfg(not(feature = "jsonschema"))]
        let engine: Option<Rc<dyn SchemaEngine>> = None;
        SchemaRegistry {
            schemas: HashMap::new(),
            resources: Vec::new(),
            default_dialect: Dialect::Draft202012,
            engine,
        }
    }
}

/// An `INVALID_SCHEMA` error saying `what`: what a [`SchemaEngine`] returns
/// for a schema it cannot compile (engines outside the crate use it too).
pub fn invalid(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::InvalidSchema, what.to_string())
}

impl SchemaRegistry {
    /// An empty registry on the built-in `jsonschema` engine whose schemas
    /// default to draft 2020-12.
    #[cfg(feature = "jsonschema")]
    pub fn new() -> Self {
        SchemaRegistry::default()
    }

    /// An empty registry compiling with `engine`, whose schemas default to
    /// draft 2020-12.
    pub fn with_engine(engine: Rc<dyn SchemaEngine>) -> Self {
        SchemaRegistry {
            engine: Some(engine),
            ..SchemaRegistry::default()
        }
    }

    /// An empty registry on the built-in `jsonschema` engine whose schemas
    /// default to `dialect` when they have no `$schema`.
    #[cfg(feature = "jsonschema")]
    pub fn with_default_dialect(dialect: Dialect) -> Self {
        SchemaRegistry {
            default_dialect: dialect,
            ..SchemaRegistry::default()
        }
    }

    fn engine(&self) -> Result<&dyn SchemaEngine> {
        self.engine
            .as_deref()
            .ok_or_else(|| invalid("this build has no JSON Schema engine"))
    }

    /// Makes `document` available to `$ref`s as `uri` (never fetched from a
    /// network). Applies to schemas registered afterwards.
    pub fn add_resource(&mut self, uri: &str, document: Value) -> Result<()> {
        self.engine()?.check_resource(uri, &document)?;
        self.resources.retain(|(u, _)| u != uri);
        self.resources.push((uri.to_string(), document));
        Ok(())
    }

    /// Compiles `schema` against the registry's resources.
    pub fn compile(&self, schema: &Value) -> Result<Box<dyn CompiledSchema>> {
        let dialect = schema
            .get("$schema")
            .and_then(Value::as_str)
            .and_then(Dialect::from_uri)
            .unwrap_or(self.default_dialect);
        self.engine()?.compile(schema, dialect, &self.resources)
    }

    /// Registers (or replaces) the output schema of `tool`; an invalid schema
    /// is rejected here, with an `INVALID_SCHEMA` error.
    pub fn register(&mut self, tool: &str, schema: Value) -> Result<()> {
        let compiled = self
            .compile(&schema)
            .map_err(|e| e.context(format!("tool '{tool}'")))?;
        self.schemas
            .insert(tool.to_string(), Registered { schema, compiled });
        Ok(())
    }

    /// The schema registered for `tool`.
    pub fn get(&self, tool: &str) -> Option<&Value> {
        self.schemas.get(tool).map(|r| &r.schema)
    }

    /// Validates `data` against `tool`'s schema; tools without one pass.
    pub fn validate(&self, tool: &str, data: &Value) -> ValidationResult {
        match self.schemas.get(tool) {
            None => ValidationResult {
                valid: true,
                errors: Vec::new(),
            },
            Some(r) => r.compiled.validate(data),
        }
    }

    /// Registers the `outputSchema` of every tool in an MCP `tools/list`
    /// result (`{"tools": [...]}` or the array itself). Returns the names
    /// registered; a tool whose schema is invalid fails the whole call and
    /// registers nothing.
    pub fn auto_discover(&mut self, tools_list: &Value) -> Result<Vec<String>> {
        let tools = tools_list
            .get("tools")
            .unwrap_or(tools_list)
            .as_array()
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::InvalidArgument,
                    "expected a tools/list result: {\"tools\": [...]}",
                )
            })?;
        let mut compiled = Vec::new();
        for tool in tools {
            let (Some(name), Some(schema)) = (
                tool.get("name").and_then(Value::as_str),
                tool.get("outputSchema"),
            ) else {
                continue;
            };
            let validator = self
                .compile(schema)
                .map_err(|e| e.context(format!("tool '{name}'")))?;
            compiled.push((
                name.to_string(),
                Registered {
                    schema: schema.clone(),
                    compiled: validator,
                },
            ));
        }
        let names = compiled.iter().map(|(n, _)| n.clone()).collect();
        self.schemas.extend(compiled);
        Ok(names)
    }
}

#[cfg(all(test, feature = "jsonschema"))]
mod tests {
    use super::*;
    use serde_json::json;

    fn calc() -> Value {
        json!({"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]})
    }

    // The schema tests, with real JSON Schema.
    #[test]
    fn register_get_validate() {
        let mut reg = SchemaRegistry::new();
        reg.register("calc", calc()).unwrap();
        assert_eq!(reg.get("calc"), Some(&calc()));
        assert!(reg.validate("calc", &json!({"result": 42})).valid);
        let r = reg.validate("calc", &json!({"result": "x"}));
        assert!(!r.valid);
        assert_eq!(r.errors[0].instance_path, "/result");
        let r = reg.validate("calc", &json!({"wrong": "field"}));
        assert!(!r.valid);
        assert!(r.errors[0].message.contains("result"));
        assert!(
            reg.validate("unknown_tool", &json!(1)).valid,
            "unregistered tools pass"
        );
    }

    #[test]
    fn invalid_schemas_are_rejected_at_register() {
        let mut reg = SchemaRegistry::new();
        let err = reg
            .register("bad", json!({"type": "no-such-type"}))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidSchema);
        assert!(err.message().contains("'bad'"));
        let err = reg
            .register("bad", json!({"$ref": "http://example.com/missing.json"}))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidSchema);
        assert!(reg.get("bad").is_none());
    }

    #[test]
    fn draft7_is_honoured_and_2020_12_is_the_default() {
        let mut reg = SchemaRegistry::new();
        // `items` as an array is tuple validation in draft 7 only.
        reg.register("t7", json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]})).unwrap();
        assert!(!reg.validate("t7", &json!([1])).valid);
        reg.register("t2020", json!({"prefixItems": [{"type": "string"}]}))
            .unwrap();
        assert!(!reg.validate("t2020", &json!([1])).valid);
        let mut draft7 = SchemaRegistry::with_default_dialect(Dialect::Draft7);
        draft7
            .register("t", json!({"items": [{"type": "string"}]}))
            .unwrap();
        assert!(!draft7.validate("t", &json!([1])).valid);
    }

    #[test]
    fn dialect_names_round_trip() {
        for d in [
            Dialect::Draft4,
            Dialect::Draft6,
            Dialect::Draft7,
            Dialect::Draft201909,
            Dialect::Draft202012,
        ] {
            assert_eq!(Dialect::parse(d.as_str()), Some(d));
        }
        assert_eq!(Dialect::parse("draft3"), None);
    }

    #[test]
    fn resources_resolve_refs_without_a_network() {
        let mut reg = SchemaRegistry::new();
        reg.add_resource("http://localhost:1234/int.json", json!({"type": "integer"}))
            .unwrap();
        reg.register("n", json!({"$ref": "http://localhost:1234/int.json"}))
            .unwrap();
        assert!(reg.validate("n", &json!(3)).valid);
        assert!(!reg.validate("n", &json!("3")).valid);
    }

    #[test]
    fn auto_discover_from_mcp_tools_list() {
        let mut reg = SchemaRegistry::new();
        let names = reg
            .auto_discover(&json!({"tools": [
                {"name": "calc", "inputSchema": {"type": "object"}, "outputSchema": calc()},
                {"name": "echo", "inputSchema": {"type": "object"}}
            ]}))
            .unwrap();
        assert_eq!(names, ["calc"]);
        assert!(!reg.validate("calc", &json!({})).valid);
        let err = reg
            .auto_discover(&json!({"tools": [{"name": "x", "outputSchema": {"type": 5}}]}))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidSchema);
        assert!(reg.get("x").is_none());
    }
}
