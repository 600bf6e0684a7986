//! Fitting a stream-leader class from a calibration file's JetStream rows (`fit_classes`): the rows the
//! fit reads, the store probe, the host a file describes, the per-message work (line or `SizeShape`), the
//! closed-loop base latency and the subjects term. Moved out of perf/leader.rs, not changed.

use super::*;
/// One JetStream row reduced to what the class fit needs.
#[derive(Clone)]
struct JsRow {
    always: bool,
    size: f64,
    replicas: u8,
    rate: f64,
    sync_publish: bool,
    publishers: f64,
    /// Publishes in flight per publisher, when the row recorded it.
    window: Option<f64>,
    /// Distinct subjects the row published on (1: one subject).
    subjects: f64,
}

/// Below this many publishes in flight per publisher an async row measures the closed loop's latency,
/// not the leader's ceiling (`LeaderClass::async_base_s`): calibrate's small-window point uses 8, its
/// leader points 500.
pub const SMALL_WINDOW: u32 = 64;

impl JsRow {
    fn small_window(&self) -> bool {
        !self.sync_publish && self.window.is_some_and(|w| w < SMALL_WINDOW as f64)
    }

    /// Publishes in flight in all, when the row recorded its window.
    fn in_flight(&self) -> Option<f64> {
        self.window.map(|w| w * self.publishers)
    }
}

fn js_rows(f: &CalibrationFile) -> Vec<JsRow> {
    f.series
        .iter()
        .flat_map(|s| &s.rows)
        .filter(|r| r.is(Kind::Js) && r.fit && r.mode.is_none())
        .filter_map(|r| {
            Some(JsRow {
                always: r.sync_always() == Some(true),
                size: r.size_bytes()? as f64,
                replicas: r.replicas.unwrap_or(1),
                rate: r.measured("durable_pubs_per_s")?,
                sync_publish: r.publish_mode.as_deref() == Some("sync"),
                publishers: r.publishers.or(r.workers).unwrap_or(1).max(1) as f64,
                window: r.window.map(f64::from),
                subjects: r.subjects.unwrap_or(1).max(1) as f64,
            })
        })
        .collect()
}

fn probe_of(f: &CalibrationFile) -> Option<StoreProbe> {
    let r = f
        .series
        .iter()
        .flat_map(|s| &s.rows)
        .find(|r| r.kind == "store-probe")?;
    Some(StoreProbe {
        write_s: r.measured("write_us")? / 1e6,
        fsync_s: r.measured("fsync_ms")? / 1e3,
        commit_s: r.measured("commit_ms").map(|v| v / 1e3),
        sync_byte_s: r.measured("sync_byte_ns").map(|v| v / 1e9),
        source: format!("{} ({})", f.id, r.label),
    })
}

/// The host class a file describes: `hardware.server_model` from the catalog, else its stated cores (and
/// `co_located` when the provenance says every server was on loopback), speed 1.0 assumed.
pub(crate) fn host_of(f: &CalibrationFile, catalog: &Catalog) -> (HostClass, bool) {
    let named = f
        .hardware
        .get("server_model")
        .and_then(|v| v.as_str())
        .and_then(|n| catalog.server(n));
    let stated_cores = f.hardware.get("cores").and_then(|v| v.as_f64());
    if let Some(m) = named {
        // Named: the catalog's model, stated when the file gives the cores too (seed 004 does not).
        return (HostClass::of(m), stated_cores.is_none());
    }
    let cores = stated_cores.unwrap_or(2.0);
    let loopback = f
        .provenance
        .get("client_servers")
        .and_then(|v| v.as_sequence())
        .is_some_and(|s| {
            !s.is_empty()
                && s.iter().all(|u| {
                    u.as_str()
                        .is_some_and(|u| u.contains("127.0.0.1") || u.contains("localhost"))
                })
        });
    let servers = f
        .provenance
        .get("jetstream_servers")
        .and_then(|v| v.as_u64())
        .unwrap_or(3) as u32;
    (
        HostClass {
            // Named after the file: `predict --calibration FILE --server-model ID` predicts for this host.
            server_model: f.id.clone(),
            cores,
            cpu_speed: 1.0,
            co_located: if loopback { servers + 1 } else { 1 },
        },
        stated_cores.is_none(),
    )
}

