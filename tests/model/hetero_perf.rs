//! Perf on mixed storage (issue 16): each replica's storage prices its writes, so a stream is as fast as
//! its quorum's storage allows — a fast leader with slow followers is priced at the followers' pace.

use natsplan::catalog::Catalog;
use natsplan::plan::build;

fn stream_ops(disks: [&str; 3]) -> Vec<(String, f64)> {
    let cat = Catalog::builtin();
    let mut y = String::from("site: pace\nnats: { replicas: [3], sync_interval: always }\nracks:\n");
    for (i, d) in disks.iter().enumerate() {
        let r = ["A", "B", "C"][i];
        let s = r.to_lowercase();
        y += &format!(
            "  - name: {r}\n    servers:\n      - name: {s}1\n        disks: {{ disk_model: {d}, count: 2, raid: raid1 }}\n"
        );
    }
    y += "workload:\n  streams:\n    - { name: orders, msgs_per_s: 100, msg_size: 1KiB, retention: 1h, replicas: 3 }\n";
    let site = natsplan::site::parse_str(&y, "site.yaml", &cat).unwrap_or_else(|e| panic!("{e}"));
    let plan = build(&site, &cat);
    plan.layouts
        .iter()
        .filter(|l| l.servers.len() == 3 && l.raid == "raid1")
        .map(|l| {
            assert!(l.predicted.is_some(), "a prediction");
            let s = l
                .per_asset()
                .unwrap()
                .streams
                .iter()
                .find(|s| &*s.name == "orders")
                .expect("orders priced");
            (l.id.clone(), s.ops_per_s)
        })
        .collect()
}

#[test]
fn one_fast_replica_does_not_make_an_r3_stream_fast() {
    let slow = stream_ops(["nl-sas-8t", "nl-sas-8t", "nl-sas-8t"]);
    let one_fast = stream_ops(["nvme-3.84t", "nl-sas-8t", "nl-sas-8t"]);
    let two_fast = stream_ops(["nvme-3.84t", "nvme-3.84t", "nl-sas-8t"]);
    let fast = stream_ops(["nvme-3.84t", "nvme-3.84t", "nvme-3.84t"]);
    assert!(!slow.is_empty() && slow.len() == one_fast.len() && slow.len() == two_fast.len());
    for i in 0..slow.len() {
        // A quorum of R3 is 2: with one NVMe server, every quorum has an NL-SAS volume in it.
        let (s, o, t, f) = (slow[i].1, one_fast[i].1, two_fast[i].1, fast[i].1);
        assert!(
            (o - s).abs() <= 1e-9 * s,
            "{}: one NVMe replica priced {o} vs all NL-SAS {s}",
            one_fast[i].0
        );
        // Two NVMe servers can form a quorum only when the leader is one of them; never slower than all slow.
        assert!(
            t >= s * (1.0 - 1e-9) && t <= f * (1.0 + 1e-9),
            "{}: {s} ≤ {t} ≤ {f}",
            two_fast[i].0
        );
        assert!(f > s * 2.0, "NVMe should be much faster under sync always: {f} vs {s}");
    }
}
