//! The site file through the real binary: every example is accepted by `design`, and a broken site file
//! exits 2 with the whole problem list on stderr and nothing on stdout.

use assert_cmd::Command;
use predicates::prelude::*;

#[test]
fn design_accepts_every_example() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            Command::cargo_bin("natsplan")
                .unwrap()
                .args(["design", "--top", "1"])
                .arg(&p)
                .assert()
                .success();
        }
    }
}

#[test]
fn a_broken_site_exits_2_with_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site.yaml");
    std::fs::write(
        &site,
        "site: t\nracks:\n  - name: A\n    servers: [a1]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.8t, disks: 3 }\n  - name: B\n    servers: [b1]\n    colour: red\n",
    )
    .unwrap();
    let shown = site.display().to_string();
    Command::cargo_bin("natsplan")
        .unwrap()
        .arg("design")
        .arg(&site)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(format!("{shown} has 2 problems:")))
        .stderr(predicate::str::contains(format!(
            "{shown}:6:47: racks[0].arrays[0].disk_model: unknown disk model 'nvme-3.8t'; did you mean 'nvme-3.84t'?"
        )))
        .stderr(predicate::str::contains(format!(
            "{shown}:9:5: racks[1].colour: unknown key 'colour'"
        )));
}
