//! What each asset asks of its leader (`Demand`): the site's spec of a stream, KV bucket or object store
//! (puts and gets apart) found for a placed asset, as the pricing in `perf` reads it.

use super::{model, Kind};
use crate::layout::AssetKind;
use std::sync::Arc;

pub(super) struct Demand {
    /// Shared with the asset when it is the asset's own name (every stream and KV bucket of the site).
    pub(super) name: Arc<str>,
    pub(super) kind: Kind,
    pub(super) rate: f64,
    pub(super) size: u64,
    /// Bytes stored per operation (payload plus record overhead, chunks plus meta for objects).
    pub(super) stored_per_op: f64,
    pub(super) consumers: u32,
    /// Distinct subjects the asset's store indexes (a KV bucket's keys; 0 when the site does not say) and
    /// their bytes each: the file store's per-subject index (`perf::servers` memory needs).
    pub(super) keys: f64,
    pub(super) key_bytes: u64,
}

/// The demands of one asset, into `out` (cleared first: one buffer for all of a layout's assets).
pub(super) fn demands(specs: &crate::layout::lookup::Specs, a: &crate::layout::Asset, out: &mut Vec<Demand>) {
    out.clear();
    let (asset_name, kind) = (&*a.name, a.kind);
    if kind == AssetKind::Consumer {
        return;
    }
    // As `trim_start_matches("KV_")` then `("OBJ_")`, without a substring searcher per asset.
    let mut want = asset_name;
    while let Some(rest) = want.strip_prefix("KV_") {
        want = rest;
    }
    while let Some(rest) = want.strip_prefix("OBJ_") {
        want = rest;
    }
    // The name as given and without its prefix, borrowed; one lookup when they are the same name (the
    // earlier of a lookup and itself is that lookup).
    match kind {
        AssetKind::Stream => {
            if let Some(s) = first_of(
                specs.stream_for(a),
                (want != asset_name).then(|| specs.stream_at(want)).flatten(),
            ) {
                out.push(Demand {
                    name: shared_name(a, &s.name),
                    kind: Kind::Js,
                    rate: s.msgs_per_s,
                    size: s.msg_size_bytes,
                    stored_per_op: (s.msg_size_bytes + s.subject_bytes + 30) as f64,
                    consumers: s.consumers,
                    keys: 0.0,
                    key_bytes: 0,
                });
            }
        }
        AssetKind::Kv => {
            if let Some(s) = first_of(
                specs.kv_for(a),
                (want != asset_name).then(|| specs.kv_at(want)).flatten(),
            ) {
                out.push(Demand {
                    name: shared_name(a, &s.name),
                    kind: Kind::Kv,
                    rate: s.puts_per_s,
                    size: s.value_size_bytes,
                    stored_per_op: (s.value_size_bytes + s.key_bytes + 30) as f64,
                    consumers: 0,
                    keys: s.keys as f64,
                    key_bytes: s.key_bytes,
                });
            }
        }
        AssetKind::ObjectStore => {
            if let Some(s) = first_of(
                specs.object_store_for(a),
                (want != asset_name).then(|| specs.object_store_at(want)).flatten(),
            ) {
                let chunks = s.object_size_bytes.div_ceil(model::CHUNK_BYTES).max(1);
                let stored = s.object_size_bytes as f64 + (chunks + 1) as f64 * 100.0 + 256.0;
                out.push(Demand {
                    name: shared_name(a, &s.name),
                    kind: Kind::ObjPut,
                    rate: s.puts_per_s,
                    size: s.object_size_bytes,
                    stored_per_op: stored,
                    consumers: 0,
                    keys: 0.0,
                    key_bytes: 0,
                });
                if s.gets_per_s > 0.0 {
                    out.push(Demand {
                        name: format!("{} (get)", s.name).into(),
                        kind: Kind::ObjGet,
                        rate: s.gets_per_s,
                        size: s.object_size_bytes,
                        stored_per_op: 0.0,
                        consumers: 0,
                        keys: 0.0,
                        key_bytes: 0,
                    });
                }
            }
        }
        AssetKind::Consumer => {}
    }
}

/// The asset's name when the spec is named so (no copy), else the spec's.
fn shared_name(a: &crate::layout::Asset, spec: &str) -> Arc<str> {
    if &*a.name == spec {
        a.name.clone()
    } else {
        spec.into()
    }
}

/// The earlier in the site's list of two lookups (as a linear search for either name finds it).
fn first_of<T>(a: Option<(usize, T)>, b: Option<(usize, T)>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if x.0 <= y.0 { x.1 } else { y.1 }),
        (x, y) => x.or(y).map(|v| v.1),
    }
}
