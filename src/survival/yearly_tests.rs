//! The yearly figures and their Markov chain: seed claims, thread-count independence, the meta group's
//! acknowledged loss, exact and Monte Carlo figures agreeing, the chain's size and fallback, and election
//! stalls summed per group.

use super::fixture::{site, LayoutBuilder};
use super::tests::{build, case_strategy, five_on_221, rack, three_racks};
use super::*;
use crate::layout::Raid;
use crate::site::{Pattern, Site};
use crate::units::SyncMode;
use proptest::prelude::*;

/// A copy of the site with failure rates raised so that a few thousand simulated years see every kind of
/// event (the model is the same; only the numbers are bigger).
fn stressed(mut s: Site) -> Site {
    s.failure_rates = vec![
        ("server_crash_per_year".into(), 20.0),
        ("process_crash_per_year".into(), 10.0),
        ("server_afr".into(), 2.0),
        ("disk_afr".into(), 5.0),
        ("array_outage_per_year".into(), 5.0),
        ("rack_power_per_year".into(), 5.0),
        ("rack_net_per_year".into(), 5.0),
        ("not_return_after_power".into(), 0.3),
    ];
    s
}

#[test]
fn yearly_figures_follow_the_seed_claims() {
    let cat = crate::catalog::Catalog::builtin();
    // One rack: every rack power event is an outage and, with delayed sync, an acked-loss event.
    let mut one = site(
        &[rack("A", &["n1", "n2", "n3"], &[("A1", 12)])],
        SyncMode::Interval(120),
    );
    fixture::add_stream(&mut one, "orders", 1000.0);
    let l1 = LayoutBuilder::new(&one, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 3, false)
        .build();
    let y1 = yearly(&one, &l1, &cat);
    assert_eq!(y1.method, "exact");
    let mut three = three_racks(SyncMode::Interval(120));
    fixture::add_stream(&mut three, "orders", 1000.0);
    let l3 = LayoutBuilder::new(&three, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 3, true)
        .build();
    let y3 = yearly(&three, &l3, &cat);
    // A rack per replica is far more available than one rack.
    assert!(y1.assets[0].unavailable_min_per_year > 10.0 * y3.assets[0].unavailable_min_per_year);
    assert!(
        y1.assets[0].acked_msgs_lost_per_year > 100.0 * y3.assets[0].acked_msgs_lost_per_year,
        "{} vs {}",
        y1.assets[0].acked_msgs_lost_per_year,
        y3.assets[0].acked_msgs_lost_per_year
    );
    // 0.1 power events a year × 30 s × 1000 msg/s ≈ 3,000 messages a year, plus array outages.
    assert!(y1.assets[0].acked_msgs_lost_per_year > 2000.0);
    // ≈ 0.1 power events per year × 1 h 5 min ≈ 6.5 min/yr, plus the rest.
    assert!(
        y1.assets[0].unavailable_min_per_year > 5.0,
        "{}",
        y1.assets[0].unavailable_min_per_year
    );
    // With sync always, nothing acknowledged is lost in a sync window (a rack lost for good still loses
    // what it held: issue 32).
    let mut one_always = one.clone();
    one_always.nats.sync = SyncMode::Always;
    assert_eq!(yearly(&one_always, &l1, &cat).window_msgs_lost_per_year, 0.0);
    // R1 is unavailable during every planned restart of its server.
    let lr1 = LayoutBuilder::new(&three, Pattern::P1, Raid::Raid1, 1, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("single", 1, false)
        .build();
    let yr1 = yearly(&three, &lr1, &cat);
    assert!(yr1.assets[0].planned_unavailable_min_per_year > 0.0);
    assert_eq!(y3.assets[0].planned_unavailable_min_per_year, 0.0);
    // Pattern 2 (RAID 0 per server) loses data more often than pattern 1 (RAID 1 per server).
    let l2 = LayoutBuilder::new(&three, Pattern::P2, Raid::Raid0, 3, &[])
        .own_groups(Raid::Raid0, 1)
        .stream("orders", 3, true)
        .build();
    let y2 = yearly(&three, &l2, &cat);
    assert!(y2.assets[0].data_lost_events_per_year > y3.assets[0].data_lost_events_per_year);
    assert!(y2.assets[0].mttdl_years.is_some());
}

#[test]
fn monte_carlo_is_the_same_on_any_number_of_threads() {
    let cat = crate::catalog::Catalog::builtin();
    let s = stressed(five_on_221(SyncMode::Interval(120)));
    let l = LayoutBuilder::new(&s, Pattern::P2, Raid::Raid0, 3, &[])
        .own_groups(Raid::Raid0, 1)
        .stream("orders", 3, false)
        .build();
    let m = Model::new(&s, &l);
    let rel = Reliability::new(&m, &cat);
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| monte_carlo(&rel, 350, 2, 42, None))
    };
    let (a, b) = (run(1), run(3));
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    assert_ne!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&monte_carlo(&rel, 350, 2, 43, None)).unwrap()
    );
}

