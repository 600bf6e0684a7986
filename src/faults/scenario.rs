//! The fault scenarios the runner knows, what to run them on (a plain lab or a planned layout) and
//! the run's options.

use crate::lab::NodeSpec;
use crate::layout::Layout;
use crate::site::Site;
use crate::units::SyncMode;
use anyhow::{anyhow, bail, Result};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A fault scenario the runner knows how to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// kill -9 one follower of the stream, restart it after the hold.
    FollowerKill,
    /// kill -9 the stream leader, restart it after the hold.
    LeaderKill,
    /// SIGSTOP the stream leader past the election timeout, then SIGCONT.
    LeaderPause,
    /// kill -9 a majority of the stream's peers, restart them after the hold.
    MajorityKill,
    /// kill -9 every server, restart them all.
    AllKill,
    /// Restart every server in turn, waiting for health in between.
    RollingRestart,
    /// Cut the network of the stream leader's rack (`net:`; in a lab without a plan every server is its
    /// own rack, so this isolates the leader alone), heal after the hold.
    LeaderPartition,
    /// A follower's store on a small tmpfs with `max_file_store` below its size, filled by a stream
    /// placed on it: JetStream refuses writes there; purging makes room again.
    FullLimit,
    /// A follower's store on a small tmpfs with `max_file_store` above its size, filled by a file beside
    /// the store: the disk fills under NATS (ENOSPC).
    FullDisk,
    /// Every server of one rack killed together (`power:RACK`; one scenario per rack of the plan). The
    /// page cache survives a process kill, so only the availability half of a power loss is tested here;
    /// `power-rack` is the same rack with its unsynced writes dropped.
    RackPower,
    /// One rack's uplink cut (`net:RACK`; one scenario per rack of the plan).
    RackNet,
    /// kill -9 a follower, empty its store, restart it under a new server name and peer-remove the old
    /// one from the stream (ARCHITECTURE.md "Failure domains": the recovery for a destroyed store). Last live scenario: the meta group
    /// keeps the old name as an offline peer afterwards.
    Wipe,
    /// kill -9 a majority of the meta group (every JetStream server) while the stream keeps its own
    /// quorum: the servers without a replica and one follower (5 or more servers for R3). The stream
    /// goes on taking writes; the JetStream API cannot create or change anything (nats-server 2.15.1 on
    /// a lab: stream and consumer create answer 10008 "JetStream system temporarily unavailable", or
    /// nothing in the first seconds; stream info of an existing stream is still answered).
    MetaMajorityKill,
    /// The stream leader's host loses power (`server:NAME`): SIGKILL, its store's unsynced writes
    /// dropped by the power-loss layer (`powerfs`), restart. Its peers hold every acknowledged write.
    PowerServer,
    /// A quorum of the stream's peers (leader first) lose power at once: the acknowledged writes since
    /// their last fsync survive only on the minority that stayed up.
    PowerQuorum,
    /// Every server loses power at once (the whole site).
    PowerAll,
    /// Jepsen's crash plus pause (nats-server #7567): pause a minority of the stream's followers, let
    /// writes build up on the others, cut the leader's power, pause the rest, resume the first minority
    /// and restart the leader, so a quorum forms without the writes only the powered-off leader and
    /// the paused followers held; then resume everything.
    PowerCrashPause,
    /// Every server of one rack loses power with its unsynced writes (`power:RACK`; one scenario per
    /// rack of the plan).
    PowerRack,
    /// Two of the R3 stream's three stores destroyed (both followers killed, their stores emptied) with the
    /// leader surviving (`wipe:` each). Only with `--recover` (whatif's steps bring them back) and on 5 or
    /// more servers (on 3 the meta group loses its quorum with them).
    StoresLost,
    /// The stream leader's server replaced by a new one: killed, its store emptied (`wipe:LEADER`), and
    /// whatif's steps bring a new server with the same tags in. Only with `--recover`.
    LeaderReplace,
    /// A majority of the meta group lost for good (killed, stores emptied) on 5 or more servers, the R3
    /// stream keeping its leader and a quorum: only `$JS.API.META.RESCUE` (nats-server ≥ 2.15) gives the
    /// meta group a leader again. Only with `--recover`.
    MetaLost,
}

