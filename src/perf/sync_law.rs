//! Synchronous clients: a JetStream publish that waits for its ack, a KV put. `c` clients carry
//! `c ÷ (τ + D·(c − 1))` operations per second: τ is one client's unloaded round trip, D the time per
//! operation once enough clients keep the stream's leader (or a shared host) busy. It is the Universal
//! Scalability Law with σ = D ÷ τ and no coherency term: every other client in flight stretches a round trip
//! by D. Both ends are priced, never σ alone: σ carried from one host tends to 1 ÷ (τ·σ), that host's
//! ceiling, on every other (issue 36: 9 k/s whatever the server).
//!
//! On a calibrated host both ends come from its rows (τ: the clients ÷ rate of the rows with the fewest
//! clients; D: what the rows with more add per extra client). On other hardware each end follows what the
//! hardware does:
//! - τ: the calibrated host's round trip, least disturbed (the fastest fewest-client row: a shared host's
//!   other work only adds time), scaled by single-thread speed, plus the network's round trips when the
//!   target's clients and peers are on other machines (`NET_RTT_S` each: client to server, one route hop
//!   for the (N − 1)/N clients not on the leader's server, the replication round at R > 1);
//! - D on a dedicated server: the larger of the stream's serial stages (the leader's ceiling, as async
//!   publishing meets it) and the leader's per-operation work on its cores, which adds the I/O of each
//!   operation of the clients connected to it (1/N of them) — one send and one receive, priced at what the
//!   bench client spent per operation on the calibrated host (the lab: 12–15 µs; `client_cpu_us_per_msg`);
//! - D on a host shared by the whole cluster and its clients: everything each operation costs the calibrated
//!   box beyond its async per-message work, spread over the target's cores.
//!
//! Where nothing measured more than one client, the object fit's σ stands in (as before issue 36) and the
//! prediction says so.

use super::leader::{host_of, leader_units, HostClass, LeaderClass};
use crate::catalog::Catalog;
use crate::perf::calibration::{CalibrationFile, CalibrationSet};
use crate::stats::median_or_zero;
use serde::Serialize;

/// One network round trip between a client and a server, or two servers, on a data-centre LAN: an
/// assumption (10/25 GbE through a top-of-rack switch, kernel TCP; nothing in the catalog measures it).
/// Hosts that run the cluster and its clients on one machine (`co_located > 1`) talk over loopback, which
/// their own calibration already holds.
pub const NET_RTT_S: f64 = 50e-6;
/// One operation's connection I/O (a send and a receive, reference-core seconds) when no row measured the
/// bench client's CPU: what the lab's client spent per synchronous publish at 64 publishers (12–15 µs,
/// scripts/bench-sync-ladder on 2026-12-04).
pub const DEFAULT_IO_S: f64 = 13e-6;

/// Which synchronous operation a law prices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyncOp {
    /// A JetStream publish that waits for its ack (`publish_mode: sync` rows).
    Publish,
    /// A KV put (the `kv` rows: one put at a time per client).
    KvPut,
}

/// Synchronous clients of one operation at one replica count, as a class's rows measured them.
#[derive(Debug, Clone, Serialize)]
pub struct SyncLaw {
    pub op: SyncOp,
    pub replicas: u8,
    /// τ: the median clients ÷ rate of the rows with the fewest clients (seconds).
    pub round_trip_s: f64,
    /// The fastest of those rows: the round trip least disturbed by other work on the host, which is what
    /// carries to other hardware.
    pub round_trip_min_s: f64,
    /// D: what each client beyond the fewest adds to the round trip (median over the rows with more
    /// clients; seconds), when such rows exist.
    pub saturation_s: Option<f64>,
    /// Median message or value size of the rows (bytes).
    pub bytes: f64,
    pub clients_fewest: f64,
    pub clients_max: f64,
    /// (clients, median seconds per operation of one client) at every measured count, fewest first: with
    /// three or more counts D is read off this curve at the target's count (`saturation_at`), since what
    /// each further client adds falls as more are in flight (the prediction matrix, 2026-12-05: 78 µs per
    /// client from 1 to 4 publishers, 31 µs from 16 to 64, 26 µs from 64 to 160 at R3 1 KiB).
    pub curve: Vec<(f64, f64)>,
    /// CPU per operation at the most clients (reference-core seconds), of the stream leader's server and of
    /// the bench client, when the rows recorded it (`leader_cpu_us_per_msg`, `client_cpu_us_per_msg`).
    pub leader_cpu_s: Option<f64>,
    pub client_cpu_s: Option<f64>,
    pub rows: usize,
    /// How far one measurement of a shape strays from another on the host: the rows' spread about their
    /// count's median (`spread_log`; 0 with one row per count).
    pub spread_log: f64,
    /// Fitted to rows measured under `sync_interval: always` (`SyncHost::always_laws`): beyond the most
    /// clients measured, what the clients add follows a power law (`saturation_at`).
    pub under_always: bool,
}

