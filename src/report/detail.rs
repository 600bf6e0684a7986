//! One layout's detail as sentences and table rows, shared by the text, Markdown and HTML reports so the
//! three say the same thing in the same words; each format only decides how to set them out.

use crate::perf::Predicted;
use crate::plan::{Capacity, PlannedLayout, ServerCapacity};
use crate::text::count;
use crate::text::plural_s;
use crate::units::{fmt_bytes, fmt_sci, fmt_secs};

use crate::text::pct;

/// What each verdict means (design's `--help`, the report's legend and docs/reports.md say the same).
pub const VERDICTS: &str = "\
Verdicts come from a layout's worst reason; layouts rank by verdict, then by failures tolerated,
yearly downtime, performance headroom, disks and arrays used.
  recommended  nothing lowers it (remarks at most)
  acceptable   usable, with a note worth knowing (e.g. R4 costs a third more than R3 and
               tolerates the same; RAID 0 per server without hot spares: a failed disk's replica
               waits for the replacement, counted in the yearly figures)
  risky        usable, but a named risk can stop streams or lose acknowledged writes or data
               (one rack, a quorum on one host, servers sharing one RAID 0 stripe, delayed sync
               with a quorum in one rack, SSD wear within the horizon, a rate close to the required
               one)
  rejected     cannot be used as planned: too few eligible servers for a stream's replicas,
               capacity short now or after the worst tolerated failure, a predicted rate below
               the required one, or fewer failures tolerated than policy.min_tolerated";

/// The ranked summary, survival and performance: pattern, RAID, default replicas and servers per rack are
/// in the id (`p1-raid1-r3-Ax1.Bx1.Cx1-fdce`).
pub const SUMMARY_HEADER: [&str; 7] = [
    "#",
    "layout",
    "verdict",
    "writes survive r/a/s/d",
    "API survives r/a/s/d",
    "down min/yr",
    "perf ×",
];

/// The ranked summary, capacity (a second table, so that no figure wraps at 100 columns).
pub const CAPACITY_HEADER: [&str; 7] = [
    "#",
    "layout",
    "disks",
    "needed",
    "usable",
    "free now",
    "free after failure",
];

/// One row per layout for the ranked summary (survival and performance).
pub fn summary_rows(layouts: &[&PlannedLayout]) -> Vec<Vec<String>> {
    layouts
        .iter()
        .map(|l| {
            vec![
                l.rank.to_string(),
                crate::layout::short_layout_id(&l.id).into_owned(),
                l.verdict.as_str().to_string(),
                tolerates(l),
                tolerates_meta(l),
                down_per_year(l),
                perf_headroom(l),
            ]
        })
        .collect()
}

/// One row per layout for the capacity table.
pub fn capacity_rows(layouts: &[&PlannedLayout]) -> Vec<Vec<String>> {
    layouts
        .iter()
        .map(|l| {
            vec![
                l.rank.to_string(),
                crate::layout::short_layout_id(&l.id).into_owned(),
                l.disks_used.to_string(),
                fmt_bytes(l.capacity.needed_bytes as f64),
                fmt_bytes(l.capacity.usable_bytes as f64),
                free_now(l),
                free_after_failure(l),
            ]
        })
        .collect()
}

/// Free on the fullest server, or by how much the stores fall short ("60.5 TiB short": a negative
/// percentage of free space said nothing; the reason says how many times too small), or `—` when an asset
/// cannot be placed and no server's share is known.
fn free_now(l: &PlannedLayout) -> String {
    match (&l.capacity.shortfall, &l.not_placed) {
        (Some(f), _) if l.capacity.headroom < 0.0 => format!("{} short", fmt_bytes(f.short_bytes as f64)),
        (_, Some(_)) => "—".into(),
        _ => pct(l.capacity.headroom),
    }
}