impl FaultKind {
    pub const ALL: [FaultKind; 21] = [
        FaultKind::FollowerKill,
        FaultKind::LeaderKill,
        FaultKind::LeaderPause,
        FaultKind::MajorityKill,
        FaultKind::AllKill,
        FaultKind::RollingRestart,
        FaultKind::LeaderPartition,
        FaultKind::FullLimit,
        FaultKind::FullDisk,
        FaultKind::RackPower,
        FaultKind::RackNet,
        FaultKind::MetaMajorityKill,
        FaultKind::Wipe,
        FaultKind::PowerServer,
        FaultKind::PowerQuorum,
        FaultKind::PowerAll,
        FaultKind::PowerCrashPause,
        FaultKind::PowerRack,
        FaultKind::StoresLost,
        FaultKind::LeaderReplace,
        FaultKind::MetaLost,
    ];
    /// The scenarios of a lab without a plan (every server its own rack: no whole-rack scenarios).
    pub fn ladder() -> Vec<FaultKind> {
        FaultKind::ALL
            .into_iter()
            .filter(|k| !k.per_rack() && !k.recover_only())
            .collect()
    }
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::FollowerKill => "follower-kill",
            FaultKind::LeaderKill => "leader-kill",
            FaultKind::LeaderPause => "leader-pause",
            FaultKind::MajorityKill => "majority-kill",
            FaultKind::AllKill => "all-kill",
            FaultKind::RollingRestart => "rolling-restart",
            FaultKind::LeaderPartition => "leader-partition",
            FaultKind::FullLimit => "full-limit",
            FaultKind::FullDisk => "full-disk",
            FaultKind::RackPower => "rack-power",
            FaultKind::RackNet => "rack-net",
            FaultKind::Wipe => "follower-wipe",
            FaultKind::MetaMajorityKill => "meta-majority-kill",
            FaultKind::PowerServer => "power-server",
            FaultKind::PowerQuorum => "power-quorum",
            FaultKind::PowerAll => "power-all",
            FaultKind::PowerCrashPause => "power-crash-pause",
            FaultKind::PowerRack => "power-rack",
            FaultKind::StoresLost => "two-stores-lost",
            FaultKind::LeaderReplace => "leader-replace",
            FaultKind::MetaLost => "meta-quorum-lost",
        }
    }
    pub fn parse(s: &str) -> Result<FaultKind> {
        // The old placeholder (always skipped) was the whole site's power loss.
        if s == "power-loss" {
            return Ok(FaultKind::PowerAll);
        }
        FaultKind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            let names: Vec<&str> = FaultKind::ALL.iter().map(|k| k.name()).collect();
            anyhow!("unknown fault scenario '{s}'; choose from {}", names.join(", "))
        })
    }
    /// Needs the lab in network namespaces.
    pub(super) fn needs_net(self) -> bool {
        matches!(self, FaultKind::LeaderPartition | FaultKind::RackNet)
    }
    /// Destroys something a recovery must bring back (`--recover` carries out whatif's steps after it).
    pub fn destroys(self) -> bool {
        matches!(
            self,
            FaultKind::FullDisk
                | FaultKind::Wipe
                | FaultKind::StoresLost
                | FaultKind::LeaderReplace
                | FaultKind::MetaLost
        )
    }
    /// `--recover` carries out whatif's steps after it: what it destroys, or the acknowledged writes a power
    /// cut made to lose them threw away (re-published by the producer).
    pub fn recovers(self) -> bool {
        self.destroys() || self.designed_to_lose()
    }
    /// Only whatif's recovery (`--recover`) brings back what it destroys: not in the plain ladder.
    pub fn recover_only(self) -> bool {
        matches!(
            self,
            FaultKind::StoresLost | FaultKind::LeaderReplace | FaultKind::MetaLost
        )
    }
    /// The scenarios `--recover` adds to the ladder, last (they leave the meta group with new names).
    pub fn recover_ladder() -> Vec<FaultKind> {
        FaultKind::ALL.into_iter().filter(|k| k.recover_only()).collect()
    }
    /// Runs once per rack.
    pub(super) fn per_rack(self) -> bool {
        matches!(self, FaultKind::RackPower | FaultKind::RackNet | FaultKind::PowerRack)
    }
    /// Cuts power for real: runs on a lab whose stores sit on the power-loss layer (FUSE).
    pub fn is_power(self) -> bool {
        matches!(
            self,
            FaultKind::PowerServer
                | FaultKind::PowerQuorum
                | FaultKind::PowerAll
                | FaultKind::PowerCrashPause
                | FaultKind::PowerRack
        )
    }
    /// Made to lose acknowledged writes when the model predicts the risk: such a scenario runs up to
    /// [`POWER_TRIES`] times, and a risk that never shows is a disagreement.
    pub fn designed_to_lose(self) -> bool {
        matches!(
            self,
            FaultKind::PowerQuorum | FaultKind::PowerAll | FaultKind::PowerCrashPause | FaultKind::PowerRack
        )
    }
}

/// Runs of a power scenario made to lose writes, until one does (a predicted risk that shows in none
/// of them disagrees with the model).
pub const POWER_TRIES: u32 = 3;

