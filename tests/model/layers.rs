//! The module boundaries of ARCHITECTURE.md hold: every `crate::` path in `src/` (a `use` or a path in
//! the code) goes from a module to one on its own layer or a layer below, as the `layers` block of
//! ARCHITECTURE.md orders them, and the models never print. Test code (`*_tests.rs`, `tests.rs` and
//! `#[cfg(test)]` modules) may reach up: a survival test builds a whole plan. Comments and strings are
//! not code. `super::` paths are not followed (none leaves its top-level module today).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The modules that compute or read inputs: they return values and errors, never print (ARCHITECTURE.md).
const MODELS: &[&str] = &[
    "units", "fxhash", "input", "site", "catalog", "import", "sitegen", "layout", "perf", "survival", "plan", "emit",
    "report",
];

/// The layer of each module, from ARCHITECTURE.md's block that opens with "```text layers": one line
/// per layer, lowest first, `#` starts a comment.
fn layers(doc: &str) -> BTreeMap<String, usize> {
    let block = doc
        .split("```text layers\n")
        .nth(1)
        .expect("ARCHITECTURE.md has a ```text layers block");
    let block = &block[..block.find("```").expect("the layers block is closed")];
    let mut out = BTreeMap::new();
    for (n, line) in block
        .lines()
        .map(|l| l.split('#').next().unwrap())
        .filter(|l| !l.trim().is_empty())
        .enumerate()
    {
        for m in line.split_whitespace() {
            assert!(
                out.insert(m.to_string(), n).is_none(),
                "{m} is on two layers of ARCHITECTURE.md"
            );
        }
    }
    out
}

/// The code of a Rust file with comments, string and char literals blanked (newlines kept, so positions
/// still give lines), and the test modules (`#[cfg(test)] mod x { ... }`) blanked too.
pub(crate) fn code(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').map_or(b.len(), |e| i + e);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 1;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 1;
                }
                j += 1;
            }
            blank(&mut out, i, j);
            i = j;
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#") || rest.starts_with(b"br\""))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let start = i + rest.iter().position(|&c| c == b'r').unwrap() + 1;
            let hashes = b[start..].iter().take_while(|&&c| c == b'#').count();
            if b.get(start + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            let body = start + hashes + 1;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close)
                .map_or(b.len(), |e| body + e + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, (j + 1).min(b.len()));
            i = j + 1;
        } else if rest[0] == b'\'' {
            // A char literal ('x', '\n', '\u{7f}') or a lifetime ('a): blank only the literal.
            let end = if rest.get(1) == Some(&b'\\') {
                rest.iter().skip(2).position(|&c| c == b'\'').map(|e| i + 2 + e + 1)
            } else {
                let len = std::str::from_utf8(&rest[1..])
                    .ok()
                    .and_then(|s| s.chars().next())
                    .map_or(1, char::len_utf8);
                (rest.get(1 + len) == Some(&b'\'')).then_some(i + 2 + len)
            };
            match end {
                Some(e) => {
                    blank(&mut out, i, e);
                    i = e;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    // Test modules: `#[cfg(test)]`, then (after other attributes) `mod name {`, to its closing brace.
    let s = String::from_utf8(out).unwrap();
    let mut out = s.clone().into_bytes();
    let mut from = 0;
    while let Some(at) = s[from..].find("#[cfg(test)]").map(|p| from + p) {
        from = at + 1;
        let mut after = s[at + "#[cfg(test)]".len()..].trim_start();
        while after.starts_with("#[") {
            after = after[after.find(']').map_or(after.len(), |e| e + 1)..].trim_start();
        }
        let after = after
            .strip_prefix("pub(crate) ")
            .or_else(|| after.strip_prefix("pub "))
            .unwrap_or(after);
        let is_inline_mod = after.starts_with("mod ")
            && after
                .find('{')
                .is_some_and(|brace| after.find(';').is_none_or(|semi| brace < semi));
        if !is_inline_mod {
            continue;
        }
        let open = s.len() - after.len() + after.find('{').unwrap();
        let mut depth = 0;
        let mut end = s.len();
        for (k, c) in s[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        blank(&mut out, at, end);
        from = end;
    }
    String::from_utf8(out).unwrap()
}

/// The top-level modules that the code of a file names through `crate::` paths, each with the line of
/// the path: `crate::a::b` gives `a`; `crate::{a::b, c}` gives `a` and `c`.
fn crate_edges(code: &str) -> Vec<(usize, String)> {
    let mut out = path_heads(code, "crate::");
    out.retain(|(_, m)| m != "self");
    out
}

/// The first segment after each `prefix` path in `code`, with its line: `prefix` `a::b` gives `a`;
/// `prefix` `{a::b, c}` gives `a` and `c`. A `prefix` that ends another name (`$crate::`) is not one.
fn path_heads(code: &str, prefix: &str) -> Vec<(usize, String)> {
    let line = |pos: usize| code[..pos].matches('\n').count() + 1;
    let ident = |s: &str| {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
    };
    let mut out = Vec::new();
    let item = |out: &mut Vec<(usize, String)>, at: usize, item: &str| {
        let name = ident(item.trim_start());
        if !name.is_empty() {
            out.push((line(at + (item.len() - item.trim_start().len())), name));
        }
    };
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        let trimmed = rest.trim_start();
        let Some(group) = trimmed.strip_prefix('{') else {
            item(&mut out, at + prefix.len(), rest);
            continue;
        };
        let group_at = code.len() - group.len();
        let (mut depth, mut item_start) = (0, 0);
        for (k, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    item(&mut out, group_at + item_start, &group[item_start..k]);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    item(&mut out, group_at + item_start, &group[item_start..k]);
                    item_start = k + 1;
                }
                _ => {}
            }
        }
    }
    out
}

