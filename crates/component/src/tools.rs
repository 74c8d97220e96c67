//! The `tools` interface: tool calls through the host's bridge.

use std::rc::Rc;

use super::artifact_store::selected_store;
use super::bindings::exports::agent::context_compiler::normalizer::SchemaRegistryBorrow;
use super::bindings::exports::agent::context_compiler::sessions::SessionBorrow;
use super::bindings::exports::agent::context_compiler::tools::{CallOptions, Error, Guest};
use super::compiler::json_option;
use super::exec::block_on;
use super::host::HostBridge;
use super::normalizer::RegistryResource;
use super::sessions::SessionResource;
use super::{parse_json, to_json, Component};
use context_compiler::clock::SystemClock;
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::tools::{CallNotes, ToolInterruptHandler, ToolInterruptOptions};

impl Guest for Component {
    fn call_tool(
        target: SessionBorrow<'_>,
        schemas: Option<SchemaRegistryBorrow<'_>>,
        name: String,
        arguments_json: String,
        options: CallOptions,
    ) -> Result<String, Error> {
        let arguments = parse_json(&arguments_json, "arguments-json")?;
        let notes = CallNotes {
            call_id: options.call_id,
            thought_signature: options.thought_signature,
            reasoning: json_option(options.reasoning_json, "reasoning-json")?,
        }
        .into_map()?;
        let normalizer = match schemas {
            Some(r) => PerceptionAligner::new(r.get::<RegistryResource>().inner.clone()),
            None => PerceptionAligner::default(),
        };
        let artifact_store = match options.externalize_threshold {
            Some(_) => Some(selected_store()?),
            None => None,
        };
        let handler = ToolInterruptHandler::new(
            Rc::new(HostBridge),
            normalizer,
            target.get::<SessionResource>().inner.clone(),
            Rc::new(SystemClock),
            ToolInterruptOptions {
                artifact_store,
                externalize_threshold: options
                    .externalize_threshold
                    .map_or(usize::MAX, |t| usize::try_from(t).unwrap_or(usize::MAX)),
            },
        );
        let timeout = options.timeout_ms.map(|t| t as f64);
        let event =
            block_on(handler.call_noted(&name, arguments, timeout, None, notes)).and_then(|r| r)?;
        to_json(&event)
    }
}
