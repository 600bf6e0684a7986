//! Upper bounds on what an input may ask for, each from what is physically meaningful, so that one number
//! cannot make natsplan allocate or loop without end. Each is checked where the number is read and
//! refused there as a located error, before anything is built from it.

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
