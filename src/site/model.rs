//! The validated site: what the user has (racks, servers, arrays, disks), what they want (replica
//! candidates, sync mode, workload, policy) and how often things break. Everything here is an input; the
//! planner's choices (which servers run JetStream, volume groups, LUNs) live in `layout`.

use crate::units::SyncMode;
use serde::Serialize;

/// Index of a rack in `Site::racks`.
pub type RackIdx = usize;
/// Index of a server in `Site::servers`.
pub type ServerIdx = usize;
/// Index of an array in `Site::arrays`.
pub type ArrayIdx = usize;

#[derive(Debug, Clone, Serialize)]
pub struct Site {
    pub name: String,
    pub nats: NatsSettings,
    pub racks: Vec<Rack>,
    /// All servers, in input order; each names its rack.
    pub servers: Vec<Server>,
    /// All arrays (shared arrays and servers' internal disks), in input order; each names its rack.
    pub arrays: Vec<Array>,
    pub workload: Workload,
    pub policy: Policy,
    /// Failure-rate and repair-time overrides, keyed as in `models/failure_rates.yaml`.
    pub failure_rates: Vec<(String, f64)>,
    /// Repair-time overrides in seconds (rebuild_rate in bytes/s).
    pub repair_times: Vec<(String, f64)>,
    /// Planned-maintenance overrides (events per year; restart_stall in seconds).
    pub maintenance: Vec<(String, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NatsSettings {
    /// Candidate default replica counts the planner compares (R1 only when listed).
    pub replicas: Vec<u8>,
    pub sync: SyncMode,
    pub compression: Compression,
    /// Stored bytes are divided by this (1.0 = none; s2 on typical JSON ≈ 1.5–3).
    pub compression_ratio: f64,
    pub cluster_name: String,
    /// Optional cap on HA assets per server (`jetstream.limits.max_ha_assets`).
    pub max_ha_assets: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    None,
    S2,
}

#[derive(Debug, Clone, Serialize)]
pub struct Rack {
    pub name: String,
    /// Power feeds (A/B). One feed means a PDU or feed failure is a rack power event.
    pub power_feeds: u32,
    /// L3 uplinks; redundancy only, never bandwidth.
    pub uplinks: u32,
    pub pdus: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Server {
    pub name: String,
    pub rack: RackIdx,
    /// Shared hypervisor host (several NATS VMs/containers on one machine share its failures).
    pub host: Option<String>,
    /// PDU feeding the server, when the site lists PDUs.
    pub pdu: Option<String>,
    /// Server model name from the catalog (default from `models/servers.yaml`).
    pub model: String,
    /// Index of this server's internal-disk array in `Site::arrays`, if it has internal disks.
    pub internal: Option<ArrayIdx>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Array {
    pub name: String,
    pub rack: RackIdx,
    pub model: String,
    pub disk_model: String,
    pub disks: u32,
    /// Capacity per disk override (virtual disks); otherwise the disk model's.
    pub disk_size_bytes: Option<u64>,
    pub hot_spares: u32,
    /// Whether volumes get the controller's mirrored write cache (seed 000 Appendix C ran without).
    pub write_cache: bool,
    /// Set when these are one server's internal disks (they fail with that server).
    pub owner: Option<ServerIdx>,
    /// The RAID level the user has already chosen for this array (`arrays[].raid`); None = the planner
    /// chooses per pattern. Validated against the data disks (disks − hot spares). It is the level of
    /// the array's volume groups: `raid1` on six data disks is three mirrored pairs.
    pub raid: Option<ArrayRaid>,
    /// The `raid:` level describes one group (or pool) the user already has on all the data disks, used
    /// as given (`existing: true`; always so for `raid: ddp` and a host's pool).
    pub existing: bool,
    /// Set when this is a hypervisor host's storage pool (`arrays[].host`): it serves VM disks to the
    /// guests on that host (`servers[].host`) only, and fails with the host.
    pub host: Option<String>,
    /// A DDP pool's preservation capacity in drives (`arrays[].reserved_drives`, SANtricity's
    /// `reservedDriveCount`); None: SANtricity's default (`layout::ddp_reserve_disks`).
    pub reserved_drives: Option<u32>,
}

/// A RAID level a user can fix for an array in the site file. Names as E-Series SANtricity uses them;
/// `ddp` is a Dynamic Disk Pool (its volumes are RAID 1 or RAID 6 inside the pool). Not `layout::Raid`,
/// the level of one volume group a layout builds (where a DDP's volumes are `ddp-raid1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrayRaid {
    Raid0,
    Raid1,
    Raid10,
    Raid6,
    Ddp,
}

impl ArrayRaid {
    pub const ALL: [ArrayRaid; 5] = [
        ArrayRaid::Raid0,
        ArrayRaid::Raid1,
        ArrayRaid::Raid10,
        ArrayRaid::Raid6,
        ArrayRaid::Ddp,
    ];

    /// The site-file spelling, also the catalog's `supports` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ArrayRaid::Raid0 => "raid0",
            ArrayRaid::Raid1 => "raid1",
            ArrayRaid::Raid10 => "raid10",
            ArrayRaid::Raid6 => "raid6",
            ArrayRaid::Ddp => "ddp",
        }
    }

    /// Accepts `raid10`, `RAID 10`, `raid-10`, `DDP` (case, spaces, `-` and `_` ignored).
    pub fn parse(s: &str) -> Option<ArrayRaid> {
        let norm: String = s
            .chars()
            .filter(|c| !matches!(c, ' ' | '-' | '_'))
            .collect::<String>()
            .to_ascii_lowercase();
        ArrayRaid::ALL.into_iter().find(|r| r.as_str() == norm)
    }

    /// Fewest data disks (disks − hot spares) the level can be built on.
    pub fn min_data_disks(self) -> u32 {
        match self {
            ArrayRaid::Raid0 => 1,
            ArrayRaid::Raid1 => 2,
            ArrayRaid::Raid10 => 4,
            ArrayRaid::Raid6 => 5,
            ArrayRaid::Ddp => 11,
        }
    }

    /// Whether `data_disks` disks can form volume groups of this level; the error says why not. The
    /// level is that of the array's groups: RAID 1 groups are mirrored pairs (six data disks are three
    /// groups, seed 000 figure (1)), so an even count of at least 2; RAID 10 an even count of at least 4;
    /// RAID 6 at least 5 (E-Series minimum: 3 data + 2 parity); DDP at least 11.
    pub fn check_data_disks(self, data_disks: u32) -> Result<(), String> {
        let ok = match self {
            ArrayRaid::Raid0 => data_disks >= 1,
            ArrayRaid::Raid1 => data_disks >= 2 && data_disks.is_multiple_of(2),
            ArrayRaid::Raid10 => data_disks >= 4 && data_disks.is_multiple_of(2),
            ArrayRaid::Raid6 => data_disks >= 5,
            ArrayRaid::Ddp => data_disks >= 11,
        };
        if ok {
            return Ok(());
        }
        let disks = if data_disks == 1 { "disk" } else { "disks" };
        Err(match self {
            ArrayRaid::Raid0 => "RAID 0 needs at least 1 data disk".to_string(),
            ArrayRaid::Raid1 => {
                format!(
                    "RAID 1 groups are mirrored pairs, so an even number of data disks, at least 2; this array has \
                     {data_disks} data {disks}"
                )
            }
            ArrayRaid::Raid10 => {
                format!("RAID 10 needs an even number of data disks, at least 4; this array has {data_disks}")
            }
            ArrayRaid::Raid6 => format!("RAID 6 needs at least 5 data disks; this array has {data_disks}"),
            ArrayRaid::Ddp => format!("a DDP pool needs at least 11 disks; this array has {data_disks}"),
        })
    }
}

/// What the site carries: its streams, KV buckets and object stores, and their rates (the YAML's `workload:`).
/// A benchmark run's own workload is `bench::BenchWorkload`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Workload {
    pub streams: Vec<StreamSpec>,
    pub kv: Vec<KvSpec>,
    pub object_stores: Vec<ObjectStoreSpec>,
    pub core: Option<CoreSpec>,
    /// How clients publish to a stream or KV bucket (`publishers`, `publish`, `window`), by its name; a
    /// name not listed publishes as perf assumes (async, window 256, as many publishers as the rate needs).
    pub publish: std::collections::BTreeMap<String, PublishSpec>,
    /// The StreamConfig a stream was defined by (`workload.streams[].config: FILE`, the JSON of `nats stream
    /// add --config`), by stream name, as given; `emit` writes it back with the layout's placement.
    pub stream_configs: std::collections::BTreeMap<String, serde_json::Value>,
    /// Where the site file wrote each asset, for messages that name two of them (`site::streams`); empty
    /// for assets that came from elsewhere (imports are appended after the site's).
    #[serde(skip)]
    pub places: Places,
}

