//! The store probe: a short measurement of the store filesystem's small-write and fsync latency, recorded
//! as a `store-probe` row so a calibration measured under delayed sync can price `sync_interval: always`
//! through the modelled fsync cost (perf::leader) instead of needing its own always-mode rows.
//!
//! What it times mirrors what nats-server does per message under `always` (perf::leader's module doc): one
//! small `write` into the page cache (the stream store's per-message write at R>1), and one small write
//! followed by `fsync` (the RAFT WAL's fsync per append entry; the R1 store's per message). It can only
//! run where the store is: calibrate runs it when every server is on loopback (the lab), in a temporary
//! directory of the same machine, and says which filesystem that was.

use crate::perf::calibration::{Row, Series};
use crate::stats::median_sorted;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Small writes timed, and fsyncs timed (each a separate write + fsync).
const WRITES: usize = 4000;
const FSYNCS: usize = 60;
/// Bytes per probe write: a small JetStream record (128 B payload plus framing).
const WRITE_BYTES: usize = 200;
/// Bytes per fsynced write: a small append entry.
const FSYNC_BYTES: usize = 4096;
/// A large append entry (raft.go `runAsLeader` batches up to 256 KiB): the difference between its fsync and
/// the small one's is what each further byte costs the device under `always`.
const LARGE_FSYNC_BYTES: usize = 256 * 1024;
const LARGE_FSYNCS: usize = 20;

/// Medians of the probe, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    pub write_s: f64,
    pub fsync_s: f64,
    /// One RAFT commit's fsync chain on this host (leader, then two followers at once; see `commit_chain`):
    /// what `always` adds to a synchronous publish when the whole cluster shares the host's device.
    pub commit_s: f64,
    /// Means of the same fsyncs and commit chains: how long the device's tail is. Recorded, not priced:
    /// priced at the mean, the second lab session under-predicted `always` by 20-60 % (the mean is
    /// carried by other tenants' I/O bursts the probe catches more often than the runs do).
    pub fsync_mean_s: f64,
    pub commit_mean_s: f64,
    /// (p90 − p10) ÷ median of the fsyncs: how noisy the device was.
    pub fsync_spread: f64,
    /// Seconds per byte a write + fsync costs beyond the small one: (median 256 KiB write + fsync − median
    /// 4 KiB write + fsync) ÷ the bytes between them; 0 when the large one was not slower.
    pub sync_byte_s: f64,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Time small writes and fsyncs in a file under `dir` (removed afterwards).
pub fn run(dir: &Path) -> std::io::Result<Probe> {
    let path = dir.join(format!("natsplan-store-probe-{}.dat", std::process::id()));
    let r = measure(&path);
    let _ = std::fs::remove_file(&path);
    r
}

/// Median latency of `n` write + fsync of `bytes` each on `f`.
fn fsync_median(f: &mut std::fs::File, n: usize, bytes: usize) -> std::io::Result<(f64, Vec<f64>)> {
    let block = vec![b'y'; bytes];
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f.write_all(&block)?;
        // fsync(2), as Go's File.Sync that filestore.go calls (`mb.mfd.Sync()`), not fdatasync.
        f.sync_all()?;
        v.push(t.elapsed().as_secs_f64());
    }
    v.sort_by(f64::total_cmp);
    Ok((median_sorted(&v), v))
}

