//! Recovery after a scenario, step by step with times (catalog repair times, overridable in the site), and
//! the load the surviving servers inherit (leaders and replication traffic, as Cruise Control's
//! PotentialNwOutGoal sizes for the case where a server leads everything it holds).

use super::domain::DomainKind;
use super::evaluate::{Model, Scenario, Status, ELECTION_STALL_S};
use super::GroupKind;
use crate::catalog::Catalog;
use crate::layout::AssetKind;
use crate::site::{ServerIdx, Site};
use crate::text::plural_s;
use serde::Serialize;

/// Sequential read rate of a restart after an unclean stop: seed 000 saw about 1 GiB/s per server.
pub const RESTART_READ_BYTES_PER_S: f64 = 1024.0 * 1024.0 * 1024.0;

/// Why a full store needs nats-server restarted on its server once space is back (nats-server 2.15.1; source
/// read at main 1787eee, 2.15.0-dev). A replicated stream's message block is written by the file store's
/// flusher after the write was acknowledged (`AsyncFlush` for R>1 with delayed sync, server/stream.go); when
/// that write meets ENOSPC the block drops the unwritten tail (`flushPendingMsgsLocked`, server/filestore.go),
/// the replica's next apply finds "expected sequence does not match store", and `setWriteErrLocked`
/// (server/stream.go) keeps that first write error for good and turns the replica into an observer: it
/// never catches up by itself (lab: `/healthz` 503 "stream write error" 30 s after space returned, healthy
/// 3 s after a restart). When a RAFT log write meets ENOSPC first, JetStream disables itself on the server
/// (`handleOutOfSpace`, server/jetstream.go), which a restart also undoes.
pub const FULL_DISK_RESTART_WHY: &str = "a replica whose write met ENOSPC stays out (\"critical write error\", an \
     observer) and JetStream may have disabled itself; neither clears without a restart";

/// Record overhead per stored message (ARCHITECTURE.md "Capacity").
const RECORD_OVERHEAD_BYTES: f64 = 30.0;
/// How long a RAFT group's leader waits without a quorum of heartbeats before it gives up (nats-server
/// server/raft.go `lostQuorumIntervalDefault` = 10 × the 1 s heartbeat, read at 1787eee): a group that lost
/// two of three peers re-forms on the survivor only after it, and then one election (`ELECTION_STALL_S`).
/// The lab's `two-stores-lost` drill (issue 35, 5 servers, nats-server 2.15.1) took 20.7 s from the
/// peer-removes to a current group.
pub const LOST_QUORUM_S: f64 = 10.0;

/// Upper bound of a diverged replica's re-sync: a replica whose log diverged from the new stream leader's
/// (a crash plus a pause left a paused one with writes the restarted leader lost; or every replica lost
/// its own unsynced tail) answers the leader's catch-up with "Expected first catchup entry to be a
/// snapshot and peerstate, will retry" (server/raft.go) until the leader installs its next stream snapshot,
/// on a ticker of `compactInterval` 2 min plus up to 1 min of jitter (server/jetstream_cluster.go
/// `monitorStream`, read at 1787eee; sooner past 65,536 entries or 8 MiB of log). While a catch-up runs the
/// first try fails (`errCatchupsRunning`) and the ticker retries after `compactMinInterval` 15 s, forced: 2 min
/// plus 1 min plus 15 s = 195 s after the divergence at most, once the leader has written past the diverged
/// replica's last entry (a replica ahead of the leader ignores its entries until then: an idle stream
/// re-syncs only after new writes). The lab's power-crash-pause drill (issue 35, 5 servers, nats-server
/// 2.15.1, the publisher writing throughout): 117 s and 124.6 s.
pub const DIVERGED_RESYNC_S: f64 = 195.0;

/// What a step needs: the servers and arrays it runs on, so a script can check that none is in a failed
/// domain (natsplan never proposes one that is).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Uses {
    pub servers: Vec<String>,
    pub arrays: Vec<String>,
}

