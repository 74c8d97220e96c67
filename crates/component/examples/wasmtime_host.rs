//! A minimal wasmtime host for the context-compiler component (world
//! `context-compiler-runner`): it provides a key-value store, one tool, one
//! bus handler and a model (scripted here; a real host calls its provider
//! with the request it is given), then runs a turn: the component records
//! the input (which feeds the bus), compiles, calls the model, runs the tool
//! it asks for, calls the model again and records the answer.
//!
//! ```sh
//! bash scripts/build-component.sh && cargo run --example wasmtime_host
//! ```

use std::collections::HashMap;

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

wasmtime::component::bindgen!({ world: "context-compiler-runner", path: "../../wit" });

use agent::context_compiler::tool_bridge::ToolFailure;
use exports::agent::context_compiler::bus::{AttachOptions, BusOptions};
use exports::agent::context_compiler::compiler::{MessageFormat, ToolSpec};
use exports::agent::context_compiler::runner::RunOptions;

/// The host's state: WASI, the artifact store, the tools.
struct Host {
    wasi: WasiCtx,
    table: ResourceTable,
    kv: HashMap<String, Vec<u8>>,
}

impl WasiView for Host {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl agent::context_compiler::artifact_kv::Host for Host {
    fn get(&mut self, key: String) -> Result<Option<Vec<u8>>, String> {
        Ok(self.kv.get(&key).cloned())
    }
    fn put(&mut self, key: String, value: Vec<u8>) -> Result<(), String> {
        self.kv.insert(key, value);
        Ok(())
    }
    fn delete(&mut self, key: String) -> Result<(), String> {
        self.kv.remove(&key);
        Ok(())
    }
    fn list_keys(&mut self, prefix: String) -> Result<Option<Vec<String>>, String> {
        Ok(Some(
            self.kv
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect(),
        ))
    }
    /// One instance owns this KV, so comparing and writing is atomic; a
    /// KV shared by several instances or processes needs a real
    /// compare-and-set here (see `put-if` in wit/world.wit).
    fn put_if(
        &mut self,
        key: String,
        value: Vec<u8>,
        expected: Option<Vec<u8>>,
    ) -> Result<bool, String> {
        if self.kv.get(&key) != expected.as_ref() {
            return Ok(false);
        }
        self.kv.insert(key, value);
        Ok(true)
    }
}

/// This host has no database: only a `sql` selection calls these.
impl agent::context_compiler::sql::Host for Host {
    fn query(
        &mut self,
        _sql: String,
        _params: Vec<agent::context_compiler::sql::SqlValue>,
    ) -> Result<Vec<Vec<agent::context_compiler::sql::SqlValue>>, String> {
        Err("no database in this host".into())
    }
    fn batch(
        &mut self,
        _statements: Vec<agent::context_compiler::sql::Statement>,
    ) -> Result<(), String> {
        Err("no database in this host".into())
    }
}

impl agent::context_compiler::tool_bridge::Host for Host {
    fn call_tool(
        &mut self,
        name: String,
        args: String,
        _timeout_ms: u64,
    ) -> Result<String, ToolFailure> {
        match name.as_str() {
            "read_log" => Ok(format!(
                "{args}\n{}",
                "INFO request served in 12 ms\n".repeat(200)
            )),
            other => Err(ToolFailure::Failed(format!("unknown tool {other}"))),
        }
    }
}

/// The model: asks for the log first, then answers from what the request
/// holds. A real host sends `request_json` (`{ messages, tools, toolChoice? }`
/// in the run's format) to its provider and returns the provider's response.
impl agent::context_compiler::model::Host for Host {
    fn respond(&mut self, request_json: String, step: u32) -> Result<String, String> {
        let request: serde_json::Value =
            serde_json::from_str(&request_json).map_err(|e| e.to_string())?;
        let messages = request["messages"].as_array().map_or(0, Vec::len);
        println!("model step {step}: {messages} messages");
        Ok(match step {
            0 => serde_json::json!({
                "content": null,
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "read_log", "arguments": "{\"file\":\"app.log\"}"}}],
            }),
            _ => serde_json::json!({"content": "Requests are served in 12 ms: the service is not slow."}),
        }
        .to_string())
    }
}

/// The guard: lets every input through (the run does not ask it here).
impl agent::context_compiler::guard::Host for Host {
    fn evaluate(&mut self, _input: String) -> Result<String, String> {
        Ok("true".into())
    }
}

