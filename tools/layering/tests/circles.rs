//! ARCHITECTURE.md's rule 3 on the workspace: no import circles. And the
//! check itself, on small workspaces written for it: it finds a circle
//! through `super::`, a re-export and another crate, and counts neither a
//! module's paths to its own children nor a path it only names in a macro.
use std::fs;
use std::path::{Path, PathBuf};

use agent_context_compiler_layering::{
    circles, describe, describe_modules, module_circles, workspace_graph, Graph,
};

fn report(graph: &Graph) -> String {
    circles(graph)
        .iter()
        .map(|c| format!("circle of {} files:\n{}", c.len(), describe(graph, c)))
        .collect()
}

#[test]
fn the_workspace_has_no_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let graph = workspace_graph(&root).expect("the workspace reads");
    assert!(graph.files.len() > 150, "{} files read", graph.files.len());
    assert!(graph.edges.len() > 500, "{} edges", graph.edges.len());
    let found = report(&graph);
    assert!(
        found.is_empty(),
        "ARCHITECTURE.md rule 3 (no import circles):\n{found}"
    );
}

/// A workspace in a fresh directory: `files` as (path, text).
fn workspace(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("layering-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }
    dir
}

const MANIFEST: &str = "[workspace]\nmembers = [\".\", \"other\"]\n\n[package]\nname = \"core-crate\"\n\n[lib]\nname = \"core_crate\"\n\n[dependencies]\nother = { path = \"other\" }\n";
const OTHER: &str =
    "[package]\nname = \"other\"\n\n[dependencies]\ncore-crate = { path = \"..\" }\n";

fn circle_names(graph: &Graph) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = circles(graph)
        .iter()
        .map(|c| {
            let mut names: Vec<String> = c
                .iter()
                .map(|&f| graph.files[f].to_string_lossy().replace('\\', "/"))
                .collect();
            names.sort();
            names
        })
        .collect();
    found.sort();
    found
}

#[test]
fn a_circle_through_super_a_re_export_and_another_crate_is_found() {
    let dir = workspace(
        "found",
        &[
            ("Cargo.toml", MANIFEST),
            ("other/Cargo.toml", OTHER),
            // a.rs takes Thing through the root's re-export of b; b.rs takes
            // Helper from its parent, a.rs, with `super::`.
            (
                "src/lib.rs",
                "pub mod a;\npub mod c;\npub use a::b::Thing;\n",
            ),
            (
                "src/a.rs",
                "pub mod b;\npub fn helper() -> crate::Thing { crate::Thing }\n",
            ),
            (
                "src/a/b.rs",
                "pub struct Thing;\nfn f() { super::helper(); }\n",
            ),
            // c.rs and other's lib.rs name each other across the crates.
            (
                "src/c.rs",
                "pub struct C;\nfn g() -> other::O { other::O }\n",
            ),
            (
                "other/src/lib.rs",
                "pub struct O;\nfn h() -> core_crate::c::C { core_crate::c::C }\n",
            ),
        ],
    );
    let graph = workspace_graph(&dir).expect("reads");
    assert_eq!(
        circle_names(&graph),
        [
            vec!["other/src/lib.rs".to_string(), "src/c.rs".to_string()],
            vec!["src/a.rs".to_string(), "src/a/b.rs".to_string()],
        ],
        "{}",
        report(&graph)
    );
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn a_modules_paths_to_its_children_macros_and_tests_are_not_edges() {
    let dir = workspace(
        "clean",
        &[
            ("Cargo.toml", "[package]\nname = \"solo\"\n\n[workspace]\nmembers = [\".\"]\n"),
            // The parent declares, re-exports and calls its child; the
            // child takes the parent's type: one direction only.
            (
                "src/lib.rs",
                "mod kid;\npub use kid::Kid;\npub struct Root;\npub fn f() { kid::run(); self::kid::run(); }\n#[cfg(test)]\nmod tests { fn t() { crate::kid::run(); } }\n",
            ),
            (
                "src/kid.rs",
                "pub struct Kid(crate::Root);\npub fn run() {}\nfn m() { format!(\"{}\", stringify!(crate::kid::run)); }\n#[cfg(test)]\nmod tests { use crate::f; }\n",
            ),
        ],
    );
    let graph = workspace_graph(&dir).expect("reads");
    assert!(circles(&graph).is_empty(), "{}", report(&graph));
    let edges: Vec<_> = graph
        .edges
        .iter()
        .map(|((a, b), names)| {
            (
                graph.files[*a].clone(),
                graph.files[*b].clone(),
                names.clone(),
            )
        })
        .collect();
    assert_eq!(edges.len(), 1, "{edges:?}");
    assert_eq!(edges[0].0, Path::new("src/kid.rs"));
    assert_eq!(edges[0].1, Path::new("src/lib.rs"));
    let _ = fs::remove_dir_all(dir);
}

fn module_report(graph: &Graph) -> String {
    module_circles(graph)
        .iter()
        .map(|c| {
            format!(
                "circle of modules {}:\n{}",
                c.join(", "),
                describe_modules(graph, c)
            )
        })
        .collect()
}

#[test]
fn the_workspace_has_no_circle_between_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let graph = workspace_graph(&root).expect("the workspace reads");
    let found = module_report(&graph);
    assert!(
        found.is_empty(),
        "ARCHITECTURE.md rule 3 (no circles between modules):\n{found}"
    );
}

