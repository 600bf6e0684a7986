//! Replica placement under the configuration natsplan emits.
//!
//! Placement tags only confine; `unique_tag` spreads replicas over distinct tag values but caps every
//! stream at the number of values. So: when every planned asset's replica count fits the racks that hold
//! JetStream servers, emit `unique_tag: "rack:"`; otherwise pin replica sets (servers tagged `set:NAME`,
//! each chosen to spread over racks and arrays) and place each asset on one set.
//!
//! `emulate` reproduces what nats-server's meta leader does when the streams are created in plan order
//! (`selectPeerGroup`: eligible peers, then fewest HA assets for R>1, then most available storage): that
//! "expected" placement is used for capacity. Survivability never relies on it: `survival` assumes the
//! worst placement among the eligible ones.

use super::sizing;
use super::*;
use crate::site::{ServerIdx, Site};
use crate::text::plural_s;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The assets a site's workload creates under default replica count `r`, without placement yet.
pub fn assets(site: &Site, r: u8) -> Vec<Asset> {
    let w = &site.workload;
    let consumers: usize = w.streams.iter().map(|s| s.consumers as usize).sum();
    let mut v = Vec::with_capacity(w.streams.len() + consumers + w.kv.len() + w.object_stores.len());
    // One empty candidate list for all (an `Arc` each was 100,000 allocations).
    let none: std::sync::Arc<[ServerIdx]> = Vec::new().into();
    // The spec each asset is made from, as a lookup by its name finds it (the first of the name).
    let specs = super::lookup::Specs::new(site);
    let mut push = |name: std::sync::Arc<str>,
                    kind: AssetKind,
                    replicas: u8,
                    bytes: f64,
                    parent: Option<(std::sync::Arc<str>, usize)>| {
        let spec = match kind {
            AssetKind::Stream => specs.stream_at(&name).map(|x| x.0),
            AssetKind::Kv => specs.kv_at(&name).map(|x| x.0),
            AssetKind::ObjectStore => specs.object_store_at(&name).map(|x| x.0),
            AssetKind::Consumer => None,
        };
        v.push(Asset {
            spec,
            name,
            kind,
            replicas,
            candidates: none.clone(),
            unique_rack: false,
            set: None,
            parent_at: parent.as_ref().map(|p| p.1),
            parent: parent.map(|p| p.0),
            bytes_per_replica: bytes,
            expected: Expected::new(),
        });
        v.len() - 1
    };
    // Canonical order (by name within each kind), so the emulated placement — and so capacity and
    // ranking — does not depend on the order of the site file. emit lists the streams in this order.
    // `sort_by_cached_key`: one lower-case copy per name, not two per comparison (100,000 names); it is
    // stable as `sort_by_key` is, so the order is the same.
    let mut streams: Vec<_> = site.workload.streams.iter().collect();
    streams.sort_by_cached_key(|s| s.name.to_ascii_lowercase());
    let mut kvs: Vec<_> = site.workload.kv.iter().collect();
    kvs.sort_by_cached_key(|k| k.name.to_ascii_lowercase());
    let mut objs: Vec<_> = site.workload.object_stores.iter().collect();
    objs.sort_by_cached_key(|o| o.name.to_ascii_lowercase());
    for s in streams {
        let rr = s.replicas.unwrap_or(r);
        let name: std::sync::Arc<str> = s.name.as_str().into();
        let at = push(
            name.clone(),
            AssetKind::Stream,
            rr,
            sizing::stream_bytes(site, s, rr),
            None,
        );
        for c in 0..s.consumers {
            push(
                format!("{}/c{}", s.name, c + 1).into(),
                AssetKind::Consumer,
                rr,
                sizing::CONSUMER_BYTES,
                Some((name.clone(), at)),
            );
        }
    }
    for k in kvs {
        let rr = k.replicas.unwrap_or(r);
        push(
            k.name.as_str().into(),
            AssetKind::Kv,
            rr,
            sizing::kv_bytes(site, k, rr),
            None,
        );
    }
    for o in objs {
        let rr = o.replicas.unwrap_or(r);
        push(
            o.name.as_str().into(),
            AssetKind::ObjectStore,
            rr,
            sizing::object_store_bytes(site, o, rr),
            None,
        );
    }
    v
}

/// The workload's assets (`assets`) for each default replica count a plan uses, built once and shared by
/// all its layouts instead of a sort and a copy of every name per layout.
pub struct BareAssets {
    by_r: Vec<(u8, Vec<Asset>)>,
}

