//! Per-tool output JSON Schemas, validated with the `jsonschema` crate.
//!
//! Draft 2020-12 (MCP's default dialect) is used unless a schema's `$schema`
//! names another draft (draft 7 is the other one tested). References resolve
//! only against documents added with [`SchemaRegistry::add_resource`]: nothing
//! is ever fetched from a network.

use std::collections::HashMap;

use jsonschema::{Draft, Registry, Resource, Validator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};

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
    fn draft(self) -> Draft {
        match self {
            Dialect::Draft4 => Draft::Draft4,
            Dialect::Draft6 => Draft::Draft6,
            Dialect::Draft7 => Draft::Draft7,
            Dialect::Draft201909 => Draft::Draft201909,
            Dialect::Draft202012 => Draft::Draft202012,
        }
    }

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
}

/// One reason an instance failed validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
pub struct ValidationResult {
    /// Whether the instance is valid (or no schema is registered for the tool).
    pub valid: bool,
    /// Every error, empty when valid.
    pub errors: Vec<SchemaError>,
}

struct Registered {
    schema: Value,
    validator: Validator,
}

/// Registry of per-tool output JSON Schemas.
pub struct SchemaRegistry {
    schemas: HashMap<String, Registered>,
    resources: Vec<(String, Value)>,
    default_dialect: Dialect,
}

impl Default for SchemaRegistry {
    fn default() -> Self {
        SchemaRegistry::new()
    }
}

fn invalid(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::InvalidSchema, what.to_string())
}

impl SchemaRegistry {
    /// An empty registry whose schemas default to draft 2020-12.
    pub fn new() -> Self {
        SchemaRegistry::with_default_dialect(Dialect::Draft202012)
    }

    /// An empty registry whose schemas default to `dialect` when they have no `$schema`.
    pub fn with_default_dialect(dialect: Dialect) -> Self {
        SchemaRegistry {
            schemas: HashMap::new(),
            resources: Vec::new(),
            default_dialect: dialect,
        }
    }

    /// Makes `document` available to `$ref`s as `uri` (never fetched from a
    /// network). Applies to schemas registered afterwards.
    pub fn add_resource(&mut self, uri: &str, document: Value) -> Result<()> {
        Registry::new()
            .add(uri, Resource::from_contents(document.clone()))
            .and_then(|b| b.prepare())
            .map_err(|e| invalid(format!("resource {uri}: {e}")))?;
        self.resources.retain(|(u, _)| u != uri);
        self.resources.push((uri.to_string(), document));
        Ok(())
    }

    /// Compiles `schema` against the registry's resources.
    pub fn compile(&self, schema: &Value) -> Result<Validator> {
        let dialect = schema
            .get("$schema")
            .and_then(Value::as_str)
            .and_then(Dialect::from_uri)
            .unwrap_or(self.default_dialect);
        let mut builder = Registry::new();
        for (uri, doc) in &self.resources {
            builder = builder
                .add(uri, Resource::from_contents(doc.clone()))
                .map_err(|e| invalid(format!("resource {uri}: {e}")))?;
        }
        let registry = builder
            .prepare()
            .map_err(|e| invalid(format!("resources: {e}")))?;
        jsonschema::options()
            .with_draft(dialect.draft())
            .offline()
            .with_registry(&registry)
            .build(schema)
            .map_err(|e| invalid(format!("invalid schema: {e}")))
    }

    /// Registers (or replaces) the output schema of `tool`; an invalid schema
    /// is rejected here, with an `INVALID_SCHEMA` error.
    pub fn register(&mut self, tool: &str, schema: Value) -> Result<()> {
        let validator = self
            .compile(&schema)
            .map_err(|e| e.context(format!("tool '{tool}'")))?;
        self.schemas
            .insert(tool.to_string(), Registered { schema, validator });
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
            Some(r) => validate_with(&r.validator, data),
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
                    validator,
                },
            ));
        }
        let names = compiled.iter().map(|(n, _)| n.clone()).collect();
        self.schemas.extend(compiled);
        Ok(names)
    }
}

/// Validates `data` with a compiled validator.
pub fn validate_with(validator: &Validator, data: &Value) -> ValidationResult {
    let errors: Vec<SchemaError> = validator
        .iter_errors(data)
        .map(|e| SchemaError {
            instance_path: e.instance_path().as_str().to_string(),
            schema_path: e.schema_path().as_str().to_string(),
            message: e.to_string(),
        })
        .collect();
    ValidationResult {
        valid: errors.is_empty(),
        errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calc() -> Value {
        json!({"type": "object", "properties": {"result": {"type": "number"}}, "required": ["result"]})
    }

    // The seed's schema tests, with real JSON Schema.
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
