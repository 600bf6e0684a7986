//! Property tests for the site parser: every example parses to a valid site, and mutated site files
//! (lines deleted, duplicated, swapped or re-indented, characters replaced, numbers made negative, huge
//! or text) never panic the parser: it returns a site or a non-empty list of problems, each with a
//! field path or a line.

use natsplan::catalog::Catalog;
use natsplan::site::{parse_str, Site};
use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::OnceLock;

fn examples() -> &'static Vec<(String, String)> {
    static EX: OnceLock<Vec<(String, String)>> = OnceLock::new();
    EX.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
        let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
            .expect("examples/ exists")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
            .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap()))
            .collect();
        files.sort();
        files
    })
}

fn catalog() -> &'static Catalog {
    static C: OnceLock<Catalog> = OnceLock::new();
    C.get_or_init(Catalog::builtin)
}

/// What a valid site guarantees to the planner: indices in range, names unique, counts consistent.
fn assert_valid(file: &str, s: &Site) {
    assert!(!s.name.is_empty(), "{file}: site name");
    assert!(
        !s.racks.is_empty() && !s.servers.is_empty() && !s.arrays.is_empty(),
        "{file}"
    );
    assert!(!s.nats.replicas.is_empty() && s.nats.replicas.iter().all(|r| (1..=5).contains(r)));
    for sv in &s.servers {
        assert!(sv.rack < s.racks.len(), "{file}: {}", sv.name);
        assert!(catalog().server(&sv.model).is_some(), "{file}: {}", sv.model);
        if let Some(i) = sv.internal {
            assert!(i < s.arrays.len());
            assert_eq!(s.arrays[i].rack, sv.rack);
        }
    }
    for (i, a) in s.arrays.iter().enumerate() {
        assert!(a.rack < s.racks.len(), "{file}: {}", a.name);
        assert!(a.disks >= 1 && a.hot_spares < a.disks, "{file}: {}", a.name);
        assert!(catalog().array(&a.model).is_some() && catalog().disk(&a.disk_model).is_some());
        if let Some(r) = a.raid {
            assert!(r.check_data_disks(a.disks - a.hot_spares).is_ok(), "{file}: {}", a.name);
        }
        if let Some(o) = a.owner {
            assert_eq!(s.servers[o].internal, Some(i));
        }
    }
    let mut names: Vec<String> = s.servers.iter().map(|x| x.name.to_ascii_lowercase()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), s.servers.len(), "{file}: server names unique");
    for st in &s.workload.streams {
        assert!(st.msgs_per_s > 0.0 && st.retention_s > 0.0, "{file}: {}", st.name);
    }
    assert!(!s.policy.patterns.is_empty());
}

#[test]
fn every_example_parses_to_a_valid_site() {
    assert!(
        examples().len() >= 6,
        "expected the seed examples and the full reference"
    );
    for (file, text) in examples() {
        match parse_str(text, file, catalog()) {
            Ok(site) => assert_valid(file, &site),
            Err(e) => panic!("{e}"),
        }
        // Files edited on Windows (CRLF) read the same.
        let crlf = text.replace('\n', "\r\n");
        let a = serde_json::to_string(&parse_str(text, file, catalog()).unwrap()).unwrap();
        let b = serde_json::to_string(&parse_str(&crlf, file, catalog()).unwrap()).unwrap();
        assert_eq!(a, b, "{file} with CRLF line ends");
    }
}

#[test]
fn full_reference_sets_every_optional_field() {
    let (file, text) = examples()
        .iter()
        .find(|(f, _)| f.ends_with("full-reference.yaml"))
        .expect("examples/full-reference.yaml");
    let s = parse_str(text, file, catalog()).unwrap();
    assert!(s.nats.max_ha_assets.is_some() && s.nats.compression_ratio > 1.0);
    assert!(s.racks.iter().any(|r| !r.pdus.is_empty()));
    assert!(s.servers.iter().any(|x| x.host.is_some()) && s.servers.iter().any(|x| x.pdu.is_some()));
    assert!(s.servers.iter().any(|x| x.internal.is_some()));
    assert!(s.arrays.iter().any(|a| a.raid.is_some() && a.disk_size_bytes.is_some()));
    let st = &s.workload.streams[0];
    assert!(st.replicas.is_some() && st.max_bytes.is_some() && st.consumers > 0);
    assert!(s.workload.object_stores[0].objects.is_some() && s.workload.core.is_some());
    assert!(!s.failure_rates.is_empty() && !s.repair_times.is_empty() && !s.maintenance.is_empty());
    let t = s.policy.min_tolerated;
    assert!(t.racks > 0 && t.arrays > 0 && t.servers > 0 && t.disks > 0);
}

#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// Replace the character at a byte-ish position (index into chars) with one of the YAML-significant ones.
    ReplaceChar(usize, char),
    /// Replace the n-th number in the file with a hostile value.
    Number(usize, &'static str),
    /// Add (positive) or remove (negative) leading spaces on a line.
    Indent(usize, i8),
    /// Insert a line of noise.
    Insert(usize, String),
}

