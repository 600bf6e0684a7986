//! The `full:` scenarios: a follower's store on a small tmpfs, filled by JetStream's own limit or by a
//! file beside it, and what the server did about it.

use super::*;
use crate::bench::{js_failure, JsFailure};
use crate::lab::{self, Lab};
use crate::monitor;
use anyhow::{anyhow, bail, Context, Result};
use async_nats::jetstream::{self, stream};
use sandbox::Tmpfs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A follower's store (or one folder of it) moved onto a small tmpfs (for `full:`); `restore` puts it back on
/// the lab's disk.
pub(super) struct FullStore {
    pub(super) server: usize,
    pub(super) mount: Tmpfs,
    /// The folder the tmpfs covers: the store, or a stream's message folder inside it.
    covered: PathBuf,
    pub(super) conf_text: String,
    /// The file that fills the tmpfs (`FullDisk`).
    pub(super) ballast: Option<PathBuf>,
}

/// tmpfs sizes and `max_file_store` for the two `full:` scenarios: below (JetStream's own limit is hit
/// first) and above (the file system fills first).
pub(super) const FULL_LIMIT_TMPFS_BYTES: u64 = 64 << 20;
pub(super) const FULL_LIMIT_MAX_FILE_STORE_BYTES: u64 = 16 << 20;
pub(super) const FULL_DISK_TMPFS_BYTES: u64 = 32 << 20;
pub(super) const FULL_DISK_MAX_FILE_STORE_BYTES: u64 = 1 << 30;

/// The configuration text with `max_file_store` set (replaced, or added after `store_dir`).
pub(super) fn set_max_file_store(conf: &str, bytes: u64) -> Option<String> {
    let mut out = Vec::new();
    let mut done = false;
    for l in conf.lines() {
        let t = l.trim_start();
        if t.starts_with("max_file_store") {
            if !done {
                out.push(format!("  max_file_store: {bytes}"));
                done = true;
            }
            continue;
        }
        out.push(l.to_string());
        if t.starts_with("store_dir") && !done {
            out.push(format!("  max_file_store: {bytes}"));
            done = true;
        }
    }
    done.then(|| out.join("\n") + "\n")
}

impl FullStore {
    /// Kill server `v`, mount a tmpfs over its store — or over `inside`, a folder of the store — with the
    /// contents carried over, set `max_file_store`, restart it and wait for the cluster to be healthy.
    pub(super) fn setup(
        lab: &mut Lab,
        v: usize,
        tmpfs_bytes: u64,
        max_file_store: u64,
        inside: Option<&Path>,
    ) -> Result<FullStore> {
        let store = lab.nodes()[v].store_dir.clone();
        let covered = match inside {
            Some(rel) => store.join(rel),
            None => store,
        };
        let conf = lab.nodes()[v].conf.clone();
        let save = lab.dir().join(format!("{}-store-save", lab.nodes()[v].name));
        let conf_text = crate::input::read_text(&conf, "server config").map_err(|e| anyhow!("{e}"))?;
        let limited = set_max_file_store(&conf_text, max_file_store)
            .ok_or_else(|| anyhow!("{}: no store_dir line", conf.display()))?;
        lab.kill(v)?;
        let _ = std::fs::remove_dir_all(&save);
        std::fs::create_dir_all(&covered).with_context(|| format!("cannot create {}", covered.display()))?;
        copy_tree(&covered, &save)?;
        let mount = Tmpfs::mount(&covered, tmpfs_bytes)?;
        copy_tree(&save, &covered)?;
        std::fs::remove_dir_all(&save)?;
        std::fs::write(&conf, limited)?;
        let fs = FullStore {
            server: v,
            mount,
            covered,
            conf_text,
            ballast: None,
        };
        lab.restart(v)?;
        wait_healthy(lab, Duration::from_secs(120))?;
        Ok(fs)
    }

