//! Performance model: throughput, latency, CPU, memory, restart and recovery predictions for a layout
//! and its workload, from calibration curves (`calibration/`, compiled in) and the catalog's hardware
//! figures. Every figure says what bounds it (its bottleneck), which calibration it comes from, and how
//! wide its error band is; hardware without its own calibration is scaled through the catalog and says so.
//!
//! `calibration` reads the files, `fit` is the minimiser, `model` holds the terms and predicts one shape;
//! this file applies the model to a layout (`predict_layout`), `servers` each JetStream server's resources.

pub mod band;
pub mod calibration;
pub mod consumer;
pub mod curves;
mod demand;
pub mod fit;
pub mod leader;
pub mod model;
mod pricing;
use pricing::{asset_msgs, price_asset, Pricer};
mod servers;
pub mod subjects;
pub mod sync_law;

pub use calibration::{calibration_words, CalibrationFile, CalibrationSet};
pub use model::{predict_shape, Band, Kind, Latency, Prediction, Shape, SyncClass, Terms, VolumeSpec};
pub use servers::{
    catch_up, catch_up_bytes_per_s, catch_up_s_per_msg, raft_catch_up_bytes_per_s, CatchUp, CatchUpLoad, CatchUpStall,
    Need, NeedTerm, ServerNeeds, TermId, PAUSE_QUORUM_ENTRIES,
};

use crate::catalog::{Catalog, ServerModel};
use crate::layout::Layout;
use crate::site::{ServerIdx, Site};
use demand::{demands, Demand};
use serde::Serialize;
use std::path::Path;
use std::sync::OnceLock;

/// Calibration files plus the terms fitted from them.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub set: CalibrationSet,
    pub terms: Terms,
}

impl Calibration {
    /// The seed calibrations compiled into the binary (fitted once per process).
    pub fn builtin() -> Calibration {
        static BUILTIN: OnceLock<Calibration> = OnceLock::new();
        BUILTIN
            .get_or_init(|| {
                Calibration::from_set(CalibrationSet::builtin()).expect("built-in calibration fits (tested)")
            })
            .clone()
    }

    pub fn from_set(set: CalibrationSet) -> anyhow::Result<Calibration> {
        let terms = Terms::fit(&set)?;
        Ok(Calibration { set, terms })
    }

    /// The built-in files with FILE added: its rows replace the built-in rows of the kinds it has.
    pub fn with_file(path: &Path) -> anyhow::Result<Calibration> {
        let f = CalibrationSet::from_path(path)?;
        Calibration::from_set(CalibrationSet::builtin().with_file(f))
            .map_err(|e| e.context(format!("fitting the model with --calibration {}", path.display())))
    }
}

/// How far (`AssetPrediction::extrapolation_distance`) a user's calibration may be carried before design says
/// so at the top of its report and shows the built-in calibration's verdict beside it (issue 39). The
/// distance (`perf::leader`) is 0.1 + |ln speed ratio| + ½ |ln core ratio| + 0.3 between a shared and a
/// dedicated host: 0.5 is about 2.2× the cores, or a shared host against a dedicated one (an assumption of
/// how far a per-message cost carries, not a measured limit).
pub const FAR_CALIBRATION: f64 = 0.5;

/// The prediction for one asset (stream, KV bucket, object store) at its leader.
#[derive(Debug, Clone, Serialize)]
pub struct AssetPrediction {
    pub name: Arc<str>,
    pub kind: Kind,
    /// What the workload asks for (ops/s).
    pub required_per_s: f64,
    /// What the layout can carry for this asset with enough concurrent clients (ops/s).
    pub ops_per_s: f64,
    pub bottleneck: Arc<str>,
    pub band: Band,
    /// ops_per_s ÷ required_per_s.
    pub headroom: f64,
    pub source: Arc<str>,
    pub scaled: bool,
    /// The calibration file (id) that priced this prediction (for streams: the stream leader's host class).
    pub calibration: Arc<str>,
    /// Distance from that calibration's hardware to this layout's (0 = its own host class); a verdict on a
    /// prediction with distance > 0 rests on an extrapolation, and the report suggests `natsplan calibrate`.
    pub extrapolation_distance: f64,
    /// The publish mode priced (streams and KV): from the site, or the assumption (async, window 256, as
    /// many publishers as the rate needs) when the site gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publish: Option<Arc<str>>,
    /// What reaches the required rate with this leader: publishers or window (streams and KV).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reach: Option<Arc<str>>,
    /// Streams: the distinct subjects priced (`distinct_subjects:`) and what they add to the leader's work
    /// per message, or the one-subject assumption when the site gives none (perf::subjects; issue 37).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subjects: Option<Arc<str>>,
}

