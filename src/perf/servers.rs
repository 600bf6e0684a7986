//! Each JetStream server's predicted resources (CPU, memory, bursts, restart and catch-up) from the load
//! `predict_layout` summed onto it.

use super::{server_model, volume_of, Band, Kind, Loads, Predicted, ServerPrediction, SyncClass, Terms};
use crate::catalog::Catalog;
use crate::layout::Layout;
use crate::site::{ServerIdx, Site};
use crate::units::SyncMode;
use serde::Serialize;

/// Recent data consumers are assumed to re-read from the page cache (seconds of writes kept hot).
const HOT_WINDOW_S: f64 = 60.0;
/// nats-server heap: a base plus a little per HA asset (assumptions; the NATS docs' minimum is 256 MiB).
const HEAP_BASE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;
const HEAP_PER_ASSET_BYTES: f64 = 2.0 * 1024.0 * 1024.0;
/// A clean restart reads the stream index and the last block of every stream (8 MiB blocks at most).
const CLEAN_RESTART_BLOCK_BYTES: f64 = 8.0 * 1024.0 * 1024.0;
const CLEAN_RESTART_FIXED_S: f64 = 2.0;
/// Share of a NIC catch-up may use while the cluster keeps serving: an assumption.
const CATCH_UP_NIC_SHARE: f64 = 0.5;
/// A server model the catalog does not know: a 10 Gb/s NIC (assumption, the survival model's old default).
const DEFAULT_NIC_BYTES_PER_S: f64 = 1.25e9;

/// Each JetStream server's CPU, memory, bursts, restart and catch-up, and the layout's worst of each.
pub(super) fn server_predictions(
    site: &Site,
    layout: &Layout,
    catalog: &Catalog,
    terms: &Terms,
    sync: SyncClass,
    loads: &Loads,
    out: &mut Predicted<()>,
) {
    let interval_s = match site.nats.sync {
        SyncMode::Always => 0.0,
        // Bursts follow kernel writeback (seed 000 saw flushes every 10–20 s), never the 2 min sync_interval
        // unless that is shorter.
        SyncMode::Interval(s) => (s as f64)
            .min(terms.store.flush_interval_high_s)
            .min(catalog.failures.dirty_expire_s.value),
    };
    let ctx = ServerContext {
        site,
        layout,
        catalog,
        terms,
        interval_s,
        sync,
    };
    for (i, &s) in layout.servers.iter().enumerate() {
        let sm = server_model(site, catalog, s);
        let load = ServerLoad {
            write_bps: loads.write_bps[i],
            stored: loads.stored[i],
            cpu: loads.cpu[i],
            assets: loads.assets_on[i],
            msgs: loads.stored_msgs[i],
            msgs_in: loads.msgs_in[i],
            group_in_bytes_max: loads.group_in_bytes_max[i],
            group_in_msgs_max: loads.group_in_msgs_max[i],
        };
        let mut sp = server_prediction(&ctx, s, &load);
        sp.needs = server_needs(&ctx, &sm, loads, i, &mut out.needs_terms);
        if sp.cpu_cores > sm.cores as f64 {
            out.notes.push(format!(
                "{}: predicted {:.1} cores busy, the server model has {}",
                sp.name, sp.cpu_cores, sm.cores
            ));
        }
        out.restart_clean_s = out.restart_clean_s.max(sp.restart_clean_s);
        out.restart_unclean_s = out.restart_unclean_s.max(sp.restart_unclean_s);
        out.catch_up_s = out.catch_up_s.max(sp.catch_up_s);
        out.burst_bytes_max = out.burst_bytes_max.max(sp.burst_bytes);
        out.cpu_cores_max = out.cpu_cores_max.max(sp.cpu_cores);
        out.memory_bytes_max = out.memory_bytes_max.max(sp.memory_bytes);
        out.servers.push(sp);
    }
    // One note per kind of stall, naming its servers and the worst of them.
    for stall in [CatchUpStall::Likely, CatchUpStall::Possible] {
        let on: Vec<&ServerPrediction> = out.servers.iter().filter(|sp| sp.catch_up_stall == stall).collect();
        let worst = on.iter().copied().max_by(|a, b| {
            let key = |sp: &ServerPrediction| match stall {
                CatchUpStall::Likely => sp.catch_up_load,
                _ => sp.catch_up_backlog_entries,
            };
            key(a).total_cmp(&key(b))
        });
        if let Some(w) = worst {
            let names: Vec<&str> = on.iter().map(|sp| sp.name.as_str()).collect();
            out.notes.push(format!(
                "replica catch-up {} on {} — worst {}: {}",
                stall.as_str(),
                names.join(", "),
                w.name,
                stall_why(w)
            ));
        }
    }
}