/// Fit one class per calibration file that has delayed-sync JetStream rows.
pub fn fit_classes(set: &CalibrationSet, catalog: &Catalog) -> Vec<LeaderClass> {
    let mut out = Vec::new();
    for f in &set.files {
        // Delayed-sync rows price the leader; `always` is priced through the probe. A file measured only
        // under `always` (lab-loopback-always.yaml) fits from its always rows, inverting the CPU bounds
        // with their store writes (the fsync cycle left in: the work comes out a little high).
        let all = js_rows(f);
        let any_delayed = all.iter().any(|r| !r.always);
        // R1 under `always` fsyncs every stored message in the publisher's read loop (`flushes_in_place`):
        // its rows measure the fsync, not the leader's work, so they price nothing here (nor the async
        // base latency).
        let rows: Vec<JsRow> = all
            .into_iter()
            .filter(|r| r.always != any_delayed && !(r.always && r.replicas <= 1))
            .collect();
        let leader_rows: Vec<JsRow> = rows
            .iter()
            .filter(|r| !(r.sync_publish || r.small_window()) && r.subjects <= 1.0)
            .cloned()
            .collect();
        let subject_rows: Vec<&JsRow> = rows
            .iter()
            .filter(|r| !(r.sync_publish || r.small_window()) && r.subjects > 1.0)
            .collect();
        if leader_rows.is_empty() {
            continue;
        }
        let small: Vec<&JsRow> = rows.iter().filter(|r| r.small_window() && r.subjects <= 1.0).collect();
        let (host, assumed) = host_of(f, catalog);
        let mut class = fit_class(f, host.clone(), assumed, &leader_rows);
        if let Some(a) = async_base(&class, &small) {
            // The leader rows ran the same closed loop, `n ÷ (a + n·t_l)` with n = 1,000 in flight: their
            // ceiling is 1 ÷ (1/X − a/n), a few per cent above what they carried. Fit again on that, then
            // read the base latency again against the refitted leader.
            let adjusted: Vec<JsRow> = leader_rows
                .iter()
                .map(|r| match r.in_flight() {
                    Some(n) if 1.0 / r.rate > 2.0 * a / n => JsRow {
                        rate: 1.0 / (1.0 / r.rate - a / n),
                        ..r.clone()
                    },
                    _ => r.clone(),
                })
                .collect();
            class = fit_class(f, host, assumed, &adjusted);
            class.async_base_s = async_base(&class, &small).or(Some(a));
        }
        class.subjects = SubjectsTerm::fit(&subject_extra(&class, &subject_rows), &f.id, class.subjects.clone());
        class.kv_put = kv_put_ratio(f, !any_delayed, &rows, &class);
        class.readers_stretch = readers_stretch(f, !any_delayed, &rows);
        out.push(class);
    }
    out
}

/// Each many-subjects row's work per message beyond the class's line at its size, by its subjects (its
/// closed loop corrected as the leader rows were, `fit_classes`).
fn subject_extra(class: &LeaderClass, rows: &[&JsRow]) -> Vec<(f64, f64)> {
    rows.iter()
        .map(|r| {
            let rate = match (class.async_base_s, r.in_flight()) {
                (Some(a), Some(n)) if 1.0 / r.rate > 2.0 * a / n => 1.0 / (1.0 / r.rate - a / n),
                _ => r.rate,
            };
            let work = unit_for(&class.host, r.replicas, r.always, class.write_s, rate);
            (r.subjects, work - class.unit(r.size))
        })
        .collect()
}

/// The closed-loop base latency `a` of async publishing from a class's small-window rows: each row's
/// publishes in flight over its rate, less the leader's time for those publishes (`n/X − n·t_l`), the
/// median over the rows, never below zero. None without such rows.
fn async_base(class: &LeaderClass, small: &[&JsRow]) -> Option<f64> {
    let per_row: Vec<f64> = small
        .iter()
        .filter_map(|r| {
            let n = r.in_flight()?;
            let inp = StreamInput {
                replicas: r.replicas,
                bytes: r.size,
                always: r.always,
                publish: Publish {
                    publishers: r.publishers,
                    window: r.window.unwrap_or(1.0),
                    saturation_s: 0.0,
                },
                fsync_s: 0.0,
                commit_s: None,
                fsync_byte_s: 0.0,
                sync_copies: 1.0,
                write_s: write_s(class, r.replicas, r.always),
                round_trip_s: 0.0,
                async_base_s: None,
                subjects: 1.0,
                readers_s: 0.0,
                readers_serial_s: 0.0,
            };
            Some(n / r.rate - n * leader_time_s(class, &class.host, &inp))
        })
        .collect();
    (!per_row.is_empty()).then(|| median_or_zero(per_row).max(0.0))
}