/// Per JetStream server: load, resources and times.
#[derive(Debug, Clone, Serialize)]
pub struct ServerPrediction {
    pub name: String,
    /// Bytes written to its volume per second (payload × replicas here × write amplification).
    pub write_bytes_per_s: f64,
    /// Largest write burst its volume sees under delayed sync (rate × writeback interval); 0 with `always`.
    pub burst_bytes: f64,
    pub cpu_cores: f64,
    /// Page cache for hot and dirty data plus nats-server heap.
    pub memory_bytes: f64,
    /// Suggested GOMEMLIMIT (heap with room; page cache is not the Go heap).
    pub gomemlimit_bytes: f64,
    pub stored_bytes: f64,
    /// Restart after a clean stop (index files, last blocks) and after an unclean one (every block re-read).
    pub restart_clean_s: f64,
    pub restart_unclean_s: f64,
    /// Replica catch-up if this server's store is replaced (peer-remove, rejoin, copy from peers): its bytes
    /// at the catch-up rate plus its messages at nats-server's cost per message (issue 34).
    pub catch_up_s: f64,
    /// The band around `catch_up_s` (the lab's spread), the messages it copies, the share of the catch-up
    /// rate the incoming writes take, the entries its busiest group gains during the band's slowest
    /// catch-up, and whether a stall is `none`, `possible` (over nats-server's 100,000-entry quorum pause)
    /// or `likely` (writes at or above the rate it copies and applies at).
    pub catch_up_band: Band,
    pub catch_up_msgs: f64,
    pub catch_up_load: f64,
    pub catch_up_backlog_entries: f64,
    pub catch_up_stall: CatchUpStall,
    /// Instead: a standby host mounts this server's LUN from the shared array and starts as the same
    /// server, re-reading every block as after an unclean stop (seed 003 shows the gap for Kafka: 10 min
    /// rebuild versus 3 min re-attach for 110 GB). None for a server's internal disks.
    pub reattach_s: Option<f64>,
    /// What this server needs for its share of the workload — cores, memory, network each way — each the
    /// sum of named, sourced terms, beside what its server model has (issue 46; docs/reports.md).
    pub needs: ServerNeeds,
}

/// Replication traffic between racks.
#[derive(Debug, Clone, Serialize)]
pub struct RackTraffic {
    pub rack: String,
    /// Bytes/s leaving the rack to followers elsewhere.
    pub out_bytes_per_s: f64,
    pub in_bytes_per_s: f64,
}

/// Predictions for a layout's workload. `streams` is its per-asset predictions: a list from
/// `predict_layout`, per class from `predict_layout_by_class` (`PredictionClass`), and `()` where the plan
/// keeps them apart from the summary (`plan::Detail`: a layout's per-asset lists in one place, so none is
/// read empty by accident).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Predicted<S = Vec<AssetPrediction>> {
    pub streams: S,
    /// Worst predicted capacity ÷ required rate over assets and volume groups (∞ with no workload).
    pub headroom: f64,
    /// What sets `headroom`: an asset name or `volume group NAME`.
    pub headroom_limited_by: String,
    pub servers: Vec<ServerPrediction>,
    /// The need terms `servers[].needs` give by id, each with what it is, its source and whether it is an
    /// assumption: said once per layout, not once per server (issue 46; docs/reports.md).
    pub needs_terms: Vec<NeedTerm>,
    pub restart_clean_s: f64,
    pub restart_unclean_s: f64,
    pub catch_up_s: f64,
    pub burst_bytes_max: f64,
    pub cpu_cores_max: f64,
    pub memory_bytes_max: f64,
    pub inter_rack_bytes_per_s: f64,
    pub racks: Vec<RackTraffic>,
    pub notes: Vec<String>,
}

/// Predictions equal in every field but the name, said once: the class's size, its first and last
/// asset in plan order, and the first one's entry (`predict_layout_by_class`).
#[derive(Debug, Clone)]
pub struct PredictionClass {
    pub count: usize,
    pub first: Arc<str>,
    pub last: Arc<str>,
    pub entry: AssetPrediction,
}