/// What one server carries, summed over the assets it holds.
struct ServerLoad {
    write_bps: f64,
    stored: f64,
    cpu: f64,
    assets: usize,
    /// Messages stored, messages/s arriving over every group, and the largest of a group's messages/s times
    /// its bytes and times its messages.
    msgs: f64,
    msgs_in: f64,
    group_in_bytes_max: f64,
    group_in_msgs_max: f64,
}

/// What every server of a layout is priced against: the site, its layout, the catalog, the fitted terms,
/// the seconds of writes a burst flushes and the sync mode.
#[derive(Clone, Copy)]
struct ServerContext<'a> {
    site: &'a Site,
    layout: &'a Layout,
    catalog: &'a Catalog,
    terms: &'a Terms,
    interval_s: f64,
    sync: SyncClass,
}

/// One JetStream server's resources and times from its load and its volume.
fn server_prediction(ctx: &ServerContext, s: ServerIdx, load: &ServerLoad) -> ServerPrediction {
    let ServerContext {
        site,
        layout,
        catalog,
        terms,
        interval_s,
        sync,
    } = *ctx;
    let amp = terms.store.write_amplification;
    let vol = volume_of(site, layout, catalog, s);
    let read_bw = vol
        .as_ref()
        .map(|v| {
            let n = v.disks as f64;
            (n * v.disk.read_bw_bytes_per_s).min(v.array.read_bw_bytes_per_s) / v.luns_on_group.max(1) as f64
        })
        .unwrap_or(f64::INFINITY);
    let reread = terms.store.restart_read_bytes_per_s.min(read_bw);
    let cu = catch_up(
        site,
        layout,
        catalog,
        s,
        CatchUpLoad {
            bytes: load.stored,
            msgs: load.msgs,
            bytes_in_per_s: load.write_bps / amp.max(1.0),
            msgs_in_per_s: load.msgs_in,
            group_in_bytes_max: load.group_in_bytes_max,
            group_in_msgs_max: load.group_in_msgs_max,
        },
    );
    let dirty_s = interval_s.max(if sync == SyncClass::Always { 0.0 } else { 1.0 });
    let heap = HEAP_BASE_BYTES + HEAP_PER_ASSET_BYTES * load.assets as f64;
    let page_cache = load.write_bps / amp.max(1.0) * (HOT_WINDOW_S + dirty_s);
    ServerPrediction {
        name: site.servers[s].name.clone(),
        write_bytes_per_s: load.write_bps,
        burst_bytes: load.write_bps * interval_s,
        cpu_cores: load.cpu,
        memory_bytes: heap + page_cache,
        gomemlimit_bytes: heap * 1.5,
        stored_bytes: load.stored,
        restart_clean_s: CLEAN_RESTART_FIXED_S + load.assets as f64 * CLEAN_RESTART_BLOCK_BYTES / reread,
        restart_unclean_s: CLEAN_RESTART_FIXED_S + load.stored / reread,
        catch_up_s: cu.s,
        catch_up_band: cu.band,
        catch_up_msgs: cu.msgs,
        catch_up_backlog_entries: cu.backlog_entries,
        catch_up_load: cu.load,
        catch_up_stall: cu.stall,
        reattach_s: vol
            .as_ref()
            .filter(|_| layout.array_of(s).is_some_and(|a| site.arrays[a].owner.is_none()))
            .map(|_| CLEAN_RESTART_FIXED_S + load.stored / reread),
        needs: ServerNeeds::default(),
    }
}

