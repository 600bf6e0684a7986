//! The exact chain's data-loss figures held against the reference simulation (issue 33). At a site's own
//! rates a simulation sees no event at 1e-7 per year, so "agree within the interval" would pass anything:
//! the comparison that can fail is made on a copy of the layout with every failure rate multiplied (the
//! figures near 1e-2, thousands of events), and at the site's rates the reference's interval is shown for
//! what it is.

use super::chain::Chains;
use super::reference::{inflated, reference, Estimate, Reference, RunSpec, SparesBack};
use super::yearly::{Reliability, Yearly};
use super::Model;
use crate::catalog::Catalog;
use crate::layout::Layout;
use crate::site::Site;
use serde::Serialize;

/// One figure both methods give.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub what: String,
    /// The exact chain's figure (events per year).
    pub exact: f64,
    pub reference: Estimate,
    pub agrees: bool,
}

/// The comparison on a rate-inflated copy of the layout.
#[derive(Debug, Clone, Serialize)]
pub struct InflatedCheck {
    /// Every failure rate (and disk AFR) multiplied by this.
    pub rate_multiplier: f64,
    pub site_years: f64,
    /// The two-sided normal quantile of the reference's intervals a figure must fall in, and the relative
    /// difference accepted beside it (the chain's deliberate simplifications, second order at real rates).
    pub z: f64,
    pub relative_slack: f64,
    pub figures: Vec<Figure>,
    pub agrees: bool,
}

/// What `simulate` shows of the reference.
#[derive(Debug, Clone, Serialize)]
pub struct ReferenceCheck {
    /// The reference at the site's own rates, spares back when the replacement arrives (as the hardware).
    pub at_site_rates: Reference,
    /// The comparison that can fail.
    pub inflated: InflatedCheck,
}

/// The exact data-loss figures of `layout` (the destroyer chain `design` uses), with every other figure 0.
pub fn exact_data_loss(site: &Site, layout: &Layout, catalog: &Catalog) -> Option<Yearly> {
    let model = Model::new(site, layout);
    let rel_d = Reliability::destroyers(&model, catalog);
    Chains::data_loss(&rel_d)
}

/// The expected number of store-destroying components down at once under the inflated rates that
/// `inflation` aims at: rare enough concurrency that the chain's truncation and the first-order read-error
/// figure stay accurate, common enough that 100,000 simulated years see hundreds of losses.
pub const INFLATED_CONCURRENCY: f64 = 0.05;

/// The rate multiplier for the comparison: every failure rate × k, with k such that the expected number of
/// store-destroying components down at once (Σ λ·τ over them) is `INFLATED_CONCURRENCY`, between ×10 and
/// ×3,000 (issue 33 suggests ×100–1,000; a site of many slow drives needs less, a small SSD site more).
pub fn inflation(site: &Site, layout: &Layout, catalog: &Catalog) -> f64 {
    let model = Model::new(site, layout);
    let rel_d = Reliability::destroyers(&model, catalog);
    let busy: f64 = rel_d.components.iter().map(|c| c.rate_per_s * c.repair_s).sum();
    if busy <= 0.0 {
        return 1_000.0;
    }
    // Two significant digits: a multiplier a reader can repeat.
    let k = (INFLATED_CONCURRENCY / busy).clamp(10.0, 3_000.0);
    let scale = 10f64.powi(k.log10().floor() as i32 - 1);
    (k / scale).round() * scale
}