/// Seed 004's example site and its plan (three guests on one host).
pub(super) fn seed004_plan() -> (crate::catalog::Catalog, crate::site::Site, crate::plan::Plan) {
    let cat = crate::catalog::Catalog::builtin();
    let site = crate::site::load(
        std::path::Path::new("examples/seed004-three-guests-one-host.yaml"),
        &cat,
    )
    .unwrap();
    let plan = crate::plan::build(&site, &cat);
    (cat, site, plan)
}

/// The meta group holds no messages: its acknowledged-loss estimate and interval are 0 (seed004's simulate
/// printed 0 with an interval of 2.19-2.22: the unscaled event rate).
#[test]
fn the_meta_group_loses_no_acked_messages_and_its_interval_says_so() {
    let (cat, site, plan) = seed004_plan();
    let l = plan.layouts[0].placed().unwrap();
    let m = Model::new(&site, l);
    let rel = Reliability::new(&m, &cat);
    let y = monte_carlo(&rel, 2000, 1, 42, None);
    let lossy = y.assets.iter().find(|a| a.acked_msgs_lost_per_year > 0.0);
    assert!(lossy.is_some(), "the site must lose acked messages");
    assert_eq!(y.meta.acked_msgs_lost_per_year, 0.0);
    assert_eq!(y.meta.ci95.as_ref().unwrap().acked_msgs_lost_per_year, (0.0, 0.0));
}

/// Bonferroni-corrected z: two-sided α = 1e-7 over up to 1,000 comparisons.
const Z: f64 = 7.0;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 6,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_130),
        ..ProptestConfig::default()
    })]

    /// The Monte Carlo and the exact chain agree (same truncation) within corrected intervals. The MC's
    /// standard error is floored by a conservative bound from the exact mean (compound Poisson with
    /// exponential episodes: variance ≤ 2 × longest mean repair × mean), so a lucky run with no events
    /// cannot fail the test.
    #[test]
    fn exact_and_monte_carlo_agree(case in case_strategy().prop_filter("small", |c| c.servers_per_rack.iter().sum::<usize>() <= 5)) {
        let cat = crate::catalog::Catalog::builtin();
        let (s, l) = build(&case);
        let s = stressed(s);
        let m = Model::new(&s, &l);
        let rel = Reliability::new(&m, &cat);
        let cap = 3;
        let ex = exact_at(&rel, cap, 1_000_000).unwrap();
        let years = 3000;
        let mc = monte_carlo(&rel, years, 1, 7, Some(cap));
        let n = years as f64;
        let d_max = rel.components.iter().map(|c| c.repair_s).fold(0.0, f64::max);
        for (e, m) in std::iter::once((&ex.meta, &mc.meta)).chain(ex.assets.iter().zip(&mc.assets)) {
            let ci = m.ci95.as_ref().unwrap();
            // Unavailable minutes (unplanned part is random; planned is identical in both).
            let mc_se = (ci.unavailable_min_per_year.1 - ci.unavailable_min_per_year.0) / (2.0 * 1.96);
            let floor = (2.0 * d_max / 60.0 * e.unavailable_min_per_year / n).sqrt();
            let tol = Z * mc_se.max(floor) + 1e-9;
            prop_assert!((e.unavailable_min_per_year - m.unavailable_min_per_year).abs() <= tol,
                "{}: exact {} vs mc {} (tol {})", e.name, e.unavailable_min_per_year, m.unavailable_min_per_year, tol);
            // Data-lost events per year (counts: variance at least the mean for Poisson-like counts; clusters
            // of up to all assets at once bound it by 4 × mean here).
            let mc_se = (ci.data_lost_events_per_year.1 - ci.data_lost_events_per_year.0) / (2.0 * 1.96);
            let floor = (4.0 * e.data_lost_events_per_year / n).sqrt();
            let tol = Z * mc_se.max(floor) + 1e-9;
            prop_assert!((e.data_lost_events_per_year - m.data_lost_events_per_year).abs() <= tol,
                "{}: exact dl {} vs mc {} (tol {})", e.name, e.data_lost_events_per_year, m.data_lost_events_per_year, tol);
        }
        // Acked-loss events (any asset): compare the totals via the meta group and assets' message counts.
        prop_assert!((ex.acked_msgs_lost_per_year - mc.acked_msgs_lost_per_year).abs()
            <= Z * (ex.acked_msgs_lost_per_year.max(mc.acked_msgs_lost_per_year) * 4.0 * 30.0 * 2000.0 / n).sqrt() + 1e-9,
            "acked exact {} vs mc {}", ex.acked_msgs_lost_per_year, mc.acked_msgs_lost_per_year);
    }
}