/// What a step takes beyond reaching the cluster: who may carry it out. The JetStream API splits in two
/// (checked on nats-server 2.15.1, docs/faults.md): a stream's own requests (`$JS.API.STREAM.PEER.REMOVE`,
/// `nats stream cluster peer-remove`) answer a user of the stream's account, the application's; the
/// cluster's (`$JS.API.SERVER.REMOVE`, `SERVER.EVACUATE`, `META.LEADER.STEPDOWN`, `META.RESCUE`) answer
/// only the system account and ignore anyone else's request, which then times out (server/jetstream_api.go:
/// `jsLeaderServerRemoveRequest`, `jsLeaderServerEvacuateRequest`, `jsLeaderStepDownRequest`,
/// `jsMetaRescueRequest` return without an answer unless the account is `SystemAccount()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Credentials {
    /// Nothing to carry out: a wait (a domain returning, systemd restarting, a re-read, a catch-up).
    None,
    /// Hands on site or a vendor: power, uplinks, controllers, drives.
    Site,
    /// The storage array's management (SANtricity): volume groups, volumes, LUN mappings.
    Array,
    /// A shell on the server's host: restart nats-server, free space, mkfs and mount, a new server_name.
    Host,
    /// A user of the stream's account (the application's; without accounts, any client).
    ApplicationAccount,
    /// A user of the system account (`emit` writes user `sys`, password from `$NATS_SYSTEM_PASSWORD`).
    SystemAccount,
}

impl Credentials {
    /// How the text report names it (empty for a wait).
    pub fn label(self) -> &'static str {
        match self {
            Credentials::None => "",
            Credentials::Site => "hands on site",
            Credentials::Array => "the array's management",
            Credentials::Host => "a shell on the host",
            Credentials::ApplicationAccount => "the application's account",
            Credentials::SystemAccount => "the system account",
        }
    }
}

/// What a step does, as a program carries it out (issue 35: `verify --faults --recover` runs these on a
/// lab): `Step::what` says it to the operator, the action says it to the drill, and both are written by
/// the same line of the recovery builder. NATS-level actions are executed on a lab; `hardware` is recorded
/// as simulated; a `wait` is observed (the drill waits for its condition).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Time passes on its own until the condition holds.
    Wait { until: Until },
    /// Hands on site or the array's management: power, uplinks, controllers, drives, volume groups and
    /// volumes.
    Hardware,
    /// Restart nats-server on these servers (a shell on each host).
    Restart { servers: Vec<String> },
    /// Free space on these servers' stores (or raise `max_file_store`).
    FreeSpace { servers: Vec<String> },
    /// A new filesystem on the server's new volume, mounted at its store dir: its store starts empty.
    MakeFilesystem { server: String },
    /// `$JS.API.META.RESCUE` from the system account (nats-server ≥ 2.15) with this quorum.
    MetaRescue { quorum_needed: u64 },
    /// `$JS.API.SERVER.REMOVE` of a peer whose store is gone (system account).
    PeerRemove { server: String },
    /// Start the server again with its empty store under a new `server_name` and the same tags.
    RejoinAsNew { server: String },
    /// Mount the server's store on a standby server and start it under the same `server_name`.
    ReattachStore { server: String, standby: String },
    /// Streams whose surviving replica is behind what was acknowledged: remove the lost peers once the meta
    /// group leads, let the group re-form on the survivors, and reconcile with the writers what is gone.
    Reconcile { streams: Vec<String> },
    /// Re-create these streams and replay them from a backup (the application's account).
    RestoreFromBackup { streams: Vec<String> },
    /// Acknowledged writes of the last sync window gone with a quorum of replicas' page cache: each
    /// producer re-publishes what it had acknowledged and the stream no longer holds, under the same
    /// `Nats-Msg-Id` (the application's account).
    RepublishAcked { streams: Vec<String> },
    /// Wait until every replica of these streams is current again: a replica whose log diverged from the
    /// new leader's re-syncs only at the leader's next stream snapshot (`DIVERGED_RESYNC_S`); nothing to
    /// carry out but the wait (do not remove the replica).
    Resync { streams: Vec<String> },
}

/// What a `wait` step waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Until {
    /// nats-server runs again: systemd's restart, or the host's boot.
    Restarted,
    /// A paused process resumes (a stall of unknown length).
    StallEnds,
    /// A server re-reads its store after an unclean stop.
    Reread,
    /// An operator has seen the alert and responds.
    OperatorResponds,
    /// Hardware lost for good is replaced (a rack rebuilt, an array repaired).
    Replaced,
    /// The meta group has its quorum again (the failed domains returned).
    MetaQuorum,
    /// The meta rescue (its own chain) has given the meta group a leader.
    MetaRescued,
    /// A RAID group or pool has rebuilt a disk while serving.
    RaidRebuilt,
}