/// Free on the fullest server after the worst tolerated failure; `—` when the stores are
/// already short (a percentage of a store that never held the workload said nothing), and what is missing
/// on that server when only the failure makes it short.
fn free_after_failure(l: &PlannedLayout) -> String {
    match &l.capacity.after_failure {
        _ if l.capacity.headroom < 0.0 => "—".into(),
        Some(a) if a.headroom < 0.0 => match &a.fullest_server {
            Some(f) => format!(
                "{} short {}",
                f.name,
                fmt_bytes(f.needed_bytes.saturating_sub(f.usable_bytes) as f64)
            ),
            None => pct(a.headroom),
        },
        Some(a) => pct(a.headroom),
        None => "—".into(),
    }
}

/// The legend under the summary tables (one paragraph; `report::wrap` fits it to the width).
pub const SUMMARY_LEGEND: &str = "layout: pattern-RAID-r<default replicas>-<rack>x<servers>.…-<hash>; on more \
than 6 racks <servers>x<count>racks.… instead (--layout takes either form). \
writes survive r/a/s/d: racks/arrays/servers/disks that may fail at once with every stream still taking \
writes; API survives: the same for the JetStream API (the meta group). down min/yr: expected minutes per \
year the worst asset cannot take writes (failures, repairs, planned maintenance). perf ×: predicted \
capacity ÷ required rate of the busiest asset. needed, usable: store for all replicas (with growth and RAFT \
logs) and the JetStream stores; free now: left on the fullest server, or what is missing (short); free after failure: the \
same after the worst tolerated failure and peer-remove (— when short now). A layout that cannot create \
an asset (more replicas than eligible servers or racks): writes survive none, free —.";

/// Why each rejected layout is rejected (its first reason), ranks with the same reason together:
/// `#1, #2: no suitable peers …`.
pub fn rejections(layouts: &[&PlannedLayout]) -> Vec<String> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for l in layouts.iter().filter(|l| l.verdict == crate::plan::Verdict::Rejected) {
        let why = l.reasons.first().cloned().unwrap_or_default();
        match out.iter_mut().find(|(w, _)| *w == why) {
            Some((_, ranks)) => ranks.push(l.rank),
            None => out.push((why, vec![l.rank])),
        }
    }
    out.into_iter()
        .map(|(why, ranks)| {
            let r: Vec<String> = ranks.iter().map(|r| format!("#{r}")).collect();
            format!("{} rejected: {why}", r.join(", "))
        })
        .collect()
}

/// Racks/arrays/servers/disks that may fail at once with every stream still writable, e.g. `1/1/1/2`.
/// `none` when the layout cannot create an asset: it takes no writes with nothing failed (the rejection
/// line says which asset and why).
pub fn tolerates(l: &PlannedLayout) -> String {
    if l.not_placed.is_some() {
        return "none".into();
    }
    format!(
        "{}/{}/{}/{}",
        l.tolerates.racks, l.tolerates.arrays, l.tolerates.servers, l.tolerates.disks
    )
}

/// The same for the meta group: the JetStream API keeps working.
pub fn tolerates_meta(l: &PlannedLayout) -> String {
    let t = &l.tolerates_meta;
    format!("{}/{}/{}/{}", t.racks, t.arrays, t.servers, t.disks)
}

/// Expected unavailable minutes per year of the worst asset (the meta group's is the API's).
pub fn down_per_year(l: &PlannedLayout) -> String {
    match &l.yearly {
        Some(y) if y.worst_unavailable_min_per_year >= 100.0 => format!("{:.0}", y.worst_unavailable_min_per_year),
        Some(y) if y.worst_unavailable_min_per_year >= 1.0 => format!("{:.1}", y.worst_unavailable_min_per_year),
        Some(y) => format!("{:.2}", y.worst_unavailable_min_per_year),
        None => "—".into(),
    }
}

/// Predicted capacity ÷ required rate for the busiest asset, e.g. `3.2×`.
pub fn perf_headroom(l: &PlannedLayout) -> String {
    match l.predicted.as_ref().map(|p| p.headroom) {
        Some(h) if h.is_finite() => format!("{h:.1}×"),
        _ => "—".into(),
    }
}

