//! Connections that authenticate, against real nats-server processes on loopback: user/password and nkey
//! users in the server config, a token, a JWT account (operator → account → user, signed here with the
//! nkeys crate as `nsc` would sign them; nsc is not installed) reached through a creds file and through a
//! nats CLI context, `--tlsfirst` against a server with `handshake_first`, and `--js-domain` against a
//! server with a JetStream domain. Each option must change what the client does: without it the same
//! run fails. Secrets (password, token, seeds, JWT) never appear in stdout, stderr or the results files.

use crate::common::serial;
use assert_cmd::Command;
use base64::Engine as _;
use serde_json::{json, Value};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const PASSWORD: &str = "pw-Sup3rSecret-91";
const TOKEN: &str = "tok-Sup3rSecret-37";

fn nats_server() -> PathBuf {
    natsplan::lab::find_nats_server(None).expect("nats-server (set NATS_SERVER_BIN)")
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// One nats-server with a given configuration body (listen/http/store lines are added); killed on drop.
struct Server {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(body: &str) -> Server {
        // Ports are picked free and released: a race with another process is retried.
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let (port, http) = (free_port(), free_port());
            let conf = format!(
                "server_name: auth1\nlisten: 127.0.0.1:{port}\nhttp: 127.0.0.1:{http}\n{}\n",
                body.replace("STORE", &dir.path().join("js").display().to_string())
            );
            let path = dir.path().join("server.conf");
            std::fs::write(&path, conf).unwrap();
            let mut cmd = std::process::Command::new(nats_server());
            cmd.arg("-c")
                .arg(&path)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.path().join("log")).unwrap());
            // SAFETY: prctl is async-signal-safe; the server dies with the test process.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
            let mut child = cmd.spawn().unwrap();
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(20) {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                let healthy = natsplan::monitor::varz(&format!("http://127.0.0.1:{http}"), Duration::from_millis(500));
                if healthy.is_ok() {
                    return Server { child, port, _dir: dir };
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
            if !log.contains("address already in use") {
                panic!("nats-server did not start:\n{log}");
            }
        }
        panic!("nats-server did not start after 5 tries");
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run natsplan with no NATS_* settings of the machine and an empty config root (plus `env`).
fn natsplan(env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = Command::cargo_bin("natsplan").unwrap();
    for v in [
        "NATS_URL",
        "NATS_CONTEXT",
        "NATS_USER",
        "NATS_PASSWORD",
        "NATS_TOKEN",
        "NATS_CREDS",
        "NATS_NKEY",
    ] {
        cmd.env_remove(v);
    }
    cmd.env("XDG_CONFIG_HOME", home.path())
        .env("HOME", home.path())
        .env("NATS_TIMEOUT", "3s");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(args).timeout(Duration::from_secs(180)).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A small JetStream bench as JSON: (exit code, JSON, stdout + stderr for the secret checks).
fn bench_js(env: &[(&str, &str)], conn: &[&str]) -> (i32, Value, String) {
    let mut args = vec!["--format", "json", "bench", "js", "--msgs", "50", "--no-progress"];
    args.extend_from_slice(conn);
    let (code, out, err) = natsplan(env, &args);
    (
        code,
        serde_json::from_str(&out).unwrap_or(Value::Null),
        format!("{out}\n{err}"),
    )
}

fn assert_published(code: i32, v: &Value, text: &str, what: &str) {
    assert_eq!(code, 0, "{what}: {text}");
    assert_eq!(v["published"].as_u64(), Some(50), "{what}: {v:#}");
}

fn assert_no_secret(text: &str, secrets: &[&str]) {
    for s in secrets {
        assert!(!text.contains(s), "secret {s:?} printed:\n{text}");
    }
}

/// Every file under `dir`, concatenated.
fn all_files(dir: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&all_files(&p));
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
    out
}

#[test]
fn user_password_and_nkey_users_connect_and_their_secrets_stay_hidden() {
    let _s = serial();
    let user = nkeys::KeyPair::new_user();
    let seed = user.seed().unwrap();
    let srv = Server::start(&format!(
        "jetstream {{ store_dir: \"STORE\" }}\naccounts {{ A: {{ jetstream: enabled, users: [\n  \
         {{user: alice, password: \"{PASSWORD}\"}}\n  {{nkey: {}}}\n] }} }}",
        user.public_key()
    ));
    let url = srv.url();
    let tmp = tempfile::tempdir().unwrap();
    let nk = tmp.path().join("user.nk");
    std::fs::write(&nk, format!("{seed}\n")).unwrap();
    let secrets = [PASSWORD, seed.as_str()];

    let (code, _, text) = bench_js(&[], &["--server", &url]);
    assert_eq!(code, 3, "no credentials: refused: {text}");
    let (code, v, text) = bench_js(&[], &["--server", &url, "--user", "alice", "--password", PASSWORD]);
    assert_published(code, &v, &text, "user/password flags");
    assert_no_secret(&text, &secrets);
    // Credentials in the URL are sent (issue 41: async-nats parsed and dropped them: authorization
    // violation) and never printed.
    let in_url = url.replace("nats://", &format!("nats://alice:{PASSWORD}@"));
    let (code, v, text) = bench_js(&[], &["--server", &in_url]);
    assert_published(code, &v, &text, "user:password in the URL");
    assert_no_secret(&text, &secrets);
    let (code, v, text) = bench_js(&[("NATS_USER", "alice"), ("NATS_PASSWORD", PASSWORD)], &["-s", &url]);
    assert_published(code, &v, &text, "NATS_USER/NATS_PASSWORD");
    let (code, v, text) = bench_js(&[], &["--server", &url, "--nkey", nk.to_str().unwrap()]);
    assert_published(code, &v, &text, "--nkey");
    assert_no_secret(&text, &secrets);
    let (code, v, text) = bench_js(&[("NATS_NKEY", nk.to_str().unwrap())], &["-s", &url]);
    assert_published(code, &v, &text, "NATS_NKEY");

    // A wrong password: could not run (exit 3), and neither password is printed.
    let (code, _, text) = bench_js(
        &[],
        &["--server", &url, "--user", "alice", "--password", "wrong-Secret-5"],
    );
    assert_eq!(code, 3, "{text}");
    assert_no_secret(&text, &[PASSWORD, "wrong-Secret-5"]);

    // verify with the password in a context, the URL carrying it too: the results files hold neither.
    let cfg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cfg.path().join("nats/context")).unwrap();
    let with_pw = url.replace("nats://", &format!("nats://alice:{PASSWORD}@"));
    let ctx = json!({"url": with_pw, "user": "alice", "password": PASSWORD});
    std::fs::write(cfg.path().join("nats/context/auth.json"), ctx.to_string()).unwrap();
    std::fs::write(cfg.path().join("nats/context.txt"), "auth").unwrap();
    let results = tempfile::tempdir().unwrap();
    let cal = format!("{}/tests/data/verify-cal-huge-bands.yaml", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = natsplan(
        &[("XDG_CONFIG_HOME", cfg.path().to_str().unwrap())],
        &[
            "--format",
            "json",
            "verify",
            "--row-seconds",
            "0.1",
            "--calibration",
            &cal,
            "--out",
            results.path().to_str().unwrap(),
        ],
    );
    assert!(code == 0 || code == 1, "verify ran through the context: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["config"]["connection"].as_str().unwrap().contains("context=auth"),
        "{:#}",
        v["config"]
    );
    assert!(
        !v["cluster"]["connected_server"].is_null(),
        "verify connected: {:#}",
        v["cluster"]
    );
    let measured = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["measured"].is_null())
        .count();
    assert!(measured > 0, "rows ran with the context's credentials: {err}");
    let files = all_files(results.path());
    assert!(files.contains("\"connection\""), "results.json was written");
    assert_no_secret(&format!("{out}\n{err}\n{files}"), &secrets);
}

#[test]
fn a_token_is_sent_from_the_flag_the_variable_or_a_bare_user() {
    let _s = serial();
    let srv = Server::start(&format!(
        "jetstream {{ store_dir: \"STORE\" }}\nauthorization {{ token: \"{TOKEN}\" }}"
    ));
    let url = srv.url();
    let (code, _, text) = bench_js(&[], &["--server", &url]);
    assert_eq!(code, 3, "{text}");
    for (env, flags) in [
        (vec![], vec!["--token", TOKEN]),
        (vec![("NATS_TOKEN", TOKEN)], vec![]),
        // natscli: a user with no password is a token.
        (vec![], vec!["--user", TOKEN]),
    ] {
        let mut conn = vec!["--server", url.as_str()];
        conn.extend(flags.iter().copied());
        let (code, v, text) = bench_js(&env, &conn);
        assert_published(code, &v, &text, &format!("{env:?} {flags:?}"));
        assert_no_secret(&text, &[TOKEN]);
    }
}

/// A JWT as nats-server reads it: header.claims.signature, ed25519 over the first two by `issuer`.
fn jwt(issuer: &nkeys::KeyPair, subject: &str, name: &str, nats: Value) -> String {
    let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
    let header = b64(json!({"typ": "JWT", "alg": "ed25519-nkey"}).to_string().as_bytes());
    let iat = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"jti": format!("NATSPLANTEST{name}{iat}"), "iat": iat, "iss": issuer.public_key(),
        "name": name, "sub": subject, "nats": nats});
    let body = format!("{header}.{}", b64(claims.to_string().as_bytes()));
    let sig = issuer.sign(body.as_bytes()).unwrap();
    format!("{body}.{}", b64(&sig))
}

