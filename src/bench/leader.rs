//! `--leader`: where a run's workers connect relative to the leader of the stream they write to.
//!
//! A JetStream publish goes to the stream leader, which replicates it and acks. A publisher connected to
//! another server adds a hop each way (client → its server → route → leader, and the ack back). On this
//! 2-core machine's 3-node loopback lab, read off `/jsz` on fresh labs (issue 14, eighth session): R1
//! 267–274 k msgs/s with the publisher on the leader's server against 145–165 k elsewhere (1.7×), R3
//! 127 k against 85–89 k (1.45×). A run that round-robins its workers over the URLs given measures
//! whichever the election gave; held-out accuracy after `calibrate` moved by up to 100 % with it.
//!
//! So the run finds the leader (stream info's `cluster.leader`) and each URL's server (its INFO's
//! `server_name`) before the clock starts, and with `remote` or `local` connects its workers only to the
//! URLs that are (not) the leader's; with `any` it connects as before and records how many workers
//! landed on the leader. The leader is looked at again after the run: a leader that moved is a warning.

use super::env::{cannot, Env};
use super::jetstream::js_context;
use super::result::BenchResult;
use super::{BenchError, LeaderPlacement};
use std::time::Duration;

/// What a run records of its placement (`params`: `leader`, `leader_placement`, `workers_on_leader`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Placed {
    pub leader: String,
    pub placement: LeaderPlacement,
    pub on_leader: usize,
    pub workers: usize,
}

impl Placed {
    /// Into the result's parameters, and a warning when the leader was elsewhere after the run.
    pub(super) fn record(&self, r: &mut BenchResult, after: Option<String>) {
        r.params.insert("leader".into(), self.leader.clone());
        r.params
            .insert("leader_placement".into(), self.placement.as_str().into());
        r.params.insert(
            "workers_on_leader".into(),
            format!("{}/{}", self.on_leader, self.workers),
        );
        if let Some(now) = after.filter(|now| *now != self.leader) {
            r.warnings.push(format!(
                "the stream leader moved from {} to {now} during the run: the workers' placement (--leader {}) \
                 held for part of it only; run again",
                self.leader,
                self.placement.as_str()
            ));
        }
    }
}

/// Which of `names` (the server behind each URL, in URL order) the workers use under `want`, and how
/// many of `workers` then sit on `leader`'s server. Err: the placement cannot be had with these URLs.
pub(super) fn route(
    want: LeaderPlacement,
    leader: &str,
    names: &[String],
    workers: usize,
) -> Result<(Option<Vec<usize>>, usize), String> {
    let on: Vec<usize> = (0..names.len()).filter(|&u| names[u] == leader).collect();
    let off: Vec<usize> = (0..names.len()).filter(|&u| names[u] != leader).collect();
    let listed = || names.join(", ");
    match want {
        LeaderPlacement::Any => {
            let n = names.len().max(1);
            Ok((None, (0..workers).filter(|i| on.contains(&(i % n))).count()))
        }
        LeaderPlacement::Remote if off.is_empty() => Err(format!(
            "--leader remote: every server URL given is the stream leader's ({leader}); give the URLs of the \
             cluster's other servers too (--server URL1,URL2,URL3), or use --leader any"
        )),
        LeaderPlacement::Remote => Ok((Some(off), 0)),
        LeaderPlacement::Local if on.is_empty() => Err(format!(
            "--leader local: the stream leader {leader} is not among the servers given ({}); add its URL to \
             --server, or use --leader any",
            listed()
        )),
        LeaderPlacement::Local => Ok((Some(on), workers)),
    }
}

