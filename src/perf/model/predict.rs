//! The prediction for one cluster shape from the fitted terms: the kind's own law (object puts and gets,
//! JetStream publishes through the stream leader, core NATS), then the hard ceilings (disk, array, NIC,
//! leader CPU), the lowest of which names the bottleneck.

use super::readers::readers_work;
use super::terms::{consumer_factor, get_rate, obj_time, usl};
use super::*;
use crate::catalog::Catalog;
use crate::perf::leader::{self, HostClass, Publish, StreamInput};
use crate::perf::sync_law::{self, SyncOp};

#[path = "predict_core.rs"]
mod core_kinds;
use core_kinds::{core, flood, ping};

/// Extra half-width (log units) for synchronous clients under `always` (an assumption, from the prediction
/// matrix's misses: docs/prediction-matrix.md).
const ALWAYS_SYNC_CLIENTS_WIDTH: f64 = 0.3;

/// What a prediction collects while the kind's law runs.
pub(super) struct Ctx<'a> {
    pub(super) terms: &'a Terms,
    pub(super) sh: &'a Shape,
    always: bool,
    pub(super) s: f64,
    w: f64,
    r: u8,
    /// Volume write latency and whether it was measured.
    lat_s: f64,
    lat_measured: bool,
    ref_disk_bw: f64,
    fit_w: f64,
    width: f64,
    scaled: bool,
    notes: Vec<String>,
    sources: Vec<String>,
    /// (ops/s, label) ceilings; the lowest binds.
    ceilings: Vec<(f64, String)>,
    /// The calibration file that priced the kind's law, whether it was carried from other hardware
    /// (and how far).
    calibration: String,
    distance: f64,
    stream: Option<StreamFacts>,
    /// The band's low and high ends as multiples of the point, beyond its symmetric width (`always` priced
    /// by measured ratios: the ratios' spread).
    ratio_band: Option<(f64, f64)>,
    catalog: &'a Catalog,
    ref_disk_us: f64,
    /// JetStream publishes: the subjects priced and what they cost (`Prediction::subjects`).
    subjects: Option<String>,
}

/// What a kind's law returns: ops/s, messages per op, bytes per message, latency and what binds.
struct Law {
    ops: f64,
    msgs_per_op: f64,
    msg_bytes: f64,
    lat_s: f64,
    bottleneck: String,
}

impl Ctx<'_> {
    fn nic_bytes(&self) -> f64 {
        // Full duplex: the leader's outbound carries (R−1) copies of each payload, its inbound one.
        self.sh.server.nic_bits_per_s / 8.0
    }
    /// All replicas may sit on one group (seed 000: three LUNs on one 2-disk group).
    fn replicas_on_group(&self) -> f64 {
        (self.r as f64).min(self.sh.volume.luns_on_group.max(1) as f64)
    }
    fn disk_ceilings(&mut self, ios_per_op: f64) {
        let amp = self.terms.store.write_amplification;
        let rg = self.replicas_on_group();
        self.ceilings.push((
            self.sh.volume.group_write_bytes_per_s() / (self.s * amp * rg),
            "disk bandwidth (volume group)".into(),
        ));
        self.ceilings.push((
            self.sh.volume.group_write_iops() / (ios_per_op * rg),
            "disk IOPS (volume group)".into(),
        ));
        if self.r > 1 {
            self.ceilings.push((
                self.nic_bytes() / (self.s * (self.r as f64 - 1.0).max(1.0)),
                "NIC (replication fan-out at the leader)".into(),
            ));
        }
    }
}