/// The layout in one sentence: pattern, RAID, default R and what it uses.
pub fn overview(l: &PlannedLayout) -> String {
    format!(
        "pattern {} ({}), default R{}, {} in {}, {} incl. {}, {}",
        l.pattern,
        l.raid,
        l.replicas,
        count(l.servers.len(), "JetStream server"),
        count(l.racks_used as usize, "rack"),
        count(l.disks_used as usize, "disk"),
        count(l.hot_spares as usize, "hot spare"),
        count(l.arrays_used as usize, "array"),
    )
}

/// How replicas are placed.
pub fn placement(l: &PlannedLayout) -> String {
    match (&l.unique_tag, l.replica_sets.is_empty()) {
        (Some(t), _) => format!("Placement: unique_tag \"{t}\" (replicas on distinct racks)."),
        (None, false) => {
            let sets: Vec<String> = l
                .replica_sets
                .iter()
                .map(|(n, v)| format!("set:{n} = {}", v.join(", ")))
                .collect();
            format!("Placement: pinned replica sets {}.", sets.join("; "))
        }
        (None, true) => "Placement: free (NATS chooses; the worst eligible placement is assumed).".into(),
    }
}

pub const SERVER_HEADER: [&str; 7] = [
    "server",
    "rack",
    "array",
    "volume group",
    "LUN",
    "max_file_store",
    "tags",
];

pub fn server_rows(l: &PlannedLayout) -> Vec<Vec<String>> {
    l.servers
        .iter()
        .map(|sv| {
            vec![
                sv.name.clone(),
                sv.rack.clone(),
                sv.array.clone().unwrap_or_default(),
                sv.volume_group.clone().unwrap_or_default(),
                fmt_bytes(sv.lun_bytes as f64),
                fmt_bytes(sv.store_bytes as f64),
                sv.tags.join(" "),
            ]
        })
        .collect()
}

/// What each JetStream server's store sits on, one line per server (`servers[].volume`): the issue's
/// "the report says in one line what each server gets", beside the table's array and group columns.
pub fn volume_lines(l: &PlannedLayout) -> Vec<String> {
    l.servers
        .iter()
        .filter_map(|sv| sv.volume.as_ref().map(|v| format!("{}: {v}", sv.name)))
        .collect()
}

fn fullest(f: &ServerCapacity) -> String {
    format!(
        "{} {} of {}",
        f.name,
        fmt_bytes(f.needed_bytes as f64),
        fmt_bytes(f.usable_bytes as f64)
    )
}

/// Capacity now, after the worst tolerated failure, and what pattern 4 leaves for other services.
pub fn capacity(c: &Capacity) -> Vec<String> {
    let mut out = vec![format!(
        "Capacity: {} usable, {} needed (all replicas, growth, RAFT logs); fullest server {}.",
        fmt_bytes(c.usable_bytes as f64),
        fmt_bytes(c.needed_bytes as f64),
        match (&c.fullest_server, c.shortfall.as_ref().filter(|_| c.headroom < 0.0)) {
            (Some(f), Some(s)) => format!(
                "{} (short by {}, {} too small)",
                fullest(f),
                fmt_bytes(s.short_bytes as f64),
                crate::plan::times(s.times_too_small)
            ),
            (Some(f), None) => format!("{} ({} free)", fullest(f), pct(c.headroom)),
            (None, Some(s)) => format!(
                "— (no placement to judge); short by {} ({} too small)",
                fmt_bytes(s.short_bytes as f64),
                crate::plan::times(s.times_too_small)
            ),
            (None, None) => "—".into(),
        },
    )];
    if let Some(s) = c
        .shortfall
        .as_ref()
        .filter(|s| c.headroom < 0.0 && !s.largest_asset.is_empty())
    {
        out.push(format!(
            "Largest need: {}, {:.0} % of what is needed there.",
            s.largest_asset,
            s.largest_share * 100.0
        ));
    }
    if let Some(a) = &c.after_failure {
        out.push(format!(
            "After {} and peer-remove: fullest server {}.",
            a.failed.join(" + "),
            match &a.fullest_server {
                Some(f) => format!("{} ({} free)", fullest(f), pct(a.headroom)),
                None => format!("{} free", pct(a.headroom)),
            }
        ));
    }
    if c.left_for_others_bytes > 0 {
        out.push(format!(
            "Left for other services: {}.",
            fmt_bytes(c.left_for_others_bytes as f64)
        ));
    }
    out
}