/// The synchronous clients one calibration file measured on its host (whether or not it also measured async
/// publishing, which prices a leader class).
#[derive(Debug, Clone, Serialize)]
pub struct SyncHost {
    /// The file (id) that measured them.
    pub id: String,
    pub host: HostClass,
    /// True when the file did not state its host's figures (`leader::host_of`).
    pub host_assumed: bool,
    /// Laws from the file's delayed-sync rows: what every price reads.
    pub laws: Vec<SyncLaw>,
    /// Laws from rows measured under `sync_interval: always` (a cluster calibrated as it runs under
    /// `always`): their times hold the fsyncs, so they price only an `always` target on this same host at
    /// the same replica count (`price`), never a delayed one nor another host.
    pub always_laws: Vec<SyncLaw>,
}

impl SyncHost {
    /// The host's law for `op` nearest `replicas`: replicated for replicated (R5 takes R3), else any.
    fn law(&self, op: SyncOp, replicas: u8) -> Option<&SyncLaw> {
        let dist = |l: &&SyncLaw| (l.replicas as i32 - replicas as i32).abs();
        self.laws
            .iter()
            .filter(|l| l.op == op && (l.replicas > 1) == (replicas > 1))
            .min_by_key(dist)
            .or_else(|| self.laws.iter().filter(|l| l.op == op).min_by_key(dist))
    }
}

/// One `SyncHost` per file with delayed-sync synchronous rows.
pub fn fit_hosts(set: &CalibrationSet, catalog: &Catalog) -> Vec<SyncHost> {
    set.files
        .iter()
        .filter_map(|f| {
            let (host, host_assumed) = host_of(f, catalog);
            let laws = fit_mode(f, host.cpu_speed, false);
            let always_laws = fit_mode(f, host.cpu_speed, true);
            (!laws.is_empty() || !always_laws.is_empty()).then(|| SyncHost {
                id: f.id.clone(),
                host,
                host_assumed,
                laws,
                always_laws,
            })
        })
        .collect()
}

/// One synchronous row: clients, seconds per operation of one client (clients ÷ rate), size, CPU.
struct Row {
    op: SyncOp,
    replicas: u8,
    clients: f64,
    t: f64,
    bytes: f64,
    leader_cpu_s: Option<f64>,
    client_cpu_s: Option<f64>,
}

/// The synchronous rows of a file measured under one sync mode: `publish_mode: sync` JetStream rows and KV
/// rows. The delayed rows price every target (the prediction adds `always`'s fsyncs from the probe or the
/// volume); the `always` rows hold the fsyncs in their times and are kept apart (`SyncHost::always_laws`).
fn rows(f: &CalibrationFile, cpu_speed: f64, always: bool) -> Vec<Row> {
    let cpu = |r: &crate::perf::calibration::Row, k: &str| r.measured(k).map(|us| us * cpu_speed / 1e6);
    f.rows()
        .filter(|r| r.fit && r.mode.is_none() && r.one_subject() && (r.sync_always() == Some(true)) == always)
        .filter_map(|r| {
            let (op, clients, rate) = match r.kind.as_str() {
                "js" if r.publish_mode.as_deref() == Some("sync") => (
                    SyncOp::Publish,
                    r.publishers.or(r.workers).unwrap_or(1),
                    r.measured("durable_pubs_per_s")?,
                ),
                // Asynchronous puts (`publish_mode: async`, calibrate's `kvasync` point) wait on no round trip:
                // they price the leader's work (`leader::KvPutRatio`), not a synchronous client.
                "kv" if !r.async_put() => (SyncOp::KvPut, r.workers.unwrap_or(1), r.measured("ops_per_s")?),
                _ => return None,
            };
            let clients = clients.max(1) as f64;
            (rate > 0.0).then(|| Row {
                op,
                replicas: r.replicas.unwrap_or(1),
                clients,
                t: clients / rate,
                bytes: r.size_bytes().unwrap_or(128) as f64,
                leader_cpu_s: cpu(r, "leader_cpu_us_per_msg"),
                client_cpu_s: cpu(r, "client_cpu_us_per_msg"),
            })
        })
        .collect()
}