/// The leader of `stream` as its stream info names it; None when it has none (yet). With `patient`, polled
/// for up to three timeouts (at least 5 s): a stream just created can answer before its group has elected;
/// otherwise asked once (`--leader any` only records it, and must not slow a run that cannot read stream
/// info). Asked through the first URL, whatever the workers' route.
pub(super) async fn leader_of(env: &Env, stream: &str, patient: bool) -> Result<Option<String>, BenchError> {
    let admin = env
        .conn
        .connect_via(0, 0, "leader", None)
        .await
        .map_err(super::env::connect_err)?;
    let ctx = js_context(admin, env, 1);
    let t0 = tokio::time::Instant::now();
    let wait = match patient {
        true => (env.spec.timeout * 3).max(Duration::from_secs(5)),
        false => Duration::ZERO,
    };
    loop {
        let last = match ctx.get_stream(stream).await {
            Ok(s) => match s.cached_info().cluster.as_ref().and_then(|c| c.leader.clone()) {
                Some(l) => return Ok(Some(l)),
                None => None,
            },
            Err(e) => Some(e.to_string()),
        };
        if t0.elapsed() > wait {
            return match last {
                Some(e) => Err(cannot(e, &format!("read stream {stream}'s info for its leader"))),
                None => Ok(None),
            };
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The server name behind each URL given, in order (one short connection each).
async fn server_names(env: &Env) -> Result<Vec<String>, BenchError> {
    let mut names = Vec::new();
    for u in 0..env.conn.server_count() {
        let c = tokio::time::timeout(env.conn.connect_timeout, env.conn.connect_via(u, u, "probe", None))
            .await
            .map_err(|_| {
                cannot(
                    "timed out",
                    &format!("connect to {} for its server name", env.conn.server_for(u)),
                )
            })?
            .map_err(super::env::connect_err)?;
        names.push(c.server_info().server_name.clone());
    }
    Ok(names)
}

/// Place the run's `workers` by the leader of `stream` (sets `env.route` for `remote` and `local`).
/// None: nothing to record (a share of a run on agents, or `any` where the leader could not be read:
/// such a run goes on as before). An error only when `remote` or `local` cannot be had.
pub(super) async fn place(env: &Env, stream: &str, workers: usize) -> Result<Option<Placed>, BenchError> {
    let want = env.spec.leader;
    if env.share.is_some() {
        return Ok(None);
    }
    let found = async {
        let leader = leader_of(env, stream, want != LeaderPlacement::Any).await?;
        Ok::<_, BenchError>((leader, server_names(env).await?))
    }
    .await;
    let (leader, names) = match (found, want) {
        (Ok((Some(l), names)), _) => (l, names),
        (Ok((None, _)), LeaderPlacement::Any) | (Err(_), LeaderPlacement::Any) => return Ok(None),
        (Ok((None, _)), w) => {
            return Err(BenchError::BadInput(anyhow::anyhow!(
                "--leader {}: stream {stream} has no RAFT leader (a server without clustering?); use --leader any",
                w.as_str()
            )))
        }
        (Err(e), _) => return Err(e),
    };
    // The URLs given cannot give the placement asked for: the user's input (exit 2), saying what to add.
    let (route, on_leader) =
        route(want, &leader, &names, workers).map_err(|e| BenchError::BadInput(anyhow::anyhow!(e)))?;
    if let Some(r) = route {
        let _ = env.route.set(r);
    }
    Ok(Some(Placed {
        leader,
        placement: want,
        on_leader,
        workers,
    }))
}

/// After the run: record the placement, with a warning if the leader moved meanwhile.
pub(super) async fn record(env: &Env, stream: &str, placed: Option<Placed>, r: &mut BenchResult) {
    if let Some(p) = placed {
        let after = tokio::time::timeout(env.spec.timeout, leader_of(env, stream, false))
            .await
            .ok()
            .and_then(Result::ok)
            .flatten();
        p.record(r, after);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn remote_keeps_the_other_servers_local_the_leaders_any_counts() {
        let n = names(&["n1", "n2", "n3"]);
        assert_eq!(route(LeaderPlacement::Remote, "n2", &n, 4), Ok((Some(vec![0, 2]), 0)));
        assert_eq!(route(LeaderPlacement::Local, "n2", &n, 4), Ok((Some(vec![1]), 4)));
        // Round-robin: workers 0..4 go to URLs 0,1,2,0; one of them is n2's.
        assert_eq!(route(LeaderPlacement::Any, "n2", &n, 4), Ok((None, 1)));
        assert_eq!(route(LeaderPlacement::Any, "n1", &n, 4), Ok((None, 2)));
    }

    #[test]
    fn a_placement_the_urls_cannot_give_says_what_to_add() {
        let e = route(LeaderPlacement::Remote, "n1", &names(&["n1"]), 2).unwrap_err();
        assert!(e.contains("--server URL1,URL2,URL3"), "{e}");
        let e = route(LeaderPlacement::Local, "n3", &names(&["n1", "n2"]), 2).unwrap_err();
        assert!(e.contains("n3 is not among the servers given (n1, n2)"), "{e}");
    }
}
