//! `natsplan size WORKLOAD.yaml --have SITE.yaml` (issue 48): what to add to a site you already own. The
//! owned hardware (the `--have` site's racks, servers, arrays and disks) is kept in every candidate at
//! cost 0; candidates add what the workload's `size:` key allows — disks into free slots of owned arrays
//! (`+fillK`), servers (into owned racks, with disks in the rack's array, internal disks or a new array),
//! and racks — and are planned and judged exactly as `size` plans bills (`search`). The zero bill `have`
//! is the owned site as it is, so a site that meets the workload's requirements is its own cheapest
//! candidate. Each candidate names its migration from today's layout (`migrate`), and with
//! `policy.growth` the growth path says when the owned site stops meeting the requirements (`growth`).

pub mod grow;
pub mod migrate;

use super::bill::{Bill, Skip};
use super::{SizeSpec, WorkloadFile};
use crate::catalog::Catalog;
use crate::input::{Doc, InputError};
use crate::site::Site;
use grow::{Added, GRack, Grow, Summary};
use serde::Serialize;
use std::sync::Arc;

/// The owned site: its racks as parts, their counts, and today's layout on them.
#[derive(Debug, Clone)]
pub struct Have {
    pub file: String,
    pub racks: Vec<GRack>,
    pub owned: Summary,
    pub today: migrate::Today,
}

