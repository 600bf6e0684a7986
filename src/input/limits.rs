//! The one table of bounds on what an input may ask for, each from what is physically meaningful, so that
//! one number cannot make natsplan allocate or loop without end, whatever door it comes through (a flag,
//! a site file, a saved plan, a lab's `lab.json`, an agent's run request). Each is checked where the number
//! is read and refused there as a located error naming the bound, before anything is built from it.

/// Durable consumers on one stream. nats-server has no such limit (`max_consumers: -1`), but every
/// durable consumer of a replicated stream is its own RAFT group (an HA asset; nats-facts.md), and the
/// `max_ha_assets` figure operators set is about 2,000 per server (nats-facts.md's example): 10,000
/// consumers of one R3 stream need 30,000 HA-asset slots, a cluster of 15 such servers for one stream.
pub const MAX_CONSUMERS_PER_STREAM: u32 = 10_000;

/// Streams, KV buckets, object stores and durable consumers of one site, imports included: 1,000,000
/// admits every OMB workload up to 100,000 topics with up to 9 subscriptions each.
pub const MAX_ASSETS: u64 = 1_000_000;

/// Bytes of a stream, KV bucket or object store name: nats-server refuses stream names over 255 bytes
/// (`JSMaxNameLen`, server/jetstream_api.go), KV and object stores are streams `KV_<name>` and
/// `OBJ_<name>`, and `natsplan emit` writes `<name>.json`, which must fit a file name (NAME_MAX 255 on
/// Linux): 250 meets all four.
pub const MAX_ASSET_NAME_BYTES: usize = 250;

/// Bytes of a rack, server, host, array, PDU or cluster name. They become folder names in `emit` and
/// `lab` (NAME_MAX 255) and, with suffixes natsplan adds (`-internal`, a rejoined server's new name),
/// layout ids and tags; 200 leaves room for those and is above any DNS name (253, RFC 1035).
pub const MAX_NAME_BYTES: usize = 200;

/// Topics of one OMB workload (each one stream): the asset bound, so 100,000-topic workloads are read.
pub const MAX_OMB_TOPICS: u64 = MAX_ASSETS;

/// Events per year per unit a failure or maintenance rate may give (`failure_rates`, `maintenance`, and the
/// catalog's): about three a day. A server, array or rack that fails more often is not in service, and
/// every event is a step of `simulate`'s Monte Carlo: 10⁴ a year took 81 s at the default trials and 10⁹
/// would take months. Fractions (`*_afr`, `not_return_after_power`) are at most 1.
pub const MAX_EVENTS_PER_YEAR: f64 = 1_000.0;

/// One count, size, rate or duration natsplan accepts, in `min..=max`, whatever door it comes through: a
/// flag, a site file, a saved plan (`--plan`), a lab's `lab.json` or an agent's run request. This table is
/// the one place the bounds live: the site validator, the saved-plan loader, the lab, `bench`/`verify`'s
/// flags and `natsplan agent` all check these same values, where the number is read and before anything
/// is allocated from it, and the error names the bound (`--clients 4294967295: at most 10000 clients
/// (…)`). Bounds are `f64` so one type serves counts, sizes and rates; every value here is exact in an
/// `f64` (below 2^53).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// What is counted or measured, plural (`clients`, `bytes of payload`).
    pub what: &'static str,
    pub min: f64,
    pub max: f64,
    /// Why the maximum is what it is (the error says it).
    pub why: &'static str,
}

impl Bound {
    /// `v` when it is within the bound; otherwise the problem, naming the bound (`at most 10000 clients
    /// (…)`), for the caller to prefix with where `v` came from.
    pub fn check_f64(&self, v: f64) -> Result<f64, String> {
        if v.is_nan() {
            return Err(format!(
                "not a number; give {} to {} {}",
                num(self.min),
                num(self.max),
                self.what
            ));
        }
        if v > self.max {
            return Err(format!("at most {} {} ({})", num(self.max), self.what, self.why));
        }
        if v < self.min {
            return Err(format!("at least {} {}", num(self.min), self.what));
        }
        Ok(v)
    }

    /// `check_f64` for a whole number.
    pub fn check_u64(&self, v: u64) -> Result<u64, String> {
        // Every bound is below 2^53, so a value past it compares right even where the cast rounds.
        self.check_f64(v as f64).map(|_| v)
    }

    /// `check_u64` for a `usize`.
    pub fn check_usize(&self, v: usize) -> Result<usize, String> {
        self.check_u64(v as u64).map(|_| v)
    }

