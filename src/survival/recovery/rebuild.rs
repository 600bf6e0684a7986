//! Destroyed stores built again, degraded groups rebuilt while serving, and destroyed assets restored: the
//! steps of recovery.rs for what a scenario destroyed. Moved out of recovery.rs whole.

use super::*;

impl Builder<'_, '_> {
    /// Destroyed stores: a new volume where the group died (on a spare if one is left, else after the drive
    /// replacement), then peer-remove — which needs the meta group's quorum — and a rejoin under a new name.
    pub(super) fn destroyed(&mut self) {
        let sc = self.sc;
        let meta_gone = sc.meta.status == Status::DataLost;
        // How long until the meta group has its quorum back by the failed domains returning.
        let chains = self.chains();
        let meta_back_s = sc
            .meta
            .stall_until
            .iter()
            .filter_map(|d| chains.iter().find(|c| &c.0 == d).map(|c| c.1))
            .fold(0.0, f64::max);
        if meta_gone {
            self.meta_rescue();
        }
        let meta = Meta {
            back_s: (sc.meta.status == Status::Unavailable).then_some(meta_back_s),
            gone: meta_gone,
        };
        let mut rebuilt: Vec<usize> = Vec::new();
        for &s in &sc.destroyed {
            self.rebuild(s, &mut rebuilt, meta);
        }
    }

    /// The meta group lost its quorum for good: the rescue, from the system account.
    fn meta_rescue(&mut self) {
        let (layout, sc) = (self.model.layout, self.sc);
        let survivors = sc.meta.replicas - sc.meta.replicas_down;
        let all: Vec<ServerIdx> = layout
            .servers
            .iter()
            .copied()
            .filter(|s| !sc.down.contains(s))
            .collect();
        self.push(
            "meta group",
            format!(
                "the meta group lost its quorum for good: on nats-server ≥ 2.15, from the system account, \
                 `nats request '$JS.API.META.RESCUE' '{{\"quorum_needed\": {}}}'` on the surviving servers with \
                 data lowers its quorum for 5 minutes (unsafe: meta changes only the lost peers held are gone) \
                 so a leader is elected; peer-remove the lost peers within that window. Before 2.15 there is \
                 no supported way: rebuild the cluster and restore from backups",
                survivors.max(1)
            ),
            self.t("operator_response"),
            self.uses(&all, &[]),
            Credentials::SystemAccount,
            Action::MetaRescue {
                quorum_needed: survivors.max(1) as u64,
            },
        );
    }

    /// Destroyed server `s`'s chain: the operator, the hardware, its group (once per group: `rebuilt`), a
    /// filesystem, the meta group's wait, then peer-remove and rejoin.
    fn rebuild(&mut self, s: ServerIdx, rebuilt: &mut Vec<usize>, meta: Meta) {
        let model = self.model;
        let chain = format!("rebuild {}", self.name(s));
        let name = self.name(s);
        let wiped = self
            .sc
            .failed
            .iter()
            .any(|d| d.kind == DomainKind::Wipe && d.name == name);
        let arr: Vec<usize> = model.array_of(s).into_iter().collect();
        let on = self.uses(&[s], &arr);
        self.push(
            &chain,
            "operator responds".into(),
            self.t("operator_response"),
            on.clone(),
            Credentials::None,
            Action::Wait {
                until: Until::OperatorResponds,
            },
        );
        let g = model.group_of(s);
        let lost_for_good = self.lost_with_hardware(s);
        if let Some((domain, t)) = &lost_for_good {
            self.push(
                &chain,
                format!("wait for {domain} to be replaced: its store went with it"),
                *t,
                on.clone(),
                Credentials::None,
                Action::Wait { until: Until::Replaced },
            );
        }
        if let (false, Some(g)) = (wiped, g) {
            if !rebuilt.contains(&g) {
                rebuilt.push(g);
                self.recreate_group(&chain, g, lost_for_good.is_some(), &on);
            }
            self.push(
                &chain,
                "filesystem and mount".into(),
                self.t("filesystem"),
                on.clone(),
                Credentials::Host,
                Action::MakeFilesystem { server: name.clone() },
            );
        }
        if let Some(back_s) = meta.back_s {
            self.push(
                &chain,
                "wait for the meta group's quorum: peer-remove needs it (the API answers 10008 without)".into(),
                back_s,
                on.clone(),
                Credentials::None,
                Action::Wait {
                    until: Until::MetaQuorum,
                },
            );
        }
        if meta.gone {
            self.push(
                &chain,
                "wait for the meta rescue (see the meta group chain)".into(),
                0.0,
                on.clone(),
                Credentials::None,
                Action::Wait {
                    until: Until::MetaRescued,
                },
            );
        }
        self.rejoin(&chain, s, on);
    }

