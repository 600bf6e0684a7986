//! Generated sites for property tests and benchmarks: a seeded description turned into site YAML, so
//! generated sites go through the same parser users' files do. `large()` is the benchmark site of
//! issue 2 (≥ 24 racks, ≥ 100 servers, ≥ 48 arrays of 12 disks, ≥ 500 streams).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A generated site before it is written out as YAML.
#[derive(Debug, Clone)]
pub struct GenSite {
    pub racks: Vec<GenRack>,
    pub replicas: Vec<u8>,
    pub sync: String,
    pub streams: Vec<(String, f64, u64, String, Option<u8>, u32)>,
    pub patterns: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct GenRack {
    pub name: String,
    pub servers: Vec<String>,
    /// (name, model, disk model, disks, hot spares)
    pub arrays: Vec<(String, String, String, u32, u32)>,
}

impl GenSite {
    /// The site as YAML. `reverse` writes racks, servers, arrays and streams in reverse order (the same
    /// site, differently ordered: ids and ranking must not change).
    pub fn to_yaml(&self, reverse: bool) -> String {
        let ord = |n: usize| -> Vec<usize> {
            let mut v: Vec<usize> = (0..n).collect();
            if reverse {
                v.reverse();
            }
            v
        };
        let mut s = String::from("site: generated\n");
        s.push_str(&format!(
            "nats: {{ replicas: [{}], sync_interval: {} }}\n",
            self.replicas
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            self.sync
        ));
        s.push_str("racks:\n");
        for ri in ord(self.racks.len()) {
            let r = &self.racks[ri];
            s.push_str(&format!("  - name: {}\n", r.name));
            let servers: Vec<&str> = ord(r.servers.len())
                .into_iter()
                .map(|i| r.servers[i].as_str())
                .collect();
            s.push_str(&format!("    servers: [{}]\n", servers.join(", ")));
            s.push_str("    arrays:\n");
            if r.arrays.is_empty() {
                s.truncate(s.len() - "    arrays:\n".len());
            }
            for ai in ord(r.arrays.len()) {
                let (n, m, d, k, h) = &r.arrays[ai];
                s.push_str(&format!(
                    "      - {{ name: {n}, model: {m}, disk_model: {d}, disks: {k}, hot_spares: {h} }}\n"
                ));
            }
        }
        s.push_str("workload:\n  streams:\n");
        if self.streams.is_empty() {
            s.push_str("    []\n");
        }
        for si in ord(self.streams.len()) {
            let (n, rate, size, ret, r, c) = &self.streams[si];
            s.push_str(&format!(
                "    - {{ name: {n}, msgs_per_s: {rate}, msg_size: {size}B, retention: {ret}, consumers: {c}"
            ));
            if let Some(r) = r {
                s.push_str(&format!(", replicas: {r}"));
            }
            s.push_str(" }\n");
        }
        s.push_str(&format!(
            "policy: {{ patterns: [{}], hot_spares_per_array: 1 }}\n",
            self.patterns
                .iter()
                .map(|p| format!("\"{p}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        s
    }
}

/// A small random site: 1–4 racks, 0–3 servers and 0–2 arrays each, a few streams.
pub fn small(seed: u64) -> GenSite {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let nr = rng.random_range(1..=4);
    let mut racks = Vec::new();
    let mut sn = 0;
    for r in 0..nr {
        let name = format!("R{r}");
        let servers: Vec<String> = (0..rng.random_range(0..=3))
            .map(|_| {
                sn += 1;
                format!("s{sn}")
            })
            .collect();
        let arrays = (0..rng.random_range(0..=2))
            .map(|a| {
                let disks = rng.random_range(1..=12);
                let spares = rng.random_range(0..=1).min(disks - 1);
                (
                    format!("{name}a{a}"),
                    "EF300".to_string(),
                    "nvme-1.92t".to_string(),
                    disks,
                    spares,
                )
            })
            .collect();
        racks.push(GenRack { name, servers, arrays });
    }
    if racks.iter().all(|r| r.servers.is_empty()) {
        racks[0].servers.push("s0".into());
    }
    let mut replicas = vec![[1u8, 2, 3, 3, 3, 4, 5, 5][rng.random_range(0..8)]];
    if rng.random_bool(0.5) {
        let r2 = [3u8, 5][rng.random_range(0..2)];
        if !replicas.contains(&r2) {
            replicas.push(r2);
        }
    }
    let streams = (0..rng.random_range(0..=4))
        .map(|i| {
            let pinned = if rng.random_bool(0.3) {
                Some([1u8, 3, 5][rng.random_range(0..3)])
            } else {
                None
            };
            (
                format!("st{i}"),
                rng.random_range(1..=5000) as f64,
                rng.random_range(16..=65536),
                ["1h", "6h", "24h"][rng.random_range(0..3)].to_string(),
                pinned,
                rng.random_range(0..=2),
            )
        })
        .collect();
    let all = ["1", "2", "3", "4", "ddp-raid1", "raid6"];
    let patterns: Vec<String> = all
        .iter()
        .filter(|_| rng.random_bool(0.7))
        .map(|p| p.to_string())
        .collect();
    GenSite {
        racks,
        replicas,
        sync: if rng.random_bool(0.5) {
            "always".into()
        } else {
            "2m".into()
        },
        streams,
        patterns: if patterns.is_empty() {
            vec!["1".into()]
        } else {
            patterns
        },
    }
}

/// The benchmark site: 24 racks × 5 servers (120), 2 arrays of 12 disks per rack (48), 500 streams.
pub fn large() -> GenSite {
    let mut racks = Vec::new();
    for r in 0..24 {
        let name = format!("rack{r:02}");
        let servers = (0..5).map(|s| format!("n{r:02}-{s}")).collect();
        let arrays = (0..2)
            .map(|a| {
                (
                    format!("{name}-ef{a}"),
                    "EF600".to_string(),
                    "nvme-7.68t".to_string(),
                    12,
                    1,
                )
            })
            .collect();
        racks.push(GenRack { name, servers, arrays });
    }
    let streams = (0..500)
        .map(|i| {
            (
                format!("stream{i:03}"),
                200.0 + (i % 7) as f64 * 100.0,
                512 + (i % 5) * 512,
                "24h".to_string(),
                None,
                (i % 3) as u32,
            )
        })
        .collect();
    GenSite {
        racks,
        replicas: vec![3, 5],
        sync: "2m".into(),
        streams,
        patterns: ["1", "2", "3", "4"].iter().map(|s| s.to_string()).collect(),
    }
}

/// Site text for unit tests: `head` (the `site:`, `nats:` and `policy:` lines), `racks` racks R0, R1, …
/// of `servers` servers each (a0, b0, …) and one array A0, A1, … whose flow map holds `array(r)` after
/// its name, then `streams` streams s0, s1, … with `stream(s)` after the name. The caller appends `kv:`
/// and `object_stores:` lists if it wants them.
#[cfg(test)]
pub(crate) fn test_site(
    head: &str,
    racks: usize,
    servers: usize,
    array: impl Fn(usize) -> String,
    streams: usize,
    stream: impl Fn(usize) -> String,
) -> String {
    let mut t = format!("{head}racks:\n");
    for r in 0..racks {
        let names: Vec<String> = (0..servers)
            .map(|i| format!("{}{r}", char::from(b'a' + i as u8)))
            .collect();
        t.push_str(&format!(
            "  - name: R{r}\n    servers: [{}]\n    arrays:\n      - {{ name: A{r}, {} }}\n",
            names.join(", "),
            array(r)
        ));
    }
    t.push_str("workload:\n  streams:\n");
    for s in 0..streams {
        t.push_str(&format!("    - {{ name: s{s}, {} }}\n", stream(s)));
    }
    t
}

/// The array of `test_site`'s racks in most tests: an EF600 of 12 NVMe disks.
#[cfg(test)]
pub(crate) const EF600_12: &str = "model: EF600, disk_model: nvme-3.84t, disks: 12";
