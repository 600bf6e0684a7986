//! Functions a reader can hold (issue 44): a ratchet on the production functions of `src/` longer than
//! 120 lines and on the `#[allow(clippy::too_many_arguments)]` attributes. Each count may only go down:
//! when a split brings one lower, lower its cap here to the new count. The goal is at most 3 long
//! functions and at most 5 allows, each with a why-comment. Test code (`tests.rs`, `*_tests.rs` and
//! `#[cfg(test)]` modules) is not counted; comments and string literals (raw and multi-line ones too)
//! are blanked before braces are matched, by the same reader as the layers test.

use std::path::Path;

use super::layers::{code, repo, rust_files};

/// The longest a production function may be, in lines from its `fn` line to its closing brace.
const LONG: usize = 120;
/// The ratchet: production functions over [`LONG`] lines today (41 at main 2cb1f1a, 21 after the splits
/// of issue 44's first pass, 5 after its second pass's survival/agent/import/emit splits and issue 43's
/// core pub/sub seam split `bench::pubsub::core`, 3 after the third pass split `faults::run` and
/// `faults::run_in_lab` into named steps over the `Setup` a run's labs share).
const MAX_LONG_FUNCTIONS: usize = 3;
/// The ratchet: `too_many_arguments` allows in production code today (28 at main 2cb1f1a, 21 after the
/// first pass, 10 after the second and issue 43's bench seam: `js_pub_raw`, `core_pub`, `core_pub_raw`;
/// 4 after the third pass gave faults and the verify ladder parameter structs: `Setup`, `Measured`,
/// `Fault`, `Publisher`, the ladder's `Shape`; 3 once `layout::build::build_unsized`'s allow went: its 7
/// arguments are within clippy's limit; 2 once `layout::lun_size::size_on_need`'s went with issue 42's
/// evaluator, which hands it the whole groups' placement instead of the replica count and the memo). Each
/// one left needs a `// why:` comment just above it.
const MAX_TOO_MANY_ARGUMENTS: usize = 2;

/// A function of a file: its name, the line of its `fn` and its length in lines.
#[derive(Debug, PartialEq)]
struct Function {
    name: String,
    line: usize,
    lines: usize,
}