    /// A destroyed server's last steps: peer-remove it, then rejoin under a new name and catch up.
    fn rejoin(&mut self, chain: &str, s: ServerIdx, on: Uses) {
        let name = self.name(s);
        let sets = self.sets_of(s);
        let replaced = if sets.is_empty() {
            String::new()
        } else {
            format!(
                ": nats-server re-places each of its replicas only on a live server that carries the stream's \
                 set tag and holds no replica of it yet; every other member of {} already holds one, so those \
                 streams stay a replica short until a server with that tag joins",
                sets.join(", ")
            )
        };
        self.push(
            chain,
            format!("`nats server cluster peer-remove {name}` ($JS.API.SERVER.REMOVE){replaced}"),
            self.t("peer_remove"),
            on.clone(),
            Credentials::SystemAccount,
            Action::PeerRemove { server: name.clone() },
        );
        let tags = if sets.is_empty() {
            String::new()
        } else {
            format!(" with the same tags ({})", sets.join(", "))
        };
        let what = if self.any_survivor_holds(s) {
            format!("rejoin under a new server_name{tags}; its replicas catch up from surviving peers")
        } else {
            format!("rejoin under a new server_name{tags} (no surviving peer holds its data: nothing to catch up)")
        };
        self.push(
            chain,
            what,
            catch_up_s(self.model, self.catalog, s),
            on,
            Credentials::Host,
            Action::RejoinAsNew { server: name },
        );
    }

