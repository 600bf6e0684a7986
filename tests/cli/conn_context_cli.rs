//! Connection settings as the nats CLI keeps them: context folders under a temporary XDG_CONFIG_HOME, the
//! selected context (context.txt), NATS_CONTEXT and the NATS_* variables, with natscli's precedence (flag,
//! then variable, then context). No server: `verify --dry-run` echoes how it would connect (config.servers,
//! config.connection) and goes on without a cluster; a dead port shows what errors print. Secrets never
//! appear in stdout or stderr.

use crate::common::{dead_url, natsplan};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const SECRET: &str = "hunter2-s3cret";

/// Every variable the nats CLI reads, removed so the machine's own settings cannot leak into a test.
const NATS_VARS: &[&str] = &[
    "NATS_URL",
    "NATS_CONTEXT",
    "NATS_USER",
    "NATS_PASSWORD",
    "NATS_TOKEN",
    "NATS_CREDS",
    "NATS_NKEY",
    "NATS_CERT",
    "NATS_KEY",
    "NATS_CA",
    "NATS_TIMEOUT",
];

/// A config root (XDG_CONFIG_HOME) holding nats/context/NAME.json files and maybe nats/context.txt.
fn config_root(contexts: &[(&str, String)], selected: Option<&str>) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let cdir = d.path().join("nats").join("context");
    std::fs::create_dir_all(&cdir).unwrap();
    for (name, body) in contexts {
        std::fs::write(cdir.join(format!("{name}.json")), body).unwrap();
    }
    if let Some(s) = selected {
        std::fs::write(d.path().join("nats").join("context.txt"), format!("{s}\n")).unwrap();
    }
    d
}