    /// Back on the lab's disk with its old configuration: kill, copy out, unmount, copy back, restart.
    pub(super) fn restore(mut self, lab: &mut Lab) -> Result<()> {
        let v = self.server;
        let conf = lab.nodes()[v].conf.clone();
        let save = lab.dir().join(format!("{}-store-save", lab.nodes()[v].name));
        if lab.is_running(v) {
            lab.kill(v)?;
        }
        if let Some(b) = self.ballast.take() {
            let _ = std::fs::remove_file(b);
        }
        let _ = std::fs::remove_dir_all(&save);
        let now = self.mount.current_path();
        if now == self.covered {
            copy_tree(&self.covered, &save)?;
            self.mount.unmount()?;
            std::fs::remove_dir_all(&self.covered)?;
            std::fs::rename(&save, &self.covered)?;
        } else {
            // The covered folder was a deleted stream's: nats-server renamed it away (mount and all) before
            // removing what it could. Nothing in it is kept; leave no empty folders behind either.
            self.mount.unmount()?;
            let _ = std::fs::remove_dir(&now);
            if let Some(p) = now.parent() {
                let _ = std::fs::remove_dir(p);
            }
        }
        std::fs::write(&conf, &self.conf_text)?;
        lab.restart(v)?;
        wait_healthy(lab, Duration::from_secs(120))
    }
}

/// Fill the file system under `dir` with a file until not one more byte fits (256 KiB writes, then 4 KiB,
/// 512 B and single bytes: a fill in big chunks alone leaves up to a chunk free, where small writes still
/// land); returns the file and its size.
pub(super) fn fill_disk(dir: &Path) -> Result<(PathBuf, u64)> {
    use std::io::Write;
    let p = dir.join("natsplan-ballast");
    let mut f = std::fs::File::create(&p).with_context(|| format!("cannot create {}", p.display()))?;
    let mut n = 0u64;
    for size in [256usize << 10, 4096, 512, 1] {
        let chunk = vec![0u8; size];
        loop {
            match f.write(&chunk) {
                Ok(0) => break,
                Ok(k) => n += k as u64,
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => return Err(e).with_context(|| format!("filling {}", p.display())),
            }
        }
    }
    Ok((p, n))
}

/// What a full disk did to server `v` by the time space is freed, from its `/jsz` and `/healthz`:
/// JetStream disabled (a RAFT log write met ENOSPC: `handleOutOfSpace`, server/jetstream.go), a replica
/// stopped by its stream's write error (`setWriteErrLocked`, server/stream.go: kept until nats-server
/// restarts), or nothing to see.
pub(super) fn full_disk_effect(monitor_url: &str) -> FullDiskEffect {
    if !jetstream_enabled(monitor_url) {
        return FullDiskEffect::JetStreamDisabled;
    }
    match monitor::get(monitor_url, "/healthz", Duration::from_secs(2)) {
        Ok(r) if r.body.contains("write error") => FullDiskEffect::ReplicaStopped(
            serde_json::from_str::<serde_json::Value>(&r.body)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_string))
                .unwrap_or_else(|| r.body.trim().to_string()),
        ),
        _ => FullDiskEffect::None,
    }
}

/// `full_disk_effect`'s answer.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum FullDiskEffect {
    JetStreamDisabled,
    /// The `/healthz` error, e.g. "JetStream stream '$G > S' is not current: stream write error: expected
    /// sequence does not match store".
    ReplicaStopped(String),
    None,
}

impl FullDiskEffect {
    pub(super) fn describe(&self, node: &str) -> String {
        match self {
            FullDiskEffect::JetStreamDisabled => {
                format!("JetStream on {node} had disabled itself (a RAFT log write met ENOSPC)")
            }
            FullDiskEffect::ReplicaStopped(e) => format!(
                "{node}'s replica had stopped for good with its write error (\"{e}\"; an observer until a restart)"
            ),
            FullDiskEffect::None => format!("{node} showed no write error and JetStream stayed on"),
        }
    }
}

