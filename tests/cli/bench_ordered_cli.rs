//! `natsplan bench consumer ordered --push` (issue 19) from the outside: the push ordered consumer is
//! asked for with `--push` (the default stays natscli's pull ordered consumer), `--push` only on an
//! ordered run and never with `--batch`, `--client raw` only where a raw path exists, `--sleep` for a
//! slow consumer, and help that says what each reads. Refusals come before any connection is tried
//! (nothing listens on port 9): exit 2 with the flag named.

use assert_cmd::Command;
use clap::Parser;
use natsplan::bench::{ClientChoice, ConsumeMode};
use natsplan::cli::{Cli, Command as Cmd};
use natsplan::commands::bench::BenchCmd;
use std::time::Duration;

fn parse(args: &[&str]) -> Result<BenchCmd, clap::Error> {
    let mut all = vec!["natsplan", "bench", "consumer"];
    all.extend_from_slice(args);
    match Cli::try_parse_from(all)?.command {
        Cmd::Bench(b) => Ok(*b.what),
        other => panic!("parsed as another command: {other:?}"),
    }
}

/// Run `natsplan bench consumer ARGS` against a port nothing listens on: (exit code, stderr).
fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .args(["bench", "consumer"])
        .args(args)
        .args(["-s", "nats://127.0.0.1:9", "--no-progress", "--timeout", "1s"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string())
}

#[test]
fn push_ordered_parses_with_its_client_and_sleep_and_pull_stays_the_default() {
    match parse(&[
        "ordered",
        "--push",
        "--client",
        "raw",
        "--sleep",
        "2ms",
        "--clients",
        "2",
    ])
    .unwrap()
    {
        BenchCmd::Consumer { mode, args } => assert_eq!(
            (mode, args.push, args.client, args.sleep, args.clients),
            (
                ConsumeMode::Ordered,
                true,
                ClientChoice::Raw,
                Some(Duration::from_millis(2)),
                2
            )
        ),
        o => panic!("{o:?}"),
    }
    match parse(&["ordered"]).unwrap() {
        BenchCmd::Consumer { args, .. } => {
            assert_eq!((args.push, args.client, args.batch), (false, ClientChoice::Auto, 500))
        }
        o => panic!("{o:?}"),
    }
    // The push mode is a flag, not a mode name of its own.
    assert!(parse(&["ordered-push"]).is_err());
}

#[test]
fn push_takes_no_batch() {
    let e = parse(&["ordered", "--push", "--batch", "100"]).expect_err("a push consumer has no batch");
    assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{e}");
    assert!(
        e.to_string().contains("--batch") && e.to_string().contains("--push"),
        "{e}"
    );
}

#[test]
fn push_is_for_the_ordered_consumer_only() {
    for mode in ["fetch", "consume"] {
        let (code, err) = run(&[mode, "--push"]);
        assert_eq!(code, Some(2), "{mode}: {err}");
        assert!(
            err.contains("--push: only the ordered consumer has a push mode") && err.contains(mode),
            "{mode}: {err}"
        );
    }
}

#[test]
fn the_raw_client_is_refused_where_only_async_nats_reads() {
    for mode in ["fetch", "consume", "ordered"] {
        let (code, err) = run(&[mode, "--client", "raw"]);
        assert_eq!(code, Some(2), "{mode}: {err}");
        assert!(
            err.contains("--client raw: only `bench consumer ordered --push` has a raw protocol path"),
            "{mode}: {err}"
        );
    }
    // With --push it is accepted: the run gets as far as connecting (exit 3, cannot run).
    let (code, err) = run(&["ordered", "--push", "--client", "raw"]);
    assert_eq!(code, Some(3), "{err}");
}

#[test]
fn help_says_which_ordered_consumer_each_reads() {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["bench", "consumer", "--help"])
        .output()
        .unwrap();
    // Words as clap wraps them: compare with runs of white space made one.
    let help = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for needle in [
        "--push",
        "nats bench oldjs ordered",
        "nats bench js ordered",
        "--sleep",
        "--client",
    ] {
        assert!(help.contains(needle), "{needle} missing from:\n{help}");
    }
}
