//! `natsplan emit --deploy FILE`: accounts with users and nkeys and a system account, TLS blocks, and the
//! site's durable consumers as `nats consumer add --config` JSON. Every emitted configuration passes
//! `nats-server -t` (certificates made here with rcgen); a bad deploy file is refused at FILE:LINE:COL.

use crate::common::run;
use serde_json::Value;
use std::path::Path;

const SITE: &str = "tests/data/four-racks-r3.yaml";

fn site() -> String {
    crate::common::repo_file(SITE)
}

fn first_layout() -> String {
    let (code, out, err) = run(&["design", &site(), "--format", "json", "--top", "1"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["layouts"][0]["id"].as_str().unwrap().to_string()
}

/// A CA and a server certificate for 127.0.0.1 signed by it, as PEM files in `dir`.
fn certs(dir: &Path) -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    let p = |n: &str| dir.join(n).display().to_string();
    std::fs::write(p("ca.pem"), ca.pem()).unwrap();
    std::fs::write(p("server.pem"), cert.pem()).unwrap();
    std::fs::write(p("server-key.pem"), key.serialize_pem()).unwrap();
    (p("ca.pem"), p("server.pem"), p("server-key.pem"))
}

const NKEY: &str = "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4";

#[test]
#[cfg_attr(
    not(feature = "live"),
    ignore = "runs nats-server: cargo test --features live (scripts/test)"
)]
fn accounts_tls_and_consumers_are_emitted_and_nats_server_accepts_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certs(tmp.path());
    let deploy = tmp.path().join("deploy.yaml");
    std::fs::write(
        &deploy,
        format!(
            "accounts:\n  APP:\n    users:\n      - {{ user: app, password: $APP_PASSWORD }}\n      - {{ nkey: {NKEY} }}\n  \
             SYS:\n    users: [{{ user: admin, password: $SYS_PASSWORD }}]\nsystem_account: SYS\n\
             tls: {{ cert: {cert}, key: {key}, ca: {ca}, verify: true, routes: true }}\n\
             consumers:\n  orders: [{{ durable: billing, filter_subject: orders.>, ack_wait: 45s }}]\n"
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let (code, _, err) = run(&[
        "emit",
        &site(),
        "--layout",
        &first_layout(),
        "--out",
        out.to_str().unwrap(),
        "--deploy",
        deploy.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let bin = natsplan::lab::find_nats_server(None).unwrap();
    let mut confs = 0;
    for e in std::fs::read_dir(&out).unwrap() {
        let conf = e.unwrap().path().join("nats-server.conf");
        if !conf.exists() {
            continue;
        }
        confs += 1;
        let text = std::fs::read_to_string(&conf).unwrap();
        assert!(text.contains("password: $APP_PASSWORD"), "{text}");
        assert!(
            !text.contains("\"$APP_PASSWORD\""),
            "a quoted $VAR is a literal password: {text}"
        );
        assert!(text.contains(&format!("{{ nkey: \"{NKEY}\" }}")), "{text}");
        assert!(text.contains("system_account: \"SYS\""), "{text}");
        assert!(text.contains(&format!("ca_file: \"{ca}\"\n  verify: true")), "{text}");
        assert!(
            text.contains("cluster {\n  name: \"natsplan\"\n  listen: \"0.0.0.0:6222\"\n  tls {"),
            "{text}"
        );
        let check = std::process::Command::new(&bin)
            .args(["-t", "-c"])
            .arg(&conf)
            .env("APP_PASSWORD", "app-secret")
            .env("SYS_PASSWORD", "sys-secret")
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "nats-server -t refused {}: {}",
            conf.display(),
            String::from_utf8_lossy(&check.stderr)
        );
        // Without the variables nats-server refuses to start: the secret is never in the file.
        let bare = std::process::Command::new(&bin)
            .args(["-t", "-c"])
            .arg(&conf)
            .env_remove("APP_PASSWORD")
            .output()
            .unwrap();
        assert!(!bare.status.success());
    }
    assert!(confs >= 3);
    let billing: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("consumers/orders/billing.json")).unwrap()).unwrap();
    assert_eq!(billing["durable_name"], "billing");
    assert_eq!(billing["filter_subject"], "orders.>");
    assert_eq!(billing["ack_wait"], 45_000_000_000i64);
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("set `APP_PASSWORD`, `SYS_PASSWORD` for it"), "{readme}");
    assert!(readme.contains("Account `SYS` (system account"), "{readme}");
    let consumers = std::fs::read_to_string(out.join("consumers/README.md")).unwrap();
    assert!(
        consumers.contains("nats consumer add orders --config consumers/orders/billing.json"),
        "{consumers}"
    );
}