/// The functions with a body in `code` (already blanked by [`code`]), nested ones each on their own.
fn functions(code: &str) -> Vec<Function> {
    let b = code.as_bytes();
    let line = |pos: usize| code[..pos].matches('\n').count() + 1;
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    for (at, _) in code.match_indices("fn") {
        if at > 0 && is_ident(b[at - 1]) {
            continue;
        }
        let after = &code[at + 2..];
        let name_from = after.len() - after.trim_start().len();
        if name_from == 0 {
            continue; // `fn(` is a pointer type, `fnx` another word
        }
        let name: String = after[name_from..]
            .chars()
            .take_while(|&c| c.is_alphanumeric() || c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` outside the signature's brackets; a `;` first is a declaration.
        let mut depth = 0i32;
        let mut open = None;
        for (k, c) in after.char_indices() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ';' if depth == 0 => break,
                '{' if depth == 0 => {
                    open = Some(at + 2 + k);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut depth = 0;
        let mut close = code.len() - 1;
        for (k, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(Function {
            name,
            line: line(at),
            lines: line(close) - line(at) + 1,
        });
    }
    out
}

/// The production files of `src/`: path under the repository and blanked code.
fn production_code() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    rust_files(&repo().join("src"), &mut paths);
    paths.sort();
    paths
        .iter()
        .filter(|p| {
            let file = p.file_name().unwrap().to_str().unwrap();
            file != "tests.rs" && !file.ends_with("_tests.rs")
        })
        .map(|p| {
            let rel = p.strip_prefix(repo()).unwrap().to_str().unwrap().to_string();
            (rel, code(&std::fs::read_to_string(p).unwrap()))
        })
        .collect()
}

/// Each `too_many_arguments` allow of `code`, by line.
fn too_many_arguments(code: &str) -> Vec<usize> {
    code.match_indices("clippy::too_many_arguments")
        .map(|(at, _)| code[..at].matches('\n').count() + 1)
        .collect()
}

/// Whether the allow on line `line` (1-based) of `raw` has a plain `// why:` comment in the block of
/// `//` comment lines just above it.
fn has_why(raw: &str, line: usize) -> bool {
    raw.lines()
        .take(line - 1)
        .collect::<Vec<_>>()
        .iter()
        .rev()
        .map(|l| l.trim_start())
        .take_while(|l| l.starts_with("//") && !l.starts_with("///"))
        .any(|l| l.starts_with("// why:"))
}

#[test]
fn an_allow_is_explained_only_by_a_why_comment_just_above_it() {
    let raw = "/// Doc.\n// why: the hot loop's slices.\n// more\n#[allow(clippy::too_many_arguments)]\nfn f() {}\n";
    assert!(has_why(raw, 4));
    assert!(!has_why("/// Doc, why: no.\n#[allow(clippy::too_many_arguments)]\n", 2));
    assert!(!has_why(
        "// why: above the doc\n/// Doc.\n#[allow(clippy::too_many_arguments)]\n",
        3
    ));
}

#[test]
fn long_functions_and_too_many_arguments_only_go_down() {
    let files = production_code();
    assert!(files.len() > 100, "read src/: {} files", files.len());
    let mut long = Vec::new();
    let mut allows = Vec::new();
    let mut all = 0;
    for (path, code) in &files {
        for f in functions(code) {
            all += 1;
            if f.lines > LONG {
                long.push((
                    f.lines,
                    format!("{:>4} lines  {path}:{} fn {}", f.lines, f.line, f.name),
                ));
            }
        }
        let raw = std::fs::read_to_string(repo().join(path)).unwrap();
        for l in too_many_arguments(code) {
            assert!(
                has_why(&raw, l),
                "{path}:{l}: a too_many_arguments allow needs a `// why: ...` comment on the lines just above it \
                 (why these arguments do not travel together), or an options struct instead"
            );
            allows.push(format!("{path}:{l}"));
        }
    }
    assert!(all > 1000, "the reader finds the functions of src/ ({all})");
    long.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let long: Vec<String> = long.into_iter().map(|(_, l)| l).collect();
    println!(
        "{} production functions over {LONG} lines:\n{}",
        long.len(),
        long.join("\n")
    );
    println!("{} too_many_arguments allows:\n{}", allows.len(), allows.join("\n"));
    assert!(
        long.len() <= MAX_LONG_FUNCTIONS,
        "{} production functions are over {LONG} lines, the cap is {MAX_LONG_FUNCTIONS}: split the new \
         one into named steps (listed above)",
        long.len()
    );
    assert!(
        allows.len() <= MAX_TOO_MANY_ARGUMENTS,
        "{} too_many_arguments allows, the cap is {MAX_TOO_MANY_ARGUMENTS}: pass an options struct \
         instead (listed above)",
        allows.len()
    );
    if long.len() < MAX_LONG_FUNCTIONS || allows.len() < MAX_TOO_MANY_ARGUMENTS {
        println!(
            "the counts went down: lower MAX_LONG_FUNCTIONS to {} and MAX_TOO_MANY_ARGUMENTS to {} in {}",
            long.len(),
            allows.len(),
            Path::new(file!()).display()
        );
    }
}

#[test]
fn the_reader_measures_bodies_past_strings_comments_and_test_modules() {
    let text = "fn short() {\n    let s = \"}\";\n}\n\
                /// fn doc() {}\nfn raw() -> &'static str {\n    r#\"}\n}\n\"#\n}\n\
                trait T { fn decl(&self) -> [u8; 2]; fn given(&self) { let _ = '}'; } }\n\
                fn outer() {\n    fn inner(f: fn(u8) -> u8) -> u8 { f(1) }\n    // }\n}\n\
                #[cfg(test)]\nmod tests {\n    fn hidden() {}\n}\n";
    let got: Vec<(String, usize, usize)> = functions(&code(text))
        .into_iter()
        .map(|f| (f.name, f.line, f.lines))
        .collect();
    let want = [
        ("short", 1, 3),
        ("raw", 5, 5),
        ("given", 10, 1),
        ("outer", 11, 4),
        ("inner", 12, 1),
    ];
    let want: Vec<(String, usize, usize)> = want.iter().map(|&(n, l, s)| (n.to_string(), l, s)).collect();
    assert_eq!(got, want);
    assert_eq!(
        too_many_arguments(&code(
            "// #[allow(clippy::too_many_arguments)]\n#[allow(clippy::too_many_arguments)]\nfn f() {}\n"
        )),
        vec![2]
    );
}
