//! The Jepsen-style checker: what the publisher recorded against what the stream holds after healing.
//! Pure, so every verdict is unit-tested without a cluster.

use super::report::Check;
use std::collections::{HashMap, HashSet};

/// How one message id ended after all its retries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PublishFate {
    /// Acknowledged at this stream sequence, at this time (seconds since the run's start).
    Ok { seq: u64, at_s: f64 },
    /// Every attempt was refused before it could be stored (no responders, not connected).
    Failed,
    /// Some attempt timed out: it may or may not be stored.
    Unknown,
}

/// One message id and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub id: String,
    pub outcome: PublishFate,
    /// Tries that were refused before reaching a stream (no responders, not connected).
    pub tries_refused: u32,
    /// Tries that timed out or failed after sending (maybe stored; retried under the same id).
    pub tries_unknown: u32,
}

/// Compare the attempts with the `(sequence, id)` pairs read back from the stream.
pub fn check(attempts: &[Attempt], read: &[(u64, String)]) -> Check {
    check_republished(attempts, read, &HashSet::new())
}

/// As [`check`], after `--recover` re-published the acknowledged ids in `republished` (the fault had lost
/// them): each found in the stream again, at whatever sequence, counts as `acked_republished`; one still
/// missing is lost.
pub fn check_republished(attempts: &[Attempt], read: &[(u64, String)], republished: &HashSet<&str>) -> Check {
    let mut c = Check {
        attempted: attempts.len() as u64,
        read: read.len() as u64,
        ..Check::default()
    };
    let mut seen: HashMap<&str, Vec<u64>> = HashMap::new();
    for (seq, id) in read {
        seen.entry(id.as_str()).or_default().push(*seq);
    }
    let attempted: HashMap<&str, &PublishFate> = attempts.iter().map(|a| (a.id.as_str(), &a.outcome)).collect();
    let ex = |c: &mut Check, what: &str, id: &str| {
        if c.examples.len() < 10 {
            c.examples.push(format!("{what}: {id}"));
        }
    };
    for a in attempts {
        c.tries_refused += u64::from(a.tries_refused);
        c.tries_unknown += u64::from(a.tries_unknown);
        let got = seen.get(a.id.as_str());
        match a.outcome {
            PublishFate::Ok { seq, .. } => {
                c.acked += 1;
                match got {
                    None => {
                        c.acked_lost += 1;
                        ex(&mut c, "acked but missing", &a.id);
                    }
                    Some(_) if republished.contains(a.id.as_str()) => c.acked_republished += 1,
                    Some(seqs) if !seqs.contains(&seq) => {
                        c.seq_mismatch += 1;
                        ex(&mut c, "acked at another sequence", &a.id);
                    }
                    Some(_) => {}
                }
            }
            PublishFate::Failed => c.failed += 1,
            PublishFate::Unknown => {
                c.unknown += 1;
                if got.is_some() {
                    c.unknown_recovered += 1;
                }
            }
        }
    }
    let mut ids: Vec<(&&str, &Vec<u64>)> = seen.iter().collect();
    ids.sort();
    for (id, seqs) in ids {
        if !attempted.contains_key(*id) {
            c.unexpected += 1;
            ex(&mut c, "read but never attempted", id);
        }
        if seqs.len() > 1 {
            c.duplicates += 1;
            ex(&mut c, "duplicate", id);
        }
    }
    c
}

/// Longest gap in seconds between successive acknowledgements (and from `start_s` to the first one).
pub fn longest_gap_s(attempts: &[Attempt], start_s: f64) -> f64 {
    let mut t: Vec<f64> = acks(attempts).collect();
    t.sort_by(f64::total_cmp);
    let mut prev = start_s;
    let mut gap = 0.0f64;
    for x in t {
        gap = gap.max(x - prev);
        prev = prev.max(x);
    }
    gap
}

/// Times of every acknowledgement.
pub fn acks(attempts: &[Attempt]) -> impl Iterator<Item = f64> + '_ {
    attempts.iter().filter_map(|a| match a.outcome {
        PublishFate::Ok { at_s, .. } => Some(at_s),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(id: &str, seq: u64, at_s: f64) -> Attempt {
        Attempt {
            id: id.into(),
            outcome: PublishFate::Ok { seq, at_s },
            tries_refused: 0,
            tries_unknown: 0,
        }
    }

    #[test]
    fn a_clean_history_has_no_findings() {
        let a = vec![ok("a", 1, 0.1), ok("b", 2, 0.2)];
        let c = check(&a, &[(1, "a".into()), (2, "b".into())]);
        assert_eq!((c.acked, c.acked_lost, c.unexpected, c.duplicates), (2, 0, 0, 0));
    }

    #[test]
    fn republished_ids_found_again_are_counted_as_such_and_missing_ones_stay_lost() {
        // b and c were acknowledged at 2 and 3, lost with a power cut, and re-published: b is back at 5,
        // c never came back; d was acknowledged after the recovery.
        let a = vec![ok("a", 1, 0.1), ok("b", 2, 0.2), ok("c", 3, 0.3), ok("d", 4, 9.0)];
        let read = [(1, "a".into()), (4, "d".into()), (5, "b".into())];
        let re: HashSet<&str> = ["b", "c"].into_iter().collect();
        let c = check_republished(&a, &read, &re);
        assert_eq!(
            (c.acked, c.acked_republished, c.acked_lost, c.seq_mismatch),
            (4, 1, 1, 0)
        );
        // Without the re-publish being known, b is at another sequence.
        let c = check(&a, &read);
        assert_eq!((c.acked_republished, c.acked_lost, c.seq_mismatch), (0, 1, 1));
    }

    #[test]
    fn lost_unexpected_duplicate_and_unknown_are_counted() {
        let a = vec![
            ok("a", 1, 0.1),
            ok("b", 2, 0.2),
            Attempt {
                id: "c".into(),
                outcome: PublishFate::Unknown,
                tries_refused: 0,
                tries_unknown: 2,
            },
            Attempt {
                id: "d".into(),
                outcome: PublishFate::Failed,
                tries_refused: 1,
                tries_unknown: 0,
            },
        ];
        let read = vec![(1, "a".into()), (3, "c".into()), (4, "x".into()), (5, "a".into())];
        let c = check(&a, &read);
        assert_eq!(c.acked_lost, 1, "{c:?}");
        assert_eq!(c.unexpected, 1);
        assert_eq!(c.duplicates, 1);
        assert_eq!((c.unknown, c.unknown_recovered, c.failed), (1, 1, 1));
        assert_eq!((c.tries_refused, c.tries_unknown), (1, 2));
        assert!(c.examples.iter().any(|e| e.contains("acked but missing: b")));
    }

    #[test]
    fn gaps_are_measured_between_acks() {
        let a = vec![ok("a", 1, 1.0), ok("b", 2, 1.5), ok("c", 3, 6.0), ok("d", 4, 6.1)];
        assert!((longest_gap_s(&a, 0.0) - 4.5).abs() < 1e-9);
        assert!((longest_gap_s(&[], 2.0)).abs() < 1e-9);
    }
}