/// The laws a file's delayed-sync synchronous rows give, one per operation and replica count.
pub fn fit(f: &CalibrationFile, cpu_speed: f64) -> Vec<SyncLaw> {
    fit_mode(f, cpu_speed, false)
}

/// The laws a file's synchronous rows measured under one sync mode give.
fn fit_mode(f: &CalibrationFile, cpu_speed: f64, always: bool) -> Vec<SyncLaw> {
    let rows = rows(f, cpu_speed, always);
    let mut keys: Vec<(SyncOp, u8)> = rows.iter().map(|r| (r.op, r.replicas)).collect();
    keys.sort_by_key(|&(op, r)| (op == SyncOp::KvPut, r));
    keys.dedup();
    keys.into_iter()
        .map(|(op, replicas)| {
            let of: Vec<&Row> = rows.iter().filter(|r| r.op == op && r.replicas == replicas).collect();
            let fewest = of.iter().map(|r| r.clients).fold(f64::INFINITY, f64::min);
            let most = of.iter().map(|r| r.clients).fold(0.0, f64::max);
            let base: Vec<f64> = of.iter().filter(|r| r.clients == fewest).map(|r| r.t).collect();
            let tau = median_or_zero(base.clone());
            let tau_min = base.iter().cloned().fold(f64::INFINITY, f64::min);
            // D: t = τ + D·(clients − 1) for one client's time, fitted by least squares of the log rates
            // over the client counts above the fewest (each count's median time: one point per count, so
            // repeats of one count do not outweigh the others), D in [0, τ] (σ in [0, 1], as the USL's was).
            let mut counts: Vec<f64> = of.iter().map(|r| r.clients).filter(|&c| c > fewest).collect();
            counts.sort_by(f64::total_cmp);
            counts.dedup();
            let pts: Vec<(f64, f64)> = counts
                .iter()
                .map(|&c| {
                    (
                        c,
                        median_or_zero(of.iter().filter(|r| r.clients == c).map(|r| r.t).collect()),
                    )
                })
                .collect();
            let d = (!pts.is_empty() && tau > 0.0).then(|| fit_saturation(tau, &pts));
            let mut curve = vec![(fewest, tau)];
            curve.extend(pts.iter().copied());
            let spread_log = spread_log(&of, &curve);
            let at_most = |get: fn(&Row) -> Option<f64>| {
                let v: Vec<f64> = of.iter().filter(|r| r.clients == most).filter_map(|r| get(r)).collect();
                (!v.is_empty()).then(|| median_or_zero(v))
            };
            SyncLaw {
                op,
                replicas,
                round_trip_s: tau,
                round_trip_min_s: tau_min,
                saturation_s: d,
                bytes: median_or_zero(of.iter().map(|r| r.bytes).collect()),
                clients_fewest: fewest,
                clients_max: most,
                curve,
                leader_cpu_s: at_most(|r| r.leader_cpu_s),
                client_cpu_s: at_most(|r| r.client_cpu_s),
                rows: of.len(),
                spread_log,
                under_always: always,
            }
        })
        .collect()
}

/// Root-mean-square of ln(row ÷ its count's median, from `curve`) over the counts measured more than once, with one
/// degree of freedom spent per such count (the median stands in for the mean); 0 when no count was
/// measured twice.
fn spread_log(of: &[&Row], curve: &[(f64, f64)]) -> f64 {
    let (mut sum, mut rows, mut counts) = (0.0, 0usize, 0usize);
    for &(c, m) in curve {
        let t: Vec<f64> = of.iter().filter(|r| r.clients == c).map(|r| r.t).collect();
        if t.len() < 2 {
            continue;
        }
        sum += t.iter().map(|x| (x / m).ln().powi(2)).sum::<f64>();
        (rows, counts) = (rows + t.len(), counts + 1);
    }
    if rows > counts {
        (sum / (rows - counts) as f64).sqrt()
    } else {
        0.0
    }
}

/// The least exponent `SyncLaw::beyond_exponent` takes: a client's time growing more slowly than the square
/// root of the clients has not been measured on any host (0.55–0.77 in runs 5–7 of the prediction matrix,
/// docs/prediction-matrix.md); an assumption that keeps a noisy pair of rows from pricing further clients
/// as almost free.
const BEYOND_EXPONENT_MIN: f64 = 0.5;