const HOSTILE: &[&str] = &[
    "-1",
    "0",
    "-0.5",
    "99999999999999999999999",
    "1e308",
    "1e400",
    "-.inf",
    ".nan",
    "fast",
    "\"3\"",
    "[]",
    "{}",
    "~",
    "4294967296",
    "18446744073709551616",
    "0x7fffffffffffffff",
    "1_000",
    "3.5",
    "true",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let chars = prop::sample::select(vec![
        ':', '-', '[', ']', '{', '}', '"', '\'', '\t', ' ', '#', '&', '*', '!', '|', '>', '%', '@', '`', ',', '?', 'x',
        '9', '\n', 'é',
    ]);
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<usize>(), chars).prop_map(|(i, c)| Mutation::ReplaceChar(i, c)),
        (any::<usize>(), prop::sample::select(HOSTILE)).prop_map(|(i, v)| Mutation::Number(i, v)),
        (any::<usize>(), -6i8..6).prop_map(|(i, d)| Mutation::Indent(i, d)),
        (any::<usize>(), "[ -~]{0,30}").prop_map(|(i, s)| Mutation::Insert(i, s)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    match m {
        Mutation::DeleteLine(i) => {
            if !lines.is_empty() {
                lines.remove(i % n);
            }
        }
        Mutation::DuplicateLine(i) => {
            if !lines.is_empty() {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
        }
        Mutation::SwapLines(a, b) => {
            if !lines.is_empty() {
                lines.swap(a % n, b % n);
            }
        }
        Mutation::ReplaceChar(i, c) => {
            let mut chars: Vec<char> = text.chars().collect();
            if !chars.is_empty() {
                let k = i % chars.len();
                chars[k] = *c;
            }
            return chars.into_iter().collect();
        }
        Mutation::Number(i, v) => {
            // Byte ranges of digit runs.
            let b = text.as_bytes();
            let mut runs = Vec::new();
            let mut k = 0;
            while k < b.len() {
                if b[k].is_ascii_digit() {
                    let s = k;
                    while k < b.len() && (b[k].is_ascii_digit() || b[k] == b'.') {
                        k += 1;
                    }
                    runs.push((s, k));
                } else {
                    k += 1;
                }
            }
            if runs.is_empty() {
                return text.to_string();
            }
            let (s, e) = runs[i % runs.len()];
            return format!("{}{}{}", &text[..s], v, &text[e..]);
        }
        Mutation::Indent(i, d) => {
            if !lines.is_empty() {
                let l = &mut lines[i % n];
                if *d >= 0 {
                    *l = format!("{}{}", " ".repeat(*d as usize), l);
                } else {
                    let strip = (-*d as usize).min(l.len() - l.trim_start_matches(' ').len());
                    *l = l[strip..].to_string();
                }
            }
        }
        Mutation::Insert(i, s) => lines.insert(i % n, s.clone()),
    }
    lines.join("\n") + "\n"
}

fn check(file: &str, text: &str) -> Result<(), TestCaseError> {
    match parse_str(text, file, catalog()) {
        Ok(site) => {
            // A mutated file that still parses must still be a valid site.
            assert_valid(file, &site);
        }
        Err(e) => {
            prop_assert!(!e.errors.is_empty(), "an error list must not be empty");
            for err in &e.errors {
                prop_assert!(
                    !err.path.is_empty() || err.line.is_some(),
                    "a problem without a path or a line: {err:?}\n--- file:\n{text}"
                );
                prop_assert!(!err.message.is_empty() && err.fix.is_some(), "{err:?}");
            }
            let shown = e.to_string();
            prop_assert!(shown.lines().count() > e.errors.len());
        }
    }
    Ok(())
}

proptest! {
    // 2000 cases by default; PROPTEST_CASES=100000 for a longer campaign.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_site_files_never_panic(file in 0usize..64, muts in prop::collection::vec(mutation(), 1..5)) {
        let ex = examples();
        let (name, text) = &ex[file % ex.len()];
        let mut t = text.clone();
        for m in &muts {
            t = apply(&t, m);
        }
        check(name, &t)?;
    }

    #[test]
    fn arbitrary_yaml_ish_text_never_panics(text in "[a-z0-9:\\-\\[\\]{}\"'#&*!|>, \n\t.]{0,200}") {
        check("noise.yaml", &text)?;
    }
}

/// The mutations are not vacuous: deleting each line of each example in turn gives both sites that still
/// parse (comments, optional keys) and files with problems, and the problems are in file order.
#[test]
fn line_deletions_give_both_outcomes() {
    let (mut ok, mut bad) = (0, 0);
    for (file, text) in examples() {
        for i in 0..text.lines().count() {
            let t = apply(text, &Mutation::DeleteLine(i));
            check(file, &t).unwrap();
            match parse_str(&t, file, catalog()) {
                Ok(_) => ok += 1,
                Err(e) => {
                    bad += 1;
                    let places: Vec<_> = e.errors.iter().map(|x| (x.line, x.column)).collect();
                    let mut sorted = places.clone();
                    sorted.sort_by_key(|(l, c)| (l.unwrap_or(usize::MAX), c.unwrap_or(usize::MAX)));
                    assert_eq!(places, sorted, "{e}");
                }
            }
        }
    }
    assert!(ok > 50 && bad > 20, "ok {ok}, bad {bad}");
}
