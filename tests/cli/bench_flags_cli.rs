//! `natsplan bench` flags from the outside (issue 19): the names of the current `nats bench` (`--clients`,
//! `--batch`), the names used before still parse (hidden aliases), help text for every option, options a
//! workload cannot use refused, `bench obj` counted by `--objects`, and `predict --batch`/`--window` one
//! flag. Parsing only: no server is needed.

use assert_cmd::Command;
use clap::{CommandFactory, Parser};
use natsplan::bench::{BenchWorkload, ConsumeMode, PublishMode};
use natsplan::cli::{Cli, Command as Cmd};
use natsplan::commands::bench::BenchCmd;

fn bench(args: &[&str]) -> Result<BenchCmd, clap::Error> {
    let mut all = vec!["natsplan", "bench"];
    all.extend_from_slice(args);
    match Cli::try_parse_from(all)?.command {
        Cmd::Bench(b) => Ok(*b.what),
        other => panic!("parsed as another command: {other:?}"),
    }
}

#[test]
fn the_names_in_use_before_still_parse() {
    match bench(&["core", "--pubs", "3", "--subs", "2"]).unwrap() {
        BenchCmd::Core { clients, subs, .. } => assert_eq!((clients, subs), (3, 2)),
        o => panic!("{o:?}"),
    }
    match bench(&["js", "--pubs", "4", "--window", "64"]).unwrap() {
        BenchCmd::Js { args, .. } => assert_eq!((args.clients, args.batch), (4, 64)),
        o => panic!("{o:?}"),
    }
    match bench(&["flood", "--pubs", "5"]).unwrap() {
        BenchCmd::Flood { clients, .. } => assert_eq!(clients, 5),
        o => panic!("{o:?}"),
    }
    match bench(&["obj", "put", "--msgs", "7"]).unwrap() {
        BenchCmd::Obj { objects, .. } => assert_eq!(objects, 7),
        o => panic!("{o:?}"),
    }
    // `bench kv` without an operation is still a put.
    assert!(matches!(
        bench(&["kv", "--clients", "2"]).unwrap(),
        BenchCmd::Kv {
            op: natsplan::commands::bench::KvOp::Put,
            clients: 2,
            ..
        }
    ));
}

#[test]
fn the_current_nats_bench_names_parse() {
    match bench(&["js", "--clients", "4", "--batch", "64", "--publish", "sync"]).unwrap() {
        BenchCmd::Js { args, publish, .. } => {
            assert_eq!((args.clients, args.batch, publish), (4, 64, PublishMode::Sync))
        }
        o => panic!("{o:?}"),
    }
    match bench(&["core", "--clients", "2", "--throughput", "1000"]).unwrap() {
        BenchCmd::Core { clients, rate, .. } => assert_eq!((clients, rate.rate), (2, Some(1000.0))),
        o => panic!("{o:?}"),
    }
    match bench(&[
        "consumer",
        "ordered",
        "--clients",
        "2",
        "--batch",
        "100",
        "--stream",
        "ORDERS",
    ])
    .unwrap()
    {
        BenchCmd::Consumer { mode, args } => assert_eq!(
            (mode, args.clients, args.batch, args.existing_stream.as_deref()),
            (ConsumeMode::Ordered, 2, 100, Some("ORDERS"))
        ),
        o => panic!("{o:?}"),
    }
    assert!(matches!(
        bench(&["kv", "get", "--clients", "3"]).unwrap(),
        BenchCmd::Kv {
            op: natsplan::commands::bench::KvOp::Get,
            ..
        }
    ));
    // --subject only makes sense with --stream.
    assert!(bench(&["js", "--subject", "orders.new"]).is_err());
    assert!(bench(&["js", "--stream", "ORDERS", "--subject", "orders.new"]).is_ok());
}

#[test]
fn options_a_workload_cannot_use_are_not_offered() {
    for args in [
        &["kv", "--sub-sleep", "1ms"][..],
        &["kv", "--monitor", "http://127.0.0.1:8222"],
        &["kv", "--client", "raw"],
        &["ping", "--sub-buffer", "10"],
        &["ping", "--rate", "10"],
        &["obj", "put", "--rate", "10"],
        &["obj", "get", "--client", "raw"],
        &["consumer", "fetch", "--publish", "sync"],
    ] {
        let e = bench(args).expect_err(&format!("{args:?} should be refused"));
        assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument, "{args:?}: {e}");
    }
    // Core options stay where they work.
    assert!(bench(&[
        "core",
        "--sub-sleep",
        "1ms",
        "--monitor",
        "http://127.0.0.1:8222",
        "--client",
        "raw"
    ])
    .is_ok());
    assert!(bench(&["flood", "--sub-buffer", "10"]).is_ok());
    assert!(bench(&["ping", "--client", "async-nats"]).is_ok());
}

