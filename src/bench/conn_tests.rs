//! Unit tests of `conn.rs`: precedence between flags, variables and contexts, auth choice, redaction.

use super::*;
use std::collections::BTreeMap;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |k: &str| m.get(k).cloned()
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn resolve(a: &ConnArgs) -> anyhow::Result<ConnSpec> {
    ConnSpec::resolve_with(a, &no_env)
}

/// A config root with contexts (name, JSON) and optionally a selected one.
fn contexts(files: &[(&str, &str)], selected: Option<&str>) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let cdir = d.path().join("nats").join("context");
    std::fs::create_dir_all(&cdir).unwrap();
    for (n, body) in files {
        std::fs::write(cdir.join(format!("{n}.json")), body).unwrap();
    }
    if let Some(s) = selected {
        std::fs::write(d.path().join("nats").join("context.txt"), s).unwrap();
    }
    d
}

#[test]
fn urls_lose_their_credentials_for_display() {
    assert_eq!(
        redact_url("nats://bob:s3cret@10.0.0.1:4222"),
        "nats://***@10.0.0.1:4222"
    );
    assert_eq!(redact_url("nats://127.0.0.1:4222"), "nats://127.0.0.1:4222");
    assert_eq!(redact_url("tok@host:4222"), "***@host:4222");
    assert_eq!(
        redact_url("nats://a:b@h:1,nats://t@g:2"),
        "nats://***@h:1,nats://***@g:2"
    );
}

#[test]
fn credentials_in_a_url_are_read_as_nats_go_reads_them() {
    assert_eq!(
        url_auth("nats://bob:s3%40cret@10.0.0.1:4222"),
        Some(UrlAuth::UserPassword("bob".into(), "s3@cret".into()))
    );
    assert_eq!(url_auth("tok@host:4222"), Some(UrlAuth::Token("tok".into())));
    assert_eq!(url_auth("nats://127.0.0.1:4222"), None);
    assert_eq!(url_auth("nats://h:1/a@b"), None);
    assert_eq!(percent_decoded("a%zz%4"), "a%zz%4");
}

#[test]
fn describe_never_shows_a_secret() {
    let a = ConnArgs {
        server: vec!["nats://u:hunter2@127.0.0.1:4222".into(), "nats://127.0.0.1:4223".into()],
        user: Some("u".into()),
        password: Some("hunter2".into()),
        token: Some("tok-s3cret".into()),
        ..Default::default()
    };
    let s = resolve(&a).unwrap();
    let d = format!("{} {:?} {a:?}", s.describe(), s);
    assert!(!d.contains("hunter2") && !d.contains("tok-s3cret"), "{d}");
    assert!(d.contains("auth=user/password+token"), "{d}");
    assert_eq!(s.server_for(0), "nats://u:hunter2@127.0.0.1:4222");
    assert_eq!(s.server_for(3), "nats://127.0.0.1:4223");
}

#[test]
fn raw_targets_take_credentials_from_the_url_and_skip_tls() {
    let s = resolve(&ConnArgs {
        server: vec!["nats://u:p@127.0.0.1:5000".into(), "127.0.0.1".into()],
        ..Default::default()
    })
    .unwrap();
    let t = s.raw_target(0).unwrap();
    assert_eq!(
        (t.addr.as_str(), t.user.as_deref(), t.pass.as_deref()),
        ("127.0.0.1:5000", Some("u"), Some("p"))
    );
    assert_eq!(s.raw_target(1).unwrap().addr, "127.0.0.1:4222");
    for a in [
        ConnArgs {
            server: vec!["tls://127.0.0.1:5000".into()],
            ..Default::default()
        },
        ConnArgs {
            tls_first: true,
            ..Default::default()
        },
    ] {
        assert!(resolve(&a).unwrap().raw_target(0).is_none(), "{a:?}");
    }
}