#[test]
fn chain_size_and_design_fallback() {
    assert_eq!(chain_states(4, 2), 1 + 4 + 6);
    assert_eq!(chain_states(3, 5), 8);
    // A large site is beyond the exact chain: design gets a Monte Carlo estimate.
    let (s, l) = fixture::large(12, 4, 2, 12, 10);
    let y = yearly(&s, &l, &crate::catalog::Catalog::builtin());
    assert_eq!(y.method, "monte_carlo");
    assert_eq!(y.assets.len(), l.assets.len());
}

#[test]
fn rank_key_compares_orders_of_magnitude() {
    let mut a: Yearly = Yearly {
        p_any_data_lost_per_year: 3e-6,
        acked_msgs_lost_per_year: 0.0,
        worst_unavailable_min_per_year: 12.0,
        ..Yearly::default()
    };
    let b: Yearly = Yearly {
        p_any_data_lost_per_year: 7e-6,
        acked_msgs_lost_per_year: 0.0,
        worst_unavailable_min_per_year: 19.0,
        ..Yearly::default()
    };
    assert_eq!(a.rank_key(), b.rank_key());
    a.p_any_data_lost_per_year = 0.0;
    assert!(a.rank_key() < b.rank_key());
}

#[test]
fn election_stalls_by_group_are_each_assets_own_sum() {
    // Every layout of a site of R1/R3/R5 streams with consumers on mirrored and striped volumes: the
    // stall per asset, summed once per group of assets with the same class and expected servers, is bit
    // for bit the plain sum over every component for each asset; and the placement classes are numbered
    // as a map of each asset's sorted server set numbers them.
    let t = crate::sitegen::test_site(
        "site: stalls\nnats: { replicas: [3, 5] }\npolicy: { patterns: [\"1\", \"2\"] }\n",
        3,
        2,
        |_| "model: EF600, disk_model: nvme-3.84t, disks: 6".to_string(),
        24,
        |s| {
            format!(
                "msgs_per_s: 10, msg_size: 1KiB, retention: 1h, consumers: {}, replicas: {}",
                s % 3,
                [1, 3, 5][s % 3]
            )
        },
    );
    let cat = crate::catalog::Catalog::builtin();
    let site = crate::site::parse_str(&t, "stalls.yaml", &cat).unwrap();
    let mut compared = 0;
    for l in crate::layout::Enumerate::new(&site, &cat)
        .placed()
        .iter()
        .filter(|l| !l.servers.is_empty())
    {
        let model = Model::new(&site, l);
        let rel = Reliability::new(&model, &cat);
        // Classes: the first appearance of each (sorted expected servers, replicas) numbers it.
        let mut seen: std::collections::HashMap<(Vec<usize>, u8, bool), usize> = Default::default();
        for (i, a) in l.assets.iter().enumerate() {
            let src = &l.assets[model.source(i)];
            let expected = if a.expected.is_empty() {
                &src.expected
            } else {
                &a.expected
            };
            let (mut key, u) = if expected.len() == a.replicas as usize {
                (expected.to_vec(), false)
            } else {
                let (c, u) = model.placement(i);
                (c.to_vec(), u)
            };
            key.sort_unstable();
            let next = seen.len() + 1;
            assert_eq!(
                rel.prep.asset_class[i],
                *seen.entry((key, a.replicas, u)).or_insert(next),
                "{}",
                l.id
            );
        }
        // Stalls: each asset's own sum, component by component.
        for (i, a) in l.assets.iter().enumerate() {
            let mut want = 0.0f64;
            for (c, comp) in rel.components.iter().enumerate() {
                if comp.rate_per_s <= 0.0 || a.expected.is_empty() {
                    continue;
                }
                let k = rel.prep.asset_class[i];
                if rel.single[c][2 * k] != Status::Degraded as u8 {
                    continue;
                }
                let (eff, _, _) = model.effects(std::slice::from_ref(&comp.domain));
                let per_year = comp.rate_per_s * crate::units::YEAR_S * ELECTION_STALL_S;
                let down = a.expected.iter().filter(|&&s| eff[s].down).count();
                want += per_year * down as f64 / a.expected.len() as f64;
            }
            assert_eq!(
                rel.election_stall_s[1 + i].to_bits(),
                want.to_bits(),
                "{} {}",
                l.id,
                a.name
            );
            compared += usize::from(want > 0.0);
        }
    }
    assert!(compared > 50, "{compared} assets with a stall");
}