impl<S> Predicted<S> {
    /// The same summary with `streams` in place of its per-asset predictions, and those predictions.
    pub fn with_streams<T>(self, streams: T) -> (Predicted<T>, S) {
        let Predicted {
            streams: old,
            headroom,
            headroom_limited_by,
            servers,
            needs_terms,
            restart_clean_s,
            restart_unclean_s,
            catch_up_s,
            burst_bytes_max,
            cpu_cores_max,
            memory_bytes_max,
            inter_rack_bytes_per_s,
            racks,
            notes,
        } = self;
        let p = Predicted {
            streams,
            headroom,
            headroom_limited_by,
            servers,
            needs_terms,
            restart_clean_s,
            restart_unclean_s,
            catch_up_s,
            burst_bytes_max,
            cpu_cores_max,
            memory_bytes_max,
            inter_rack_bytes_per_s,
            racks,
            notes,
        };
        (p, old)
    }

    /// The same summary with its per-asset predictions changed by `f`.
    pub fn map_streams<T>(self, f: impl FnOnce(S) -> T) -> Predicted<T> {
        let (p, s) = self.with_streams(());
        p.with_streams(f(s)).0
    }
}

/// A layout's per-asset predictions as `predict_layout` or `predict_layout_by_class` made them.
#[derive(Debug, Clone)]
pub enum Streams {
    List(Vec<AssetPrediction>),
    Classes(Vec<PredictionClass>),
}

impl Entries for Streams {
    fn entries(&self) -> impl Iterator<Item = &AssetPrediction> {
        let (list, classes) = match self {
            Streams::List(l) => (&l[..], &[][..]),
            Streams::Classes(c) => (&[][..], &c[..]),
        };
        list.iter().chain(classes.iter().map(|c| &c.entry))
    }
}

/// Per-asset predictions as made: one per asset, or per class (each class's first entry, in plan order,
/// so the first one to meet a condition is the same either way).
pub trait Entries {
    fn entries(&self) -> impl Iterator<Item = &AssetPrediction>;
}

impl Entries for Vec<AssetPrediction> {
    fn entries(&self) -> impl Iterator<Item = &AssetPrediction> {
        self.iter()
    }
}

impl Entries for Vec<PredictionClass> {
    fn entries(&self) -> impl Iterator<Item = &AssetPrediction> {
        self.iter().map(|c| &c.entry)
    }
}

/// Of `entries`, the prediction priced from a calibration not built in (`--calibration`) that is carried
/// farthest, when beyond `FAR_CALIBRATION`: (calibration id, distance).
pub fn far_user_calibration<'a>(entries: impl Iterator<Item = &'a AssetPrediction>) -> Option<(Arc<str>, f64)> {
    let builtin: Vec<String> = CalibrationSet::builtin().files.into_iter().map(|f| f.id).collect();
    entries
        .filter(|a| !builtin.iter().any(|b| **b == *a.calibration))
        .filter(|a| a.extrapolation_distance > FAR_CALIBRATION && a.extrapolation_distance.is_finite())
        .max_by(|a, b| a.extrapolation_distance.total_cmp(&b.extrapolation_distance))
        .map(|a| (a.calibration.clone(), a.extrapolation_distance))
}

impl<S: Entries> Predicted<S> {
    /// The prediction priced from a calibration not built in (`--calibration`) that is carried farthest,
    /// when beyond `FAR_CALIBRATION`: (calibration id, distance).
    pub fn far_user_calibration(&self) -> Option<(Arc<str>, f64)> {
        far_user_calibration(self.entries())
    }

    /// Every asset's prediction, or each class's first one when given per class (`Entries`).
    fn entries(&self) -> impl Iterator<Item = &AssetPrediction> {
        self.streams.entries()
    }

    /// Why the layout cannot carry the workload: some asset's required rate is above even the high end of
    /// its predicted band, or a volume group's disks cannot absorb the writes. None when it can.
    pub fn cannot_carry(&self) -> Option<String> {
        for a in self.entries() {
            if a.required_per_s > a.band.high {
                let mut why = format!(
                    "{} needs {:.0}/s but is predicted to carry {:.0}/s ({:.0}–{:.0}), bound by {} (measured on: {})",
                    a.name,
                    a.required_per_s,
                    a.ops_per_s,
                    a.band.low,
                    a.band.high,
                    a.bottleneck,
                    calibration_words(&a.calibration)
                );
                if let Some(r) = &a.reach {
                    why.push_str(&format!("; {r}"));
                }
                if a.extrapolation_distance > 0.0 {
                    why.push_str(
                        "; those figures were measured on other hardware and carried to this one by the model (a \
                         wider band): run `natsplan calibrate` on this hardware and pass --calibration",
                    );
                }
                return Some(why);
            }
        }
        if self.headroom < 1.0 && self.headroom_limited_by.starts_with("volume group") {
            return Some(format!(
                "{} is loaded to {:.0} % of its write bandwidth",
                self.headroom_limited_by,
                100.0 / self.headroom
            ));
        }
        None
    }