/// Predict one shape.
pub fn predict_shape(terms: &Terms, catalog: &Catalog, sh: &Shape) -> Prediction {
    let ref_disk_us = catalog.disk(REF_DISK).map(|d| d.write_latency_us).unwrap_or(20.0);
    let ref_disk_bw = catalog.disk(REF_DISK).map(|d| d.write_bw_bytes_per_s).unwrap_or(4e9);
    let (lat_s, lat_measured) = volume_write_latency_s(terms, &sh.volume, ref_disk_us);
    // Width of the error band in log units: the fit's residual spread, inflated for the parameters it used
    // and widened whenever anything is carried over from other hardware or kinds.
    let fit_w = terms.obj.band_log_width();
    let mut c = Ctx {
        terms,
        sh,
        always: sh.sync == SyncClass::Always,
        s: sh.size_bytes.max(1) as f64,
        w: sh.workers.max(1) as f64,
        r: sh.replicas.clamp(1, 5),
        lat_s,
        lat_measured,
        ref_disk_bw,
        fit_w,
        width: fit_w,
        scaled: false,
        notes: Vec::new(),
        sources: Vec::new(),
        ceilings: Vec::new(),
        calibration: String::new(),
        distance: 0.0,
        stream: None,
        ratio_band: None,
        catalog,
        ref_disk_us,
        subjects: None,
    };
    let law = match sh.kind {
        Kind::ObjPut => obj_put(&mut c),
        Kind::ObjGet => obj_get(&mut c),
        Kind::Js | Kind::Kv => js(&mut c),
        Kind::Core => core(&mut c),
        Kind::Ping => ping(&mut c),
        Kind::Flood => flood(&mut c),
        Kind::ConsumerFetch | Kind::ConsumerConsume | Kind::ConsumerOrdered => {
            return crate::perf::consumer::predict(&terms.consumer, sh)
        }
    };
    finish(c, law)
}

fn obj_put(c: &mut Ctx) -> Law {
    let (o, sh) = (&c.terms.obj, c.sh);
    let chunks = sh.size_bytes.div_ceil(CHUNK_BYTES).max(1) as f64;
    let cf = consumer_factor(o, sh.consumers, sh.servers, sh.consumers_spread);
    let (par, ser) = obj_time(o, sh.size_bytes, c.r, c.always, c.lat_s, sh.volume.sync_disks());
    // The fsync's byte transfer scales with the disk's bandwidth against the reference disk's.
    let (par, ser) = (
        par * cf,
        ser * c.ref_disk_bw / sh.volume.disk.write_bw_bytes_per_s.max(1.0),
    );
    c.sources.push(o.source.clone());
    c.calibration = o.source.clone();
    let x = usl(par, ser, c.w, o.sigma);
    // Per object: (chunks + meta) × (payload share) on every replica's volume.
    let ios = if c.always {
        2.0 * o.fsync_lat_rn.max(1.0) + chunks
    } else {
        (c.s * c.terms.store.write_amplification / 1_048_576.0).max(0.05)
    };
    c.disk_ceilings(ios);
    Law {
        ops: x,
        msgs_per_op: chunks + 1.0,
        msg_bytes: c.s / chunks,
        lat_s: c.w / x,
        bottleneck: if c.always {
            "fsync latency (sync always)".into()
        } else {
            "stream leader (worker concurrency)".into()
        },
    }
}

fn obj_get(c: &mut Ctx) -> Law {
    let (o, sh) = (&c.terms.obj, c.sh);
    let chunks = sh.size_bytes.div_ceil(CHUNK_BYTES).max(1) as f64;
    let cf = consumer_factor(o, sh.consumers, sh.servers, sh.consumers_spread);
    // Gets: no replication, no fsync; served from the page cache by any replica (allow_direct), so workers
    // spread over the replicas contend less. Seed 000's Get column is 0.400 × Put (derived), so nothing
    // there calibrates this: without measured gets the put terms are carried over and the band is wide.
    let x = if let Some(g) = &c.terms.obj_get {
        let k = if g.sigma.is_some() { 4.0 } else { 3.0 };
        let n = (g.rows as f64).max(k + 1.0);
        c.width = c.width.max(1.645 * g.rms_log * (n / (n - k)).sqrt());
        c.sources.push(format!("{} (get terms)", g.source));
        c.calibration = g.source.clone();
        get_rate(g, o.sigma, sh.size_bytes, c.r, sh.workers) / cf
    } else {
        let par = (o.obj_fixed_s + chunks * o.chunk_s + c.s * o.byte_s) * cf;
        c.scaled = true;
        c.width = c.width.max(0.7);
        c.notes.push(
            "gets are uncalibrated: the NATS-on-E-Series guide's Get column is derived (0.400 × Put), not measured"
                .into(),
        );
        c.sources.push(format!("{} (put terms, no get calibration)", o.source));
        c.calibration = o.source.clone();
        usl(par, 0.0, c.w, o.sigma / c.r as f64)
    };
    c.ceilings.push((c.nic_bytes() / c.s, "NIC (object delivery)".into()));
    Law {
        ops: x,
        msgs_per_op: chunks + 1.0,
        msg_bytes: c.s / chunks,
        lat_s: c.w / x,
        bottleneck: "stream leader (worker concurrency)".into(),
    }
}

