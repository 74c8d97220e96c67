//! The WebAssembly component in a real wasmtime host: the host implements the
//! imports (an in-memory KV the test inspects, a tool bridge with a slow and a
//! failing tool), loads the built component and checks that it gives what the
//! native core gives: the golden fixtures' compiled messages, the same tool
//! events and the same normalised output. Bad input yields the error result
//! and leaves the instance usable.
//!
//! The component is built by `scripts/build-component.sh` (run by `npm test`
//! before `cargo test`); `COMPONENT_WASM` overrides its path.

#[path = "../../../tests/common/mod.rs"]
mod common;
#[path = "component_host/runner.rs"]
mod runner;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use common::golden::{compile_options, export_doc, fixtures, limit};
use context_compiler::normalize::aligner::PerceptionAligner;
use context_compiler::normalize::schemas::SchemaRegistry;
use context_compiler::WorkingContext;
use serde_json::{json, Value};
use wasmtime::component::{Component, HasSelf, Linker, ResourceAny, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

wasmtime::component::bindgen!({
    world: "context-compiler",
    path: "../../wit",
});

use agent::context_compiler::tool_bridge::ToolFailure;
use exports::agent::context_compiler::artifact_store::{
    AttachOptions as AttachMediaOptions, Backend, BackendOptions, SqlDialect, SqlOptions,
    StoreOptions,
};
use exports::agent::context_compiler::bus::AttachOptions;
use exports::agent::context_compiler::compiler::{
    ArtifactAttacherOptions, CompactorOptions, CompileOptions, FormatOptions, HistoryRecallOptions,
    HistorySelectorOptions, Layout, Memory, MemoryPreloaderOptions, MessageFormat, Processor,
    ToolSpec,
};
use exports::agent::context_compiler::context_window::CompactionLevel;
use exports::agent::context_compiler::session_store::SyncOptions;
use exports::agent::context_compiler::sessions::UsageOptions;
use exports::agent::context_compiler::tools::CallOptions;
use exports::agent::context_compiler::types::{Error as WitError, ErrorCode};

/// A KV several hosts (instances on several threads) may share.
pub(crate) type SharedKv = Arc<Mutex<BTreeMap<String, Vec<u8>>>>;

/// What the host gives the component: WASI, a KV, tools.
pub(crate) struct Host {
    wasi: WasiCtx,
    table: ResourceTable,
    kv: SharedKv,
    kv_fails: bool,
    tool_calls: Vec<(String, String, u64)>,
    bus_calls: Vec<(String, Value)>,
    /// The embedder's batches: (texts, timeout).
    embed_calls: Vec<(usize, agent::context_compiler::embedder::EmbedRole, u64)>,
    /// The text model's calls: their token limits.
    llm_calls: Vec<u64>,
    /// The model's scripted answers, one per call (see `runner`).
    replies: std::collections::VecDeque<Result<String, String>>,
    /// The requests the model got, with their steps.
    requests: Vec<(Value, u32)>,
    /// The guard's answer and the inputs it was asked about.
    guard_reply: Result<String, String>,
    guarded: Vec<String>,
}

impl WasiView for Host {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl Host {
    /// A host with `wasi` over `kv`, nothing called yet, a guard letting
    /// everything through and no model answers scripted.
    fn new(wasi: WasiCtx, kv: SharedKv) -> Host {
        Host {
            wasi,
            table: ResourceTable::new(),
            kv,
            kv_fails: false,
            tool_calls: Vec::new(),
            bus_calls: Vec::new(),
            embed_calls: Vec::new(),
            llm_calls: Vec::new(),
            replies: Default::default(),
            requests: Vec::new(),
            guard_reply: Ok("true".into()),
            guarded: Vec::new(),
        }
    }

    /// The KV, locked.
    fn kv(&self) -> MutexGuard<'_, BTreeMap<String, Vec<u8>>> {
        self.kv.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl agent::context_compiler::artifact_kv::Host for Host {
    fn get(&mut self, key: String) -> Result<Option<Vec<u8>>, String> {
        if self.kv_fails {
            return Err("kv offline".into());
        }
        Ok(self.kv().get(&key).cloned())
    }
    fn put(&mut self, key: String, value: Vec<u8>) -> Result<(), String> {
        if self.kv_fails {
            return Err("kv offline".into());
        }
        self.kv().insert(key, value);
        Ok(())
    }
    fn delete(&mut self, key: String) -> Result<(), String> {
        self.kv().remove(&key);
        Ok(())
    }
    fn list_keys(&mut self, prefix: String) -> Result<Option<Vec<String>>, String> {
        Ok(Some(
            self.kv()
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect(),
        ))
    }
    /// The compare and the write under the one lock every instance shares:
    /// atomic against them all.
    fn put_if(
        &mut self,
        key: String,
        value: Vec<u8>,
        expected: Option<Vec<u8>>,
    ) -> Result<bool, String> {
        if self.kv_fails {
            return Err("kv offline".into());
        }
        let mut kv = self.kv();
        if kv.get(&key) != expected.as_ref() {
            return Ok(false);
        }
        kv.insert(key, value);
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

/// The tools: `echo`, `slow` (2 s, run on a thread the host stops waiting
/// for at the deadline), `fail`, `listing` (a large JSON output).
impl agent::context_compiler::tool_bridge::Host for Host {
    fn call_tool(
        &mut self,
        name: String,
        arguments_json: String,
        timeout_ms: u64,
    ) -> Result<String, ToolFailure> {
        self.tool_calls
            .push((name.clone(), arguments_json.clone(), timeout_ms));
        match name.as_str() {
            "echo" => Ok(arguments_json),
            "slow" => {
                let (tx, rx) = mpsc::channel();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(2_000));
                    let _ = tx.send("finally".to_string());
                });
                rx.recv_timeout(Duration::from_millis(timeout_ms))
                    .map_err(|_| {
                        ToolFailure::Timeout(format!("slow did not finish in {timeout_ms} ms"))
                    })
            }
            "fail" => Err(ToolFailure::Failed("boom".into())),
            "listing" => Ok(listing()),
            other => Err(ToolFailure::Failed(format!("no tool {other}"))),
        }
    }
}

/// The embedder: a vector of each text's letter counts (a-z), so texts
/// sharing words are near; `fail` in a text fails the batch.
impl agent::context_compiler::embedder::Host for Host {
    fn embed(
        &mut self,
        texts: Vec<String>,
        role: agent::context_compiler::embedder::EmbedRole,
        timeout_ms: u64,
    ) -> Result<Vec<Vec<f32>>, String> {
        self.embed_calls.push((texts.len(), role, timeout_ms));
        if texts.iter().any(|t| t.contains("fail")) {
            return Err("embedder offline".into());
        }
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 26];
                for b in t
                    .to_ascii_lowercase()
                    .bytes()
                    .filter(u8::is_ascii_lowercase)
                {
                    v[usize::from(b - b'a')] += 1.0;
                }
                v
            })
            .collect())
    }
}

/// The text model: a summary naming how long the prompt was.
impl agent::context_compiler::llm::Host for Host {
    fn complete(&mut self, prompt: String, max_tokens: u64) -> Result<String, String> {
        self.llm_calls.push(max_tokens);
        Ok(format!("host summary of {} characters", prompt.len()))
    }
}

/// The bus handlers: each call is kept; `broken` fails.
impl agent::context_compiler::bus_host::Host for Host {
    fn handle(&mut self, handler: String, event_json: String) -> Result<(), String> {
        let event: Value = serde_json::from_str(&event_json).map_err(|e| e.to_string())?;
        self.bus_calls.push((handler.clone(), event));
        match handler.as_str() {
            "broken" => Err("disk full".into()),
            _ => Ok(()),
        }
    }
}

fn listing() -> String {
    let rows: Vec<Value> = (0..300)
        .map(|i| json!({"path": format!("src/file_{i}.rs"), "bytes": i * 97, "token": "sk-live-0123456789abcdefghijklmnop"}))
        .collect();
    json!({"files": rows}).to_string()
}

/// An engine and the component built as `file` (in the release target
/// directory), or at the path in the environment variable `var`.
fn load_component(var: &str, file: &str) -> (Engine, Component) {
    let path = std::env::var(var).unwrap_or_else(|_| {
        common::golden::repo_root()
            .join("target/wasm32-wasip2/release")
            .join(file)
            .to_string_lossy()
            .into_owned()
    });
    assert!(
        std::path::Path::new(&path).exists(),
        "{path} is missing: build it with `bash scripts/build-component.sh`"
    );
    let engine = Engine::default();
    let component = Component::from_file(&engine, &path).expect("load the component");
    (engine, component)
}

/// The engine and the compiled component, shared by every test.
fn compiled() -> &'static (Engine, Component) {
    static COMPILED: OnceLock<(Engine, Component)> = OnceLock::new();
    COMPILED.get_or_init(|| load_component("COMPONENT_WASM", "context_compiler_component.wasm"))
}