#[test]
fn a_circle_between_modules_with_no_circle_between_files_is_found() {
    let dir = workspace(
        "modules",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"solo\"\n\n[workspace]\nmembers = [\".\"]\n",
            ),
            // up/x.rs takes from down/y.rs, down/z.rs from up/w.rs: no
            // circle of files, two modules in a circle. `deep` has a circle
            // between its children, `p` and `q`. In `relay`, `a` takes from
            // `b`, `b` from relay's own file, and that file from `a` (each a
            // different file of `a`): a circle through the parent's file. The crate root's file
            // defines `Root`, which down/y.rs takes: an edge up to it alone.
            (
                "src/lib.rs",
                "pub mod up;\npub mod down;\npub mod deep;\npub mod relay;\npub struct Root;\n",
            ),
            (
                "src/relay/mod.rs",
                "pub mod a;\npub mod b;\npub fn h() -> crate::relay::a::one::A { crate::relay::a::one::A }\n",
            ),
            ("src/relay/a/mod.rs", "pub mod one;\npub mod two;\n"),
            ("src/relay/a/one.rs", "pub struct A;\n"),
            ("src/relay/a/two.rs", "pub fn f() -> crate::relay::b::B { todo!() }\n"),
            (
                "src/relay/b.rs",
                "pub struct B;\npub fn g() { super::h(); }\n",
            ),
            ("src/up/mod.rs", "pub mod x;\npub mod w;\n"),
            (
                "src/up/x.rs",
                "pub fn x() -> crate::down::y::Y { todo!() }\n",
            ),
            ("src/up/w.rs", "pub struct W;\n"),
            ("src/down/mod.rs", "pub mod y;\npub mod z;\n"),
            ("src/down/y.rs", "pub struct Y(crate::Root);\n"),
            (
                "src/down/z.rs",
                "pub fn z() -> crate::up::w::W { crate::up::w::W }\n",
            ),
            ("src/deep/mod.rs", "pub mod p;\npub mod q;\n"),
            ("src/deep/p/mod.rs", "pub mod one;\npub mod two;\n"),
            (
                "src/deep/p/one.rs",
                "pub fn one() { crate::deep::q::three(); }\n",
            ),
            ("src/deep/p/two.rs", "pub fn two() {}\n"),
            (
                "src/deep/q.rs",
                "pub fn three() {}\npub fn four() { super::p::two::two(); }\n",
            ),
        ],
    );
    let graph = workspace_graph(&dir).expect("reads");
    assert!(circles(&graph).is_empty(), "{}", report(&graph));
    assert_eq!(
        module_circles(&graph),
        [
            vec!["solo::deep::p".to_string(), "solo::deep::q".to_string()],
            vec!["solo::down".to_string(), "solo::up".to_string()],
            vec![
                "solo::relay::(own file)".to_string(),
                "solo::relay::a".to_string(),
                "solo::relay::b".to_string(),
            ],
        ]
    );
    let relayed = describe_modules(&graph, &module_circles(&graph)[2]);
    assert!(
        relayed.contains(
            "solo::relay::b -> solo::relay::(own file): src/relay/b.rs -> src/relay/mod.rs: h"
        ),
        "{relayed}"
    );
    let described = describe_modules(&graph, &module_circles(&graph)[1]);
    assert!(
        described.contains("solo::down -> solo::up: src/down/z.rs -> src/up/w.rs: W"),
        "{described}"
    );
    let _ = fs::remove_dir_all(dir);
}
