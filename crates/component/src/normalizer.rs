//! The `normalizer` interface: the schema registry resource and redaction.

use std::cell::RefCell;
use std::rc::Rc;

use super::bindings::exports::agent::context_compiler::normalizer::{
    Error, Guest, GuestSchemaRegistry,
};
use super::{parse_json, to_json, wit_error, Component};
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::normalize::redact::redact;
use context_compiler::normalize::schemas::SchemaRegistry;

/// A schema registry resource, shared with tool calls.
pub(crate) struct RegistryResource {
    pub(crate) inner: Rc<RefCell<SchemaRegistry>>,
}

impl Guest for Component {
    type SchemaRegistry = RegistryResource;

    fn redact(text: String) -> String {
        to_json(&redact(&text)).unwrap_or_default()
    }
}

impl GuestSchemaRegistry for RegistryResource {
    fn new() -> Self {
        RegistryResource {
            inner: Rc::new(RefCell::new(SchemaRegistry::new())),
        }
    }

    fn register(&self, tool: String, schema_json: String) -> Result<(), Error> {
        let schema = parse_json(&schema_json, "schema-json")?;
        self.inner
            .borrow_mut()
            .register(&tool, schema)
            .map_err(wit_error)
    }

    fn add_resource(&self, uri: String, document_json: String) -> Result<(), Error> {
        let document = parse_json(&document_json, "document-json")?;
        self.inner
            .borrow_mut()
            .add_resource(&uri, document)
            .map_err(wit_error)
    }

    fn normalize(&self, tool: String, output: String) -> String {
        let aligner = PerceptionAligner::new(self.inner.clone());
        to_json(&aligner.normalize(&tool, &output)).unwrap_or_default()
    }
}