/// One recovery step.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// What the step recovers (a failed domain, a destroyed server, a degraded group); steps of one chain
    /// run one after another, chains run in parallel.
    pub chain: String,
    pub what: String,
    pub seconds: f64,
    pub uses: Uses,
    /// Who may carry it out (`Credentials`).
    pub credentials: Credentials,
    /// What a program does to carry it out (`Action`; JSON `action.kind` and its arguments).
    pub action: Action,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recovery {
    pub steps: Vec<Step>,
    /// Until every failed domain is back and every replica and RAID group is whole again: the longest chain.
    pub total_s: f64,
    /// Faster ways that need a standby server or an operator decision.
    pub alternatives: Vec<Step>,
}

/// A surviving server's load before and after the scenario (expected placement).
#[derive(Debug, Clone, Serialize)]
pub struct SurvivorLoad {
    pub server: String,
    /// Leaders it holds (fractional: leadership of an asset is shared evenly over its replicas on average).
    pub leaders_before: f64,
    pub leaders_after: f64,
    /// Client writes its leaders take in.
    pub leader_in_bytes_per_s_before: f64,
    pub leader_in_bytes_per_s_after: f64,
    /// If it led every asset it holds a replica of: ingest × (R − 1) out to followers.
    pub potential_out_bytes_per_s: f64,
    pub nic_bytes_per_s: f64,
}

/// A repair time in seconds: the site's override, else the catalog's.
pub fn repair_s(site: &Site, catalog: &Catalog, key: &str) -> f64 {
    site.repair_times
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| catalog.failures.repair_s(key))
}

/// Client write bytes per second into an asset (consumers: their acks are negligible).
pub fn asset_in_bytes_per_s(site: &Site, name: &str, kind: AssetKind) -> f64 {
    in_bytes_per_s(&crate::layout::lookup::Specs::new(site), name, kind)
}

/// As `asset_in_bytes_per_s`, from an index built once (for loops over every asset).
pub(crate) fn in_bytes_per_s(specs: &crate::layout::lookup::Specs, name: &str, kind: AssetKind) -> f64 {
    match kind {
        AssetKind::Stream => specs.stream(name).map(stream_in).unwrap_or(0.0),
        AssetKind::Kv => specs.kv(name).map(kv_in).unwrap_or(0.0),
        AssetKind::ObjectStore => specs.object_store(name).map(object_in).unwrap_or(0.0),
        AssetKind::Consumer => 0.0,
    }
}

/// `in_bytes_per_s` of a layout's asset, through the spec index it carries (`Specs::stream_for`).
pub(crate) fn asset_in_bytes(specs: &crate::layout::lookup::Specs, a: &crate::layout::Asset) -> f64 {
    match a.kind {
        AssetKind::Stream => specs.stream_for(a).map(|(_, s)| stream_in(s)).unwrap_or(0.0),
        AssetKind::Kv => specs.kv_for(a).map(|(_, k)| kv_in(k)).unwrap_or(0.0),
        AssetKind::ObjectStore => specs.object_store_for(a).map(|(_, o)| object_in(o)).unwrap_or(0.0),
        AssetKind::Consumer => 0.0,
    }
}

fn stream_in(s: &crate::site::StreamSpec) -> f64 {
    s.msgs_per_s * (s.msg_size_bytes + s.subject_bytes) as f64 + s.msgs_per_s * RECORD_OVERHEAD_BYTES
}

fn kv_in(k: &crate::site::KvSpec) -> f64 {
    k.puts_per_s * (k.value_size_bytes + k.key_bytes) as f64 + k.puts_per_s * RECORD_OVERHEAD_BYTES
}

fn object_in(o: &crate::site::ObjectStoreSpec) -> f64 {
    o.puts_per_s * o.object_size_bytes as f64
}

/// Bytes a server holds under the expected placement.
fn server_bytes(model: &Model, s: ServerIdx) -> f64 {
    model
        .layout
        .assets
        .iter()
        .filter(|a| a.expected.contains(&s))
        .map(|a| a.bytes_per_replica)
        .sum()
}

fn nic_bytes_per_s(site: &Site, catalog: &Catalog, s: ServerIdx) -> f64 {
    catalog
        .server(&site.servers[s].model)
        .map(|m| m.nic_bits_per_s / 8.0)
        .unwrap_or(1.25e9)
}

