//! Merging agents' results of one row into the result one large client would have measured: clients
//! side by side on the agreed timeline (each agent's samples shifted by its own start, so only
//! throughput windows cross hosts), histograms added (hdrhistogram addition is exact: the merged
//! percentiles are those of one histogram holding every sample), counts summed, and rate, losses and
//! warnings recomputed over the whole.

use crate::bench::result::{merge_hists, ClientSample, Group, LatencySummary, Losses, RateOutcome};
use crate::bench::{BenchResult, BenchSpec};
use hdrhistogram::Histogram;

/// One agent's finished part.
pub struct Part<'a> {
    /// Display name for warnings.
    pub name: &'a str,
    pub result: &'a BenchResult,
    pub hist: &'a Histogram<u64>,
    /// When its clock started, seconds after its anchor (its samples' zero).
    pub start_s: f64,
}

fn index_of(id: &str) -> (String, usize) {
    let prefix: String = id.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    let n = id[prefix.len()..].parse().unwrap_or(usize::MAX);
    (prefix, n)
}

fn shifted(clients: &[ClientSample], by: f64) -> impl Iterator<Item = ClientSample> + '_ {
    clients.iter().map(move |c| ClientSample {
        start_s: c.start_s - by,
        end_s: c.end_s - by,
        ..c.clone()
    })
}

