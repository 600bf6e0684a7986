//! The top level of a site file: the whole-site checks and the nats, policy and override sections.

use super::keys::*;
use super::read::*;
use crate::input::limits::{MAX_EVENTS_PER_YEAR, MAX_NAME_BYTES};
use crate::input::yaml::{self, clip, Node, Pos, Typed, Val};
use crate::site::model::*;
use crate::units::{SyncMode, YEAR_S};

impl Validator<'_> {
    pub(super) fn build(&mut self, root: &Node) -> Site {
        let Some(top) = self.obj(root, "", "the site", TOP_KEYS) else {
            return empty_site();
        };
        let name = match self.req(&top, "site", "east-dc") {
            Some(n) => {
                let name = self.text(n, "site", "east-dc").unwrap_or_default();
                if name.len() > MAX_NAME_BYTES || name.chars().any(char::is_control) {
                    self.err(
                        Some(n.pos),
                        "site",
                        format!(
                            "the site name is {} bytes long or holds control characters; at most {MAX_NAME_BYTES} \
                             bytes of text (it heads every report)",
                            name.len()
                        ),
                        "shorten it, e.g. east-dc",
                    );
                }
                name
            }
            None => String::new(),
        };
        let nats = self.nats(top.get("nats"));
        let policy = self.policy(top.get("policy"));
        let default_spares = policy.hot_spares_per_array;
        let (racks, servers, arrays) = self.racks(&top, default_spares);
        let workload = self.workload(top.get("workload"));

        // Requirements no layout could meet are input mistakes, not planning results.
        let mt = policy.min_tolerated;
        let tol_pos = |key: &str| -> Option<Pos> {
            let p = top.get("policy")?;
            let Val::Map(e) = &p.val else { return None };
            let (_, m) = e
                .iter()
                .find(|(k, _)| matches!(&k.val, Val::Scalar(s) if s.text == "min_tolerated"))?;
            let Val::Map(e) = &m.val else { return None };
            e.iter()
                .find(|(k, _)| matches!(&k.val, Val::Scalar(s) if s.text == key))
                .map(|(_, v)| v.pos)
        };
        for (key, want, have, what) in [
            ("racks", mt.racks, racks.len(), "racks"),
            ("arrays", mt.arrays, arrays.len(), "arrays"),
            ("servers", mt.servers, servers.len(), "servers"),
        ] {
            if want > 0 && have > 0 && want as usize >= have {
                self.err(
                    tol_pos(key),
                    format!("policy.min_tolerated.{key}"),
                    format!("asks to survive losing {want} {what}, but the site has only {have}; no layout can"),
                    format!("lower it below {have}, or add {what}"),
                );
            }
        }

        let failure_rates = self.failure_rates(top.get("failure_rates"));
        let repair_times = self.repair_times(top.get("repair_times"));
        let maintenance = self.maintenance(top.get("maintenance"));
        Site {
            name,
            nats,
            racks,
            servers,
            arrays,
            workload,
            policy,
            failure_rates,
            repair_times,
            maintenance,
        }
    }

    pub(super) fn nats(&mut self, node: Option<&Node>) -> NatsSettings {
        let mut out = NatsSettings {
            replicas: vec![3],
            sync: SyncMode::Interval(120),
            compression: Compression::None,
            compression_ratio: 1.0,
            cluster_name: "natsplan".into(),
            max_ha_assets: None,
        };
        let Some(o) = node.and_then(|n| self.obj(n, "nats", "the nats settings", NATS_KEYS)) else {
            return out;
        };
        if let Some(n) = o.get("replicas") {
            let replicas = self.nats_replicas(n);
            if !replicas.is_empty() {
                out.replicas = replicas;
            }
        }
        if let Some(n) = o.get("sync_interval") {
            match &n.val {
                Val::Scalar(s) if matches!(s.typed(), Typed::Int(_) | Typed::Float(_)) => self.err(
                    Some(n.pos),
                    "nats.sync_interval",
                    format!("sync_interval needs a unit, got the bare number {}", s.text),
                    format!("write {}s, 2m (nats-server's default) or always", s.text),
                ),
                _ => {
                    if let Some(t) = self.text(n, "nats.sync_interval", "2m") {
                        match SyncMode::parse(&t) {
                            Ok(m) => out.sync = m,
                            Err(e) => self.err(
                                Some(n.pos),
                                "nats.sync_interval",
                                first_clause(&e),
                                "write always (fsync every write) or an interval such as 10s or 2m (the default)",
                            ),
                        }
                    }
                }
            }
        }
        if let Some(n) = o.get("compression") {
            if let Some(t) = self.text(n, "nats.compression", "none") {
                match t.to_ascii_lowercase().as_str() {
                    "none" => out.compression = Compression::None,
                    "s2" => out.compression = Compression::S2,
                    other => self.err(
                        Some(n.pos),
                        "nats.compression",
                        format!("unknown compression '{}'", clip(other)),
                        "use none or s2 (the only stream compression nats-server has)",
                    ),
                }
            }
        }
        if let Some(n) = o.get("compression_ratio") {
            if let Some(x) = self.number(n, "nats.compression_ratio", "a ratio", "1.5") {
                if x < 1.0 {
                    self.err(
                        Some(n.pos),
                        "nats.compression_ratio",
                        format!("must be >= 1.0 (stored = raw / ratio), got {}", fmt_num(x)),
                        "use 1.0 for no compression; s2 on typical JSON gives 1.5 to 3",
                    );
                } else {
                    out.compression_ratio = x;
                }
            }
        }
        if out.compression == Compression::None && out.compression_ratio > 1.0 {
            self.err(
                o.key_pos("compression_ratio"),
                "nats.compression_ratio",
                format!(
                    "a compression ratio of {} needs compression; compression is none",
                    fmt_num(out.compression_ratio)
                ),
                "set compression: s2, or remove compression_ratio",
            );
        }
        if let Some(n) = o.get("cluster_name") {
            if let Some(c) = self.name(n, "nats.cluster_name", "cluster", "east-dc", true) {
                out.cluster_name = c;
            }
        }
        if let Some(n) = o.get("max_ha_assets") {
            if let Some(x) = self.whole(n, "nats.max_ha_assets", "max_ha_assets", 1, u32::MAX as i64, "2000") {
                out.max_ha_assets = Some(x as u32);
            }
        }
        out
    }

    pub(super) fn policy(&mut self, node: Option<&Node>) -> Policy {
        let mut out = Policy {
            patterns: vec![Pattern::P1, Pattern::P2, Pattern::P3, Pattern::P4],
            wear_headroom: 0.15,
            hot_spares_per_array: 1,
            min_tolerated: Tolerance::default(),
            min_tolerated_meta: false,
            growth: 0.0,
            horizon_s: YEAR_S,
            fs_reserve: 0.05,
            store_headroom: 0.1,
            baselines: true,
        };
        let Some(o) = node.and_then(|n| self.obj(n, "policy", "the policy", POLICY_KEYS)) else {
            return out;
        };
        if let Some(n) = o.get("patterns") {
            out.patterns = self.patterns(n);
        }
        out.wear_headroom = self.fraction(
            &o,
            "wear_headroom",
            0.0,
            0.9,
            0.15,
            "0.15 leaves 15 % of each SSD empty for wear levelling",
        );
        if let Some(n) = o.get("hot_spares_per_array") {
            if let Some(h) = self.count_u32(n, "policy.hot_spares_per_array", "hot spares", "1") {
                out.hot_spares_per_array = h;
            }
        }
        if let Some(n) = o.get("min_tolerated") {
            if let Some(t) = self.obj(n, "policy.min_tolerated", "the failures to survive", TOLERANCE_KEYS) {
                for (key, slot) in [
                    ("racks", &mut out.min_tolerated.racks),
                    ("arrays", &mut out.min_tolerated.arrays),
                    ("servers", &mut out.min_tolerated.servers),
                    ("disks", &mut out.min_tolerated.disks),
                ] {
                    if let Some(v) = t.get(key) {
                        if let Some(x) = self.count_u32(v, &t.p(key), "a failure count", "1") {
                            *slot = x;
                        }
                    }
                }
                if let Some(v) = t.get("meta") {
                    if let Some(b) = self.boolean(v, &t.p("meta")) {
                        out.min_tolerated_meta = b;
                    }
                }
            }
        }
        if let Some(n) = o.get("growth") {
            if let Some(g) = self.number(n, "policy.growth", "yearly growth as a fraction", "0.3") {
                if g < 0.0 {
                    self.err(
                        Some(n.pos),
                        "policy.growth",
                        format!("must be >= 0, got {}", fmt_num(g)),
                        "write the yearly growth as a fraction: 0.3 for 30 % a year, 0 for none",
                    );
                } else {
                    if g > 10.0 {
                        // 1000 %/yr is almost surely "30" meant as 30 %.
                        self.err(
                            Some(n.pos),
                            "policy.growth",
                            format!(
                                "growth is a fraction per year; {} means {} % a year",
                                fmt_num(g),
                                fmt_num(g * 100.0)
                            ),
                            format!("for {} % a year write {}", fmt_num(g), fmt_num(g / 100.0)),
                        );
                    }
                    out.growth = g;
                }
            }
        }
        if let Some(n) = o.get("horizon") {
            if let Some(h) = self.duration_s(n, "policy.horizon") {
                out.horizon_s = h;
            }
        }
        out.fs_reserve = self.fraction(
            &o,
            "fs_reserve",
            0.0,
            0.5,
            0.05,
            "the filesystem's reserve and metadata",
        );
        out.store_headroom = self.fraction(
            &o,
            "store_headroom",
            0.0,
            0.9,
            0.1,
            "the part of max_file_store kept free",
        );
        if let Some(n) = o.get("baselines") {
            if let Some(b) = self.boolean(n, "policy.baselines") {
                out.baselines = b;
            }
        }
        out
    }

    /// `nats.replicas`: the candidate replica counts (a single number is a one-element list).
    fn nats_replicas(&mut self, n: &Node) -> Vec<u8> {
        // A single number is accepted as a one-element list.
        let items: Vec<(String, &Node)> = match &n.val {
            Val::Seq(items) => items
                .iter()
                .enumerate()
                .map(|(i, x)| (format!("nats.replicas[{i}]"), x))
                .collect(),
            Val::Scalar(_) => vec![("nats.replicas".to_string(), n)],
            Val::Map(_) => {
                self.err(
                    Some(n.pos),
                    "nats.replicas",
                    format!("expected a list of replica counts, got {}", n.describe()),
                    "write e.g. replicas: [3, 5]",
                );
                Vec::new()
            }
        };
        let mut replicas = Vec::new();
        for (p, x) in &items {
            if let Some(r) = self.replicas(x, p) {
                if !replicas.contains(&r) {
                    replicas.push(r);
                }
            }
        }
        if matches!(&n.val, Val::Seq(v) if v.is_empty()) {
            self.err(
                Some(n.pos),
                "nats.replicas",
                "no replica counts to compare",
                "list at least one, e.g. [3, 5]",
            );
        }
        replicas
    }

    /// `policy.patterns`: the layout patterns to evaluate, each once.
    fn patterns(&mut self, n: &Node) -> Vec<Pattern> {
        let mut patterns = Vec::new();
        let items = self.list(Some(n), "policy.patterns", "[\"1\", \"2\", \"3\", \"4\"]");
        for (i, x) in items.iter().enumerate() {
            let p = format!("policy.patterns[{i}]");
            let Some(s) = self.text(x, &p, "\"1\"") else { continue };
            match Pattern::parse(&s) {
                Some(pt) if !patterns.contains(&pt) => patterns.push(pt),
                Some(_) => {}
                None => {
                    let names: Vec<&str> = Pattern::ALL.iter().map(|p| p.as_str()).collect();
                    let msg = match nearest(&s, names.iter().copied()).filter(|_| s.len() > 2) {
                        Some(near) => format!("unknown pattern '{}'; did you mean '{near}'?", clip(&s)),
                        None => format!("unknown pattern '{}'", clip(&s)),
                    };
                    self.err(
                        Some(x.pos),
                        p,
                        msg,
                        "use \"1\", \"2\", \"3\", \"4\", \"ddp-raid1\" or \"raid6\"",
                    );
                }
            }
        }
        if items.is_empty() && matches!(n.val, Val::Seq(_)) {
            self.err(
                Some(n.pos),
                "policy.patterns",
                "no patterns to evaluate",
                "list at least one, e.g. [\"1\", \"2\"], or remove the key for all four",
            );
        }
        patterns
    }

    /// A mapping of overrides keyed by the catalog's names (`failure_rates`, `repair_times`,
    /// `maintenance`): unknown keys are reported with suggestions, each value is read by `value`.
    pub(super) fn overrides(
        &mut self,
        node: Option<&Node>,
        path: &str,
        what: &str,
        keys: Vec<String>,
        value: impl Fn(&mut Self, &str, &Node, &str) -> Option<f64>,
    ) -> Vec<(String, f64)> {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let Some(o) = node.and_then(|n| self.obj(n, path, what, &keys)) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, _, v) in &o.entries {
            if !keys.contains(&k.as_str()) || v.is_null() {
                continue;
            }
            if let Some(x) = value(self, k, v, &o.p(k)) {
                out.push((k.clone(), x));
            }
        }
        out
    }

    /// `x` when it is 0 or more; otherwise a problem at `node` with `fix`.
    pub(super) fn non_negative(&mut self, x: f64, node: &Node, path: &str, fix: &str) -> Option<f64> {
        if x < 0.0 {
            self.err(Some(node.pos), path, format!("must be >= 0, got {}", fmt_num(x)), fix);
            return None;
        }
        Some(x)
    }

    pub(super) fn failure_rates(&mut self, node: Option<&Node>) -> Vec<(String, f64)> {
        let keys = self.catalog.failures.rates.keys().cloned().collect();
        self.overrides(node, "failure_rates", "failure-rate overrides", keys, |me, k, v, p| {
            let x = me.number(v, p, "events per year (or a fraction)", "0.01")?;
            let x = me.non_negative(x, v, p, "a rate is events per year per unit: write 0 or more")?;
            // Destroyed for good (issue 32): more than once a year is not a rate a site plans with.
            if k.ends_with("_lost_per_year") && x > 1.0 {
                me.err(
                    Some(v.pos),
                    p,
                    format!("{k} of {} means more than one loss for good a year", fmt_num(x)),
                    format!(
                        "give how often one {} is destroyed for good per year, e.g. 0.0005 (once in 2,000 years)",
                        k.trim_end_matches("_lost_per_year")
                    ),
                );
                return None;
            }
            if (k.ends_with("afr") || k == "not_return_after_power") && x > 1.0 {
                me.err(
                    Some(v.pos),
                    p,
                    format!(
                        "{k} is a fraction per year; {} means {} %",
                        fmt_num(x),
                        fmt_num(x * 100.0)
                    ),
                    format!("for {} % write {}", fmt_num(x), fmt_num(x / 100.0)),
                );
                return None;
            }
            me.at_most_per_year(x, v, p)
        })
    }

    /// `x` events per year per unit when at most `MAX_EVENTS_PER_YEAR`; otherwise a problem at `node`.
    fn at_most_per_year(&mut self, x: f64, node: &Node, path: &str) -> Option<f64> {
        if x > MAX_EVENTS_PER_YEAR {
            self.err(
                Some(node.pos),
                path,
                format!(
                    "{} events a year per unit is more than natsplan models (at most {}, about three a day: a unit \
                     that fails more often is not in service, and each event is simulated)",
                    fmt_num(x),
                    fmt_num(MAX_EVENTS_PER_YEAR)
                ),
                "give events per year per unit, e.g. 2 (twice a year) or 0.1 (once in ten years)",
            );
            return None;
        }
        Some(x)
    }

    pub(super) fn repair_times(&mut self, node: Option<&Node>) -> Vec<(String, f64)> {
        let keys = self.catalog.failures.repair.keys().cloned().collect();
        self.overrides(node, "repair_times", "repair-time overrides", keys, |me, k, v, p| {
            if !k.ends_with("_rate") {
                let s = me.duration_s(v, p)?;
                return me.plausible_duration(k, s, v, p);
            }
            // A rate: bytes per second, written as a size (`200MB` or `200MB/s`).
            let stripped = match &v.val {
                Val::Scalar(s) if s.text.ends_with("/s") => Some(Node {
                    val: Val::Scalar(yaml::Scalar {
                        text: s.text.trim_end_matches("/s").to_string(),
                        plain: true,
                    }),
                    pos: v.pos,
                }),
                _ => None,
            };
            let b = me.size_nonzero(stripped.as_ref().unwrap_or(v), p, k)? as f64;
            me.plausible_rate(k, b, v, p)
        })
    }

    /// A rebuild or catch-up rate a real drive or link can reach (issue 31): 1 MB/s to 100 GB/s per
    /// drive rebuilt. The fastest NVMe drives write about 14 GB/s; below 1 MB/s a 16 TB drive would rebuild
    /// for six months.
    fn plausible_rate(&mut self, k: &str, bytes_per_s: f64, v: &Node, p: &str) -> Option<f64> {
        const LOW: f64 = 1e6;
        const HIGH: f64 = 100e9;
        if (LOW..=HIGH).contains(&bytes_per_s) {
            return Some(bytes_per_s);
        }
        self.err(
            Some(v.pos),
            p,
            format!(
                "{k} of {}/s is not a rate a drive rebuilds or a replica catches up at",
                crate::units::fmt_bytes(bytes_per_s)
            ),
            "write bytes per second between 1MB and 100GB, e.g. 50MB for a spinning drive or 200MB for an SSD",
        );
        None
    }

    /// Repair and recovery times up to a year (a rack rebuilt, a replacement drive); a replica's lag up to a
    /// day.
    fn plausible_duration(&mut self, k: &str, s: f64, v: &Node, p: &str) -> Option<f64> {
        let most = if k == "replica_lag" {
            86_400.0
        } else {
            crate::units::YEAR_S
        };
        if s <= most {
            return Some(s);
        }
        self.err(
            Some(v.pos),
            p,
            format!(
                "{k} of {} is longer than {}",
                crate::units::fmt_secs(s),
                if k == "replica_lag" { "a day" } else { "a year" }
            ),
            if k == "replica_lag" {
                "give how far a current follower runs behind its leader, e.g. 1s"
            } else {
                "give the mean time this repair takes, e.g. 24h or 30d"
            },
        );
        None
    }

    pub(super) fn maintenance(&mut self, node: Option<&Node>) -> Vec<(String, f64)> {
        let keys = self.catalog.failures.maintenance.keys().cloned().collect();
        self.overrides(
            node,
            "maintenance",
            "planned-maintenance overrides",
            keys,
            |me, k, v, p| {
                // `restart_stall` is a duration; the others are events per year.
                if k == "restart_stall" {
                    return me.duration_s(v, p);
                }
                let x = me.number(v, p, "events per year", "12")?;
                let x = me.non_negative(x, v, p, "write how many times a year, 0 or more")?;
                me.at_most_per_year(x, v, p)
            },
        )
    }
}

fn empty_site() -> Site {
    Site {
        name: String::new(),
        nats: NatsSettings {
            replicas: vec![3],
            sync: SyncMode::Interval(120),
            compression: Compression::None,
            compression_ratio: 1.0,
            cluster_name: "natsplan".into(),
            max_ha_assets: None,
        },
        racks: Vec::new(),
        servers: Vec::new(),
        arrays: Vec::new(),
        workload: Workload::default(),
        policy: Policy {
            patterns: Vec::new(),
            wear_headroom: 0.15,
            hot_spares_per_array: 1,
            min_tolerated: Tolerance::default(),
            min_tolerated_meta: false,
            growth: 0.0,
            horizon_s: YEAR_S,
            fs_reserve: 0.05,
            store_headroom: 0.1,
            baselines: true,
        },
        failure_rates: Vec::new(),
        repair_times: Vec::new(),
        maintenance: Vec::new(),
    }
}
