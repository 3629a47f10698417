//! The folder layout shows the data flow (issue 40, item 6): within a folder, no file
//! uses a sibling that uses it back, directly or around a circle. Read from the
//! sources, as `use super::x` and `super::x::` paths outside test modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The sibling modules each file of `dir` names through `super::`.
fn siblings(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return files };
    let entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    let names: BTreeSet<String> = entries
        .iter()
        .filter_map(|p| if p.is_dir() { p.file_name() } else { p.file_stem() })
        .filter_map(|n| n.to_str().map(str::to_string))
        .filter(|n| n != "mod")
        .collect();
    for path in entries.iter().filter(|p| p.extension().is_some_and(|e| e == "rs")) {
        let Some(name) = path.file_stem().and_then(|n| n.to_str()).filter(|n| *n != "mod") else { continue };
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut uses = BTreeSet::new();
        for (i, _) in code.match_indices("super::") {
            let rest = &code[i + "super::".len()..];
            let words: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                group.split('}').next().unwrap_or_default().split(',').map(|w| w.trim().split("::").next().unwrap_or_default()).collect()
            } else {
                vec![rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap_or_default()]
            };
            uses.extend(words.into_iter().filter(|w| names.contains(*w) && *w != name).map(str::to_string));
        }
        files.insert(name.to_string(), uses);
    }
    files
}

/// A circle of files that use each other, if the graph has one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(n: &str, g: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            return Some(path[at..].to_vec());
        }
        if !done.insert(n.to_string()) {
            return None;
        }
        path.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

fn folders(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    out.push(dir.to_path_buf());
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            folders(&e.path(), out);
        }
    }
}

#[test]
fn no_file_uses_a_sibling_that_uses_it() {
    let mut dirs = Vec::new();
    folders(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut dirs);
    for dir in dirs {
        assert_eq!(circle(&siblings(&dir)), None, "{}", dir.display());
    }
}

#[test]
fn a_circle_is_found() {
    let g = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert_eq!(circle(&g(&[("a", "b"), ("b", "c"), ("c", "a")])).map(|c| c.len()), Some(3));
    assert_eq!(circle(&g(&[("a", "b"), ("b", "c"), ("a", "c")])), None);
}
