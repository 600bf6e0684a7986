//! What each planned stream should take in per second, in the operations the cluster counts (messages
//! stored: its `last_seq` growth), and design's predicted ceiling in the same operations. `check` grades
//! observed rates against them and `emit --monitoring` writes them into alerting rules.

use super::PlannedLayout;
use crate::site::Site;
use std::collections::BTreeMap;

/// Object stores keep objects in 128 KiB chunks plus a metadata message (DESIGN "Capacity").
pub const OBJECT_CHUNK_BYTES: u64 = 128 * 1024;

/// One planned stream's rates.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamRate {
    /// The site's asset name (a bucket's `name`, not `KV_<name>`).
    pub asset: String,
    /// Operations per second the plan gives it: the site's `msgs_per_s`, `puts_per_s`, or for an object
    /// store puts/s × (128 KiB chunks + 1 metadata message).
    pub ops_per_s: f64,
    /// design's prediction for the asset (`predicted.streams[].ops_per_s`) in the same operations; None
    /// without a prediction.
    pub ceiling_per_s: Option<f64>,
}

/// The planned rates by stream name as nats-server knows it (`orders`, `KV_<bucket>`, `OBJ_<store>`).
pub fn stream_rates(site: &Site, layout: &PlannedLayout) -> BTreeMap<String, StreamRate> {
    let predicted = |asset: &str, per: f64| -> Option<f64> {
        layout.predicted.as_ref()?;
        let p = layout.per_asset()?.streams.iter().find(|p| &*p.name == asset)?;
        Some(p.ops_per_s * per)
    };
    let mut rates = BTreeMap::new();
    let mut add = |stream: String, asset: &str, per: f64, ops: f64| {
        rates.insert(
            stream,
            StreamRate {
                asset: asset.to_string(),
                ops_per_s: ops,
                ceiling_per_s: predicted(asset, per),
            },
        );
    };
    for s in &site.workload.streams {
        add(s.name.clone(), &s.name, 1.0, s.msgs_per_s);
    }
    for k in &site.workload.kv {
        add(format!("KV_{}", k.name), &k.name, 1.0, k.puts_per_s);
    }
    for o in &site.workload.object_stores {
        let per = (o.object_size_bytes.div_ceil(OBJECT_CHUNK_BYTES).max(1) + 1) as f64;
        add(format!("OBJ_{}", o.name), &o.name, per, o.puts_per_s * per);
    }
    rates
}