pub const ASSET_HEADER: [&str; 6] = ["asset", "kind", "R", "per replica", "expected servers", "eligible"];

/// Streams, KV buckets and object stores (consumers follow their stream and are left out), largest
/// replica first, so the asset that decides capacity is never below the rows a terminal shows.
pub fn asset_rows(l: &PlannedLayout) -> Vec<Vec<String>> {
    let anywhere = if l.unique_tag.is_some() {
        "any, distinct racks"
    } else {
        "any JetStream server"
    };
    let d = match l.detail() {
        crate::plan::Detail::PerAsset(d) => d,
        // A layout kept per class (not the top-ranked, not --layout): its classes, most bytes first.
        crate::plan::Detail::PerClass(c) => return class_rows(l, c, anywhere),
    };
    let mut assets: Vec<&crate::plan::PlannedAsset> = d
        .assets
        .iter()
        .filter(|a| a.kind != crate::layout::AssetKind::Consumer)
        .collect();
    if crate::plan::classes::applies(d.assets.len()) {
        return asset_class_rows(assets, anywhere);
    }
    assets.sort_by(|a, b| b.bytes_per_replica.cmp(&a.bytes_per_replica).then(a.name.cmp(&b.name)));
    assets
        .into_iter()
        .map(|a| {
            vec![
                a.name.clone(),
                a.kind.as_str().to_string(),
                a.replicas.to_string(),
                fmt_bytes(a.bytes_per_replica as f64),
                a.expected.join(", "),
                match &a.set {
                    Some(set) => format!("set:{set}"),
                    None => anywhere.into(),
                },
            ]
        })
        .collect()
}

/// The rows of a layout kept per class: its placement classes, most bytes first (each asset's expected
/// servers are given with `--layout ID`).
fn class_rows(l: &PlannedLayout, c: &crate::plan::classes::Classes, anywhere: &str) -> Vec<Vec<String>> {
    let mut v: Vec<_> = c
        .assets
        .iter()
        .filter(|k| k.entry.kind != crate::layout::AssetKind::Consumer)
        .collect();
    v.sort_by(|x, y| {
        let total = |k: &crate::plan::classes::Class<crate::plan::classes::AssetShape>| {
            k.entry.bytes_per_replica as u128 * k.count as u128
        };
        total(y).cmp(&total(x)).then(x.first.cmp(&y.first))
    });
    v.into_iter()
        .map(|k| {
            vec![
                like(&k.first, k.count),
                k.entry.kind.as_str().to_string(),
                k.entry.replicas.to_string(),
                fmt_bytes(k.entry.bytes_per_replica as f64),
                format!("with --layout {}", l.id),
                match &k.entry.set {
                    Some(set) => format!("set:{set}"),
                    None => anywhere.into(),
                },
            ]
        })
        .collect()
}