/// nats-server's own RAFT catch-up rate for a wiped replica: the site's `repair_times.catch_up_rate`, else
/// the catalog's (models/failure_rates.yaml, measured on the loopback lab with scripts/measure-catch-up,
/// where the link is not the limit).
pub fn raft_catch_up_bytes_per_s(site: &Site, catalog: &Catalog) -> f64 {
    site.repair_times
        .iter()
        .find(|(k, _)| k == "catch_up_rate")
        .map(|(_, v)| *v)
        .unwrap_or_else(|| catalog.failures.repair_s("catch_up_rate"))
}

/// The rate a rebuilt server's replicas catch up from their peers at: the slowest of nats-server's RAFT
/// catch-up rate, the share of its NIC catch-up may use while the cluster serves, and its volume's write
/// rate. The one figure design's `catch_up_s`, whatif's recovery steps and the yearly repair chain use.
pub fn catch_up_bytes_per_s(site: &Site, layout: &Layout, catalog: &Catalog, s: ServerIdx) -> f64 {
    let nic = catalog
        .server(&site.servers[s].model)
        .map(|m| m.nic_bits_per_s / 8.0)
        .unwrap_or(DEFAULT_NIC_BYTES_PER_S);
    let write = volume_of(site, layout, catalog, s)
        .map(|v| v.group_write_bytes_per_s() / v.luns_on_group.max(1) as f64)
        .unwrap_or(f64::INFINITY);
    let raft = raft_catch_up_bytes_per_s(site, catalog);
    let raft = if raft > 0.0 { raft } else { f64::INFINITY };
    (nic * CATCH_UP_NIC_SHARE).min(write).min(raft).max(1.0)
}

/// nats-server's cost per message of catch-up (applying a copied message on the follower), beside its cost per
/// byte: the site's `repair_times.catch_up_per_msg`, else the catalog's (models/failure_rates.yaml, measured
/// with scripts/measure-catch-up and small messages).
pub fn catch_up_s_per_msg(site: &Site, catalog: &Catalog) -> f64 {
    site.repair_times
        .iter()
        .find(|(k, _)| k == "catch_up_per_msg")
        .map(|(_, v)| *v)
        .unwrap_or_else(|| catalog.failures.repair_s("catch_up_per_msg"))
        .max(0.0)
}

/// Committed-but-unapplied entries past which a follower pauses its quorum participation ("Quorum paused,
/// falling behind"; it resumes below 10,000) and past which a leader with as many uncommitted or unapplied
/// entries steps down: `pauseQuorumThreshold` = 100,000, nats-server 2.15 server/raft.go (read at main 1787eee;
/// the same in 2.15.1). One published message is one entry.
pub const PAUSE_QUORUM_ENTRIES: f64 = 100_000.0;

/// The band around a catch-up time, as factors of the central figure: the lab's spread. Per byte the pairwise
/// slopes of the 64 KiB runs gave 290-1190 MB/s around the 514 MB/s fit (models/failure_rates.yaml
/// catch_up_rate); per message the runs of scripts/measure-catch-up with 128 B messages (catch_up_per_msg).
/// Low: the fastest slope (514/1190); high: the slowest (514/290).
const CATCH_UP_BAND_LOW: f64 = 0.43;
const CATCH_UP_BAND_HIGH: f64 = 1.8;

/// Whether the writes arriving while a replica catches up can stall it (nats-server 2.15's quorum pause).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CatchUpStall {
    None,
    /// A group's entries arriving during the band's slowest catch-up of it exceed 100,000: the follower
    /// may pause its quorum participation; after a 2-of-3 restart writes can wedge while every node reports
    /// healthy (nats-server #8519, PR #8523; #8320).
    Possible,
    /// Writes arrive at least as fast as the follower copies and applies them: the backlog never drains.
    Likely,
}

impl CatchUpStall {
    pub fn as_str(self) -> &'static str {
        match self {
            CatchUpStall::None => "none",
            CatchUpStall::Possible => "stall possible",
            CatchUpStall::Likely => "stall likely",
        }
    }
}