/// One class from a file's leader-bound async rows (delayed sync, or `always` for a file with nothing else).
fn fit_class(f: &CalibrationFile, host: HostClass, assumed: bool, async_rows: &[JsRow]) -> LeaderClass {
    let probe = probe_of(f);
    // The in-place write nats-server pays is more than a bare `write` (the lab's R1 rows: 3.3 µs against
    // the probe's 0.7 µs): without R1 rows the assumed 5 µs, never the probe's bare write.
    let w = DEFAULT_WRITE_S;
    // Each leader-bound row gives the per-message work (delayed sync rows only: `always` is priced).
    let pts: Vec<(f64, f64)> = async_rows
        .iter()
        .map(|r| (r.size, unit_for(&host, r.replicas, r.always, w, r.rate)))
        .collect();
    // The line from the replicated rows (no in-place writes under delayed sync); R1 rows then give the
    // in-place write as what their serial stage spends beyond the per-message work.
    let rep: Vec<(f64, f64)> = async_rows
        .iter()
        .zip(&pts)
        .filter(|(r, _)| r.replicas > 1)
        .map(|(_, p)| *p)
        .collect();
    let (a, b) = weighted_line(if rep.is_empty() { &pts } else { &rep });
    let r1: Vec<f64> = async_rows
        .iter()
        .filter(|r| r.replicas <= 1 && !r.always && !rep.is_empty())
        .map(|r| host.cpu_speed * stream_parallelism(1) / r.rate - (a + b * r.size))
        .collect();
    let (w, write_source) = if r1.is_empty() {
        (w, "assumed 5 µs (no R1 rows)".to_string())
    } else {
        (median_or_zero(r1).max(1e-8), format!("{} (R1 rows)", f.id))
    };
    let pts: Vec<(f64, f64)> = async_rows
        .iter()
        .map(|r| (r.size, unit_for(&host, r.replicas, r.always, w, r.rate)))
        .collect();
    let rms = (pts.iter().map(|(s, u)| ((a + b * s) / u).ln().powi(2)).sum::<f64>() / pts.len() as f64).sqrt();
    // The rows the line was fitted to, as priced: where the chords between their sizes price them better
    // (leaving each size out), the shape prices the class.
    let line_pts: Vec<(f64, f64)> = async_rows
        .iter()
        .zip(&pts)
        .filter(|(r, _)| rep.is_empty() || r.replicas > 1)
        .map(|(_, p)| *p)
        .collect();
    // Only rows measured under `always` (their append entries' fsyncs shared by the messages of each
    // entry; `SizeShape`): delayed classes keep the line by choice, the two forms within a few hundredths
    // of log of each other on the delayed files either way, and their bands within the cap on the line.
    let shape = if async_rows.iter().all(|r| r.always) {
        SizeShape::fit(&line_pts, weighted_line)
    } else {
        None
    };
    let measured_always = async_rows.iter().all(|r| r.always);
    let (always_write_s, always_write_source) = match &probe {
        // A class fitted to `always` rows prices `always` with the write its rows were inverted with, so
        // it gives its own rows back (with the probe's write it priced them 1.4-1.7× high).
        _ if measured_always => (w, write_source.clone()),
        Some(p) => (
            ALWAYS_WRITE_PER_PROBE_WRITE * p.write_s,
            format!(
                "{} write × {ALWAYS_WRITE_PER_PROBE_WRITE} (nats-server's in-place write under always: lab-loopback-js-quiet)",
                p.source
            ),
        ),
        None => (w, write_source.clone()),
    };
    LeaderClass {
        id: f.id.clone(),
        host,
        host_assumed: assumed,
        unit_s: a,
        unit_byte_s: b,
        shape: shape.clone(),
        write_s: w,
        always_write_s,
        always_write_source,
        r1_measured: write_source.ends_with("(R1 rows)"),
        write_source,
        leader_remote: f
            .conditions
            .get("leader")
            .and_then(serde_norway::Value::as_str)
            .is_some_and(|v| v.starts_with("remote")),
        probe,
        async_base_s: None,
        always_replicas: if measured_always {
            let mut r: Vec<u8> = async_rows.iter().map(|r| r.replicas).collect();
            r.sort_unstable();
            r.dedup();
            r
        } else {
            Vec::new()
        },
        // At the assumed size, as the class prices it (the shape where it has one).
        subjects: SubjectsTerm::assumed(shape.as_ref().map_or(a + b * subjects::ASSUMED_AT_BYTES, |s| {
            s.unit(subjects::ASSUMED_AT_BYTES)
        })),
        kv_put: None,
        readers_stretch: None,
        rms_log: rms,
        rows: pts.len(),
    }
}