    /// Carried only if the prediction errs high: the required rate is inside the band, above its middle.
    pub fn at_risk(&self) -> Option<String> {
        self.entries()
            .find(|a| a.required_per_s > a.ops_per_s && a.required_per_s <= a.band.high)
            .map(|a| {
                format!(
                    "{} needs {:.0}/s, above the predicted {:.0}/s but inside its band ({:.0}–{:.0}){}",
                    a.name,
                    a.required_per_s,
                    a.ops_per_s,
                    a.band.low,
                    a.band.high,
                    a.reach.as_ref().map(|r| format!("; {r}")).unwrap_or_default()
                )
            })
    }
}

/// Clients assumed for an asset's capacity: enough that the USL limit (the leader) binds.
const CAPACITY_WORKERS: u32 = 1024;
/// Publishes in flight per asynchronous publisher when the site gives no publish mode (the issue-14
/// default; nats bench's own is 500).
const ASYNC_WINDOW: u32 = 256;

fn server_model(site: &Site, catalog: &Catalog, s: ServerIdx) -> ServerModel {
    catalog
        .server(&site.servers[s].model)
        .or_else(|| catalog.server(&catalog.default_server))
        .cloned()
        .unwrap_or_else(|| catalog.servers[0].clone())
}

/// The volume under a JetStream server's store, from the layout and the catalog.
pub fn volume_of(site: &Site, layout: &Layout, catalog: &Catalog, server: ServerIdx) -> Option<VolumeSpec> {
    let lun = layout.lun_of(server)?;
    let g = layout.groups.get(lun.group)?;
    let a = site.arrays.get(g.array)?;
    let array = catalog.array(&a.model).cloned()?;
    let disk = catalog.disk(&a.disk_model).cloned()?;
    Some(VolumeSpec {
        array,
        disk,
        raid: g.raid,
        disks: g.disks.len().max(1) as u32,
        write_cache: a.write_cache,
        luns_on_group: layout.luns.iter().filter(|l| l.group == lun.group).count().max(1) as u32,
    })
}

/// Predict how a layout carries the site's workload.
pub fn predict_layout(site: &Site, layout: &Layout, catalog: &Catalog, cal: &Calibration) -> Predicted {
    let mut sink = Sink::List(Vec::new());
    let out = predict_into(site, layout, catalog, cal, &mut sink);
    match sink {
        Sink::List(streams) => out.with_streams(streams).0,
        Sink::Classes(..) => unreachable!("a list was asked for"),
    }
}

/// As `predict_layout`, with the per-asset predictions given per class (`streams` of `PredictionClass`):
/// the same entries, grouped as they are made instead of one per asset built to be grouped. Every other
/// figure is the same.
pub fn predict_layout_by_class(
    site: &Site,
    layout: &Layout,
    catalog: &Catalog,
    cal: &Calibration,
) -> Predicted<Vec<PredictionClass>> {
    let mut sink = Sink::Classes(Default::default(), Vec::new());
    let out = predict_into(site, layout, catalog, cal, &mut sink);
    match sink {
        Sink::Classes(_, classes) => out.with_streams(classes).0,
        Sink::List(_) => unreachable!("classes were asked for"),
    }
}