fn stall_why(sp: &ServerPrediction) -> String {
    match sp.catch_up_stall {
        CatchUpStall::Likely => format!(
            "its writes take {:.0} % of the rate it copies and applies at, so its backlog never drains; lower the \
             write rate while it catches up",
            sp.catch_up_load * 100.0
        ),
        _ => format!(
            "one of its groups gains up to {:.0} entries while it catches up (band up to {:.0} s), past the 100,000 \
             at which a follower pauses its quorum participation (nats-server 2.15 pauseQuorumThreshold); restart one \
             server at a time, wait until it is current, and lower the write rate if it does not become current",
            sp.catch_up_backlog_entries, sp.catch_up_band.high
        ),
    }
}

/// What a catching-up server holds and receives.
#[derive(Debug, Clone, Copy, Default)]
pub struct CatchUpLoad {
    pub bytes: f64,
    pub msgs: f64,
    /// Payload bytes/s and messages/s arriving over all its groups while it catches up.
    pub bytes_in_per_s: f64,
    pub msgs_in_per_s: f64,
    /// The largest over its groups of the group's messages/s × its bytes, and × its messages: the quorum
    /// pause counts entries per group, and a group gains its rate × its own catch-up time.
    pub group_in_bytes_max: f64,
    pub group_in_msgs_max: f64,
}

/// A replica catch-up priced per byte and per message.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CatchUp {
    /// Seconds: bytes at `catch_up_bytes_per_s` plus messages at `catch_up_s_per_msg`.
    pub s: f64,
    pub band: Band,
    pub msgs: f64,
    /// Share of the catch-up rate the incoming writes take (bytes and messages): at 1 or more it never ends.
    pub load: f64,
    /// Entries one group gains at most during the band's slowest catch-up of that group (its messages/s × its
    /// own catch-up time; an upper bound: the largest rate × bytes and rate × messages may be two groups).
    pub backlog_entries: f64,
    pub stall: CatchUpStall,
}

/// The one catch-up figure design's `catch_up_s`, whatif's recovery steps and the yearly repair chain use: the
/// bytes at the slowest of the RAFT rate, the NIC share and the volume's write rate, plus nats-server's cost
/// per message; a band from the lab's spread; and whether the writes arriving meanwhile can stall it.
pub fn catch_up(site: &Site, layout: &Layout, catalog: &Catalog, s: ServerIdx, l: CatchUpLoad) -> CatchUp {
    let rate = catch_up_bytes_per_s(site, layout, catalog, s);
    let per_msg = catch_up_s_per_msg(site, catalog);
    let secs = l.bytes / rate + l.msgs * per_msg;
    let band = Band {
        low: secs * CATCH_UP_BAND_LOW,
        high: secs * CATCH_UP_BAND_HIGH,
    };
    let load = l.bytes_in_per_s / rate + l.msgs_in_per_s * per_msg;
    let backlog_entries = (l.group_in_bytes_max / rate + l.group_in_msgs_max * per_msg) * CATCH_UP_BAND_HIGH;
    let stall = if load >= 1.0 {
        CatchUpStall::Likely
    } else if backlog_entries > PAUSE_QUORUM_ENTRIES {
        CatchUpStall::Possible
    } else {
        CatchUpStall::None
    };
    CatchUp {
        s: secs,
        band,
        msgs: l.msgs,
        load,
        backlog_entries,
        stall,
    }
}

// ---- What each server needs (issue 46) -------------------------------------------------------------------
//
// Every term names its source: nats-server 2.15 source (read at main 1787eee, the same in 2.15.1), the NATS
// docs, a calibration file, or "assumption". `scripts/measure-server-needs` measures the lab's servers
// against these figures (tests/model/server_needs.rs reads its dated result).

