//! How many bytes one replica of each planned asset stores at the end of the planning horizon
//! (ARCHITECTURE.md "Capacity"): file-store records of `22 + subject + payload + 8` bytes, retention, KV
//! history, object chunks of 128 KiB plus a metadata message, compression, growth, and the RAFT log of
//! replicated groups.

use crate::site::{KvSpec, ObjectStoreSpec, Site, StreamSpec};
use crate::units::YEAR_S;

/// File-store per-message overhead: 22-byte header + 8-byte checksum (nats-server filestore.go).
pub const RECORD_OVERHEAD_BYTES: f64 = 30.0;
/// Object-store chunk size (ADR-20 default).
pub const CHUNK_BYTES: f64 = 128.0 * 1024.0;
/// Subject of an object chunk: `$O.<bucket>.C.` + a 22-character nuid.
const OBJ_CHUNK_SUBJECT_BYTES: f64 = 30.0;
/// The object's metadata message (name, digest, headers), approximate.
const OBJ_META_BYTES: f64 = 400.0;
/// A durable consumer's state on disk per replica (small; budgeted).
pub const CONSUMER_BYTES: f64 = 64.0 * 1024.0;
/// RAFT log budget: a replicated group's WAL is compacted about every 2–3 minutes once it holds 8 MiB
/// (nats-server jetstream_cluster.go); budget the larger of 8 MiB and 3 minutes of writes.
const WAL_MIN_BYTES: f64 = 8.0 * 1024.0 * 1024.0;
const WAL_WINDOW_S: f64 = 180.0;

/// Growth multiplier over the horizon: (1 + growth)^(horizon in years).
pub fn growth_factor(site: &Site) -> f64 {
    (1.0 + site.policy.growth).powf(site.policy.horizon_s / YEAR_S)
}

fn raft_log(replicas: u8, write_bytes_per_s: f64) -> f64 {
    if replicas > 1 {
        (write_bytes_per_s * WAL_WINDOW_S).max(WAL_MIN_BYTES)
    } else {
        0.0
    }
}

pub fn stream_bytes(site: &Site, s: &StreamSpec, replicas: u8) -> f64 {
    let record = s.msg_size_bytes as f64 + s.subject_bytes as f64 + RECORD_OVERHEAD_BYTES;
    let mut stored = s.msgs_per_s * record * s.retention_s / site.nats.compression_ratio * growth_factor(site);
    if let Some(cap) = s.max_bytes {
        stored = stored.min(cap as f64);
    }
    stored + raft_log(replicas, s.msgs_per_s * record * growth_factor(site))
}

pub fn kv_bytes(site: &Site, k: &KvSpec, replicas: u8) -> f64 {
    let subject = 5.0 + k.name.len() as f64 + k.key_bytes as f64; // "$KV.<bucket>.<key>"
    let record = k.value_size_bytes as f64 + subject + RECORD_OVERHEAD_BYTES;
    let stored = k.keys as f64 * k.history as f64 * record / site.nats.compression_ratio * growth_factor(site);
    stored + raft_log(replicas, k.puts_per_s * record * growth_factor(site))
}

/// Objects kept: `objects` if given, else puts × retention.
pub fn objects_kept(o: &ObjectStoreSpec) -> f64 {
    match (o.objects, o.retention_s) {
        (Some(n), _) => n as f64,
        (None, Some(r)) => o.puts_per_s * r,
        (None, None) => 0.0,
    }
}

/// Bytes one object takes in the store: its 128 KiB chunks as records, plus its metadata message.
pub fn object_bytes(object_size: f64) -> f64 {
    let chunks = (object_size / CHUNK_BYTES).ceil().max(1.0);
    object_size + chunks * (OBJ_CHUNK_SUBJECT_BYTES + RECORD_OVERHEAD_BYTES) + OBJ_META_BYTES
}

pub fn object_store_bytes(site: &Site, o: &ObjectStoreSpec, replicas: u8) -> f64 {
    let per = object_bytes(o.object_size_bytes as f64);
    let stored = objects_kept(o) * per / site.nats.compression_ratio * growth_factor(site);
    stored + raft_log(replicas, o.puts_per_s * per * growth_factor(site))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_of_one_mib_is_eight_chunks_plus_meta() {
        let b = object_bytes(1024.0 * 1024.0);
        assert_eq!(b, 1024.0 * 1024.0 + 8.0 * 60.0 + 400.0);
        // A 1 KiB object still takes one chunk record.
        assert_eq!(object_bytes(1024.0), 1024.0 + 60.0 + 400.0);
    }
}
