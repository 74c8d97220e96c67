//! The [`SchemaEngine`] on the `jsonschema` crate (feature `jsonschema`):
//! built into native builds and the component, and into the npm package's
//! separately loaded schema module (`crates/schema-wasm`).

use jsonschema::{Draft, Registry, Resource, Validator};
use serde_json::Value;

use super::{invalid, CompiledSchema, Dialect, SchemaEngine, SchemaError, ValidationResult};
use crate::error::Result;

/// Compiles schemas with the `jsonschema` crate, offline: references
/// resolve only against the resources given.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonSchemaEngine;

fn draft(dialect: Dialect) -> Draft {
    match dialect {
        Dialect::Draft4 => Draft::Draft4,
        Dialect::Draft6 => Draft::Draft6,
        Dialect::Draft7 => Draft::Draft7,
        Dialect::Draft201909 => Draft::Draft201909,
        Dialect::Draft202012 => Draft::Draft202012,
    }
}

impl SchemaEngine for JsonSchemaEngine {
    fn check_resource(&self, uri: &str, document: &Value) -> Result<()> {
        Registry::new()
            .add(uri, Resource::from_contents(document.clone()))
            .and_then(|b| b.prepare())
            .map(|_| ())
            .map_err(|e| invalid(format!("resource {uri}: {e}")))
    }

    fn compile(
        &self,
        schema: &Value,
        dialect: Dialect,
        resources: &[(String, Value)],
    ) -> Result<Box<dyn CompiledSchema>> {
        let mut builder = Registry::new();
        for (uri, doc) in resources {
            builder = builder
                .add(uri, Resource::from_contents(doc.clone()))
                .map_err(|e| invalid(format!("resource {uri}: {e}")))?;
        }
        let registry = builder
            .prepare()
            .map_err(|e| invalid(format!("resources: {e}")))?;
        let validator = jsonschema::options()
            .with_draft(draft(dialect))
            .offline()
            .with_registry(&registry)
            .build(schema)
            .map_err(|e| invalid(format!("invalid schema: {e}")))?;
        Ok(Box::new(Compiled(validator)))
    }
}

struct Compiled(Validator);

impl CompiledSchema for Compiled {
    fn validate(&self, data: &Value) -> ValidationResult {
        let errors: Vec<SchemaError> = self
            .0
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
}