/// Hold the chain's data-loss figures against the reference for `layout` at rates × `k`, over about
/// `site_years` simulated years. A figure agrees when the chain's value (or it plus what the chain's cap
/// leaves out) lies in the reference's Garwood interval at `z`, or within `slack` of the reference's mean.
/// The reference gives spares back when a rebuild ends, as the chain does, so that the test is of the two
/// implementations of one model.
pub fn compare(
    site: &Site,
    layout: &Layout,
    catalog: &Catalog,
    k: f64,
    site_years: u64,
    z: f64,
    slack: f64,
) -> InflatedCheck {
    let (s2, c2) = inflated(site, catalog, k);
    let ex = exact_data_loss(&s2, layout, &c2).unwrap_or_default();
    let trials = 2_000u64;
    let years = site_years.div_ceil(trials).max(1);
    let run = RunSpec {
        trials,
        years,
        seed: 20_261_204,
        multiplier: 1.0,
        spares_back: SparesBack::WhenRebuilt,
    };
    let r = reference(&s2, layout, &c2, &run);
    let yrs = r.site_years;
    let beyond = ex.p_any_data_lost_beyond_cap_per_year.unwrap_or(0.0);
    let mut figures = Vec::new();
    let mut check = |what: String, x: f64, e: &Estimate| {
        let agrees =
            e.admits(x, yrs, z) || e.admits(x + beyond, yrs, z) || (x - e.per_year).abs() <= slack * e.per_year.max(x);
        figures.push(Figure {
            what,
            exact: x,
            reference: *e,
            agrees,
        });
    };
    // The chain's yearly probabilities are 1 − e^(−rate): compared as rates.
    let rate = |p: f64| -(-p).ln_1p();
    check(
        "any data lost, events per year".into(),
        rate(ex.p_any_data_lost_per_year),
        &r.any_data_lost_events_per_year,
    );
    check(
        "any asset wholly lost, events per year".into(),
        rate(ex.p_any_wholly_lost_per_year),
        &r.any_wholly_lost_events_per_year,
    );
    check(
        "read errors with no redundancy left, per year".into(),
        ex.corrupt_replica_events_per_year,
        &r.corrupt_replica_events_per_year,
    );
    // Each distinct set of figures once (assets of one placement share them). An asset its layout cannot
    // place (more replicas than servers: a rejected layout) has no replicas for the reference to follow.
    let mut seen: Vec<(u64, u64, u64)> = Vec::new();
    let placed = |i: usize| layout.assets[i].expected.len() == layout.assets[i].replicas as usize;
    let assets = ex
        .assets
        .iter()
        .zip(&r.assets)
        .enumerate()
        .filter(|(i, _)| placed(*i))
        .map(|(_, x)| x);
    for (a, b) in std::iter::once((&ex.meta, &r.meta)).chain(assets) {
        let key = (
            a.data_lost_events_per_year.to_bits(),
            a.wholly_lost_events_per_year.to_bits(),
            a.tail_lost_events_per_year.to_bits(),
        );
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        check(
            format!("{}: data lost per year", a.name),
            a.data_lost_events_per_year,
            &b.data_lost_events_per_year,
        );
        check(
            format!("{}: wholly lost per year", a.name),
            a.wholly_lost_events_per_year,
            &b.wholly_lost_events_per_year,
        );
        check(
            format!("{}: tail lost per year", a.name),
            a.tail_lost_events_per_year,
            &b.tail_lost_events_per_year,
        );
    }
    let agrees = figures.iter().all(|f| f.agrees);
    InflatedCheck {
        rate_multiplier: k,
        site_years: yrs,
        z,
        relative_slack: slack,
        figures,
        agrees,
    }
}

/// `simulate`'s reference section: the reference at the site's rates over `trials` × `years`, and the
/// comparison at inflated rates (100,000 site-years, 99.9 % intervals, 10 % slack).
pub fn check(site: &Site, layout: &Layout, catalog: &Catalog, trials: u64, years: u64, seed: u64) -> ReferenceCheck {
    let k = inflation(site, layout, catalog);
    ReferenceCheck {
        at_site_rates: reference(
            site,
            layout,
            catalog,
            &RunSpec {
                trials,
                years,
                seed,
                multiplier: 1.0,
                spares_back: SparesBack::WhenReplaced,
            },
        ),
        inflated: compare(site, layout, catalog, k, 100_000, 3.29, 0.1),
    }
}
