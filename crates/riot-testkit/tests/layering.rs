//! The layering the code map promises: within each crate, no module
//! imports, directly or through others, a module that imports it back.
//! That holds for a crate's top-level modules (named as `crate::NAME`,
//! in a group `crate::{a, b}`, or through an item the crate root
//! re-exports; a `#[path]` file is its owner's) and for the children of
//! each module directory (named as `super::NAME` or by the module's
//! path); comments, string literals and test code do not count.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
#![allow(clippy::disallowed_methods)] // reads the workspace's sources

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Every `.rs` file under `dir`, with its path relative to `src`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (a file a `#[path]`
/// attribute names belongs to the module that names it); `None` for the
/// crate root, binaries and test files.
fn module_of(src: &Path, file: &Path, owners: &BTreeMap<PathBuf, PathBuf>) -> Option<String> {
    let mut file = file.to_path_buf();
    while let Some(owner) = owners.get(&file) {
        file = owner.clone();
    }
    let rel = file.strip_prefix(src).unwrap();
    let parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let stem = |s: &str| s.trim_end_matches(".rs").to_owned();
    if parts
        .iter()
        .any(|p| p == "tests" || p == "tests.rs" || stem(p).ends_with("_tests"))
    {
        return None;
    }
    let top = stem(&parts[0]);
    if matches!(top.as_str(), "lib" | "main" | "bin") {
        return None;
    }
    Some(top)
}

/// Files named by `#[path = "…"] mod x;` → the file that names them.
fn path_owners(files: &[(PathBuf, String)]) -> BTreeMap<PathBuf, PathBuf> {
    let mut owners = BTreeMap::new();
    for (file, text) in files {
        for piece in text.split("#[path").skip(1) {
            let Some(name) = piece.split('"').nth(1) else {
                continue;
            };
            let target = file.parent().unwrap().join(name);
            owners.insert(normalize(&target), file.clone());
        }
    }
    owners
}

/// `a/b/../c` as `a/c`.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The code of a file without comments, string literals and test code
/// (a `#[cfg(test)] mod x;` line, or a `#[cfg(test)] mod x { … }` block).
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let item = item.strip_prefix("pub(crate) ").unwrap_or(item);
        if let Some(module) = item.strip_prefix("mod ") {
            let name_end = module
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(module.len());
            let tail = module[name_end..].trim_start();
            if let Some(after_semicolon) = tail.strip_prefix(';') {
                rest = after_semicolon;
                continue;
            }
            if let Some(body) = tail.strip_prefix('{') {
                let mut depth = 1;
                let mut end = body.len();
                for (i, c) in body.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &body[end..];
                continue;
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out.lines()
        .map(|l| {
            let code = l.split("//").next().unwrap_or("");
            // String literals' contents (a path in a message is no import).
            code.split('"')
                .enumerate()
                .filter(|(i, _)| i % 2 == 0)
                .map(|(_, p)| p)
                .collect::<Vec<_>>()
                .join("\"\"")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names `crate::` leads to in `text`: the first segment of each
/// path, and of each path in a group (`crate::{a, b::C}`).
fn crate_names(text: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for piece in text.split("crate::").skip(1) {
        if let Some(group) = piece.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            names.extend(group.split(',').map(ident).filter(|n| !n.is_empty()));
        } else {
            names.push(ident(piece));
        }
    }
    names
}

/// Items the crate root re-exports (`pub use module::{A, B}`) → their module.
fn reexports(src: &Path) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for root in ["lib.rs", "main.rs"] {
        let Ok(text) = std::fs::read_to_string(src.join(root)) else {
            continue;
        };
        let text = code(&text);
        for piece in text.split("pub use ").skip(1) {
            let statement = piece.split(';').next().unwrap_or("");
            let Some((module, items)) = statement.split_once("::") else {
                continue;
            };
            let items = items.trim().trim_start_matches('{').trim_end_matches('}');
            for item in items.split(',') {
                let name = item.rsplit(" as ").next().unwrap_or("").trim();
                let name = name.rsplit("::").next().unwrap_or("").trim();
                if !name.is_empty() && name != "self" {
                    map.insert(name.to_owned(), module.trim().to_owned());
                }
            }
        }
    }
    map
}

/// Module → the modules of the same crate it names (directly, or through
/// an item the crate root re-exports).
fn imports(krate: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = krate.join("src");
    let mut paths = Vec::new();
    sources(&src, &mut paths);
    let files: Vec<(PathBuf, String)> = paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (normalize(&p), text)
        })
        .collect();
    let owners = path_owners(&files);
    let src = normalize(&src);
    let mut modules: BTreeMap<String, String> = BTreeMap::new();
    for (file, text) in &files {
        if let Some(module) = module_of(&src, file, &owners) {
            modules.entry(module).or_default().push_str(&code(text));
        }
    }
    let reexported = reexports(&src);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in &modules {
        let edges = graph.entry(module.clone()).or_default();
        for name in crate_names(text) {
            let target = if modules.contains_key(&name) {
                Some(&name)
            } else {
                reexported.get(&name)
            };
            if let Some(target) = target
                && target != module
                && modules.contains_key(target)
            {
                edges.insert(target.clone());
            }
        }
    }
    graph
}

/// For each directory of a crate's `src/` (a module with children), its
/// children → the siblings they name, as `super::NAME` or through the
/// module's full path (`crate::tools::NAME`).
fn sibling_imports(krate: &Path) -> Vec<(String, BTreeMap<String, BTreeSet<String>>)> {
    let src = krate.join("src");
    let mut dirs = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path.clone());
                dirs.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for dir in dirs {
        let rel = dir.strip_prefix(&src).unwrap();
        let module: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if module.iter().any(|m| m == "tests" || m == "bin") {
            continue;
        }
        let path = format!("crate::{}::", module.join("::"));
        let mut children: BTreeMap<String, String> = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let file = entry.unwrap().path();
            let name = file.file_stem().unwrap().to_string_lossy().into_owned();
            let text = if file.is_dir() {
                std::fs::read_to_string(file.join("mod.rs")).ok()
            } else if file.extension().is_some_and(|e| e == "rs")
                && name != "mod"
                && name != "tests"
                && !name.ends_with("_tests")
            {
                std::fs::read_to_string(&file).ok()
            } else {
                None
            };
            if let Some(text) = text {
                children.insert(name, code(&text));
            }
        }
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (child, text) in &children {
            let edges = graph.entry(child.clone()).or_default();
            for prefix in ["super::", path.as_str()] {
                for piece in text.split(prefix).skip(1) {
                    let name: String = piece
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if name != *child && children.contains_key(&name) {
                        edges.insert(name);
                    }
                }
            }
        }
        out.push((module.join("::"), graph));
    }
    out
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in &self.graph[v] {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut circle = BTreeSet::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack.remove(w);
                    circle.insert(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if circle.len() > 1 {
                    self.found.push(circle);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_crate_has_an_import_circle() {
    let crates = workspace();
    let mut found = Vec::new();
    let mut all: Vec<PathBuf> = std::fs::read_dir(&crates)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // The desktop shell is a member of the workspace too.
    let desktop = crates.join("../desktop/src-tauri");
    assert!(
        desktop.join("src").is_dir(),
        "{} is gone: the walk would miss it",
        desktop.display()
    );
    all.push(desktop);
    for krate in all {
        if !krate.join("src").is_dir() {
            continue;
        }
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        let krate = krate.as_path();
        for circle in circles(&imports(krate)) {
            found.push(format!("{name}: {circle:?}"));
        }
        for (module, graph) in sibling_imports(krate) {
            for circle in circles(&graph) {
                found.push(format!("{name}, in {module}: {circle:?}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "import circles (a module reaching itself through `crate::` imports):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_walk_finds_a_circle_and_ignores_comments_and_tests() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("c")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a; mod b; mod c;").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::b::B;\n// crate::c\n").unwrap();
    std::fs::write(
        src.join("b.rs"),
        "use crate::c::C;\n#[cfg(test)]\nmod t { use crate::a; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("c/mod.rs"),
        "pub struct C; fn f() { crate::a::g() }",
    )
    .unwrap();
    std::fs::write(src.join("c/tests.rs"), "use crate::b;").unwrap();
    let graph = imports(dir.path());
    assert_eq!(
        circles(&graph),
        vec![BTreeSet::from([
            "a".to_owned(),
            "b".to_owned(),
            "c".to_owned()
        ])]
    );
    // Without c's call back to a, the comment and the test code make no
    // circle.
    std::fs::write(src.join("c/mod.rs"), "pub struct C;").unwrap();
    assert!(circles(&imports(dir.path())).is_empty());
    // A grouped import, an item the root re-exports, a `#[path]` child
    // and code after a one-line test module all count; a path in a string
    // does not.
    let more = tempfile::tempdir().unwrap();
    let src2 = more.path().join("src");
    std::fs::create_dir_all(&src2).unwrap();
    std::fs::write(
        src2.join("lib.rs"),
        "mod p; mod q; mod r; pub use r::Thing;",
    )
    .unwrap();
    std::fs::write(
        src2.join("p.rs"),
        "#[cfg(test)]\nmod p_tests;\nuse crate::{q, r};\n#[path = \"p_child.rs\"]\nmod child;\n",
    )
    .unwrap();
    std::fs::write(src2.join("p_child.rs"), "fn f() {}").unwrap();
    std::fs::write(src2.join("q.rs"), "const S: &str = \"crate::p\";").unwrap();
    std::fs::write(
        src2.join("r.rs"),
        "pub struct Thing; fn g() { crate::p::child::f() }",
    )
    .unwrap();
    let graph = imports(more.path());
    assert_eq!(graph["p"], BTreeSet::from(["q".to_owned(), "r".to_owned()]));
    assert!(graph["q"].is_empty(), "a string is no import: {graph:?}");
    assert!(
        !graph.contains_key("p_child"),
        "a #[path] child is its owner's: {graph:?}"
    );
    assert_eq!(
        circles(&graph),
        vec![BTreeSet::from(["p".to_owned(), "r".to_owned()])]
    );
    // Through the root's re-export: q naming `crate::Thing` imports r.
    std::fs::write(src2.join("q.rs"), "use crate::Thing;").unwrap();
    assert_eq!(imports(more.path())["q"], BTreeSet::from(["r".to_owned()]));
    // Children of c that name each other, one through its parent's path.
    std::fs::write(src.join("c/x.rs"), "use super::y::Y;").unwrap();
    std::fs::write(src.join("c/y.rs"), "fn f() { crate::c::x::g() }").unwrap();
    let siblings = sibling_imports(dir.path());
    assert_eq!(siblings.len(), 1);
    assert_eq!(siblings[0].0, "c");
    assert_eq!(
        circles(&siblings[0].1),
        vec![BTreeSet::from(["x".to_owned(), "y".to_owned()])]
    );
}