/// JetStream publishes and KV puts: the stream leader of the nearest calibrated host class, the clients'
/// publish mode (synchronous clients by perf::sync_law, async windows in flight), and the fsyncs `always`
/// puts in the commit path (perf::leader; on a catalog volume, the always ÷ delayed ratios measured on
/// arrays, `always`).
fn js(c: &mut Ctx) -> Law {
    let (terms, sh, r, s) = (c.terms, c.sh, c.r, c.s);
    let o = &terms.obj;
    let host = HostClass::of(&sh.server);
    let Some((class, distance)) = leader::nearest(&terms.leaders, &host, r) else {
        // No JetStream rows at all: nothing prices the leader (Terms::fit refuses that, so unreachable
        // with a fitted set; kept total).
        return Law {
            ops: 0.0,
            msgs_per_op: 1.0,
            msg_bytes: s,
            lat_s: f64::INFINITY,
            bottleneck: "no JetStream calibration".into(),
        };
    };
    // The class's own server model: its probe and its measured round trips apply as they are.
    let own_host = class.host.server_model.eq_ignore_ascii_case(&host.server_model);
    let op = match sh.kind {
        Kind::Kv => SyncOp::KvPut,
        _ => SyncOp::Publish,
    };
    // fsync: the class's probe on its own host; elsewhere the catalog volume's write latency.
    let probe = class.probe.as_ref().filter(|_| own_host);
    let fsync_s = probe.map(|p| p.fsync_s).unwrap_or(c.lat_s);
    // Publishes in flight per client: KV puts too (`publish: async` keeps a window of puts in flight).
    let window = sh.batch.max(1) as f64;
    let per_byte = o.byte_s + if r > 1 { o.rep_byte_s * (r as f64 - 1.0) } else { 0.0 };
    let mut inp = stream_input(c, class, own_host, probe, fsync_s);
    let readers = readers_work(c, class, &host);
    inp.readers_s = readers.as_ref().map_or(0.0, |w| w.s_per_msg);
    inp.readers_serial_s = readers.as_ref().map_or(0.0, |w| w.serial_s);
    let leader_time = |inp: &StreamInput| capped_leader_time(class, &host, r, inp);
    let delayed = StreamInput {
        always: false,
        write_s: leader::write_s(class, r, false),
        ..inp.clone()
    };
    let t_delayed = leader_time(&delayed);
    // Where the readers' stretch prices the synchronous clients (`readers_work`: the class's own shared
    // host; measured by its readers rows, or the loopback lab's 0.22, read the same way: a ratio of rates
    // with and without readers), it carries what the readers do to each client's round trip and to what
    // each further one adds; the readers' work in the leader's time the law grows D from would count them
    // twice (matrix run 25: 64 publishers with 3 readers priced 31 % low, 14 % of it that).
    let stretched = readers.as_ref().is_some_and(|w| w.stretch_applies);
    let t_law = if stretched {
        leader_time(&StreamInput {
            readers_s: 0.0,
            readers_serial_s: 0.0,
            ..delayed.clone()
        })
    } else {
        t_delayed
    };
    // Synchronous clients: one's round trip and what each further one adds, on this hardware.
    let target = sync_law::PriceTarget {
        host: &host,
        replicas: r,
        bytes: s,
        per_byte_s: per_byte,
        servers: sh.servers,
        clients: c.w,
        leader: class,
        leader_time_s: t_law,
        always: c.always,
    };
    let price = sync_law::price(&terms.sync_hosts, &terms.leaders, &target, op);
    let (round_trip, saturation) = sync_round_trip(c, price.as_ref());
    // Synchronous clients' round trips wait behind the readers' deliveries (`readers_work`).
    let stretch = readers.as_ref().map_or(1.0, |w| w.sync_stretch);
    let (round_trip, saturation) = (round_trip * stretch, saturation * stretch);
    let fsyncs_measured = c.always && fsyncs_measured(window, price.as_ref(), class, own_host, r);
    // A KV put costs the leader more than a publish (subject index, per-key limits). Asynchronous puts: the
    // ratio the class's own asynchronous KV and publish rows measured at one shape (`KvPutRatio`), where it
    // has them; otherwise, and for synchronous putters, the synchronous rows' ratio at the most clients.
    let kv_put = (sh.kind == Kind::Kv).then_some(class.kv_put.as_ref()).flatten();
    let sync_factor = price.as_ref().map_or(1.0, |p| p.leader_factor);
    let async_factor = kv_put.map_or(sync_factor, |k| k.ratio.max(1.0));
    let (factor, other_factor) = if window > 1.0 {
        (async_factor, sync_factor)
    } else {
        (sync_factor, async_factor)
    };
    let kv_async = kv_put.filter(|_| window > 1.0);
    inp.round_trip_s = round_trip;
    inp.publish.saturation_s = saturation;
    let t_l = leader_time(&inp) * factor;
    let as_measured = StreamInput {
        always: inp.always && !fsyncs_measured,
        ..inp.clone()
    };
    let mut rate = leader::stream_rate(t_l, &as_measured);
    let fsyncs = match (c.always && !fsyncs_measured, r > 1) {
        (false, _) => 0.0,
        (true, true) => 2.0,
        (true, false) => 1.0,
    };
    let mut facts = StreamFacts {
        leader_per_s: rate.leader_per_s,
        ack_s: round_trip + fsyncs * fsync_s,
        publishers: c.w,
        window,
        round_trip_s: round_trip,
        saturation_s: saturation,
        law: Some(StreamLaw {
            leader_time_s: t_l,
            // What `rate_with` re-prices (the advice on publishers and windows): as the rate was priced.
            input: as_measured.clone(),
            ratio: 1.0,
            other_mode: other_factor / factor,
        }),
    };
    let mut bottleneck = rate.binding.label().to_string();
    // `always` on a catalog volume: what the fsync model says on this volume, held to the always ÷ delayed
    // ratios measured for its write-cache setting (`always`).
    if c.always && probe.is_none() && !fsyncs_measured {
        let t_d = t_delayed * factor;
        let delayed_inp = StreamInput {
            round_trip_s: round_trip,
            publish: inp.publish,
            ..delayed.clone()
        };
        if let Some(b) = always_on_catalog_volume(c, t_d, delayed_inp, &mut rate, &mut facts) {
            bottleneck = b;
        }
    }
    c.stream = Some(facts);
    c.calibration = class.id.clone();
    c.distance = distance;
    js_width(c, class, price.as_ref(), window, fsyncs_measured, rate.binding);
    if sh.kind == Kind::Js {
        subjects_priced(c, class);
    }
    if let Some(k) = kv_async {
        c.notes.push(format!(
            "an asynchronous KV put costs the stream leader {:.2}x an asynchronous publish{}: the ratio of {} publish rows to {} KV put rows of one shape on {} (R{}, {:.0} B, {:.0} clients, {:.0} in flight each)",
            k.ratio.max(1.0),
            if k.ratio < 1.0 { format!(" (measured {:.2}, held at 1)", k.ratio) } else { String::new() },
            k.publish_rows,
            k.kv_rows,
            class.id,
            k.replicas,
            k.bytes,
            k.clients,
            k.window
        ));
        // The ratio's own uncertainty (its rows' scatter): in quadrature with the class's band on its own host,
        // summed in full away (as the subjects term's).
        c.widen_by_part(1.645 * k.se_log);
    }
    if let Some(w) = readers {
        // In quadrature: the readers' part already carries its own distance (the fetch fit's, or the
        // contention allowance), which a sum would count twice with the leader's.
        c.width = crate::perf::band::add_widths(&[c.width, w.width]);
        c.notes.push(w.note);
        c.sources.push(w.source);
    }
    js_sources(c, class, &host, price.as_ref(), probe, fsync_s);
    // Under `always` every replica writes each message in place and fsyncs once per append entry (many
    // messages): about one I/O per message; delayed writes coalesce into MiB-sized flushes.
    let ios = if c.always {
        1.0
    } else {
        (s * terms.store.write_amplification / 1_048_576.0).max(0.001)
    };
    c.disk_ceilings(ios);
    let kv_note = if sh.kind == Kind::Kv { " (KV puts)" } else { "" };
    Law {
        ops: rate.per_s,
        msgs_per_op: 1.0,
        msg_bytes: s,
        lat_s: rate.latency_s,
        bottleneck: format!("{bottleneck}{kv_note}"),
    }
}