/// Bytes of the file store's per-subject index per distinct subject beyond the subject itself: the `psi`
/// value (`total` u64, `fblk`/`lblk` u32: 16 B, server/filestore.go) plus the subject tree's node and leaf
/// overhead (server/stree), about 48 B more: an assumption.
pub const SUBJECT_INDEX_BYTES: f64 = 64.0;
/// File store block sizes (server/filestore.go): a limits-retention stream's blocks are 8 MiB
/// (`dynBlkSize` → `defaultLargeBlockSize`), a KV bucket's 4 MiB (stream.go: `MaxMsgsPer` set →
/// `defaultKVBlockSize`), and each replicated group's RAFT log (WAL) is a file store of 4 MiB blocks
/// (jetstream_cluster.go `createRaftGroup`: `BlockSize: defaultMediumBlockSize`). A block being written keeps
/// its cache buffer (up to the block) until 10 s without access (`defaultCacheBufferExpiration`).
const STREAM_BLOCK_BYTES: f64 = 8.0 * 1024.0 * 1024.0;
const KV_BLOCK_BYTES: f64 = 4.0 * 1024.0 * 1024.0;
const WAL_BLOCK_BYTES: f64 = 4.0 * 1024.0 * 1024.0;
/// A durable consumer's in-memory state: up to `max_ack_pending` pending entries (default 1,000,
/// `JsDefaultMaxAckPending`, server/consumer.go) in its `pending` map of `*Pending{Sequence, Timestamp}`
/// (16 B plus a Go map entry, about 64 B each: an assumption).
const CONSUMER_PENDING_ENTRIES: f64 = 1000.0;
const CONSUMER_PENDING_ENTRY_BYTES: f64 = 64.0;
/// Go's default GOGC=100 lets the heap grow to twice the live heap before a collection ("A Guide to the Go
/// Garbage Collector", go.dev/doc/gc-guide): the live state's terms are doubled.
const GOGC_HEAP_FACTOR: f64 = 2.0;
/// Subscribers per core NATS message when the site gives none: an assumption.
const CORE_SUBSCRIBERS: f64 = 1.0;

/// Bytes of write cache one written replica keeps: its store's block being written plus, replicated, its
/// RAFT log's (see the block sizes above).
pub(super) fn write_cache_bytes(kind: Kind, replicas: usize) -> f64 {
    let store = if kind == Kind::Kv {
        KV_BLOCK_BYTES
    } else {
        STREAM_BLOCK_BYTES
    };
    store + if replicas > 1 { WAL_BLOCK_BYTES } else { 0.0 }
}

/// A need term's id: a short name (`cpu.idle`, `mem.page_cache`) and, when the same term has another source
/// in the layout (servers of models nearest different calibrated host classes), a number from 2
/// (`cpu.stream.2`). Serialised as that string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TermId {
    pub name: &'static str,
    pub n: u16,
}

impl std::fmt::Display for TermId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.n > 1 {
            write!(f, "{}.{}", self.name, self.n)
        } else {
            f.write_str(self.name)
        }
    }
}

impl Serialize for TermId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One term of a need, said once per layout (`predicted.needs_terms`): its id, what it is, where its figure
/// comes from, and whether that is an assumption. Each server's needs give only the id and its value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NeedTerm {
    pub id: TermId,
    pub what: &'static str,
    pub source: String,
    pub assumption: bool,
}

/// A need against what the server model has: `needed` is the sum of the `terms`' values (by term id, in
/// the layout's `needs_terms`); `share` is needed ÷ has.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Need {
    pub needed: f64,
    pub has: f64,
    pub share: f64,
    #[serde(serialize_with = "term_values")]
    pub terms: Vec<(TermId, f64)>,
}

/// `terms` as a JSON object, term id to value, in the terms' order.
fn term_values<S: serde::Serializer>(terms: &[(TermId, f64)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(terms.iter().map(|(id, v)| (id, v)))
}

impl Need {
    fn of(has: f64, terms: Vec<(TermId, f64)>) -> Need {
        let needed = terms.iter().map(|t| t.1).sum::<f64>();
        Need {
            needed,
            has,
            share: if has > 0.0 { needed / has } else { f64::INFINITY },
            terms,
        }
    }

    /// The value of the term `name` (any number), 0 when absent.
    pub fn value(&self, name: &str) -> f64 {
        self.terms.iter().filter(|(id, _)| id.name == name).map(|t| t.1).sum()
    }
}

/// What one JetStream server needs for its share of the workload (the leaders, replicas, consumers and RAFT
/// groups it holds), beside what its server model has.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerNeeds {
    /// The catalog server model the figures are held against.
    pub model: String,
    /// Cores: `has` is the model's cores shared among its `co_located` busy processes.
    pub cpu_cores: Need,
    pub memory_bytes: Need,
    /// Network bytes/s each way against the NIC (bits/s ÷ 8; full duplex).
    pub network_in_bytes_per_s: Need,
    pub network_out_bytes_per_s: Need,
    /// What the model lacks, one sentence each; empty when it carries its share.
    pub short: Vec<String>,
}