/// Where `price_asset` puts each asset's prediction.
enum Sink {
    /// One entry per demand.
    List(Vec<AssetPrediction>),
    /// Per class: a class by (its priced content, kind, required rate), which decide every field of the
    /// entry but the name (headroom is the priced rate over the required one), and the classes.
    Classes(
        crate::fxhash::FxHashMap<(u32, &'static str, u64), usize>,
        Vec<PredictionClass>,
    ),
}

impl Sink {
    fn is_empty(&self) -> bool {
        match self {
            Sink::List(l) => l.is_empty(),
            Sink::Classes(_, c) => c.is_empty(),
        }
    }
}

fn predict_into(site: &Site, layout: &Layout, catalog: &Catalog, cal: &Calibration, sink: &mut Sink) -> Predicted<()> {
    let terms = &cal.terms;
    let sync = SyncClass::from(site.nats.sync);
    let mut out = Predicted {
        headroom: f64::INFINITY,
        ..Predicted::default()
    };
    let mut loads = Loads::new(layout.servers.len(), site.racks.len());
    let mut pricer = Pricer::new(site, layout, catalog, terms, sync);
    for a in &layout.assets {
        price_asset(&mut pricer, a, &mut loads, &mut out, sink);
    }
    group_headroom(site, layout, catalog, &loads, &mut out);
    servers::server_predictions(site, layout, catalog, terms, sync, &loads, &mut out);
    for (ri, r) in site.racks.iter().enumerate() {
        if loads.rack_out[ri] > 0.0 || loads.rack_in[ri] > 0.0 {
            out.racks.push(RackTraffic {
                rack: r.name.clone(),
                out_bytes_per_s: loads.rack_out[ri],
                in_bytes_per_s: loads.rack_in[ri],
            });
        }
    }
    out.inter_rack_bytes_per_s = loads.rack_out.iter().sum();
    if sink.is_empty() {
        out.notes
            .push("the workload names no stream, KV bucket or object store this layout places".into());
    }
    out
}

/// What the layout's assets put on each JetStream server (by position in `layout.servers`) and rack.
struct Loads {
    write_bps: Vec<f64>,
    stored: Vec<f64>,
    cpu: Vec<f64>,
    assets_on: Vec<usize>,
    rack_out: Vec<f64>,
    rack_in: Vec<f64>,
    /// Messages stored and messages/s arriving over all groups, per server; and the largest over its groups of
    /// a group's messages/s times its bytes, and times its messages (what bounds the entries one group gains
    /// while it catches up).
    stored_msgs: Vec<f64>,
    msgs_in: Vec<f64>,
    group_in_bytes_max: Vec<f64>,
    group_in_msgs_max: Vec<f64>,
    /// What `servers::server_needs` prices, per server: the stream work (messages × work units/s, and that
    /// times each message's bytes), consumer deliveries/s and their bytes/s, network bytes/s in from
    /// clients, in from leaders, out to followers and out to consumers (and object gets), the file store's
    /// write caches (bytes), the per-subject index (bytes) and the durable consumers held.
    work: Vec<f64>,
    work_bytes: Vec<f64>,
    deliveries: Vec<f64>,
    delivery_bytes: Vec<f64>,
    net_client_in: Vec<f64>,
    net_repl_in: Vec<f64>,
    net_repl_out: Vec<f64>,
    net_deliver_out: Vec<f64>,
    cache_bytes: Vec<f64>,
    index_bytes: Vec<f64>,
    consumers_on: Vec<usize>,
}

impl Loads {
    fn new(servers: usize, racks: usize) -> Loads {
        Loads {
            write_bps: vec![0.0; servers],
            stored: vec![0.0; servers],
            cpu: vec![model_idle(); servers],
            assets_on: vec![0; servers],
            rack_out: vec![0.0; racks],
            rack_in: vec![0.0; racks],
            stored_msgs: vec![0.0; servers],
            msgs_in: vec![0.0; servers],
            group_in_bytes_max: vec![0.0; servers],
            group_in_msgs_max: vec![0.0; servers],
            work: vec![0.0; servers],
            work_bytes: vec![0.0; servers],
            deliveries: vec![0.0; servers],
            delivery_bytes: vec![0.0; servers],
            net_client_in: vec![0.0; servers],
            net_repl_in: vec![0.0; servers],
            net_repl_out: vec![0.0; servers],
            net_deliver_out: vec![0.0; servers],
            cache_bytes: vec![0.0; servers],
            index_bytes: vec![0.0; servers],
            consumers_on: vec![0; servers],
        }
    }

