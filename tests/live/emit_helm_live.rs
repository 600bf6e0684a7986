//! Issue 50: the `nats.conf` the nats Helm chart renders from `emit --helm-values`, run as the chart's
//! pods would run it, on loopback: three nats-server processes on that one file (ports, hosts, routes and
//! store folders swapped for loopback ones), each with the environment its pod gets — `SERVER_NAME` (the
//! pod name), the system password, and `NATS_RACK_TAG` expanded from the values' `rack:$(NATS_RACK)` with the
//! rack its node's zone label would give. Each server reports its planned rack tag (`/varz`), the planned
//! `max_file_store`, and the emitted R3 stream's replicas land on three different racks (`unique_tag`).

use natsplan::catalog::Catalog;
use natsplan::emit::{self, EmitOptions};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(conf: &Path, log: &Path, env: &[(&str, String)]) -> Server {
    let bin = natsplan::lab::find_nats_server(None).expect("nats-server (scripts/install-nats-server)");
    let mut cmd = std::process::Command::new(bin);
    cmd.arg("-c")
        .arg(conf)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    // SAFETY: prctl in the child before exec, async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    Server(cmd.spawn().unwrap())
}

fn varz(port: u16) -> Value {
    let t0 = Instant::now();
    loop {
        match natsplan::monitor::varz(&format!("http://127.0.0.1:{port}"), Duration::from_secs(3)) {
            Ok(v) => return v,
            Err(e) => assert!(t0.elapsed() < Duration::from_secs(30), "no /varz on {port}: {e}"),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

async fn ask_until_ok(nc: &async_nats::Client, subject: &str, body: Value) -> Value {
    let t0 = Instant::now();
    loop {
        let r = tokio::time::timeout(
            Duration::from_secs(5),
            nc.request(subject.to_string(), body.to_string().into()),
        )
        .await;
        if let Ok(Ok(m)) = r {
            let v: Value = serde_json::from_slice(&m.payload).unwrap_or(Value::Null);
            if v.get("error").is_none() && !v.is_null() {
                return v;
            }
            assert!(t0.elapsed() < Duration::from_secs(60), "{subject}: {v}");
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{subject}: no answer");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_charts_one_config_gives_each_pod_its_rack_tag_and_places_r3_over_the_racks() {
    let _s = crate::common::serial_async().await;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let path = format!("{}/examples/three-racks-raid1.yaml", env!("CARGO_MANIFEST_DIR"));
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(&std::fs::read_to_string(&path).unwrap(), &path, &cat).unwrap();
    let plan = natsplan::plan::build(&site, &cat);
    let layout = &plan.layouts[0];
    assert_eq!(layout.unique_tag.as_deref(), Some("rack:"));
    let opts = EmitOptions::default();
    let helm = emit::helm::render(&plan, &layout.id, &opts, "nats-jetstream").unwrap();
    let files = emit::render_all(&plan, &layout.id, &opts).unwrap();
    let n = layout.servers.len();
    let ports = natsplan::lab::free_ports(3 * n).unwrap();
    // Each pod's file: the chart's one configuration with loopback listeners, routes to the other
    // processes, its own store folder (the pod's volume at the chart's /data) and pid file.
    let pod_conf = |i: usize, store: &Path| {
        let mut c = helm
            .nats_conf
            .replace(
                "\"port\": 4222,",
                &format!("\"host\": \"127.0.0.1\",\n  \"port\": {},", ports[3 * i]),
            )
            .replace(
                "\"http_port\": 8222,",
                &format!("\"http\": \"127.0.0.1:{}\",", ports[3 * i + 2]),
            )
            .replace(
                "\"port\": 6222,",
                &format!("\"host\": \"127.0.0.1\",\n    \"port\": {},", ports[3 * i + 1]),
            )
            .replace("\"/data\"", &format!("{:?}", store.join("data").display().to_string()))
            .replace(
                "\"/var/run/nats/nats.pid\"",
                &format!("{:?}", store.join("nats.pid").display().to_string()),
            );
        for j in 0..n {
            c = c.replace(
                &format!("nats://nats-{j}.nats-headless:6222"),
                &format!("nats://127.0.0.1:{}", ports[3 * j + 1]),
            );
        }
        assert!(
            !c.contains("nats-headless") && !c.contains(":4222") && !c.contains("8222,"),
            "{c}"
        );
        c
    };
    let env_tag = helm.values["container"]["env"]["NATS_RACK_TAG"]
        .as_str()
        .unwrap()
        .to_string();
    let mut servers = Vec::new();
    let mut racks = std::collections::BTreeMap::new();
    for (i, s) in layout.servers.iter().enumerate() {
        let d = dir.join(format!("pod-{i}"));
        std::fs::create_dir_all(&d).unwrap();
        // The pod's store is its own volume mounted at the chart's /data.
        std::fs::write(d.join("nats.conf"), pod_conf(i, &d)).unwrap();
        let rack = s.rack.to_lowercase();
        let pod = format!("nats-{i}");
        racks.insert(pod.clone(), rack.clone());
        let env = [
            ("SERVER_NAME", pod),
            ("NATS_SYSTEM_PASSWORD", "sys-secret".to_string()),
            ("NATS_RACK", rack.clone()),
            ("NATS_RACK_TAG", env_tag.replace("$(NATS_RACK)", &rack)),
        ];
        servers.push(start(&d.join("nats.conf"), &d.join("server.log"), &env));
    }
    let max: u64 = helm.values["config"]["jetstream"]["fileStore"]["maxSize"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    for (i, s) in layout.servers.iter().enumerate() {
        let v = varz(ports[3 * i + 2]);
        assert_eq!(v["server_name"], format!("nats-{i}"));
        assert_eq!(v["tags"], json!([format!("rack:{}", s.rack.to_lowercase())]), "{v}");
        assert_eq!(v["jetstream"]["config"]["max_storage"], max);
        assert_eq!(v["jetstream"]["config"]["unique_tag"], "rack:");
        assert_eq!(v["cluster"]["name"], plan.input.nats.cluster_name.as_str());
    }
    // The emitted R3 stream, unchanged: its replicas on three racks.
    let nc = async_nats::connect(format!("nats://127.0.0.1:{}", ports[0]))
        .await
        .unwrap();
    let (_, text) = files
        .iter()
        .find(|(p, _)| p == Path::new("streams/orders.json"))
        .unwrap();
    let cfg: Value = serde_json::from_str(text).unwrap();
    assert_eq!(cfg["num_replicas"], 3);
    ask_until_ok(&nc, "$JS.API.STREAM.CREATE.orders", cfg).await;
    let t0 = Instant::now();
    let info = loop {
        let info = ask_until_ok(&nc, "$JS.API.STREAM.INFO.orders", json!({})).await;
        let peers = info["cluster"]["replicas"].as_array().map_or(0, Vec::len);
        if info["cluster"]["leader"].is_string() && peers == 2 {
            break info;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no R3 group: {info}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let mut on: Vec<String> = vec![racks[info["cluster"]["leader"].as_str().unwrap()].clone()];
    for r in info["cluster"]["replicas"].as_array().unwrap() {
        on.push(racks[r["name"].as_str().unwrap()].clone());
    }
    on.sort();
    on.dedup();
    assert_eq!(on.len(), 3, "replicas on racks {on:?}: {info}");
    drop(servers);
}