/// The power-loss layer's dirty expiry in fault runs: 5 s (as `vm.dirty_expire_centisecs = 500`), not the
/// kernel's default 30 s, so that a scenario waits one expiry for its new stream to be written back (as a
/// stream older than the expiry is) and still fits in seconds. The loss window is then the shorter of
/// `sync_interval` and 5 s; the model's risk (yes/no) is the same for any window.
pub const POWER_EXPIRY: Duration = Duration::from_secs(5);

/// The power lab's route failure detection (`cluster { ping_interval: 1s, ping_max: 3 }`): a server
/// paused for longer than about 4 s is dropped by its peers, as one paused past nats-server's default
/// detection (2 pings of at most 30 s on routes) would be. Without it a paused server's socket buffers
/// keep everything its leader sent, and it has every write when it resumes (measured on this lab: 3
/// of 3 crash-plus-pause runs lost nothing).
pub const POWER_ROUTE_PING: (Duration, u32) = (Duration::from_secs(1), 3);

/// A planned layout to run the faults on (`verify --faults --site SITE --layout ID`): the lab runs its
/// servers with their tags, racks map to network segments, and predictions come from its own model.
#[derive(Debug, Clone)]
pub struct PlanTarget {
    /// `SITE.yaml layout ID`, for the report.
    pub label: String,
    pub site: Site,
    pub layout: Layout,
    /// The lab's servers (the layout's, with their emitted tags).
    pub nodes: Vec<NodeSpec>,
    pub cluster_name: String,
    pub unique_tag: Option<String>,
    pub sync: SyncMode,
    /// Replicas of the test stream (the layout's replica count).
    pub replicas: u8,
    /// Placement tag of the test stream when the layout pins streams to replica sets (`set:NAME`).
    pub placement_tag: Option<String>,
}

/// The most lab servers a plan may bring (2 cores run them all).
pub const MAX_PLAN_SERVERS: usize = crate::input::limits::FAULT_LAB_SERVERS.max as usize;