/// The approval policy: no call waits here (the run does not ask it).
impl agent::context_compiler::approval::Host for Host {
    fn needs_approval(&mut self, _call_json: String) -> Result<bool, String> {
        Ok(false)
    }
}

/// No embedder: the runs here recall lexically.
impl agent::context_compiler::embedder::Host for Host {
    fn embed(
        &mut self,
        _texts: Vec<String>,
        _role: agent::context_compiler::embedder::EmbedRole,
        _timeout_ms: u64,
    ) -> Result<Vec<Vec<f32>>, String> {
        Err("no embedder in this host".into())
    }
}

/// No text model: compaction summarises with its built-in digest.
impl agent::context_compiler::llm::Host for Host {
    fn complete(&mut self, _prompt: String, _max_tokens: u64) -> Result<String, String> {
        Err("no text model in this host".into())
    }
}

/// The bus handler: prints what it is given.
impl agent::context_compiler::bus_host::Host for Host {
    fn handle(&mut self, handler: String, event_json: String) -> Result<(), String> {
        println!(
            "bus -> {handler}: {}",
            &event_json[..event_json.len().min(120)]
        );
        Ok(())
    }
}

fn main() -> wasmtime::Result<()> {
    let path = std::env::var("COMPONENT_WASM").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/wasm32-wasip2/release/context_compiler_runner.wasm"
        )
        .into()
    });
    let engine = Engine::default();
    let component = Component::from_file(&engine, &path)?;
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    ContextCompilerRunner::add_to_linker::<_, HasSelf<_>>(&mut linker, |h| h)?;
    let host = Host {
        wasi: WasiCtx::builder().build(),
        table: ResourceTable::new(),
        kv: HashMap::new(),
    };
    let mut store = Store::new(&engine, host);
    let cc = ContextCompilerRunner::instantiate(&mut store, &component, &linker)?;
    let failed = |e: exports::agent::context_compiler::types::Error| {
        wasmtime::Error::msg(format!("{:?}: {}", e.code, e.message))
    };

    let sessions = cc.agent_context_compiler_sessions().session();
    let session = sessions.call_constructor(&mut store, Some("demo"))?;
    let buses = cc.agent_context_compiler_bus().event_bus();
    let bus = buses
        .call_create(&mut store, BusOptions { max_queue: None })?
        .map_err(failed)?;
    buses.call_on(&mut store, bus, "message_received", "printer")?;
    let who = AttachOptions {
        agent_id: "demo-agent".into(),
        user_id: None,
        user_display_name: None,
        episode_id: None,
    };
    buses
        .call_attach(&mut store, bus, session, &who)?
        .map_err(failed)?;

    let options = RunOptions {
        budget: 2_000,
        system_prompt: Some("You are an SRE assistant.".into()),
        policies: Vec::new(),
        tool_definitions_json: None,
        user_preferences_json: None,
        goal: None,
        state_digest_json: None,
        task_state: None,
        format: Some(MessageFormat::Openai),
        model_name: None,
        reserve_output: Some(200),
        usage_margin: None,
        tools: vec![ToolSpec {
            name: "read_log".into(),
            description: Some("Reads a log file".into()),
            parameters_json: Some(
                r#"{"type":"object","properties":{"file":{"type":"string"}}}"#.into(),
            ),
            timeout_ms: Some(5_000),
            needs_approval: None,
        }],
        tool_choice: None,
        max_steps: None,
        tool_timeout_ms: None,
        look_back_tools: None,
        guard: false,
        memory: Vec::new(),
        compiler: None,
        artifact_store: true,
        externalize_threshold: None,
        needs_approval: false,
        approvals: Vec::new(),
    };
    let result = cc
        .agent_context_compiler_runner()
        .call_run(
            &mut store,
            "Why is the service slow?",
            session,
            None,
            &options,
        )?
        .map_err(failed)?;
    let result: serde_json::Value = serde_json::from_str(&result)?;
    println!("answer: {}", result["result"]);
    println!(
        "{} steps, {} tokens of 2000, stopped: {}",
        result["steps"].as_array().map_or(0, Vec::len),
        result["budgetUsed"],
        result["stopReason"]
    );
    println!("artifacts in the host kv: {}", store.data().kv.len());
    assert_eq!(result["stopReason"], "answered");
    assert!(result["budgetUsed"].as_u64().is_some_and(|t| t <= 2_000));
    let failures = buses.call_drain(&mut store, bus)?.map_err(failed)?;
    assert!(failures.is_empty());
    session.resource_drop(&mut store)?;
    bus.resource_drop(&mut store)?;
    Ok(())
}
