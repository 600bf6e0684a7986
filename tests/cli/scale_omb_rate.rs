//! OMB max-rate workloads (`producerRate: 0` and OMB's `producerRate: 10000000`, "discover the max
//! sustainable rate") are no rate to size storage for: design refuses them with exit 2 naming
//! `--omb-rate R`, and with the flag sizes the streams at R and says so — never at 10 M msgs/s.

use assert_cmd::Command;
use std::io::Write;

const SITE: &str = r#"
site: omb-rate
nats: { replicas: [3] }
racks:
  - { name: A, servers: [a1], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
"#;

fn file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

#[test]
fn max_rate_files_are_refused_naming_omb_rate_and_sized_at_it_when_given() {
    let site = file(SITE);
    for rate in ["0", "10000000"] {
        let omb = file(&format!(
            "name: max-rate-10-topics\ntopics: 10\nmessageSize: 1024\nsubscriptionsPerTopic: 1\nproducerRate: {rate}\n"
        ));
        let out = Command::cargo_bin("natsplan")
            .unwrap()
            .args(["design", "--format", "json", "--omb-retention", "1h", "--omb"])
            .arg(omb.path())
            .arg(site.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rate}: {err}");
        assert!(err.contains("--omb-rate R") && err.contains(":5:15:"), "{rate}: {err}");

        let out = Command::cargo_bin("natsplan")
            .unwrap()
            .args([
                "design",
                "--format",
                "json",
                "--omb-retention",
                "1h",
                "--omb-rate",
                "1000",
                "--omb",
            ])
            .arg(omb.path())
            .arg(site.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{rate}: {err}");
        assert!(err.contains("sized at --omb-rate 1000 msgs/s"), "{rate}: {err}");
        let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let needed = plan["layouts"][0]["capacity"]["needed_bytes"].as_f64().unwrap();
        // 1,000 msgs/s of ~1 KiB kept an hour, three replicas: gigabytes, not the petabytes of 10 M msgs/s.
        assert!(needed < 1e11, "{rate}: needed {needed} bytes");
    }
}
