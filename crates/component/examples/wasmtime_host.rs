//! A minimal wasmtime host for the context-compiler component: it provides a
//! key-value store, one tool and one bus handler, then records a turn (which
//! feeds the bus), calls the tool, compiles the context and drains the bus.
//!
//! ```sh
//! bash scripts/build-component.sh && cargo run --example wasmtime_host
//! ```

use std::collections::HashMap;

use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

wasmtime::component::bindgen!({ world: "context-compiler", path: "../../wit" });

use agent::context_compiler::tool_bridge::ToolFailure;
use exports::agent::context_compiler::bus::BusOptions;
use exports::agent::context_compiler::compiler::{HistorySelectorOptions, Processor};
use exports::agent::context_compiler::tools::CallOptions;

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
            "/../../target/wasm32-wasip2/release/context_compiler_component.wasm"
        )
        .into()
    });
    let engine = Engine::default();
    let component = Component::from_file(&engine, &path)?;
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    ContextCompiler::add_to_linker::<_, HasSelf<_>>(&mut linker, |h| h)?;
    let host = Host {
        wasi: WasiCtx::builder().build(),
        table: ResourceTable::new(),
        kv: HashMap::new(),
    };
    let mut store = Store::new(&engine, host);
    let cc = ContextCompiler::instantiate(&mut store, &component, &linker)?;

    let sessions = cc.agent_context_compiler_sessions().session();
    let session = sessions.call_constructor(&mut store, Some("demo"))?;
    let buses = cc.agent_context_compiler_bus().event_bus();
    let bus = buses
        .call_create(&mut store, BusOptions { max_queue: None })?
        .map_err(|e| wasmtime::Error::msg(e.message))?;
    buses.call_on(&mut store, bus, "message_received", "printer")?;
    buses
        .call_attach(&mut store, bus, session, "demo-agent", None)?
        .map_err(|e| wasmtime::Error::msg(e.message))?;
    sessions
        .call_record(
            &mut store,
            session,
            "user_input",
            r#""Why is the service slow?""#,
            None,
        )?
        .map_err(|e| wasmtime::Error::msg(e.message))?;

    let options = CallOptions {
        timeout_ms: Some(5_000),
        externalize_threshold: Some(1024),
    };
    let event = cc
        .agent_context_compiler_tools()
        .call_call_tool(
            &mut store,
            session,
            None,
            "read_log",
            r#"{"file":"app.log"}"#,
            options,
        )?
        .map_err(|e| wasmtime::Error::msg(e.message))?;
    println!("tool event: {}", &event[..event.len().min(160)]);

    let processors = [
        Processor::HistorySelector(HistorySelectorOptions {
            keep_first: 2,
            keep_last: 5,
        }),
        Processor::Compactor,
        Processor::ArtifactAttacher(1024),
    ];
    let compiled = cc
        .agent_context_compiler_compiler()
        .call_compile(
            &mut store,
            session,
            2_000,
            "You are an SRE assistant.",
            &processors,
            &[],
        )?
        .map_err(|e| wasmtime::Error::msg(e.message))?;
    println!("compiled: {} tokens (budget 2000)", compiled.token_count);
    println!("messages: {}", compiled.messages_json);
    println!("artifacts in the host kv: {}", store.data().kv.len());
    assert!(compiled.token_count <= 2_000);
    let failures = buses
        .call_drain(&mut store, bus)?
        .map_err(|e| wasmtime::Error::msg(e.message))?;
    assert!(failures.is_empty());
    session.resource_drop(&mut store)?;
    bus.resource_drop(&mut store)?;
    Ok(())
}
