//! ARCHITECTURE.md's rule 3, checked: no import circles between the
//! workspace's Rust files.
//!
//! Nodes are files. An edge runs from a file to the file that defines an
//! item it names through a path from `crate::`, `super::` or another
//! workspace crate: in a `use`, or in code (directly or through a name such
//! a `use` brought in), followed through re-exports (`pub use`, globs
//! included) to the definition. A module's paths to its own children
//! (`child::x`, `self::x`: its `mod` declarations, its re-exports of them,
//! its calls into them) are not edges. `#[cfg(test)]` modules are left out. Paths inside
//! macro invocations are not seen (syn does not parse macro bodies).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::visit::Visit;
use syn::{Item, UseTree};

/// The files and the edges between them (with the names behind each).
#[derive(Debug, Default)]
pub struct Graph {
    /// The files, relative to the workspace root.
    pub files: Vec<PathBuf>,
    /// `(from, to)` file indices and the names `from` takes from `to`.
    pub edges: BTreeMap<(usize, usize), BTreeSet<String>>,
    /// Each file's module path: its crate's name, then the modules down to
    /// the one the file holds (`["agent_context_compiler", "media", "cost"]`).
    pub modules: Vec<Vec<String>>,
}

/// One crate of the workspace: its name in paths and its root file.
struct Crate {
    ident: String,
    root: PathBuf,
}

/// How a module brings a name in (`use`).
struct Import {
    /// The path, ending with the name taken, or `*` for a glob.
    path: Vec<String>,
    /// The name it is known by here (`*` for a glob).
    alias: String,
}

struct Module {
    file: usize,
    krate: usize,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    items: BTreeSet<String>,
    imports: Vec<Import>,
    /// Paths named in code (outside `use`), with two segments or more.
    paths: Vec<Vec<String>>,
}

/// What a path leads to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Module(usize),
    /// An item, defined in this file.
    Item(usize),
}

#[derive(Default)]
struct Workspace {
    crates: Vec<Crate>,
    modules: Vec<Module>,
    graph: Graph,
    file_index: BTreeMap<PathBuf, usize>,
}

/// The quoted string after `key =` on a TOML line, if it has one.
fn toml_string(line: &str, key: &str) -> Option<String> {
    let at = line.find(key)?;
    let rest = line[at + key.len()..].trim_start().strip_prefix('=')?;
    let rest = rest.trim_start().strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

/// The workspace's crates: each member's lib (or bin) root, named as the
/// other members' `path` dependencies name it, and by its own lib name.
fn crates(root: &Path) -> Result<Vec<Crate>, String> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let members: Vec<String> = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .map(|l| {
            l.split('"')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect()
        })
        .ok_or("the workspace manifest lists no members")?;
    let mut names: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut found = Vec::new();
    for member in &members {
        let dir = root.join(member);
        let text = fs::read_to_string(dir.join("Cargo.toml")).map_err(|e| e.to_string())?;
        let mut lib_name = None;
        let mut package = None;
        let mut section = String::new();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                section = line.to_string();
                continue;
            }
            match section.as_str() {
                "[package]" if line.starts_with("name") => package = toml_string(line, "name"),
                "[lib]" if line.starts_with("name") => lib_name = toml_string(line, "name"),
                s if s.ends_with("dependencies]") => {
                    if let (Some(path), Some(key)) =
                        (toml_string(line, "path"), line.split('=').next())
                    {
                        let target = fs::canonicalize(dir.join(path)).map_err(|e| e.to_string())?;
                        names
                            .entry(target)
                            .or_default()
                            .insert(key.trim().replace('-', "_"));
                    }
                }
                _ => {}
            }
        }
        let own = lib_name
            .or(package.map(|p| p.replace('-', "_")))
            .ok_or_else(|| format!("{member}: no package name"))?;
        let root_file = ["src/lib.rs", "src/main.rs"]
            .iter()
            .map(|f| dir.join(f))
            .find(|f| f.exists());
        if let Some(root_file) = root_file {
            found.push((
                fs::canonicalize(&dir).map_err(|e| e.to_string())?,
                own,
                root_file,
            ));
        }
    }
    let mut out = Vec::new();
    for (dir, own, root_file) in found {
        for ident in names
            .remove(&dir)
            .unwrap_or_default()
            .into_iter()
            .chain([own])
        {
            out.push(Crate {
                ident,
                root: root_file.clone(),
            });
        }
    }
    Ok(out)
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// Flattens a `use` tree into imports.
fn flatten(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Import>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => {
            let name = n.ident.to_string();
            let mut path = prefix.clone();
            path.push(name.clone());
            // `use a::{self}` names the module `a`.
            let (path, alias) = if name == "self" {
                path.pop();
                let alias = path.last().cloned().unwrap_or_default();
                (path, alias)
            } else {
                (path, name)
            };
            out.push(Import { path, alias });
        }
        UseTree::Rename(r) => {
            let mut path = prefix.clone();
            let name = r.ident.to_string();
            if name != "self" {
                path.push(name);
            }
            out.push(Import {
                path,
                alias: r.rename.to_string(),
            });
        }
        UseTree::Glob(_) => {
            let mut path = prefix.clone();
            path.push("*".into());
            out.push(Import {
                path,
                alias: "*".into(),
            });
        }
        UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix, out);
            }
        }
    }
}