/// The layout's need terms (`predicted.needs_terms`), each said once: `term` gives a server's term its id,
/// adding the term to the table the first time its name and source are seen.
struct TermTable<'a>(&'a mut Vec<NeedTerm>);

impl TermTable<'_> {
    fn term(&mut self, name: &'static str, what: &'static str, value: f64, source: &str) -> (TermId, f64) {
        let mut n = 0;
        for t in self.0.iter().filter(|t| t.id.name == name) {
            if t.source == source {
                return (t.id, value);
            }
            n = n.max(t.id.n);
        }
        let id = TermId {
            name,
            n: n.saturating_add(1),
        };
        self.0.push(NeedTerm {
            id,
            what,
            source: source.to_string(),
            assumption: source.contains("assumption"),
        });
        (id, value)
    }
}

/// Server `i` of the layout's needs from what `predict_layout` summed onto it: its CPU, memory and network
/// needs (each term written once into `table`) and what it is short of.
fn server_needs(
    ctx: &ServerContext,
    sm: &crate::catalog::ServerModel,
    loads: &Loads,
    i: usize,
    table: &mut Vec<NeedTerm>,
) -> ServerNeeds {
    let mut tab = TermTable(table);
    let cpu = cpu_need(ctx, sm, loads, i, &mut tab);
    let mem = memory_need(ctx, sm, loads, i, &mut tab);
    let (net_in, net_out) = network_needs(ctx, sm, loads, i, &mut tab);
    let short = shortfalls(sm, &cpu, &mem, [&net_in, &net_out]);
    ServerNeeds {
        model: sm.name.clone(),
        cpu_cores: cpu,
        memory_bytes: mem,
        network_in_bytes_per_s: net_in,
        network_out_bytes_per_s: net_out,
        short,
    }
}

/// Server `i`'s CPU: idle work, its streams' and consumers' work at the nearest calibrated class's cost per
/// work unit, and its share of core NATS, against its cores (shared with the busy processes beside it).
fn cpu_need(
    ctx: &ServerContext,
    sm: &crate::catalog::ServerModel,
    loads: &Loads,
    i: usize,
    tab: &mut TermTable,
) -> Need {
    let ServerContext {
        site, layout, terms, ..
    } = *ctx;
    use super::leader::{nearest, HostClass};
    use super::model::{CPU_IDLE_CORES, CPU_S_PER_BYTE, CPU_S_PER_MSG};
    let speed = sm.cpu_speed.max(0.05);
    let n = layout.servers.len().max(1) as f64;
    let core = site.workload.core.as_ref();
    // CPU: the calibrated per-message work of the host class nearest this model, scaled by its speed.
    let (unit_s, unit_byte_s, work_src) = match nearest(&terms.leaders, &HostClass::of(sm), 3) {
        Some((c, d)) => (
            c.unit_s,
            c.unit_byte_s,
            format!(
                "calibration {}: {:.1} µs + {:.2} ns/byte per message and work unit, ÷ cpu_speed {speed}; distance {d:.2}",
                c.id,
                c.unit_s * 1e6,
                c.unit_byte_s * 1e9,
            ),
        ),
        None => (
            CPU_S_PER_MSG,
            CPU_S_PER_BYTE,
            "NATS docs' installation table: 1 core per 100k msgs/s at R3 (no calibrated class)".to_string(),
        ),
    };
    let core_cores = core.map_or(0.0, |c| {
        let t = &terms.core;
        let m = CORE_SUBSCRIBERS;
        c.msgs_per_s / n * (t.per_msg_s + t.per_sub_s * m + t.per_byte_s * c.msg_size_bytes as f64 * (1.0 + m)) / speed
    });
    let cpu = vec![
        tab.term(
            "cpu.idle",
            "idle (timers, RAFT heartbeats)",
            CPU_IDLE_CORES,
            "assumption: a production server's background work (its groups' timers and heartbeats, monitoring); \
             an idle lab server without streams measured 0.000-0.004 (tests/data/server-needs-lab-2026-12-05.json)",
        ),
        tab.term(
            "cpu.stream",
            "stream work (store, replicate, apply)",
            (loads.work[i] * unit_s + loads.work_bytes[i] * unit_byte_s) / speed,
            &work_src,
        ),
        tab.term(
            "cpu.consumers",
            "consumer deliveries and acks",
            (loads.deliveries[i] * unit_s + loads.delivery_bytes[i] * unit_byte_s) / speed,
            "assumption: a delivery and its ack cost one work unit (as above)",
        ),
        tab.term(
            "cpu.core",
            "core NATS share",
            core_cores,
            "calibrated core terms; spread evenly over the servers, one subscriber (assumption)",
        ),
    ];
    let co = sm.co_located.max(1) as f64;
    Need::of(sm.cores as f64 / co, cpu)
}