/// A fresh host and instance.
fn instantiate() -> (Store<Host>, ContextCompiler) {
    instantiate_with(WasiCtx::builder().build())
}

/// A fresh host with `wasi` (e.g. a preopened directory) and instance.
fn instantiate_with(wasi: WasiCtx) -> (Store<Host>, ContextCompiler) {
    instantiate_sharing(wasi, SharedKv::default())
}

/// A fresh host with `wasi` and instance over `kv`, which other hosts may share.
fn instantiate_sharing(wasi: WasiCtx, kv: SharedKv) -> (Store<Host>, ContextCompiler) {
    let (engine, component) = compiled();
    let mut linker = Linker::<Host>::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
    ContextCompiler::add_to_linker::<_, HasSelf<_>>(&mut linker, |h| h).unwrap();
    let mut store = Store::new(engine, Host::new(wasi, kv));
    let bindings = ContextCompiler::instantiate(&mut store, component, &linker).unwrap();
    (store, bindings)
}

fn import(
    store: &mut Store<Host>,
    cc: &ContextCompiler,
    json: &str,
) -> Result<ResourceAny, WitError> {
    cc.agent_context_compiler_sessions()
        .session()
        .call_import_json(store, json)
        .unwrap()
}

/// Format options naming `format` and no model.
fn in_format(format: MessageFormat) -> FormatOptions {
    FormatOptions {
        format: Some(format),
        model: None,
    }
}