impl SyncLaw {
    /// D for `clients` synchronous clients. With three or more measured counts: the per-client time read
    /// off the measured curve (straight lines between the counts' medians), less the fewest's, per client
    /// above the fewest; beyond the most clients measured, the last segment's slope carries on, except
    /// under `always` (`under_always`), where what the clients add grows as a power of their number through
    /// the measured counts (`beyond_exponent`) when they bend below a straight line. With fewer counts, the
    /// single D fitted to them (`saturation_s`), as before.
    pub fn saturation_at(&self, clients: f64) -> Option<f64> {
        let c = &self.curve;
        if c.len() < 3 {
            return self.saturation_s;
        }
        let (c0, tau) = c[0];
        let (c_last, t_last) = c[c.len() - 1];
        if clients > c_last && self.under_always {
            if let Some(alpha) = self.beyond_exponent() {
                let t = tau + (t_last - tau) * ((clients - c0) / (c_last - c0)).powf(alpha);
                return Some(((t - tau) / (clients - c0)).max(0.0));
            }
        }
        let seg = c.windows(2).find(|w| clients <= w[1].0).unwrap_or(&c[c.len() - 2..]);
        let slope = ((seg[1].1 - seg[0].1) / (seg[1].0 - seg[0].0)).max(0.0);
        if clients <= c0 {
            return Some(slope);
        }
        let t = seg[0].1 + slope * (clients - seg[0].0);
        Some(((t - tau) / (clients - c0)).max(0.0))
    }

    /// α of t(c) − τ ∝ (c − fewest)^α, by least squares of the logarithms over the measured counts above the
    /// fewest (each count's median): what the clients beyond the most measured add under `always`, anchored
    /// at that count (`saturation_at`). Under `always` each fsync is shared by the operations in flight
    /// (group commit: one append entry and one fsync carry many), so what each further client adds keeps
    /// falling and a straight line through the last two counts prices many clients low: 64 KV putters from
    /// rows at 1/4/16 were priced 31 % and 44 % low (runs 6 and 7 of the prediction matrix; the power law
    /// through the same rows: −6 % and −4 %, computed after seeing them). Run 8 held it out: 64 KV putters
    /// +18.3 % (the straight line: +56.2 %), 64 publishers −1.2 % (rows to 48).
    /// Delayed laws keep the straight line: run 8 held the power law out for them too and it priced 160
    /// publishers 40 % high and 64 KV putters 38 % high (the straight line 20 % and 12 % high): without an
    /// fsync to share, the lab's two cores level the rate off (12.4 k/s at 64 publishers, 14.9 k/s at 160),
    /// where runs 5 and 6 had measured it still rising (docs/prediction-matrix.md, run 8).
    /// None (the last segment's straight line) when fewer than two counts lie above τ or the fit is not
    /// below 1; at least `BEYOND_EXPONENT_MIN`.
    pub fn beyond_exponent(&self) -> Option<f64> {
        let (c0, tau) = self.curve[0];
        let pts: Vec<(f64, f64)> = self.curve[1..]
            .iter()
            .filter(|&&(c, t)| c > c0 && t > tau)
            .map(|&(c, t)| ((c - c0).ln(), (t - tau).ln()))
            .collect();
        if pts.len() < 2 || self.curve.last().is_some_and(|&(_, t)| t <= tau) {
            return None;
        }
        let n = pts.len() as f64;
        let (mx, my) = (
            pts.iter().map(|p| p.0).sum::<f64>() / n,
            pts.iter().map(|p| p.1).sum::<f64>() / n,
        );
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let alpha = sxy / sxx;
        (sxx > 0.0 && alpha.is_finite() && alpha < 1.0).then(|| alpha.max(BEYOND_EXPONENT_MIN))
    }
}

/// D minimising Σ (ln(τ + D·(c − 1)) − ln t_c)² over the points (c clients, t_c seconds per operation of
/// one client), on [0, τ]: golden-section search (the sum is unimodal in D). One point: its own D exactly.
fn fit_saturation(tau: f64, pts: &[(f64, f64)]) -> f64 {
    if let [(c, t)] = pts {
        return ((t - tau) / (c - 1.0)).clamp(0.0, tau);
    }
    let loss = |d: f64| -> f64 {
        pts.iter()
            .map(|&(c, t)| ((tau + d * (c - 1.0)).ln() - t.ln()).powi(2))
            .sum()
    };
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (0.0, tau);
    for _ in 0..200 {
        let (x1, x2) = (b - g * (b - a), a + g * (b - a));
        if loss(x1) <= loss(x2) {
            b = x2;
        } else {
            a = x1;
        }
    }
    0.5 * (a + b)
}