/// Server `i`'s memory: the process, its assets, write caches, subject index, consumers, GC headroom and
/// the page cache its writes keep hot.
fn memory_need(
    ctx: &ServerContext,
    sm: &crate::catalog::ServerModel,
    loads: &Loads,
    i: usize,
    tab: &mut TermTable,
) -> Need {
    let ServerContext {
        terms,
        interval_s,
        sync,
        ..
    } = *ctx;
    // Memory.
    let amp = terms.store.write_amplification.max(1.0);
    let dirty_s = interval_s.max(if sync == SyncClass::Always { 0.0 } else { 1.0 });
    let consumer_bytes = loads.consumers_on[i] as f64 * CONSUMER_PENDING_ENTRIES * CONSUMER_PENDING_ENTRY_BYTES;
    let live =
        HEAP_PER_ASSET_BYTES * loads.assets_on[i] as f64 + loads.cache_bytes[i] + loads.index_bytes[i] + consumer_bytes;
    let mem = vec![
        tab.term(
            "mem.base",
            "process base",
            HEAP_BASE_BYTES,
            "NATS docs' installation table (256 MiB per server)",
        ),
        tab.term(
            "mem.assets",
            "RAFT groups and stream state",
            HEAP_PER_ASSET_BYTES * loads.assets_on[i] as f64,
            "assumption: 2 MiB per asset (cf. Redpanda's 2 MB per partition replica)",
        ),
        tab.term(
            "mem.write_caches",
            "file store write caches",
            loads.cache_bytes[i],
            "nats-server filestore.go, stream.go block sizes; jetstream_cluster.go RAFT log blocks",
        ),
        tab.term(
            "mem.subject_index",
            "subject index (KV keys)",
            loads.index_bytes[i],
            "nats-server filestore.go psim; 48 B tree overhead an assumption",
        ),
        tab.term(
            "mem.consumers",
            "durable consumer state",
            consumer_bytes,
            "nats-server consumer.go max_ack_pending 1,000; 64 B each an assumption",
        ),
        tab.term(
            "mem.gc_headroom",
            "Go GC headroom",
            live * (GOGC_HEAP_FACTOR - 1.0),
            "Go GOGC=100 doubles the live heap (go.dev/doc/gc-guide)",
        ),
        tab.term(
            "mem.page_cache",
            "page cache (hot and dirty data)",
            loads.write_bps[i] / amp * (HOT_WINDOW_S + dirty_s),
            &format!("assumption: {HOT_WINDOW_S:.0} s of writes kept hot, plus {dirty_s:.0} s not yet flushed"),
        ),
        tab.term(
            "mem.memory_store",
            "max_memory_store (memory-storage assets)",
            0.0,
            "no memory-storage asset in the site (jetstream.go: a limit, not a use)",
        ),
    ];
    Need::of(sm.memory_bytes as f64, mem)
}

