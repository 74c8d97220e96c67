//! Reading the golden fixtures (tests/fixtures/golden), shared by the Rust
//! golden test and the wasmtime host test.

use serde_json::{json, Value};

const BASE_MS: u64 = 1_700_000_000_000;

/// The export document a fixture's events stand for (ids and times fixed).
pub fn export_doc(fixture: &Value) -> Value {
    let events: Vec<Value> = fixture["events"]
        .as_array()
        .expect("events")
        .iter()
        .enumerate()
        .map(|(i, e)| {
            json!({
                "eventId": format!("{:012x}-{:012x}", BASE_MS + i as u64, i),
                "timestamp": (BASE_MS + i as u64) as f64,
                "kind": e["kind"],
                "data": e["data"],
                "tokenEstimate": e.get("tokenEstimate").cloned().unwrap_or(json!(0)),
            })
        })
        .collect();
    json!({"format": "agent-context-compiler/session", "version": 1, "sessionId": fixture["sessionId"], "events": events})
}

/// A fixture's compile options (`compile.systemPrompt` and `compile.options`).
pub fn compile_options(compile: &Value) -> context_compiler::CompileOptions {
    let o = &compile["options"];
    let text = |k: &str| o[k].as_str().map(str::to_string);
    context_compiler::CompileOptions {
        system_prompt: compile["systemPrompt"].as_str().unwrap_or("").to_string(),
        policies: o["policies"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        tool_definitions: o["toolDefinitions"].as_array().cloned().unwrap_or_default(),
        user_preferences: o.get("userPreferences").cloned(),
        goal: text("goal"),
        state_digest: o.get("stateDigest").cloned(),
        task_state: text("taskState"),
        ..Default::default()
    }
}

pub fn limit(v: &Value, default: usize) -> usize {
    match v {
        Value::String(s) if s == "Infinity" => usize::MAX,
        Value::Number(n) => n.as_u64().expect("count") as usize,
        _ => default,
    }
}

/// The repository's root: this crate's directory, or the nearest one above
/// it holding `tests/fixtures` (the component crate's tests share these).
pub fn repo_root() -> std::path::PathBuf {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|dir| dir.join("tests/fixtures/golden").is_dir())
        .unwrap_or(here)
        .to_path_buf()
}

/// Every golden fixture, parsed, with its path, sorted by name.
pub fn fixtures() -> Vec<(std::path::PathBuf, Value)> {
    let dir = repo_root().join("tests/fixtures/golden");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    assert!(paths.len() >= 6);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let v = serde_json::from_str(&text).unwrap();
            (p, v)
        })
        .collect()
}