impl Have {
    /// Disk models of owned arrays that may take more disks (top-ups and added servers' shares).
    pub fn top_up_disk_models(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .racks
            .iter()
            .flat_map(|r| &r.arrays)
            .filter(|a| grow::growable(a))
            .map(|a| a.disk_model.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

/// A bill's grown site: its racks block, its counts, and what it owns and adds.
#[derive(Debug, Clone)]
pub struct Grown {
    pub yaml: String,
    pub total: Summary,
    pub owned: Summary,
    pub added: Added,
}

/// The id of the zero bill: the owned site with nothing added.
pub const ZERO: &str = "have";

/// What `--have` and `--have-layout` give, with the workload's own text (for the places of its keys).
pub struct HaveArgs<'a> {
    pub text: &'a str,
    pub file: &'a str,
    pub workload_text: &'a str,
    pub layout: Option<&'a str>,
}

/// Read the `--have` site: the site parser's problems at their places (a model not in the catalog among
/// them), then its conflicts with the workload, then today's layout (design's first on the site as it is,
/// or `--have-layout`'s).
pub fn read(a: &HaveArgs, w: &WorkloadFile, catalog: &Catalog, cal: &crate::perf::Calibration) -> anyhow::Result<Have> {
    let site = crate::site::parse_str(a.text, a.file, catalog)?;
    conflicts(a, &site, w, catalog)?;
    let plan = crate::plan::build_with(&site, catalog, cal);
    let today = match a.layout {
        Some(id) => {
            let l = plan.layouts.iter().find(|l| l.id == id).ok_or_else(|| {
                let ids: Vec<&str> = plan.layouts.iter().take(5).map(|l| l.id.as_str()).collect();
                anyhow::anyhow!(
                    "--have-layout {id}: no layout of {} has that id\n      fix: give one of design's ids for that \
                     site (natsplan design {}), e.g. {}",
                    a.file,
                    a.file,
                    ids.join(", ")
                )
            })?;
            migrate::Today::of(l, false)
        }
        None => match plan.layouts.first() {
            Some(l) => migrate::Today::of(l, true),
            None => anyhow::bail!(
                "{}: design finds no layout on this site, so today's layout is unknown\n      fix: run `natsplan \
                 design {}` and fix what it says first",
                a.file,
                a.file
            ),
        },
    };
    let racks = grow::from_site(&site);
    Ok(Have {
        file: a.file.to_string(),
        owned: Summary::of(&racks),
        racks,
        today,
    })
}

/// The workload and the owned site must describe the same site: the same `site:` name and failure
/// figures, and `size:` ranges that hold the owned racks and servers. Each problem at its place.
fn conflicts(a: &HaveArgs, site: &Site, w: &WorkloadFile, catalog: &Catalog) -> anyhow::Result<()> {
    let wdoc = Doc::parse(a.workload_text, &w.file)?;
    let hdoc = Doc::parse(a.text, a.file)?;
    let mut werr: Vec<InputError> = Vec::new();
    let mut herr: Vec<InputError> = Vec::new();
    let owned = Summary::of(&grow::from_site(site));
    for (key, have, most) in [
        ("racks", owned.racks, w.spec.racks.1),
        ("servers", owned.servers, w.spec.servers.1),
    ] {
        if have > most {
            werr.push(wdoc.error(
                &format!("size.{key}"),
                format!(
                    "the --have site {} has {have} {key}, more than the {most} size.{key} allows: owned hardware is kept \
                     in every candidate",
                    a.file
                ),
                format!("raise size.{key} to [{have}, {}] or more", have.max(most) + 2),
            ));
        }
    }
    let probe = super::probe_site(w, catalog)?;
    if probe.name != site.name {
        herr.push(hdoc.error(
            "site",
            format!(
                "the --have site is '{}' but the workload {} is for '{}'",
                site.name, w.file, probe.name
            ),
            "give both files the same `site:` name (the workload file is this site's coming workload), or pass the \
             right --have site",
        ));
    }
    for (key, mine, theirs) in [
        ("failure_rates", &site.failure_rates, &probe.failure_rates),
        ("repair_times", &site.repair_times, &probe.repair_times),
        ("maintenance", &site.maintenance, &probe.maintenance),
    ] {
        if mine != theirs {
            herr.push(hdoc.error(
                key,
                format!(
                    "`{key}` differs from the workload's ({}): candidates are planned with the workload file's, so \
                     this site's would be dropped",
                    w.file
                ),
                format!("give the same `{key}` in both files (copy this block into the workload file)"),
            ));
        }
    }
    let mut text = String::new();
    if !werr.is_empty() {
        text.push_str(&wdoc.errors(werr).to_string());
    }
    if !herr.is_empty() {
        text.push_str(&hdoc.errors(herr).to_string());
    }
    if text.is_empty() {
        Ok(())
    } else {
        Err(anyhow::anyhow!("{}", text.trim_end()))
    }
}

/// The data-disk counts, models and storage an added server may take: every combination when servers are
/// added, one (unused) when none are.
fn choices(spec: &SizeSpec, servers: u32) -> Vec<(&str, &super::StorageKind, &str, u32)> {
    let mut out = Vec::new();
    for sm in &spec.server_models {
        for st in &spec.storage {
            for dm in &spec.disk_models {
                for k in spec.disks_per_server.0..=spec.disks_per_server.1 {
                    out.push((sm.as_str(), st, dm.as_str(), k));
                    if servers == 0 {
                        return out;
                    }
                }
            }
        }
    }
    out
}

/// Every grown site the `size:` ranges allow (as totals: owned plus added), the zero bill first, each a
/// bill or why it does not fit. The ranges' lower bounds do not apply: owned hardware is what it is.
pub fn enumerate(h: &Have, spec: &SizeSpec, catalog: &Catalog) -> Vec<Result<Bill, Skip>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let fills: Vec<Option<u32>> = std::iter::once(None)
        .chain((spec.disks_per_server.0..=spec.disks_per_server.1).map(Some))
        .collect();
    let more_servers = spec.servers.1.saturating_sub(h.owned.servers);
    let more_racks = spec.racks.1.saturating_sub(h.owned.racks);
    for fill in fills {
        for servers in 0..=more_servers {
            for racks in 0..=more_racks.min(servers) {
                for (sm, st, dm, k) in choices(spec, servers) {
                    let g = Grow {
                        fill,
                        servers,
                        racks,
                        server_model: sm,
                        storage: st,
                        disk_model: dm,
                        disks: k,
                    };
                    match grow::grow(&h.racks, spec, catalog, &g) {
                        Err(s) => out.push(Err(s)),
                        Ok((grown, added, filled)) => {
                            let id = g.id(filled);
                            if seen.insert(id.clone()) {
                                out.push(Ok(bill(h, id, &g, grown, added)));
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

fn bill(h: &Have, id: String, g: &Grow, racks: Vec<GRack>, added: Added) -> Bill {
    Bill {
        id,
        racks: Vec::new(),
        server_model: g.server_model.into(),
        storage: g.storage.clone(),
        disk_model: g.disk_model.into(),
        disks_per_server: g.disks,
        grown: Some(Arc::new(Grown {
            yaml: grow::racks_yaml(&racks),
            total: Summary::of(&racks),
            owned: h.owned.clone(),
            added,
        })),
    }
}

/// What `size --have` says before the candidates: today's site judged against the workload (its best
/// point and the constraint that binds it), today's layout, and the growth path.
#[derive(Debug, Clone, Serialize)]
pub struct HaveReport {
    /// The `--have` site file.
    pub site: String,
    pub owned: Summary,
    /// Today's layout (what the migrations start from).
    pub today_layout: migrate::Today,
    /// The zero bill's best point (`have/LAYOUT`), whether it meets every requirement, and its binding
    /// constraint, in one line: "today's site fails on capacity after rack:A: …".
    pub today: Option<String>,
    pub today_meets_requirements: bool,
    pub today_binding: Option<super::search::Binding>,
    pub today_text: String,
    /// With `policy.growth` > 0: when the owned site stops meeting the requirements.
    pub growth: Option<Growth>,
}

/// The growth path.
#[derive(Debug, Clone, Serialize)]
pub struct Growth {
    /// `policy.growth` (a fraction a year) and `policy.horizon` in months.
    pub growth_per_year: f64,
    pub horizon_months: u32,
    /// The last whole month (from now) at whose end the owned site still meets every requirement: None
    /// when it fails already now (month 0), `horizon_months` when it lasts the horizon.
    pub meets_until_month: Option<u32>,
    /// The cheapest candidate that meets the requirements at the horizon: what to add by then.
    pub add_by_then: Option<String>,
    pub text: String,
}

#[cfg(test)]
mod tests;

/// Today's site against the workload (the zero bill's points) and the growth path.
pub fn report(
    h: &Have,
    w: &WorkloadFile,
    s: &super::search::Sizing,
    catalog: &Catalog,
    cal: &crate::perf::Calibration,
) -> HaveReport {
    let zero: Vec<&super::search::Point> = s.candidates.iter().filter(|p| p.bill == ZERO).collect();
    // The point that tells most about today: one that meets every requirement (the lowest loss odds),
    // else the one closest to meeting them (its binding constraint's margin highest).
    let odds = |p: &&super::search::Point| p.p_any_data_lost_per_year.unwrap_or(f64::INFINITY);
    let margin = |p: &&super::search::Point| p.binding.as_ref().map(|b| b.ratio()).unwrap_or(f64::INFINITY);
    let meeting = zero
        .iter()
        .filter(|p| p.meets_requirements)
        .min_by(|a, b| odds(a).total_cmp(&odds(b)));
    let best = meeting.or_else(|| {
        zero.iter()
            .min_by(|a, b| a.verdict.cmp(&b.verdict).then(margin(b).total_cmp(&margin(a))))
    });
    let binding = best.and_then(|p| p.binding.clone());
    let what = binding
        .as_ref()
        .map(|b| format!("{} ({})", b.kind, b.text))
        .unwrap_or_else(|| "no figure".into());
    let today_text = match (meeting, best) {
        (Some(p), _) => format!(
            "today's site meets every requirement of the workload: {} (binding: {what})",
            p.id
        ),
        (None, Some(p)) => format!(
            "today's site fails on {what}: its closest layout {} ({})",
            p.id,
            p.verdict.as_str()
        ),
        (None, None) => "today's site has no layout design can plan for this workload".into(),
    };
    HaveReport {
        site: h.file.clone(),
        owned: h.owned.clone(),
        today_layout: h.today.clone(),
        today: best.map(|p| p.id.clone()),
        today_meets_requirements: meeting.is_some(),
        today_binding: binding,
        today_text,
        growth: growth(w, s, meeting.is_some(), catalog, cal),
    }
}

/// Whether the zero site, planned at a horizon of `months`, has a layout that meets `required`.
fn meets_at(
    site: &Site,
    months: u32,
    required: &crate::site::Tolerance,
    catalog: &Catalog,
    cal: &crate::perf::Calibration,
) -> bool {
    let mut site = site.clone();
    site.policy.horizon_s = f64::from(months) * crate::units::YEAR_S / 12.0;
    let plan = crate::plan::build_with(&site, catalog, cal);
    plan.layouts.iter().any(|l| {
        let b = super::search::binding(l, required);
        super::search::meets(l, b.as_ref())
    })
}

/// The growth path: with `policy.growth` above 0, the last month the owned site still meets every
/// requirement, found by planning it at whole-month horizons (bisection: growth only adds stored bytes,
/// so meeting them is monotone in time), and the cheapest candidate to add by then.
fn growth(
    w: &WorkloadFile,
    s: &super::search::Sizing,
    meets_at_horizon: bool,
    catalog: &Catalog,
    cal: &crate::perf::Calibration,
) -> Option<Growth> {
    // The zero bill's site as planned (its text may lower an outage size can not ask of it; it is judged
    // against the workload's own requirement, as its points are).
    let text = &s.sites.iter().find(|(id, _)| id == ZERO)?.1;
    let mut site = crate::site::parse_str(text, &format!("{ZERO}.yaml"), catalog).ok()?;
    let required = w.required;
    for imp in &w.imports {
        crate::import::merge(&mut site.workload, imp);
    }
    let g = site.policy.growth;
    if g <= 0.0 {
        return None;
    }
    let horizon = (site.policy.horizon_s / crate::units::YEAR_S * 12.0).ceil().max(1.0) as u32;
    let until = if meets_at_horizon {
        Some(horizon)
    } else if !meets_at(&site, 0, &required, catalog, cal) {
        None
    } else {
        let (mut lo, mut hi) = (0, horizon);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if meets_at(&site, mid, &required, catalog, cal) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(lo)
    };
    let add = s.cheapest.clone();
    let add_words = add
        .clone()
        .unwrap_or_else(|| "nothing the size: ranges allow meets them".into());
    let pct = g * 100.0;
    let text = match until {
        Some(m) if m == horizon => format!("at {pct:.0} % a year the owned site meets every requirement through the {horizon}-month horizon"),
        Some(m) => format!("at {pct:.0} % a year the owned site meets every requirement until month {m} of the {horizon}-month horizon; add by then: {add_words}"),
        None => format!("the owned site fails the requirements already now (month 0, before any growth); add now: {add_words}"),
    };
    Some(Growth {
        growth_per_year: g,
        horizon_months: horizon,
        meets_until_month: until,
        add_by_then: add,
        text,
    })
}

/// What `--have` assumes, in words.
pub fn assumptions(h: &Have) -> Vec<String> {
    let mut a = vec![
        format!(
            "--have {}: every owned rack, server, array and disk is kept in every candidate at cost 0; only added \
             parts are priced; size.racks and size.servers count owned plus added (their lower bounds do not apply)",
            h.file
        ),
        "additions: owned arrays topped up to size.disks_per_server data disks per server of their rack (+fillK), \
         servers placed in new racks first, then in the rack with the fewest servers, each with its data disks in \
         the rack's own array (of that array's disk model), else a new array (or internal disks) of the chosen \
         model; arrays used as given (existing groups, DDP pools, hosts' pools) take no disks"
            .into(),
        "a migration compares each owned server's volume (array, RAID level, drives) in today's layout with the \
         candidate's; rebuilds go one rack at a time when today's layout and the candidate's both keep every \
         stream's quorum with a rack out, one server at a time when both do with a server out"
            .into(),
    ];
    if h.today.assumed {
        a.push(format!(
            "today's layout is assumed to be design's first-ranked on {} as it is ({}); give --have-layout ID for \
             the one you run",
            h.file, h.today.layout
        ));
    }
    a
}