    /// A duration against a bound in seconds.
    pub fn check_duration(&self, d: std::time::Duration) -> Result<std::time::Duration, String> {
        self.check_f64(d.as_secs_f64()).map(|_| d)
    }
}

/// A bound's number as people write it: whole numbers without a fraction.
fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Stream, KV and object store replicas: nats-server's own limit (JetStream refuses more than 5).
pub const REPLICAS: Bound = Bound {
    what: "replicas",
    min: 1.0,
    max: 5.0,
    why: "nats-server's limit: JetStream allows 1 to 5 replicas",
};

/// Durable consumers of one stream (`MAX_CONSUMERS_PER_STREAM`, above).
pub const CONSUMERS: Bound = Bound {
    what: "durable consumers",
    min: 0.0,
    max: MAX_CONSUMERS_PER_STREAM as f64,
    why: "each durable consumer of a replicated stream is its own RAFT group; 10000 of one R3 stream fill 15 \
          servers' max_ha_assets",
};

/// Publishers a site says a stream has (`publishers:`): clients of the application the model predicts
/// for, never opened by natsplan.
pub const PUBLISHERS: Bound = Bound {
    what: "publishers",
    min: 1.0,
    max: 1_000_000.0,
    why: "a million clients of one stream is past any cluster nats-server runs",
};

/// Distinct subjects a stream's messages go to (a site's `distinct_subjects:`, predict's `--subjects`):
/// nats-server keeps every subject of a stream in its subject index (filestore.go `psim`); past
/// perf::subjects' plateau (16,384) the count changes no price.
pub const DISTINCT_SUBJECTS: Bound = Bound {
    what: "distinct subjects",
    min: 1.0,
    max: 1_000_000_000.0,
    why: "a billion subjects is past any stream's subject index; from 16384 on the price is the same",
};

/// Publishes in flight per publisher (`--batch` of bench js, a site's `window:`) and messages per
/// consumer fetch (`bench consumer --batch`): bench keeps a send time per publish in flight.
pub const BATCH: Bound = Bound {
    what: "publishes in flight per publisher",
    min: 1.0,
    max: 1_000_000.0,
    why: "bench keeps a send time per publish in flight; nats bench's default is 500",
};

/// Workers of one bench run: publishers, putters, getters, consumers (`--clients`), over every agent.
pub const CLIENTS: Bound = Bound {
    what: "clients",
    min: 1.0,
    max: 10_000.0,
    why: "each is a connection with its own task and histogram; 10000 is about a third of the ephemeral ports \
          (28232 in Linux's default ip_local_port_range) one host can open to one server",
};

/// Core subscribers of one bench run (`--subs`), over every agent.
pub const SUBSCRIBERS: Bound = Bound {
    what: "subscribers",
    min: 0.0,
    max: 10_000.0,
    why: "each is a connection of its own, as a client is",
};

/// Messages (or KV operations) of one bench run (`--msgs`).
pub const MSGS: Bound = Bound {
    what: "messages",
    min: 1.0,
    max: 100_000_000_000.0,
    why: "more than a day at a million messages a second; byte counts of that many messages of the largest \
          payload stay within 64 bits",
};

/// Objects of one `bench obj` run (`--objects`).
pub const OBJECTS: Bound = Bound {
    what: "objects",
    min: 1.0,
    max: 10_000_000.0,
    why: "each object is its chunks and a meta message in the bucket; ten million objects of the largest size \
          stay within 64-bit byte counts",
};

/// Bytes of one message (`--size` of core, js, kv, ping, flood, consumer). nats-server refuses a
/// `max_payload` over 2^31−1 (server/opts.go); the server's own `max_payload`, from the INFO it sends on
/// connect, is checked too before any payload is made.
pub const PAYLOAD_BYTES: Bound = Bound {
    what: "bytes of payload",
    min: 0.0,
    max: 2_147_483_647.0,
    why: "nats-server's largest max_payload, 2^31-1 bytes; its default is 1 MiB",
};

/// Bytes of one object (`bench obj --size`): object stores chunk it (128 KiB), but the run holds one
/// whole object in memory.
pub const OBJECT_BYTES: Bound = Bound {
    what: "bytes per object",
    min: 0.0,
    max: 1_073_741_824.0,
    why: "the run holds one object in memory; 1 GiB",
};