#[test]
fn a_jwt_account_is_reached_with_a_creds_file_and_through_a_context() {
    let _s = serial();
    let (op, acc, user) = (
        nkeys::KeyPair::new_operator(),
        nkeys::KeyPair::new_account(),
        nkeys::KeyPair::new_user(),
    );
    let op_jwt = jwt(&op, &op.public_key(), "op", json!({"type": "operator", "version": 2}));
    let limits = json!({"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": true,
        "conn": -1, "leaf": -1, "mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1});
    let acc_jwt = jwt(
        &op,
        &acc.public_key(),
        "acc",
        json!({"limits": limits, "type": "account", "version": 2}),
    );
    let user_jwt = jwt(
        &acc,
        &user.public_key(),
        "u",
        json!({"pub": {}, "sub": {}, "subs": -1, "data": -1,
        "payload": -1, "type": "user", "version": 2}),
    );
    // JetStream in operator mode needs a system account.
    let sys = nkeys::KeyPair::new_account();
    let sys_jwt = jwt(&op, &sys.public_key(), "SYS", json!({"type": "account", "version": 2}));
    let seed = user.seed().unwrap();
    let srv = Server::start(&format!(
        "jetstream {{ store_dir: \"STORE\" }}\noperator: \"{op_jwt}\"\nresolver: MEMORY\n\
         system_account: {sys_pub}\nresolver_preload: {{ {}: \"{acc_jwt}\", {sys_pub}: \"{sys_jwt}\" }}",
        acc.public_key(),
        sys_pub = sys.public_key()
    ));
    let url = srv.url();
    let tmp = tempfile::tempdir().unwrap();
    let creds = tmp.path().join("u.creds");
    std::fs::write(
        &creds,
        format!(
            "-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n\
             -----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
        ),
    )
    .unwrap();
    let secrets = [seed.as_str(), user_jwt.as_str()];
    let (code, _, text) = bench_js(&[], &["--server", &url]);
    assert_eq!(code, 3, "no creds: refused: {text}");
    let (code, v, text) = bench_js(&[], &["--server", &url, "--creds", creds.to_str().unwrap()]);
    assert_published(code, &v, &text, "--creds");
    assert_no_secret(&text, &secrets);
    let (code, v, text) = bench_js(&[("NATS_CREDS", creds.to_str().unwrap())], &["-s", &url]);
    assert_published(code, &v, &text, "NATS_CREDS");
    // A context with the creds path ($VAR expanded) and one with user_jwt/user_seed inline.
    let cfg = tempfile::tempdir().unwrap();
    let cdir = cfg.path().join("nats/context");
    std::fs::create_dir_all(&cdir).unwrap();
    std::fs::write(
        cdir.join("file.json"),
        json!({"url": url, "creds": "$CREDS_DIR/u.creds"}).to_string(),
    )
    .unwrap();
    let inline = json!({"url": url, "user_jwt": user_jwt, "user_seed": "env://USER_SEED"});
    std::fs::write(cdir.join("inline.json"), inline.to_string()).unwrap();
    let root = cfg.path().to_str().unwrap();
    for name in ["file", "inline"] {
        let env = [
            ("XDG_CONFIG_HOME", root),
            ("NATS_CONTEXT", name),
            ("CREDS_DIR", tmp.path().to_str().unwrap()),
            ("USER_SEED", seed.as_str()),
        ];
        let (code, v, text) = bench_js(&env, &[]);
        assert_published(code, &v, &text, name);
        assert_no_secret(&text, &secrets);
    }
}

/// A CA and a server certificate for 127.0.0.1: (ca, cert, key) files in `dir`.
fn tls_files(dir: &Path) -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    std::fs::write(p("ca.pem"), ca.pem()).unwrap();
    std::fs::write(p("cert.pem"), cert.pem()).unwrap();
    std::fs::write(p("key.pem"), key.serialize_pem()).unwrap();
    (p("ca.pem"), p("cert.pem"), p("key.pem"))
}

#[test]
fn tlsfirst_and_js_domain_change_what_the_client_does() {
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    let (ca, cert, key) = tls_files(tmp.path());
    let srv = Server::start(&format!(
        "jetstream {{ store_dir: \"STORE\", domain: hub }}\n\
         tls {{ cert_file: \"{cert}\", key_file: \"{key}\", handshake_first: true }}"
    ));
    let url = srv.url();
    // The server expects the TLS handshake before it says INFO: without --tlsfirst the client waits for
    // an INFO that never comes.
    let (code, _, text) = bench_js(&[], &["--server", &url, "--tlsca", &ca]);
    assert_eq!(code, 3, "without --tlsfirst: {text}");
    let (code, v, text) = bench_js(
        &[],
        &["--server", &url, "--tlsca", &ca, "--tlsfirst", "--js-domain", "hub"],
    );
    assert_published(code, &v, &text, "--tlsfirst --js-domain hub");
    // The old spelling still works, and a context's tls_first does the same.
    let (code, v, text) = bench_js(&[("NATS_CA", &ca)], &["--server", &url, "--tls-first"]);
    assert_published(code, &v, &text, "--tls-first with $NATS_CA");
    // Another domain's API has no responders here: the prefix really is $JS.<domain>.API.
    let (code, _, text) = bench_js(
        &[],
        &[
            "--server",
            &url,
            "--tlsca",
            &ca,
            "--tlsfirst",
            "--js-domain",
            "elsewhere",
        ],
    );
    assert_ne!(code, 0, "--js-domain elsewhere reached a JetStream API: {text}");
}