impl PlanTarget {
    /// The target for layout `id` of `plan`; an error when the lab could not run it.
    pub fn from_plan(plan: &crate::plan::Plan, id: &str, site_label: &str) -> Result<PlanTarget> {
        let pl = plan
            .layout(id)
            .ok_or_else(|| anyhow!("--layout {id}: no such layout in the plan"))?;
        if pl.servers.len() > MAX_PLAN_SERVERS {
            bail!(
                "--layout {id} has {} servers; --faults runs at most {MAX_PLAN_SERVERS} lab servers on one machine \
                 (choose a smaller layout or use --nodes N)",
                pl.servers.len()
            );
        }
        if pl.replicas < 3 {
            bail!(
                "--layout {id} uses R{}; --faults checks replicated streams (R3 or R5)",
                pl.replicas
            );
        }
        let sync = SyncMode::parse(&plan.sync_interval).unwrap_or(SyncMode::Interval(120));
        let spec = crate::lab::spec::for_layout(plan, pl, sync, PathBuf::new());
        let placement_tag = pl.replica_sets.first().map(|(name, _)| format!("set:{name}"));
        let replicas = match &placement_tag {
            Some(_) => pl.replica_sets[0].1.len() as u8,
            None => pl.replicas,
        };
        Ok(PlanTarget {
            label: format!("{site_label} layout {id}"),
            site: plan.input.clone(),
            layout: pl
                .placed()
                .ok_or_else(|| anyhow!("layout {id} is kept per class: {}", crate::plan::MATERIALISED))?
                .clone(),
            nodes: spec.nodes,
            cluster_name: spec.cluster_name,
            unique_tag: spec.unique_tag,
            sync,
            replicas,
            placement_tag,
        })
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct FaultOptions {
    /// Lab size (3 or more; the stream is R3). Ignored with a `target`.
    pub nodes: usize,
    /// The scenarios, in order (`RackPower`/`RackNet` run once per rack).
    pub scenarios: Vec<FaultKind>,
    /// nats-server binary; None: `$NATS_SERVER_BIN`, the crate's `.tools/bin`, PATH.
    pub nats_server: Option<PathBuf>,
    /// Publisher rate; low enough that CPU starvation on a small machine does not cause elections.
    pub publish_rate_per_s: u32,
    /// Time to wait for one publish acknowledgement before calling it unknown and retrying.
    pub publish_timeout: Duration,
    /// Writes before the fault.
    pub warmup: Duration,
    /// How long a fault is held before healing (a pause is held past the election timeout regardless).
    pub hold: Duration,
    /// Writes after healing.
    pub after: Duration,
    /// Where findings (logs, `/jsz`) are saved; None: not saved.
    pub findings_dir: Option<PathBuf>,
    /// A planned layout to run on instead of a plain lab.
    pub target: Option<PlanTarget>,
    /// Set (by a Ctrl-C handler) to stop: the lab, mounts and namespaces are removed and the run fails.
    pub interrupt: Option<&'static AtomicBool>,
    /// Whole-rack scenarios only for these racks (site names); empty: every rack of the lab.
    pub racks: Vec<String>,
    /// The lab's `sync_interval` and the model's (a plan target's own unless set with `with_sync`).
    pub sync: SyncMode,
    /// What `full-disk`'s small tmpfs covers: the follower's whole store (whichever write meets ENOSPC
    /// first), or only the test stream's message blocks, so the write that meets it is always the stream's
    /// block flush and its replica always stops with a write error (docs/faults.md).
    pub full_disk_at: FullDiskAt,
    /// `--recover`: after each destructive scenario's fault, carry out whatif's recovery actions for it
    /// (`recover::carry_out`) and judge the end state under load.
    pub recover: bool,
    /// Library only (tests): action kinds (`restart`, `free_space`, …, as whatif's JSON names them) left
    /// out of whatif's recovery before it is carried out: a deliberately wrong step list whose scenario
    /// must disagree.
    pub recovery_leave_out: Vec<String>,
    /// `--recover`: the most one scenario's recovery steps may take together (each step also has its own
    /// deadline); past it the step running fails.
    pub recovery_budget: Duration,
    /// `--recover`: the sustained publish after the recovery, at `publish_rate_per_s`.
    pub sustain: Duration,
}

/// Where `full-disk` runs out of space (`FaultOptions::full_disk_at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FullDiskAt {
    /// The follower's whole store: the RAFT log or the stream's message block, whichever writes first.
    #[default]
    Store,
    /// Only the test stream's message folder (`jetstream/$G/streams/NAME/msgs`): the stuck replica, always.
    StreamMessages,
}

impl FaultOptions {
    /// The full ladder on `nodes` servers.
    pub fn full(nodes: usize) -> FaultOptions {
        FaultOptions {
            nodes,
            scenarios: FaultKind::ladder(),
            nats_server: None,
            publish_rate_per_s: 200,
            publish_timeout: Duration::from_secs(2),
            warmup: Duration::from_secs(2),
            hold: Duration::from_secs(8),
            after: Duration::from_secs(4),
            findings_dir: None,
            target: None,
            interrupt: None,
            racks: Vec::new(),
            sync: SyncMode::Interval(120),
            full_disk_at: FullDiskAt::Store,
            recover: false,
            recovery_leave_out: Vec::new(),
            recovery_budget: Duration::from_secs(120),
            sustain: Duration::from_secs(5),
        }
    }
    /// A short run of the given scenarios (for the test suite).
    pub fn quick(nodes: usize, scenarios: &[FaultKind]) -> FaultOptions {
        FaultOptions {
            scenarios: scenarios.to_vec(),
            warmup: Duration::from_secs(1),
            hold: Duration::from_secs(4),
            after: Duration::from_secs(3),
            ..FaultOptions::full(nodes)
        }
    }
    /// Run on a planned layout: its servers, its racks, and the whole-rack scenarios added.
    pub fn on_plan(mut self, target: PlanTarget) -> FaultOptions {
        for k in [FaultKind::RackPower, FaultKind::RackNet] {
            if !self.scenarios.contains(&k) {
                let at = self
                    .scenarios
                    .iter()
                    .position(|x| *x == FaultKind::Wipe || x.is_power())
                    .unwrap_or(self.scenarios.len());
                self.scenarios.insert(at, k);
            }
        }
        if self.scenarios.iter().any(|k| k.is_power()) && !self.scenarios.contains(&FaultKind::PowerRack) {
            self.scenarios.push(FaultKind::PowerRack);
        }
        self.nodes = target.nodes.len();
        self.sync = target.sync;
        self.target = Some(target);
        self
    }
    /// Run the lab with this `sync_interval` and predict with it (a plan target's too).
    pub fn with_sync(mut self, sync: SyncMode) -> FaultOptions {
        self.sync = sync;
        if let Some(t) = &mut self.target {
            t.sync = sync;
            t.site.nats.sync = sync;
        }
        self
    }
    pub(super) fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|f| f.load(Ordering::SeqCst))
    }
    /// Sleep `d`, returning early with an error when interrupted.
    pub(super) fn pause(&self, d: Duration) -> Result<()> {
        let end = Instant::now() + d;
        loop {
            if self.interrupted() {
                bail!("interrupted");
            }
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(Duration::from_millis(100)));
        }
    }
}