/// Sequential read and write rates of the array holding a server's volume.
fn array_rates(model: &Model, catalog: &Catalog, s: ServerIdx) -> (f64, f64) {
    model
        .array_of(s)
        .and_then(|a| catalog.array(&model.site.arrays[a].model))
        .map(|m| (m.read_bw_bytes_per_s, m.write_bw_bytes_per_s))
        .unwrap_or((RESTART_READ_BYTES_PER_S, RESTART_READ_BYTES_PER_S))
}

fn reread_s(model: &Model, catalog: &Catalog, s: ServerIdx) -> f64 {
    let (read, _) = array_rates(model, catalog, s);
    server_bytes(model, s) / RESTART_READ_BYTES_PER_S.min(read).max(1.0)
}

/// How long a rebuilt server's replicas take to catch up from their peers: perf's one catch-up figure (bytes
/// at the RAFT catch-up rate, NIC share, volume write rate; plus a cost per message), so whatif, the yearly
/// chain and design agree.
pub(crate) fn catch_up_s(model: &Model, catalog: &Catalog, s: ServerIdx) -> f64 {
    crate::perf::server_catch_up(model.site, model.layout, catalog, s).s
}

/// Servers and arrays inside the failed domains (any site server, not only JetStream ones): nothing in
/// them may be proposed for a recovery step.
fn unusable(model: &Model, failed: &[super::domain::Domain]) -> (Vec<bool>, Vec<bool>) {
    use super::domain::DomainTarget;
    let site = model.site;
    let mut srv = vec![false; site.servers.len()];
    let mut arr = vec![false; site.arrays.len()];
    let rack_down = |r: usize, srv: &mut Vec<bool>, arr: &mut Vec<bool>, power: bool| {
        for (i, s) in site.servers.iter().enumerate() {
            srv[i] |= s.rack == r;
        }
        if power {
            for (i, a) in site.arrays.iter().enumerate() {
                arr[i] |= a.rack == r;
            }
        }
    };
    for d in failed {
        match (&d.kind, &d.target) {
            (_, DomainTarget::Server(s)) => srv[*s] = true,
            (DomainKind::Array | DomainKind::Full | DomainKind::LostArray, DomainTarget::Array(a)) => arr[*a] = true,
            (DomainKind::Disk, _) => {}
            (DomainKind::Net, DomainTarget::Rack(r)) => rack_down(*r, &mut srv, &mut arr, false),
            (_, DomainTarget::Rack(r)) => rack_down(*r, &mut srv, &mut arr, true),
            (_, DomainTarget::Host(h)) => {
                for (i, s) in site.servers.iter().enumerate() {
                    srv[i] |= s.host.as_deref() == Some(h.as_str());
                }
            }
            (_, DomainTarget::Pdu(p)) => {
                for (i, s) in site.servers.iter().enumerate() {
                    let rack = &site.racks[s.rack];
                    srv[i] |= s.pdu.as_deref() == Some(p.as_str())
                        || (rack.power_feeds <= 1 && rack.pdus.iter().any(|x| x == p));
                }
            }
            _ => {}
        }
    }
    // A server whose own disks are its array is down with it.
    for (i, a) in site.arrays.iter().enumerate() {
        if let Some(o) = a.owner {
            arr[i] |= srv[o];
        }
    }
    (srv, arr)
}

/// Recovery steps for a scenario.
pub fn recovery(model: &Model, catalog: &Catalog, sc: &Scenario) -> Recovery {
    // A DDP pool's preservation capacity serves as its spares (issue 31; hot spares cannot serve pools).
    let mut spares = model.layout.spares.clone();
    for g in &model.layout.groups {
        if super::repair::is_pool(g.raid) && !spares.iter().any(|(a, _)| *a == g.array) {
            let arr = &model.site.arrays[g.array];
            spares.push((g.array, crate::layout::pool_reserve(arr, g.disks.len() as u32)));
        }
    }
    let mut r = Builder {
        model,
        catalog,
        sc,
        steps: Vec::new(),
        alternatives: Vec::new(),
        spares,
    };
    r.domains();
    r.destroyed();
    r.degraded_groups();
    r.lost_assets();
    let total_s = r.chains().iter().map(|c| c.1).fold(0.0, f64::max);
    Recovery {
        steps: r.steps,
        total_s,
        alternatives: r.alternatives,
    }
}