impl BareAssets {
    pub fn new(site: &Site, rs: impl IntoIterator<Item = u8>) -> BareAssets {
        let mut rs: Vec<u8> = rs.into_iter().collect();
        rs.sort_unstable();
        rs.dedup();
        BareAssets {
            by_r: rs.into_iter().map(|r| (r, assets(site, r))).collect(),
        }
    }

    /// The assets under default replica count `r`, when `new` was given it.
    pub fn get(&self, r: u8) -> Option<&[Asset]> {
        self.by_r.iter().find(|(x, _)| *x == r).map(|(_, v)| v.as_slice())
    }
}

fn distinct_racks(site: &Site, servers: &[ServerIdx]) -> usize {
    let mut r: Vec<usize> = servers.iter().map(|&s| site.servers[s].rack).collect();
    r.sort_unstable();
    r.dedup();
    r.len()
}

/// Decide how the emitted configuration steers placement for these JetStream servers.
pub fn choose_rule(site: &Site, servers: &[ServerIdx], assets: &[Asset]) -> PlacementRule {
    let racks = distinct_racks(site, servers);
    let max_r = assets.iter().map(|a| a.replicas as usize).max().unwrap_or(1);
    if racks >= 2 && max_r <= racks {
        return PlacementRule::UniqueTag { prefix: "rack:".into() };
    }
    if servers.is_empty() {
        return PlacementRule::Free;
    }
    // One set family per replica count in use.
    let mut counts: Vec<usize> = assets.iter().map(|a| a.replicas as usize).collect();
    counts.sort_unstable();
    counts.dedup();
    let mut sets = Vec::new();
    for r in counts {
        if r > servers.len() {
            continue;
        }
        if r == servers.len() || r == 1 && servers.len() == 1 {
            sets.push(ReplicaSet {
                name: format!("r{r}-1"),
                servers: servers.to_vec(),
            });
            continue;
        }
        for (i, set) in spread_sets(site, servers, r).into_iter().enumerate() {
            sets.push(ReplicaSet {
                name: format!("r{r}-{}", i + 1),
                servers: set,
            });
        }
    }
    PlacementRule::Pinned { sets }
}

/// ⌈N/R⌉ sets of R servers that use every server at least once, each spread as evenly as possible over
/// racks, then arrays (greedy: the next member is the one sharing the fewest racks/arrays with the set).
fn spread_sets(site: &Site, servers: &[ServerIdx], r: usize) -> Vec<Vec<ServerIdx>> {
    let n = servers.len();
    let mut usage: BTreeMap<ServerIdx, usize> = servers.iter().map(|&s| (s, 0)).collect();
    let mut out: Vec<Vec<ServerIdx>> = Vec::new();
    for _ in 0..n.div_ceil(r) {
        let mut set: Vec<ServerIdx> = Vec::new();
        while set.len() < r {
            let best = servers
                .iter()
                .copied()
                .filter(|s| !set.contains(s))
                .min_by_key(|&s| {
                    let same_rack = set
                        .iter()
                        .filter(|&&x| site.servers[x].rack == site.servers[s].rack)
                        .count();
                    let same_host = set
                        .iter()
                        .filter(|&&x| site.servers[s].host.is_some() && site.servers[x].host == site.servers[s].host)
                        .count();
                    (
                        same_rack,
                        same_host,
                        usage[&s],
                        site.servers[s].name.to_ascii_lowercase(),
                    )
                })
                .expect("r <= n");
            *usage.get_mut(&best).expect("known server") += 1;
            set.push(best);
        }
        set.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
        if !out.contains(&set) {
            out.push(set);
        }
    }
    out
}

/// An f64 as a u64 in `total_cmp` order (the sign-magnitude bits made monotonic), so keys compare as
/// integers: the same order, cheaper comparisons in the ordered sets below.
fn total_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// The meta leader's preference among all JetStream servers, kept ordered as loads change, so placing
/// one asset costs O(R log N) instead of a sort of every server (assets × servers × layouts sorts).
/// Two orders, as `selectPeerGroup` uses them: for R1, most available
/// storage, then fewest streams, then name; for R > 1 fewest HA assets first, then the same.
///
/// Each order is brought up to date only when an asset walks it (`order`): a workload of R3 and R5
/// assets never walks the R1 order, and pinned assets walk neither; the servers changed since the last
/// walk are re-keyed then, so a walk sees exactly the order kept at every change (keeping every order at
/// every change cost more than the placements themselves).
struct Preference {
    r1: BTreeSet<R1Key>,
    ha: BTreeSet<HaKey>,
    /// The keys each server has in `r1` and `ha`.
    key: Vec<(R1Key, HaKey)>,
    /// Servers whose loads changed since each order was last brought up to date (R1, HA).
    stale: [Vec<usize>; 2],
    is_stale: [Vec<bool>; 2],
}