/// The fsync chain of one RAFT commit on a host that runs the whole cluster (raft.go: the leader's
/// `storeToWAL` fsyncs before it sends the append entry; each follower's `processAppendEntry` fsyncs before
/// it answers; a quorum of one follower commits at R3): a leader thread appends and fsyncs its file, then
/// two follower threads append and fsync theirs; the commit is timed to the first follower's answer.
/// Returns the median and the mean commit time, or an error when a thread could not run.
fn commit_chain(path: &Path, rounds: usize) -> std::io::Result<(f64, f64)> {
    use std::sync::mpsc;
    let open = |p: &Path| {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(p)
    };
    let files: Vec<std::path::PathBuf> = (0..3).map(|i| path.with_extension(format!("raft{i}"))).collect();
    let mut leader = open(&files[0])?;
    let block = vec![b'r'; FSYNC_BYTES];
    let (done_tx, done_rx) = mpsc::channel::<std::io::Result<()>>();
    let mut go = Vec::new();
    let mut handles = Vec::new();
    for p in &files[1..] {
        let (tx, rx) = mpsc::channel::<bool>();
        go.push(tx);
        let mut f = open(p)?;
        let done = done_tx.clone();
        let block = block.clone();
        handles.push(std::thread::spawn(move || {
            while let Ok(true) = rx.recv() {
                let r = f.write_all(&block).and_then(|_| f.sync_all());
                if done.send(r).is_err() {
                    break;
                }
            }
        }));
    }
    let mut times = Vec::with_capacity(rounds);
    let mut result = Ok(());
    for _ in 0..rounds {
        let t = Instant::now();
        if let Err(e) = leader.write_all(&block).and_then(|_| leader.sync_all()) {
            result = Err(e);
            break;
        }
        for g in &go {
            let _ = g.send(true);
        }
        // The first answer commits; the second is drained before the next round.
        let first = done_rx
            .recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("probe follower stopped")));
        times.push(t.elapsed().as_secs_f64());
        let second = done_rx
            .recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("probe follower stopped")));
        if let Err(e) = first.and(second) {
            result = Err(e);
            break;
        }
    }
    for g in &go {
        let _ = g.send(false);
    }
    for h in handles {
        let _ = h.join();
    }
    for p in &files {
        let _ = std::fs::remove_file(p);
    }
    result?;
    times.sort_by(f64::total_cmp);
    Ok((median_sorted(&times), mean(&times)))
}

fn measure(path: &Path) -> std::io::Result<Probe> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(path)?;
    let small = vec![b'x'; WRITE_BYTES];
    // Writes in batches of 100, each batch timed (a single write is below the clock's resolution).
    let mut writes = Vec::with_capacity(WRITES / 100);
    for _ in 0..WRITES / 100 {
        let t = Instant::now();
        for _ in 0..100 {
            f.write_all(&small)?;
        }
        writes.push(t.elapsed().as_secs_f64() / 100.0);
    }
    let (m, fsyncs) = fsync_median(&mut f, FSYNCS, FSYNC_BYTES)?;
    let (large, _) = fsync_median(&mut f, LARGE_FSYNCS, LARGE_FSYNC_BYTES)?;
    writes.sort_by(f64::total_cmp);
    let p = |q: f64| fsyncs[((fsyncs.len() - 1) as f64 * q).round() as usize];
    let (commit_s, commit_mean_s) = commit_chain(path, FSYNCS / 2)?;
    Ok(Probe {
        write_s: median_sorted(&writes),
        fsync_s: m,
        commit_s,
        fsync_mean_s: mean(&fsyncs),
        commit_mean_s,
        fsync_spread: if m > 0.0 { (p(0.9) - p(0.1)) / m } else { 0.0 },
        sync_byte_s: ((large - m) / (LARGE_FSYNC_BYTES - FSYNC_BYTES) as f64).max(0.0),
    })
}

/// Several probe runs as one: the median of each median and of the spreads, the mean of the means. None
/// without any run. Calibrate pools the probes it takes between its runs: on a shared disk one idle moment
/// read fsync 0.12 ms where the probes taken while the lab ran read 0.38 ms (docs/calibrate.md).
pub fn pool(runs: &[Probe]) -> Option<Probe> {
    if runs.is_empty() {
        return None;
    }
    let med = |f: fn(&Probe) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        median_sorted(&v)
    };
    let avg = |f: fn(&Probe) -> f64| runs.iter().map(f).sum::<f64>() / runs.len() as f64;
    Some(Probe {
        write_s: med(|p| p.write_s),
        fsync_s: med(|p| p.fsync_s),
        commit_s: med(|p| p.commit_s),
        fsync_mean_s: avg(|p| p.fsync_mean_s),
        commit_mean_s: avg(|p| p.commit_mean_s),
        fsync_spread: med(|p| p.fsync_spread),
        sync_byte_s: med(|p| p.sync_byte_s),
    })
}