/// How a step names a group's RAID level (a pool's volumes are RAID 1).
fn level_name(raid: crate::layout::Raid) -> &'static str {
    match raid {
        crate::layout::Raid::Raid0 => "RAID 0",
        crate::layout::Raid::Raid1 => "RAID 1",
        crate::layout::Raid::Raid10 => "RAID 10",
        crate::layout::Raid::Raid6 => "RAID 6",
        crate::layout::Raid::DdpRaid1 => "RAID 1",
    }
}

/// What a step says of a new redundant group's initialisation (nothing for RAID 0).
fn init_note(raid: crate::layout::Raid) -> &'static str {
    if raid == crate::layout::Raid::Raid0 {
        ""
    } else {
        " (the NATS-on-E-Series guide's 30 s for a group on a spare; a larger redundant group is assumed usable at once while it \
         initialises in the background)"
    }
}

/// What a destroyed server's chain waits for of the meta group: its quorum back by the failed domains
/// returning (`back_s`, when it is only unavailable), or its rescue (`gone`).
#[derive(Clone, Copy)]
struct Meta {
    back_s: Option<f64>,
    gone: bool,
}

struct Builder<'b, 'a> {
    model: &'b Model<'a>,
    catalog: &'b Catalog,
    sc: &'b Scenario,
    steps: Vec<Step>,
    alternatives: Vec<Step>,
    /// Hot spares left per array: failures in the scenario consume them in order.
    spares: Vec<(usize, u32)>,
}

impl Builder<'_, '_> {
    fn t(&self, k: &str) -> f64 {
        repair_s(self.model.site, self.catalog, k)
    }
    /// The step after power returns to a rack or a PDU: its servers boot.
    fn servers_boot(&self) -> (String, f64, Credentials, Action) {
        (
            "servers boot".into(),
            self.t("server_restart"),
            Credentials::None,
            booted(),
        )
    }
    fn name(&self, s: ServerIdx) -> String {
        self.model.site.servers[s].name.clone()
    }
    fn uses(&self, servers: &[ServerIdx], arrays: &[usize]) -> Uses {
        Uses {
            servers: servers.iter().map(|&s| self.name(s)).collect(),
            arrays: arrays.iter().map(|&a| self.model.site.arrays[a].name.clone()).collect(),
        }
    }
    fn push(&mut self, chain: &str, what: String, seconds: f64, uses: Uses, credentials: Credentials, action: Action) {
        self.steps.push(Step {
            chain: chain.to_string(),
            what,
            seconds,
            uses,
            credentials,
            action,
        })
    }
    /// Take a hot spare of array `a` if one is left.
    fn take_spare(&mut self, a: usize) -> bool {
        match self.spares.iter_mut().find(|(x, n)| *x == a && *n > 0) {
            Some((_, n)) => {
                *n -= 1;
                true
            }
            None => false,
        }
    }
    /// Per chain, its total time, in order of first appearance.
    fn chains(&self) -> Vec<(String, f64)> {
        let mut chains: Vec<(String, f64)> = Vec::new();
        for s in &self.steps {
            match chains.iter_mut().find(|(c, _)| c == &s.chain) {
                Some((_, t)) => *t += s.seconds,
                None => chains.push((s.chain.clone(), s.seconds)),
            }
        }
        chains
    }

