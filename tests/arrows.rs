//! Arrows point one way: within each crate, the top-level modules (a file or folder under
//! `src/`) import each other without a circle, and the engine keeps the pipeline's order
//! (docs/ARCHITECTURE.md): `batch` and `model` below `schedule`, below `train`, below `idea`,
//! below `protocol`. Read from the sources: every `crate::name` a module's code (not its
//! comments, not its unit tests) names is an arrow from it to `name`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The code of a source file: comments and `#[cfg(test)] mod tests { .. }` at the end cut.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The modules `code` names through `crate::name` or `use crate::{name, ..}`.
fn named(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            for part in group.split(',') {
                out.insert(ident(part.trim()));
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|n| !n.is_empty());
    out
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
}

/// Each top-level module of the crate at `src` and the top-level modules it names.
fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut g = Graph::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        // The crate root declares every module; a module's own `tests.rs` is its unit tests.
        if top == "lib" || top == "main" || f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let names = named(&code(&std::fs::read_to_string(&f).unwrap()));
        let entry = g.entry(top.clone()).or_default();
        entry.extend(names.into_iter().filter(|n| *n != top));
    }
    let modules: BTreeSet<String> = g.keys().cloned().collect();
    for to in g.values_mut() {
        to.retain(|n| modules.contains(n));
    }
    g
}

/// A circle of the graph, if it has one (a path that comes back to its start).
fn circle(g: &Graph) -> Option<Vec<String>> {
    fn visit(g: &Graph, n: &str, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(g, m, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys().find_map(|n| visit(g, n, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_a_circle_between_its_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in
        ["src", "crates/track/src", "crates/core/src", "crates/engine/src", "crates/page/src", "crates/worker/src"]
    {
        let g = graph(&root.join(src));
        assert!(g.len() > 2, "{src}: read {} modules", g.len());
        assert_eq!(circle(&g), None, "{src}: a circle of imports; the graph: {g:#?}");
    }
}

#[test]
fn the_engine_keeps_the_pipeline_order() {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/engine/src"));
    let order = ["batch", "model", "schedule", "train", "idea", "protocol"];
    let rank = |m: &str| order.iter().position(|o| *o == m);
    for (from, to) in &g {
        let Some(a) = rank(from) else { continue };
        for t in to {
            if let Some(b) = rank(t) {
                // batch and model share the bottom: a batch is built for a model.
                assert!(b < a || (a <= 1 && b <= 1), "{from} imports {t}, which is above it ({order:?})");
            }
        }
    }
}

/// The reader itself: an arrow in code counts, one in a comment or a unit test does not.
#[test]
fn the_reader_sees_code_not_comments() {
    let text = "use crate::a::B;\nuse crate::{c, d::E};\n// crate::f\nfn x() { crate::g::h(); }\n#[cfg(test)]\nmod tests {\n use crate::i;\n}\n";
    let got: Vec<String> = named(&code(text)).into_iter().collect();
    assert_eq!(got, ["a", "c", "d", "g"]);
    let mut g = Graph::new();
    g.insert("a".into(), ["b".to_string()].into());
    g.insert("b".into(), ["a".to_string()].into());
    assert_eq!(circle(&g), Some(vec!["a".to_string(), "b".to_string(), "a".to_string()]));
}
