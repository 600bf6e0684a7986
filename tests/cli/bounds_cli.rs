//! Issue 40, item 3: one number can no longer abort natsplan. Every count and size of bench, lab and
//! verify is checked against the one table of bounds (`input::limits`) before anything is allocated or
//! connected, and refused as bad input (exit 2) naming the flag and the bound. No server is needed: the
//! URL given has nothing behind it, so a value that got past the check would end in exit 3 (cannot
//! connect), an abort (out of memory) or a run, never in this exit 2.

use crate::common::{dead_url, run_limited as run};

#[test]
fn every_bench_count_and_size_is_refused_at_its_bound_before_connecting() {
    let url = dead_url();
    let cases: &[(&[&str], &str)] = &[
        // Issue 40's cases: aborted (SIGABRT, no message) before.
        (
            &["bench", "core", "--clients", "4294967295"],
            "--clients 4294967295: at most 10000 clients",
        ),
        (
            &["bench", "flood", "--clients", "4294967295"],
            "--clients 4294967295: at most 10000 clients",
        ),
        (
            &["bench", "js", "--size", "8GiB"],
            "at most 2147483647 bytes of payload",
        ),
        (
            &["bench", "core", "--size", "8GiB"],
            "at most 2147483647 bytes of payload",
        ),
        (
            &["bench", "obj", "put", "--size", "8GiB"],
            "at most 1073741824 bytes per object",
        ),
        // The rest of the table, each named by its flag.
        (
            &["bench", "core", "--subs", "4294967295"],
            "--subs 4294967295: at most 10000 subscribers",
        ),
        (
            &["bench", "core", "--msgs", "18446744073709551615"],
            "--msgs 18446744073709551615: at most",
        ),
        (
            &["bench", "obj", "get", "--objects", "4294967295"],
            "--objects 4294967295: at most",
        ),
        (
            &["bench", "js", "--batch", "4294967295"],
            "--batch 4294967295: at most 1000000",
        ),
        (
            &["bench", "consumer", "fetch", "--batch", "4294967295"],
            "--batch 4294967295: at most",
        ),
        (
            &["bench", "kv", "--replicas", "255"],
            "--replicas 255: at most 5 replicas",
        ),
        (
            &["bench", "core", "--sub-buffer", "18446744073709551615"],
            "--sub-buffer",
        ),
        (&["bench", "core", "--rate", "1e-300"], "--rate 1e-300: at least 0.001"),
        (&["bench", "js", "--rate", "1e300"], "--rate 1e300: at most"),
        (&["bench", "core", "--timeout", "500000000000y"], "--timeout"),
        (
            &["bench", "core", "--rate", "10", "--backlog-cutoff", "100000y"],
            "--backlog-cutoff",
        ),
        (&["bench", "core", "--sub-sleep", "100000y"], "--sub-sleep"),
        (
            &["bench", "js", "--agents", "2", "--agents-timeout", "100000y"],
            "--agents-timeout",
        ),
    ];
    for (args, says) in cases {
        let mut all = args.to_vec();
        all.extend(["--server", url.as_str(), "--no-progress"]);
        let (code, err) = run(&all);
        assert_eq!(code, 2, "{all:?}: {err}");
        assert!(err.contains(says), "{all:?} should say {says:?}: {err}");
    }
}

#[test]
fn lab_and_fault_lab_sizes_are_refused_at_once_naming_the_bound() {
    for (args, says) in [
        // Aborted, or (100000) built its lab for 73 s before "at most 250 servers fit" (issue 40); with no
        // nats-server to find, a value past the check now ends in exit 3 instead.
        (
            vec!["verify", "--faults", "--nodes", "4294967295"],
            "--nodes 4294967295: at most 9 lab servers",
        ),
        (
            vec!["verify", "--faults", "--nodes", "100000"],
            "--nodes 100000: at most 9 lab servers",
        ),
        (vec!["lab", "up", "--nodes", "16"], "--nodes 16: at most 15 lab servers"),
        (
            vec!["lab", "up", "--nodes", "18446744073709551615"],
            "at most 15 lab servers",
        ),
    ] {
        let (code, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should say {says:?}: {err}");
    }
}