/// What one asset's synchronous clients are priced with on a target host.
#[derive(Debug, Clone)]
pub struct SyncPrice {
    /// τ at the asset's size (seconds).
    pub round_trip_s: f64,
    /// D (seconds per operation); None when nothing measured or derives it (the caller's fallback).
    pub saturation_s: Option<f64>,
    /// True when the round trip was measured on the target's own host at this replica count.
    pub measured: bool,
    /// How the two ends were carried to the target, for the prediction's notes (no calibration ids).
    pub notes: Vec<String>,
    /// The calibration file whose rows priced them.
    pub source: String,
    /// What one operation costs the stream leader against a publish (`op_factor`: above 1 for KV puts).
    pub leader_factor: f64,
    /// Priced from rows measured under `always` on the target's own host: τ and D hold the fsyncs already.
    pub under_always: bool,
    /// What the price carried beyond its rows (`under_always` prices only; default elsewhere).
    pub beyond: Beyond,
}

/// How far a price measured on the target's own host reaches beyond its rows, for its band
/// (`Beyond::width`): the share of one client's time per operation priced by the leader class and the
/// object terms (the message's bytes beyond the rows' size), and the target's clients over the most the
/// rows measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Beyond {
    pub byte_share: f64,
    pub clients_ratio: f64,
    /// The rows' own measurement spread (`SyncLaw::spread_log`).
    pub spread_log: f64,
}

impl Default for Beyond {
    fn default() -> Beyond {
        Beyond {
            byte_share: 0.0,
            clients_ratio: 1.0,
            spread_log: 0.0,
        }
    }
}

/// Half-width (log units) per e-fold of clients beyond the most the rows measured: past the last measured
/// count a power law through the measured counts is assumed for what the clients add
/// (`SyncLaw::beyond_exponent`; what each further client adds fell 2.5× from 1-4 to 16-64 publishers on
/// the loopback lab, run 5). An assumption, set after run 6 of the prediction matrix (64 KV putters under
/// `always`, rows up to 16, measured 31 % above the straight-line price the model made then) and kept for
/// the power law until a held-out run measures how far it strays.
const WIDTH_PER_CLIENTS_EFOLD: f64 = 0.15;

impl Beyond {
    /// The band's half-width of a price measured on the target's own host: `base` (the model's form); a
    /// 90 % interval of two measurements' difference at the rows' spread (the rows were measured once and
    /// the shape is measured again: 1.645 × √2 × spread); the class's fit residuals on the share it prices;
    /// the clients beyond the rows (`WIDTH_PER_CLIENTS_EFOLD`) — independent parts, in quadrature — and
    /// `carried`, the allowance for a class from another host (`band::own_and_carried`).
    pub fn width(&self, base: f64, class_fit_width: f64, carried: f64) -> f64 {
        crate::perf::band::own_and_carried(
            &[
                base,
                1.645 * std::f64::consts::SQRT_2 * self.spread_log,
                class_fit_width * self.byte_share,
                WIDTH_PER_CLIENTS_EFOLD * self.clients_ratio.max(1.0).ln(),
            ],
            carried,
        )
    }
}

/// The target of a price (`PriceTarget`; `survival::DomainTarget` is what a failure domain names): its host, replica count, size and what the leader costs there.
pub struct PriceTarget<'a> {
    pub host: &'a HostClass,
    pub replicas: u8,
    pub bytes: f64,
    /// Seconds per byte a round trip spends beyond the rows' size (payload copies, replication).
    pub per_byte_s: f64,
    /// Servers the clients connect to (the cluster's size).
    pub servers: u32,
    /// Synchronous clients of the asset (publishers or KV putters): where the host measured three or more
    /// counts, D is read at this count (`SyncLaw::saturation_at`).
    pub clients: f64,
    /// The leader class pricing the stream leader on the target, and its time per message there
    /// (delayed sync: the reciprocal of the leader's ceiling).
    pub leader: &'a LeaderClass,
    pub leader_time_s: f64,
    /// The target runs `sync_interval: always`: a law its own host measured under `always` at its replica
    /// count prices it as measured (`SyncPrice::under_always`).
    pub always: bool,
}