/// Collects the paths named in code.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl<'ast> Visit<'ast> for Paths {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.segments.len() >= 2 {
            self.0
                .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, path);
    }
    fn visit_item_use(&mut self, _: &'ast syn::ItemUse) {}
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
}

impl Workspace {
    fn file(&mut self, path: &Path, root: &Path, module: Vec<String>) -> usize {
        let relative = path.strip_prefix(root).unwrap_or(path).to_path_buf();
        if let Some(&i) = self.file_index.get(&relative) {
            return i;
        }
        self.graph.files.push(relative.clone());
        self.graph.modules.push(module);
        self.file_index.insert(relative, self.graph.files.len() - 1);
        self.graph.files.len() - 1
    }

    /// Reads the module in `items` (of `file`, whose child modules are
    /// files under `dir`; `module_path` its path) and its children.
    #[allow(clippy::too_many_arguments)]
    fn module(
        &mut self,
        root: &Path,
        krate: usize,
        parent: Option<usize>,
        file: usize,
        dir: &Path,
        module_path: &[String],
        items: &[Item],
    ) -> Result<usize, String> {
        let id = self.modules.len();
        self.modules.push(Module {
            file,
            krate,
            parent,
            children: BTreeMap::new(),
            items: BTreeSet::new(),
            imports: Vec::new(),
            paths: Vec::new(),
        });
        let mut paths = Paths::default();
        for item in items {
            paths.visit_item(item);
            let name = match item {
                Item::Fn(i) => Some(&i.sig.ident),
                Item::Struct(i) => Some(&i.ident),
                Item::Enum(i) => Some(&i.ident),
                Item::Trait(i) => Some(&i.ident),
                Item::Type(i) => Some(&i.ident),
                Item::Const(i) => Some(&i.ident),
                Item::Static(i) => Some(&i.ident),
                Item::Union(i) => Some(&i.ident),
                Item::TraitAlias(i) => Some(&i.ident),
                Item::Macro(i) => i.ident.as_ref(),
                _ => None,
            };
            if let Some(name) = name {
                self.modules[id].items.insert(name.to_string());
            }
            match item {
                Item::Use(u) => {
                    let mut imports = Vec::new();
                    flatten(&u.tree, &mut Vec::new(), &mut imports);
                    self.modules[id].imports.extend(imports);
                }
                Item::Mod(m) if !is_cfg_test(&m.attrs) => {
                    let child_name = m.ident.to_string();
                    let mut path = module_path.to_vec();
                    path.push(child_name.clone());
                    let name = child_name;
                    let child = match &m.content {
                        Some((_, inner)) => self.module(
                            root,
                            krate,
                            Some(id),
                            file,
                            &dir.join(&name),
                            &path,
                            inner,
                        )?,
                        None => {
                            let flat = dir.join(format!("{name}.rs"));
                            let nested = dir.join(&name).join("mod.rs");
                            let (file_path, child_dir) = if flat.exists() {
                                (flat, dir.join(&name))
                            } else if nested.exists() {
                                (nested, dir.join(&name))
                            } else {
                                return Err(format!(
                                    "no file for `mod {name}` under {}",
                                    dir.display()
                                ));
                            };
                            let text = fs::read_to_string(&file_path).map_err(|e| e.to_string())?;
                            let parsed = syn::parse_file(&text)
                                .map_err(|e| format!("{}: {e}", file_path.display()))?;
                            let child_file = self.file(&file_path, root, path.clone());
                            self.module(
                                root,
                                krate,
                                Some(id),
                                child_file,
                                &child_dir,
                                &path,
                                &parsed.items,
                            )?
                        }
                    };
                    self.modules[id].children.insert(name, child);
                }
                _ => {}
            }
        }
        self.modules[id].paths = paths.0;
        Ok(id)
    }

