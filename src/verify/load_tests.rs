//! verify's ladder run on a deterministic stand-in for the cluster (`Load`): every runnable row goes
//! through the seam once, in order, with its own spec; a row whose run fails is an error row and the
//! ladder goes on; a signal stops the ladder, the row running is interrupted and later rows are not run.

use super::report::RowStatus;
use super::*;
use crate::bench::result::ClientSample;
use crate::bench::{BenchSpec, Cancel};
use crate::error::Failure;
use std::sync::{Arc, Mutex};

/// Answers every run with a result at exactly `msgs` operations a second, each client timed over 1 s;
/// fails the runs of workload `fail`; trips the cancel token during run number `signal_at` (1-based).
struct Stand {
    asked: Mutex<Vec<String>>,
    fail: Option<&'static str>,
    signal_at: Option<usize>,
}

fn client(id: &str, msgs: u64, size: u64) -> ClientSample {
    ClientSample {
        id: id.into(),
        msgs,
        bytes: msgs * size,
        proto_msgs: msgs,
        proto_bytes: msgs * size,
        start_s: 0.0,
        end_s: 1.0,
        latency_us: None,
    }
}

fn result_of(spec: &BenchSpec) -> BenchResult {
    let name = spec.workload.name();
    let mut r = BenchResult {
        ops: true,
        ..BenchResult::blank(&name, "stand-in", Default::default(), spec.msgs, spec.size, "stand")
    };
    let one = vec![client("P1", spec.msgs, spec.size)];
    if spec.workload.readers_are_workers() {
        r.subscribers.clients = one;
    } else {
        r.publishers.clients = one;
    }
    if let crate::bench::BenchWorkload::Core { subs, .. } | crate::bench::BenchWorkload::Flood { pubs: subs } =
        spec.workload
    {
        r.subscribers.clients = (0..subs.min(1)).map(|_| client("S1", spec.msgs, spec.size)).collect();
    }
    r.completion.asked = spec.msgs;
    r.completion.done = spec.msgs;
    r
}

impl Load for Stand {
    fn server_facts(&self) -> anyhow::Result<(String, String, bool)> {
        Ok(("stand-in".into(), "2.15.1".into(), true))
    }
    fn run(&self, spec: &BenchSpec, cancel: &Cancel) -> Result<BenchResult, Failure> {
        let mut asked = self.asked.lock().unwrap();
        asked.push(spec.workload.name());
        if Some(asked.len()) == self.signal_at {
            cancel.cancel();
            return Err(Failure::CannotRun(anyhow!("interrupted")));
        }
        if self.fail == Some(spec.workload.name().as_str()) {
            return Err(Failure::CannotRun(anyhow!(
                "the stand-in refuses {}",
                spec.workload.name()
            )));
        }
        Ok(result_of(spec))
    }
}

fn verify_on(stand: Arc<Stand>) -> VerifyReport {
    let opts = VerifyOptions {
        conn: ConnSpec::default(),
        monitors: vec![],
        ladder: Ladder::Quick,
        tolerance: 0.0,
        row_seconds: 1.0,
        repeat: 1,
        max_bytes: None,
        dry_run: false,
        keep: false,
        calibration: Calibration::builtin(),
        calibration_label: "built-in".into(),
        catalog: Catalog::builtin(),
        target: None,
        cancel: Cancel::new(),
        load: Some(stand),
    };
    run(&opts, &|_| {}).unwrap()
}

#[test]
fn the_ladder_runs_every_row_once_in_order_through_the_seam() {
    let stand = Arc::new(Stand {
        asked: Mutex::new(vec![]),
        fail: None,
        signal_at: None,
    });
    let rep = verify_on(stand.clone());
    let ran: Vec<String> = rep
        .rows
        .iter()
        .filter(|r| r.status != RowStatus::Skipped)
        .map(|r| r.spec.workload.name())
        .collect();
    assert!(ran.len() >= 4, "{ran:?}");
    assert_eq!(
        *stand.asked.lock().unwrap(),
        ran,
        "one run per row, in the ladder's order"
    );
    for r in rep.rows.iter().filter(|r| r.status != RowStatus::Skipped) {
        let m = r.measured.as_ref().unwrap_or_else(|| panic!("{} measured", r.spec.id));
        assert!(m.ops_per_s > 0.0 && r.predicted.is_some(), "{}: {m:?}", r.spec.id);
        assert!(
            matches!(r.status, RowStatus::Inside | RowStatus::Near | RowStatus::Outside),
            "{}: {:?}",
            r.spec.id,
            r.status
        );
    }
    assert!(!rep.interrupted);
}

#[test]
fn a_failed_row_is_an_error_row_and_the_ladder_goes_on() {
    let stand = Arc::new(Stand {
        asked: Mutex::new(vec![]),
        fail: Some("ping"),
        signal_at: None,
    });
    let rep = verify_on(stand);
    let ping: Vec<&RowResult> = rep.rows.iter().filter(|r| r.spec.workload.name() == "ping").collect();
    assert!(!ping.is_empty());
    for r in &ping {
        assert_eq!(r.status, RowStatus::Error);
        assert_eq!(r.reason.as_deref(), Some("the stand-in refuses ping"));
    }
    let after = rep
        .rows
        .iter()
        .skip_while(|r| r.spec.workload.name() != "ping")
        .skip(ping.len());
    assert!(after.clone().count() > 0 && after.clone().all(|r| r.status != RowStatus::Error));
    assert!(rep.failed_rows >= ping.len());
}

#[test]
fn a_signal_interrupts_the_row_running_and_the_later_rows_are_not_run() {
    let stand = Arc::new(Stand {
        asked: Mutex::new(vec![]),
        fail: None,
        signal_at: Some(2),
    });
    let rep = verify_on(stand.clone());
    assert!(rep.interrupted);
    assert_eq!(stand.asked.lock().unwrap().len(), 2, "nothing ran after the signal");
    let ran: Vec<&RowResult> = rep.rows.iter().filter(|r| r.status != RowStatus::Skipped).collect();
    assert!(ran[0].measured.is_some(), "the first row finished: {:?}", ran[0].status);
    assert_eq!(ran[1].status, RowStatus::Interrupted);
    // Later rows are skipped: for their own reason when the ladder skipped them, else for the signal.
    let later: Vec<&RowResult> = rep
        .rows
        .iter()
        .skip_while(|r| r.status != RowStatus::Interrupted)
        .skip(1)
        .collect();
    assert!(later.iter().all(|r| r.status == RowStatus::Skipped), "{later:#?}");
    let unrun = later.iter().filter(|r| r.spec.skip.is_none()).count();
    assert!(unrun > 0);
    assert!(
        later
            .iter()
            .filter(|r| r.spec.skip.is_none())
            .all(|r| r.reason.as_deref() == Some("not run: interrupted")),
        "{later:#?}"
    );
}
