//! Property tests over mutated inputs (issue 17), one per input kind: site, calibration, OMB and models
//! files, and the numbers simulate takes. Each mutant must be read or refused with every problem located
//! (a line and column, or a field path, and a fix); a panic fails the case. The case count is fixed, so the
//! run is bounded (a few seconds), and the seeds are proptest's (failures are saved beside this file).
//! `scripts/fuzz-inputs` runs the same kinds of mutants against the release binary at scale.

use natsplan::catalog::Catalog;
use natsplan::input::{InputError, InputErrors};
use proptest::prelude::*;

const SITE: &str = include_str!("../../examples/full-reference.yaml");
const CALIBRATION: &str = include_str!("../../calibration/seed000-ef600-objstore.yaml");
const OMB: &str = "name: 4 topics\ntopics: 4\npartitionsPerTopic: 16\nmessageSize: 1024\n\
                   subscriptionsPerTopic: 2\nproducerRate: 100000\nretention: 24h\n";
const DISKS: &str = include_str!("../../models/disks.yaml");
const ARRAYS: &str = include_str!("../../models/arrays.yaml");
const SERVERS: &str = include_str!("../../models/servers.yaml");
const FAILURES: &str = include_str!("../../models/failure_rates.yaml");

/// Values that broke natsplan once, or that sit on a boundary.
const NASTY: &[&str] = &[
    "18446744073709551615",
    "4294967295",
    "2147483648",
    "-1",
    "0",
    "1e15",
    "1e308",
    ".nan",
    "-.inf",
    "~",
    "\"\"",
    "[]",
    "{}",
    "\"..\"",
    "x\u{0}y",
    "&a [*a]",
    "!!binary AAAA",
    "\"\\t\"",
];

/// One mutation of a YAML text: a scalar value replaced, a line dropped, doubled or cut, or a byte changed.
#[derive(Debug, Clone)]
enum Mutation {
    Value { line: usize, with: usize },
    Drop { line: usize },
    Double { line: usize },
    Cut { line: usize, at: usize },
    Byte { at: usize, byte: u8 },
    LongName { line: usize, len: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0..NASTY.len()).prop_map(|(line, with)| Mutation::Value { line, with }),
        1 => any::<usize>().prop_map(|line| Mutation::Drop { line }),
        1 => any::<usize>().prop_map(|line| Mutation::Double { line }),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(line, at)| Mutation::Cut { line, at }),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Byte { at, byte }),
        1 => (any::<usize>(), 200usize..70_000).prop_map(|(line, len)| Mutation::LongName { line, len }),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut bytes_mut: Vec<(usize, u8)> = Vec::new();
    for m in muts {
        if lines.is_empty() {
            break;
        }
        let n = lines.len();
        match *m {
            Mutation::Value { line, with } => {
                let l = &mut lines[line % n];
                if let Some(i) = l.rfind(": ") {
                    l.truncate(i + 2);
                    l.push_str(NASTY[with]);
                }
            }
            Mutation::Drop { line } => {
                lines.remove(line % n);
            }
            Mutation::Double { line } => {
                let l = lines[line % n].clone();
                lines.insert(line % n, l);
            }
            Mutation::Cut { line, at } => {
                let l = &mut lines[line % n];
                let cut = l
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(at % (l.chars().count() + 1))
                    .unwrap_or(l.len());
                l.truncate(cut);
            }
            Mutation::Byte { at, byte } => bytes_mut.push((at, byte)),
            Mutation::LongName { line, len } => {
                let l = &mut lines[line % n];
                if let Some(i) = l.find("name: ") {
                    l.truncate(i + 6);
                    l.push_str(&"n".repeat(len));
                }
            }
        }
    }
    let mut out = lines.join("\n").into_bytes();
    for (at, b) in bytes_mut {
        if !out.is_empty() {
            let i = at % out.len();
            out[i] = b;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every problem has a place (a line, or a field path) and a fix.
fn located(errs: &InputErrors) -> Result<(), String> {
    if errs.errors.is_empty() {
        return Err("a failure with no problem in it".into());
    }
    let bad: Vec<&InputError> = errs
        .errors
        .iter()
        .filter(|e| (e.line.is_none() && e.path.is_empty()) || e.fix.is_none())
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!("unlocated: {bad:?}"))
    }
}

/// An anyhow error from a reader: its cause must be a located `InputErrors`.
fn located_any(e: &anyhow::Error) -> Result<(), String> {
    match e.chain().find_map(|c| c.downcast_ref::<InputErrors>()) {
        Some(s) => located(s),
        None => Err(format!("not a located error: {e:#}")),
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 96,
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn site_mutants_are_read_or_refused_with_places(muts in prop::collection::vec(mutation(), 1..4)) {
        let cat = Catalog::builtin();
        if let Err(e) = natsplan::site::parse_str(&apply(SITE, &muts), "site.yaml", &cat) {
            prop_assert!(located(&e).is_ok(), "{:?}", located(&e));
        }
    }

    #[test]
    fn calibration_mutants_are_read_or_refused_with_places(muts in prop::collection::vec(mutation(), 1..4)) {
        if let Err(e) = natsplan::perf::calibration::CalibrationFile::parse(&apply(CALIBRATION, &muts), "c.yaml") {
            prop_assert!(located_any(&e).is_ok(), "{:?}", located_any(&e));
        }
    }

    #[test]
    fn omb_mutants_are_read_or_refused_with_places(muts in prop::collection::vec(mutation(), 1..4)) {
        match natsplan::import::omb::parse(&apply(OMB, &muts), Some("1h")) {
            Ok(imp) => prop_assert!(imp.streams.len() as u64 <= natsplan::input::limits::MAX_OMB_TOPICS),
            Err(e) => prop_assert!(located_any(&e).is_ok(), "{:?}", located_any(&e)),
        }
    }

    #[test]
    fn models_mutants_never_panic_and_their_reading_is_located(
        which in 0usize..4,
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let mut texts = [ARRAYS.to_string(), DISKS.to_string(), SERVERS.to_string(), FAILURES.to_string()];
        texts[which] = apply(&texts[which], &muts);
        if let Err(e) = Catalog::from_texts(&texts[0], &texts[1], &texts[2], &texts[3]) {
            prop_assert!(located_any(&e).is_ok(), "{:?}", located_any(&e));
        }
    }

    #[test]
    fn simulate_numbers_are_refused_at_once_when_out_of_bounds(
        years in prop_oneof![1u64..2000, Just(u64::MAX), Just(4_294_967_295)],
        trials in prop_oneof![1u64..10_000_000, Just(u64::MAX), Just(1_000_000_000_000)],
    ) {
        use clap::Parser;
        let too_big = years > 1_000 || years.checked_mul(trials).is_none_or(|x| x > 1_000_000_000);
        prop_assume!(too_big);
        // The site does not exist: refusing the numbers must come before reading it.
        let cli = natsplan::cli::Cli::try_parse_from([
            "natsplan", "simulate", "/nonexistent.yaml", "--years", &years.to_string(), "--trials", &trials.to_string(),
        ]).unwrap();
        let Err(f) = natsplan::run(cli) else { panic!("accepted") };
        prop_assert_eq!(f.code(), 2);
        let msg = format!("{f:?}");
        prop_assert!(msg.contains("--years"), "{}", msg);
    }
}