/// (available storage, descending, as `!total_bits`; streams; name rank), packed high to low in one
/// integer so that keys compare in one step (the sets' comparisons were most of their cost): bits
/// 64–127 the storage, 24–63 the streams, 0–23 the rank. The rank is unique, so it says which server
/// the key is (`Loads::by_rank`).
type R1Key = u128;
/// (HA assets; then as `R1Key`): bits 108–127 the HA assets, 44–107 the storage, 24–43 the streams,
/// 0–23 the rank. HA assets and streams on a server are at most the site's assets (≤ `MAX_ASSETS`,
/// 1,000,000 < 2²⁰), and ranks count servers (< 2²⁴: a site file holds at most 4 Mi values).
type HaKey = u128;

/// Field widths of the packed keys (see `HaKey`).
const COUNT_BITS: u32 = 20;
const RANK_BITS: u32 = 24;

/// `x` in `bits` bits: the site's bounds keep it there (see `HaKey`); a larger one (never from a site
/// natsplan reads) saturates rather than spill into the next field.
fn field(x: usize, bits: u32) -> u128 {
    debug_assert!((x as u128) < 1u128 << bits, "{x} needs more than {bits} bits");
    (x as u128).min((1u128 << bits) - 1)
}

/// Loads the emulated meta leader tracks per JetStream server (indexed like `servers`).
struct Loads<'a> {
    stores: &'a [f64],
    reserved: Vec<f64>,
    ha: Vec<usize>,
    streams_on: Vec<usize>,
    /// Rank of the server's lower-case name among the JetStream servers (the tie-break).
    rank: Vec<usize>,
    /// The server (position in `servers`) of each rank.
    by_rank: Vec<usize>,
    pref: Preference,
}

impl Loads<'_> {
    fn keys(&self, i: usize) -> (R1Key, HaKey) {
        let avail = u128::from(!total_bits(self.stores[i] - self.reserved[i]));
        let (st, rk) = (field(self.streams_on[i], COUNT_BITS), field(self.rank[i], RANK_BITS));
        let r1 = avail << 64 | st << RANK_BITS | rk;
        let ha = field(self.ha[i], COUNT_BITS) << (128 - COUNT_BITS)
            | avail << (COUNT_BITS + RANK_BITS)
            | st << RANK_BITS
            | rk;
        (r1, ha)
    }
    /// The server a key is.
    fn server(&self, key: u128) -> usize {
        self.by_rank[(key & ((1 << RANK_BITS) - 1)) as usize]
    }
    /// Change server i's loads (the orders are re-keyed for it when next walked).
    fn add(&mut self, i: usize, bytes: f64, streams: usize, ha: usize) {
        self.reserved[i] += bytes;
        self.streams_on[i] += streams;
        self.ha[i] += ha;
        for o in 0..2 {
            if !self.pref.is_stale[o][i] {
                self.pref.is_stale[o][i] = true;
                self.pref.stale[o].push(i);
            }
        }
    }
    /// Bring order `o` (0: R1, 1: HA) up to date.
    fn refresh(&mut self, o: usize) {
        for i in std::mem::take(&mut self.pref.stale[o]) {
            self.pref.is_stale[o][i] = false;
            let (k1, k2) = self.keys(i);
            let old = &mut self.pref.key[i];
            if o == 0 && k1 != old.0 {
                self.pref.r1.remove(&old.0);
                self.pref.r1.insert(k1);
                old.0 = k1;
            }
            if o == 1 && k2 != old.1 {
                self.pref.ha.remove(&old.1);
                self.pref.ha.insert(k2);
                old.1 = k2;
            }
        }
    }
    /// The R1 order, up to date.
    fn r1_order(&mut self) -> &BTreeSet<R1Key> {
        self.refresh(0);
        &self.pref.r1
    }
    /// The HA order, up to date.
    fn ha_order(&mut self) -> &BTreeSet<HaKey> {
        self.refresh(1);
        &self.pref.ha
    }
}

