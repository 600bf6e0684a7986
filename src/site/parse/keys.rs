//! The keys each section of a site file accepts; the typo matcher that suggests one for an unknown key is
//! the input floor's (`input::nearest`).

pub(super) use crate::input::nearest;

pub(super) const TOP_KEYS: &[&str] = &[
    "site",
    "nats",
    "racks",
    "workload",
    "policy",
    "failure_rates",
    "repair_times",
    "maintenance",
];
pub(super) const NATS_KEYS: &[&str] = &[
    "replicas",
    "sync_interval",
    "compression",
    "compression_ratio",
    "cluster_name",
    "max_ha_assets",
];
pub(super) const RACK_KEYS: &[&str] = &["name", "servers", "arrays", "power_feeds", "uplinks", "pdus"];
pub(super) const SERVER_KEYS: &[&str] = &["name", "host", "pdu", "model", "disks"];
pub(super) const INTERNAL_KEYS: &[&str] = &["disk_model", "count", "disk_size", "raid", "hot_spares"];
pub(super) const ARRAY_KEYS: &[&str] = &[
    "name",
    "model",
    "disk_model",
    "disks",
    "hot_spares",
    "disk_size",
    "write_cache",
    "raid",
    "existing",
    "host",
    "reserved_drives",
];
pub(super) const WORKLOAD_KEYS: &[&str] = &["streams", "kv", "object_stores", "core"];
pub(super) const STREAM_KEYS: &[&str] = &[
    "name",
    "msgs_per_s",
    "msg_size",
    "retention",
    "replicas",
    "consumers",
    "subject_size",
    "max_bytes",
    "subjects",
    "distinct_subjects",
    "publishers",
    "publish",
    "window",
    "config",
];
pub(super) const KV_KEYS: &[&str] = &[
    "name",
    "puts_per_s",
    "value_size",
    "key_size",
    "keys",
    "history",
    "replicas",
    "publishers",
    "publish",
    "window",
];
pub(super) const OBJ_KEYS: &[&str] = &[
    "name",
    "puts_per_s",
    "gets_per_s",
    "object_size",
    "retention",
    "objects",
    "replicas",
];
pub(super) const CORE_KEYS: &[&str] = &["msgs_per_s", "msg_size"];
pub(super) const POLICY_KEYS: &[&str] = &[
    "patterns",
    "wear_headroom",
    "hot_spares_per_array",
    "min_tolerated",
    "growth",
    "horizon",
    "fs_reserve",
    "store_headroom",
    "baselines",
];
pub(super) const TOLERANCE_KEYS: &[&str] = &["racks", "arrays", "servers", "disks", "meta"];

/// Where each fixed-schema key lives, to say "this key belongs under X" when one is put in the wrong place.
pub(super) const SECTIONS: &[(&str, &[&str])] = &[
    ("the top level", TOP_KEYS),
    ("nats", NATS_KEYS),
    ("a rack (racks[])", RACK_KEYS),
    ("a server object (racks[].servers[])", SERVER_KEYS),
    ("a server's internal disks (racks[].servers[].disks)", INTERNAL_KEYS),
    ("an array (racks[].arrays[])", ARRAY_KEYS),
    ("workload", WORKLOAD_KEYS),
    ("a stream (workload.streams[])", STREAM_KEYS),
    ("a KV bucket (workload.kv[])", KV_KEYS),
    ("an object store (workload.object_stores[])", OBJ_KEYS),
    ("workload.core", CORE_KEYS),
    ("policy", POLICY_KEYS),
    ("policy.min_tolerated", TOLERANCE_KEYS),
];

/// A list for messages: `a, b, c`.
pub(super) fn list_of(names: &[&str]) -> String {
    names.join(", ")
}