/// Messages buffered per core subscription in the client (`--sub-buffer`).
pub const SUB_BUFFER: Bound = Bound {
    what: "messages buffered per subscription",
    min: 1.0,
    max: 10_000_000.0,
    why: "about 20 times nats.go's default pending limit (524288 messages)",
};

/// An open-loop bench rate (`--rate`), messages per second in aggregate.
pub const RATE_PER_S: Bound = Bound {
    what: "messages per second",
    min: 0.001,
    max: 1_000_000_000.0,
    why: "no client sends a billion messages a second; below one per 1000 s a schedule is no benchmark",
};

/// A required rate a site or `predict --rate` gives (a stream's `msgs_per_s`, a bucket's or object store's
/// `puts_per_s`/`gets_per_s`, the core rate), per second; the lower end is checked apart (above zero).
/// A 1e300 rate passed and printed a 300-digit "needs …/s" (issue 41).
pub const REQUIRED_RATE_PER_S: Bound = Bound {
    what: "operations per second",
    min: 0.0,
    max: 1_000_000_000.0,
    why: "no NATS cluster carries a billion messages a second; a larger figure is a typo or a unit slip",
};

/// A bench wait (`--timeout`, `--backlog-cutoff`, `--sub-sleep`, `--sleep`, `--agents-timeout`), in seconds.
pub const BENCH_WAIT_S: Bound = Bound {
    what: "seconds",
    min: 0.0,
    max: 86_400.0,
    why: "a day; a longer wait is no benchmark, and instants centuries ahead overflow the clock",
};

/// Agents of one `bench`/`verify --agents` run.
pub const AGENTS: Bound = Bound {
    what: "agents",
    min: 1.0,
    max: 1000.0,
    why: "each agent gets at least one worker, and workers are bounded too",
};

/// How often an agent sends progress while it runs a share (a run request's `heartbeat_ms`), in
/// milliseconds. The coordinator sends 250 ms and counts an agent lost after 5 s of silence.
pub const AGENT_HEARTBEAT_MS: Bound = Bound {
    what: "milliseconds between heartbeats",
    min: 20.0,
    max: 5000.0,
    why: "the coordinator counts an agent silent for 5 s as lost",
};

/// How long an agent waits for `Start` after it is ready (a run request's `start_timeout_ms`).
pub const AGENT_START_WAIT_MS: Bound = Bound {
    what: "milliseconds to wait for the start",
    min: 100.0,
    max: 3_600_000.0,
    why: "an hour; the coordinator sends 30 s",
};

/// Servers of one lab on this machine (`lab up --nodes`, a planned layout's lab, a `lab.json`).
pub const LAB_SERVERS: Bound = Bound {
    what: "lab servers",
    min: 1.0,
    max: 15.0,
    why: "each is a nats-server with its own JetStream store on this machine",
};

/// Servers of a `verify --faults` lab (`--nodes`, or a planned layout's servers).
pub const FAULT_LAB_SERVERS: Bound = Bound {
    what: "lab servers",
    min: 3.0,
    max: 9.0,
    why: "an R3 stream needs 3; the scenarios kill, pause and restart them while the load runs, and 9 is what \
          2 cores carry",
};

/// Subjects of one stream (a site's `subjects:`, a saved plan's imported stream): the overlap check within
/// a stream is pairwise, so this bounds its work.
pub const SUBJECTS_PER_STREAM: Bound = Bound {
    what: "subjects",
    min: 0.0,
    max: 256.0,
    why: "the subjects of one stream are checked pairwise for overlaps (a 16 MiB file of streams at the bound \
          checks in about a second); more is better written with wildcards",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_says_which_side_was_crossed_and_why() {
        assert_eq!(CLIENTS.check_u64(10_000), Ok(10_000));
        let over = CLIENTS.check_u64(u64::MAX).unwrap_err();
        assert!(
            over.starts_with("at most 10000 clients (") && over.contains("ephemeral ports"),
            "{over}"
        );
        assert_eq!(CLIENTS.check_usize(0).unwrap_err(), "at least 1 clients");
        assert!(RATE_PER_S.check_f64(f64::NAN).is_err());
        assert!(RATE_PER_S.check_f64(f64::INFINITY).unwrap_err().starts_with("at most"));
        assert!(BENCH_WAIT_S
            .check_duration(std::time::Duration::from_secs(86_401))
            .is_err());
        // 2^64 - 1 rounds to 2^64 as an f64: still over every bound.
        assert!(MSGS.check_u64(u64::MAX).is_err() && MSGS.check_u64(100_000_000_000).is_ok());
    }
}