/// Give every asset its eligible servers and the placement the meta leader would produce, in plan
/// order. Problems: assets that cannot be placed at all ("no suitable peers").
pub fn emulate(
    site: &Site,
    servers: &[ServerIdx],
    stores: &[f64],
    rule: &PlacementRule,
    mut assets: Vec<Asset>,
) -> (Vec<Asset>, Vec<Problem>) {
    let mut problems = Vec::new();
    // Position of each site server in `servers` (a Vec, not a map: it sits inside sort comparators).
    let mut idx = vec![usize::MAX; servers.iter().max().map_or(0, |m| m + 1)];
    for (i, &s) in servers.iter().enumerate() {
        idx[s] = i;
    }
    // Canonical (name) order of servers, computed once: comparators run millions of times on big sites.
    let mut by_name: Vec<ServerIdx> = servers.to_vec();
    by_name.sort_by_cached_key(|&s| site.servers[s].name.to_ascii_lowercase());
    let mut name_rank = vec![0usize; servers.iter().max().map_or(0, |m| m + 1)];
    for (i, &s) in by_name.iter().enumerate() {
        name_rank[s] = i;
    }
    let mut loads = Loads {
        stores,
        reserved: vec![0.0; servers.len()],
        ha: vec![0; servers.len()],
        streams_on: vec![0; servers.len()],
        rank: servers.iter().map(|&s| name_rank[s]).collect(),
        by_rank: {
            let mut v = vec![0; servers.len()];
            for (i, &s) in servers.iter().enumerate() {
                v[name_rank[s]] = i;
            }
            v
        },
        pref: Preference {
            r1: BTreeSet::new(),
            ha: BTreeSet::new(),
            key: Vec::with_capacity(servers.len()),
            stale: [Vec::new(), Vec::new()],
            is_stale: [vec![false; servers.len()], vec![false; servers.len()]],
        },
    };
    for i in 0..servers.len() {
        let (k1, k2) = loads.keys(i);
        loads.pref.r1.insert(k1);
        loads.pref.ha.insert(k2);
        loads.pref.key.push((k1, k2));
    }
    let mut elig = Eligibility::new(rule, servers);
    // The last stream (or other non-consumer asset) of each name, for the consumers that follow it.
    let mut parent_of = ParentOf::default();
    let racks_available = distinct_racks(site, servers);

    for ai in 0..assets.len() {
        let (done, rest) = assets.split_at_mut(ai);
        let a = &mut rest[0];
        if a.kind == AssetKind::Consumer {
            // A durable consumer lives on its stream's peers (same replica count here).
            if let Some(p) = parent_of.get(done, a.parent.as_ref()).map(|j| &done[j]) {
                a.candidates = p.candidates.clone();
                a.unique_rack = p.unique_rack;
                a.set = p.set.clone();
                a.expected = p.expected.clone();
            }
            if a.replicas > 1 {
                for &s in &a.expected {
                    loads.add(idx[s], 0.0, 0, 1);
                }
            }
            continue;
        }
        elig.assign(a);
        parent_of.last = Some(ai);
        let r = a.replicas as usize;
        if a.candidates.len() < r || (a.unique_rack && racks_available < r) {
            problems.push(no_peers(a, racks_available));
            continue;
        }
        let same_rack = |chosen: &[ServerIdx], s: ServerIdx| {
            a.unique_rack && chosen.iter().any(|&c| site.servers[c].rack == site.servers[s].rack)
        };
        let mut chosen = Expected::new();
        if a.candidates.len() == servers.len() {
            // Every JetStream server is eligible: walk the kept preference order.
            let mut take = |i: usize| {
                let s = servers[i];
                if !same_rack(&chosen, s) {
                    chosen.push(s);
                }
                chosen.len() == r
            };
            if r > 1 {
                loads.ha_order();
                for &k in &loads.pref.ha {
                    if take(loads.server(k)) {
                        break;
                    }
                }
            } else {
                loads.r1_order();
                for &k in &loads.pref.r1 {
                    if take(loads.server(k)) {
                        break;
                    }
                }
            }
        } else {
            // A pinned set (few servers): sort it as `selectPeerGroup` does.
            let mut order: Vec<ServerIdx> = a.candidates.to_vec();
            order.sort_by_key(|&x| loads.keys(idx[x]).0);
            if r > 1 {
                order.sort_by_key(|&x| loads.ha[idx[x]]);
            }
            for s in order {
                if chosen.len() == r {
                    break;
                }
                if !same_rack(&chosen, s) {
                    chosen.push(s);
                }
            }
        }
        for &s in &chosen {
            loads.add(idx[s], a.bytes_per_replica, 1, usize::from(r > 1));
        }
        chosen.sort_by_key(|&s| name_rank[s]);
        a.expected = chosen;
    }
    (assets, problems)
}