/// Every problem in `files` (path under the repository, text) against `layers`: an edge to a module on
/// a higher layer, a module no layer names, or a model that prints.
fn problems(files: &[(String, String)], layers: &BTreeMap<String, usize>) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        let file = Path::new(path).file_name().unwrap().to_str().unwrap();
        if file == "tests.rs" || file.ends_with("_tests.rs") || path == "src/lib.rs" || path == "src/main.rs" {
            continue;
        }
        let rel = path.strip_prefix("src/").expect("files are under src/");
        let from = rel.split('/').next().unwrap().trim_end_matches(".rs");
        let Some(&from_layer) = layers.get(from) else {
            out.push(format!(
                "{path}: module `{from}` is on no layer of ARCHITECTURE.md: add it to the layers block"
            ));
            continue;
        };
        let code = code(text);
        for (line, to) in crate_edges(&code) {
            if to == from {
                continue;
            }
            match layers.get(&to) {
                None => out.push(format!(
                    "{path}:{line}: `crate::{to}` names a module on no layer of ARCHITECTURE.md"
                )),
                Some(&to_layer) if to_layer > from_layer => out.push(format!(
                    "{path}:{line}: {from} -> {to} goes up (layer {from_layer} uses layer {to_layer}): move what it \
                     needs down to its owner, or change the layers of ARCHITECTURE.md with the reason"
                )),
                _ => {}
            }
        }
        if MODELS.contains(&from) {
            for mac in ["println!", "eprintln!", "print!", "eprint!", "dbg!"] {
                for (at, _) in code.match_indices(mac) {
                    if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                        continue;
                    }
                    let line = code[..at].matches('\n').count() + 1;
                    out.push(format!(
                        "{path}:{line}: {from} is a model and prints ({mac}): return it to the command"
                    ));
                }
            }
        }
    }
    out
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

pub(crate) fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn architecture_layers() -> BTreeMap<String, usize> {
    layers(&std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap())
}