#[test]
fn half_a_tls_pair_is_bad_input() {
    let a = ConnArgs {
        tls_cert: Some("/etc/hostname".into()),
        ..Default::default()
    };
    let e = resolve(&a).unwrap_err().to_string();
    assert!(e.contains("--tlscert and --tlskey"), "{e}");
    let e = ConnSpec::resolve_with(&ConnArgs::default(), &env_of(&[("NATS_CA", "/no/such/ca.pem")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("$NATS_CA /no/such/ca.pem: no such file"), "{e}");
}

#[test]
fn nats_url_beats_the_contexts_url_and_the_flag_beats_both() {
    // natscli: --server carries Envar("NATS_URL") and overrides the context (see conn.rs's module doc).
    let d = contexts(
        &[(
            "lab",
            r#"{"url":"nats://ctx:1,nats://ctx:2","user":"a","password":"pw"}"#,
        )],
        Some("lab"),
    );
    let root = d.path().to_str().unwrap();
    let e = env_of(&[("XDG_CONFIG_HOME", root)]);
    let s = ConnSpec::resolve_with(&ConnArgs::default(), &e).unwrap();
    assert_eq!(
        s.servers,
        vec!["nats://ctx:1", "nats://ctx:2"],
        "the selected context's url"
    );
    assert!(s.describe().contains("context=lab") && s.describe().contains("user/password"));
    let e = env_of(&[("XDG_CONFIG_HOME", root), ("NATS_URL", "nats://env:1")]);
    assert_eq!(
        ConnSpec::resolve_with(&ConnArgs::default(), &e).unwrap().servers,
        vec!["nats://env:1"]
    );
    let a = ConnArgs {
        server: vec!["nats://flag:1".into()],
        ..Default::default()
    };
    assert_eq!(ConnSpec::resolve_with(&a, &e).unwrap().servers, vec!["nats://flag:1"]);
    let a = ConnArgs {
        no_context: true,
        ..Default::default()
    };
    let s = ConnSpec::resolve_with(&a, &env_of(&[("XDG_CONFIG_HOME", root)])).unwrap();
    assert_eq!(s.servers, vec!["nats://127.0.0.1:4222"]);
}

#[test]
fn variables_override_context_fields_one_by_one() {
    let d = tempfile::tempdir().unwrap();
    let seed = "SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4";
    let nk = d.path().join("u.nk");
    std::fs::write(&nk, format!("{seed}\n")).unwrap();
    let cd = contexts(
        &[(
            "p",
            r#"{"url":"nats://ctx:1","token":"ctx-token","jetstream_domain":"hub","tls_first":true}"#,
        )],
        None,
    );
    let e = env_of(&[
        ("XDG_CONFIG_HOME", cd.path().to_str().unwrap()),
        ("NATS_CONTEXT", "p"),
        ("NATS_NKEY", nk.to_str().unwrap()),
        ("NATS_TIMEOUT", "750ms"),
    ]);
    let s = ConnSpec::resolve_with(&ConnArgs::default(), &e).unwrap();
    assert!(matches!(&s.auth, Auth::NkeySeed(x) if x == seed));
    assert_eq!(s.token.as_deref(), Some("ctx-token"));
    assert_eq!(s.js_api_prefix(), "$JS.hub.API");
    assert!(s.tls_first && s.raw_target(0).is_none());
    assert_eq!(s.connect_timeout, Duration::from_millis(750));
    let a = ConnArgs {
        js_domain: Some("leaf".into()),
        token: Some("flag-token".into()),
        ..Default::default()
    };
    let s = ConnSpec::resolve_with(&a, &e).unwrap();
    assert_eq!(
        (s.js_api_prefix().as_str(), s.token.as_deref()),
        ("$JS.leaf.API", Some("flag-token"))
    );
    let e = env_of(&[("NATS_TIMEOUT", "soon")]);
    assert!(ConnSpec::resolve_with(&ConnArgs::default(), &e)
        .unwrap_err()
        .to_string()
        .contains("NATS_TIMEOUT"));
}

#[test]
fn a_user_without_a_password_is_a_token_as_in_the_nats_cli() {
    let a = ConnArgs {
        user: Some("s3cret-token".into()),
        ..Default::default()
    };
    let s = resolve(&a).unwrap();
    assert!(matches!(s.auth, Auth::None));
    assert_eq!(s.token.as_deref(), Some("s3cret-token"));
    let s = ConnSpec::resolve_with(
        &ConnArgs::default(),
        &env_of(&[("NATS_USER", "bob"), ("NATS_PASSWORD", "pw")]),
    )
    .unwrap();
    assert!(matches!(&s.auth, Auth::UserPassword(u, p) if u == "bob" && p == "pw"));
    assert!(s.token.is_none());
}

#[test]
fn user_password_wins_over_creds_and_nkey_as_in_jsm_go() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.creds");
    std::fs::write(&f, "x").unwrap();
    let a = ConnArgs {
        creds: Some(f.clone()),
        user: Some("u".into()),
        password: Some("p".into()),
        ..Default::default()
    };
    assert!(matches!(resolve(&a).unwrap().auth, Auth::UserPassword(..)));
    let a = ConnArgs {
        creds: Some(f),
        ..Default::default()
    };
    let s = resolve(&a).unwrap();
    assert!(matches!(s.auth, Auth::Creds(_)) && s.describe().contains("auth=creds"));
}

#[test]
fn context_paths_expand_and_secrets_resolve_from_the_environment() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("ca.pem"), "x").unwrap();
    let cd = contexts(&[("c", r#"{"ca":"~/ca.pem","user":"u","password":"env://PW"}"#)], None);
    let e = env_of(&[
        ("XDG_CONFIG_HOME", cd.path().to_str().unwrap()),
        ("HOME", home.path().to_str().unwrap()),
        ("PW", "from-env"),
    ]);
    let a = ConnArgs {
        context: Some("c".into()),
        ..Default::default()
    };
    let s = ConnSpec::resolve_with(&a, &e).unwrap();
    assert_eq!(s.tls_ca.as_deref(), Some(home.path().join("ca.pem").as_path()));
    assert!(matches!(&s.auth, Auth::UserPassword(_, p) if p == "from-env"));
    // A missing file named by a context says which context and field.
    let cd = contexts(&[("m", r#"{"creds":"/no/such.creds"}"#)], None);
    let e = env_of(&[("XDG_CONFIG_HOME", cd.path().to_str().unwrap())]);
    let a = ConnArgs {
        context: Some("m".into()),
        ..Default::default()
    };
    let err = format!("{:#}", ConnSpec::resolve_with(&a, &e).unwrap_err());
    assert!(err.contains("the context's `creds` /no/such.creds"), "{err}");
}

#[test]
fn js_domains_are_one_subject_token() {
    for bad in ["a.b", "a b", "*", ""] {
        let a = ConnArgs {
            js_domain: Some(bad.into()),
            ..Default::default()
        };
        assert!(resolve(&a).is_err(), "{bad:?}");
    }
    assert_eq!(resolve(&ConnArgs::default()).unwrap().js_api_prefix(), "$JS.API");
}