/// How many network round trips one synchronous operation crosses on `host`: none on a host that runs the
/// cluster and its clients (loopback, in its own calibration); else the client's own, a route hop for the
/// (N − 1)/N clients connected elsewhere than the leader, and the replication round at R > 1.
pub fn network_round_trips(host: &HostClass, replicas: u8, servers: u32) -> f64 {
    if host.co_located > 1 {
        return 0.0;
    }
    let n = servers.max(1) as f64;
    1.0 + (n - 1.0) / n + if replicas > 1 { 1.0 } else { 0.0 }
}

/// Price `op` for `t` from the hosts that measured synchronous clients: the target's own host when it
/// measured this operation, else the nearest that did (the replica count nearest, replicated for
/// replicated), carried by the hardware; `leaders` give a host's async per-message work where it measured
/// one. None when no host measured the operation.
pub fn price(hosts: &[SyncHost], leaders: &[LeaderClass], t: &PriceTarget, op: SyncOp) -> Option<SyncPrice> {
    let own = |c: &SyncHost| c.host.server_model.eq_ignore_ascii_case(&t.host.server_model);
    if t.always {
        if let Some(p) = price_measured_always(hosts, t, op) {
            return Some(p);
        }
    }
    let (class, law) = hosts
        .iter()
        .filter_map(|c| c.law(op, t.replicas).map(|l| (c, l)))
        .min_by(|a, b| {
            let key = |(c, l): &(&SyncHost, &SyncLaw)| {
                let exact = if l.replicas == t.replicas { 0.0 } else { 0.01 };
                let d = c.host.distance(c.host_assumed, t.host, t.replicas);
                (if own(c) { 0.0 } else { 1.0 + d }) + exact
            };
            key(a).total_cmp(&key(b))
        })?;
    let on_own = own(class);
    let exact = on_own && law.replicas == t.replicas;
    let mut notes = Vec::new();
    let src = &class.host;
    // τ: the host's own median where it measured this; elsewhere its least-disturbed round trip, carried.
    let mut tau =
        if exact {
            law.round_trip_s
        } else {
            let net_from = network_round_trips(src, law.replicas, t.servers) * NET_RTT_S;
            let net_to = network_round_trips(t.host, t.replicas, t.servers) * NET_RTT_S;
            let base = if on_own { law.round_trip_s } else { law.round_trip_min_s };
            let cpu = (base - net_from).max(0.3 * base) * src.cpu_speed / t.host.cpu_speed;
            notes.push(format!(
            "one synchronous {} at R{}: {:.0} µs to its ack, from {:.0} µs measured at R{} on the calibration host{}{}",
            noun(op),
            t.replicas,
            (cpu + net_to) * 1e6,
            base * 1e6,
            law.replicas,
            if (src.cpu_speed / t.host.cpu_speed - 1.0).abs() > 1e-9 {
                format!(" scaled by single-thread speed ({:.2} to {:.2})", src.cpu_speed, t.host.cpu_speed)
            } else {
                String::new()
            },
            if net_to > 0.0 {
                format!(
                    " plus {:.1} network round trips of {:.0} µs (assumed: a data-centre LAN)",
                    net_to / NET_RTT_S,
                    NET_RTT_S * 1e6
                )
            } else {
                String::new()
            }
        ));
            // Another replica count than the rows': the leader sends each append entry to every follower, half
            // a unit of its per-message work each (`leader_units`), on the critical path.
            let fan_out =
                (leader_units(t.replicas) - leader_units(law.replicas)) * t.leader.unit(t.bytes) / t.host.cpu_speed;
            (cpu + net_to + fan_out).max(0.5 * cpu)
        };
    // Larger messages than the rows' add their per-byte time; smaller ones are priced as the rows' size (the
    // round trip is mostly per operation, and a per-byte saving would grow with the replicas).
    tau += (t.bytes - law.bytes).max(0.0) * t.per_byte_s;
    // D: measured where the host measured it; else from the target's leader and cores.
    let factor = op_factor(class, op, law.replicas);
    let serial = t.leader_time_s * factor;
    let saturation = match (exact, law.saturation_at(t.clients)) {
        // Measured at the rows' size: a larger message adds what its bytes cost the host per message
        // (`grown_saturation`).
        (true, Some(d)) => Some(d + grown_saturation(t, law, factor)),
        _ => {
            let u = t.leader.unit(t.bytes) * factor;
            let cores = t.host.cpu_speed * t.host.cores;
            if t.host.co_located > 1 {
                // A host shared by the whole cluster and its clients: everything one operation cost the
                // calibrated box beyond its async work, on the target's cores.
                extra_on_box(hosts, leaders, class, op).map(|w| {
                    let (host_units, _) = t.host.units(t.replicas);
                    serial.max((host_units * u + w) / cores)
                })
            } else {
                let io = io_cost(hosts, class, op);
                let n = t.servers.max(1) as f64;
                Some(serial.max((leader_units(t.replicas) * u + io / n) / cores))
            }
        }
    };
    if !exact {
        if let Some(d) = saturation {
            notes.push(format!(
                "many synchronous {}: at most {:.0}/s ({:.1} µs each) on {}",
                match op {
                    SyncOp::Publish => "publishers",
                    SyncOp::KvPut => "KV putters",
                },
                1.0 / d,
                d * 1e6,
                if t.host.co_located > 1 {
                    "this host's shared cores (the calibration host's per-operation work beyond async publishing)"
                } else {
                    "the stream leader: its serial stages, or its cores with its clients' connection I/O"
                }
            ));
        }
    }
    Some(SyncPrice {
        round_trip_s: tau,
        saturation_s: saturation,
        measured: exact,
        notes,
        source: class.id.clone(),
        leader_factor: factor,
        under_always: false,
        beyond: Beyond::default(),
    })
}

