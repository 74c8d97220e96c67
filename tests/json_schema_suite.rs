//! The official JSON-Schema-Test-Suite (required tests of draft 2020-12 and
//! draft 7) through `SchemaRegistry`, with the suite's `remotes/` documents
//! added as resources under `http://localhost:1234/` (no network).
//!
//! Fails if a test outside the committed list of known failures
//! (tests/fixtures/json_schema_suite_known_failures.json) fails, or if the
//! pass rate of a draft drops below 99%. `UPDATE_KNOWN_FAILURES=1` rewrites
//! the list.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use context_compiler::normalize::schemas::{Dialect, SchemaRegistry};
use serde_json::Value;

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/json-schema-test-suite")
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    out
}

fn remotes(dir: &Path, base: &Path, out: &mut Vec<(String, Value)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            remotes(&p, base, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            out.push((format!("http://localhost:1234/{rel}"), doc));
        }
    }
}

/// Runs one draft; returns (passed, total, failures by name).
fn run(draft: &str, dialect: Dialect) -> (usize, usize, Vec<String>) {
    let mut registry = SchemaRegistry::with_default_dialect(dialect);
    let mut docs = Vec::new();
    let remote_dir = suite().join("remotes");
    remotes(&remote_dir, &remote_dir, &mut docs);
    for (uri, doc) in docs {
        // A few remotes belong to other drafts' tests and may not load; skip those.
        let _ = registry.add_resource(&uri, doc);
    }
    let (mut passed, mut total, mut failures) = (0, 0, Vec::new());
    for file in json_files(&suite().join(draft)) {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let groups: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for group in groups.as_array().unwrap() {
            let gdesc = group["description"].as_str().unwrap_or("");
            let compiled = registry.compile(&group["schema"]);
            for t in group["tests"].as_array().unwrap() {
                total += 1;
                let id = format!(
                    "{draft}/{name} / {gdesc} / {}",
                    t["description"].as_str().unwrap_or("")
                );
                let ok = match &compiled {
                    Ok(v) => v.validate(&t["data"]).valid == t["valid"].as_bool().unwrap(),
                    Err(_) => false,
                };
                if ok {
                    passed += 1;
                } else {
                    failures.push(id);
                }
            }
        }
    }
    (passed, total, failures)
}

#[test]
fn official_suite_draft2020_12_and_draft7() {
    let known_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/json_schema_suite_known_failures.json");
    let mut all = BTreeMap::new();
    let mut summary = Vec::new();
    for (draft, dialect) in [
        ("draft2020-12", Dialect::Draft202012),
        ("draft7", Dialect::Draft7),
    ] {
        let (passed, total, failures) = run(draft, dialect);
        let rate = passed as f64 / total as f64;
        summary.push(format!("{draft}: {passed}/{total} ({:.2}%)", rate * 100.0));
        assert!(rate >= 0.99, "{draft}: {passed}/{total} is below 99%");
        all.insert(draft.to_string(), failures);
    }
    eprintln!("{}", summary.join(", "));
    if std::env::var_os("UPDATE_KNOWN_FAILURES").is_some() {
        std::fs::write(
            &known_path,
            serde_json::to_string_pretty(&all).unwrap() + "\n",
        )
        .unwrap();
        return;
    }
    let known: BTreeMap<String, Vec<String>> =
        serde_json::from_str(&std::fs::read_to_string(&known_path).expect("known failures list"))
            .unwrap();
    for (draft, failures) in &all {
        let expected = known.get(draft).cloned().unwrap_or_default();
        let new: Vec<&String> = failures.iter().filter(|f| !expected.contains(f)).collect();
        assert!(
            new.is_empty(),
            "new failures in {draft}:\n{}",
            new.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