/// Above `plan::classes::CLASS_THRESHOLD` assets: one row per shape (kind, replicas, bytes per replica,
/// set), the most bytes in all first, with its count; the expected servers said as how many the class's
/// replicas are spread over (each asset's are in JSON).
fn asset_class_rows(assets: Vec<&crate::plan::PlannedAsset>, anywhere: &str) -> Vec<Vec<String>> {
    let mut classes: Vec<(&crate::plan::PlannedAsset, usize, std::collections::BTreeSet<&str>)> = Vec::new();
    let mut at: std::collections::HashMap<(&str, u8, u64, Option<&str>), usize> = Default::default();
    for a in assets {
        let i = *at
            .entry((a.kind.as_str(), a.replicas, a.bytes_per_replica, a.set.as_deref()))
            .or_insert_with(|| {
                classes.push((a, 0, Default::default()));
                classes.len() - 1
            });
        classes[i].1 += 1;
        classes[i].2.extend(a.expected.iter().map(String::as_str));
    }
    classes.sort_by(|x, y| {
        let total = |c: &(&crate::plan::PlannedAsset, usize, _)| c.0.bytes_per_replica as u128 * c.1 as u128;
        total(y).cmp(&total(x)).then(x.0.name.cmp(&y.0.name))
    });
    classes
        .into_iter()
        .map(|(a, n, servers)| {
            vec![
                like(&a.name, n),
                a.kind.as_str().to_string(),
                a.replicas.to_string(),
                fmt_bytes(a.bytes_per_replica as f64),
                format!("spread over {}", count(servers.len(), "server")),
                match &a.set {
                    Some(set) => format!("set:{set}"),
                    None => anywhere.into(),
                },
            ]
        })
        .collect()
}

/// A class's name in a table: its first asset, and how many more are like it.
fn like(first: &str, n: usize) -> String {
    match n {
        1 => first.to_string(),
        _ => format!("{first} and {} like it", n - 1),
    }
}

pub const PREDICTION_HEADER: [&str; 7] = [
    "asset",
    "kind",
    "required ops/s",
    "predicted ops/s",
    "band ops/s",
    "bottleneck",
    "measured on",
];

/// One row per predicted asset; the calibration in plain words (`report::calibration_words`; the file
/// ids and each term's source are in JSON), the publish mode in `publish_modes` below the table.
/// Above `plan::classes::CLASS_THRESHOLD` entries, one row per class (entries alike but for the name), the
/// largest required rate in all first, with its count.
/// A layout kept per class has no rows here (its classes are in JSON; `--layout ID` gives its rows).
pub fn prediction_rows(l: &PlannedLayout) -> Vec<Vec<String>> {
    let streams = streams(l);
    let rows: Vec<(&crate::perf::AssetPrediction, usize)> = if crate::plan::classes::applies(streams.len()) {
        let mut c: Vec<_> = crate::plan::classes::of_predictions(streams)
            .into_iter()
            .map(|c| (c.entry, c.count))
            .collect();
        c.sort_by(|x, y| (y.0.required_per_s * y.1 as f64).total_cmp(&(x.0.required_per_s * x.1 as f64)));
        c
    } else {
        streams.iter().map(|a| (a, 1)).collect()
    };
    rows.into_iter()
        .map(|(a, n)| {
            vec![
                like(&a.name, n),
                a.kind.as_str().to_string(),
                format!("{:.0}", a.required_per_s),
                format!("{:.0}", a.ops_per_s),
                format!("{:.0}–{:.0}", a.band.low, a.band.high),
                a.bottleneck.to_string(),
                format!(
                    "{}{}",
                    super::calibration_words(&a.calibration),
                    if a.scaled { " (scaled)" } else { "" }
                ),
            ]
        })
        .collect()
}

/// A layout's per-asset predictions; none while it is kept per class (as the JSON's `predicted.streams`).
fn streams(l: &PlannedLayout) -> &[crate::perf::AssetPrediction] {
    l.per_asset().map(|d| &d.streams[..]).unwrap_or_default()
}