/// Whether `name` (an asset's) is `other`: the same text, told apart from the address first (a consumer's
/// parent is its stream's name, shared).
pub fn same_name(name: &std::sync::Arc<str>, other: &str) -> bool {
    std::ptr::eq(name.as_ptr(), other.as_ptr()) && name.len() == other.len() || **name == *other
}

/// The last non-consumer asset of each name among those placed so far, for consumers. A consumer comes
/// right after its stream (`assets` lists them so), so the last non-consumer asset is its parent when
/// the names agree; otherwise (assets in another order) a map of every earlier non-consumer asset is
/// brought up to date and asked. The same answer as a map filled at every asset, without 100,000 names
/// copied and hashed per emulation.
#[derive(Default)]
struct ParentOf {
    /// The last non-consumer asset so far.
    last: Option<usize>,
    /// Last index per name of the non-consumer assets before `upto`.
    map: HashMap<String, usize>,
    upto: usize,
}

impl ParentOf {
    fn get(&mut self, done: &[Asset], parent: Option<&std::sync::Arc<str>>) -> Option<usize> {
        let parent = parent.map(|p| &**p).unwrap_or_default();
        // A consumer made with its stream shares the stream's name (one `Arc`): no text compared then.
        if let Some(j) = self.last.filter(|&j| same_name(&done[j].name, parent)) {
            return Some(j);
        }
        for (j, a) in done.iter().enumerate().skip(self.upto) {
            if a.kind != AssetKind::Consumer {
                self.map.insert(a.name.to_string(), j);
            }
        }
        self.upto = done.len();
        self.map.get(parent).copied()
    }
}

/// The servers an asset may go on under the placement rule; a pinned asset takes the least-loaded set
/// of its replica count (by bytes, ties by name). Candidate lists are shared, never copied per asset.
struct Eligibility<'a> {
    rule: &'a PlacementRule,
    all: std::sync::Arc<[ServerIdx]>,
    /// Per pinned set: its servers and the bytes assigned to it so far.
    sets: Vec<(std::sync::Arc<[ServerIdx]>, f64)>,
    /// Per pinned set: its name, shared by the assets placed on it.
    names: Vec<std::sync::Arc<str>>,
}

impl<'a> Eligibility<'a> {
    fn new(rule: &'a PlacementRule, servers: &[ServerIdx]) -> Self {
        let (sets, names) = match rule {
            PlacementRule::Pinned { sets } => sets
                .iter()
                .map(|s| ((s.servers.clone().into(), 0.0), s.name.as_str().into()))
                .unzip(),
            _ => (Vec::new(), Vec::new()),
        };
        Eligibility {
            rule,
            all: servers.into(),
            sets,
            names,
        }
    }

    fn assign(&mut self, a: &mut Asset) {
        match self.rule {
            PlacementRule::UniqueTag { .. } => {
                a.candidates = self.all.clone();
                a.unique_rack = true;
            }
            PlacementRule::Free => a.candidates = self.all.clone(),
            PlacementRule::Pinned { sets } => {
                let best = (0..sets.len())
                    .filter(|&i| sets[i].servers.len() == a.replicas as usize)
                    .min_by(|&x, &y| {
                        self.sets[x]
                            .1
                            .total_cmp(&self.sets[y].1)
                            .then(sets[x].name.cmp(&sets[y].name))
                    });
                if let Some(i) = best {
                    self.sets[i].1 += a.bytes_per_replica;
                    a.candidates = self.sets[i].0.clone();
                    a.set = Some(self.names[i].clone());
                } else {
                    a.candidates = self.all.clone();
                }
            }
        }
    }
}