    /// One demand's load on every member's volume and CPU, and its replication between racks.
    fn add_demand(&mut self, site: &Site, slot: &[usize], amp: f64, d: &Demand, members: &[ServerIdx]) {
        let idx_of = |s: ServerIdx| slot.get(s).copied().filter(|&i| i != usize::MAX);
        let leader = members[0];
        if d.kind == Kind::ObjGet {
            if let Some(i) = idx_of(leader) {
                let msgs = d.rate * (d.size.div_ceil(model::CHUNK_BYTES).max(1) + 1) as f64;
                self.cpu[i] += model_cpu(msgs, 0.0, 1.0);
                self.work[i] += msgs;
                self.work_bytes[i] += d.rate * d.size as f64;
                self.net_deliver_out[i] += d.rate * d.size as f64;
            }
            return;
        }
        let payload_bps = d.rate * d.stored_per_op;
        let msgs_per_op = match d.kind {
            Kind::ObjPut => d.size.div_ceil(model::CHUNK_BYTES).max(1) as f64 + 1.0,
            _ => 1.0,
        };
        let msg_bytes = d.size as f64 / msgs_per_op.max(1.0);
        for (j, &m) in members.iter().enumerate() {
            if let Some(i) = idx_of(m) {
                self.write_bps[i] += payload_bps * amp;
                self.msgs_in[i] += d.rate * msgs_per_op;
                let units = if j == 0 {
                    1.0 + 0.5 * (members.len() as f64 - 1.0)
                } else {
                    1.0
                };
                self.cpu[i] += model_cpu(d.rate * msgs_per_op, msg_bytes, units);
                self.work[i] += d.rate * msgs_per_op * units;
                self.work_bytes[i] += d.rate * msgs_per_op * units * msg_bytes;
                if d.rate > 0.0 {
                    self.cache_bytes[i] += servers::write_cache_bytes(d.kind, members.len());
                }
                self.index_bytes[i] += d.keys * (d.key_bytes as f64 + servers::SUBJECT_INDEX_BYTES);
                if j == 0 {
                    let deliveries = d.rate * msgs_per_op * d.consumers as f64;
                    self.deliveries[i] += deliveries;
                    self.delivery_bytes[i] += deliveries * msg_bytes;
                    self.net_client_in[i] += payload_bps;
                    self.net_repl_out[i] += payload_bps * (members.len() as f64 - 1.0);
                    self.net_deliver_out[i] += payload_bps * d.consumers as f64;
                } else {
                    self.net_repl_in[i] += payload_bps;
                }
            }
            if j > 0 {
                let (lr, fr) = (site.servers[leader].rack, site.servers[m].rack);
                if lr != fr {
                    self.rack_out[lr] += payload_bps;
                    self.rack_in[fr] += payload_bps;
                }
            }
        }
    }
}

use std::sync::Arc;

/// The catch-up of server `s` from the layout alone (whatif, the yearly chain): its replicas' bytes and
/// messages and the writes arriving, as `predict_layout` sums them, priced by `catch_up`.
pub fn server_catch_up(site: &Site, layout: &Layout, catalog: &Catalog, s: ServerIdx) -> CatchUp {
    let specs = crate::layout::lookup::Specs::new(site);
    let mut ds = Vec::new();
    let mut l = CatchUpLoad::default();
    for a in layout.assets.iter().filter(|a| a.expected.contains(&s)) {
        l.bytes += a.bytes_per_replica;
        demands(&specs, a, &mut ds);
        let (msgs, msgs_in) = asset_msgs(a, &ds);
        l.msgs += msgs;
        l.msgs_in_per_s += msgs_in;
        l.group_in_bytes_max = l.group_in_bytes_max.max(msgs_in * a.bytes_per_replica);
        l.group_in_msgs_max = l.group_in_msgs_max.max(msgs_in * msgs);
        l.bytes_in_per_s += ds.iter().map(|d| d.rate * d.stored_per_op).sum::<f64>();
    }
    catch_up(site, layout, catalog, s, l)
}

/// Volume groups: all LUNs on a group share its disks, so its bandwidth bounds their summed writes.
fn group_headroom(site: &Site, layout: &Layout, catalog: &Catalog, loads: &Loads, out: &mut Predicted<()>) {
    let idx_of = |s: ServerIdx| layout.servers.iter().position(|&x| x == s);
    for (gi, g) in layout.groups.iter().enumerate() {
        let load: f64 = layout
            .luns
            .iter()
            .filter(|l| l.group == gi)
            .filter_map(|l| idx_of(l.server))
            .map(|i| loads.write_bps[i])
            .sum();
        if load <= 0.0 {
            continue;
        }
        if let Some(v) = layout
            .luns
            .iter()
            .find(|l| l.group == gi)
            .and_then(|l| volume_of(site, layout, catalog, l.server))
        {
            let h = v.group_write_bytes_per_s() / load;
            if h < out.headroom {
                out.headroom = h;
                out.headroom_limited_by = format!("volume group {} (disk bandwidth)", g.name);
            }
        }
    }
}

fn model_idle() -> f64 {
    model::cpu_cores(0.0, 0.0, 0.0)
}

fn model_cpu(msgs_per_s: f64, msg_bytes: f64, units: f64) -> f64 {
    model::cpu_cores(msgs_per_s, msg_bytes, units) - model_idle()
}
