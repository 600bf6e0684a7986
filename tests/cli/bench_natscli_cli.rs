//! natscli's `nats bench` forms (issue 39): `bench pub|sub SUBJECT`, `bench js pub sync|async SUBJECT`,
//! `bench js ordered|consume|fetch`, `--multisubject`, and a hint for a form natsplan does not take.
//! Parsing and refusals only: no server is needed (the runs are in tests/live/bench_natscli_live.rs).

use assert_cmd::Command;
use clap::Parser;
use natsplan::bench::{ConsumeMode, Subjects};
use natsplan::cli::{Cli, Command as Cmd};
use natsplan::commands::bench::{BenchCmd, JsForm, NatsPubMode};

fn bench(args: &[&str]) -> Result<BenchCmd, clap::Error> {
    let mut all = vec!["natsplan", "bench"];
    all.extend_from_slice(args);
    match Cli::try_parse_from(all)?.command {
        Cmd::Bench(b) => Ok(*b.what),
        other => panic!("parsed as another command: {other:?}"),
    }
}

/// The binary, on a port nothing listens on: exit code and stderr.
fn run(args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .arg("bench")
        .args(args)
        .args(["--no-progress"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn natscli_core_forms_parse_with_their_subject() {
    match bench(&[
        "pub",
        "orders.new",
        "--clients",
        "3",
        "--multisubject",
        "--multisubjectmax",
        "10",
    ])
    .unwrap()
    {
        BenchCmd::Pub {
            subject,
            clients,
            multi,
            ..
        } => {
            assert_eq!((subject.as_str(), clients), ("orders.new", 3));
            assert!(multi.multisubject);
            assert_eq!(multi.multisubjectmax, 10);
        }
        o => panic!("{o:?}"),
    }
    match bench(&["sub", "orders.new", "--clients", "2", "--multisubject"]).unwrap() {
        BenchCmd::Sub {
            subject,
            clients,
            multisubject,
            ..
        } => assert_eq!((subject.as_str(), clients, multisubject), ("orders.new", 2, true)),
        o => panic!("{o:?}"),
    }
    // natscli requires the subject; so does natsplan.
    assert!(bench(&["pub"]).is_err());
    // --multisubjectmax means nothing without --multisubject.
    assert!(bench(&["pub", "a", "--multisubjectmax", "5"]).is_err());
}

#[test]
fn natscli_jetstream_forms_parse() {
    match bench(&["js", "pub", "sync", "orders.new", "--clients", "2", "--replicas", "3"]).unwrap() {
        BenchCmd::Js {
            form: Some(JsForm::Pub { mode, subject, args }),
            ..
        } => {
            assert_eq!(mode, NatsPubMode::Sync);
            assert_eq!(subject.as_deref(), Some("orders.new"));
            assert_eq!((args.clients, args.stream.replicas), (2, 3));
        }
        o => panic!("{o:?}"),
    }
    match bench(&["js", "pub", "async", "o", "--batch", "64"]).unwrap() {
        BenchCmd::Js {
            form: Some(JsForm::Pub { mode, args, .. }),
            ..
        } => assert_eq!((mode, args.batch), (NatsPubMode::Async, 64)),
        o => panic!("{o:?}"),
    }
    // natscli's `atomic` is its `batch`.
    assert!(matches!(
        bench(&["js", "pub", "atomic", "o"]).unwrap(),
        BenchCmd::Js {
            form: Some(JsForm::Pub {
                mode: NatsPubMode::Batch,
                ..
            }),
            ..
        }
    ));
    for (form, want) in [
        ("ordered", ConsumeMode::Ordered),
        ("consume", ConsumeMode::Consume),
        ("fetch", ConsumeMode::Fetch),
    ] {
        match bench(&["js", form, "--batch", "100", "--clients", "2"]).unwrap() {
            BenchCmd::Js { form: Some(f), .. } => {
                let (mode, a) = match f {
                    JsForm::Ordered(a) => (ConsumeMode::Ordered, a),
                    JsForm::Consume(a) => (ConsumeMode::Consume, a),
                    JsForm::Fetch(a) => (ConsumeMode::Fetch, a),
                    o => panic!("{o:?}"),
                };
                assert_eq!((mode, a.batch, a.clients), (want, 100, 2));
            }
            o => panic!("{o:?}"),
        }
    }
    match bench(&["js", "get", "sync", "--clients", "2", "--msgs", "300"]).unwrap() {
        BenchCmd::Js {
            form: Some(JsForm::Get {
                mode, clients, count, ..
            }),
            ..
        } => assert_eq!(
            (mode, clients, count.msgs),
            (natsplan::commands::bench::GetMode::Sync, 2, 300)
        ),
        o => panic!("{o:?}"),
    }
    // natsplan's own form is unchanged, and mixing the two is refused rather than guessed.
    assert!(matches!(
        bench(&["js", "--clients", "2"]).unwrap(),
        BenchCmd::Js { form: None, .. }
    ));
    let e = bench(&["js", "--clients", "2", "pub", "async", "o"]).expect_err("flags of both forms");
    assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{e}");
}

#[test]
fn forms_natsplan_cannot_run_are_refused_with_what_to_run_instead() {
    let (code, err) = run(&["js", "pub", "fast", "orders"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no fast batch publisher") && err.contains("bench js pub atomic"),
        "{err}"
    );
    let (code, err) = run(&["js", "get", "batch"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no batched direct get") && err.contains("bench js get sync"),
        "{err}"
    );
    // A subject no publish can carry, a positional SUBJECT beside --subject, and subscribers alone on
    // the run's own subject (nobody else could publish to it): bad input before any connection.
    let port = natsplan::lab::free_ports(1).unwrap()[0];
    let url = format!("nats://127.0.0.1:{port}");
    for (args, says) in [
        (vec!["pub", "orders.*"], "not a subject a message can be published to"),
        (vec!["pub", "orders..new"], "not a subject"),
        (
            vec!["js", "pub", "sync", "a", "--stream", "S", "--subject", "b"],
            "give the subject once",
        ),
        (vec!["core", "--clients", "0", "--subs", "1"], "bench sub SUBJECT"),
        (
            vec!["js", "pub", "atomic", "a", "--rate", "100"],
            "--rate with atomic batches",
        ),
    ] {
        let mut a = args.clone();
        a.extend(["-s", &url]);
        let (code, err) = run(&a);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn an_unknown_bench_form_gets_the_natscli_hint() {
    // natscli v0.1's form, and a subcommand natsplan has no name for.
    for args in [
        vec!["orders", "--pub", "1", "--sub", "1"],
        vec!["service", "request", "orders"],
        vec!["js", "--syncpub"],
    ] {
        let (code, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("hint: natsplan bench takes natscli's forms"),
            "{args:?}: {err}"
        );
        assert!(err.contains("natsplan bench pub|sub SUBJECT"), "{err}");
    }
    // Other commands keep clap's message alone.
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["design", "--nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("hint: natsplan bench"));
    // Help still exits 0 on stdout.
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["bench", "--help"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("pub"));
}

#[test]
fn multisubject_numbers_subjects_as_natscli_does() {
    let s = Subjects {
        subject: Some("orders".into()),
        multi: Some(100),
    };
    // Zero padded to the maximum's width, modulo the maximum [cli:cli/bench_command.go].
    assert_eq!(s.of("orders", 7), "orders.007");
    assert_eq!(s.of("orders", 100), "orders.000");
    assert_eq!(s.of("orders", 257), "orders.057");
    assert_eq!(s.capture("orders"), "orders.*");
    let unbounded = Subjects {
        subject: None,
        multi: Some(0),
    };
    assert_eq!(unbounded.of("x", 123456), "x.123456");
    let one = Subjects::default();
    assert_eq!((one.of("x", 5), one.capture("x")), ("x".to_string(), "x".to_string()));
    assert_eq!(one.base("own".into()), "own");
}
