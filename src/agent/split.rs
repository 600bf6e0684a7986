//! How a row's workers are shared among agents. Worker `g` of the whole run (publisher, putter, getter)
//! goes to agent `(g + rotate) % agents`, subscriber `s` to agent `(s + rotate) % agents`: round-robin, so
//! agents get equal shares (±1), and P1 sits with S1 so that a 1-publisher/1-subscriber row still measures
//! latency on one host. Workers keep their global index, which picks their server exactly as a single
//! process would (`index % servers`), so connections spread over the servers whatever the agent count.
//! Messages are split over workers as bench splits them (the remainder to the first workers).

use crate::bench::{BenchWorkload, Slot};

/// One agent's part of a row.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// Publishers / putters / getters, in global order.
    pub workers: Vec<Slot>,
    /// Global indices of subscribers.
    pub subs: Vec<usize>,
}

impl Assignment {
    pub fn is_empty(&self) -> bool {
        self.workers.is_empty() && self.subs.is_empty()
    }
    /// Messages (operations, objects) this agent's workers do.
    pub fn msgs(&self) -> u64 {
        self.workers.iter().map(|w| w.msgs).sum()
    }
}

/// The same workload with an agent's local worker counts (subscribers of a flood travel in the share).
pub fn local_workload(w: &BenchWorkload, a: &Assignment) -> BenchWorkload {
    w.with_counts(a.workers.len(), a.subs.len())
}

/// Split `msgs` of workload `w` over `agents` agents, starting the round-robin at agent `rotate`.
pub fn split(w: &BenchWorkload, msgs: u64, agents: usize, rotate: usize) -> Vec<Assignment> {
    let agents = agents.max(1);
    let (workers, subs) = w.counts();
    let k = workers.max(1) as u64;
    let mut out = vec![
        Assignment {
            workers: vec![],
            subs: vec![],
        };
        agents
    ];
    let mut first = 0u64;
    for g in 0..workers {
        let n = msgs / k + u64::from((g as u64) < msgs % k);
        out[(g + rotate) % agents].workers.push(Slot {
            index: g,
            msgs: n,
            first,
        });
        first += n;
    }
    for s in 0..subs {
        out[(s + rotate) % agents].subs.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{ObjOp, Storage};
    use proptest::prelude::*;

    #[test]
    fn one_publisher_and_its_subscriber_share_an_agent() {
        let a = split(&BenchWorkload::Core { pubs: 1, subs: 1 }, 50_000, 3, 1);
        assert!(a[0].is_empty() && a[2].is_empty());
        assert_eq!(a[1].workers[0].msgs, 50_000);
        assert_eq!(a[1].subs, vec![0]);
        assert_eq!(
            local_workload(&BenchWorkload::Core { pubs: 1, subs: 1 }, &a[1]),
            BenchWorkload::Core { pubs: 1, subs: 1 }
        );
    }

    #[test]
    fn a_flood_spreads_its_publishers_and_keeps_one_subscriber() {
        let a = split(&BenchWorkload::Flood { pubs: 8 }, 20_000, 3, 0);
        let pubs: Vec<usize> = a.iter().map(|x| x.workers.len()).collect();
        assert_eq!(pubs, vec![3, 3, 2]);
        assert_eq!(a.iter().map(|x| x.subs.len()).sum::<usize>(), 1);
        assert_eq!(a.iter().map(Assignment::msgs).sum::<u64>(), 20_000);
    }

    #[test]
    fn objects_keep_their_global_numbers() {
        let w = BenchWorkload::Obj {
            op: ObjOp::Get,
            clients: 3,
            replicas: 3,
            storage: Storage::File,
        };
        let a = split(&w, 10, 2, 0);
        // Worker 0: objects 0..4, worker 1: 4..7, worker 2: 7..10.
        assert_eq!(
            a[0].workers.iter().map(|s| (s.first, s.msgs)).collect::<Vec<_>>(),
            vec![(0, 4), (7, 3)]
        );
        assert_eq!(a[1].workers[0].first, 4);
    }

    proptest! {
        #[test]
        fn every_worker_runs_exactly_once_spread_over_agents_and_servers(
            workers in 1usize..40, subs in 0usize..12, agents in 1usize..9, servers in 1usize..6,
            rotate in 0usize..10, msgs in 0u64..1_000_000,
        ) {
            let w = BenchWorkload::Core { pubs: workers, subs };
            let a = split(&w, msgs, agents, rotate);
            prop_assert_eq!(a.len(), agents);
            let mut seen: Vec<usize> = a.iter().flat_map(|x| x.workers.iter().map(|s| s.index)).collect();
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..workers).collect::<Vec<_>>());
            let mut seen_subs: Vec<usize> = a.iter().flat_map(|x| x.subs.clone()).collect();
            seen_subs.sort_unstable();
            prop_assert_eq!(seen_subs, (0..subs).collect::<Vec<_>>());
            // Messages: all of them, each worker's range contiguous and disjoint.
            prop_assert_eq!(a.iter().map(Assignment::msgs).sum::<u64>(), msgs);
            let mut slots: Vec<Slot> = a.iter().flat_map(|x| x.workers.clone()).collect();
            slots.sort_by_key(|s| s.index);
            let mut next = 0;
            for s in &slots {
                prop_assert_eq!(s.first, next);
                next += s.msgs;
            }
            // Equal shares per agent (±1) ...
            let per: Vec<usize> = a.iter().map(|x| x.workers.len()).collect();
            prop_assert!(per.iter().max().unwrap() - per.iter().min().unwrap() <= 1, "{:?}", per);
            // ... and connections over the servers as one process would spread them (±1 per server).
            let mut per_server = vec![0usize; servers];
            for s in &slots {
                per_server[(s.index + subs) % servers] += 1;
            }
            prop_assert!(per_server.iter().max().unwrap() - per_server.iter().min().unwrap() <= 1);
            // Local workloads add up to the whole.
            let total: usize = a.iter().map(|x| match local_workload(&w, x) {
                BenchWorkload::Core { pubs, .. } => pubs,
                _ => 0,
            }).sum();
            prop_assert_eq!(total, workers);
        }
    }
}