/// The band's half-width of a stream-leader prediction (`c.distance` from `class`): the class's (its fit
/// and distance), except for synchronous clients priced from rows measured under `always` on this host:
/// the class (fitted to the async `always` rows, which its form fits loosely: 4.2x bands in run 6 of the
/// matrix) prices only the bytes beyond the rows' size, and the band says what was carried beyond them
/// (`sync_law::Beyond`) — when the clients bind, not the leader the class prices. Synchronous clients under
/// `always` priced from delayed rows are widened.
fn js_width(
    c: &mut Ctx,
    class: &leader::LeaderClass,
    price: Option<&sync_law::SyncPrice>,
    window: f64,
    fsyncs_measured: bool,
    binding: leader::Binding,
) {
    let clients_bind = matches!(
        binding,
        leader::Binding::SyncRoundTrips | leader::Binding::SyncSaturation
    );
    let w = match price.filter(|p| clients_bind && window <= 1.0 && fsyncs_measured && p.under_always) {
        Some(p) => p.beyond.width(
            leader::FORM_WIDTH,
            class.fit_width(c.s),
            crate::perf::band::distance_width(c.distance),
        ),
        None => leader::width(class, c.distance, c.s),
    };
    c.width = c.width.max(w);
    if c.always && window <= 1.0 && c.w > 1.0 && !fsyncs_measured {
        widen_for_always_clients_from_delayed_rows(c);
    }
}

