//! The harness every CLI and live test shares: the binary as a command, a runner that returns (exit
//! code, stdout, stderr), a guard that runs live tests one at a time within a test binary, and a
//! loopback URL with nothing behind it. (Each test binary compiles this module; not every one uses all.)
#![allow(dead_code)]

use assert_cmd::Command;
use std::time::Duration;
use tokio::sync::{Mutex, MutexGuard};

/// The natsplan binary built for the tests.
pub fn natsplan() -> Command {
    Command::cargo_bin("natsplan").expect("binary built")
}

/// Run natsplan with `args` (no NATS_URL from the environment, a 60 s limit): (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = natsplan()
        .env_remove("NATS_URL")
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// One lock for every test of a binary that starts a cluster; a tokio mutex so async tests can hold it
/// across `.await` too, and one that a panicking test does not poison.
static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

/// One live cluster at a time in this test binary (2 cores): hold the guard for the test's length. For
/// plain `#[test]`s (it blocks; inside an async test use `serial_async`).
pub fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.blocking_lock()
}

/// `serial` for `#[tokio::test]`s.
pub async fn serial_async() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().await
}

/// A loopback port with nothing listening (bound, then released).
pub fn dead_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("nats://127.0.0.1:{port}")
}

/// A file of the repository, by its path from the crate root.
pub fn repo_file(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// `natsplan lab down --dir DIR` when dropped, however the test ends: a detached `lab up` outlives its
/// command, so a failed assertion between up and down would otherwise leave its nats-servers running
/// after the temporary folder is gone. Declare it after the `TempDir` so it drops first.
#[allow(dead_code)] // not every test binary starts a detached lab
pub struct LabDown(pub std::path::PathBuf);

impl Drop for LabDown {
    fn drop(&mut self) {
        let _ = natsplan()
            .args(["lab", "down", "--dir"])
            .arg(&self.0)
            .timeout(Duration::from_secs(60))
            .output();
    }
}

/// Run natsplan with `args` under a 2 GiB address-space limit (an allocation of gigabytes aborts instead
/// of swapping the machine), no NATS_URL and no nats-server to find (a lab or fault run that got past
/// its checks fails at once): (exit code, stderr).
pub fn run_limited(args: &[&str]) -> (i32, String) {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("natsplan"));
    cmd.env_remove("NATS_URL")
        .env("NATS_SERVER_BIN", "/nonexistent/nats-server")
        .args(args);
    // SAFETY: only setrlimit(2), in the child between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let two_gib = 2u64 << 30;
            let lim = libc::rlimit {
                rlim_cur: two_gib,
                rlim_max: two_gib,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let out = Command::from_std(cmd)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Load made on purpose (issue 37's busy host): one busy-looping `sh` per CPU of this machine, killed
/// when dropped. They are neither natsplan nor nats-server, so `hostload` counts them as other processes.
pub struct BusyHost(Vec<std::process::Child>);

impl BusyHost {
    pub fn start() -> BusyHost {
        let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        BusyHost(
            (0..n)
                .map(|_| {
                    std::process::Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdin(std::process::Stdio::null())
                        .spawn()
                        .expect("sh")
                })
                .collect(),
        )
    }
}

impl Drop for BusyHost {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