#[test]
fn every_crate_path_in_src_goes_down_the_layers_of_architecture_md() {
    let layers = architecture_layers();
    let mut paths = Vec::new();
    rust_files(&repo().join("src"), &mut paths);
    paths.sort();
    let files: Vec<(String, String)> = paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(repo()).unwrap().to_str().unwrap().to_string();
            (rel, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    assert!(files.len() > 100, "read src/: {} files", files.len());
    let edges: usize = files.iter().map(|(_, t)| crate_edges(&code(t)).len()).sum();
    assert!(edges > 500, "the reader finds the crate:: paths of src/ ({edges})");
    let bad = problems(&files, &layers);
    assert!(bad.is_empty(), "{} boundary problem(s):\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn every_module_of_lib_rs_is_on_one_layer() {
    let layers = architecture_layers();
    let lib = std::fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    let mut modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("pub mod ")
                .or_else(|| l.trim().strip_prefix("mod "))
        })
        .map(|l| l.trim_end_matches(';'))
        .collect();
    modules.sort();
    let declared: Vec<&str> = layers.keys().map(String::as_str).collect();
    assert_eq!(
        declared, modules,
        "ARCHITECTURE.md's layers block and src/lib.rs's modules differ"
    );
}

fn file(path: &str, text: &str) -> (String, String) {
    (path.to_string(), text.to_string())
}

#[test]
fn an_upward_edge_is_named_with_its_file_line_and_modules() {
    let layers = architecture_layers();
    let files = [
        file("src/site/parse/x.rs", "use std::fmt;\n\nuse crate::plan::Plan;\n"),
        file(
            "src/layout/y.rs",
            "use crate::{\n    site::Site,\n    report::html,\n};\nfn f() { crate::verify::run(); }\n",
        ),
    ];
    let bad = problems(&files, &layers);
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(
        bad[0].starts_with("src/site/parse/x.rs:3: site -> plan goes up"),
        "{}",
        bad[0]
    );
    assert!(
        bad[1].starts_with("src/layout/y.rs:3: layout -> report goes up"),
        "{}",
        bad[1]
    );
    assert!(
        bad[2].starts_with("src/layout/y.rs:5: layout -> verify goes up"),
        "{}",
        bad[2]
    );
}

#[test]
fn downward_edges_comments_strings_and_test_code_are_not_problems() {
    let layers = architecture_layers();
    let files = [
        file(
            "src/survival/z.rs",
            "use crate::{layout::Layout, site};\n// crate::plan::build in a comment\n\
             /* crate::report:: /* nested */ crate::verify */\n\
             const S: &str = \"crate::plan::Plan\";\nconst R: &str = r#\"crate::lab \"quoted\"\"#;\n\
             fn life<'a>(x: &'a str) -> char { let _ = x; '{' }\n\
             #[cfg(test)]\nmod tests {\n    use crate::plan::build;\n    fn g() { if true { crate::report::x(); } }\n}\n\
             fn after() { crate::perf::predict(); }\n",
        ),
        file("src/survival/review_tests.rs", "use crate::plan::Plan;\n"),
        file("src/lib.rs", "pub fn run() { crate::commands::run(); }\n"),
    ];
    assert_eq!(problems(&files, &layers), Vec::<String>::new());
    // The same text with the test module's attribute gone: its edges count.
    let untested = files[0].1.replace("#[cfg(test)]\n", "");
    let bad = problems(&[file("src/survival/z.rs", &untested)], &layers);
    assert_eq!(bad.len(), 2, "{bad:#?}");
}

#[test]
fn a_new_module_or_a_printing_model_is_a_problem() {
    let layers = architecture_layers();
    let bad = problems(
        &[
            file("src/newthing/mod.rs", "use crate::site::Site;\n"),
            file("src/perf/w.rs", "pub fn f() {\n    println!(\"x\");\n}\n"),
            file("src/commands/w.rs", "pub fn f() { println!(\"a report\"); }\n"),
        ],
        &layers,
    );
    assert_eq!(bad.len(), 2, "{bad:#?}");
    assert!(bad[0].contains("module `newthing` is on no layer"), "{}", bad[0]);
    assert!(
        bad[1].starts_with("src/perf/w.rs:2: perf is a model and prints (println!)"),
        "{}",
        bad[1]
    );
}