/// The publish modes priced, each once with the assets it applies to:
/// `Publish: orders, events: async publish with a window of 256, …`.
pub fn publish_modes(l: &PlannedLayout) -> Vec<String> {
    let mut modes: Vec<(&str, Vec<&str>)> = Vec::new();
    for a in streams(l) {
        let Some(m) = a.publish.as_deref() else { continue };
        match modes.iter_mut().find(|(x, _)| *x == m) {
            Some((_, names)) => names.push(&a.name),
            None => modes.push((m, vec![&a.name])),
        }
    }
    modes
        .into_iter()
        .map(|(m, names)| match names.len() {
            // 100,000 names on one line help nobody: the first few and the count (JSON has each).
            n if n > PUBLISH_NAMES => format!("Publish ({}, … {n} in all): {m}.", names[..3].join(", ")),
            _ => format!("Publish ({}): {m}.", names.join(", ")),
        })
        .collect()
}

/// Most asset names a publish-mode line lists before it gives a count.
const PUBLISH_NAMES: usize = 20;

/// What the prediction table's last column means.
pub const PREDICTION_LEGEND: &str = "measured on: the calibration the figures come from; (scaled): carried to \
this hardware through the models' figures, with a wider band (--format json names the calibration files and \
each term's source).";

/// The installed data disks a layout leaves in no group, one sentence, with the layout that uses them.
pub fn idle_disks(l: &PlannedLayout) -> Option<String> {
    if l.idle_disks.is_empty() {
        return None;
    }
    let each: Vec<String> = l
        .idle_disks
        .iter()
        .map(|i| {
            format!(
                "{} of {}'s {} data disks (disk{} {})",
                i.disks.len(),
                i.array,
                i.data_disks,
                plural_s(i.disks.len()),
                disk_ranges(&i.disks)
            )
        })
        .collect();
    let total: usize = l.idle_disks.iter().map(|i| i.disks.len()).sum();
    Some(format!(
        "Idle disks: {} {} in no volume group of this layout; {}.",
        each.join(", "),
        if total == 1 { "is" } else { "are" },
        match &l.wider_layout {
            Some(id) =>
                format!("layout {id} puts them in wider groups on the same servers, or keep them for other services"),
            None => "keep them for other services, or add servers to use them".to_string(),
        }
    ))
}