/// An `always` target priced from the rows its own host measured under `always` at its replica count: τ
/// and D as measured (D read at the target's client count and grown for larger messages, as for delayed
/// rows). None when the host measured no such rows: the caller prices from delayed rows and the fsyncs.
fn price_measured_always(hosts: &[SyncHost], t: &PriceTarget, op: SyncOp) -> Option<SyncPrice> {
    let own = |c: &&SyncHost| c.host.server_model.eq_ignore_ascii_case(&t.host.server_model);
    let (class, law) = hosts.iter().filter(own).find_map(|c| {
        c.always_laws
            .iter()
            .find(|l| l.op == op && l.replicas == t.replicas)
            .map(|l| (c, l))
    })?;
    let factor = op_factor(class, op, law.replicas);
    let bytes_tau = (t.bytes - law.bytes).max(0.0) * t.per_byte_s;
    let tau = law.round_trip_s + bytes_tau;
    let grown = grown_saturation(t, law, factor);
    let saturation = law.saturation_at(t.clients).map(|d| d + grown);
    // One client's time per operation at the target's count, and the part the rows did not measure.
    let further = (t.clients - 1.0).max(0.0);
    let per_op = tau + saturation.unwrap_or(0.0) * further;
    let beyond = Beyond {
        byte_share: match saturation {
            // No D measured (one client count): what further clients add is priced elsewhere (the object
            // fit's contention), nothing of these rows.
            None if further > 0.0 => 1.0,
            Some(_) if per_op > 0.0 => ((bytes_tau + grown * further) / per_op).min(1.0),
            _ if per_op > 0.0 => (bytes_tau / per_op).min(1.0),
            _ => 0.0,
        },
        clients_ratio: t.clients / law.clients_max.max(1.0),
        spread_log: law.spread_log,
    };
    let mut notes = vec![format!(
        "synchronous {} under sync always: the round trip ({:.0} µs) and what each further client adds measured under always on this host at R{} ({} rows, {:.0} B)",
        match op {
            SyncOp::Publish => "publishers",
            SyncOp::KvPut => "KV putters",
        },
        law.round_trip_s * 1e6,
        law.replicas,
        law.rows,
        law.bytes
    )];
    if beyond.clients_ratio > 1.0 {
        notes.push(format!(
            "{:.0} clients, beyond the {:.0} the rows measured: {} (an assumption), band widened",
            t.clients,
            law.clients_max,
            beyond_rule(law)
        ));
    }
    Some(SyncPrice {
        round_trip_s: tau,
        saturation_s: saturation,
        measured: true,
        notes,
        source: class.id.clone(),
        leader_factor: factor,
        under_always: true,
        beyond,
    })
}

