//! The evaluator: every candidate layout proposes (`layout::Enumerate::candidates`) sized, placed and
//! evaluated (capacity, survival, perf: `plan_layout_with`), in parallel, the results in the
//! enumeration's order; and a layout the plan keeps per class given per asset (`materialise`).
//!
//! It owns the caches that evaluation leans on: the placement memo (`placement_memo::PlacementMemo`, one
//! per task) and, in each placement it holds, the failure-needs cache (`layout::FailureNeeds`). The
//! candidates whose first placement is of one key (`PlacementKey`: patterns 1, 2 and 4's first round of
//! one selection, often) are evaluated one after the other in one task, which keeps the placement for
//! the next; each layout is evaluated in the task that sized it, so memory holds the per-asset placement
//! of the layouts being evaluated, not of all of them.
//!
//! A layout's assets are placed in one function, `Evaluator::placement` (`layout::placement` with the
//! workload's assets built once), for design and for `materialise` alike. The one placement not made there
//! is pattern 4's LUN sizing's (`layout::Candidate::size`), which places on the LUNs it is sizing and so
//! has, when it settles, made the placement `placement` would make on the same stores (`layout::Placed`):
//! it is taken, not made twice (100,000 assets placed again per pattern-4 layout), and its needs after
//! failures with it.

use super::placement_memo::{PlacementKey, PlacementMemo};
use super::{classes, plan_layout_with, Detail, PerAsset, PlannedLayout};
use crate::catalog::Catalog;
use crate::layout::{Asset, BareAssets, FailureNeeds, Layout, Problem, Whole};
use crate::perf::Calibration;
use crate::site::Site;
use rayon::prelude::*;
use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A candidate as the evaluator leaves it: a planned layout, or one with no JetStream server (not a
/// layout: the plan's notes say why).
pub(super) enum Evaluated {
    Planned(Box<PlannedLayout>),
    Empty(Layout),
}

/// What evaluating a layout reads: the site, the catalog, the calibration and the workload's assets per
/// replica count (built once for every layout).
pub(super) struct Evaluator<'a> {
    site: &'a Site,
    catalog: &'a Catalog,
    cal: &'a Calibration,
    bare: BareAssets,
}

