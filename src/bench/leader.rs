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
use async_nats::jetstream::consumer::PullConsumer;
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

// ------------------------------------------------------------------------------------------ consumers
//
// `--consumer-leader`: where each reader of a consumer run connects relative to its consumer's leader. A
// pull request goes to the consumer's leader, which reads its own server's replica of the stream and sends
// the messages back; each ack goes to it too. A reader connected to another server adds a route hop each
// way. The run's consumers are named, not durable, so on a limits stream nats-server makes them R1
// (consumer.go `ConsumerConfig.replicas`) on a random one of the stream's peers (jetstream_cluster.go
// `createGroupForConsumer`); replicated ones (work-queue and interest streams) get a random preferred
// leader (`setPreferred`). Either way a run that leaves it to chance is bimodal: on the 3-node loopback
// lab one fetching client read 74-124 k msgs/s (1 KiB, R3 stream) with its consumer on its server and
// 43-75 k elsewhere (issue 37: 24 runs on a shared host; placed, 62-97 k against 52-62 k).
//
// After a consumer is created and has elected its leader, the reader stays where it is when that already
// is what was asked, else connects to a URL whose server is (not) the leader's, else, when no URL given
// can give it and the consumer is replicated, asks the leader to step down in favour of a server that can
// (the stepdown request's `placement.preferred`, nats-server 2.11+: jetstream_api.go
// `jsConsumerLeaderStepDownRequest`). An R1 consumer cannot be moved: only the URLs can place its reader.

/// What `--consumer-leader` does for one reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ConsumerMove {
    /// It already reads as asked (or `any`).
    Stay,
    /// Reconnect it to this URL (index into the URLs given).
    Connect(usize),
    /// Ask the consumer's leader to step down in favour of this server.
    StepDown(String),
}

/// Where one reader stands: its consumer's leader, the consumer's peers (leader included), the server the
/// reader is connected to.
pub(super) struct Seat<'a> {
    pub leader: &'a str,
    pub peers: &'a [String],
    pub here: &'a str,
}

/// What reader `i` must do under `want`, given the server behind each URL (`names`). Err: no URL given and
/// no peer of the consumer can give the placement (the message says which flag, what, and what to add).
pub(super) fn consumer_move(
    want: LeaderPlacement,
    seat: &Seat,
    names: &[String],
    i: usize,
) -> Result<ConsumerMove, String> {
    let Seat { leader, peers, here } = *seat;
    match want {
        LeaderPlacement::Any => Ok(ConsumerMove::Stay),
        LeaderPlacement::Local if here == leader => Ok(ConsumerMove::Stay),
        LeaderPlacement::Local => match names.iter().position(|n| n == leader) {
            Some(u) => Ok(ConsumerMove::Connect(u)),
            None if peers.iter().any(|p| p == here) => Ok(ConsumerMove::StepDown(here.to_string())),
            None => Err(format!(
                "--consumer-leader local: the consumer's leader {leader} is not among the servers given ({}) and \
                 the reader's server {here} holds no replica of it (its peers: {}; the run's consumers are R1 on \
                 a limits stream); add {leader}'s URL to --server (every server's, for any run), or use \
                 --consumer-leader any",
                names.join(", "),
                peers.join(", ")
            )),
        },
        LeaderPlacement::Remote if here != leader => Ok(ConsumerMove::Stay),
        LeaderPlacement::Remote => {
            let off: Vec<usize> = (0..names.len()).filter(|&u| names[u] != leader).collect();
            if !off.is_empty() {
                return Ok(ConsumerMove::Connect(off[i % off.len()]));
            }
            match peers.iter().filter(|p| *p != leader).min() {
                Some(p) => Ok(ConsumerMove::StepDown(p.clone())),
                None => Err(format!(
                    "--consumer-leader remote: every server URL given is the consumer's leader's ({leader}) and the \
                     consumer has no other replica to lead (R1); give the URLs of the cluster's other servers too \
                     (--server URL1,URL2,URL3), or use --consumer-leader any"
                )),
            }
        }
    }
}

/// The run's `--consumer-leader` and, for `local` and `remote`, the server behind each URL given.
pub(super) struct ConsumerPlacer {
    pub want: LeaderPlacement,
    names: Vec<String>,
}

impl ConsumerPlacer {
    /// Reads the URLs' server names (one short connection each) unless the placement is `any`.
    pub(super) async fn new(env: &Env) -> Result<ConsumerPlacer, BenchError> {
        let want = match env.share {
            Some(_) => LeaderPlacement::Any,
            None => env.spec.consumer_leader,
        };
        let names = match want {
            LeaderPlacement::Any => Vec::new(),
            _ => server_names(env).await?,
        };
        Ok(ConsumerPlacer { want, names })
    }
}