fn to_messages(
    store: &mut Store<Host>,
    cc: &ContextCompiler,
    context_json: &str,
    format: MessageFormat,
) -> Value {
    let text = cc
        .agent_context_compiler_compiler()
        .call_to_messages(store, context_json, &in_format(format))
        .unwrap()
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The seed's ContextWindow example through the component equals the
/// native window, and bad input is an error result.
#[test]
fn the_context_window_is_the_native_one() {
    let (mut store, cc) = instantiate();
    let windows = cc.agent_context_compiler_context_window().window();
    let w = windows
        .call_create(&mut store, 128_000, None)
        .unwrap()
        .unwrap();
    let mut native = context_compiler::ContextWindow::new(
        128_000,
        None,
        Rc::new(context_compiler::DefaultTokenCounter),
        Rc::new(context_compiler::clock::SystemClock),
    )
    .unwrap();
    windows
        .call_set_system_prompt(&mut store, w, "You are a helpful coding assistant.")
        .unwrap();
    native.set_system_prompt("You are a helpful coding assistant.");
    windows
        .call_set_goal(&mut store, w, "Build a REST API")
        .unwrap();
    native.set_goal("Build a REST API");
    windows
        .call_set_policies(&mut store, w, &["Never expose PII".to_string()])
        .unwrap();
    native.set_policies(vec!["Never expose PII".into()]);
    windows
        .call_set_tool_definitions(&mut store, w, r#"[{"name":"bash"}]"#)
        .unwrap()
        .unwrap();
    native
        .set_tool_definitions(vec![json!({"name": "bash"})])
        .unwrap();
    windows
        .call_set_brain_digest(&mut store, w, r#"{"concept":"rest"}"#)
        .unwrap()
        .unwrap();
    native.set_brain_digest(json!({"concept": "rest"})).unwrap();
    windows
        .call_set_task_state(&mut store, w, "Creating the model")
        .unwrap();
    native.set_task_state("Creating the model");
    windows
        .call_append_message(&mut store, w, "user", "Create the user model", None)
        .unwrap()
        .unwrap();
    native
        .append_message("user", "Create the user model", None)
        .unwrap();
    windows
        .call_append_tool_result(&mut store, w, "bash", "ok", false)
        .unwrap();
    native.append_tool_result("bash", "ok", false).unwrap();
    windows
        .call_add_recent_message(&mut store, w, "user", "Now add validation", Some(2.0))
        .unwrap()
        .unwrap();
    native
        .add_recent_message("user", "Now add validation", Some(2.0))
        .unwrap();
    let compiled: Value =
        serde_json::from_str(&windows.call_compile(&mut store, w).unwrap()).unwrap();
    let mut expected = serde_json::to_value(native.compile()).unwrap();
    assert_eq!(compiled["messages"], expected["messages"]);
    assert_eq!(compiled["totalTokens"], expected["totalTokens"]);
    assert_eq!(compiled["zoneUsage"], expected["zoneUsage"]);
    let stats: Value =
        serde_json::from_str(&windows.call_get_stats(&mut store, w).unwrap()).unwrap();
    expected = serde_json::to_value(native.get_stats()).unwrap();
    assert_eq!(stats, expected);
    assert!(matches!(
        windows.call_get_compaction_level(&mut store, w).unwrap(),
        CompactionLevel::None
    ));
    windows
        .call_emergency_compact(&mut store, w, "summary")
        .unwrap();
    let stats: Value =
        serde_json::from_str(&windows.call_get_stats(&mut store, w).unwrap()).unwrap();
    assert_eq!(stats["workingItems"], 1);
    // Bad input is an error result; the instance stays usable.
    let e = windows
        .call_set_tool_definitions(&mut store, w, r#"[{"nope":1}]"#)
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = windows
        .call_append_message(&mut store, w, "user", "x", Some(f64::NAN))
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let e = windows
        .call_create(&mut store, 0, None)
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidBudget);
    let e = cc
        .agent_context_compiler_compiler()
        .call_to_messages(&mut store, "{not json", &in_format(MessageFormat::Openai))
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert!(windows
        .call_compile(&mut store, w)
        .unwrap()
        .contains("summary"));
    w.resource_drop(&mut store).unwrap();
}

/// The compactor with its defaults.
fn compactor() -> Processor {
    Processor::Compactor(CompactorOptions {
        target: None,
        summarizer: false,
    })
}

/// A store's layout at its defaults.
fn no_backend_options() -> BackendOptions {
    BackendOptions {
        chunk_bytes: None,
        prefix: None,
    }
}

/// Sync options trying at most `max_tries` times, the default delays.
fn sync_tries(max_tries: Option<u32>) -> SyncOptions {
    SyncOptions {
        max_tries,
        base_delay_ms: None,
        max_delay_ms: None,
    }
}

/// History recall's options, each at its default.
fn recall_options() -> HistoryRecallOptions {
    HistoryRecallOptions {
        share: None,
        min_distinction: None,
        min_relevance: None,
        matches: None,
        neighbours: None,
        turn_tokens: None,
        artifact_store: false,
        embedder: false,
        embedder_timeout_ms: None,
    }
}

fn processors(fixture: &Value) -> Vec<Processor> {
    fixture["compile"]["processors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| match p["type"].as_str().unwrap() {
            "history_selector" => Processor::HistorySelector(HistorySelectorOptions {
                keep_first: limit(&p["keepFirst"], 2).min(u32::MAX as usize) as u32,
                keep_last: limit(&p["keepLast"], 5).min(u32::MAX as usize) as u32,
            }),
            "compactor" => compactor(),
            "memory_preloader" => Processor::MemoryPreloader(MemoryPreloaderOptions {
                top_k: limit(&p["topK"], 5) as u32,
                pin: p["pin"] == true,
            }),
            "artifact_attacher" => Processor::ArtifactAttacher(ArtifactAttacherOptions {
                threshold_bytes: limit(&p["thresholdBytes"], 1024) as u64,
                keep_unread: p["keepUnread"].as_bool(),
            }),
            "history_recall" => Processor::HistoryRecall(recall_options()),
            other => panic!("unknown processor {other}"),
        })
        .collect()
}

#[test]
fn golden_fixtures_compile_the_same_through_the_component() {
    for (path, fixture) in fixtures() {
        let (mut store, cc) = instantiate();
        let session = import(&mut store, &cc, &export_doc(&fixture).to_string()).unwrap();
        let sessions = cc.agent_context_compiler_sessions().session();
        let before = sessions.call_length(&mut store, session).unwrap().unwrap();
        // Searched before the compile (which records events with times of its own).
        let searched = fixture.get("search").map(|q| {
            let hits = sessions
                .call_search(
                    &mut store,
                    session,
                    q["query"].as_str().unwrap(),
                    q["limit"].as_u64().unwrap() as u32,
                )
                .unwrap()
                .unwrap();
            json!(hits
                .iter()
                .map(|h| json!({"eventId": h.event_id, "position": h.position, "kind": h.kind}))
                .collect::<Vec<_>>())
        });
        let memories: Vec<Memory> = fixture["memories"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| Memory {
                key: m[0].as_str().unwrap().into(),
                content: m[1].as_str().unwrap().into(),
                category: m[2].as_str().unwrap().into(),
            })
            .collect();
        let c = &fixture["compile"];
        let compiler = cc.agent_context_compiler_compiler();
        let zoned = c["layout"] == "zoned";
        let compiled = if zoned {
            let o = compile_options(c);
            let json = |v: &Option<Value>| v.as_ref().map(Value::to_string);
            let options = CompileOptions {
                system_prompt: o.system_prompt.clone(),
                policies: o.policies.clone(),
                tool_definitions_json: Some(Value::Array(o.tool_definitions.clone()).to_string()),
                user_preferences_json: json(&o.user_preferences),
                goal: o.goal.clone(),
                state_digest_json: json(&o.state_digest),
                task_state: o.task_state.clone(),
                ..zoned_options()
            };
            compiler.call_compile_with(
                &mut store,
                session,
                c["budget"].as_u64().unwrap(),
                &options,
                &processors(&fixture),
                &memories,
            )
        } else {
            compiler.call_compile(
                &mut store,
                session,
                c["budget"].as_u64().unwrap(),
                c["systemPrompt"].as_str().unwrap(),
                &processors(&fixture),
                &memories,
            )
        }
        .unwrap()
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        let ctx: WorkingContext = serde_json::from_str(&compiled.context_json).unwrap();
        let messages: Value = serde_json::from_str(&compiled.messages_json).unwrap();
        let events: Vec<Value> = serde_json::from_str(
            &sessions
                .call_events_json(&mut store, session)
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        let recorded: Vec<&str> = events[before as usize..]
            .iter()
            .map(|e| e["kind"].as_str().unwrap())
            .collect();
        let mut actual = json!({
            "messages": messages,
            "tokenCount": compiled.token_count,
            "artifactRefs": ctx.artifact_refs,
            "memoryKeys": ctx.memory_hits.iter().map(|m| m.key.clone()).collect::<Vec<_>>(),
            "dropped": ctx.dropped,
            "recordedKinds": recorded,
            "zoneUsage": ctx.zone_usage,
            "compactionLevel": ctx.compaction_level,
            "summary": ctx.summary,
            "formats": {
                "openai": to_messages(&mut store, &cc, &compiled.context_json, MessageFormat::Openai),
                "anthropic": to_messages(&mut store, &cc, &compiled.context_json, MessageFormat::Anthropic),
                "ai-sdk": to_messages(&mut store, &cc, &compiled.context_json, MessageFormat::AiSdk),
                "openai-responses": to_messages(&mut store, &cc, &compiled.context_json, MessageFormat::OpenaiResponses),
                "gemini": to_messages(&mut store, &cc, &compiled.context_json, MessageFormat::Gemini),
            },
        });
        if !ctx.recalled.is_empty() {
            actual["recalled"] =
                json!(ctx.recalled.iter().map(|r| &r.event_id).collect::<Vec<_>>());
        }
        if let Some(search) = searched {
            actual["search"] = search;
        }
        assert_eq!(actual, fixture["expected"], "{}", path.display());
        // The ledger adds up to the count; the first compile of a session
        // repeats no prefix.
        let (_, sum) = ledger(&mut store, &cc, session, &compiled.context_json);
        assert_eq!(sum, compiled.token_count, "{}", path.display());
        assert_eq!(
            ctx.cache
                .as_ref()
                .and_then(|c| c.miss.as_ref())
                .map(|m| m.cause),
            Some(context_compiler::working_context::MissCause::First),
            "{}",
            path.display()
        );
        assert_eq!(
            to_messages(
                &mut store,
                &cc,
                &compiled.context_json,
                MessageFormat::Plain
            ),
            messages
        );
        // Externalised artifacts landed in the host's KV, verified and whole.
        for r in ctx.artifact_refs {
            assert!(
                store.data().kv().contains_key(&format!("a/{}", r.handle)),
                "{} not in the host kv",
                r.handle
            );
        }
        session.resource_drop(&mut store).unwrap();
    }
}

/// The native twin of the host's tools, for the native side of comparisons.
struct NativeTools;

#[async_trait::async_trait(?Send)]
impl context_compiler::tools::ToolBridge for NativeTools {
    async fn execute(
        &self,
        name: &str,
        arguments: &Value,
        _signal: &context_compiler::tools::AbortSignal,
        deadline_ms: f64,
    ) -> Result<context_compiler::tools::ToolOutput, context_compiler::tools::ToolFailure> {
        use context_compiler::tools::{ToolFailure as F, ToolOutput};
        match name {
            "echo" => Ok(ToolOutput::Text(arguments.to_string())),
            "slow" => Err(F::TimedOut(format!(
                "slow did not finish in {} ms",
                deadline_ms.ceil() as u64
            ))),
            "fail" => Err(F::Failed("boom".into())),
            "listing" => Ok(ToolOutput::Text(listing())),
            other => Err(F::Failed(format!("no tool {other}"))),
        }
    }
}

const LISTING_SCHEMA: &str = r#"{"type":"object","required":["files"],"properties":{"files":{"type":"array","items":{"type":"object","required":["path","bytes"]}}}}"#;

/// A tool event without what differs between runs (ids, times, latency).
fn comparable(mut event: Value) -> Value {
    let obj = event.as_object_mut().unwrap();
    for k in ["eventId", "timestamp", "latencyMs"] {
        obj.remove(k);
    }
    if let Some(a) = obj.get_mut("artifact").and_then(Value::as_object_mut) {
        a.remove("createdAt");
    }
    event
}

fn native_call(name: &str, args: &Value, timeout_ms: u64, externalize: bool) -> Value {
    use context_compiler::artifacts::ArtifactStore;
    use context_compiler::clock::SystemClock;
    use context_compiler::tools::{ToolInterruptHandler, ToolInterruptOptions};
    let mut registry = SchemaRegistry::new();
    registry
        .register("listing", serde_json::from_str(LISTING_SCHEMA).unwrap())
        .unwrap();
    let store: Rc<dyn ArtifactStore> = Rc::new(context_compiler::MemoryArtifactStore::new(
        Rc::new(SystemClock),
    ));
    let handler = ToolInterruptHandler::new(
        Rc::new(NativeTools),
        PerceptionAligner::new(Rc::new(RefCell::new(registry))),
        Rc::new(RefCell::new(common::session("tools"))),
        Rc::new(SystemClock),
        ToolInterruptOptions {
            artifact_store: externalize.then_some(store),
            externalize_threshold: if externalize { 1024 } else { usize::MAX },
        },
    );
    let event =
        common::block_on(handler.call(name, args.clone(), Some(timeout_ms as f64))).unwrap();
    serde_json::to_value(event).unwrap()
}

#[test]
fn tool_events_and_normalised_outputs_match_the_native_core() {
    let (mut store, cc) = instantiate();
    let sessions = cc.agent_context_compiler_sessions().session();
    let session = new_session(&mut store, &cc, "tools");
    let normalizer = cc.agent_context_compiler_normalizer();
    let registry = normalizer
        .schema_registry()
        .call_constructor(&mut store)
        .unwrap();
    normalizer
        .schema_registry()
        .call_register(&mut store, registry, "listing", LISTING_SCHEMA)
        .unwrap()
        .unwrap();
    let cases = [
        ("echo", json!({"text": "hello", "n": 3}), 1_000, false),
        ("fail", json!({}), 1_000, false),
        ("slow", json!({"wait": true}), 100, false),
        ("listing", json!({"dir": "src"}), 1_000, true),
        ("listing", json!({"dir": "src"}), 1_000, false),
    ];
    for (name, args, timeout, externalize) in cases {
        let options = CallOptions {
            timeout_ms: Some(timeout),
            externalize_threshold: externalize.then_some(1024),
            call_id: None,
            thought_signature: None,
            reasoning_json: None,
        };
        let out = cc
            .agent_context_compiler_tools()
            .call_call_tool(
                &mut store,
                session,
                Some(registry),
                name,
                &args.to_string(),
                &options,
            )
            .unwrap()
            .unwrap();
        let ours: Value = serde_json::from_str(&out).unwrap();
        let native = native_call(name, &args, timeout, externalize);
        assert_eq!(comparable(ours.clone()), comparable(native), "{name}");
        if externalize {
            let id = ours["artifact"]["artifactId"].as_str().unwrap();
            let stored = store
                .data()
                .kv()
                .get(&format!("a/{id}"))
                .cloned()
                .expect("externalised to the host kv");
            assert!(
                !String::from_utf8_lossy(&stored).contains("sk-live-"),
                "only redacted output is stored"
            );
        }
    }
    let kinds: Vec<String> = serde_json::from_str::<Vec<Value>>(
        &sessions
            .call_events_json(&mut store, session)
            .unwrap()
            .unwrap(),
    )
    .unwrap()
    .iter()
    .map(|e| e["kind"].as_str().unwrap().to_string())
    .collect();
    assert_eq!(
        kinds,
        [
            "tool_call",
            "tool_success",
            "tool_call",
            "tool_error",
            "tool_call",
            "tool_timeout",
            "tool_call",
            "artifact_stored",
            "tool_success",
            "tool_call",
            "tool_success"
        ]
    );
    // The host saw the deadline it had to enforce.
    assert_eq!(store.data().tool_calls[2].2, 100);

    // The normaliser and the redactor give the native core's output.
    let mut native_registry = SchemaRegistry::new();
    native_registry
        .register("listing", serde_json::from_str(LISTING_SCHEMA).unwrap())
        .unwrap();
    let aligner = PerceptionAligner::new(Rc::new(RefCell::new(native_registry)));
    for (tool, output) in [
        ("listing", listing()),
        ("listing", r#"{"files": [{"path": 3}]}"#.to_string()),
        (
            "other",
            "plain text with AKIAIOSFODNN7EXAMPLE inside".to_string(),
        ),
        ("other", "x".repeat(100_000)),
        ("other", "{\"truncated\": [1, 2".to_string()),
    ] {
        let ours = normalizer
            .schema_registry()
            .call_normalize(&mut store, registry, tool, &output)
            .unwrap();
        let native = serde_json::to_string(&aligner.normalize(tool, &output)).unwrap();
        assert_eq!(ours, native, "{tool}");
        let redacted = normalizer.call_redact(&mut store, &output).unwrap();
        let native =
            serde_json::to_string(&context_compiler::normalize::redact::redact(&output)).unwrap();
        assert_eq!(redacted, native);
    }
}

fn code(result: Result<impl std::fmt::Debug, WitError>) -> ErrorCode {
    match result {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => {
            assert!(!e.message.is_empty());
            e.code
        }
    }
}

#[test]
fn bad_input_is_an_error_result_and_the_instance_stays_usable() {
    let (mut store, cc) = instantiate();
    let sessions = cc.agent_context_compiler_sessions().session();
    assert_eq!(
        code(import(&mut store, &cc, "{not json")),
        ErrorCode::InvalidSessionImport
    );
    assert_eq!(
        code(import(
            &mut store,
            &cc,
            r#"{"format":"agent-context-compiler/session","version":1,"sessionId":"x","events":[{"eventId":"a"}]}"#
        )),
        ErrorCode::InvalidSessionImport
    );
    let session = sessions.call_constructor(&mut store, None).unwrap();
    let record = |store: &mut Store<Host>, kind: &str, data: &str| {
        sessions
            .call_record(store, session, kind, data, None)
            .unwrap()
    };
    assert_eq!(
        code(record(&mut store, "user_input", "{\"unterminated\": ")),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(record(&mut store, "", "\"x\"")),
        ErrorCode::InvalidArgument
    );
    // An over-long string (8 MB) is recorded, counted and compiled under budget.
    let long = serde_json::to_string(&"word ".repeat(1_600_000)).unwrap();
    record(&mut store, "user_input", &long).unwrap();
    assert!(
        sessions
            .call_total_tokens(&mut store, session)
            .unwrap()
            .unwrap()
            > 1_000_000
    );
    let compiler = cc.agent_context_compiler_compiler();
    let compiled = compiler
        .call_compile(&mut store, session, 1_000, "sys", &[compactor()], &[])
        .unwrap()
        .unwrap();
    assert!(compiled.token_count <= 1_000);
    assert_eq!(
        code(
            compiler
                .call_compile(&mut store, session, 0, "sys", &[], &[])
                .unwrap()
        ),
        ErrorCode::InvalidBudget
    );
    let normalizer = cc.agent_context_compiler_normalizer();
    let registry = normalizer
        .schema_registry()
        .call_constructor(&mut store)
        .unwrap();
    assert_eq!(
        code(
            normalizer
                .schema_registry()
                .call_register(&mut store, registry, "t", "{\"type\": 12}")
                .unwrap()
        ),
        ErrorCode::InvalidSchema
    );
    assert_eq!(
        code(
            normalizer
                .schema_registry()
                .call_register(&mut store, registry, "t", "not json")
                .unwrap()
        ),
        ErrorCode::InvalidArgument
    );
    let tools = cc.agent_context_compiler_tools();
    let opts = || CallOptions {
        timeout_ms: Some(1_000),
        externalize_threshold: Some(1024),
        call_id: None,
        thought_signature: None,
        reasoning_json: None,
    };
    assert_eq!(
        code(
            tools
                .call_call_tool(&mut store, session, None, "echo", "{bad", &opts())
                .unwrap()
        ),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        code(
            tools
                .call_call_tool(
                    &mut store,
                    session,
                    None,
                    "echo",
                    "{}",
                    &CallOptions {
                        timeout_ms: Some(0),
                        externalize_threshold: None,
                        call_id: None,
                        thought_signature: None,
                        reasoning_json: None,
                    }
                )
                .unwrap()
        ),
        ErrorCode::InvalidArgument
    );

    // A host import that fails: the KV is offline. (A short newest user
    // message, so the listing fits beside it.)
    record(&mut store, "user_input", "\"list the files\"").unwrap();
    store.data_mut().kv_fails = true;
    let event: Value = serde_json::from_str(
        &tools
            .call_call_tool(&mut store, session, None, "listing", "{}", &opts())
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        event["kind"], "tool_success",
        "a failing store keeps the output inline"
    );
    assert!(event.get("artifact").is_none_or(Value::is_null));
    let attach = [
        Processor::HistorySelector(HistorySelectorOptions {
            keep_first: 2,
            keep_last: 5,
        }),
        // Shown as a reference even while unread: what this test checks.
        Processor::ArtifactAttacher(ArtifactAttacherOptions {
            threshold_bytes: 1024,
            keep_unread: Some(false),
        }),
    ];
    let failed = compiler
        .call_compile(&mut store, session, 100_000, "sys", &attach, &[])
        .unwrap();
    let e = failed.expect_err("the attacher cannot store");
    assert!(
        matches!(e.code, ErrorCode::StoreFailed | ErrorCode::ProcessorFailed),
        "{e:?}"
    );
    assert!(e.message.contains("kv offline"), "{}", e.message);

    // The instance is still usable once the host recovers.
    store.data_mut().kv_fails = false;
    let ok = compiler
        .call_compile(&mut store, session, 100_000, "sys", &attach, &[])
        .unwrap()
        .unwrap();
    let ctx: WorkingContext = serde_json::from_str(&ok.context_json).unwrap();
    assert_eq!(
        ctx.artifact_refs.len(),
        1,
        "the listing is externalised once the KV is back"
    );
    let fresh = new_session(&mut store, &cc, "after");
    sessions
        .call_record(&mut store, fresh, "user_input", "\"still here\"", None)
        .unwrap()
        .unwrap();
    assert_eq!(sessions.call_length(&mut store, fresh).unwrap().unwrap(), 1);
    assert_eq!(
        sessions
            .call_session_id(&mut store, fresh)
            .unwrap()
            .unwrap(),
        "after"
    );
}

/// Pieces of hostile input for the WIT entry points.
const FRAGMENTS: &[&str] = &[
    "\"", "\\", "\\\"", "\\u00", "\\ud800", ":", ",", "{", "}", "[", "]", "\n", "null", "password",
    "Bearer ", "ghp_", "-----BEGIN RSA PRIVATE KEY-----", "é😀", "\u{0}", "1e999", "-0",
    "{\"format\":\"agent-context-compiler/session\",\"version\":1,\"sessionId\":\"f\",\"events\":[",
    "{\"eventId\":\"e\",\"timestamp\":1,\"kind\":\"user_input\",\"data\":\"x\",\"tokenEstimate\":1}",
    "{\"systemPrompt\":\"s\",\"history\":[{\"role\":\"user\",\"content\":\"c\"}]}",
];

/// Fuzzing the WIT entry points: generated hostile strings through import,
/// record, compile, to-messages, normalize and redact. Every call returns
/// (a value or an error result); none traps, and the instance stays usable.
#[test]
fn hostile_strings_through_every_entry_point_never_trap() {
    let (mut store, cc) = instantiate();
    let sessions = cc.agent_context_compiler_sessions().session();
    let compiler = cc.agent_context_compiler_compiler();
    let normalizer = cc.agent_context_compiler_normalizer();
    let registry = normalizer
        .schema_registry()
        .call_constructor(&mut store)
        .unwrap();
    let session = sessions.call_constructor(&mut store, None).unwrap();
    // A deterministic generator: the same inputs on every run.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for case in 0..400 {
        let parts = (next() % 12) as usize;
        let input: String = (0..parts)
            .map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize])
            .collect();
        let what = format!("case {case}: {input:?}");
        let _ = import(&mut store, &cc, &input);
        let _ = sessions
            .call_record(&mut store, session, "note", &input, None)
            .expect(&what);
        let data = serde_json::to_string(&input).unwrap();
        sessions
            .call_record(&mut store, session, "user_input", &data, None)
            .expect(&what)
            .expect(&what);
        let _ = compiler
            .call_to_messages(&mut store, &input, &in_format(MessageFormat::Openai))
            .expect(&what);
        normalizer
            .schema_registry()
            .call_normalize(&mut store, registry, "t", &input)
            .expect(&what);
        normalizer.call_redact(&mut store, &input).expect(&what);
        let _ = compiler
            .call_compile(
                &mut store,
                session,
                1 + next() % 400,
                &input,
                &[Processor::HistorySelector(HistorySelectorOptions {
                    keep_first: 1,
                    keep_last: 4,
                })],
                &[],
            )
            .expect(&what);
    }
    assert!(sessions.call_length(&mut store, session).unwrap().unwrap() >= 400);
}

/// The seed's bus through the component: FIFO dispatch to host handlers with
/// the persister first, a full queue dropping, failures isolated and
/// reported, stats, and a session feeding it.
#[test]
fn the_event_bus_dispatches_to_host_handlers() {
    use exports::agent::context_compiler::bus::BusOptions;
    let (mut store, cc) = instantiate();
    let buses = cc.agent_context_compiler_bus().event_bus();
    let zero = buses
        .call_create(&mut store, BusOptions { max_queue: Some(0) })
        .unwrap();
    assert!(matches!(zero, Err(ref e) if e.code == ErrorCode::InvalidArgument));
    let bus = buses
        .call_create(&mut store, BusOptions { max_queue: Some(3) })
        .unwrap()
        .unwrap();
    buses
        .call_on(&mut store, bus, "turn_completed", "log")
        .unwrap();
    let broken = buses
        .call_on(&mut store, bus, "turn_completed", "broken")
        .unwrap();
    buses
        .call_on(&mut store, bus, "message_received", "log")
        .unwrap();
    buses
        .call_set_persister(&mut store, bus, Some("db"))
        .unwrap();
    let mut accepted = Vec::new();
    for n in 0..4 {
        let event =
            json!({"type": "turn_completed", "agentId": "a", "sessionId": "s", "data": {"n": n}});
        accepted.push(
            buses
                .call_emit(&mut store, bus, &event.to_string())
                .unwrap()
                .unwrap(),
        );
    }
    assert_eq!(accepted, [true, true, true, false]);
    assert_eq!(buses.call_pending(&mut store, bus).unwrap(), 3);
    let failures = buses.call_drain(&mut store, bus).unwrap().unwrap();
    assert_eq!(failures.len(), 3);
    assert!(failures.iter().all(|f| f.handler == "broken"
        && f.event_type == "turn_completed"
        && f.message.contains("disk full")));
    let calls: Vec<(String, Value)> = store
        .data()
        .bus_calls
        .iter()
        .map(|(h, e)| (h.clone(), e["data"]["n"].clone()))
        .collect();
    let expected: Vec<(String, Value)> = (0..3)
        .flat_map(|n| ["db", "log", "broken"].map(|h| (h.to_string(), json!(n))))
        .collect();
    assert_eq!(calls, expected, "FIFO, the persister first, every handler");
    let first = &store.data().bus_calls[0].1;
    assert_eq!(first["agentId"], "a");
    assert!(first["timestamp"].as_f64().unwrap() > 1.7e12);
    let stats: Value =
        serde_json::from_str(&buses.call_stats_json(&mut store, bus).unwrap()).unwrap();
    assert_eq!(
        [&stats["emitted"], &stats["dispatched"], &stats["dropped"]],
        [&json!(3), &json!(3), &json!(1)]
    );
    assert_eq!(stats["handlerErrors"], 3);

    // A session attached to the bus feeds it.
    assert!(buses.call_off(&mut store, bus, broken).unwrap());
    let sessions = cc.agent_context_compiler_sessions().session();
    let session = new_session(&mut store, &cc, "fed");
    buses
        .call_attach(
            &mut store,
            bus,
            session,
            &AttachOptions {
                agent_id: "agent".into(),
                user_id: Some("u1".into()),
                user_display_name: None,
                episode_id: None,
            },
        )
        .unwrap()
        .unwrap();
    sessions
        .call_record(
            &mut store,
            session,
            "user_input",
            r#"{"text": "hello"}"#,
            None,
        )
        .unwrap()
        .unwrap();
    store.data_mut().bus_calls.clear();
    assert!(buses
        .call_drain(&mut store, bus)
        .unwrap()
        .unwrap()
        .is_empty());
    let fed = &store.data().bus_calls;
    assert_eq!(fed.len(), 2);
    assert_eq!(fed[1].0, "log");
    assert_eq!(fed[1].1["type"], "message_received");
    assert_eq!(fed[1].1["data"]["text"], "hello");
    assert_eq!(fed[1].1["data"]["user_id"], "u1");

    for bad in [
        "not json",
        "[]",
        r#"{"type": 1, "agentId": "a"}"#,
        r#"{"type": "t", "agentId": "a", "data": []}"#,
    ] {
        let e = buses.call_emit(&mut store, bus, bad).unwrap().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{bad}");
    }
}

#[test]
fn artifacts_go_to_files_in_a_preopened_directory_when_selected() {
    let dir = std::env::temp_dir().join(format!("acc-component-fs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut wasi = WasiCtx::builder();
    wasi.preopened_dir(&dir, "/data", wasmtime_wasi::FsPerms::ReadWrite)
        .unwrap();
    let (mut store, cc) = instantiate_with(wasi.build());
    let select = |store: &mut Store<Host>, backend: Backend| {
        cc.agent_context_compiler_artifact_store()
            .call_select(store, &backend, &no_backend_options())
            .unwrap()
    };
    // Outside the preopened directory there is nothing to write to.
    let outside = select(&mut store, Backend::Files("/elsewhere".into())).unwrap_err();
    assert_eq!(
        outside.code,
        ErrorCode::StoreUnavailable,
        "{}",
        outside.message
    );
    assert_eq!(
        select(&mut store, Backend::Files(String::new()))
            .unwrap_err()
            .code,
        ErrorCode::InvalidArgument
    );
    select(&mut store, Backend::Files("/data/artifacts".into())).unwrap();
    let session = cc
        .agent_context_compiler_sessions()
        .session()
        .call_constructor(&mut store, Some("fs"))
        .unwrap();
    let call = |store: &mut Store<Host>| -> Value {
        let options = CallOptions {
            timeout_ms: Some(1_000),
            externalize_threshold: Some(1024),
            call_id: None,
            thought_signature: None,
            reasoning_json: None,
        };
        let out = cc
            .agent_context_compiler_tools()
            .call_call_tool(
                store,
                session,
                None,
                "listing",
                &json!({"dir": "src"}).to_string(),
                &options,
            )
            .unwrap()
            .unwrap();
        serde_json::from_str(&out).unwrap()
    };
    let event = call(&mut store);
    let id = event["artifact"]["artifactId"]
        .as_str()
        .unwrap()
        .to_string();
    let file = dir
        .join("artifacts/a")
        .join(&id[..2])
        .join(format!("{id}.rec"));
    let written = std::fs::read(&file).expect("the artifact is a file in the preopened directory");
    let text = String::from_utf8_lossy(&written);
    assert!(
        text.contains("src/file_299.rs") && !text.contains("sk-live-"),
        "the redacted output"
    );
    assert!(
        store.data().kv().is_empty(),
        "nothing went to the host's KV"
    );
    // The native filesystem store reads what the component wrote.
    let native = context_compiler::KvArtifactStore::new(
        context_compiler::FsKv::new(context_compiler::StdFileSystem::new(dir.join("artifacts"))),
        std::rc::Rc::new(context_compiler::clock::SystemClock),
        context_compiler::KvStoreOptions::default(),
    )
    .unwrap();
    let content = pollster::block_on(context_compiler::ArtifactStore::retrieve(&native, &id))
        .unwrap()
        .unwrap();
    assert_eq!(
        content.len() as u64,
        event["artifact"]["sizeBytes"].as_u64().unwrap()
    );
    // Back to the host's KV.
    select(&mut store, Backend::HostKv).unwrap();
    call(&mut store);
    assert!(
        store.data().kv().contains_key(&format!("a/{id}")),
        "the host's KV again"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sql_selection_runs_on_the_host_database_and_reports_its_failures() {
    let (mut store, cc) = instantiate();
    let stores = cc.agent_context_compiler_artifact_store();
    let sql = Backend::Sql(SqlOptions {
        dialect: SqlDialect::Sqlite,
        blobs_as_base64: false,
    });
    let chunked = BackendOptions {
        chunk_bytes: Some(4096),
        prefix: None,
    };
    let e = stores
        .call_select(&mut store, &sql, &chunked)
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{}", e.message);
    stores
        .call_select(&mut store, &sql, &no_backend_options())
        .unwrap()
        .unwrap();
    let session = cc
        .agent_context_compiler_sessions()
        .session()
        .call_constructor(&mut store, Some("sql"))
        .unwrap();
    let saving = cc.agent_context_compiler_session_store();
    // This host has no database: its error comes back, as the store's.
    let e = saving.call_save(&mut store, session).unwrap().unwrap_err();
    assert_eq!(e.code, ErrorCode::StoreFailed);
    assert!(
        e.message.contains("sql") && e.message.contains("no database in this host"),
        "{}",
        e.message
    );
    stores
        .call_select(&mut store, &Backend::HostKv, &no_backend_options())
        .unwrap()
        .unwrap();
    saving.call_save(&mut store, session).unwrap().unwrap();
}

/// The user inputs of the session `id` saved in the instance's store.
fn saved_texts(store: &mut Store<Host>, cc: &ContextCompiler, id: &str) -> Vec<String> {
    let loaded = cc
        .agent_context_compiler_session_store()
        .call_load(&mut *store, id)
        .unwrap()
        .unwrap()
        .expect("the session is saved");
    let json = cc
        .agent_context_compiler_sessions()
        .session()
        .call_export_json(&mut *store, loaded)
        .unwrap()
        .unwrap();
    let doc: Value = serde_json::from_str(&json).unwrap();
    doc["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "user_input")
        .map(|e| e["data"].as_str().unwrap().to_string())
        .collect()
}

/// Saving and loading through the host's KV: a stale save is
/// `store-conflict` and writes nothing; `sync` merges and saves.
#[test]
fn sessions_save_load_and_a_stale_save_conflicts() {
    let (mut store, cc) = instantiate();
    let sessions = cc.agent_context_compiler_sessions().session();
    let saving = cc.agent_context_compiler_session_store();
    let s = new_session(&mut store, &cc, "kept");
    sessions
        .call_record(&mut store, s, "user_input", "\"one\"", None)
        .unwrap()
        .unwrap();
    let report = saving.call_save(&mut store, s).unwrap().unwrap();
    assert_eq!((report.events_written, report.rewritten), (1, true));
    assert_eq!(saved_texts(&mut store, &cc, "kept"), ["one"]);
    // Two copies loaded from the same head: the second save is stale.
    let a = saving
        .call_load(&mut store, "kept")
        .unwrap()
        .unwrap()
        .unwrap();
    let b = saving
        .call_load(&mut store, "kept")
        .unwrap()
        .unwrap()
        .unwrap();
    for (copy, text) in [(a, "\"from a\""), (b, "\"from b\"")] {
        sessions
            .call_record(&mut store, copy, "user_input", text, None)
            .unwrap()
            .unwrap();
    }
    saving.call_save(&mut store, a).unwrap().unwrap();
    let stale = saving.call_save(&mut store, b).unwrap().unwrap_err();
    assert_eq!(stale.code, ErrorCode::StoreConflict, "{}", stale.message);
    assert_eq!(saved_texts(&mut store, &cc, "kept"), ["one", "from a"]);
    let synced = saving
        .call_sync(&mut store, b, sync_tries(None))
        .unwrap()
        .unwrap();
    assert_eq!(
        (synced.tries, synced.merged, synced.events_written),
        (2, 1, 1)
    );
    assert_eq!(
        saved_texts(&mut store, &cc, "kept"),
        ["one", "from a", "from b"]
    );
    assert_eq!(
        saving.call_list_sessions(&mut store).unwrap().unwrap(),
        ["kept"]
    );
    assert!(saving
        .call_delete_session(&mut store, "kept")
        .unwrap()
        .unwrap());
    assert!(saving
        .call_load(&mut store, "kept")
        .unwrap()
        .unwrap()
        .is_none());
}

/// Three instances on three threads over one host KV (its `put-if` atomic
/// under one lock), each holding one session it records into and syncs:
/// every event is saved exactly once, in one order.
#[test]
fn instances_on_threads_sharing_one_kv_sync_one_session_without_loss() {
    let kv = SharedKv::default();
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let kv = kv.clone();
            std::thread::spawn(move || {
                let (mut store, cc) = instantiate_sharing(WasiCtx::builder().build(), kv);
                let sessions = cc.agent_context_compiler_sessions().session();
                let s = new_session(&mut store, &cc, "shared");
                let mut tries = 0;
                for i in 0..20 {
                    let text = json!(format!("w{w}-{i}")).to_string();
                    sessions
                        .call_record(&mut store, s, "user_input", &text, None)
                        .unwrap()
                        .unwrap();
                    let report = cc
                        .agent_context_compiler_session_store()
                        .call_sync(&mut store, s, sync_tries(Some(1000)))
                        .unwrap()
                        .unwrap_or_else(|e| panic!("sync failed: {}", e.message));
                    tries += report.tries;
                }
                tries
            })
        })
        .collect();
    let tries: u32 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    let (mut store, cc) = instantiate_sharing(WasiCtx::builder().build(), kv);
    let mut texts = saved_texts(&mut store, &cc, "shared");
    let (mut other_store, other) =
        instantiate_sharing(WasiCtx::builder().build(), store.data().kv.clone());
    assert_eq!(
        saved_texts(&mut other_store, &other, "shared"),
        texts,
        "one order"
    );
    texts.sort();
    let mut expected: Vec<String> = (0..3)
        .flat_map(|w| (0..20).map(move |i| format!("w{w}-{i}")))
        .collect();
    expected.sort();
    assert_eq!(texts, expected, "every event exactly once");
    assert!(tries >= 60, "{tries} tries");
}

/// `record` redacts a tool event's output, error and arguments, as the
/// native session does; `record-with { redact: false }` records them as
/// given, for a host that redacted them itself.
#[test]
fn recording_a_tool_event_redacts_its_secrets_unless_told_not_to() {
    use exports::agent::context_compiler::sessions::RecordOptions;
    let (mut store, cc) = instantiate();
    let sessions = cc.agent_context_compiler_sessions().session();
    let s = sessions.call_constructor(&mut store, None).unwrap();
    let token = "sk-proj-4fGh8JkL2mN6pQ9rStUvWxYz0123456789abcdefAB";
    let data = format!(r#"{{"tool": "env", "result": "OPENAI_API_KEY={token}"}}"#);
    let recorded = sessions
        .call_record(&mut store, s, "tool_success", &data, None)
        .unwrap()
        .unwrap();
    assert!(!recorded.contains(token), "{recorded}");
    let call = format!(r#"{{"tool_name": "login", "arguments": {{"token": "{token}"}}}}"#);
    let recorded = sessions
        .call_record(&mut store, s, "tool_call", &call, None)
        .unwrap()
        .unwrap();
    assert!(!recorded.contains(token), "{recorded}");
    let kept = sessions
        .call_record_with(
            &mut store,
            s,
            "tool_success",
            &data,
            RecordOptions {
                token_estimate: Some(7),
                redact: Some(false),
            },
        )
        .unwrap()
        .unwrap();
    assert!(kept.contains(token), "{kept}");
    let kept: Value = serde_json::from_str(&kept).unwrap();
    assert_eq!(kept["tokenEstimate"], 7);
    let all = sessions.call_events_json(&mut store, s).unwrap().unwrap();
    assert_eq!(
        all.matches(token).count(),
        1,
        "only the event recorded as given"
    );
}

/// `compiler.ledger` of a compiled context, and its parts' tokens summed.
fn ledger(
    store: &mut Store<Host>,
    cc: &ContextCompiler,
    session: ResourceAny,
    context_json: &str,
) -> (Value, u64) {
    let text = cc
        .agent_context_compiler_compiler()
        .call_ledger(store, session, context_json)
        .unwrap()
        .unwrap();
    let ledger: Value = serde_json::from_str(&text).unwrap();
    let sum = ledger["included"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["tokens"].as_u64().unwrap())
        .sum();
    (ledger, sum)
}

#[test]
fn the_ledger_and_the_cache_report_reach_the_host() {
    let (mut store, cc) = instantiate();
    let compiler = cc.agent_context_compiler_compiler();
    let s = new_session(&mut store, &cc, "seen");
    record_turns(
        &mut store,
        &cc,
        s,
        (0..20).map(|i| (format!("question {i}"), format!("answer {i}"))),
    );
    let options = zoned_options();
    let window = [Processor::HistorySelector(HistorySelectorOptions {
        keep_first: 1,
        keep_last: 4,
    })];
    let compile = |store: &mut Store<Host>| {
        compiler
            .call_compile_with(&mut *store, s, 20_000, &options, &window, &[])
            .unwrap()
            .unwrap()
    };
    let first = compile(&mut store);
    let (ledger, sum) = ledger(&mut store, &cc, s, &first.context_json);
    assert_eq!(sum, first.token_count);
    let window_entry = ledger["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["reason"] == "window")
        .cloned()
        .expect("a window entry");
    assert!(
        window_entry["count"].as_u64().unwrap() > 20,
        "{window_entry}"
    );
    // The same compile again repeats the whole previous context.
    let second = compile(&mut store);
    let ctx: WorkingContext = serde_json::from_str(&second.context_json).unwrap();
    let cache = ctx.cache.expect("a cache report");
    assert!(cache.miss.is_none(), "{cache:?}");
    assert_eq!(cache.prefix_tokens, second.token_count);
    // A context that is not JSON is an error result, not a trap.
    let bad = compiler.call_ledger(&mut store, s, "{not json").unwrap();
    assert_eq!(code(bad), ErrorCode::InvalidArgument);
}

/// A new session with the id `id`.
fn new_session(store: &mut Store<Host>, cc: &ContextCompiler, id: &str) -> ResourceAny {
    cc.agent_context_compiler_sessions()
        .session()
        .call_constructor(store, Some(id))
        .unwrap()
}

/// Records each (user input, assistant answer) of `turns` in `s`, in order.
fn record_turns(
    store: &mut Store<Host>,
    cc: &ContextCompiler,
    s: ResourceAny,
    turns: impl IntoIterator<Item = (String, String)>,
) {
    let sessions = cc.agent_context_compiler_sessions().session();
    for (question, answer) in turns {
        for (kind, text) in [("user_input", question), ("assistant_output", answer)] {
            sessions
                .call_record(&mut *store, s, kind, &json!(text).to_string(), None)
                .unwrap()
                .unwrap();
        }
    }
}

/// The `name` of each object in the JSON array `list` (tool definitions).
fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["name"].as_str())
        .collect()
}

/// Zoned compile options, a short system prompt and everything else at
/// its default.
/// [`zoned_options`] with the media store, rendered in `format` for `model`.
fn media_options(format: MessageFormat, model: &str) -> CompileOptions {
    let mut options = zoned_options();
    options.media_store = true;
    options.format = Some(format);
    options.model = Some(model.into());
    options
}

fn zoned_options() -> CompileOptions {
    CompileOptions {
        layout: Layout::Zoned,
        system_prompt: "Be brief.".into(),
        policies: vec![],
        tool_definitions_json: None,
        user_preferences_json: None,
        goal: None,
        state_digest_json: None,
        task_state: None,
        media_store: false,
        tools: Vec::new(),
        format: None,
        model: None,
        reserve_output: None,
        usage_margin: None,
    }
}

/// What 0.2.0 added reaches the core: media attached and inlined from the
/// store, tools and the reply's reserve counted, a model's rules in
/// rendering, `check-request`, usage and whole replies recorded, content
/// stored and read back, the look-back tools' definitions.
#[test]
fn media_tools_reserve_usage_and_replies_cross_the_boundary() {
    let (mut store, cc) = instantiate();
    let sessions = cc.agent_context_compiler_sessions().session();
    let s = new_session(&mut store, &cc, "media");
    let png =
        std::fs::read(common::golden::repo_root().join("tests/fixtures/media/icon.png")).unwrap();
    let artifacts = cc.agent_context_compiler_artifact_store();
    let part = artifacts
        .call_attach_media(
            &mut store,
            &png,
            &AttachMediaOptions {
                media_type: None,
                filename: None,
                detail: Some("low".into()),
                source: None,
                session_id: Some("media".into()),
            },
        )
        .unwrap()
        .unwrap();
    let part: Value = serde_json::from_str(&part).unwrap();
    assert_eq!(part["mediaType"], "image/png");
    let bad = artifacts
        .call_attach_media(
            &mut store,
            b"not an image",
            &AttachMediaOptions {
                media_type: None,
                filename: None,
                detail: None,
                source: None,
                session_id: None,
            },
        )
        .unwrap()
        .unwrap_err();
    assert_eq!(bad.code, ErrorCode::InvalidArgument);
    let data = json!({"text": "What is in this icon?", "media": [part]}).to_string();
    sessions
        .call_record(&mut store, s, "user_input", &data, None)
        .unwrap()
        .unwrap();
    let compiler = cc.agent_context_compiler_compiler();
    let mut options = media_options(MessageFormat::Openai, "gpt-4.1");
    options.reserve_output = Some(1_000);
    options.tools = vec![ToolSpec {
        name: "echo".into(),
        description: Some("Echoes".into()),
        parameters_json: None,
        timeout_ms: None,
        needs_approval: None,
    }];
    let compiled = compiler
        .call_compile_with(&mut store, s, 3_000, &options, &[], &[])
        .unwrap()
        .unwrap();
    assert!(compiled.token_count <= 2_000, "{}", compiled.token_count);
    let request = compiled.messages_json;
    assert!(request.contains("data:image/png;base64,"));
    let format = FormatOptions {
        format: Some(MessageFormat::Openai),
        model: Some("gpt-4.1".into()),
    };
    // Rendered again from the context JSON, the image is named, not inlined.
    let again = compiler
        .call_to_messages(&mut store, &compiled.context_json, &format)
        .unwrap()
        .unwrap();
    assert!(!again.contains("data:image/png;base64,"));
    let violations = compiler
        .call_check_request(&mut store, &request, &format)
        .unwrap()
        .unwrap();
    assert_eq!(violations, "[]");
    let broken = compiler
        .call_check_request(&mut store, r#"[{"role":"tool","content":"x"}]"#, &format)
        .unwrap()
        .unwrap();
    assert_ne!(broken, "[]");
    // The tools are counted in the SYSTEM zone; the reserve is kept out
    // of the budget.
    let plain = compiler
        .call_compile_with(&mut store, s, 3_000, &zoned_options(), &[], &[])
        .unwrap()
        .unwrap();
    let system = |c: &str| serde_json::from_str::<Value>(c).unwrap()["zoneUsage"]["system"].clone();
    assert!(system(&plain.context_json).as_u64() < system(&compiled.context_json).as_u64());
    let mut reserved = zoned_options();
    reserved.reserve_output = Some(2_990);
    let e = compiler
        .call_compile_with(&mut store, s, 3_000, &reserved, &[], &[])
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::BudgetTooSmall, "{}", e.message);

    let usage = sessions
        .call_record_usage(
            &mut store,
            s,
            r#"{"prompt_tokens": 700, "completion_tokens": 20}"#,
            UsageOptions {
                counted_tokens: Some(650),
            },
        )
        .unwrap()
        .unwrap();
    assert!(usage.contains("model_usage"));
    let reply = sessions
        .call_record_reply(
            &mut store,
            s,
            &json!({"content": "Let me look.", "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "echo", "arguments": "{\"q\":1}"}},
                {"id": "c2", "type": "function", "function": {"name": "echo", "arguments": "{bad"}}]})
            .to_string(),
        )
        .unwrap()
        .unwrap();
    let reply: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(reply["toolCalls"][0]["callOptions"]["callId"], "c1");
    assert_eq!(reply["refused"].as_array().map(Vec::len), Some(1));
    let e = sessions
        .call_record_reply(&mut store, s, "42")
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);

    // A provider's own compaction: recorded as it came, sent first in its
    // format in place of the turns before it, left out of the others.
    let compacted = json!({"object": "response.compaction", "output": [
        {"type": "message", "role": "user", "content": "Earlier question."},
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAABopaque"}]});
    let event = sessions
        .call_record_compaction(&mut store, s, &compacted.to_string(), "openai-responses")
        .unwrap()
        .unwrap();
    assert!(event.contains("provider_compaction"), "{event}");
    let e = sessions
        .call_record_compaction(&mut store, s, "{}", "gemini")
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    sessions
        .call_record(&mut store, s, "user_input", "\"And now?\"", None)
        .unwrap()
        .unwrap();
    let mut request_in = |format: MessageFormat| {
        let mut options = zoned_options();
        options.format = Some(format);
        let ctx = compiler
            .call_compile_with(&mut store, s, 3_000, &options, &[], &[])
            .unwrap()
            .unwrap();
        to_messages(&mut store, &cc, &ctx.context_json, format)
    };
    let request = request_in(MessageFormat::OpenaiResponses);
    assert_eq!(
        request["input"].as_array().unwrap()[..2],
        compacted["output"].as_array().unwrap()[..]
    );
    let request = request_in(MessageFormat::Anthropic);
    assert!(!request.to_string().contains("gAAAAABopaque"));

    let handle = artifacts
        .call_store_content(
            &mut store,
            b"hello store",
            "tool:test",
            &StoreOptions {
                mime_type: None,
                session_id: Some("media".into()),
            },
        )
        .unwrap()
        .unwrap();
    let handle: Value = serde_json::from_str(&handle).unwrap();
    let id = handle["artifactId"].as_str().unwrap();
    let back = artifacts.call_retrieve(&mut store, id).unwrap().unwrap();
    assert_eq!(back.as_deref(), Some(&b"hello store"[..]));
    // "hello store" in base64, for hosts that take text more cheaply.
    let text = artifacts
        .call_retrieve_base64(&mut store, id)
        .unwrap()
        .unwrap();
    assert_eq!(text.as_deref(), Some("aGVsbG8gc3RvcmU="));
    assert_eq!(
        artifacts
            .call_retrieve(&mut store, &"0".repeat(64))
            .unwrap()
            .unwrap(),
        None
    );
    let small = BackendOptions {
        chunk_bytes: Some(1),
        prefix: None,
    };
    let e = artifacts
        .call_select(&mut store, &Backend::HostKv, &small)
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);

    let defs: Value = serde_json::from_str(
        &compiler
            .call_look_back_tool_definitions(&mut store)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(names(&defs), ["search_history", "read_artifact"]);
}

/// History recall ranks with the host's embedder (given the timeout the
/// options set), and the compactor summarises with the host's text model.
#[test]
fn the_host_embedder_and_text_model_serve_the_processors() {
    let (mut store, cc) = instantiate();
    let sessions = cc.agent_context_compiler_sessions().session();
    let s = new_session(&mut store, &cc, "models");
    record_turns(
        &mut store,
        &cc,
        s,
        (0..30).map(|i| {
            (
                format!("question {i} about the deployment of service {i} and its logs"),
                format!("answer {i}: the service {i} deploys with three replicas and writes its logs to the shared volume"),
            )
        }),
    );
    sessions
        .call_record(
            &mut store,
            s,
            "user_input",
            r#""What did we say about service 3?""#,
            None,
        )
        .unwrap()
        .unwrap();
    let compiler = cc.agent_context_compiler_compiler();
    let mut recall = recall_options();
    recall.embedder = true;
    recall.embedder_timeout_ms = Some(1_234);
    recall.min_distinction = Some(0.0);
    let window = [
        Processor::HistorySelector(HistorySelectorOptions {
            keep_first: 1,
            keep_last: 4,
        }),
        Processor::HistoryRecall(recall),
    ];
    compiler
        .call_compile_with(&mut store, s, 4_000, &zoned_options(), &window, &[])
        .unwrap()
        .unwrap();
    let embedded = store.data().embed_calls.clone();
    assert!(!embedded.is_empty());
    assert!(embedded.iter().all(|(n, _, t)| *n > 0 && *t == 1_234));
    // The question alone first, as a query; the turns as passages.
    use agent::context_compiler::embedder::EmbedRole;
    assert!(
        matches!(embedded[0], (1, EmbedRole::Query, _)),
        "{embedded:?}"
    );
    assert!(embedded[1..]
        .iter()
        .all(|(_, r, _)| matches!(r, EmbedRole::Passage)));

    let summarising = [
        Processor::HistorySelector(HistorySelectorOptions {
            keep_first: 1,
            keep_last: u32::MAX,
        }),
        Processor::Compactor(CompactorOptions {
            target: Some(0.4),
            summarizer: true,
        }),
    ];
    // The session grows under a fixed budget until the compactor folds.
    let c = new_session(&mut store, &cc, "compaction");
    let mut summary = None;
    for i in 0..80 {
        let text = format!(
            "step {i}: the nightly job failed on db-primary with a retry storm of {i} attempts"
        );
        sessions
            .call_record(&mut store, c, "user_input", &json!(text).to_string(), None)
            .unwrap()
            .unwrap();
        let compiled = compiler
            .call_compile_with(&mut store, c, 1_500, &zoned_options(), &summarising, &[])
            .unwrap()
            .unwrap();
        if compiled.context_json.contains("host summary of") {
            summary = Some(i);
            break;
        }
    }
    assert!(summary.is_some(), "never compacted");
    assert!(!store.data().llm_calls.is_empty());
    let budget = 1_500;
    let e = compiler
        .call_compile_with(
            &mut store,
            s,
            budget,
            &zoned_options(),
            &[Processor::Compactor(CompactorOptions {
                target: Some(0.9),
                summarizer: false,
            })],
            &[],
        )
        .unwrap()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

/// The look-back tools answer a host's call over the session and the
/// selected store: a page of the stored output (redacted), search results,
/// and `invalid-argument` for what the tools do not take; an unread output
/// reaches the compiled context whole.
#[test]
fn look_back_reads_the_sessions_stored_output_and_unread_outputs_are_whole() {
    let (mut store, cc) = instantiate();
    let session = new_session(&mut store, &cc, "look-back");
    let sessions = cc.agent_context_compiler_sessions().session();
    sessions
        .call_record(
            &mut store,
            session,
            "user_input",
            "\"List the files\"",
            None,
        )
        .unwrap()
        .unwrap();
    let options = CallOptions {
        timeout_ms: Some(1_000),
        externalize_threshold: Some(1024),
        call_id: Some("c1".into()),
        thought_signature: None,
        reasoning_json: None,
    };
    let event: Value = serde_json::from_str(
        &cc.agent_context_compiler_tools()
            .call_call_tool(&mut store, session, None, "listing", "{}", &options)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    let handle = event["artifact"]["artifactId"]
        .as_str()
        .unwrap()
        .to_string();
    let look_back = |store: &mut Store<Host>, name: &str, args: Value| {
        sessions
            .call_look_back(store, session, name, &args.to_string())
            .unwrap()
            .map(|json| serde_json::from_str::<Value>(&json).unwrap())
    };
    let page = look_back(
        &mut store,
        "read_artifact",
        json!({"handle": handle, "length": 200}),
    )
    .unwrap();
    assert_eq!(page["offset"], 0);
    assert_eq!(page["bytes"], 200);
    assert!(page["nextOffset"].is_u64());
    let last = page["totalBytes"].as_u64().unwrap() - 300;
    let tail = look_back(
        &mut store,
        "read_artifact",
        json!({"handle": handle, "offset": last}),
    )
    .unwrap();
    assert!(tail["nextOffset"].is_null());
    let text = tail["text"].as_str().unwrap();
    assert!(text.contains("src/file_299.rs"));
    assert!(
        !text.contains("sk-live-0123456789abcdefghijklmnop"),
        "redacted"
    );
    let found = look_back(&mut store, "search_history", json!({"query": "files"})).unwrap();
    assert!(!found["results"].as_array().unwrap().is_empty());
    for (name, args) in [
        ("read_artifact", json!({"handle": "0".repeat(64)})),
        ("read_artifact", json!({})),
        ("rm", json!({})),
    ] {
        let e = look_back(&mut store, name, args).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{}", e.message);
    }
    // The model has not read it: the next compile shows it whole.
    let attach = [
        Processor::HistorySelector(HistorySelectorOptions {
            keep_first: 1,
            keep_last: u32::MAX,
        }),
        Processor::ArtifactAttacher(ArtifactAttacherOptions {
            threshold_bytes: 1024,
            keep_unread: None,
        }),
    ];
    let compiled = cc
        .agent_context_compiler_compiler()
        .call_compile_with(&mut store, session, 100_000, &zoned_options(), &attach, &[])
        .unwrap()
        .unwrap();
    let messages = to_messages(
        &mut store,
        &cc,
        &compiled.context_json,
        MessageFormat::Openai,
    );
    let tool = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(tool["content"]
        .as_str()
        .unwrap()
        .contains("src/file_299.rs"));
}

/// Issue 62, item 1: a 0.2 KB PDF whose object stream claims
/// `/Length 4294967290` overflowed the page counter's 32-bit `usize` and
/// trapped the instance. Through the component (wasm32) it is counted
/// (read to its `endstream`), compiled and checked in a request, and the
/// instance stays usable.
#[test]
fn a_pdf_claiming_a_length_near_4_gib_is_counted_and_the_instance_stays_usable() {
    let (mut store, cc) = instantiate();
    let pdf =
        std::fs::read(common::golden::repo_root().join("tests/fixtures/fuzz/length-overflow.pdf"))
            .unwrap();
    let artifacts = cc.agent_context_compiler_artifact_store();
    let part = artifacts
        .call_attach_media(
            &mut store,
            &pdf,
            &AttachMediaOptions {
                media_type: None,
                filename: Some("hostile.pdf".into()),
                detail: None,
                source: None,
                session_id: Some("pdf".into()),
            },
        )
        .expect("no trap")
        .expect("a PDF");
    let part: Value = serde_json::from_str(&part).unwrap();
    assert_eq!(
        (part["type"].as_str(), part["pages"].as_u64()),
        (Some("file"), Some(1))
    );
    let s = new_session(&mut store, &cc, "pdf");
    let data = json!({"text": "Summarise the report.", "media": [part]}).to_string();
    cc.agent_context_compiler_sessions()
        .session()
        .call_record(&mut store, s, "user_input", &data, None)
        .unwrap()
        .unwrap();
    let compiler = cc.agent_context_compiler_compiler();
    let options = media_options(MessageFormat::Anthropic, "claude-sonnet-4");
    let compiled = compiler
        .call_compile_with(&mut store, s, 20_000, &options, &[], &[])
        .expect("no trap")
        .unwrap();
    assert!(compiled.messages_json.contains("application/pdf"));
    let format = FormatOptions {
        format: Some(MessageFormat::Anthropic),
        model: Some("claude-sonnet-4".into()),
    };
    let violations = compiler
        .call_check_request(&mut store, &compiled.messages_json, &format)
        .expect("no trap")
        .unwrap();
    assert_eq!(violations, "[]");
    // A later, unrelated call in the same instance.
    let other = new_session(&mut store, &cc, "later");
    record_turns(
        &mut store,
        &cc,
        other,
        [("still here?".to_string(), "yes".to_string())],
    );
}