/// The file-level imports inside one folder module (`files`: file stem, text): file `a` imports file
/// `b` when its code (comments, strings and test modules blanked) names `super::b` or `crate::<folder>::b`,
/// alone or in a `{...}` group. `mod.rs` and test files are left out: `mod.rs` declares and re-exports.
fn folder_imports(folder: &str, files: &[(String, String)]) -> BTreeMap<String, Vec<String>> {
    let stems: Vec<&str> = files.iter().map(|(s, _)| s.as_str()).collect();
    let own = format!("crate::{folder}::");
    let mut out = BTreeMap::new();
    for (stem, text) in files {
        if stem == "mod" || stem == "tests" || stem.ends_with("_tests") {
            continue;
        }
        let code = code(text);
        let mut to: Vec<String> = path_heads(&code, "super::")
            .into_iter()
            .chain(path_heads(&code, &own))
            .map(|(_, m)| m)
            .filter(|m| m != stem && stems.contains(&m.as_str()))
            .collect();
        to.sort();
        to.dedup();
        out.insert(stem.clone(), to);
    }
    out
}

/// One import circle among `imports`, as the files in order with the first repeated at the end
/// (`a -> b -> a`), or none.
fn import_circle(imports: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    // 0: not seen, 1: on the current path, 2: done.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    fn visit<'a>(
        n: &'a str,
        imports: &'a BTreeMap<String, Vec<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(n, 1);
        path.push(n);
        for m in imports.get(n).into_iter().flatten() {
            match state.get(m.as_str()) {
                Some(1) => {
                    let from = path.iter().position(|p| p == m).unwrap();
                    let mut circle: Vec<String> = path[from..].iter().map(|s| s.to_string()).collect();
                    circle.push(m.clone());
                    return Some(circle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, imports, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(n, 2);
        None
    }
    for n in imports.keys() {
        if !state.contains_key(n.as_str()) {
            if let Some(c) = visit(n, imports, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// The files of `src/<folder>/` (not its subfolders), as (stem, text).
fn folder_files(folder: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(repo().join("src").join(folder)).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
            out.push((stem, std::fs::read_to_string(&p).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn the_files_of_bench_import_each_other_without_a_circle() {
    let imports = folder_imports("bench", &folder_files("bench"));
    assert!(imports.len() > 20, "read src/bench/: {} files", imports.len());
    let edges: usize = imports.values().map(Vec::len).sum();
    assert!(edges > 40, "the reader finds the imports inside src/bench/ ({edges})");
    assert!(
        imports["assets"].contains(&"jetstream".to_string()),
        "assets imports jetstream: {imports:?}"
    );
    if let Some(c) = import_circle(&imports) {
        panic!(
            "src/bench/ files import each other in a circle: {}. Move what both need into a file below \
             them (JetStream helpers are in jetstream.rs, asset creation and pre-fill in assets.rs)",
            c.join(" -> ")
        );
    }
}

#[test]
fn an_import_circle_inside_a_folder_is_found_and_named() {
    let files = [
        file("mod", "mod a;\nmod b;\nmod c;\npub use a::x;\n"),
        file("a", "use super::{b::*, Spec};\n"),
        file("b", "use super::c;\n// super::a in a comment\n"),
        file("c", "fn f() { crate::bench::a::g(); }\n"),
        file("c_tests", "use super::a;\n"),
    ];
    let imports = folder_imports("bench", &files);
    assert_eq!(imports["a"], vec!["b".to_string()]);
    assert_eq!(imports["c"], vec!["a".to_string()]);
    assert_eq!(import_circle(&imports).unwrap().join(" -> "), "a -> b -> c -> a");
    // Without c's call back into a there is none.
    let mut straight = files.clone();
    straight[3].1 = "fn f() {}\n".into();
    assert_eq!(import_circle(&folder_imports("bench", &straight)), None);
}