impl Ctx<'_> {
    /// Widen the band by an independent part measured on the class's host: in quadrature there, summed in
    /// full when the class is carried to another host (`band::own_and_carried`).
    fn widen_by_part(&mut self, w: f64) {
        self.width = if self.distance > 0.0 {
            self.width + w
        } else {
            crate::perf::band::add_widths(&[self.width, w])
        };
    }
}

/// What the stream's distinct subjects add to the leader's work per message (perf::subjects): given, the
/// band widens by the share of the work the term prices; `Prediction::subjects` says what was priced.
fn subjects_priced(c: &mut Ctx, class: &leader::LeaderClass) {
    let t = &class.subjects;
    let unit = class.unit(c.s);
    if let Some(n) = c.sh.subjects {
        // In quadrature on the class's own host, in full carried elsewhere (`band::own_and_carried`).
        c.widen_by_part(t.width(n as f64, unit));
    }
    c.subjects = Some(t.describe(c.sh.subjects, unit));
}

/// Whether an `always` target is priced from rows this host measured under `always`, whose times hold the
/// fsyncs (so none is added): synchronous clients from its `always` rows (`sync_law::price_measured_always`),
/// an async window from a leader class fitted to `always` rows on its own host at the target's replica
/// count (`LeaderClass::always_replicas`).
fn fsyncs_measured(
    window: f64,
    price: Option<&sync_law::SyncPrice>,
    class: &leader::LeaderClass,
    own_host: bool,
    replicas: u8,
) -> bool {
    if window <= 1.0 {
        price.is_some_and(|p| p.under_always)
    } else {
        own_host && class.always_replicas.contains(&replicas)
    }
}

/// Synchronous clients under `always` priced from delayed rows (no calibration of this host measured them
/// under `always`): what they add to each other is the delayed D plus the fsync cycle's queue. The matrix
/// (2026-12-05, R3 1 KiB on the loopback lab; run 5) measured 16 and 64 publishers 44 % below that, KV
/// putters 34 %: the band says so.
fn widen_for_always_clients_from_delayed_rows(c: &mut Ctx) {
    c.width += ALWAYS_SYNC_CLIENTS_WIDTH;
    c.notes.push(format!(
        "{:.0} synchronous clients under sync always: priced from delayed-sync rows and the fsync cycle (no calibration of this host measures them under always: calibrate the cluster as it runs; the loopback lab carried up to 44 % less), band widened",
        c.w
    ));
}

