//! Helpers shared by the CLI tests that run the binary against no cluster.

use assert_cmd::Command;
use std::time::Duration;

/// A loopback port with nothing listening (bound, then released).
pub fn dead_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("nats://127.0.0.1:{port}")
}

pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
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