/// Run natsplan with only `env` of the NATS_* variables set, HOME pointed at an empty folder.
fn run_env(root: &Path, env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = natsplan();
    for v in NATS_VARS {
        cmd.env_remove(v);
    }
    cmd.env("XDG_CONFIG_HOME", root).env("HOME", home.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(args).timeout(Duration::from_secs(60)).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `verify --dry-run --format json` with extra args: (servers, connection) as the run echoes them.
fn dry_run(root: &Path, env: &[(&str, &str)], extra: &[&str]) -> (Vec<String>, String, String) {
    let mut args = vec!["--format", "json", "verify", "--dry-run"];
    args.extend_from_slice(extra);
    let (code, out, err) = run_env(root, env, &args);
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains(SECRET) && !err.contains(SECRET),
        "a secret was printed:\n{out}\n{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    let servers = v["config"]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    (servers, v["config"]["connection"].as_str().unwrap().to_string(), err)
}

#[test]
fn the_selected_context_is_used_and_nats_url_and_the_flag_override_its_url() {
    let (a, b) = (dead_url(), dead_url());
    let root = config_root(
        &[(
            "lab",
            format!(r#"{{"url":"{a}","user":"alice","password":"{SECRET}","jetstream_domain":"hub"}}"#),
        )],
        Some("lab"),
    );
    let (servers, conn, _) = dry_run(root.path(), &[], &[]);
    assert_eq!(servers, vec![a.clone()], "context.txt selects `lab`");
    for want in ["auth=user/password", "js_api=$JS.hub.API", "context=lab"] {
        assert!(conn.contains(want), "{want} missing from {conn}");
    }
    // natscli: $NATS_URL beats the context's url; --server beats both.
    let (servers, _, _) = dry_run(root.path(), &[("NATS_URL", &b)], &[]);
    assert_eq!(servers, vec![b.clone()]);
    let (servers, _, _) = dry_run(root.path(), &[("NATS_URL", &b)], &["--server", &a]);
    assert_eq!(servers, vec![a.clone()]);
    let (servers, conn, _) = dry_run(root.path(), &[], &["--no-context"]);
    assert_eq!(
        (servers[0].as_str(), conn.contains("auth=none")),
        ("nats://127.0.0.1:4222", true)
    );
}

#[test]
fn nats_context_and_the_flag_choose_between_contexts() {
    let (a, b, c) = (dead_url(), dead_url(), dead_url());
    let root = config_root(
        &[
            ("a", format!(r#"{{"url":"{a}"}}"#)),
            ("b", format!(r#"{{"url":"{b}","token":"{SECRET}"}}"#)),
            ("c", format!(r#"{{"url":"{c}"}}"#)),
        ],
        Some("c"),
    );
    let (servers, conn, _) = dry_run(root.path(), &[("NATS_CONTEXT", "b")], &[]);
    assert_eq!(servers, vec![b]);
    assert!(conn.contains("auth=token") && conn.contains("context=b"), "{conn}");
    let (servers, _, _) = dry_run(root.path(), &[("NATS_CONTEXT", "b")], &["--context", "a"]);
    assert_eq!(servers, vec![a]);
    // A .json path works as --context too.
    let file = root.path().join("nats/context/c.json");
    let (servers, _, _) = dry_run(root.path(), &[], &["--context", file.to_str().unwrap()]);
    assert_eq!(servers, vec![c]);
}

#[test]
fn nats_variables_fill_in_what_flags_do_not_give() {
    let root = config_root(&[], None);
    let (_, conn, _) = dry_run(
        root.path(),
        &[("NATS_USER", "bob"), ("NATS_PASSWORD", SECRET)],
        &["--server", &dead_url()],
    );
    assert!(conn.contains("auth=user/password"), "{conn}");
    // A user with no password is a token, as in the nats CLI.
    let (_, conn, _) = dry_run(root.path(), &[("NATS_USER", SECRET)], &["--server", &dead_url()]);
    assert!(conn.contains("auth=token"), "{conn}");
    let (_, conn, _) = dry_run(
        root.path(),
        &[("NATS_TOKEN", SECRET)],
        &["--tlsfirst", "--js-domain", "leaf", "-s", &dead_url()],
    );
    assert!(
        conn.contains("auth=token") && conn.contains("tls(first)") && conn.contains("$JS.leaf.API"),
        "{conn}"
    );
}

#[test]
fn the_nats_cli_flag_names_and_the_old_aliases_are_both_accepted() {
    let root = config_root(&[], None);
    for flag in ["--tlsca", "--tls-ca", "--tlscert", "--tls-cert"] {
        let (code, _, err) = run_env(root.path(), &[], &["verify", "--dry-run", flag, "/no/such.pem"]);
        assert_eq!(code, 2, "{flag}: {err}");
        assert!(err.contains("/no/such.pem: no such file"), "{flag}: {err}");
    }
    let (code, _, err) = run_env(root.path(), &[("NATS_CA", "/no/ca.pem")], &["verify", "--dry-run"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("$NATS_CA /no/ca.pem"), "the variable is named: {err}");
}

#[test]
fn bad_contexts_are_bad_input_located_and_without_their_secrets() {
    let root = config_root(
        &[("broken", format!("{{\"password\": \"{SECRET}\",\n \"url\": 7}}"))],
        Some("gone"),
    );
    let (code, out, err) = run_env(root.path(), &[], &["verify", "--dry-run"]);
    assert_eq!(code, 2, "the selected context does not exist: {err}");
    assert!(err.contains("gone.json") && err.contains("context.txt"), "{err}");
    let (code, out2, err) = run_env(root.path(), &[], &["verify", "--dry-run", "--context", "broken"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("broken.json") && err.contains("line 2"), "{err}");
    for s in [&out, &out2, &err] {
        assert!(!s.contains(SECRET), "{s}");
    }
    let (code, _, err) = run_env(root.path(), &[], &["verify", "--dry-run", "--context", "../x"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("plain name"), "{err}");
}

#[test]
fn an_unreachable_server_is_named_without_the_credentials_in_its_url() {
    let url = dead_url().replace("nats://", &format!("nats://alice:{SECRET}@"));
    let root = config_root(&[("p", format!(r#"{{"url":"{url}","token":"{SECRET}"}}"#))], None);
    let (code, out, err) = run_env(
        root.path(),
        &[("NATS_TIMEOUT", "2s")],
        &["bench", "core", "--msgs", "10", "--context", "p", "--no-progress"],
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("***@127.0.0.1"), "the server is named: {err}");
    assert!(!out.contains(SECRET) && !err.contains(SECRET), "{out}\n{err}");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Issue 41: every file a connection reads goes through the one bounded reader. `--creds`, `--nkey`,
/// `--tlsca` and `--tlscert` said "no such file" for a FIFO, a device or a folder that exists; a context's
/// `file://` password or token waited forever on a FIFO and read /dev/zero without end; a context file
/// that is a FIFO was taken for a name. Each is now refused at once, naming the path and what it is.
#[test]
fn connection_files_and_context_secrets_are_read_only_when_regular_and_bounded() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    mkfifo(&fifo);
    let fifo = fifo.to_str().unwrap();
    let folder = d.path().to_str().unwrap();
    let ctx_fifo = d.path().join("ctx.json");
    mkfifo(&ctx_fifo);
    let root = config_root(
        &[
            (
                "zero",
                r#"{"url":"nats://127.0.0.1:1","user":"u","password":"file:///dev/zero"}"#.to_string(),
            ),
            (
                "pipe",
                format!(r#"{{"url":"nats://127.0.0.1:1","token":"file://{fifo}"}}"#),
            ),
        ],
        None,
    );
    for (args, path, want) in [
        (vec!["--creds", fifo], fifo, "FIFO"),
        (vec!["--nkey", "/dev/null"], "/dev/null", "character device"),
        (vec!["--tlsca", folder], folder, "directory"),
        (vec!["--tlscert", fifo, "--tlskey", fifo], fifo, "FIFO"),
        (vec!["--context", "zero"], "/dev/zero", "character device"),
        (vec!["--context", "pipe"], fifo, "FIFO"),
        (
            vec!["--context", ctx_fifo.to_str().unwrap()],
            ctx_fifo.to_str().unwrap(),
            "FIFO",
        ),
    ] {
        let mut all = vec!["verify", "--dry-run"];
        all.extend_from_slice(&args);
        let (code, _, err) = run_env(root.path(), &[], &all);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(path) && err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("no such file"), "{args:?}: it exists: {err}");
    }
    // A selected-context file that is a FIFO is no selection, never a wait.
    let root = config_root(&[], None);
    mkfifo(&root.path().join("nats").join("context.txt"));
    let (code, _, err) = run_env(root.path(), &[], &["verify", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
}
