//! The server-selection optimiser (good_lp/microlp) against an independent checker and against brute
//! force on random small sites, and its layouts against survival's `tolerates`.

use natsplan::catalog::Catalog;
use natsplan::layout::optimize::{brute_force, check, optimise};
use natsplan::site::Pattern;
use natsplan::sitegen;
use proptest::prelude::*;

/// A fixed seed, so CI cannot fail by chance (ARCHITECTURE.md "Seeds"); `PROPTEST_RNG_SEED=N` explores another.
fn rng_seed() -> proptest::test_runner::RngSeed {
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.parse().ok());
    proptest::test_runner::RngSeed::Fixed(seed.unwrap_or(20261201))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        rng_seed: rng_seed(),
        ..ProptestConfig::default()
    })]

    #[test]
    fn solver_matches_brute_force_and_passes_the_checker(seed in any::<u64>(), p in 0usize..3) {
        let pattern = [Pattern::P1, Pattern::P2, Pattern::P4][p];
        let cat = Catalog::builtin();
        let g = sitegen::small(seed);
        let Ok(site) = natsplan::site::parse_str(&g.to_yaml(false), "gen.yaml", &cat) else { return Ok(()); };
        for &r in &site.nats.replicas {
            let solved = optimise(&site, &cat, pattern, r);
            let brute = brute_force(&site, &cat, pattern, r);
            match (&solved, &brute) {
                (None, None) => {}
                (Some(s), Some(b)) => {
                    prop_assert!(check(&site, &cat, pattern, r, s).is_ok(), "solver's choice fails the checker: {s:?}");
                    prop_assert_eq!(s.tolerated_racks, b.tolerated_racks, "solver {:?} brute {:?}", s, b);
                    prop_assert_eq!((s.disks, s.arrays), (b.disks, b.arrays), "solver {:?} brute {:?}", s, b);
                }
                _ => prop_assert!(false, "solver {solved:?} vs brute force {brute:?}"),
            }
        }
    }

    #[test]
    fn optimised_layouts_tolerate_what_the_solver_promised(seed in any::<u64>()) {
        tolerates_what_was_promised(seed)?;
    }
}

/// The counterexample a random run found (sitegen seed 4154032069908730032): an R4 layout on 2+2+1 racks
/// (racks of 2, 3 and 2 servers; `p1-raid1-r4-R0x2.R1x2.R2x1`) where survival says 0 racks and the solver promised 1, because it
/// counted only the meta group's quorum (4 replicas over 3 racks put 2 in one rack; losing it leaves 2
/// of 4, below the quorum of 3). `layout::optimize`'s unit test `r4_over_three_racks_tolerates_no_rack`
/// holds the same shape.
#[test]
fn the_r4_on_two_two_one_racks_counterexample_tolerates_what_was_promised() {
    let g = sitegen::small(4154032069908730032);
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(&g.to_yaml(false), "gen.yaml", &cat).expect("the recorded site parses");
    assert!(
        site.nats.replicas.contains(&4),
        "the recorded site changed; re-record the counterexample"
    );
    tolerates_what_was_promised(4154032069908730032).unwrap();
}

fn tolerates_what_was_promised(seed: u64) -> Result<(), TestCaseError> {
    let cat = Catalog::builtin();
    let g = sitegen::small(seed);
    let Ok(site) = natsplan::site::parse_str(&g.to_yaml(false), "gen.yaml", &cat) else {
        return Ok(());
    };
    let plan = natsplan::plan::build(&site, &cat);
    for &pattern in &[Pattern::P1, Pattern::P2] {
        for &r in &site.nats.replicas {
            let Some(c) = optimise(&site, &cat, pattern, r) else {
                continue;
            };
            // The layout built from the choice is in the plan; the real checker (survival) agrees.
            let found = plan.layouts.iter().find(|l| {
                l.hardware().pattern == pattern && l.replicas == r && {
                    let mut per = vec![0u32; site.racks.len()];
                    for &s in &l.hardware().servers {
                        per[site.servers[s].rack] += 1;
                    }
                    per == c.per_rack
                }
            });
            let Some(l) = found else { continue };
            prop_assert!(
                l.tolerates.racks >= c.tolerated_racks,
                "{}: survival says {} racks, solver {}",
                l.id,
                l.tolerates.racks,
                c.tolerated_racks
            );
        }
    }
    Ok(())
}