/// Places in the site file, by index in the workload's lists.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// Each stream's, bucket's and object store's entry (its `name:`, or its `config:`).
    pub streams: Vec<crate::input::yaml::Pos>,
    pub kv: Vec<crate::input::yaml::Pos>,
    pub object_stores: Vec<crate::input::yaml::Pos>,
    /// Each stream's `subjects:` as given: the place and field path of each (none when not given).
    pub subjects: Vec<Vec<(crate::input::yaml::Pos, String)>>,
}

impl Places {
    /// The place of an asset the site file wrote (None for one appended since, e.g. imported).
    pub fn of(&self, a: crate::site::streams::AssetRef) -> Option<crate::input::yaml::Pos> {
        use crate::site::streams::AssetRef;
        match a {
            AssetRef::Stream(i) => self.streams.get(i).copied(),
            AssetRef::Kv(i) => self.kv.get(i).copied(),
            AssetRef::ObjectStore(i) => self.object_stores.get(i).copied(),
        }
    }
}

/// A stream's or bucket's publish mode as the site gives it (perf::leader prices it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct PublishSpec {
    pub publishers: Option<u32>,
    /// True for `publish: sync` (each publisher waits for its ack), false for `async`.
    pub sync: Option<bool>,
    /// Publishes in flight per async publisher.
    pub window: Option<u32>,
    /// Distinct subjects the stream's messages are published on (`distinct_subjects:`, streams only): past
    /// a few hundred the stream leader does more per message (perf::subjects). None: not given (priced as
    /// one subject, and the prediction says so).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subjects: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StreamSpec {
    pub name: String,
    pub msgs_per_s: f64,
    pub msg_size_bytes: u64,
    /// Average subject length in bytes (stored with every message).
    pub subject_bytes: u64,
    pub retention_s: f64,
    /// Pinned replica count; None = the layout's default.
    pub replicas: Option<u8>,
    /// Durable consumers (each an HA asset with the stream's replicas).
    pub consumers: u32,
    /// Optional cap (max_bytes); stored bytes never exceed it.
    pub max_bytes: Option<u64>,
    /// The subjects the stream captures, as written; empty = not given (emit writes `<name>.>`).
    pub subjects: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KvSpec {
    pub name: String,
    pub puts_per_s: f64,
    pub value_size_bytes: u64,
    pub key_bytes: u64,
    pub keys: u64,
    pub history: u32,
    pub replicas: Option<u8>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ObjectStoreSpec {
    pub name: String,
    pub puts_per_s: f64,
    pub gets_per_s: f64,
    pub object_size_bytes: u64,
    /// None = kept until deleted; then `objects` must say how many are kept.
    pub retention_s: Option<f64>,
    pub objects: Option<u64>,
    pub replicas: Option<u8>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CoreSpec {
    pub msgs_per_s: f64,
    pub msg_size_bytes: u64,
}

/// A layout pattern (seed 000 "RAID 1 (10) or RAID 0") or one of the two baselines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Pattern {
    /// Own RAID 1/10 group per server, one full-size LUN.
    #[serde(rename = "1")]
    P1,
    /// Own RAID 0 group per server (one disk or a stripe).
    #[serde(rename = "2")]
    P2,
    /// One RAID 0 stripe over shared disks, one LUN per server on it.
    #[serde(rename = "3")]
    P3,
    /// Like 1 with LUNs smaller than the group; the rest is left for other services.
    #[serde(rename = "4")]
    P4,
    /// RAID 1 volumes on a DDP pool.
    #[serde(rename = "ddp-raid1")]
    DdpRaid1,
    /// One large RAID 6 group on one array.
    #[serde(rename = "raid6")]
    Raid6,
    /// Each server the storage its hardware offers (an own RAID 1/10 group, RAID 0, a RAID 1 volume on an
    /// existing DDP pool, a RAID 6 group, internal disks), chosen per array among the policy's patterns:
    /// the planner's own choice for heterogeneous sites, never listed in `policy.patterns`.
    #[serde(rename = "mixed")]
    Mixed,
}

impl Pattern {
    pub const ALL: [Pattern; 6] = [
        Pattern::P1,
        Pattern::P2,
        Pattern::P3,
        Pattern::P4,
        Pattern::DdpRaid1,
        Pattern::Raid6,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::P1 => "1",
            Pattern::P2 => "2",
            Pattern::P3 => "3",
            Pattern::P4 => "4",
            Pattern::DdpRaid1 => "ddp-raid1",
            Pattern::Raid6 => "raid6",
            Pattern::Mixed => "mixed",
        }
    }

    pub fn parse(s: &str) -> Option<Pattern> {
        Pattern::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s.trim()))
    }

    /// Short form used in layout ids.
    pub fn id_tag(self) -> &'static str {
        match self {
            Pattern::P1 => "p1",
            Pattern::P2 => "p2",
            Pattern::P3 => "p3",
            Pattern::P4 => "p4",
            Pattern::DdpRaid1 => "ddp",
            Pattern::Raid6 => "r6",
            Pattern::Mixed => "mx",
        }
    }
}