#[test]
fn every_option_has_help_and_obj_shows_one_count_flag() {
    let mut cli = Cli::command();
    let b = cli.find_subcommand_mut("bench").expect("bench").clone();
    for sub in b.get_subcommands() {
        for a in sub.get_arguments() {
            let id = a.get_id().as_str();
            if id == "help" {
                continue;
            }
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(
                !help.trim().is_empty(),
                "bench {} --{id} has no help text",
                sub.get_name()
            );
        }
    }
    let obj = b.find_subcommand("obj").unwrap();
    let shown: Vec<String> = obj
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long().map(String::from))
        .collect();
    assert!(shown.contains(&"objects".to_string()), "{shown:?}");
    assert!(!shown.contains(&"msgs".to_string()), "{shown:?}");
    // The old names are hidden aliases, not shown twice in --help.
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["bench", "obj", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--objects") && !help.contains("--msgs"), "{help}");
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["bench", "js", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--clients") && help.contains("--batch"), "{help}");
    assert!(!help.contains("--window") && !help.contains("--pubs"), "{help}");
}

#[test]
fn consumer_runs_with_a_subject_filter_take_one_client() {
    // Refused before any connection is tried (nothing listens on this port).
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args([
            "bench",
            "consumer",
            "fetch",
            "-s",
            "nats://127.0.0.1:9",
            "--stream",
            "S",
            "--subject",
            "a.b",
            "--clients",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--clients 1 with --subject"));
    let w = BenchWorkload::Consume {
        mode: ConsumeMode::Fetch,
        clients: 1,
        batch: 10,
        replicas: 1,
        storage: natsplan::bench::Storage::File,
        target: None,
    };
    assert_eq!(w.name(), "js-fetch");
}

fn predict_window(args: &[&str]) -> u64 {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["--format", "json", "predict", "--kind", "js"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["shape"]["window"]
        .as_u64()
        .unwrap_or_else(|| panic!("no shape.window in {v}"))
}

#[test]
fn predict_batch_and_window_are_one_flag() {
    assert_eq!(predict_window(&["--batch", "64"]), 64);
    assert_eq!(predict_window(&["--window", "64"]), 64);
    assert_eq!(predict_window(&[]), 1);
    assert_eq!(predict_window(&["--publish", "async"]), 256);
    assert_eq!(predict_window(&["--publish", "async", "--window", "32"]), 32);
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["predict", "--kind", "js", "--publish", "sync", "--window", "8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--batch"));
}

#[test]
fn leader_is_refused_where_no_stream_leader_is_written_to_and_with_agents() {
    let run = |args: &[&str]| {
        let out = Command::cargo_bin("natsplan")
            .unwrap()
            .env_remove("NATS_URL")
            .args(["bench"])
            .args(args)
            .args(["--server", "nats://127.0.0.1:1", "--no-progress"])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    let (code, err) = run(&["core", "--leader", "remote"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("only js, kv and obj runs") && err.contains("`core`"),
        "{err}"
    );
    let (code, err) = run(&["js", "--leader", "local", "--agents", "2"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--leader local with --agents"), "{err}");
    // `any` is every run's default: accepted everywhere (here it fails later, on the dead server: exit 3).
    let (code, err) = run(&["core", "--leader", "any", "--msgs", "1"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(matches!(
        bench(&["obj", "get", "--leader", "remote"]).unwrap(),
        BenchCmd::Obj { .. }
    ));
    // KV gets read the bucket's stream: placed like puts (they pass the check and fail on the dead server).
    let (code, err) = run(&["kv", "get", "--leader", "remote", "--msgs", "1"]);
    assert_eq!(code, Some(3), "{err}");
    // KV gets read the bucket's stream: placed like puts (past the check, they fail on the dead server).
    let (code, err) = run(&["kv", "get", "--leader", "remote", "--msgs", "1"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(bench(&["js", "--leader", "elsewhere"]).is_err());
}

#[test]
fn consumer_leader_is_taken_by_fetch_and_consume_and_refused_elsewhere() {
    let run = |args: &[&str]| {
        let out = Command::cargo_bin("natsplan")
            .unwrap()
            .env_remove("NATS_URL")
            .args(["bench"])
            .args(args)
            .args(["--server", "nats://127.0.0.1:1", "--no-progress"])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
    };
    // Taken: past the checks, the run fails on the dead server (exit 3).
    for mode in ["fetch", "consume"] {
        let (code, err) = run(&["consumer", mode, "--consumer-leader", "remote", "--msgs", "1"]);
        assert_eq!(code, Some(3), "{mode}: {err}");
    }
    let (code, err) = run(&["js", "fetch", "--consumer-leader", "local", "--msgs", "1"]);
    assert_eq!(code, Some(3), "{err}");
    // Refused before connecting (exit 2), the flag named with what to do.
    let (code, err) = run(&["consumer", "ordered", "--consumer-leader", "local", "--msgs", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--consumer-leader local: `ordered` cannot be placed"),
        "{err}"
    );
    let (code, err) = run(&["consumer", "fetch", "--consumer-leader", "remote", "--agents", "2"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--consumer-leader remote with --agents"), "{err}");
    let (code, err) = run(&["consumer", "fetch", "--leader", "remote", "--msgs", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("use --consumer-leader"), "{err}");
    // Not offered where no consumer is read; a value it does not know is a usage error.
    assert!(bench(&["js", "--consumer-leader", "remote"]).is_err());
    assert!(bench(&["consumer", "fetch", "--consumer-leader", "elsewhere"]).is_err());
}

#[test]
fn kv_puts_take_publish_async_with_a_batch_and_gets_do_not() {
    match bench(&["kv", "put", "--publish", "async", "--batch", "64", "--clients", "2"]).unwrap() {
        BenchCmd::Kv {
            publish,
            batch,
            clients,
            ..
        } => assert_eq!((publish, batch, clients), (PublishMode::Async, Some(64), 2)),
        o => panic!("{o:?}"),
    }
    // Synchronous by default, as before.
    assert!(matches!(
        bench(&["kv", "put"]).unwrap(),
        BenchCmd::Kv {
            publish: PublishMode::Sync,
            batch: None,
            ..
        }
    ));
    let run = |args: &[&str]| on_a_dead_server("kv", args);
    let (code, err) = run(&["get", "--publish", "async"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--publish async: a KV get waits for its value") && err.contains("bench kv put"),
        "{err}"
    );
    let (code, err) = run(&["put", "--batch", "8"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--batch 8: only asynchronous puts") && err.contains("--publish async --batch 8"),
        "{err}"
    );
    let (code, err) = run(&["put", "--publish", "atomic"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--publish atomic: KV puts are not published in atomic batches"),
        "{err}"
    );
    let (code, err) = run(&["put", "--publish", "async", "--batch", "0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--batch 0: "), "{err}");
    // Past the checks, an async put fails on the dead server (exit 3), not on its flags.
    let (code, err) = run(&["put", "--publish", "async", "--batch", "8"]);
    assert_eq!(code, Some(3), "{err}");
}

#[test]
fn js_consumers_read_on_the_runs_own_stream_here_only() {
    match bench(&["js", "--consumers", "3"]).unwrap() {
        BenchCmd::Js { args, .. } => assert_eq!(args.consumers, 3),
        o => panic!("{o:?}"),
    }
    let run = |args: &[&str]| on_a_dead_server("js", args);
    let (code, err) = run(&["--consumers", "2", "--stream", "ORDERS"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--consumers 2 with --stream ORDERS"), "{err}");
    let (code, err) = run(&["--consumers", "2", "--agents", "2"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--consumers 2 with --agents"), "{err}");
    let (code, err) = run(&["--consumers", "20000"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--consumers 20000"), "{err}");
    // Past the checks, the run fails on the dead server (exit 3), not on its flags.
    let (code, err) = run(&["--consumers", "2"]);
    assert_eq!(code, Some(3), "{err}");
}

/// `natsplan bench WORKLOAD ARGS` against a server that is not there, one message: its exit code and
/// stderr (flags are judged before any connection: exit 2; past them, the dead server: exit 3).
fn on_a_dead_server(workload: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .args(["bench", workload])
        .args(args)
        .args(["--server", "nats://127.0.0.1:1", "--no-progress", "--msgs", "1"])
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
}
