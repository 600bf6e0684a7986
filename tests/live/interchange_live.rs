//! Interchange with a real nats-server: the configuration `emit --deploy` writes (accounts with a
//! password user, an nkey user and a system account; TLS with a CA made here by rcgen) is started as
//! written; clients log in over TLS; the stream a StreamConfig site file defines and the durable
//! consumer the deploy file names are accepted by the JetStream API as emitted; then the files the nats
//! CLI would write from that server are fed back to `design --from-cluster FILE,...`. A second test runs
//! an emitted three-server cluster with TLS routes and client certificates (`verify: true`), and feeds
//! its servers' JSZ answers back the same way.
//!
//! The nats CLI binary is not installed here, so the test writes its files as natscli does from the same
//! API replies: `nats stream info --json` prints the `$JS.API.STREAM.INFO.<name>` reply's StreamInfo
//! (without the response's `type`, natscli's `iu.PrintJSON(info)`), `nats stream ls --json` the names of
//! `$JS.API.STREAM.NAMES`, and `nats server request jetstream --all` one `$SYS.REQ.SERVER.PING.JSZ`
//! answer per line (natscli's `printResults`).

use natsplan::catalog::Catalog;
use natsplan::emit::{self, EmitOptions};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const SITE: &str = "site: interchange-live
nats: { replicas: [1], sync_interval: always }
racks:
  - name: A
    servers: [n1]
    arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 2, hot_spares: 1 }]
workload:
  streams:
    - { config: orders.json, msgs_per_s: 50, msg_size: 256B, consumers: 1 }
";

const ORDERS: &str = r#"{
  "name": "orders",
  "subjects": ["orders.>"],
  "retention": "limits",
  "max_consumers": -1,
  "max_msgs": -1,
  "max_bytes": 104857600,
  "max_age": 3600000000000,
  "max_msgs_per_subject": -1,
  "max_msg_size": -1,
  "discard": "old",
  "storage": "file",
  "num_replicas": 1,
  "duplicate_window": 120000000000,
  "deny_delete": true
}"#;

/// nats-server running the emitted file; killed with the test (PR_SET_PDEATHSIG) or on drop.
struct Server {
    child: Child,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(conf: &Path, dir: &Path, env: &[(&str, &str)]) -> Server {
    let bin = natsplan::lab::find_nats_server(None).expect("nats-server (scripts/install-nats-server)");
    let log = dir.join("server.log");
    let mut cmd = std::process::Command::new(bin);
    cmd.args(["-c"])
        .arg(conf)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    // SAFETY: prctl in the child before exec, async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    Server {
        child: cmd.spawn().unwrap(),
        log,
    }
}

/// A CA and a certificate for 127.0.0.1 signed by it, as PEM files.
fn certs(dir: &Path) -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    let client_key = rcgen::KeyPair::generate().unwrap();
    let client = rcgen::CertificateParams::new(vec!["natsplan-test-client".to_string()])
        .unwrap()
        .signed_by(&client_key, &ca, &ca_key)
        .unwrap();
    let p = |n: &str| dir.join(n).display().to_string();
    std::fs::write(p("ca.pem"), ca.pem()).unwrap();
    std::fs::write(p("server.pem"), cert.pem()).unwrap();
    std::fs::write(p("server-key.pem"), key.serialize_pem()).unwrap();
    std::fs::write(p("client.pem"), client.pem()).unwrap();
    std::fs::write(p("client-key.pem"), client_key.serialize_pem()).unwrap();
    (p("ca.pem"), p("server.pem"), p("server-key.pem"))
}

async fn connect(url: &str, ca: &str, opts: async_nats::ConnectOptions, srv: &Server) -> async_nats::Client {
    let t0 = Instant::now();
    loop {
        let o = opts
            .clone()
            .require_tls(true)
            .add_root_certificates(PathBuf::from(ca))
            .connection_timeout(Duration::from_secs(5));
        match o.connect(url).await {
            Ok(c) => return c,
            Err(e) if t0.elapsed() < Duration::from_secs(30) => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!(
                "cannot connect to the emitted server: {e}\n{}",
                std::fs::read_to_string(&srv.log).unwrap_or_default()
            ),
        }
    }
}