/// Merge the parts of a row. `spec` is the whole row; `run_id` names it. The caller adds server-side
/// figures (`/varz` slow consumers) it measured itself.
pub fn merge(spec: &BenchSpec, run_id: &str, parts: &[Part]) -> (BenchResult, Histogram<u64>) {
    let hist = merge_hists(parts.iter().map(|p| p.hist));
    let (workers, subs) = spec.workload.counts();
    let mut pubs: Vec<ClientSample> = parts
        .iter()
        .flat_map(|p| shifted(&p.result.publishers.clients, p.start_s).collect::<Vec<_>>())
        .collect();
    let mut recv: Vec<ClientSample> = parts
        .iter()
        .flat_map(|p| shifted(&p.result.subscribers.clients, p.start_s).collect::<Vec<_>>())
        .collect();
    pubs.sort_by_key(|c| index_of(&c.id));
    recv.sort_by_key(|c| index_of(&c.id));
    let first = parts.first().map(|p| p.result);
    let mut params = first.map(|r| r.params.clone()).unwrap_or_default();
    params.insert("agents".into(), parts.len().to_string());
    params.insert("msgs".into(), spec.msgs.to_string());
    for key in ["pubs", "clients"] {
        if params.contains_key(key) {
            params.insert(key.into(), workers.to_string());
        }
    }
    if params.contains_key("subs") {
        params.insert("subs".into(), subs.to_string());
    }
    if subs > 0 && parts.len() > 1 {
        // Say so where the figures are: other hosts' stamps are counted, never timed.
        params.insert("latency".into(), "same-host publisher-subscriber pairs only".into());
    }
    let mut r = BenchResult {
        kind: first
            .map(|r| r.kind.clone())
            .unwrap_or_else(|| spec.workload.kind().as_str().into()),
        label: first.map(|r| r.label.clone()).unwrap_or_default(),
        params,
        msgs: spec.msgs,
        size: spec.size,
        publishers: Group { clients: pubs },
        subscribers: Group { clients: recv },
        latency_us: LatencySummary::from_hist_ns(&hist),
        rate: None,
        losses: None,
        warnings: parts
            .iter()
            .flat_map(|p| p.result.warnings.iter().map(move |w| format!("agent {}: {w}", p.name)))
            .collect(),
        failed: parts.iter().map(|p| p.result.failed).sum(),
        ops: first.map(|r| r.ops).unwrap_or(false),
        run_id: run_id.to_string(),
        completion: Default::default(),
        left_behind: parts
            .iter()
            .flat_map(|p| p.result.left_behind.iter().cloned())
            .collect(),
    };
    // The whole row was asked; each share says what it did (a lost agent's share is simply not done).
    for p in parts {
        r.completion.add(&p.result.completion);
    }
    r.completion.asked = spec.msgs;
    if let Some(target) = spec.rate_per_s {
        let rates: Vec<&RateOutcome> = parts.iter().filter_map(|p| p.result.rate.as_ref()).collect();
        r.rate = Some(RateOutcome {
            target_per_s: target,
            achieved_per_s: r.publishers.msgs_per_s(),
            sustained: rates.iter().all(|x| x.sustained),
            max_lag_ms: rates.iter().map(|x| x.max_lag_ms).fold(0.0, f64::max),
            cutoff_ms: spec.backlog_cutoff.as_secs_f64() * 1e3,
        });
    }
    let has_sub_side = matches!(
        spec.workload,
        crate::bench::BenchWorkload::Core { .. } | crate::bench::BenchWorkload::Flood { .. }
    ) && subs > 0;
    if has_sub_side {
        let published = if workers == 0 || r.publishers.clients.is_empty() {
            spec.msgs
        } else {
            r.published()
        };
        let losses: Vec<&Losses> = parts.iter().filter_map(|p| p.result.losses.as_ref()).collect();
        let dropped = r
            .subscribers
            .clients
            .iter()
            .map(|c| published.saturating_sub(c.msgs))
            .sum();
        r.losses = Some(Losses {
            expected_per_sub: published,
            dropped,
            client_slow_events: losses.iter().map(|l| l.client_slow_events).sum(),
            server_slow_consumers: None,
            timed_out: losses.iter().any(|l| l.timed_out),
        });
    }
    (r, hist)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::new_hist;
    use crate::bench::{BenchWorkload, ClientChoice, PublishMode, Storage};
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeMap;
    use std::time::Duration;

    fn spec(workload: BenchWorkload, msgs: u64) -> BenchSpec {
        BenchSpec {
            workload,
            msgs,
            size: 128,
            rate_per_s: None,
            backlog_cutoff: Duration::from_secs(1),
            timeout: Duration::from_secs(5),
            monitor: vec![],
            keep: false,
            sub_sleep: None,
            sub_buffer: None,
            client: ClientChoice::Auto,
            progress: false,
            leader: crate::bench::LeaderPlacement::Any,
            consumer_leader: crate::bench::LeaderPlacement::Any,
            subjects: Default::default(),
        }
    }

    fn client(id: &str, msgs: u64, a: f64, b: f64) -> ClientSample {
        ClientSample {
            id: id.into(),
            msgs,
            bytes: msgs * 128,
            proto_msgs: msgs,
            proto_bytes: msgs * 128,
            start_s: a,
            end_s: b,
            latency_us: None,
        }
    }

    fn result(pubs: Vec<ClientSample>, subs: Vec<ClientSample>) -> BenchResult {
        BenchResult {
            kind: "js".into(),
            label: "JetStream asynchronous publisher".into(),
            params: BTreeMap::from([("pubs".to_string(), "1".to_string())]),
            msgs: 0,
            size: 128,
            publishers: Group { clients: pubs },
            subscribers: Group { clients: subs },
            latency_us: None,
            rate: None,
            losses: None,
            warnings: vec!["w".into()],
            failed: 0,
            ops: false,
            run_id: "x".into(),
            completion: Default::default(),
            left_behind: vec![],
        }
    }

    #[test]
    fn merged_percentiles_equal_one_histogram_of_every_sample() {
        // Seeded latencies (a long tail) recorded once into one histogram and, split at random, into
        // three agents' histograms that travel V2-encoded: the merge is the same histogram.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut all = new_hist();
        let mut per_agent = [new_hist(), new_hist(), new_hist()];
        for _ in 0..60_000 {
            let base: f64 = rng.random_range(20_000.0..200_000.0);
            let tail = if rng.random_bool(0.01) {
                rng.random_range(1.0..500.0)
            } else {
                1.0
            };
            let ns = (base * tail) as u64;
            all.record(ns).unwrap();
            per_agent[rng.random_range(0..3)].record(ns).unwrap();
        }
        let wire: Vec<Histogram<u64>> = per_agent
            .iter()
            .map(|h| super::super::protocol::hist_from_v2(&super::super::protocol::hist_to_v2(h).unwrap()).unwrap())
            .collect();
        let results: Vec<BenchResult> = (0..3).map(|_| result(vec![], vec![])).collect();
        let parts: Vec<Part> = (0..3)
            .map(|i| Part {
                name: "a",
                result: &results[i],
                hist: &wire[i],
                start_s: 0.0,
            })
            .collect();
        let s = spec(
            BenchWorkload::Js {
                pubs: 3,
                replicas: 1,
                storage: Storage::File,
                publish: PublishMode::Async,
                window: 10,
                consumers: 0,
            },
            60_000,
        );
        let (r, merged) = merge(&s, "run", &parts);
        assert_eq!(merged, all);
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(merged.value_at_quantile(q), all.value_at_quantile(q), "q={q}");
        }
        assert_eq!(r.latency_us, LatencySummary::from_hist_ns(&all));
        assert_eq!(r.latency_us.unwrap().count, 60_000);
    }

    #[test]
    fn counts_add_up_and_windows_meet_on_the_agreed_start() {
        // Agent A started its clock 2 s after its anchor, agent B 10 s after its own: on the agreed
        // timeline both publishers ran from 0 to 1 s.
        let a = result(vec![client("P1", 600, 2.0, 3.0)], vec![client("S1", 1000, 2.0, 3.5)]);
        let mut b = result(vec![client("P2", 400, 10.0, 11.0)], vec![]);
        b.failed = 3;
        let (ha, hb) = (new_hist(), new_hist());
        let parts = [
            Part {
                name: "a",
                result: &a,
                hist: &ha,
                start_s: 2.0,
            },
            Part {
                name: "b",
                result: &b,
                hist: &hb,
                start_s: 10.0,
            },
        ];
        let (r, _) = merge(&spec(BenchWorkload::Core { pubs: 2, subs: 1 }, 1000), "run", &parts);
        assert_eq!(r.published(), 1000);
        assert_eq!(r.received(), 1000);
        assert!((r.publishers.window_s() - 1.0).abs() < 1e-9);
        assert!((r.publishers.msgs_per_s() - 1000.0).abs() < 1e-6);
        assert!((r.window_s() - 1.5).abs() < 1e-9);
        let l = r.losses.unwrap();
        assert_eq!((l.expected_per_sub, l.dropped), (1000, 0));
        assert_eq!(r.warnings, vec!["agent a: w", "agent b: w"]);
        assert_eq!(r.failed, 3, "failures add up and stay out of the counts");
        assert_eq!(r.params["agents"], "2");
        assert_eq!(r.params["pubs"], "2");
        assert_eq!(r.params["latency"], "same-host publisher-subscriber pairs only");
    }
}