    /// The `set:` tags of the pinned replica sets `s` belongs to (empty unless the layout pins sets).
    fn sets_of(&self, s: ServerIdx) -> Vec<String> {
        match &self.model.layout.placement {
            crate::layout::PlacementRule::Pinned { sets } => sets
                .iter()
                .filter(|x| x.servers.contains(&s))
                .map(|x| format!("set:{}", x.name.to_lowercase()))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// When server `s`'s store went with hardware lost for good (its rack or its array): that domain and the
    /// time until it is replaced (the chain of that domain, already in `steps`).
    fn lost_with_hardware(&self, s: ServerIdx) -> Option<(String, f64)> {
        let site = self.model.site;
        let arr = self.model.array_of(s);
        let chains = self.chains();
        self.sc
            .failed
            .iter()
            .find(|d| match (d.kind, &d.target) {
                (DomainKind::LostRack, crate::survival::domain::DomainTarget::Rack(r)) => {
                    site.servers[s].rack == *r || arr.is_some_and(|a| site.arrays[a].rack == *r)
                }
                (DomainKind::LostArray, crate::survival::domain::DomainTarget::Array(a)) => arr == Some(*a),
                _ => false,
            })
            .map(|d| {
                let name = d.to_string();
                let t = chains.iter().find(|c| c.0 == name).map_or(0.0, |c| c.1);
                (name, t)
            })
    }

    /// Build destroyed group `g` again (issue 31): a pool's volumes are re-created on the pool itself (it
    /// survives the failures that destroyed its RAID 1 volumes); a volume group needs as many drives as it
    /// lost (its surviving drives are whole and reused once the dead group is deleted), from the hot spares
    /// left, else a smaller group of the survivors and spares when it still holds the group's LUNs, else
    /// the replacement drives first. `fresh`: the array itself was replaced (every drive new).
    fn recreate_group(&mut self, chain: &str, g: usize, fresh: bool, on: &Uses) {
        let (model, catalog) = (self.model, self.catalog);
        let site = model.site;
        let layout = model.layout;
        let grp = &layout.groups[g];
        let a = grp.array;
        let aname = site.arrays[a].name.clone();
        let (level, init) = (level_name(grp.raid), init_note(grp.raid));
        let t_group = self.t("raid0_new_group");
        if fresh || crate::survival::repair::is_pool(grp.raid) {
            self.recreate_in_place(chain, g, fresh, on);
            return;
        }
        let n = grp.disks.len() as u32;
        let failed = self.failed_in(g).max(1);
        let survivors = n - failed.min(n);
        let mut spares = 0;
        while spares < failed && self.take_spare(a) {
            spares += 1;
        }
        let desc = |m: u32, from: String| {
            format!(
                "new {level} group of {m} drive{} ({from}) and its volume{init}",
                plural_s(m)
            )
        };
        if spares == failed {
            let from = match (survivors, spares) {
                (0, s) => format!("{s} hot spare{}", plural_s(s)),
                (v, s) => format!(
                    "its {v} surviving drive{} and {s} hot spare{}",
                    plural_s(v),
                    plural_s(s)
                ),
            };
            self.push(
                chain,
                desc(n, from),
                t_group,
                on.clone(),
                Credentials::Array,
                Action::Hardware,
            );
            return;
        }
        // Fewer spares than lost drives: a smaller group now, when the level allows it and it holds the LUNs.
        let m = survivors + spares;
        let (min, even) = grp.raid.disk_rule();
        let m_ok = if even { m & !1 } else { m };
        let need: u64 = layout.luns.iter().filter(|l| l.group == g).map(|l| l.size_bytes).sum();
        let holds = m_ok >= min && crate::layout::group_usable_bytes(site, catalog, a, grp.raid, m_ok) >= need;
        let wait = self.t("disk_replace");
        let missing = failed - spares;
        let replace = format!(
            "{missing} replacement drive{} for {aname}: the group lost {failed}, {}",
            plural_s(missing),
            match spares {
                0 => "no hot spare was left".to_string(),
                1 => "one hot spare was left".to_string(),
                s => format!("{s} hot spares were left"),
            }
        );
        if holds {
            let from = format!(
                "the {survivors} surviving drives and {spares} hot spare{}",
                plural_s(spares)
            );
            self.push(
                chain,
                format!(
                    "{}: smaller than the {n} it had, it still holds the group's LUNs ({} of {})",
                    desc(m_ok, from),
                    crate::units::fmt_bytes(need as f64),
                    crate::units::fmt_bytes(crate::layout::group_usable_bytes(site, catalog, a, grp.raid, m_ok) as f64)
                ),
                t_group,
                on.clone(),
                Credentials::Array,
                Action::Hardware,
            );
            self.alternatives.push(Step {
                chain: chain.to_string(),
                what: format!("or wait for the {replace} and build the group at its full {n} drives"),
                seconds: wait + t_group,
                uses: on.clone(),
                credentials: Credentials::Site,
                action: Action::Hardware,
            });
            return;
        }
        self.push(chain, replace, wait, on.clone(), Credentials::Site, Action::Hardware);
        self.push(
            chain,
            desc(n, "the surviving drives, the spares and the replacements".into()),
            t_group,
            on.clone(),
            Credentials::Array,
            Action::Hardware,
        );
    }

    /// Group `g` built again in one step: on the replaced array's new drives (`fresh`), or a pool's volume
    /// re-created on the surviving pool.
    fn recreate_in_place(&mut self, chain: &str, g: usize, fresh: bool, on: &Uses) {
        let model = self.model;
        let grp = &model.layout.groups[g];
        let aname = model.site.arrays[grp.array].name.clone();
        let level = level_name(grp.raid);
        let t_group = self.t("raid0_new_group");
        let what = if !fresh {
            let failed = self.failed_in(g);
            format!(
                "re-create the {level} volume on pool {} (the pool survives with {} of its {} drives and \
                 reconstructs the failed ones into its preservation capacity; no new group is built)",
                grp.name,
                grp.disks.len() as u32 - failed.min(grp.disks.len() as u32),
                grp.disks.len()
            )
        } else if crate::survival::repair::is_pool(grp.raid) {
            // The array went with its rack (or for good): it comes back with new drives, spares included.
            format!(
                "new pool of {} drives on the replaced {aname}'s new drives and a {level} volume on it",
                grp.disks.len()
            )
        } else {
            desc_fresh(level, grp.disks.len() as u32, &aname, init_note(grp.raid))
        };
        self.push(chain, what, t_group, on.clone(), Credentials::Array, Action::Hardware);
    }

    /// Failed disks of layout group `g` in the scenario.
    fn failed_in(&self, g: usize) -> u32 {
        let name = &self.model.layout.groups[g].name;
        self.sc
            .groups
            .iter()
            .find(|x| &x.group == name)
            .map_or(0, |x| x.failed_disks.len() as u32)
    }

    /// Whether some asset with a replica on `s` still has a live replica elsewhere to catch up from.
    fn any_survivor_holds(&self, s: ServerIdx) -> bool {
        let sc = self.sc;
        self.model
            .layout
            .assets
            .iter()
            .zip(&sc.assets)
            .any(|(a, o)| a.expected.contains(&s) && o.loss != Some("total") && o.replicas_down < o.replicas)
    }

    /// Degraded groups rebuild while serving (issue 31: at the rate of their medium and level,
    /// `repair::disk_rebuild`): onto a hot spare while one is left, else after a replacement; a DDP pool
    /// reconstructs at once into its preservation capacity while that lasts.
    pub(super) fn degraded_groups(&mut self) {
        let (model, catalog, sc) = (self.model, self.catalog, self.sc);
        let site = model.site;
        let layout = model.layout;
        for g in sc.groups.iter().filter(|g| !g.destroyed) {
            let Some(gi) = layout.groups.iter().position(|x| x.name == g.group) else {
                continue;
            };
            let a = layout.groups[gi].array;
            let arr = &site.arrays[a];
            let rebuild = crate::survival::repair::disk_rebuild(site, catalog, layout, gi);
            let pool = crate::survival::repair::is_pool(layout.groups[gi].raid);
            let on = self.uses(model.group_servers(gi), &[a]);
            let chain = format!("group {}", g.group);
            for &d in &g.failed_disks {
                let how = rebuild.describe();
                match (self.take_spare(a), pool) {
                    (true, true) => self.push(
                        &chain,
                        format!(
                            "pool {} reconstructs disk {d}'s data into its preservation capacity at once, while \
                             serving ({how}); replace the drive at leisure",
                            g.group
                        ),
                        rebuild.seconds,
                        on.clone(),
                        Credentials::None,
                        rebuilt(),
                    ),
                    (true, false) => self.push(
                        &chain,
                        format!("rebuild disk {d} onto a hot spare while serving ({how})"),
                        rebuild.seconds,
                        on.clone(),
                        Credentials::None,
                        rebuilt(),
                    ),
                    (false, _) => {
                        let what = if pool {
                            format!("no preservation capacity left in pool {}: replace disk {d}", g.group)
                        } else {
                            format!("no hot spare left in {}: replace disk {d}", arr.name)
                        };
                        let t = self.t("disk_replace");
                        self.push(&chain, what, t, on.clone(), Credentials::Site, Action::Hardware);
                        self.push(
                            &chain,
                            format!("rebuild disk {d} onto the replacement while serving ({how})"),
                            rebuild.seconds,
                            on.clone(),
                            Credentials::None,
                            rebuilt(),
                        );
                    }
                }
            }
        }
    }

    /// Assets whose data is destroyed: a total loss is restored from backup; a lost tail re-forms on its
    /// survivors once the meta group can reassign it; acknowledged writes a quorum lost unsynced are
    /// re-published by their producers.
    pub(super) fn lost_assets(&mut self) {
        self.republish_acked();
        self.resync_diverged();
        let sc = self.sc;
        let total: Vec<&str> = sc
            .assets
            .iter()
            .filter(|a| a.loss == Some("total"))
            .map(|a| a.name.as_str())
            .collect();
        let tail: Vec<&str> = sc
            .assets
            .iter()
            .filter(|a| a.loss == Some("tail"))
            .map(|a| a.name.as_str())
            .collect();
        if !total.is_empty() {
            self.push(
                "lost data",
                format!(
                    "no replica survives: restore {} from backup (re-create, then replay)",
                    short_list(&total)
                ),
                self.t("operator_response"),
                Uses::default(),
                Credentials::ApplicationAccount,
                Action::RestoreFromBackup {
                    streams: total.iter().map(|n| n.to_string()).collect(),
                },
            );
        }
        if !tail.is_empty() {
            self.push(
                "lost data",
                format!(
                    "{}: a surviving replica holds the data up to where it had caught up; once the meta group has a \
                     leader, `nats server cluster peer-remove` each destroyed peer (its chain above): a group that \
                     cannot reach quorum without removed peers drops them and re-forms on the survivors \
                     (`checkEvictedPeers`, server/jetstream_cluster.go) after its lost-quorum interval and an \
                     election, about 20 s (server/raft.go). `nats stream cluster peer-remove STREAM \
                     PEER` (the application's account) is refused (10075 peer remap failed) while no other server \
                     can take the replica (nats-server 2.15.1). Acknowledged writes only the lost replicas held are \
                     gone",
                    short_list(&tail)
                ),
                self.t("operator_response") + LOST_QUORUM_S + ELECTION_STALL_S,
                Uses::default(),
                Credentials::SystemAccount,
                Action::Reconcile {
                    streams: tail.iter().map(|n| n.to_string()).collect(),
                },
            );
        }
    }
}