/// One reader as placed: its consumer's leader and the server it reads through.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ReaderSeat {
    pub leader: String,
    pub server: String,
}

/// A consumer's leader and peers (leader first) as its info names them ("" when it has none).
fn leader_and_peers(info: &async_nats::jetstream::consumer::Info) -> (String, Vec<String>) {
    let Some(k) = info.cluster.as_ref() else {
        return (String::new(), Vec::new());
    };
    let leader = k.leader.clone().unwrap_or_default();
    let mut peers = vec![leader.clone()];
    peers.extend(k.replicas.iter().map(|p| p.name.clone()));
    (leader, peers)
}

/// A consumer whose info names no cluster (a server outside any cluster) is led by the server the info
/// came from, the reader's own: say so, rather than an empty name every placement would misread.
fn standalone_leads((leader, peers): (String, Vec<String>), here: &str) -> (String, Vec<String>) {
    if leader.is_empty() {
        (here.to_string(), vec![here.to_string()])
    } else {
        (leader, peers)
    }
}

/// Place global reader `gi`, whose consumer `pc` (on `stream`, elected) was created through `c`: the
/// client it then reads through, its consumer bound to that client, and where it sits.
pub(super) async fn place_reader(
    env: &Env,
    placer: &ConsumerPlacer,
    gi: usize,
    c: async_nats::Client,
    mut pc: PullConsumer,
    stream: &str,
) -> Result<(async_nats::Client, PullConsumer, ReaderSeat), BenchError> {
    // `consume::await_leader` read the info last, and it named a leader.
    let info = pc.cached_info().clone();
    let here = c.server_info().server_name.clone();
    let (leader, peers) = standalone_leads(leader_and_peers(&info), &here);
    let seat = Seat {
        leader: &leader,
        peers: &peers,
        here: &here,
    };
    let mv =
        consumer_move(placer.want, &seat, &placer.names, gi).map_err(|e| BenchError::BadInput(anyhow::anyhow!(e)))?;
    match mv {
        ConsumerMove::Stay => Ok((c, pc, ReaderSeat { leader, server: here })),
        ConsumerMove::Connect(u) => {
            let c = env
                .conn
                .connect_via(u, gi, "sub", Some(env.slow_events.clone()))
                .await
                .map_err(super::env::connect_err)?;
            let ctx = js_context(c.clone(), env, 1);
            let s = ctx.get_stream(stream).await.map_err(|e| cannot(e, "open stream"))?;
            let pc = s
                .get_consumer(&info.name)
                .await
                .map_err(|e| cannot(e, "open the run's consumer"))?;
            let server = c.server_info().server_name.clone();
            Ok((c, pc, ReaderSeat { leader, server }))
        }
        ConsumerMove::StepDown(to) => {
            let ctx = js_context(c.clone(), env, 1);
            let leader = step_down(env, &ctx, &mut pc, stream, &to).await?;
            Ok((c, pc, ReaderSeat { leader, server: here }))
        }
    }
}