/// "no suitable peers": the asset has fewer eligible servers (or racks, under `unique_tag`) than replicas.
fn no_peers(a: &Asset, racks_available: usize) -> Problem {
    let r = a.replicas as usize;
    Problem {
        code: ProblemCode::NoSuitablePeers,
        severity: Severity::Reject,
        text: if a.unique_rack {
            format!(
                "no suitable peers for placement: {} {} needs {r} replicas on distinct racks; JetStream servers span {racks_available} rack{}",
                a.kind.as_str(),
                a.name,
                plural_s(racks_available)
            )
        } else {
            format!(
                "no suitable peers for placement: {} {} needs {r} replicas; {} JetStream server{} eligible",
                a.kind.as_str(),
                a.name,
                a.candidates.len(),
                if a.candidates.len() == 1 { " is" } else { "s are" }
            )
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The meta leader's choice as `selectPeerGroup` makes it, written plainly (a full sort per asset):
    /// what `emulate` kept in ordered sets must choose the same servers.
    fn reference(site: &Site, servers: &[ServerIdx], stores: &[f64], assets: &[Asset]) -> Vec<Vec<ServerIdx>> {
        let pos = |s: ServerIdx| servers.iter().position(|&x| x == s).unwrap();
        let name = |s: ServerIdx| site.servers[s].name.to_ascii_lowercase();
        let (mut reserved, mut ha, mut streams) =
            (vec![0.0; servers.len()], vec![0; servers.len()], vec![0; servers.len()]);
        let mut out = Vec::new();
        for a in assets {
            let r = a.replicas as usize;
            let mut order = servers.to_vec();
            order.sort_by(|&x, &y| {
                let (ix, iy) = (pos(x), pos(y));
                (stores[iy] - reserved[iy])
                    .total_cmp(&(stores[ix] - reserved[ix]))
                    .then(streams[ix].cmp(&streams[iy]))
                    .then(name(x).cmp(&name(y)))
            });
            if r > 1 {
                order.sort_by_key(|&x| ha[pos(x)]);
            }
            let mut chosen: Vec<ServerIdx> = Vec::new();
            for s in order {
                if chosen.len() < r && chosen.iter().all(|&c| site.servers[c].rack != site.servers[s].rack) {
                    chosen.push(s);
                }
            }
            for &s in &chosen {
                reserved[pos(s)] += a.bytes_per_replica;
                streams[pos(s)] += 1;
                ha[pos(s)] += usize::from(r > 1);
            }
            chosen.sort_by_key(|&s| name(s));
            out.push(chosen);
        }
        out
    }

    #[test]
    fn total_bits_order_as_total_cmp() {
        let xs = [
            f64::NEG_INFINITY,
            -3.5e12,
            -1.0,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            1.0,
            2.0e12,
            f64::INFINITY,
            f64::NAN,
        ];
        for a in xs {
            for b in xs {
                assert_eq!(total_bits(a).cmp(&total_bits(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }

    #[test]
    fn the_kept_preference_order_places_as_a_full_sort_does() {
        let cat = crate::catalog::Catalog::builtin();
        let mut yaml = String::from("site: t\nracks:\n");
        for r in 0..4 {
            yaml.push_str(&format!(
                "  - name: R{r}\n    servers: [n{r}a, n{r}b, n{r}c]\n    arrays:\n      - {{ name: A{r}, model: EF600, disk_model: nvme-3.84t, disks: 12 }}\n"
            ));
        }
        let site = crate::site::parse_str(&yaml, "t.yaml", &cat).unwrap();
        let servers: Vec<ServerIdx> = (0..site.servers.len()).collect();
        let racks = distinct_racks(&site, &servers);
        assert!(racks >= 3, "the generated site has {racks} racks");
        // Unequal stores, so available storage and not only names decide; R1, R3 and rack-limited R.
        let stores: Vec<f64> = servers.iter().map(|&s| 1e12 * (1.0 + (s % 3) as f64)).collect();
        let assets: Vec<Asset> = (0..300)
            .map(|i| Asset {
                name: format!("s{i:03}").into(),
                kind: AssetKind::Stream,
                replicas: [1, 3, racks as u8][i % 3],
                candidates: Vec::new().into(),
                unique_rack: false,
                set: None,
                parent: None,
                parent_at: None,
                spec: None,
                bytes_per_replica: 1e9 * (1 + i % 7) as f64,
                expected: Expected::new(),
            })
            .collect();
        let rule = PlacementRule::UniqueTag { prefix: "rack:".into() };
        let (placed, problems) = emulate(&site, &servers, &stores, &rule, assets.clone());
        assert!(problems.is_empty(), "{problems:?}");
        let want = reference(&site, &servers, &stores, &assets);
        for (a, w) in placed.iter().zip(&want) {
            assert_eq!(&a.expected[..], &w[..], "{}", a.name);
        }
    }
}