/// The probe as a calibration series (one `store-probe` row).
pub fn series(p: &Probe, dir: &Path, filesystem: &str) -> Series {
    let mut values = BTreeMap::new();
    values.insert("write_us".to_string(), p.write_s * 1e6);
    values.insert("fsync_ms".to_string(), p.fsync_s * 1e3);
    values.insert("commit_ms".to_string(), p.commit_s * 1e3);
    values.insert("fsync_mean_ms".to_string(), p.fsync_mean_s * 1e3);
    values.insert("commit_mean_ms".to_string(), p.commit_mean_s * 1e3);
    values.insert("fsync_spread".to_string(), p.fsync_spread);
    values.insert("sync_byte_ns".to_string(), p.sync_byte_s * 1e9);
    Series {
        name: "store-probe".into(),
        table: format!(
            "store probe: median of {} {WRITE_BYTES} B writes, median and mean of {FSYNCS} {FSYNC_BYTES} B write+fsync and of {} commit chains, median of {LARGE_FSYNCS} {LARGE_FSYNC_BYTES} B write+fsync, in {} ({filesystem})",
            WRITES,
            FSYNCS / 2,
            dir.display()
        ),
        conditions: BTreeMap::new(),
        rows: vec![Row {
            label: "store-probe".into(),
            kind: "store-probe".into(),
            servers: None,
            replicas: None,
            raid: None,
            write_cache: None,
            sync: None,
            size: Some(format!("{FSYNC_BYTES}B")),
            workers: None,
            workers_placement: None,
            publishers: None,
            publishers_low: None,
            window: None,
            subscribers: None,
            consumers: None,
            consumers_placement: None,
            publish_mode: None,
            subjects: None,
            storage: Some("file".into()),
            mode: None,
            msgs: Some((WRITES + FSYNCS + LARGE_FSYNCS) as u64),
            values,
            derived: vec![],
            flags: vec![],
            fit: true,
            note: Some(
                "priced into sync always by perf::leader: fsync_ms (median) per append entry on the leader, commit_ms (median) for one RAFT commit's fsync chain on a host running the whole cluster, sync_byte_ns per byte of every copy the device writes under always (the 256 KiB and 4 KiB fsyncs' difference); fsync_mean_ms and commit_mean_ms show the device's tail and are not priced; pooled over probes taken between the bench runs and after them"
                    .into(),
            ),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_measures_positive_latencies_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let p = run(dir.path()).unwrap();
        assert!(p.write_s > 0.0 && p.fsync_s > 0.0, "{p:?}");
        assert!(
            p.fsync_s > p.write_s,
            "an fsync costs more than a page-cache write: {p:?}"
        );
        assert!(p.commit_s > 0.0);
        assert!(p.sync_byte_s >= 0.0 && p.sync_byte_s.is_finite(), "{p:?}");
        assert!(p.fsync_mean_s > 0.0 && p.commit_mean_s > 0.0, "{p:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let s = series(&p, dir.path(), "ext4");
        assert_eq!(s.rows[0].kind, "store-probe");
        assert!(s.rows[0].values["fsync_ms"] > 0.0);
        assert!(s.rows[0].values["fsync_mean_ms"] > 0.0 && s.rows[0].values["commit_mean_ms"] > 0.0);
        assert!(s.rows[0].values.contains_key("sync_byte_ns"));
    }

    #[test]
    fn pooled_probes_take_the_median_of_medians_and_the_mean_of_means() {
        let p = |f: f64, m: f64| Probe {
            write_s: 1e-6,
            fsync_s: f,
            commit_s: 2.0 * f,
            fsync_mean_s: m,
            commit_mean_s: 2.0 * m,
            fsync_spread: 0.1,
            sync_byte_s: 1e-9,
        };
        assert!(pool(&[]).is_none());
        // One idle reading among loaded ones does not set the figure.
        let all = [p(0.12e-3, 0.13e-3), p(0.38e-3, 1.0e-3), p(0.40e-3, 2.0e-3)];
        let q = pool(&all).unwrap();
        assert!((q.fsync_s - 0.38e-3).abs() < 1e-12, "{q:?}");
        assert!((q.commit_s - 0.76e-3).abs() < 1e-12, "{q:?}");
        assert!((q.fsync_mean_s - 1.043333e-3).abs() < 1e-8, "{q:?}");
    }

    #[test]
    #[ignore = "prints this machine's probe; run by hand with --ignored --nocapture"]
    fn print_probe() {
        let dir = std::env::var("PROBE_DIR").unwrap_or_else(|_| std::env::temp_dir().display().to_string());
        for _ in 0..5 {
            println!("{:?}", run(Path::new(&dir)).unwrap());
        }
    }
}