    /// Every failed domain's own return, and the standby alternative where one is usable.
    fn domains(&mut self) {
        let (model, catalog, sc) = (self.model, self.catalog, self.sc);
        let site = model.site;
        let layout = model.layout;
        let (eff, _, _) = model.effects(&sc.failed);
        let (bad_srv, bad_arr) = unusable(model, &sc.failed);
        // A standby: a server outside the layout and outside every failed domain.
        let standby = (0..site.servers.len()).find(|&i| !layout.servers.contains(&i) && !bad_srv[i]);
        for d in &sc.failed {
            let chain = d.to_string();
            // The slowest re-read among the servers this domain took down without destroying their store.
            let (eff1, _, _) = model.effects(std::slice::from_ref(d));
            let (rr, slowest) = layout
                .servers
                .iter()
                .copied()
                .filter(|&s| eff1[s].down && !eff[s].destroyed)
                .map(|s| (reread_s(model, catalog, s), Some(s)))
                .fold((0.0, None), |a, b| if b.0 > a.0 { b } else { a });
            let hit: Vec<ServerIdx> = layout.servers.iter().copied().filter(|&s| eff1[s].down).collect();
            let arrays_of = |v: &[ServerIdx]| {
                let mut a: Vec<usize> = v.iter().filter_map(|&s| model.array_of(s)).collect();
                a.sort_unstable();
                a.dedup();
                a
            };
            let on = self.uses(&hit, &arrays_of(&hit));
            let plan = self.return_plan(d.kind, &hit);
            // A full store's restart is the operator's clean one (its step), not an unclean stop: no re-read.
            let rereads = !matches!(
                d.kind,
                DomainKind::Disk
                    | DomainKind::Wipe
                    | DomainKind::Pause
                    | DomainKind::Net
                    | DomainKind::Full
                    | DomainKind::LostRack
                    | DomainKind::LostArray
            );
            for (what, secs, cred, action) in plan {
                self.push(&chain, what, secs, on.clone(), cred, action);
            }
            if let (true, Some(s)) = (rereads, slowest) {
                let what = format!("{} re-reads its store after the unclean stop (≈1 GiB/s)", self.name(s));
                let action = Action::Wait { until: Until::Reread };
                self.push(&chain, what, rr, on.clone(), Credentials::None, action);
            }
            let crash = matches!(
                d.kind,
                DomainKind::Server | DomainKind::Host | DomainKind::Power | DomainKind::Pdu | DomainKind::Rack
            );
            // Re-attaching the LUN elsewhere needs its array reachable and a standby outside the failure.
            if let (true, Some(sb), Some(s)) = (crash, standby, slowest) {
                if let Some(a) = model
                    .array_of(s)
                    .filter(|&a| !bad_arr[a] && site.arrays[a].owner.is_none())
                {
                    self.alternatives.push(Step {
                        chain: chain.clone(),
                        what: format!(
                            "re-attach {}'s LUN on standby server {} (same server_name), mount, re-read",
                            self.name(s),
                            self.name(sb)
                        ),
                        seconds: self.t("operator_response") + self.t("filesystem") + rr,
                        uses: self.uses(&[sb], &[a]),
                        credentials: Credentials::Array,
                        action: Action::ReattachStore {
                            server: self.name(s),
                            standby: self.name(sb),
                        },
                    });
                }
            }
        }
    }

    /// A failed domain's own return: its steps (what, seconds, who, action), before any re-read.
    fn return_plan(&self, kind: DomainKind, hit: &[ServerIdx]) -> Vec<(String, f64, Credentials, Action)> {
        let mut plan: Vec<(String, f64, Credentials, Action)> = Vec::new();
        match kind {
            DomainKind::Disk | DomainKind::Wipe => {}
            DomainKind::Process => plan.push((
                "systemd restarts nats-server".into(),
                self.t("process_restart"),
                Credentials::None,
                Action::Wait {
                    until: Until::Restarted,
                },
            )),
            DomainKind::Pause => plan.push((
                "resumes when the stall ends (unknown length)".into(),
                0.0,
                Credentials::None,
                Action::Wait {
                    until: Until::StallEnds,
                },
            )),
            DomainKind::Server | DomainKind::Host => plan.push((
                "host reboots".into(),
                self.t("server_restart"),
                Credentials::None,
                Action::Wait {
                    until: Until::Restarted,
                },
            )),
            DomainKind::Full => plan.extend(self.full_store_plan(hit)),
            DomainKind::Array => plan.push((
                "controller replacement".into(),
                self.t("array_repair"),
                Credentials::Site,
                Action::Hardware,
            )),
            DomainKind::Power | DomainKind::Pdu => {
                plan.push((
                    "power restored".into(),
                    self.t("rack_power_restore"),
                    Credentials::Site,
                    Action::Hardware,
                ));
                plan.push(self.servers_boot());
            }
            DomainKind::Net => plan.push((
                "uplinks restored".into(),
                self.t("rack_net_restore"),
                Credentials::Site,
                Action::Hardware,
            )),
            DomainKind::Rack => {
                let t = self.t("rack_power_restore").max(self.t("rack_net_restore"));
                plan.push((
                    "power and uplinks restored".into(),
                    t,
                    Credentials::Site,
                    Action::Hardware,
                ));
                plan.push(self.servers_boot());
            }
            DomainKind::LostRack => plan.push((
                "the rack is rebuilt: power, network, servers and arrays replaced (rack_rebuild)".into(),
                self.t("rack_rebuild"),
                Credentials::Site,
                Action::Hardware,
            )),
            DomainKind::LostArray => plan.push((
                "the array is repaired (controller or firmware) before new groups can be built".into(),
                self.t("array_repair"),
                Credentials::Site,
                Action::Hardware,
            )),
        }
        plan
    }