/// The leader's time per message for `inp`. No row measured a replicated leader faster than an R1 one on
/// the same host (lab: R1 150k, R3 121k msgs/s at 128 B): where the class measured R1, R>1 is never priced
/// above it (the R1 path pays a store write per message, which the replicated store's async flush avoids,
/// but the replicated leader does more per message).
fn capped_leader_time(class: &leader::LeaderClass, host: &HostClass, r: u8, inp: &StreamInput) -> f64 {
    let mut t = leader::leader_time_s(class, host, inp);
    // Readers whose time under the store's lock holds up an R1 stream: a replicated stream is never priced
    // above the same stream at R1 with them (predict::readers).
    if (class.r1_measured || inp.readers_serial_s > 0.0) && r > 1 {
        let r1 = StreamInput {
            replicas: 1,
            write_s: leader::write_s(class, 1, inp.always),
            ..inp.clone()
        };
        t = t.max(leader::leader_time_s(class, host, &r1));
    }
    t
}

/// The stream leader's input before the synchronous clients are priced (no round trip, no saturation
/// yet): replicas, bytes, sync mode, the publishers and their window, and the fsync and write costs.
fn stream_input(
    c: &Ctx,
    class: &leader::LeaderClass,
    own_host: bool,
    probe: Option<&leader::StoreProbe>,
    fsync_s: f64,
) -> StreamInput {
    let (sh, r, s) = (c.sh, c.r, c.s);
    let window = sh.batch.max(1) as f64;
    let vol_byte_s = 1.0 / (sh.volume.group_write_bytes_per_s() / sh.volume.luns_on_group.max(1) as f64).max(1.0);
    StreamInput {
        replicas: r,
        bytes: s,
        always: c.always,
        publish: Publish {
            publishers: c.w,
            window,
            saturation_s: 0.0,
        },
        fsync_s,
        commit_s: probe.and_then(|p| p.commit_s),
        // Per synced byte: the probe's figure on the calibrated host, else the volume's write bandwidth.
        fsync_byte_s: probe.and_then(|p| p.sync_byte_s).unwrap_or(vol_byte_s),
        sync_copies: leader::sync_copies(r, own_host && class.host.co_located > 1),
        write_s: leader::write_s(class, r, c.always),
        round_trip_s: 0.0,
        async_base_s: class.async_base_s,
        subjects: sh.subjects.unwrap_or(1).max(1) as f64,
        readers_s: 0.0,
        readers_serial_s: 0.0,
    }
}

/// The synchronous clients' round trip and what each further client stretches it by (`saturation`): as
/// the calibration measured them on this hardware, else the per-op and replication fits.
fn sync_round_trip(c: &mut Ctx, price: Option<&sync_law::SyncPrice>) -> (f64, f64) {
    let (terms, r, s) = (c.terms, c.r, c.s);
    let o = &terms.obj;
    let round_trip = match price {
        Some(p) => p.round_trip_s,
        None => {
            // No calibration measured synchronous clients: the per-operation time of the first file with
            // a single-client R1 KV row plus the object fit's replication round (the model before issue 14).
            let mut t = terms.js.op_s + s * o.byte_s;
            if r > 1 {
                t += o.rep_round_s + o.rep_byte_s * (r as f64 - 1.0) * s;
            }
            t
        }
    };
    let saturation = match price.and_then(|p| p.saturation_s) {
        Some(d) => d,
        None => {
            c.notes.push(
                "no calibration measured many synchronous clients: each further client stretches a round trip by the object store fit's contention (σ)"
                    .into(),
            );
            o.sigma * round_trip
        }
    };
    (round_trip, saturation)
}