async fn api(nc: &async_nats::Client, subject: String, body: Value) -> Value {
    let t0 = Instant::now();
    loop {
        let r = nc.request(subject.clone(), body.to_string().into()).await;
        if let Ok(m) = r {
            let v: Value = serde_json::from_slice(&m.payload).unwrap();
            // JetStream may still be starting right after the server does.
            let starting = v["error"]["code"] == 503;
            if !starting || t0.elapsed() > Duration::from_secs(20) {
                return v;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "no reply to {subject}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// `nats stream info orders --json`: the reply's StreamInfo, as natscli prints it (indented, no `type`).
fn as_stream_info(mut reply: Value) -> String {
    let o = reply.as_object_mut().unwrap();
    for k in ["type", "total", "offset", "limit"] {
        o.remove(k);
    }
    serde_json::to_string_pretty(&reply).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emitted_auth_tls_and_consumers_run_on_nats_server_and_its_json_comes_back_as_input() {
    let _s = crate::common::serial_async().await;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("orders.json"), ORDERS).unwrap();
    let site_path = dir.join("site.yaml");
    std::fs::write(&site_path, SITE).unwrap();
    let (ca, cert, key) = certs(dir);
    let user = nkeys::KeyPair::new_user();
    let deploy_text = format!(
        "accounts:\n  APP:\n    users:\n      - {{ user: app, password: $APP_PASSWORD }}\n      - {{ nkey: {} }}\n  \
         SYS:\n    users: [{{ user: admin, password: $SYS_PASSWORD }}]\nsystem_account: SYS\n\
         tls: {{ cert: {cert}, key: {key}, ca: {ca} }}\n\
         consumers:\n  orders: [{{ durable: billing, filter_subject: orders.eu.>, ack_wait: 10s, max_deliver: 3 }}]\n",
        user.public_key()
    );

    // Emit, as `natsplan emit --deploy` does, on loopback ports with a store under the test's folder.
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(SITE, site_path.to_str().unwrap(), &cat).unwrap_or_else(|e| panic!("{e}"));
    let plan = natsplan::plan::build(&site, &cat);
    let layout = plan.layouts.first().expect("a layout");
    let deploy = emit::deploy::parse(&deploy_text, "deploy.yaml", &plan.input.workload).unwrap();
    let ports = natsplan::lab::free_ports(3).unwrap();
    let opts = EmitOptions {
        store_dir: dir.join("store").display().to_string(),
        client_port: ports[0],
        cluster_port: ports[1],
        monitor_port: ports[2],
        deploy,
    };
    let files = emit::render_all(&plan, &layout.id, &opts).unwrap();
    let text = |p: &str| files.iter().find(|(f, _)| f == Path::new(p)).unwrap().1.clone();
    let conf = text("n1/nats-server.conf").replace("0.0.0.0", "127.0.0.1");
    let conf_path = dir.join("nats-server.conf");
    std::fs::write(&conf_path, &conf).unwrap();
    let srv = start(
        &conf_path,
        dir,
        &[("APP_PASSWORD", "app-secret"), ("SYS_PASSWORD", "sys-secret")],
    );
    let url = format!("tls://127.0.0.1:{}", ports[0]);

    let app = connect(
        &url,
        &ca,
        async_nats::ConnectOptions::with_user_and_password("app".into(), "app-secret".into()),
        &srv,
    )
    .await;
    // A wrong password, and a client without TLS, are refused.
    let refused = tokio::time::timeout(Duration::from_secs(10), async {
        async_nats::ConnectOptions::with_user_and_password("app".into(), "nope".into())
            .require_tls(true)
            .add_root_certificates(PathBuf::from(&ca))
            .connection_timeout(Duration::from_secs(3))
            .connect(url.as_str())
            .await
    })
    .await;
    assert!(!matches!(refused, Ok(Ok(_))), "a wrong password was accepted");
    let plain = tokio::time::timeout(
        Duration::from_secs(10),
        async_nats::ConnectOptions::with_user_and_password("app".into(), "app-secret".into())
            .connection_timeout(Duration::from_secs(3))
            .connect(format!("nats://127.0.0.1:{}", ports[0])),
    )
    .await;
    assert!(!matches!(plain, Ok(Ok(_))), "a client without TLS was accepted");
    // The nkey user logs in with its seed.
    let nk = connect(
        &url,
        &ca,
        async_nats::ConnectOptions::with_nkey(user.seed().unwrap()),
        &srv,
    )
    .await;
    nk.flush().await.unwrap();

    // The emitted stream and consumer, sent unchanged to the JetStream API.
    let stream: Value = serde_json::from_str(&text("streams/orders.json")).unwrap();
    assert_eq!(stream["deny_delete"], true, "the file's own setting is kept");
    let r = api(&app, "$JS.API.STREAM.CREATE.orders".into(), stream.clone()).await;
    assert!(r["error"].is_null(), "stream refused: {r}");
    let consumer: Value = serde_json::from_str(&text("consumers/orders/billing.json")).unwrap();
    let r = api(
        &app,
        "$JS.API.CONSUMER.CREATE.orders.billing".into(),
        json!({"stream_name": "orders", "config": consumer}),
    )
    .await;
    assert!(r["error"].is_null(), "consumer refused: {r}");
    assert_eq!(r["config"]["durable_name"], "billing");
    assert_eq!(r["config"]["filter_subject"], "orders.eu.>");
    assert_eq!(r["config"]["max_deliver"], 3);

    // Publish, snapshot, publish, snapshot: the files the nats CLI would write.
    let js = async_nats::jetstream::new(app.clone());
    let publish = |n: usize| {
        let js = js.clone();
        async move {
            for i in 0..n {
                js.publish(format!("orders.eu.{i}"), bytes::Bytes::from(vec![b'x'; 256]))
                    .await
                    .unwrap()
                    .await
                    .unwrap();
            }
        }
    };
    publish(200).await;
    let first = api(&app, "$JS.API.STREAM.INFO.orders".into(), json!({})).await;
    let sys = connect(
        &url,
        &ca,
        async_nats::ConnectOptions::with_user_and_password("admin".into(), "sys-secret".into()),
        &srv,
    )
    .await;
    let jsz_req = json!({"accounts": true, "streams": true, "config": true});
    let jsz1 = api(&sys, "$SYS.REQ.SERVER.PING.JSZ".into(), jsz_req.clone()).await;
    // Snapshots need distinct timestamps at least a second apart.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    publish(300).await;
    let second = api(&app, "$JS.API.STREAM.INFO.orders".into(), json!({})).await;
    let jsz2 = api(&sys, "$SYS.REQ.SERVER.PING.JSZ".into(), jsz_req).await;
    let names = api(&app, "$JS.API.STREAM.NAMES".into(), json!({})).await;
    assert_eq!(jsz1["server"]["name"], "n1", "{jsz1}");
    assert!(jsz1["data"]["account_details"].is_array(), "{jsz1}");

    let info_file = dir.join("orders-info.json");
    std::fs::write(
        &info_file,
        format!("{}\n{}\n", as_stream_info(first), as_stream_info(second)),
    )
    .unwrap();
    let ls_file = dir.join("ls.json");
    std::fs::write(&ls_file, serde_json::to_string_pretty(&names["streams"]).unwrap()).unwrap();
    let jsz_file = dir.join("jsz.json");
    std::fs::write(&jsz_file, format!("{jsz1}\n{jsz2}\n")).unwrap();

    for (files, jsz) in [
        (format!("{},{}", info_file.display(), ls_file.display()), false),
        (jsz_file.display().to_string(), true),
    ] {
        let site_arg = site_path.display().to_string();
        let out = tokio::task::spawn_blocking(move || {
            crate::common::run(&[
                "design",
                &site_arg,
                "--from-cluster",
                &files,
                "--format",
                "json",
                "--top",
                "1",
            ])
        })
        .await
        .unwrap();
        let (code, stdout, stderr) = out;
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains("1 with the rate measured between two snapshots"),
            "{stderr}"
        );
        let v: Value = serde_json::from_str(&stdout).unwrap();
        let pred = v["layouts"][0]["predicted"]["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "orders")
            .cloned()
            .unwrap();
        // 300 publishes between the snapshots, over at least 1.5 s and well under a minute (the rate
        // depends on the machine: bounds only).
        let rate = pred["required_per_s"].as_f64().unwrap();
        assert!(rate > 300.0 / 60.0 && rate < 300.0 / 1.5, "{rate}");
        if jsz {
            assert!(
                stderr.contains("the cluster files name 1 server (n1) in cluster"),
                "{stderr}"
            );
            assert!(!stderr.contains("does not list"), "{stderr}");
        }
    }
    drop(srv);
}

const THREE: &str = "site: interchange-three
nats: { replicas: [3] }
racks:
  - { name: A, servers: [a1], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
workload:
  streams:
    - { name: events, msgs_per_s: 20, msg_size: 128B, retention: 1h, subjects: [events.>], consumers: 1 }
";

/// Every answer to a `$SYS.REQ.SERVER.PING.*` request within `wait` (one per server), as natscli collects them.
async fn ping_all(nc: &async_nats::Client, subject: &str, body: Value, want: usize, wait: Duration) -> Vec<Value> {
    use futures::StreamExt;
    let inbox = nc.new_inbox();
    let mut sub = nc.subscribe(inbox.clone()).await.unwrap();
    nc.publish_with_reply(subject.to_string(), inbox, body.to_string().into())
        .await
        .unwrap();
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + wait;
    while out.len() < want {
        match tokio::time::timeout_at(deadline, sub.next()).await {
            Ok(Some(m)) => out.push(serde_json::from_slice(&m.payload).unwrap()),
            _ => break,
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_server_emitted_cluster_with_tls_routes_and_client_certificates() {
    let _s = crate::common::serial_async().await;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (ca, cert, key) = certs(dir);
    let deploy_text = format!(
        "accounts:\n  APP:\n    users: [{{ user: app, password: $APP_PASSWORD }}]\n  SYS:\n    users: [{{ user: admin, \
         password: $SYS_PASSWORD }}]\nsystem_account: SYS\ntls: {{ cert: {cert}, key: {key}, ca: {ca}, verify: true, \
         routes: true }}\nconsumers:\n  events: [{{ durable: indexer, filter_subject: events.> }}]\n"
    );
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(THREE, "three.yaml", &cat).unwrap_or_else(|e| panic!("{e}"));
    let plan = natsplan::plan::build(&site, &cat);
    let layout = plan
        .layouts
        .iter()
        .find(|l| l.servers.len() == 3)
        .expect("a three-server layout");
    let deploy = emit::deploy::parse(&deploy_text, "deploy.yaml", &plan.input.workload).unwrap();
    let opts = EmitOptions {
        deploy,
        ..EmitOptions::default()
    };
    let files = emit::render_all(&plan, &layout.id, &opts).unwrap();
    let text = |p: &str| files.iter().find(|(f, _)| f == Path::new(p)).unwrap().1.clone();
    // One host per server in production; here all on loopback, so each gets its own ports and store.
    let names: Vec<String> = layout.servers.iter().map(|s| s.name.clone()).collect();
    let ports = natsplan::lab::free_ports(3 * names.len()).unwrap();
    let (client, route, monitor) = (
        |i: usize| ports[3 * i],
        |i: usize| ports[3 * i + 1],
        |i: usize| ports[3 * i + 2],
    );
    let env = [("APP_PASSWORD", "app-secret"), ("SYS_PASSWORD", "sys-secret")];
    let mut servers = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let mut conf = text(&format!("{n}/nats-server.conf"))
            .replace("\"0.0.0.0:4222\"", &format!("\"127.0.0.1:{}\"", client(i)))
            .replace("\"0.0.0.0:6222\"", &format!("\"127.0.0.1:{}\"", route(i)))
            .replace("\"0.0.0.0:8222\"", &format!("\"127.0.0.1:{}\"", monitor(i)))
            .replace("\"/var/lib/nats\"", &format!("{:?}", dir.join(n).display().to_string()));
        for (j, m) in names.iter().enumerate() {
            conf = conf.replace(
                &format!("nats-route://{m}:6222"),
                &format!("nats-route://127.0.0.1:{}", route(j)),
            );
        }
        assert!(
            conf.contains("cluster {") && conf.contains("  tls {\n    cert_file"),
            "{conf}"
        );
        let d = dir.join(format!("{n}-run"));
        std::fs::create_dir_all(&d).unwrap();
        let conf_path = d.join("nats-server.conf");
        std::fs::write(&conf_path, conf).unwrap();
        servers.push(start(&conf_path, &d, &env));
    }
    let url = format!("tls://127.0.0.1:{}", client(0));
    let with_cert =
        |o: async_nats::ConnectOptions| o.add_client_certificate(dir.join("client.pem"), dir.join("client-key.pem"));
    let app = connect(
        &url,
        &ca,
        with_cert(async_nats::ConnectOptions::with_user_and_password(
            "app".into(),
            "app-secret".into(),
        )),
        &servers[0],
    )
    .await;
    // verify: true, so a client without a certificate is refused even with the right password.
    let no_cert = tokio::time::timeout(
        Duration::from_secs(10),
        async_nats::ConnectOptions::with_user_and_password("app".into(), "app-secret".into())
            .require_tls(true)
            .add_root_certificates(PathBuf::from(&ca))
            .connection_timeout(Duration::from_secs(3))
            .connect(url.as_str()),
    )
    .await;
    assert!(
        !matches!(no_cert, Ok(Ok(_))),
        "a client without a certificate was accepted"
    );

    // The R3 stream and its consumer, as emitted, over routes that run TLS (the meta group needs them).
    let stream: Value = serde_json::from_str(&text("streams/events.json")).unwrap();
    let r = api(&app, "$JS.API.STREAM.CREATE.events".into(), stream).await;
    let t0 = Instant::now();
    let mut r = r;
    while !r["error"].is_null() && t0.elapsed() < Duration::from_secs(30) {
        // The meta leader may not be elected yet right after the routes form.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let stream: Value = serde_json::from_str(&text("streams/events.json")).unwrap();
        r = api(&app, "$JS.API.STREAM.CREATE.events".into(), stream).await;
    }
    assert!(
        r["error"].is_null(),
        "stream refused: {r}\n{}",
        std::fs::read_to_string(&servers[0].log).unwrap_or_default()
    );
    assert_eq!(r["config"]["num_replicas"], 3);
    let consumer: Value = serde_json::from_str(&text("consumers/events/indexer.json")).unwrap();
    assert_eq!(consumer["num_replicas"], 3);
    let r = api(
        &app,
        "$JS.API.CONSUMER.CREATE.events.indexer".into(),
        json!({"stream_name": "events", "config": consumer}),
    )
    .await;
    assert!(r["error"].is_null(), "consumer refused: {r}");

    // `nats server request jetstream --all` from the system account: one JSZ answer per server.
    let sys = connect(
        &url,
        &ca,
        with_cert(async_nats::ConnectOptions::with_user_and_password(
            "admin".into(),
            "sys-secret".into(),
        )),
        &servers[0],
    )
    .await;
    let js = async_nats::jetstream::new(app.clone());
    let body = json!({"accounts": true, "streams": true, "config": true});
    let mut lines = Vec::new();
    for round in 0..2 {
        for i in 0..100 {
            js.publish(format!("events.{round}.{i}"), bytes::Bytes::from_static(b"payload"))
                .await
                .unwrap()
                .await
                .unwrap();
        }
        // Each server must hold its replica's state before the snapshot counts it.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let answers = ping_all(
            &sys,
            "$SYS.REQ.SERVER.PING.JSZ",
            body.clone(),
            3,
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(answers.len(), 3, "one JSZ answer per server: {answers:?}");
        lines.extend(answers.iter().map(|a| a.to_string()));
        tokio::time::sleep(Duration::from_millis(1200)).await;
    }
    let jsz = dir.join("jsz.json");
    std::fs::write(&jsz, lines.join("\n") + "\n").unwrap();
    let site_path = dir.join("three.yaml");
    std::fs::write(&site_path, THREE).unwrap();
    let args = [site_path.display().to_string(), jsz.display().to_string()];
    let (code, stdout, stderr) = tokio::task::spawn_blocking(move || {
        crate::common::run(&[
            "design",
            &args[0],
            "--from-cluster",
            &args[1],
            "--format",
            "json",
            "--top",
            "1",
        ])
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{stderr}");
    let mut sorted = names.clone();
    sorted.sort();
    assert!(
        stderr.contains(&format!("3 servers ({}) in cluster natsplan", sorted.join(", "))),
        "{stderr}"
    );
    assert!(!stderr.contains("does not list"), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let asset = v["layouts"][0]["assets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "events")
        .cloned()
        .unwrap();
    assert_eq!(asset["replicas"], 3);
    drop(servers);
}