/// The file's asynchronous KV put rows (`kind: kv-async`, or `kv` with `publish_mode: async`; one subject,
/// a window of at least `SMALL_WINDOW`) under `always` or not, against its asynchronous one-subject publish
/// rows of the same shape (`KvPutRatio`), both corrected for the closed loop as the class's leader rows are
/// (`async_base`, when the class measured it): the pair with the most rows. A side measured once takes the
/// class's fit residual for its scatter.
fn kv_put_ratio(f: &CalibrationFile, always: bool, publishes: &[JsRow], class: &LeaderClass) -> Option<KvPutRatio> {
    let kv: Vec<(u8, f64, f64, f64, f64)> = f
        .series
        .iter()
        .flat_map(|s| &s.rows)
        .filter(|r| {
            r.kind == crate::perf::calibration::KV_ASYNC_KIND
                || (r.is(Kind::Kv) && r.publish_mode.as_deref() == Some("async"))
        })
        .filter(|r| r.fit && r.mode.is_none() && r.one_subject() && (r.sync_always() == Some(true)) == always)
        .filter_map(|r| {
            Some((
                r.replicas.unwrap_or(1),
                r.size_bytes()? as f64,
                r.workers.or(r.publishers).unwrap_or(1).max(1) as f64,
                f64::from(r.window.filter(|w| *w >= SMALL_WINDOW)?),
                r.measured("ops_per_s").filter(|v| *v > 0.0)?,
            ))
        })
        .collect();
    let shapes = distinct_shapes(&kv);
    // The closed loop's ceiling, as `fit_classes` corrects the leader rows: n in flight carry n ÷ (a + n·t_l).
    let ceiling = |rate: f64, in_flight: f64| match class.async_base_s {
        Some(a) if 1.0 / rate > 2.0 * a / in_flight => 1.0 / (1.0 / rate - a / in_flight),
        _ => rate,
    };
    let s_or_floor = |v: &[f64]| {
        if v.len() < 2 {
            class.rms_log
        } else {
            log_var(v).sqrt()
        }
    };
    shapes
        .into_iter()
        .filter_map(|(replicas, bytes, clients, window)| {
            let in_flight = clients * window;
            let kv_rates: Vec<f64> = kv
                .iter()
                .filter(|k| (k.0, k.1, k.2, k.3) == (replicas, bytes, clients, window))
                .map(|k| ceiling(k.4, in_flight))
                .collect();
            let js_rates: Vec<f64> = publishes
                .iter()
                .filter(|r| r.always == always && !r.sync_publish && !r.small_window() && r.subjects <= 1.0)
                .filter(|r| (r.replicas, r.size, r.publishers, r.window) == (replicas, bytes, clients, Some(window)))
                .filter(|r| r.rate > 0.0)
                .map(|r| ceiling(r.rate, in_flight))
                .collect();
            (!js_rates.is_empty()).then(|| KvPutRatio {
                se_log: (s_or_floor(&kv_rates).powi(2) / kv_rates.len() as f64
                    + s_or_floor(&js_rates).powi(2) / js_rates.len() as f64)
                    .sqrt(),
                ratio: median_or_zero(js_rates.clone()) / median_or_zero(kv_rates.clone()),
                replicas,
                bytes,
                clients,
                window,
                kv_rows: kv_rates.len(),
                publish_rows: js_rates.len(),
            })
        })
        .max_by_key(|k| k.kv_rows.min(k.publish_rows))
}

