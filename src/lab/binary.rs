//! Finding the nats-server binary and asking its version (bounded: a binary that never answers
//! cannot hang `lab up`).

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The oldest nats-server the lab and the emitted configuration support (`unique_tag` semantics,
/// `/healthz` options and the placement behaviour natsplan plans around).
pub const MIN_VERSION: (u32, u32) = (2, 10);

/// The command that installs a suitable nats-server, named in every "not found" error.
pub const INSTALL_HINT: &str = "scripts/install-nats-server";

/// Find the nats-server binary: `explicit` (`--nats-server PATH`), `$NATS_SERVER_BIN`, the project-local
/// install (`.tools/bin/nats-server` beside the crate, or beside the running binary's `../..`), then `PATH`.
/// The first candidate that exists is checked for its version; a missing or too-old binary is an error
/// naming the install script.
pub fn find_nats_server(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return check_binary(p, "--nats-server");
    }
    if let Some(p) = std::env::var_os("NATS_SERVER_BIN").filter(|v| !v.is_empty()) {
        return check_binary(Path::new(&p), "$NATS_SERVER_BIN");
    }
    for p in local_installs() {
        if p.is_file() {
            return check_binary(&p, "the project-local install");
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("nats-server");
            if p.is_file() {
                return check_binary(&p, "PATH");
            }
        }
    }
    bail!(
        "nats-server not found (looked at --nats-server, $NATS_SERVER_BIN, .tools/bin/nats-server and PATH); \
         install it with `{INSTALL_HINT}` (it prints the path) or pass --nats-server PATH"
    )
}

/// Where the project-local install may be: beside the crate, or found from the running binary
/// (`target/{debug,release}/natsplan` → `../../.tools`, an installed `bin/natsplan` → `../.tools`).
pub(super) fn local_installs() -> Vec<PathBuf> {
    let mut v = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/nats-server")];
    if let Ok(exe) = std::env::current_exe() {
        let mut dir = exe.parent().map(Path::to_path_buf);
        for _ in 0..3 {
            let Some(d) = dir else { break };
            v.push(d.join(".tools/bin/nats-server"));
            dir = d.parent().map(Path::to_path_buf);
        }
    }
    v
}

pub(super) fn check_binary(p: &Path, source: &str) -> Result<PathBuf> {
    if !p.is_file() {
        bail!(
            "nats-server from {source} ({}) does not exist; install it with `{INSTALL_HINT}` or pass --nats-server PATH",
            p.display()
        );
    }
    let v = nats_server_version(p).with_context(|| {
        format!(
            "nats-server from {source} ({}) does not run; reinstall it with `{INSTALL_HINT}`",
            p.display()
        )
    })?;
    if (v.0, v.1) < MIN_VERSION {
        bail!(
            "nats-server from {source} ({}) is v{}.{}.{}, older than the v{}.{} natsplan needs; \
             install a current one with `{INSTALL_HINT}`",
            p.display(),
            v.0,
            v.1,
            v.2,
            MIN_VERSION.0,
            MIN_VERSION.1
        );
    }
    Ok(p.to_path_buf())
}

/// How long `nats-server --version` may take: it answers in milliseconds; a binary that does not within
/// this is not a usable nats-server (a wrapper waiting for input, a hung mount).
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// The version `nats-server --version` prints (`nats-server: v2.15.1`), asked within `VERSION_TIMEOUT`.
pub fn nats_server_version(p: &Path) -> Result<(u32, u32, u32)> {
    nats_server_version_within(p, VERSION_TIMEOUT)
}

/// `nats_server_version` with its own bound: the binary is killed (and reaped) once `limit` passes.
pub fn nats_server_version_within(p: &Path, limit: Duration) -> Result<(u32, u32, u32)> {
    let mut child = Command::new(p)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {} --version", p.display()))?;
    let t0 = Instant::now();
    while child.try_wait()?.is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "{} --version did not answer within {:.0} s; is it a nats-server binary?",
                p.display(),
                limit.as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    parse_version(&text).ok_or_else(|| anyhow!("cannot read a version from `{}`", text.trim()))
}

pub(super) fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let v = text.split_whitespace().find_map(|w| w.strip_prefix('v'))?;
    let mut it = v.split(['.', '-', '+']).map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??, it.next().flatten().unwrap_or(0)))
}
