//! Tests of the located serde reading (`de.rs`).

use super::*;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Row {
    label: String,
    n: u8,
    #[serde(default)]
    opt: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct File {
    id: String,
    rows: Vec<Row>,
    kind: Kind,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Nvme,
    NlSas,
}

#[test]
fn a_good_file_reads() {
    let f: File = from_yaml("id: x\nkind: nl_sas\nrows:\n  - { label: a, n: 3 }\n", "f.yaml").unwrap();
    assert_eq!(f.rows[0].n, 3);
    assert!(matches!(f.kind, Kind::NlSas));
}

#[test]
fn every_problem_is_reported_with_its_place_and_path() {
    let text = "id: x\nkind: nvmee\nrows:\n  - { label: a, n: 300 }\n  - { n: 1 }\n  - { label: c, n: x, colour: red }\nextra: 1\n";
    let e = from_yaml::<File>(text, "f.yaml").unwrap_err();
    let got: Vec<(String, Option<usize>)> = e.errors.iter().map(|e| (e.path.clone(), e.line)).collect();
    let want = [
        ("kind", 2),
        ("rows[0].n", 4),
        ("rows[1].label", 5),
        ("rows[2].n", 6),
        ("rows[2].colour", 6),
        ("extra", 7),
    ];
    for (p, l) in want {
        assert!(
            got.contains(&(p.to_string(), Some(l))),
            "{p} at line {l} not in {got:?}"
        );
    }
    assert!(e.errors.iter().all(|e| e.column.is_some() && e.fix.is_some()));
    assert!(
        e.to_string()
            .contains("f.yaml:2:7: kind: unknown value 'nvmee'; did you mean 'nvme'?"),
        "{e}"
    );
}

#[test]
fn many_missing_keys_are_all_found() {
    let rows: String = (0..30).map(|_| "  - { n: 1 }\n").collect();
    let e = from_yaml::<File>(&format!("kind: nvme\nrows:\n{rows}"), "f.yaml").unwrap_err();
    // id at the top, and label in each of the 30 rows.
    assert_eq!(e.errors.len(), 31, "{e}");
}

#[test]
fn positions_of_paths() {
    let d = Doc::parse("a:\n  b:\n    - x\n    - y: 1\n", "f").unwrap();
    assert_eq!(d.pos("a.b[1].y"), Some(Pos { line: 4, col: 10 }));
    assert_eq!(d.pos("a.b[1].zz"), Some(Pos { line: 4, col: 7 }));
}