    /// A full store's way back: space freed, then nats-server restarted ([`FULL_DISK_RESTART_WHY`]).
    fn full_store_plan(&self, hit: &[ServerIdx]) -> Vec<(String, f64, Credentials, Action)> {
        let names: Vec<String> = hit.iter().map(|&s| self.name(s)).collect();
        let nodes = short_list(&names.iter().map(String::as_str).collect::<Vec<_>>());
        vec![
            (
                format!("free space on {nodes}'s store (or raise max_file_store)"),
                self.t("operator_response"),
                Credentials::Host,
                Action::FreeSpace { servers: names.clone() },
            ),
            (
                format!("restart nats-server on {nodes}: {FULL_DISK_RESTART_WHY}"),
                self.t("process_restart"),
                Credentials::Host,
                Action::Restart { servers: names },
            ),
        ]
    }
}

mod acked;
mod rebuild;

/// A wait for servers to run again (systemd, or the host's boot).
fn booted() -> Action {
    Action::Wait {
        until: Until::Restarted,
    }
}

/// A wait for a RAID group or pool to rebuild a disk while serving.
fn rebuilt() -> Action {
    Action::Wait {
        until: Until::RaidRebuilt,
    }
}

fn short_list(v: &[&str]) -> String {
    if v.len() <= 6 {
        v.join(", ")
    } else {
        format!("{} and {} more", v[..6].join(", "), v.len() - 6)
    }
}

/// The surviving servers' load, most loaded after the scenario first.
pub fn survivor_load(model: &Model, catalog: &Catalog, sc: &Scenario) -> Vec<SurvivorLoad> {
    let site = model.site;
    let layout = model.layout;
    let down = |s: &ServerIdx| sc.down.contains(s);
    let mut rows: Vec<SurvivorLoad> = layout
        .servers
        .iter()
        .filter(|s| !down(s))
        .map(|&s| SurvivorLoad {
            server: site.servers[s].name.clone(),
            leaders_before: 0.0,
            leaders_after: 0.0,
            leader_in_bytes_per_s_before: 0.0,
            leader_in_bytes_per_s_after: 0.0,
            potential_out_bytes_per_s: 0.0,
            nic_bytes_per_s: nic_bytes_per_s(site, catalog, s),
        })
        .collect();
    let idx: Vec<ServerIdx> = layout.servers.iter().copied().filter(|s| !down(s)).collect();
    // Row of each surviving site server (a Vec: this runs for every asset's every replica).
    let mut row_of = vec![usize::MAX; site.servers.len()];
    for (i, &s) in idx.iter().enumerate() {
        row_of[s] = i;
    }
    let specs = crate::layout::lookup::Specs::new(site);
    for a in &layout.assets {
        let rate = asset_in_bytes(&specs, a);
        let holders = &a.expected;
        if holders.is_empty() {
            continue;
        }
        let up: Vec<ServerIdx> = holders.iter().copied().filter(|s| !down(s)).collect();
        let before = 1.0 / holders.len() as f64;
        // Without a quorum there is no leader at all.
        let after = if up.len() as u32 >= crate::layout::quorum(a.replicas as u32) && !up.is_empty() {
            1.0 / up.len() as f64
        } else {
            0.0
        };
        for &s in holders {
            if let Some(&i) = row_of.get(s).filter(|&&i| i != usize::MAX) {
                let r = &mut rows[i];
                r.leaders_before += before;
                r.leader_in_bytes_per_s_before += before * rate;
                if !down(&s) {
                    r.leaders_after += after;
                    r.leader_in_bytes_per_s_after += after * rate;
                    r.potential_out_bytes_per_s += rate * (a.replicas as f64 - 1.0).max(0.0);
                }
            }
        }
    }
    rows.sort_by(|a, b| {
        b.leader_in_bytes_per_s_after
            .total_cmp(&a.leader_in_bytes_per_s_after)
            .then(b.leaders_after.total_cmp(&a.leaders_after))
            .then(a.server.cmp(&b.server))
    });
    rows
}

/// A destroyed group built again on the replaced array's new drives.
fn desc_fresh(level: &str, n: u32, array: &str, init: &str) -> String {
    format!(
        "new {level} group of {n} drive{} on the replaced {array}'s new drives and its volume{init}",
        plural_s(n)
    )
}