/// The file's readers rows (`js-readers`: synchronous publishes with consumers reading every message, one
/// subject) under `always` or not, against its synchronous one-subject publish rows of the same shape
/// (`ReadersStretch`): the shape (replicas, size, publishers) with the most rows on both sides (of equal
/// ones, the last listed), its reader counts each the median of their rows.
fn readers_stretch(f: &CalibrationFile, always: bool, publishes: &[JsRow]) -> Option<ReadersStretch> {
    let with: Vec<(u8, f64, f64, f64, f64)> = f
        .series
        .iter()
        .flat_map(|s| &s.rows)
        .filter(|r| r.kind == crate::perf::calibration::JS_READERS_KIND && r.fit && r.mode.is_none() && r.one_subject())
        .filter(|r| r.publish_mode.as_deref() == Some("sync") && (r.sync_always() == Some(true)) == always)
        .filter_map(|r| {
            Some((
                r.replicas.unwrap_or(1),
                r.size_bytes()? as f64,
                r.publishers.or(r.workers).unwrap_or(1).max(1) as f64,
                f64::from(r.consumers.filter(|c| *c > 0)?),
                r.measured("pub_msgs_per_s").filter(|v| *v > 0.0)?,
            ))
        })
        .collect();
    let mut shapes: Vec<(u8, f64, f64)> = Vec::new();
    for (replicas, bytes, publishers, _) in distinct_shapes(&with) {
        if !shapes.contains(&(replicas, bytes, publishers)) {
            shapes.push((replicas, bytes, publishers));
        }
    }
    shapes
        .into_iter()
        .filter_map(|(replicas, bytes, publishers)| {
            let base: Vec<f64> = publishes
                .iter()
                .filter(|r| r.always == always && r.sync_publish && r.subjects <= 1.0 && r.rate > 0.0)
                .filter(|r| (r.replicas, r.size, r.publishers) == (replicas, bytes, publishers))
                .map(|r| r.rate)
                .collect();
            if base.is_empty() {
                return None;
            }
            let base_rate = median_or_zero(base.clone());
            let rows: Vec<&(u8, f64, f64, f64, f64)> = with
                .iter()
                .filter(|w| (w.0, w.1, w.2) == (replicas, bytes, publishers))
                .collect();
            // Each reader count's stretch, fewest readers first. Never below 1: readers never speed a
            // publisher up (a pair within noise reads 1).
            let mut counts: Vec<f64> = Vec::new();
            for w in &rows {
                if !counts.contains(&w.3) {
                    counts.push(w.3);
                }
            }
            counts.sort_by(f64::total_cmp);
            let k = |n: f64| {
                let rates: Vec<f64> = rows.iter().filter(|w| w.3 == n).map(|w| w.4).collect();
                (base_rate / median_or_zero(rates)).max(1.0)
            };
            let (lo, hi) = (*counts.first()?, *counts.last()?);
            // Two counts or more whose stretch grows with the readers: what each further reader adds from
            // the fewest and the most, the first reader's share what is left of the fewest's stretch (never
            // below 0: with calibrate's points the fewest is one reader, whose stretch it is exactly). More
            // readers measured faster than fewer is noise that says nothing of a further reader: priced
            // linearly from the fewest, as with one count (never as free).
            let apart = hi > lo && k(hi) >= k(lo);
            let (per_reader, further_reader) = if apart {
                let further = (k(hi) - k(lo)) / (hi - lo);
                ((k(lo) - 1.0 - further * (lo - 1.0)).max(0.0), further)
            } else {
                let each = (k(lo) - 1.0) / lo;
                (each, each)
            };
            Some(ReadersStretch {
                per_reader,
                further_reader,
                further_measured: apart,
                replicas,
                bytes,
                publishers,
                readers: if apart { hi } else { lo },
                readers_rows: rows.len(),
                publish_rows: base.len(),
            })
        })
        // Of equal rows, a shape measured at two reader counts before one measured at one.
        .max_by_key(|s| (s.readers_rows.min(s.publish_rows), s.further_measured))
}

/// The distinct shapes (the first four fields) of rows reduced to `(shape…, rate)`, in the order first seen.
fn distinct_shapes(rows: &[(u8, f64, f64, f64, f64)]) -> Vec<(u8, f64, f64, f64)> {
    let mut shapes: Vec<(u8, f64, f64, f64)> = Vec::new();
    for r in rows {
        if !shapes.contains(&(r.0, r.1, r.2, r.3)) {
            shapes.push((r.0, r.1, r.2, r.3));
        }
    }
    shapes
}

/// The sample variance of the logarithms (0 below two values).
fn log_var(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
    let m = l.iter().sum::<f64>() / l.len() as f64;
    l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (l.len() - 1) as f64
}

/// Least squares of work on size, weighted by 1 ÷ work² (every row counts by its relative error).
pub fn weighted_line(pts: &[(f64, f64)]) -> (f64, f64) {
    if pts.len() == 1 {
        return (pts[0].1, 0.0);
    }
    let w = |p: &(f64, f64)| 1.0 / (p.1 * p.1);
    let n: f64 = pts.iter().map(w).sum();
    let mx = pts.iter().map(|p| w(p) * p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| w(p) * p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| w(p) * (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| w(p) * (p.0 - mx) * (p.1 - my)).sum();
    let b = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    ((my - b * mx).max(1e-9), b)
}
