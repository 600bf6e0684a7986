//! How a layout's components fail and are repaired, and what each outcome costs its assets: the
//! `Reliability` model the chain and the Monte Carlo both read. Moved out of yearly.rs whole.

use super::*;

impl<'m, 'a> Reliability<'m, 'a> {
    /// Every component of the layout: what unavailability, write stalls and window losses need.
    pub fn new(model: &'m Model<'a>, catalog: &Catalog) -> Reliability<'m, 'a> {
        Reliability::with(model, catalog, false)
    }

    /// The components whose failures destroy stores only (`Component::destroys`): disks and their groups'
    /// latches, servers' own disks and hosts' pools lost for good, racks and arrays lost for good. They
    /// fail and are repaired independently of the rest (hot spares couple disks of one array only), so
    /// the data-loss flows of this smaller chain are those of the whole one, and it can be solved with
    /// more concurrent failures (issue 32: a RAID 6 group's loss needs three).
    pub fn destroyers(model: &'m Model<'a>, catalog: &Catalog) -> Reliability<'m, 'a> {
        Reliability::with(model, catalog, true)
    }

    fn with(model: &'m Model<'a>, catalog: &Catalog, destroyers_only: bool) -> Reliability<'m, 'a> {
        let site = model.site;
        let layout = model.layout;
        let mut comps: Vec<Component> = Vec::new();
        let not_return = server_components(model, catalog, &mut comps);
        let arrays = array_components(model, catalog, &mut comps);
        let spares = disk_components(model, catalog, &mut comps);
        shared_components(model, catalog, &mut comps, &arrays, &not_return);
        if destroyers_only {
            // None of these has triggers (a rack's power event is not one), so indices need no remapping.
            comps.retain(|c| c.destroys());
        }
        let domains: Vec<Domain> = comps.iter().map(|c| c.domain.clone()).collect();
        let mut prep = Prepared::new(model, &domains, true);
        let groups = layout.groups.len();
        let mut group_latch = vec![None; groups];
        let mut group_need = vec![u32::MAX; groups];
        for (i, c) in comps.iter().enumerate() {
            if let Some(g) = c.latch_of {
                prep.latch(i, g);
                group_latch[g] = Some(i);
                group_need[g] = model.disks_to_destroy(g);
            }
        }
        // Each disk of a mirror-pair group: the component of its pair's other disk.
        let mut partner = vec![None; comps.len()];
        for g in 0..groups {
            if !model.paired(g) {
                continue;
            }
            let of = |slot: u32| {
                comps.iter().position(|c| {
                    c.group == Some(g)
                        && matches!(c.domain.target, crate::survival::domain::DomainTarget::Disk(_, s) if s == slot)
                })
            };
            for p in model.mirror_pairs(g) {
                if let (Some(a), Some(b)) = (of(p[0]), of(p[1])) {
                    partner[a] = Some(b);
                    partner[b] = Some(a);
                }
            }
        }
        let group_members: Vec<Vec<usize>> = (0..groups)
            .map(|g| (0..comps.len()).filter(|&i| comps[i].group == Some(g)).collect())
            .collect();
        let group_mask = (0..groups)
            .map(|g| {
                comps
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| *i < 128 && c.group == Some(g))
                    .fold(0u128, |m, (i, _)| m | (1u128 << i))
            })
            .collect();
        let specs = crate::layout::lookup::Specs::new(site);
        let asset_msgs_per_s: Vec<f64> = layout.assets.iter().map(|a| msgs_per_s(&specs, a)).collect();
        let (planned_unavail_s, planned_stall_s) = planned_maintenance(model, catalog, &prep);
        let mut hit = Vec::new();
        let mut disks = Vec::new();
        let empty = prep.signature(&[], &mut hit, &mut disks);
        let single: Vec<Vec<u8>> = (0..comps.len())
            .map(|c| prep.signature(&[c], &mut hit, &mut disks))
            .collect();
        let election_stall_s = election_stalls(&comps, model, &prep, &single);
        let asset_msgs_held = layout.assets.iter().map(|a| msgs_held(&specs, a)).collect();
        let base = std::iter::once(&empty)
            .chain(single.iter())
            .map(|s| SigInfo::new(s.clone()))
            .collect();
        let pool_masks = (0..spares.len())
            .map(|p| {
                comps
                    .iter()
                    .enumerate()
                    .filter(|(i, c)| *i < 128 && c.spare_pool == Some(p))
                    .fold(0u128, |m, (i, _)| m | (1u128 << i))
            })
            .collect();
        Reliability {
            components: comps,
            prep,
            model,
            p_not_return: rate_per_year(site, catalog, "not_return_after_power").clamp(0.0, 1.0),
            asset_msgs_per_s,
            asset_msgs_held,
            election_stall_s,
            window_s: site.nats.sync.loss_window_s(catalog.failures.dirty_expire_s.value),
            planned_unavail_s,
            planned_stall_s,
            pool_masks,
            spares,
            empty,
            single,
            base,
            entries: Entries::List,
            group_latch,
            group_need,
            group_mask,
            group_members,
            partner,
            replica_lag_s: crate::survival::recovery::repair_s(site, catalog, "replica_lag"),
            p_site_lost: -(-rate_per_year(site, catalog, "site_lost_per_year")).exp_m1(),
            nre: layout
                .groups
                .iter()
                .map(|g| {
                    let arr = &site.arrays[g.array];
                    let dm = catalog.disk(&arr.disk_model);
                    let bytes = arr.disk_size_bytes.or(dm.map(|d| d.capacity_bytes)).unwrap_or(0) as f64;
                    (bytes, dm.map_or(0.0, |d| d.nre_per_bit))
                })
                .collect(),
        }
    }

    /// Expected rebuilds per year that read their group's last copy of some data and meet an unrecoverable
    /// read error there (issue 31): per disk failure of a mirror (RAID 1, a RAID 10 pair, a pool's RAID 1
    /// pieces) the surviving copy is read whole; a RAID 6 group is without redundancy only with two disks
    /// down, entered at about n(n − 1)·λ²·τ per year, and then reads its n − 2 survivors. The chance per
    /// rebuild is 1 − exp(−bits read × errors per bit) (the disk model's `nre_per_bit`). First order in
    /// the failure rates, closed form: the reference simulation checks it.
    pub(in crate::survival) fn corrupt_replica_events_per_year(&self) -> f64 {
        let layout = self.model.layout;
        let mut total = 0.0;
        for (g, grp) in layout.groups.iter().enumerate() {
            if self.group_latch[g].is_none() {
                continue; // one failure destroys it: nothing is rebuilt from a last copy
            }
            let (bytes, nre) = self.nre[g];
            let p = |drives: f64| -(-(drives * bytes * 8.0 * nre)).exp_m1();
            let disks: Vec<&Component> = self.group_members[g].iter().map(|&i| &self.components[i]).collect();
            let n = disks.len() as f64;
            let Some(d) = disks.first() else { continue };
            let lambda = d.rate_per_s * YEAR_S;
            // The first failure's window: its rebuild onto a spare, or without one the replacement first
            // (the reference simulation caught the spare-less case priced at the spare's rebuild).
            let spare = d.spare_pool.is_some_and(|p| self.spares[p] > 0);
            let tau = if spare { d.repair_s } else { d.repair_no_spare_s } / YEAR_S;
            total += match grp.raid {
                crate::layout::Raid::Raid6 => n * (n - 1.0) * lambda * lambda * tau * p((n - 2.0).max(1.0)),
                _ => n * lambda * p(1.0),
            };
        }
        total
    }

    /// Whether failing disk `c` (with the components `failed` says are down) completes a set that destroys
    /// its group: its mirror partner down (paired groups), else as many of the group's disks down as
    /// destroy it. Groups one disk destroys (RAID 0) have no latch and are never latched.
    /// (The Monte Carlo's form: `failed` says which other components are down; its group's disks are
    /// `group_members`.)
    pub(in crate::survival) fn completes_destroy(
        &self,
        c: usize,
        failed: impl Fn(usize) -> bool,
    ) -> Option<(usize, usize)> {
        let g = self.components[c].group?;
        let latch = self.group_latch[g]?;
        let done = match self.partner[c] {
            Some(p) => failed(p),
            None => {
                let down = self.group_members[g].iter().filter(|&&i| i != c && failed(i)).count() as u32;
                down + 1 >= self.group_need[g]
            }
        };
        done.then_some((g, latch))
    }

    /// The chain's state after a failure of component `c` took it to `next`: when `c` completes a set that
    /// destroys its group, the group's failed disks give way to its latch (the group is gone as a whole
    /// and comes back as a whole, after its stores are rebuilt). `completes_destroy` on bit sets.
    pub(in crate::survival) fn latched(&self, next: u128, c: usize) -> u128 {
        let Some(g) = self.components[c].group else {
            return next;
        };
        let Some(l) = self.group_latch[g].filter(|&l| l < 128 && c < 128) else {
            return next;
        };
        let done = match self.partner[c] {
            Some(p) => p < 128 && next & (1u128 << p) != 0,
            None => (next & self.group_mask[g]).count_ones() >= self.group_need[g],
        };
        if done {
            (next & !self.group_mask[g]) | (1u128 << l)
        } else {
            next
        }
    }

    pub(in crate::survival) fn classes(&self) -> usize {
        self.prep.class_count()
    }

    /// Outcome of a set of failed components (sorted indices).
    pub(in crate::survival) fn outcome(
        &self,
        active: &[usize],
        hit: &mut Vec<(ServerIdx, crate::survival::evaluate::ServerEffect)>,
        disks: &mut Vec<crate::survival::sweep::GroupHits>,
    ) -> Vec<u8> {
        match active.len() {
            0 => self.empty.clone(),
            1 => self.single[active[0]].clone(),
            _ => self.prep.signature(active, hit, disks),
        }
    }

    /// Turn per-class rates into the per-asset report.
    pub(in crate::survival) fn figures(
        &self,
        method: &str,
        detail: String,
        f: &Flows,
        ci: Option<&[Ci95]>,
    ) -> Yearly<YearlyEntries> {
        let layout = self.model.layout;
        let mut meta = self.entry(
            f,
            0,
            (0.0, 0.0, self.election_stall_s[0]),
            // The meta group holds no messages: its acked loss is 0, so is its interval (c[0] holds the
            // unscaled event rate, which the assets multiply by their messages).
            ci.map(|c| {
                let mut x = c[0].clone();
                x.acked_msgs_lost_per_year = (0.0, 0.0);
                x
            }),
        );
        (meta.name, meta.kind) = ("meta".to_string(), crate::survival::GroupKind::Meta);
        let mut assets: Vec<YearlyAsset> = Vec::new();
        let mut classes: Vec<YearlyClass> = Vec::new();
        let mut class_at: crate::fxhash::FxHashMap<EntryKey, usize> = Default::default();
        // The totals add the entries' figures in asset order (as summing the list did), and the worst is
        // the first entry of the highest figure.
        let n = layout.assets.len();
        let (mut acked, mut window, mut data) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        // The worst: the first entry of a figure strictly above every earlier one, from -1 (the fold the
        // list was judged with).
        let mut worst_at: (Option<usize>, f64) = (None, -1.0);
        for (i, a) in layout.assets.iter().enumerate() {
            let mut e = self.asset_entry(f, ci, i);
            acked.push(e.acked_msgs_lost_per_year);
            window.push(e.window_msgs_lost_per_year);
            data.push(e.data_lost_msgs_per_year);
            if e.unavailable_min_per_year > worst_at.1 {
                worst_at = (Some(i), e.unavailable_min_per_year);
            }
            match self.entries {
                Entries::List => {
                    e.name = a.name.to_string();
                    e.kind = a.kind.into();
                    assets.push(e);
                }
                Entries::Classes => add_to_class(&mut classes, &mut class_at, a, e),
                Entries::Totals => {}
            }
        }
        // Without assets the meta group is judged.
        if layout.assets.is_empty() && meta.unavailable_min_per_year > -1.0 {
            worst_at = (None, meta.unavailable_min_per_year);
        }
        let worst_unavailable = match worst_at.0 {
            Some(i) => layout.assets[i].name.to_string(),
            None if layout.assets.is_empty() && worst_at.1 > -1.0 => meta.name.clone(),
            None => String::new(),
        };
        let worst = worst_at.1;
        Yearly {
            method: method.into(),
            method_detail: detail,
            acked_msgs_lost_per_year: acked.into_iter().sum(),
            window_msgs_lost_per_year: window.into_iter().sum(),
            data_lost_msgs_per_year: data.into_iter().sum(),
            p_any_data_lost_per_year: f.p_any_dl,
            p_any_wholly_lost_per_year: f.p_any_total,
            p_any_data_lost_beyond_cap_per_year: None,
            corrupt_replica_events_per_year: self.corrupt_replica_events_per_year(),
            p_site_lost_per_year: self.p_site_lost,
            worst_unavailable_min_per_year: worst.max(0.0),
            worst_unavailable,
            api_unavailable_min_per_year: meta.unavailable_min_per_year,
            meta,
            assets: match self.entries {
                Entries::Classes => YearlyEntries::Classes(classes),
                Entries::List | Entries::Totals => YearlyEntries::List(assets),
            },
            assumptions: self.assumptions(),
            spare_effect: None,
        }
    }

    /// A class's entry (name left empty, kind the meta group's until the caller says whose it is) from its flows: `msgs` acked per second, `held` messages,
    /// `stall` election seconds per year.
    fn entry(&self, f: &Flows, k: usize, (msgs, held, stall): (f64, f64, f64), ci: Option<Ci95>) -> YearlyAsset {
        let lag = self.replica_lag_s;
        let planned = self.planned_unavail_s[k] / 60.0;
        let window = f.risk[k] * self.window_s * msgs;
        // A wholly lost asset loses every message it holds; a tail loss what its survivor lacked.
        let data = f.total[k] * held + f.tail[k] * (msgs * lag).min(held);
        YearlyAsset {
            name: String::new(),
            kind: crate::survival::GroupKind::Meta,
            unavailable_min_per_year: f.unavail[k] * YEAR_S / 60.0 + planned,
            planned_unavailable_min_per_year: planned,
            planned_stall_s_per_year: self.planned_stall_s[k],
            p_data_lost_per_year: -(-f.dl[k]).exp_m1(),
            data_lost_events_per_year: f.dl[k],
            p_wholly_lost_per_year: -(-f.total[k]).exp_m1(),
            wholly_lost_events_per_year: f.total[k],
            tail_lost_events_per_year: f.tail[k],
            acked_msgs_lost_per_year: window + data,
            window_msgs_lost_per_year: window,
            data_lost_msgs_per_year: data,
            election_stall_s_per_year: stall,
            mttdl_years: (f.dl[k] > 0.0).then(|| 1.0 / f.dl[k]),
            ci95: ci,
        }
    }

    /// Asset `i`'s entry (its name and kind apart), made as the list would make it.
    fn asset_entry(&self, f: &Flows, ci: Option<&[Ci95]>, i: usize) -> YearlyAsset {
        let k = self.prep.asset_class[i];
        let msgs = self.asset_msgs_per_s[i];
        let held = self.asset_msgs_held[i];
        let ci = ci.map(|c| {
            let mut x = c[k].clone();
            // Window losses and data-loss events, each at its own bound: a wholly lost asset loses all
            // it holds, a tail loss the replica lag's worth (tail events are at most the data-loss
            // events, whose upper end bounds them).
            let tail_msgs = (msgs * self.replica_lag_s).min(held);
            x.acked_msgs_lost_per_year.0 =
                x.acked_msgs_lost_per_year.0 * self.window_s * msgs + x.wholly_lost_events_per_year.0 * held;
            x.acked_msgs_lost_per_year.1 = x.acked_msgs_lost_per_year.1 * self.window_s * msgs
                + x.wholly_lost_events_per_year.1 * held
                + x.data_lost_events_per_year.1 * tail_msgs;
            x
        });
        self.entry(f, k, (msgs, held, self.election_stall_s[1 + i]), ci)
    }

    /// The mean repair time of failed component `c` in a state where `failed_in_pool` disks of its spare
    /// pool (itself included) are down: with k down and s spares, min(k, s) rebuild onto a spare and the
    /// rest wait for a replacement drive; which ones is symmetric, so each gets the average rate
    /// (min(k, s)/fast + (k − min(k, s))/slow) / k. The spare is taken back when the group is whole (the
    /// replaced drive becomes the new spare): a simplification, since in reality it returns only once the
    /// replacement arrives.
    pub(in crate::survival) fn repair_rate(&self, c: usize, failed_in_pool: u32) -> f64 {
        let comp = &self.components[c];
        let Some(pool) = comp.spare_pool else {
            return 1.0 / comp.repair_s;
        };
        let k = failed_in_pool.max(1) as f64;
        let with = (self.spares[pool] as f64).min(k);
        (with / comp.repair_s + (k - with) / comp.repair_no_spare_s) / k
    }

    fn assumptions(&self) -> Vec<String> {
        vec![
            "each asset on the servers the emulated placement gives it (a placement stays put over years); \
             `whatif` and `tolerates` use the worst eligible placement instead"
                .into(),
            "components fail independently at catalog rates (site overrides win); repairs exponential with the \
             catalog's mean times"
                .into(),
            format!(
                "rack power takes the rack's servers and arrays together; each server fails to return with p = {}",
                self.p_not_return
            ),
            "planned rolling restarts and upgrades one server at a time: R1/R2 assets unavailable for each restart of \
             a replica's server, larger ones pay one leader hand-off; array firmware updates non-disruptive"
                .into(),
            format!(
                "acknowledged messages lost = window losses + data-loss events: an asset wholly lost (no replica \
                 survives) loses every message it holds; a tail loss (a replica survives) loses what the survivor \
                 had not received, {} s of the asset's rate (repair_times.replica_lag, an assumption)",
                self.replica_lag_s
            ),
            format!(
                "election stalls: each single failure that leaves a group writable but takes its leader's server \
                 costs one election of up to {:.0} s (the leader is on any of R replicas alike)",
                crate::survival::evaluate::ELECTION_STALL_S
            ),
            format!(
                "acknowledged messages lost: each single event (a crash, power, array outage with what it takes \
                 along) that on its own makes a quorum of replicas lose unsynced writes loses {:.0} s of the asset's \
                 messages (shorter of sync_interval and dirty-page expiry); independent crashes within one window \
                 are neglected",
                self.window_s
            ),
            format!(
                "hot spares as the site gives them ({} in all): a failed disk rebuilds at once while a spare is \
                 left in its array, else waits for the drive replacement (disk_replace) first; a spare counts \
                 as back once its group is whole again",
                self.spares.iter().sum::<u32>()
            ),
            "MTTDL assumes a constant loss rate: for reference only".into(),
        ]
    }
}