/// `always` on a catalog volume: what the fsync model says on this volume, held to the always ÷ delayed
/// ratios measured for its write-cache setting (`always`). Reprices `rate` and `facts` and returns the
/// bottleneck when a measured ratio applies.
fn always_on_catalog_volume(
    c: &mut Ctx,
    t_d: f64,
    delayed_inp: StreamInput,
    rate: &mut leader::StreamRate,
    facts: &mut StreamFacts,
) -> Option<String> {
    let (terms, sh, r) = (c.terms, c.sh, c.r);
    let window = delayed_inp.publish.window;
    let d = leader::stream_rate(t_d, &delayed_inp).per_s;
    let mech = rate.per_s / d;
    let lat = |v: &VolumeSpec| volume_write_latency_s(terms, v, c.ref_disk_us).0;
    let mut off = sh.volume.clone();
    off.write_cache = false;
    let seed = VolumeSpec::seed000(c.catalog, always::measured_raid(sh.volume.raid), 1);
    let lats = always::Latencies {
        volume_s: c.lat_s,
        cache_off_s: lat(&off),
        measured_s: lat(&seed),
    };
    always::price(&terms.always_ratios, &sh.volume, r, lats, mech).map(|a| {
        rate.per_s = d * a.ratio;
        rate.latency_s = (c.w * window) / rate.per_s;
        let other_mode = facts.law.as_ref().map_or(1.0, |l| l.other_mode);
        facts.law = Some(StreamLaw {
            leader_time_s: t_d,
            input: delayed_inp,
            ratio: a.ratio,
            other_mode,
        });
        // The leader's ceiling as this pricing has it (the split advice divides by it).
        facts.leader_per_s = a.ratio / t_d;
        c.ratio_band = Some((a.low / a.ratio, a.high / a.ratio));
        c.sources.push(a.source.clone());
        c.notes.push(a.note.clone());
        a.bottleneck.to_string()
    })
}

/// The sources and notes of a JetStream price: the leader's class, the synchronous clients, the store
/// probe, the remote leader, and how far the class was carried to this host.
fn js_sources(
    c: &mut Ctx,
    class: &leader::LeaderClass,
    host: &HostClass,
    price: Option<&sync_law::SyncPrice>,
    probe: Option<&leader::StoreProbe>,
    fsync_s: f64,
) {
    let (terms, sh, r, distance) = (c.terms, c.sh, c.r, c.distance);
    let o = &terms.obj;
    let own_host = class.host.server_model.eq_ignore_ascii_case(&host.server_model);
    c.sources.push(format!(
        "{} (stream leader, host class {})",
        class.id, class.host.server_model
    ));
    match price {
        Some(p) if !p.measured => {
            c.sources
                .push(format!("{} (synchronous clients, carried to this host)", p.source));
            c.notes.extend(p.notes.iter().cloned());
        }
        Some(p) if p.under_always => {
            c.sources.push(format!(
                "{} (synchronous clients, measured under sync always)",
                p.source
            ));
            c.notes.extend(p.notes.iter().cloned());
        }
        Some(p) => c.sources.push(format!("{} (synchronous clients)", p.source)),
        None => c.sources.push(format!(
            "{} (per-op), {} (replication round)",
            terms.js.op_source, o.source
        )),
    }
    if let Some(p) = probe {
        c.sources.push(format!("{} (store probe)", p.source));
    }
    if class.leader_remote {
        c.notes.push(format!(
            "priced for clients connected to a server other than the stream leader's, as {} measured \
             (bench --leader remote); on the loopback lab a publisher on the leader's own server measured \
             1.45x (R3) to 1.7x (R1) more",
            class.id
        ));
    }
    if c.always && r > 1 {
        c.sources.push(class.always_write_source.clone());
    }
    if !own_host || distance > 0.0 {
        c.scaled = true;
        c.notes.push(format!(
            "stream leader priced from {} (host class {}: {} cores, speed {:.2}, {} sharing) and scaled to {} ({} cores, speed {:.2}): distance {:.2}; {}",
            class.id,
            class.host.server_model,
            class.host.cores,
            class.host.cpu_speed,
            class.host.co_located,
            host.server_model,
            host.cores,
            host.cpu_speed,
            distance,
            sh.server.perf_source
        ));
    }
    if c.always && probe.is_none() && c.ratio_band.is_none() {
        c.notes.push(format!(
            "sync always: one fsync per append entry at the volume's write latency ({:.0} µs, catalog)",
            fsync_s * 1e6
        ));
    }
}