    /// Where the first segment of a path in module `m` starts, and how
    /// many segments that took.
    fn start(
        &self,
        m: usize,
        path: &[String],
        roots: &BTreeMap<String, usize>,
    ) -> Option<(usize, usize)> {
        let first = path.first()?;
        match first.as_str() {
            "crate" => Some((roots[&self.crates[self.modules[m].krate].ident], 1)),
            "self" => Some((m, 1)),
            "super" => {
                let mut at = m;
                let mut taken = 0;
                while path.get(taken).map(String::as_str) == Some("super") {
                    at = self.modules[at].parent?;
                    taken += 1;
                }
                Some((at, taken))
            }
            name => {
                if let Some(&child) = self.modules[m].children.get(name) {
                    Some((child, 1))
                } else {
                    roots.get(name).map(|&r| (r, 1))
                }
            }
        }
    }

    /// What `path` names, from module `m`.
    fn resolve(
        &self,
        m: usize,
        path: &[String],
        roots: &BTreeMap<String, usize>,
        depth: usize,
    ) -> Option<Target> {
        if depth > 24 {
            return None;
        }
        let (mut at, taken) = self.start(m, path, roots)?;
        let rest = &path[taken..];
        for segment in rest {
            if segment == "*" {
                return Some(Target::Module(at));
            }
            match self.lookup(at, segment, roots, depth) {
                Some(Target::Module(next)) => at = next,
                // An item: what follows is its variant, field or method.
                Some(item) => return Some(item),
                // Not seen defined (made by a macro): its module's file.
                None => return Some(Target::Item(self.modules[at].file)),
            }
        }
        Some(Target::Module(at))
    }

    /// The module or item `name` is in module `m`.
    fn lookup(
        &self,
        m: usize,
        name: &str,
        roots: &BTreeMap<String, usize>,
        depth: usize,
    ) -> Option<Target> {
        let module = &self.modules[m];
        if let Some(&child) = module.children.get(name) {
            return Some(Target::Module(child));
        }
        if module.items.contains(name) {
            return Some(Target::Item(module.file));
        }
        for import in module.imports.iter().filter(|i| i.alias == name) {
            if let Some(t) = self.resolve(m, &import.path, roots, depth + 1) {
                return Some(t);
            }
        }
        for import in module.imports.iter().filter(|i| i.alias == "*") {
            let glob = &import.path[..import.path.len() - 1];
            if let Some(Target::Module(g)) = self.resolve(m, glob, roots, depth + 1) {
                if g != m {
                    if let Some(t) = self.lookup(g, name, roots, depth + 1) {
                        return Some(t);
                    }
                }
            }
        }
        None
    }

    fn edges(&mut self, roots: &BTreeMap<String, usize>) {
        let mut edges: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
        for m in 0..self.modules.len() {
            let module = &self.modules[m];
            let from = module.file;
            let mut add = |to: usize, name: &str| {
                if to != from {
                    edges
                        .entry((from, to))
                        .or_default()
                        .insert(name.to_string());
                }
            };
            // Paths from the crate root, a parent, or another crate; a
            // module's own children (`child::x`, `self::x`) are not edges.
            let counted =
                |first: &str| first == "crate" || first == "super" || roots.contains_key(first);
            for import in &module.imports {
                if !import.path.first().is_some_and(|f| counted(f)) {
                    continue;
                }
                // A module imported whole adds its edges where it is used.
                if let Some(Target::Item(file)) = self.resolve(m, &import.path, roots, 0) {
                    add(file, import.path.last().map_or("", String::as_str));
                }
            }
            for path in &module.paths {
                let first = path[0].as_str();
                let imported = module.imports.iter().find(|i| i.alias == first);
                let resolved = match imported {
                    Some(import) if import.path.first().is_some_and(|f| counted(f)) => {
                        // Through the import: its path, then the rest.
                        let mut whole = import.path.clone();
                        whole.extend(path[1..].iter().cloned());
                        self.resolve(m, &whole, roots, 0)
                    }
                    None if counted(first) => self.resolve(m, path, roots, 0),
                    _ => None,
                };
                if let Some(Target::Item(file)) = resolved {
                    add(file, path.last().map_or("", String::as_str));
                }
            }
        }
        self.graph.edges = edges;
    }
}

/// The import graph of the workspace at `root`.
pub fn workspace_graph(root: &Path) -> Result<Graph, String> {
    let root = fs::canonicalize(root).map_err(|e| e.to_string())?;
    let mut ws = Workspace {
        crates: crates(&root)?,
        ..Workspace::default()
    };
    let mut roots: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_file: BTreeMap<PathBuf, usize> = BTreeMap::new();
    for k in 0..ws.crates.len() {
        let root_file = ws.crates[k].root.clone();
        let module = match by_file.get(&root_file) {
            Some(&m) => m,
            None => {
                let text = fs::read_to_string(&root_file).map_err(|e| e.to_string())?;
                let parsed =
                    syn::parse_file(&text).map_err(|e| format!("{}: {e}", root_file.display()))?;
                let name = vec![ws.crates[k].ident.clone()];
                let file = ws.file(&root_file, &root, name.clone());
                let dir = root_file
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                let m = ws.module(&root, k, None, file, &dir, &name, &parsed.items)?;
                by_file.insert(root_file, m);
                m
            }
        };
        roots.insert(ws.crates[k].ident.clone(), module);
    }
    ws.edges(&roots);
    Ok(ws.graph)
}

