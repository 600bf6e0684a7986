//! Property tests for the design pipeline on random small sites: physical sanity of every layout
//! (capacity never negative, disks never double-booked, LUNs within their groups), deterministic
//! ranking, and ids that do not depend on the order of the input file.

use natsplan::catalog::Catalog;
use natsplan::plan::{build, Plan};
use natsplan::sitegen;
use proptest::prelude::*;
use std::collections::HashSet;

fn plan_of(yaml: &str) -> Option<Plan> {
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(yaml, "gen.yaml", &cat).ok()?;
    Some(build(&site, &cat))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn layouts_are_physically_sane(seed in any::<u64>()) {
        let g = sitegen::small(seed);
        let Some(plan) = plan_of(&g.to_yaml(false)) else { return Ok(()); };
        let site = &plan.input;
        for pl in &plan.layouts {
            let l = pl.placed().unwrap();
            prop_assert!(pl.capacity.headroom <= 1.0);
            prop_assert!(pl.capacity.usable_bytes >= pl.servers.iter().map(|s| s.store_bytes).max().unwrap_or(0));
            // Disks: each slot used once per array, within the array, never a kept hot spare.
            let mut used: HashSet<(usize, u32)> = HashSet::new();
            for g in &l.groups {
                let arr = &site.arrays[g.array];
                for &d in &g.disks {
                    prop_assert!(d >= 1 && d <= arr.disks, "disk {d} outside {}", arr.name);
                    prop_assert!(used.insert((g.array, d)), "disk {d} of {} used twice", arr.name);
                }
                let (min, _) = g.raid.disk_rule();
                prop_assert!(g.disks.len() as u32 >= min.min(2) || g.raid == natsplan::layout::Raid::Raid0);
            }
            for (a, n) in &l.spares {
                let in_groups = l.groups.iter().filter(|g| g.array == *a).map(|g| g.disks.len() as u32).sum::<u32>();
                prop_assert!(in_groups + n <= site.arrays[*a].disks);
            }
            // LUNs fit their group; one LUN per JetStream server.
            for (gi, g) in l.groups.iter().enumerate() {
                let sum: u64 = l.luns.iter().filter(|x| x.group == gi).map(|x| x.size_bytes).sum();
                prop_assert!(sum <= g.usable_bytes, "{} over-allocated", g.name);
            }
            prop_assert_eq!(l.luns.len(), l.servers.len());
            // Expected placement respects replica counts and eligibility.
            for a in &l.assets {
                prop_assert!(a.expected.len() <= a.replicas as usize);
                for s in &a.expected {
                    prop_assert!(a.candidates.contains(s));
                }
                if a.unique_rack {
                    let mut racks: Vec<usize> = a.expected.iter().map(|&s| site.servers[s].rack).collect();
                    racks.sort_unstable();
                    racks.dedup();
                    prop_assert_eq!(racks.len(), a.expected.len());
                }
            }
        }
    }

    #[test]
    fn ranking_is_deterministic_and_ids_ignore_input_order(seed in any::<u64>()) {
        let g = sitegen::small(seed);
        let (Some(a), Some(b), Some(c)) = (plan_of(&g.to_yaml(false)), plan_of(&g.to_yaml(false)), plan_of(&g.to_yaml(true))) else {
            return Ok(());
        };
        let ids = |p: &Plan| p.layouts.iter().map(|l| l.id.clone()).collect::<Vec<_>>();
        prop_assert_eq!(ids(&a), ids(&b));
        prop_assert_eq!(ids(&a), ids(&c), "reordering the site file changed the layouts or their ranking");
    }
}