/// Disk numbers as ranges: `1–4, 7, 9–12`.
fn disk_ranges(disks: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < disks.len() {
        let mut j = i;
        while j + 1 < disks.len() && disks[j + 1] == disks[j] + 1 {
            j += 1;
        }
        out.push(if j == i {
            disks[i].to_string()
        } else {
            format!("{}–{}", disks[i], disks[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// The servers a layout leaves out, one sentence per role with what to do with them.
pub fn unused_servers(l: &PlannedLayout) -> Vec<String> {
    use crate::plan::UnusedRole;
    let mut out = Vec::new();
    for role in [UnusedRole::Standby, UnusedRole::Spare, UnusedRole::CoreOnly] {
        let these: Vec<&crate::plan::UnusedServer> = l.unused_servers.iter().filter(|u| u.role == role).collect();
        if these.is_empty() {
            continue;
        }
        let names: Vec<String> = these.iter().map(|u| u.name.clone()).collect();
        let one = these.len() == 1;
        let (they, their, them) = if one {
            ("it", "its", "it")
        } else {
            ("they", "their", "them")
        };
        let what = match role {
            UnusedRole::Standby => {
                let mut arrays: Vec<&str> = these.iter().flat_map(|u| u.arrays.iter().map(|a| a.as_str())).collect();
                arrays.sort_unstable();
                arrays.dedup();
                let mut kinds: Vec<crate::layout::VolumeKind> = Vec::new();
                for k in these.iter().flat_map(|u| u.takes_over.iter().copied()) {
                    if !kinds.contains(&k) {
                        kinds.push(k);
                    }
                }
                let pools = kinds.iter().all(|&k| k == crate::layout::VolumeKind::VmDisk);
                format!(
                    "{they} {} {} {} with the JetStream servers; when a server{} fails, attach its {} to {} and \
                     start nats-server there under the failed server's server_name (no replica catch-up)",
                    if one { "shares" } else { "share" },
                    match (pools, arrays.len() == 1) {
                        (true, true) => "host pool",
                        (true, false) => "host pools",
                        (false, true) => "array",
                        (false, false) => "arrays",
                    },
                    arrays.join(", "),
                    if pools { " on it" } else { "" },
                    takes_over_words(&kinds),
                    if one { "it" } else { "one" }
                )
            }
            UnusedRole::Spare => format!(
                "{their} storage is not needed; keep {them} to replace a failed server (under a new server_name; \
                 replicas catch up) or to add as JetStream server{} later",
                if one { "" } else { "s" }
            ),
            UnusedRole::CoreOnly => format!(
                "no storage; run nats-server without JetStream on {them} for client connections and routes, or \
                 leave {them} out of the cluster"
            ),
        };
        out.push(format!(
            "Not in this layout: {} ({}): {what}.",
            names.join(", "),
            role.as_str()
        ));
    }
    out
}

/// What a standby attaches from a failed server: "LUN", "VM disk" (on its host's pool), "RAID 1 volume"
/// (on a DDP pool), or those joined by "or".
fn takes_over_words(kinds: &[crate::layout::VolumeKind]) -> String {
    use crate::layout::VolumeKind;
    let words: Vec<&str> = kinds
        .iter()
        .map(|k| match k {
            VolumeKind::VmDisk => "VM disk",
            VolumeKind::PoolVolume => "RAID 1 volume",
            VolumeKind::Lun | VolumeKind::Internal => "LUN",
        })
        .collect();
    if words.is_empty() {
        "LUN".into()
    } else {
        words.join(" or ")
    }
}

/// Restart, recovery, burst, memory and inter-rack figures.
pub fn recovery<S>(pr: &Predicted<S>) -> String {
    format!(
        "Restart {} clean, {} unclean (every block re-read); replica catch-up after a replacement {}; largest \
         write burst {}; memory up to {} per server; {}/s between racks.",
        fmt_secs(pr.restart_clean_s),
        fmt_secs(pr.restart_unclean_s),
        fmt_secs(pr.catch_up_s),
        fmt_bytes(pr.burst_bytes_max),
        fmt_bytes(pr.memory_bytes_max),
        fmt_bytes(pr.inter_rack_bytes_per_s)
    )
}

/// Each server's needs in one sentence: for cores, memory and each way of the network, the server whose
/// share of its model is largest (the figures themselves are perf's `ServerNeeds`).
pub fn needs<S>(pr: &Predicted<S>) -> Option<String> {
    use crate::perf::{Need, ServerNeeds};
    let worst = |f: fn(&ServerNeeds) -> &Need| {
        pr.servers
            .iter()
            .max_by(|a, b| f(&a.needs).share.total_cmp(&f(&b.needs).share))
            .map(|s| (s.name.as_str(), s.needs.model.as_str(), f(&s.needs)))
    };
    let (cn, cm, c) = worst(|n| &n.cpu_cores)?;
    let (mn, mm, m) = worst(|n| &n.memory_bytes)?;
    let (inn, inm, i) = worst(|n| &n.network_in_bytes_per_s)?;
    let (on, om, o) = worst(|n| &n.network_out_bytes_per_s)?;
    Some(format!(
        "Server needs (the largest share of its model): {:.2} of {:.2} cores ({cn}, {cm}); {} of {} memory ({mn}, {mm}); {}/s in of {}/s ({inn}, {inm}); {}/s out of {}/s ({on}, {om}). Each term and its source: predicted.needs_terms, each server's values predicted.servers[].needs (--format json).",
        c.needed,
        c.has,
        fmt_bytes(m.needed),
        fmt_bytes(m.has),
        fmt_bytes(i.needed),
        fmt_bytes(i.has),
        fmt_bytes(o.needed),
        fmt_bytes(o.has),
    ))
}

/// The yearly figures in one sentence, when design computed them.
pub fn yearly(l: &PlannedLayout) -> Option<String> {
    l.yearly.as_ref().map(|y| {
        // Per asset only: a layout kept per class names its worst asset without its stalls.
        let assets = l.per_asset().map(|d| &d.yearly[..]).unwrap_or_default();
        let worst = assets.iter().find(|a| a.name == y.worst_unavailable);
        let stalls = worst
            .map(|a| {
                format!(
                    ", beside {:.0} s/yr of election stalls and {:.0} s/yr of planned hand-offs",
                    a.election_stall_s_per_year, a.planned_stall_s_per_year
                )
            })
            .unwrap_or_default();
        format!(
            "Yearly ({}): least available {}, {:.3} min/yr unavailable{stalls}; JetStream API down {:.3} min/yr; \
             {}; {:.0} acknowledged messages lost/yr ({:.0} in sync windows, {:.0} in data-loss events).{}",
            y.method,
            y.worst_unavailable,
            y.worst_unavailable_min_per_year,
            y.api_unavailable_min_per_year,
            durability(y),
            y.acked_msgs_lost_per_year,
            y.window_msgs_lost_per_year,
            y.data_lost_msgs_per_year,
            hardware_sentence(y),
        ) + &spare_sentence(y)
    })
}

/// A yearly probability of data loss as the exact chain knows it: a zero it could not see past its cap
/// reads "≤ bound", never "0" (issue 32), and a bound that is not small beside the figure is said.
pub fn loss_figure(p: f64, beyond: Option<f64>) -> String {
    match beyond {
        Some(b) if p <= 0.0 && b > 0.0 => format!("≤ {}/yr (none within the exact chain)", fmt_sci(b)),
        Some(b) if b > 0.01 * p => format!("{}/yr (+ ≤ {}/yr beyond the exact chain)", fmt_sci(p), fmt_sci(b)),
        _ => format!("{}/yr", fmt_sci(p)),
    }
}

/// "P(some stream wholly lost) …/yr, P(any data_lost, a tail included) …/yr".
pub fn durability<A>(y: &crate::survival::Yearly<A>) -> String {
    let b = y.p_any_data_lost_beyond_cap_per_year;
    format!(
        "P(an asset wholly lost: no replica survives) {}; P(any data_lost, an acknowledged tail included) {}",
        loss_figure(y.p_any_wholly_lost_per_year, b),
        loss_figure(y.p_any_data_lost_per_year, b)
    )
}

/// The figures shown apart from the layout's: the whole site lost, and read errors during rebuilds.
fn hardware_sentence<A>(y: &crate::survival::Yearly<A>) -> String {
    let mut s = format!(
        " Apart: the whole site lost (fire, flood) {}/yr, which only a second site or backups cover",
        fmt_sci(y.p_site_lost_per_year)
    );
    if y.corrupt_replica_events_per_year > 0.0 {
        s.push_str(&format!(
            "; read errors during rebuilds with no redundancy left {}/yr, each corrupting blocks of one replica \
             (nats-server#7549)",
            fmt_sci(y.corrupt_replica_events_per_year)
        ));
    }
    s.push('.');
    s
}

/// What the hot spares buy (or one would), from the yearly figures' comparison.
fn spare_sentence<A>(y: &crate::survival::Yearly<A>) -> String {
    match &y.spare_effect {
        Some(e) if e.compared_with == "no_hot_spares" => format!(
            " Without its hot spares: P(any data_lost) {}/yr, worst {:.3} min/yr.",
            fmt_sci(e.p_any_data_lost_per_year),
            e.worst_unavailable_min_per_year
        ),
        Some(e) => format!(
            " With one hot spare per array: P(any data_lost) {}/yr, worst {:.3} min/yr.",
            fmt_sci(e.p_any_data_lost_per_year),
            e.worst_unavailable_min_per_year
        ),
        None => String::new(),
    }
}