/// Ask consumer `pc`'s leader to step down in favour of server `to`, and wait (three timeouts, at least
/// 5 s) until its info names `to` as leader.
async fn step_down(
    env: &Env,
    ctx: &async_nats::jetstream::Context,
    pc: &mut PullConsumer,
    stream: &str,
    to: &str,
) -> Result<String, BenchError> {
    let name = pc.cached_info().name.clone();
    let what = format!(
        "move consumer {name}'s leader to {to} (--consumer-leader {})",
        env.spec.consumer_leader.as_str()
    );
    let body = serde_json::json!({ "placement": { "preferred": to } });
    let answer: serde_json::Value = ctx
        .request(format!("CONSUMER.LEADER.STEPDOWN.{stream}.{name}"), &body)
        .await
        .map_err(|e| cannot(e, &what))?;
    if let Some(e) = answer.get("error") {
        let said = e.get("description").and_then(|d| d.as_str()).unwrap_or("refused");
        return Err(cannot(
            format!("{said} (a leader stepdown with a preferred server needs nats-server 2.11 or later); give the URL of the consumer's leader's server in --server, or use --consumer-leader any"),
            &what,
        ));
    }
    let t0 = tokio::time::Instant::now();
    let wait = (env.spec.timeout * 3).max(Duration::from_secs(5));
    loop {
        // While the group elects, an info request can go unanswered: asked again until the wait is over.
        let now = match pc.info().await {
            Ok(info) => leader_and_peers(info).0,
            Err(e) => format!("unknown ({e})"),
        };
        if now == to {
            return Ok(now);
        }
        if t0.elapsed() > wait {
            return Err(cannot(
                format!("its leader is {now:?} after {wait:?}; run again, or use --consumer-leader any"),
                &what,
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The leaders of the run's consumers `names` on `stream` now (None for one that cannot be read).
pub(super) async fn consumer_leaders(env: &Env, stream: &str, names: &[String]) -> Vec<Option<String>> {
    let Ok(admin) = env.conn.connect_via(0, 0, "leader", None).await else {
        return vec![None; names.len()];
    };
    let ctx = js_context(admin, env, 1);
    let Ok(s) = ctx.get_stream(stream).await else {
        return vec![None; names.len()];
    };
    let mut out = Vec::new();
    for n in names {
        out.push(s.consumer_info(n).await.ok().map(|i| leader_and_peers(&i).0));
    }
    out
}

/// What a consumer run records of its readers' placement (`params`: `consumer_leader`,
/// `consumer_leader_placement`, `readers_on_consumer_leader`, and `stream_leader` when it was read), and
/// a warning for each consumer whose leader was elsewhere after the run (`after`, in reader order).
pub(super) fn record_readers(
    want: LeaderPlacement,
    seats: &[ReaderSeat],
    stream_leader: Option<String>,
    after: &[Option<String>],
    r: &mut BenchResult,
) {
    if seats.is_empty() {
        return;
    }
    let leaders: Vec<&str> = seats.iter().map(|s| s.leader.as_str()).collect();
    let on = seats
        .iter()
        .filter(|s| !s.leader.is_empty() && s.leader == s.server)
        .count();
    r.params.insert("consumer_leader".into(), leaders.join(","));
    r.params
        .insert("consumer_leader_placement".into(), want.as_str().into());
    r.params
        .insert("readers_on_consumer_leader".into(), format!("{on}/{}", seats.len()));
    if let Some(l) = stream_leader {
        r.params.insert("stream_leader".into(), l);
    }
    let moved: Vec<String> = seats
        .iter()
        .zip(after)
        .enumerate()
        .filter_map(|(i, (s, a))| match a {
            Some(now) if *now != s.leader => Some(format!("S{}'s from {} to {now}", i + 1, s.leader)),
            _ => None,
        })
        .collect();
    if !moved.is_empty() {
        r.warnings.push(format!(
            "consumer leaders moved during the run ({}): the readers' placement (--consumer-leader {}) held for \
             part of it only; run again",
            moved.join(", "),
            want.as_str()
        ));
    }
    // A placed run whose leaders could not all be read again (the look timed out, or a consumer was gone)
    // says so: that they held is not known.
    if want != LeaderPlacement::Any {
        let unread: Vec<String> = (0..seats.len())
            .filter(|&i| after.get(i).is_none_or(Option::is_none))
            .map(|i| format!("S{}", i + 1))
            .collect();
        if !unread.is_empty() {
            r.warnings.push(format!(
                "could not read the consumer leaders of {} again after the run: whether the readers' placement \
                 (--consumer-leader {}) held throughout is not known; run again, or raise --timeout",
                unread.join(", "),
                want.as_str()
            ));
        }
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

    #[test]
    fn a_consumer_on_a_server_outside_any_cluster_is_led_by_the_readers_server() {
        let (leader, peers) = standalone_leads((String::new(), Vec::new()), "solo");
        assert_eq!((leader.as_str(), peers), ("solo", names(&["solo"])));
        // Placed `local` on that server, the reader stays (it used to read an empty leader name and fail).
        let (leader, peers) = standalone_leads((String::new(), Vec::new()), "solo");
        let s = seat(&leader, &peers, "solo");
        assert_eq!(
            consumer_move(LeaderPlacement::Local, &s, &names(&["solo"]), 0),
            Ok(ConsumerMove::Stay)
        );
        // A clustered consumer's own names are kept.
        let kept = standalone_leads(("n2".into(), names(&["n2", "n1"])), "n1");
        assert_eq!(kept, ("n2".to_string(), names(&["n2", "n1"])));
    }

    fn seat<'a>(leader: &'a str, peers: &'a [String], here: &'a str) -> Seat<'a> {
        Seat { leader, peers, here }
    }

    #[test]
    fn a_reader_stays_connects_or_moves_the_consumers_leader() {
        use ConsumerMove::*;
        let urls = names(&["n1", "n2", "n3"]);
        let peers = names(&["n2", "n1", "n3"]);
        // Already as asked, or `any`: stay.
        assert_eq!(
            consumer_move(LeaderPlacement::Local, &seat("n2", &peers, "n2"), &urls, 0),
            Ok(Stay)
        );
        assert_eq!(
            consumer_move(LeaderPlacement::Remote, &seat("n2", &peers, "n1"), &urls, 0),
            Ok(Stay)
        );
        assert_eq!(
            consumer_move(LeaderPlacement::Any, &seat("n2", &peers, "n2"), &urls, 0),
            Ok(Stay)
        );
        // Another URL gives it: connect there (remote spreads readers over the other servers).
        assert_eq!(
            consumer_move(LeaderPlacement::Local, &seat("n2", &peers, "n1"), &urls, 0),
            Ok(Connect(1))
        );
        assert_eq!(
            consumer_move(LeaderPlacement::Remote, &seat("n2", &peers, "n2"), &urls, 0),
            Ok(Connect(0))
        );
        assert_eq!(
            consumer_move(LeaderPlacement::Remote, &seat("n2", &peers, "n2"), &urls, 1),
            Ok(Connect(2))
        );
        // One URL given: the leader steps down in favour of the reader's server (local) or another peer.
        let one = names(&["n1"]);
        assert_eq!(
            consumer_move(LeaderPlacement::Local, &seat("n3", &peers, "n1"), &one, 0),
            Ok(StepDown("n1".into()))
        );
        assert_eq!(
            consumer_move(LeaderPlacement::Remote, &seat("n1", &peers, "n1"), &one, 0),
            Ok(StepDown("n2".into()))
        );
    }

    #[test]
    fn a_consumer_placement_nothing_can_give_says_which_flag_and_what_to_add() {
        let one = names(&["n1"]);
        // An R1 consumer on the only server given has no other replica to lead.
        let r1 = names(&["n1"]);
        let e = consumer_move(LeaderPlacement::Remote, &seat("n1", &r1, "n1"), &one, 0).unwrap_err();
        assert!(e.starts_with("--consumer-leader remote:"), "{e}");
        assert!(e.contains("--server URL1,URL2,URL3"), "{e}");
        // An R1 consumer on a server not given, and the reader's server holds no replica.
        let far = names(&["n3"]);
        let e = consumer_move(LeaderPlacement::Local, &seat("n3", &far, "n1"), &one, 0).unwrap_err();
        assert!(e.starts_with("--consumer-leader local:"), "{e}");
        assert!(e.contains("add n3's URL to --server"), "{e}");
    }

    #[test]
    fn a_consumer_run_records_its_readers_leaders_and_warns_when_one_moved() {
        let seats = vec![
            ReaderSeat {
                leader: "n2".into(),
                server: "n2".into(),
            },
            ReaderSeat {
                leader: "n3".into(),
                server: "n1".into(),
            },
        ];
        let mut r = BenchResult::blank("js-fetch", "", Default::default(), 2, 1, "r");
        let after = [Some("n2".into()), Some("n1".into())];
        record_readers(LeaderPlacement::Any, &seats, Some("n1".into()), &after, &mut r);
        assert_eq!(r.params["consumer_leader"], "n2,n3");
        assert_eq!(r.params["consumer_leader_placement"], "any");
        assert_eq!(r.params["readers_on_consumer_leader"], "1/2");
        assert_eq!(r.params["stream_leader"], "n1");
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("S2's from n3 to n1"), "{:?}", r.warnings);
    }

    #[test]
    fn a_placed_run_whose_leaders_were_not_read_again_says_so() {
        let seats = vec![
            ReaderSeat {
                leader: "n2".into(),
                server: "n1".into(),
            },
            ReaderSeat {
                leader: "n3".into(),
                server: "n1".into(),
            },
        ];
        // The look after the run timed out (nothing read), or read one of two.
        for after in [vec![], vec![Some("n2".to_string()), None]] {
            let mut r = BenchResult::blank("js-fetch", "", Default::default(), 2, 1, "r");
            record_readers(LeaderPlacement::Remote, &seats, None, &after, &mut r);
            let unread = if after.is_empty() { "S1, S2" } else { "S2" };
            assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
            assert!(
                r.warnings[0].contains(&format!("could not read the consumer leaders of {unread} again")),
                "{:?}",
                r.warnings
            );
        }
        // Left to the election, nothing is read again and nothing is said.
        let mut r = BenchResult::blank("js-fetch", "", Default::default(), 2, 1, "r");
        record_readers(LeaderPlacement::Any, &seats, None, &[], &mut r);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }
}