/// What each further synchronous client adds beyond the rows' D when the target's messages are larger than
/// the rows': D is the host's time per operation once the clients queue for it (the leader's time per
/// message, on a host running the whole cluster every server's), which grows with the message's per-byte
/// work as the class's async rows measured it (`LeaderClass::unit`). The matrix (2026-12-05, run 5) measured
/// 4 R3 publishers at 16 KiB 24.5 % below a price that kept the 1 KiB rows' D.
fn grown_saturation(t: &PriceTarget, law: &SyncLaw, factor: f64) -> f64 {
    let (at, rows) = (t.leader.unit(t.bytes), t.leader.unit(law.bytes));
    if at <= rows || at <= 0.0 {
        return 0.0;
    }
    t.leader_time_s * factor * (1.0 - rows / at)
}

/// How `saturation_at` carries a law beyond its most clients, for a prediction's notes.
fn beyond_rule(law: &SyncLaw) -> String {
    match (law.curve.len() >= 3, law.beyond_exponent().filter(|_| law.under_always)) {
        (true, Some(a)) => {
            format!("what the clients add grows as the {a:.2} power of their number, as through the measured counts")
        }
        (true, None) => "each further one adds what the last measured step did".to_string(),
        (false, _) if law.saturation_s.is_some() => "each further one adds the D fitted to the rows".to_string(),
        (false, _) => "what further clients add is priced without these rows".to_string(),
    }
}

fn noun(op: SyncOp) -> &'static str {
    match op {
        SyncOp::Publish => "publish",
        SyncOp::KvPut => "KV put",
    }
}

/// What a KV put costs the leader against a publish, on the host that measured both at `replicas`: the
/// leader's CPU per operation at the most clients, else the saturation times; 1 for publishes or without.
pub fn op_factor(host: &SyncHost, op: SyncOp, replicas: u8) -> f64 {
    if op == SyncOp::Publish {
        return 1.0;
    }
    // A host measured only under `always` has only `always` laws: the ratio is read from them.
    let laws = if host.laws.is_empty() {
        &host.always_laws
    } else {
        &host.laws
    };
    let at = |o: SyncOp| laws.iter().find(|l| l.op == o && l.replicas == replicas);
    let (Some(kv), Some(js)) = (at(SyncOp::KvPut), at(SyncOp::Publish)) else {
        return 1.0;
    };
    let ratio = match (kv.leader_cpu_s, js.leader_cpu_s) {
        (Some(a), Some(b)) if b > 0.0 => a / b,
        _ => match (kv.saturation_s, js.saturation_s) {
            (Some(a), Some(b)) if b > 0.0 => a / b,
            _ => 1.0,
        },
    };
    ratio.max(1.0)
}

/// One operation's connection I/O at one end (reference-core seconds): the bench client's CPU per
/// operation at the most clients, from `host` or the first host that recorded it, else `DEFAULT_IO_S`.
fn io_cost(hosts: &[SyncHost], host: &SyncHost, op: SyncOp) -> f64 {
    let of = |c: &SyncHost| -> Option<f64> {
        let v: Vec<f64> = c
            .laws
            .iter()
            .filter(|l| l.op == op)
            .filter_map(|l| l.client_cpu_s)
            .collect();
        (!v.is_empty()).then(|| median_or_zero(v))
    };
    of(host).or_else(|| hosts.iter().find_map(of)).unwrap_or(DEFAULT_IO_S)
}

/// Reference-core seconds one operation cost a shared calibrated box beyond its async per-message work, at
/// saturation: cores × speed × D − the host's work units × the per-message work (of the leader class the
/// same file fitted). From `host` or the first shared host that measured D for `op` and async publishing.
fn extra_on_box(hosts: &[SyncHost], leaders: &[LeaderClass], host: &SyncHost, op: SyncOp) -> Option<f64> {
    let of = |c: &SyncHost| -> Option<f64> {
        let leader = leaders.iter().find(|l| l.id == c.id)?;
        if c.host.co_located <= 1 {
            return None;
        }
        let v: Vec<f64> = c
            .laws
            .iter()
            .filter(|l| l.op == op)
            .filter_map(|l| {
                let d = l.saturation_s?;
                let (host_units, _) = c.host.units(l.replicas);
                let u = leader.unit(l.bytes) * op_factor(c, op, l.replicas);
                Some((c.host.cores * c.host.cpu_speed * d - host_units * u).max(0.0))
            })
            .collect();
        (!v.is_empty()).then(|| median_or_zero(v))
    };
    of(host).or_else(|| hosts.iter().find_map(of))
}

#[cfg(test)]
#[path = "sync_law_tests.rs"]
mod tests;