/// The circles of `graph`: its strongly connected components of more than
/// one file (Tarjan's algorithm), each sorted, in file order.
pub fn circles(graph: &Graph) -> Vec<Vec<usize>> {
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); graph.files.len()];
    for &(a, b) in graph.edges.keys() {
        next[a].push(b);
    }
    components(&next)
}

/// The strongly connected components of more than one node of the graph
/// whose edges from node `v` are `next[v]` (Tarjan's algorithm), each
/// sorted, in node order.
fn components(next: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = next.len();
    struct State {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        found: Vec<Vec<usize>>,
    }
    fn connect(v: usize, next: &[Vec<usize>], s: &mut State) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &next[v] {
            match s.index[w] {
                None => {
                    connect(w, next, s);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort_unstable();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            connect(v, next, &mut state);
        }
    }
    state.found.sort();
    state.found
}

/// A circle in words: its files, and what each takes from the next.
pub fn describe(graph: &Graph, circle: &[usize]) -> String {
    let mut out = String::new();
    for &a in circle {
        for &b in circle {
            if let Some(names) = graph.edges.get(&(a, b)) {
                out.push_str(&format!(
                    "  {} -> {}: {}\n",
                    graph.files[a].display(),
                    graph.files[b].display(),
                    names.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    out
}

/// The name a module's own file goes by among its children.
const OWN_FILE: &str = "(own file)";

/// Where an edge between two files of one crate crosses between modules:
/// the two children of the deepest module holding both files that hold
/// them, a file of that module itself standing as its `(own file)` child
/// (so a module's `mod.rs` relaying a circle between two of its children is
/// one too). `None` within one module's file, or across crates.
fn sibling_modules(from: &[String], to: &[String]) -> Option<(Vec<String>, Vec<String>)> {
    let shared = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if shared == 0 || (shared == from.len() && shared == to.len()) {
        return None;
    }
    let child = |path: &[String]| -> Vec<String> {
        match path.get(shared) {
            Some(_) => path[..=shared].to_vec(),
            None => path.iter().cloned().chain([OWN_FILE.to_string()]).collect(),
        }
    };
    Some((child(from), child(to)))
}

/// The circles between modules: modules under one parent (the crate's
/// top-level modules, a module's children, and the parent's own file among
/// them as `(own file)`) that take from each other, directly or round a
/// ring, through any of their files, each as the modules' paths
/// (`crate::media`), sorted. A file edge from `media/cost.rs` to
/// `wire/format.rs` is an edge from `media` to `wire`; one from
/// `session/mod.rs` to `session/log.rs` is an edge from `session::(own
/// file)` to `session::log`. Modules declared inline share their file's
/// node: a circle between two inline modules of one file is not seen.
pub fn module_circles(graph: &Graph) -> Vec<Vec<String>> {
    let mut ids: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    let mut names: Vec<Vec<String>> = Vec::new();
    let mut links = Vec::new();
    for &(a, b) in graph.edges.keys() {
        let Some((from, to)) = sibling_modules(&graph.modules[a], &graph.modules[b]) else {
            continue;
        };
        let [from, to] = [from, to].map(|m| {
            *ids.entry(m.clone()).or_insert_with(|| {
                names.push(m);
                names.len() - 1
            })
        });
        links.push((from, to));
    }
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    for (from, to) in links {
        next[from].push(to);
    }
    let mut found: Vec<Vec<String>> = components(&next)
        .into_iter()
        .map(|c| c.iter().map(|&m| names[m].join("::")).collect::<Vec<_>>())
        .map(|mut c| {
            c.sort();
            c
        })
        .collect();
    found.sort();
    found
}

/// A circle between modules in words: each file edge that crosses from one
/// of its modules to another, with the names taken.
pub fn describe_modules(graph: &Graph, circle: &[String]) -> String {
    let of = |file: usize| -> Option<&String> {
        let path = graph.modules[file].join("::");
        let own = format!("{path}::{OWN_FILE}");
        circle
            .iter()
            .find(|m| **m == own || path == **m || path.starts_with(&format!("{m}::")))
    };
    let mut out = String::new();
    for (&(a, b), names) in &graph.edges {
        if let (Some(ma), Some(mb)) = (of(a), of(b)) {
            if ma != mb {
                out.push_str(&format!(
                    "  {ma} -> {mb}: {} -> {}: {}\n",
                    graph.files[a].display(),
                    graph.files[b].display(),
                    names.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    out
}