/// Lines of a server's log that tell what a full store did (JetStream's own words).
pub(super) fn full_log_lines(log: &Path, lab_dir: &Path) -> Vec<String> {
    let tail = lab::log_tail(log, 1 << 20);
    let dir = format!("{}/", lab_dir.display());
    let mut v: Vec<String> = tail
        .lines()
        .filter(|l| {
            let x = l.to_lowercase();
            x.contains("out of space")
                || x.contains("out of resources")
                || x.contains("disabled")
                || x.contains("insufficient")
                || x.contains("no space left")
                || x.contains("write error")
        })
        // "[pid] 2026/11/30 08:40:45.172 [ERR] text" → "[ERR] text"
        .map(|l| match l.trim().splitn(4, ' ').collect::<Vec<_>>().as_slice() {
            [pid, _, _, rest] if pid.starts_with('[') => rest.replace(&dir, ""),
            _ => l.trim().replace(&dir, ""),
        })
        // The RAFT layer repeats the file store's write error: keep one of each message.
        .filter(|l| !l.contains("RAFT ["))
        .collect();
    v.dedup();
    v.truncate(4);
    v
}

/// Whether JetStream runs on the server behind `monitor_url` (`/jsz` answers and is not disabled).
pub(super) fn jetstream_enabled(monitor_url: &str) -> bool {
    match monitor::jsz(monitor_url, "", Duration::from_secs(2)) {
        Ok(j) => j.get("disabled").and_then(|d| d.as_bool()) != Some(true),
        Err(_) => false,
    }
}

/// Publish 256 KiB messages to a one-replica stream placed on server `node` until the server refuses;
/// returns (bytes accepted, the refusal).
pub(super) async fn fill_with_stream(
    js: &jetstream::Context,
    name: &str,
    node: &str,
    max_bytes: u64,
) -> Result<(u64, String)> {
    let subject = format!("natsplan.filler.{name}");
    let cfg = stream::Config {
        name: name.into(),
        subjects: vec![subject.clone()],
        num_replicas: 1,
        storage: stream::StorageType::File,
        placement: Some(stream::Placement {
            cluster: None,
            tags: vec![format!("node:{node}")],
        }),
        ..Default::default()
    };
    let mut last = String::new();
    let mut created = false;
    for _ in 0..20 {
        match js.get_or_create_stream(cfg.clone()).await {
            Ok(_) => {
                created = true;
                break;
            }
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    if !created {
        bail!("cannot create the filler stream {name} on {node}: {last}");
    }
    let payload = bytes::Bytes::from(vec![b'x'; 256 << 10]);
    let mut accepted = 0u64;
    let cap = max_bytes * 2 / (256 << 10) + 16;
    // A new stream's subject takes a moment to be known everywhere ("no stream found", timeouts): retry
    // those for a while; the refusal that ends the fill must be JetStream's own storage limit.
    let mut transient = 0;
    let mut sent = 0;
    while sent < cap {
        let r = tokio::time::timeout(Duration::from_secs(5), async {
            js.publish(subject.clone(), payload.clone()).await?.await
        })
        .await;
        let (err, no_room) = match r {
            Ok(Ok(_)) => {
                accepted += payload.len() as u64;
                sent += 1;
                transient = 0;
                continue;
            }
            Ok(Err(e)) => (e.to_string(), js_failure(&e) == JsFailure::NoRoom),
            Err(_) => ("no acknowledgement within 5 s".to_string(), false),
        };
        if no_room {
            return Ok((accepted, err));
        }
        transient += 1;
        if transient > 20 {
            bail!("the filler stream on {node} never filled its store: {err} ({accepted} bytes accepted)");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    bail!("{node} never refused the filler stream ({accepted} bytes accepted, max_file_store {max_bytes})")
}

/// Purge the filler, show that it takes writes again, delete it; returns what happened.
pub(super) async fn purge_and_retry(js: &jetstream::Context, name: &str) -> String {
    let subject = format!("natsplan.filler.{name}");
    let purged = match js.get_stream(name).await {
        Ok(s) => s.purge().await.map(|_| ()).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let retry = tokio::time::timeout(Duration::from_secs(5), async {
        js.publish(subject.clone(), bytes::Bytes::from_static(b"after purge"))
            .await?
            .await
    })
    .await;
    let _ = js.delete_stream(name).await;
    match (purged, retry) {
        (Err(e), _) => format!("purge failed: {e}"),
        (Ok(()), Ok(Ok(_))) => "after a purge it takes writes again".into(),
        (Ok(()), Ok(Err(e))) => format!("after a purge it still refuses: {e}"),
        (Ok(()), Err(_)) => "after a purge a write got no acknowledgement within 5 s".into(),
    }
}