/// The shared tail: CPU ceiling, version and volume notes, the binding ceiling, CPU at the rate.
fn finish(mut c: Ctx, law: Law) -> Prediction {
    let (sh, r, s) = (c.sh, c.r, c.s);
    if sh.kind.is_jetstream_write() {
        // Cores: the leader's CPU per message (see `cpu_cores`) must fit the server. JetStream publishes
        // carry this inside the stream-leader law; puts of objects take it as a ceiling.
        if sh.kind == Kind::ObjPut {
            let per_op = law.msgs_per_op * leader::leader_units(r) * (CPU_S_PER_MSG + CPU_S_PER_BYTE * law.msg_bytes);
            c.ceilings.push((
                sh.server.cores as f64 * sh.server.cpu_speed / per_op,
                "leader CPU (server cores)".into(),
            ));
        }
    }
    if let Some(v) = &sh.nats_version {
        let calibrated = &c.terms.obj_nats_version;
        if v.trim() != calibrated.as_str() && !matches!(sh.kind, Kind::Core | Kind::Ping | Kind::Flood) {
            c.scaled = true;
            c.width *= 1.5;
            c.notes.push(format!(
                "nats-server {v} has no calibration of its own (object and fsync terms: {calibrated}); known changes since: disk I/O concurrency limit lifted in 2.12.14/2.14.4, replicated streams fsync only the RAFT log under `always` from 2.15"
            ));
        }
    }
    // JetStream publishes and KV puts say how their fsync was priced in `js`.
    let obj = matches!(sh.kind, Kind::ObjPut | Kind::ObjGet);
    if obj && c.always && !c.lat_measured {
        c.scaled = true;
        c.width = c.width.max(c.fit_w * 2.0).max(0.3);
        c.notes.push(format!(
            "fsync latency scaled through the catalog ({} / {} / {}{}): no fio calibration for this volume",
            sh.volume.array.name,
            sh.volume.disk.name,
            sh.volume.raid.as_str(),
            if sh.volume.write_cache { ", write cache on" } else { "" }
        ));
    }
    if sh.kind.is_jetstream_write() && r > 1 && sh.servers < r as u32 {
        c.notes
            .push(format!("R{r} needs {r} servers; the shape has {}", sh.servers));
    }
    let mut x = law.ops;
    let mut bottleneck = law.bottleneck;
    for (cap, label) in &c.ceilings {
        if cap.is_finite() && *cap < x {
            x = *cap;
            bottleneck = label.clone();
        }
    }
    let p50_s = if x < law.ops {
        law.lat_s * law.ops / x
    } else {
        law.lat_s
    };
    let op_rate = sh.rate.unwrap_or(x);
    let cpu = match sh.kind {
        Kind::Core | Kind::Ping | Kind::Flood => {
            let t = &c.terms.core;
            let m = sh.subscribers as f64;
            CPU_IDLE_CORES + op_rate / (1.0 + m) * (t.per_msg_s + t.per_sub_s * m + t.per_byte_s * s * (1.0 + m))
        }
        _ => cpu_cores(op_rate * law.msgs_per_op, law.msg_bytes, leader::leader_units(r)),
    };
    if let Some(req) = sh.rate {
        if req > x {
            c.notes
                .push(format!("the required {req:.0}/s exceeds the predicted {x:.0}/s"));
        }
    }
    c.sources.dedup();
    Prediction {
        kind: sh.kind,
        ops_per_s: x,
        bytes_per_s: x * s,
        latency_us: Latency {
            p50: p50_s * 1e6,
            p99: p50_s * 1e6 * TAIL_P99_OVER_AVG,
        },
        cpu_per_server: cpu,
        bottleneck,
        band: {
            let b = band(x, c.width);
            let (lo, hi) = c.ratio_band.unwrap_or((1.0, 1.0));
            Band {
                low: b.low * lo.min(1.0),
                high: b.high * hi.max(1.0),
            }
        },
        source: c.sources.join("; "),
        scaled: c.scaled,
        calibration: c.calibration,
        extrapolation_distance: c.distance,
        stream: c.stream,
        subjects: c.subjects,
        notes: c.notes,
    }
}
