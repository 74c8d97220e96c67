//! The TypeScript declarations of the data types the bindings hand out,
//! generated from the Rust types with `ts-rs` (derived under `cfg(test)`
//! only: no code in any build). The unit test below compares what it
//! generates with `js/types/`, so a Rust type that changes without its
//! declaration fails `cargo test`; `UPDATE_TYPES=1 cargo test --lib
//! typescript` rewrites the directory. The binding crates' declarations
//! import these files (`crates/*/src/types.rs`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use ts_rs::{Config, TS};

// The type a `serde_json::Value` field is declared as
// (`#[ts(as = "crate::typescript::Json")]`).
/// Any JSON value.
#[derive(TS)]
#[ts(type = "null | boolean | number | string | Json[] | { [key: string]: Json }")]
pub(crate) struct Json;

/// A JSON object: the type of a `serde_json::Map` field.
pub(crate) type JsonObject = BTreeMap<String, Json>;

/// Where the declarations live, from the crate root.
const TYPES_DIR: &str = "js/types";

/// Every file `ts-rs` writes for `T` and the types it uses, by path.
fn export<T: TS + 'static>(files: &mut BTreeMap<PathBuf, String>) {
    let scratch = std::env::temp_dir().join(format!(
        "context-compiler-ts-{}-{}",
        std::process::id(),
        std::any::type_name::<T>().replace(':', "_")
    ));
    let _ = fs::remove_dir_all(&scratch);
    let cfg = Config::new()
        .with_large_int("number")
        .with_import_extension(Some("js"))
        .with_out_dir(&scratch);
    T::export_all(&cfg).expect("ts-rs exports the type");
    collect(&scratch, &scratch, true, files);
    let _ = fs::remove_dir_all(&scratch);
}

/// Reads the files under `dir`, by path relative to `root`; with
/// `as_declarations`, `X.ts` is named `X.d.ts` (its `./Y.js` imports
/// resolve to `Y.d.ts`).
fn collect(root: &Path, dir: &Path, as_declarations: bool, files: &mut BTreeMap<PathBuf, String>) {
    for entry in fs::read_dir(dir).expect("the export directory exists") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect(root, &path, as_declarations, files);
        } else {
            let relative = path.strip_prefix(root).expect("under the root");
            let name = if as_declarations {
                relative.with_extension("d.ts")
            } else {
                relative.to_path_buf()
            };
            files.insert(name, fs::read_to_string(&path).expect("a generated file"));
        }
    }
}

/// The declarations of every data type the bindings hand out.
fn declarations() -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    export::<crate::session::SessionEvent>(&mut files);
    export::<crate::session::EvidencePack>(&mut files);
    export::<crate::session::SaveReport>(&mut files);
    export::<crate::session::SyncReport>(&mut files);
    export::<crate::artifacts::ArtifactHandle>(&mut files);
    export::<crate::bus::BusEvent>(&mut files);
    export::<crate::bus::BusStats>(&mut files);
    export::<crate::normalize::schemas::ValidationResult>(&mut files);
    export::<crate::context_window::CompiledContext>(&mut files);
    export::<crate::context_window::ContextItem>(&mut files);
    export::<crate::context_window::ContextStats>(&mut files);
    export::<crate::recall::SearchHit>(&mut files);
    export::<crate::working_context::RecalledTurn>(&mut files);
    export::<crate::working_context::Ledger>(&mut files);
    export::<crate::working_context::CacheReport>(&mut files);
    export::<crate::budget::BudgetPlan>(&mut files);
    export::<crate::session::ModelUsage>(&mut files);
    export::<crate::session::PendingApproval>(&mut files);
    files
}

/// The files in `dir`, by path relative to it.
fn committed(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    if dir.is_dir() {
        collect(dir, dir, false, &mut files);
    }
    files
}

#[test]
fn typescript_declarations_match_the_rust_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(TYPES_DIR);
    let generated = declarations();
    if std::env::var_os("UPDATE_TYPES").is_some() {
        let _ = fs::remove_dir_all(&dir);
        for (name, text) in &generated {
            let path = dir.join(name);
            fs::create_dir_all(path.parent().expect("a parent")).expect("the types directory");
            fs::write(path, text).expect("a declaration written");
        }
    }
    let on_disk = committed(&dir);
    let names = |files: &BTreeMap<PathBuf, String>| files.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&on_disk),
        names(&generated),
        "{TYPES_DIR} holds other files than the Rust types generate: run UPDATE_TYPES=1 cargo test --lib typescript"
    );
    for (name, text) in &generated {
        assert_eq!(
            on_disk.get(name),
            Some(text),
            "{TYPES_DIR}/{} is not what the Rust type generates: run UPDATE_TYPES=1 cargo test --lib typescript",
            name.display()
        );
    }
}
