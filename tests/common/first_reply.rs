//! A model for runner tests that answers its first call with a provider's
//! own response and every later one with text, keeping each request it was
//! sent in one format.

use std::cell::RefCell;

use async_trait::async_trait;
use context_compiler::runner::{Model, ModelReply, ModelRequest};
use context_compiler::{ProviderFormat, Result};
use serde_json::Value;

/// Answers with `first` (a provider's own response), then with text; keeps
/// each request in `format`.
pub struct FirstReply {
    pub first: Value,
    pub format: ProviderFormat,
    pub seen: RefCell<Vec<Value>>,
}

impl FirstReply {
    /// Answers `first` first; keeps requests in `format`.
    pub fn new(first: Value, format: ProviderFormat) -> FirstReply {
        FirstReply {
            first,
            format,
            seen: RefCell::new(Vec::new()),
        }
    }
}

#[async_trait(?Send)]
impl Model for FirstReply {
    async fn respond(&self, request: ModelRequest<'_>) -> Result<ModelReply> {
        self.seen
            .borrow_mut()
            .push(request.context.to_provider_messages(self.format));
        if request.step == 0 {
            ModelReply::from_json(&self.first)
        } else {
            Ok(ModelReply::text("The disk is full."))
        }
    }
}