/// Server `i`'s network in and out: client publishes, replication, deliveries and its share of core NATS,
/// against its NIC.
fn network_needs(
    ctx: &ServerContext,
    sm: &crate::catalog::ServerModel,
    loads: &Loads,
    i: usize,
    tab: &mut TermTable,
) -> (Need, Need) {
    let ServerContext { site, layout, .. } = *ctx;
    let n = layout.servers.len().max(1) as f64;
    let core = site.workload.core.as_ref();
    // Network.
    let nic = sm.nic_bits_per_s / 8.0;
    let core_net = core.map_or(0.0, |c| c.msgs_per_s / n * c.msg_size_bytes as f64);
    let core_src = "assumption: spread evenly over the servers, one subscriber";
    let net_in = Need::of(
        nic,
        vec![
            tab.term(
                "in.clients",
                "client publishes to leaders here",
                loads.net_client_in[i],
                "workload rates × stored bytes",
            ),
            tab.term(
                "in.replication",
                "replication from leaders elsewhere",
                loads.net_repl_in[i],
                "RAFT: a copy per follower",
            ),
            tab.term("in.core", "core NATS share", core_net, core_src),
        ],
    );
    let net_out = Need::of(
        nic,
        vec![
            tab.term(
                "out.replication",
                "replication to followers",
                loads.net_repl_out[i],
                "RAFT: a copy to each follower",
            ),
            tab.term(
                "out.deliveries",
                "deliveries to consumers and object gets",
                loads.net_deliver_out[i],
                "workload consumers × rate × bytes; gets × size",
            ),
            tab.term("out.core", "core NATS share", core_net * CORE_SUBSCRIBERS, core_src),
        ],
    );
    (net_in, net_out)
}

/// What a server is short of, in words: each need over what it has.
fn shortfalls(sm: &crate::catalog::ServerModel, cpu: &Need, mem: &Need, net: [&Need; 2]) -> Vec<String> {
    let co = sm.co_located.max(1) as f64;
    let mut short = Vec::new();
    let name = &sm.name;
    if cpu.share > 1.0 {
        short.push(format!(
            "needs {:.2} cores, {} has {:.2}{}",
            cpu.needed,
            name,
            cpu.has,
            if co > 1.0 {
                format!(" ({} shared by {co:.0} busy processes)", sm.cores)
            } else {
                String::new()
            }
        ));
    }
    if mem.share > 1.0 {
        short.push(format!(
            "needs {} of memory, {} has {}",
            crate::units::fmt_bytes(mem.needed),
            name,
            crate::units::fmt_bytes(mem.has)
        ));
    }
    for (what, need) in [("in", net[0]), ("out", net[1])] {
        if need.share > 1.0 {
            short.push(format!(
                "needs {}/s of network {what}, {}'s NIC carries {}/s",
                crate::units::fmt_bytes(need.needed),
                name,
                crate::units::fmt_bytes(need.has)
            ));
        }
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A term seen again with the same source keeps its id; with another source (servers of models nearest
    /// different calibrated classes) it gets a numbered id, and the table says each source once.
    #[test]
    fn a_term_with_another_source_gets_a_numbered_id_and_each_source_is_said_once() {
        let mut table = Vec::new();
        let mut t = TermTable(&mut table);
        let a = t.term("cpu.stream", "stream work", 1.0, "calibration A");
        let b = t.term("cpu.stream", "stream work", 2.0, "calibration B");
        let a2 = t.term("cpu.stream", "stream work", 3.0, "calibration A");
        let i = t.term("cpu.idle", "idle", 0.05, "assumption: at rest");
        assert_eq!(
            (a.0.to_string(), b.0.to_string(), i.0.to_string()),
            ("cpu.stream".into(), "cpu.stream.2".into(), "cpu.idle".into())
        );
        assert_eq!((a2.0, a2.1), (a.0, 3.0));
        assert_eq!(table.len(), 3);
        assert!(table[2].assumption && !table[0].assumption);
        let need = Need::of(4.0, vec![a, b]);
        assert_eq!(need.needed, 3.0);
        assert_eq!(need.value("cpu.stream"), 3.0);
        assert_eq!(
            serde_json::to_string(&need).unwrap(),
            r#"{"needed":3.0,"has":4.0,"share":0.75,"terms":{"cpu.stream":1.0,"cpu.stream.2":2.0}}"#
        );
    }
}
