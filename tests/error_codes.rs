//! The error codes have one source, `ErrorCode` (`src/error.rs`); every other
//! list of them must say the same, both ways: the WIT `error-code` enum, the
//! TypeScript `ErrorCode` union and the table in docs/errors.md. The npm package
//! adds the codes only JS can raise, which the WIT enum does not have.

use std::collections::BTreeSet;

use context_compiler::ErrorCode;

/// Codes only the npm package's JS layer raises (`js/module-guard.js` and the modules' loaders).
const JS_ONLY: &[&str] = &[
    "NOT_INITIALIZED",
    "OUT_OF_MEMORY",
    "INTERNAL_PANIC",
    "MODULE_POISONED",
];

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The text between `start` and the next `end`.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{start} not found"))
        + start.len();
    &text[from..from + text[from..].find(end).unwrap()]
}

fn rust_codes() -> Vec<String> {
    ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .collect()
}

fn with_js_only(codes: Vec<String>) -> BTreeSet<String> {
    codes
        .into_iter()
        .chain(JS_ONLY.iter().map(|c| c.to_string()))
        .collect()
}

#[test]
fn the_rust_codes_are_distinct_upper_snake_case() {
    let codes = rust_codes();
    assert_eq!(codes.iter().collect::<BTreeSet<_>>().len(), codes.len());
    for c in &codes {
        assert!(
            c.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_'),
            "{c}"
        );
    }
}

#[test]
fn the_wit_enum_is_the_rust_list_in_order() {
    let wit = read("wit/types.wit");
    let body = between(&wit, "enum error-code {", "}");
    let wit_codes: Vec<String> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("///") && l.ends_with(','))
        .map(|l| l.trim_end_matches(',').replace('-', "_").to_uppercase())
        .collect();
    assert_eq!(wit_codes, rust_codes());
}

#[test]
fn the_typescript_union_is_the_rust_list_and_the_js_only_codes() {
    let ts = read("crates/npm-wasm/src/types.rs");
    let union = between(&ts, "export type ErrorCode =", ";");
    let ts_codes: BTreeSet<String> = union
        .split('|')
        .map(|c| c.trim().trim_matches('"').to_string())
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(ts_codes, with_js_only(rust_codes()));
}

#[test]
fn the_error_codes_doc_explains_every_code_and_no_other() {
    let doc = read("docs/errors.md");
    let table = between(&doc, "| code | meaning |", "\n\n");
    let doc_codes: BTreeSet<String> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .map(|l| l[..l.find('`').unwrap()].to_string())
        .collect();
    assert_eq!(doc_codes, with_js_only(rust_codes()));
}

#[test]
fn the_js_only_codes_are_the_ones_the_js_layer_raises() {
    // The guard every module shares, and the modules' loaders.
    let js = ["js/module-guard.js", "js/instance.js", "js/lazy-module.js"]
        .map(read)
        .concat();
    for code in JS_ONLY {
        assert!(js.contains(&format!("\"{code}\"")), "{code}");
    }
}