/// Failure tolerance, per domain kind; used both as a requirement and as a result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Tolerance {
    pub racks: u32,
    pub arrays: u32,
    pub servers: u32,
    pub disks: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct Policy {
    pub patterns: Vec<Pattern>,
    /// Fraction of SSD capacity left empty for wear levelling (0.15 by default).
    pub wear_headroom: f64,
    pub hot_spares_per_array: u32,
    pub min_tolerated: Tolerance,
    /// `policy.min_tolerated.meta: true`: `min_tolerated` also judges the meta group (the JetStream API),
    /// not only the existing streams' writes (survival's `tolerates_meta`).
    pub min_tolerated_meta: bool,
    /// Yearly growth of the workload's stored bytes (0.3 = 30 %/yr).
    pub growth: f64,
    pub horizon_s: f64,
    /// Filesystem reserve and metadata (fraction of the LUN).
    pub fs_reserve: f64,
    /// Fraction of max_file_store to keep free (never fill a store to the brim).
    pub store_headroom: f64,
    /// Also evaluate the DDP-RAID1 and single-RAID6 baselines.
    pub baselines: bool,
}

impl Site {
    pub fn rack_servers(&self, rack: RackIdx) -> impl Iterator<Item = ServerIdx> + '_ {
        self.servers
            .iter()
            .enumerate()
            .filter(move |(_, s)| s.rack == rack)
            .map(|(i, _)| i)
    }
    /// Shared arrays of a rack (not servers' internal disks).
    pub fn rack_arrays(&self, rack: RackIdx) -> impl Iterator<Item = ArrayIdx> + '_ {
        self.arrays
            .iter()
            .enumerate()
            .filter(move |(_, a)| a.rack == rack && a.owner.is_none())
            .map(|(i, _)| i)
    }
    /// Highest replica count any asset can ask for under this site (pinned or candidate defaults).
    pub fn max_replicas(&self) -> u8 {
        let pinned = self
            .workload
            .streams
            .iter()
            .filter_map(|s| s.replicas)
            .chain(self.workload.kv.iter().filter_map(|s| s.replicas))
            .chain(self.workload.object_stores.iter().filter_map(|s| s.replicas));
        pinned.chain(self.nats.replicas.iter().copied()).max().unwrap_or(3)
    }
}