impl<'a> Evaluator<'a> {
    /// An evaluator for layouts of the replica counts `rs` (others get their assets built when placed).
    pub fn new(
        site: &'a Site,
        catalog: &'a Catalog,
        cal: &'a Calibration,
        rs: impl IntoIterator<Item = u8>,
    ) -> Evaluator<'a> {
        Evaluator {
            site,
            catalog,
            cal,
            bare: BareAssets::new(site, rs),
        }
    }

    /// Every candidate of the site evaluated (in parallel), in the enumeration's order, the first of each
    /// id; `progress` is told (evaluated, in all) as it goes.
    pub fn evaluate_all(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> Vec<Evaluated> {
        let candidates = crate::layout::Enumerate::new(self.site, self.catalog)
            .assets(&self.bare)
            .candidates();
        let total = candidates.len();
        let done = AtomicUsize::new(0);
        // Grouped by first placement (in order of first member; members in the enumeration's order).
        let mut groups: Vec<(PlacementKey, Vec<(usize, crate::layout::Candidate)>)> = Vec::new();
        for (at, c) in candidates.into_iter().enumerate() {
            let key = PlacementKey::of(self.site, c.layout());
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push((at, c)),
                None => groups.push((key, vec![(at, c)])),
            }
        }
        let mut built: Vec<(usize, String, Evaluated)> = groups
            .into_par_iter()
            .flat_map_iter(|(_, g)| {
                let n = g.len();
                let mut memo = PlacementMemo::default();
                let mut out = Vec::with_capacity(n);
                for (k, (at, c)) in g.into_iter().enumerate() {
                    let e = self.evaluate(c, &mut memo, k + 1 < n);
                    let id = match &e {
                        Evaluated::Planned(p) => p.id.clone(),
                        Evaluated::Empty(l) => l.id.clone(),
                    };
                    if matches!(e, Evaluated::Planned(_)) {
                        progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                    }
                    out.push((at, id, e));
                }
                out
            })
            .collect();
        built.sort_by_key(|(at, _, _)| *at);
        // Sized ids are as distinct as the unsized ones; the first of each is kept all the same.
        let mut seen = std::collections::HashSet::new();
        built
            .into_iter()
            .filter(|(_, id, _)| seen.insert(id.clone()))
            .map(|(_, _, e)| e)
            .collect()
    }

    /// One candidate sized, placed and evaluated; `memo` holds the placement of the candidates before it
    /// in its task, and `more` says whether another follows (the placement is kept for it).
    fn evaluate(&self, c: crate::layout::Candidate, memo: &mut PlacementMemo, more: bool) -> Evaluated {
        let site = self.site;
        let bare = self.bare(c.layout().replicas);
        // A candidate with no JetStream server at all is not a layout (the notes say why).
        if c.layout().servers.is_empty() {
            return Evaluated::Empty(c.size(site, &bare, None).0);
        }
        // Its placement as built (pattern 4's first sizing round places on whole groups), from the memo.
        let first = PlacementKey::of(site, c.layout());
        let held = memo.get_or_place(first, || self.placement(c.layout()));
        let whole = Whole {
            assets: &held.assets,
            needs: &mut held.needs,
        };
        let (mut l, sized) = c.size(site, &bare, Some(whole));
        // The placement and its needs after failures: from the LUN sizing, or the memo's (held for the
        // next when one follows).
        let mut own: FailureNeeds;
        let needs = match sized {
            Some(p) => {
                l.assets = p.assets;
                l.problems.extend(p.problems);
                own = p.needs;
                &mut own
            }
            None => {
                let held = memo.get_or_place(PlacementKey::of(site, &l), || self.placement(&l));
                if more {
                    l.assets = held.assets.clone();
                    l.problems.extend(held.problems.iter().cloned());
                    &mut held.needs
                } else {
                    let held = memo.take().expect("placed above");
                    l.assets = held.assets;
                    l.problems.extend(held.problems);
                    own = held.needs;
                    &mut own
                }
            }
        };
        let per_class = classes::applies(l.assets.len());
        let mut p = plan_layout_with(site, self.catalog, self.cal, l, !per_class, needs);
        // Per class at once, so that memory holds one layout's per-asset entries per thread, not all;
        // its placed assets go too (`materialise` places them again).
        if per_class {
            p.layout.assets = Vec::new();
        }
        Evaluated::Planned(Box::new(p))
    }

    /// The workload's assets under default replica count `r`, unplaced.
    fn bare(&self, r: u8) -> Cow<'_, [Asset]> {
        match self.bare.get(r) {
            Some(b) => Cow::Borrowed(b),
            None => Cow::Owned(crate::layout::placement::assets(self.site, r)),
        }
    }

    /// Where a built layout's assets go, and the problems of those that cannot be placed: the one place
    /// plan places a layout (see the module doc for pattern 4's LUN sizing).
    fn placement(&self, l: &Layout) -> (Vec<Asset>, Vec<Problem>) {
        crate::layout::placement(self.site, l, &self.bare(l.replicas))
    }

    /// Give a layout the plan keeps per class (`Detail::PerClass`) its per-asset lists: its placement
    /// (`placement`; the problems were recorded when it was evaluated), predictions and yearly figures,
    /// the same evaluation, so the same entries. A layout given per asset is left as it is.
    pub fn materialise(&self, l: &mut PlannedLayout) {
        if let Detail::PerAsset(_) = l.detail {
            return;
        }
        let (site, catalog, cal) = (self.site, self.catalog, self.cal);
        l.layout.assets = self.placement(&l.layout).0;
        let streams = match &l.predicted {
            Some(_) => crate::perf::predict_layout(site, &l.layout, catalog, cal).streams,
            None => Vec::new(),
        };
        let yearly = match &l.yearly {
            Some(_) => crate::survival::yearly_only(site, &l.layout, catalog).assets,
            None => Vec::new(),
        };
        l.detail = Detail::PerAsset(PerAsset {
            assets: super::planned_assets(site, &l.layout),
            streams,
            yearly,
        });
    }
}