#[test]
#[cfg_attr(
    not(feature = "live"),
    ignore = "runs nats-server: cargo test --features live (scripts/test)"
)]
fn without_a_deploy_file_the_planned_consumers_are_placeholders_and_only_the_system_account_is_added() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let (code, _, err) = run(&[
        "emit",
        &site(),
        "--layout",
        &first_layout(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let c: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("consumers/orders/orders-c1.json")).unwrap()).unwrap();
    assert_eq!(c["ack_policy"], "explicit");
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(!readme.contains("## TLS"), "{readme}");
    // Issue 34: the server-level recovery steps need the system account, so it is always written, with
    // the password from the environment; anonymous clients keep working (the live test runs it).
    assert!(readme.contains("Account `SYS` (system account"), "{readme}");
    assert!(
        readme.contains("Clients without credentials log into the global account"),
        "{readme}"
    );
    assert!(readme.contains("set `NATS_SYSTEM_PASSWORD` for it"), "{readme}");
    assert!(
        readme.contains("| remove a lost server from the cluster | `nats server cluster peer-remove NAME`")
            && readme.contains("`nats --user sys --password \"$NATS_SYSTEM_PASSWORD\" …`"),
        "{readme}"
    );
    assert!(
        readme.contains("`nats stream cluster peer-remove STREAM PEER` (`$JS.API.STREAM.PEER.REMOVE`) | any client"),
        "{readme}"
    );
    let bin = natsplan::lab::find_nats_server(None).unwrap();
    let mut confs = 0;
    for e in std::fs::read_dir(&out).unwrap() {
        let conf = e.unwrap().path().join("nats-server.conf");
        if conf.exists() {
            confs += 1;
            let t = std::fs::read_to_string(&conf).unwrap();
            assert!(!t.contains("tls {") && !t.contains("jetstream: enabled"), "{t}");
            assert!(
                t.contains("{ user: \"sys\", password: $NATS_SYSTEM_PASSWORD }")
                    && t.contains("system_account: \"SYS\""),
                "{t}"
            );
            let with = std::process::Command::new(&bin)
                .args(["-t", "-c"])
                .arg(&conf)
                .env("NATS_SYSTEM_PASSWORD", "sys-secret")
                .output()
                .unwrap();
            assert!(with.status.success(), "{}", String::from_utf8_lossy(&with.stderr));
            let without = std::process::Command::new(&bin)
                .args(["-t", "-c"])
                .arg(&conf)
                .env_remove("NATS_SYSTEM_PASSWORD")
                .output()
                .unwrap();
            assert!(!without.status.success(), "the password is never in the file");
        }
    }
    assert!(confs >= 3);
}

#[test]
fn a_deploy_file_with_only_a_system_account_is_accepted_and_keeps_anonymous_clients() {
    let tmp = tempfile::tempdir().unwrap();
    let deploy = tmp.path().join("deploy.yaml");
    std::fs::write(
        &deploy,
        "accounts:\n  ADMIN:\n    users: [{ user: admin, password: $ADMIN_PASSWORD }]\nsystem_account: ADMIN\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let (code, _, err) = run(&[
        "emit",
        &site(),
        "--layout",
        &first_layout(),
        "--out",
        out.to_str().unwrap(),
        "--deploy",
        deploy.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "refused before issue 34 (no account has JetStream): {err}");
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("Account `ADMIN` (system account"), "{readme}");
    assert!(
        readme.contains("Clients without credentials log into the global account"),
        "{readme}"
    );
    assert!(
        readme.contains("`nats --user admin --password \"$ADMIN_PASSWORD\" …`"),
        "{readme}"
    );
    for e in std::fs::read_dir(&out).unwrap() {
        let conf = e.unwrap().path().join("nats-server.conf");
        if conf.exists() {
            let t = std::fs::read_to_string(&conf).unwrap();
            // Its own system account only: natsplan's SYS is not added beside it.
            assert!(t.contains("system_account: \"ADMIN\"") && !t.contains("\"SYS\""), "{t}");
        }
    }
}

#[test]
fn a_deploy_file_whose_names_clash_with_the_added_system_account_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let deploy = tmp.path().join("deploy.yaml");
    std::fs::write(&deploy, "accounts:\n  SYS:\n    users: [{ user: sys, password: $P }]\n").unwrap();
    let out = tmp.path().join("out");
    let (code, _, err) = run(&[
        "emit",
        &site(),
        "--layout",
        &first_layout(),
        "--out",
        out.to_str().unwrap(),
        "--deploy",
        deploy.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("accounts.SYS: emit adds its own system account SYS"),
        "{err}"
    );
    assert!(err.contains("a user of that name is given here"), "{err}");
    assert!(!out.exists());
}

#[test]
fn a_bad_deploy_file_is_refused_with_every_problem_placed() {
    let tmp = tempfile::tempdir().unwrap();
    let deploy = tmp.path().join("deploy.yaml");
    std::fs::write(
        &deploy,
        "accounts:\n  APP:\n    users: [{ user: app, password: $P }, { user: app, password: $Q }]\n  SYS:\n    jetstream: true\n    users: [{ nkey: SUAKEY }]\nsystem_account: SYS\ntls: { cert: relative.pem, key: /k.pem }\nconsumers:\n  orders: [{ durable: billing, ack_policy: sometimes }]\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let (code, _, err) = run(&[
        "emit",
        &site(),
        "--layout",
        &first_layout(),
        "--out",
        out.to_str().unwrap(),
        "--deploy",
        deploy.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    let d = deploy.display();
    for want in [
        format!("{d}:3:50: accounts.APP.users[1].user: user 'app' is given twice"),
        format!("{d}:5:16: accounts.SYS.jetstream: the system account cannot have JetStream"),
        "accounts.SYS.users[0].nkey: not a public user nkey".to_string(),
        format!("{d}:8:14: tls.cert: the path must be absolute"),
        "consumers.orders[0].ack_policy: ack_policy 'sometimes' is unknown".to_string(),
    ] {
        assert!(err.contains(&want), "missing `{want}` in:\n{err}");
    }
    assert!(!out.exists(), "nothing is written on bad input");
}
