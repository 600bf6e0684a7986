//! whatif's sweeps agree with design's `tolerates` on the example sites' real plans: for every layout and
//! kind, every combination of up to k failures keeps everything writable exactly when tolerates ≥ k (k ≤ 2).

use natsplan::catalog::Catalog;
use natsplan::survival::{sweep, Model, TOLERANCE_KINDS};

#[test]
fn sweeps_of_up_to_two_failures_agree_with_tolerates_on_the_examples() {
    let cat = Catalog::builtin();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let site = natsplan::site::load(&path, &cat).unwrap_or_else(|e| panic!("{e}"));
        let plan = natsplan::plan::build(&site, &cat);
        for pl in &plan.layouts {
            let model = Model::new(&site, pl.placed().unwrap());
            for (name, kind) in TOLERANCE_KINDS {
                let tol = match name {
                    "racks" => pl.tolerates.racks,
                    "arrays" => pl.tolerates.arrays,
                    "servers" => pl.tolerates.servers,
                    _ => pl.tolerates.disks,
                };
                for k in 1..=2usize {
                    let sw = sweep(&model, &[kind], k);
                    if sw.domains < k {
                        continue;
                    }
                    let all_writable = sw.classes.iter().all(|c| c.example.worst_asset().writable());
                    assert_eq!(
                        tol as usize >= k,
                        all_writable,
                        "{}: layout {} {name}: tolerates {tol}, but up to {k} failures {}",
                        path.display(),
                        pl.id,
                        if all_writable {
                            "are all fine"
                        } else {
                            "break something"
                        }
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 0, "no example site found in {}", dir.display());
}
