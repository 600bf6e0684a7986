//! Each JetStream server's predicted resources (CPU, memory, bursts, restart and catch-up) from the load
//! `predict_layout` summed onto it.

use super::{server_model, volume_of, Loads, Predicted, ServerPrediction, Sync, Terms};
use crate::catalog::Catalog;
use crate::layout::Layout;
use crate::site::{ServerIdx, Site};
use crate::units::SyncMode;

/// Recent data consumers are assumed to re-read from the page cache (seconds of writes kept hot).
const HOT_WINDOW_S: f64 = 60.0;
/// nats-server heap: a base plus a little per HA asset (assumptions; the NATS docs' minimum is 256 MiB).
const HEAP_BASE_BYTES: f64 = 256.0 * 1024.0 * 1024.0;
const HEAP_PER_ASSET_BYTES: f64 = 2.0 * 1024.0 * 1024.0;
/// A clean restart reads the stream index and the last block of every stream (8 MiB blocks at most).
const CLEAN_RESTART_BLOCK_BYTES: f64 = 8.0 * 1024.0 * 1024.0;
const CLEAN_RESTART_FIXED_S: f64 = 2.0;
/// Share of a NIC catch-up may use while the cluster keeps serving: an assumption.
const CATCH_UP_NIC_SHARE: f64 = 0.5;
/// A server model the catalog does not know: a 10 Gb/s NIC (assumption, the survival model's old default).
const DEFAULT_NIC_BYTES_PER_S: f64 = 1.25e9;

/// Each JetStream server's CPU, memory, bursts, restart and catch-up, and the layout's worst of each.
pub(super) fn server_predictions(
    site: &Site,
    layout: &Layout,
    catalog: &Catalog,
    terms: &Terms,
    sync: Sync,
    loads: &Loads,
    out: &mut Predicted,
) {
    let interval_s = match site.nats.sync {
        SyncMode::Always => 0.0,
        // Bursts follow kernel writeback (seed 000 saw flushes every 10–20 s), never the 2 min sync_interval
        // unless that is shorter.
        SyncMode::Interval(s) => (s as f64)
            .min(terms.store.flush_interval_high_s)
            .min(catalog.failures.dirty_expire_s.value),
    };
    for (i, &s) in layout.servers.iter().enumerate() {
        let sm = server_model(site, catalog, s);
        let load = ServerLoad {
            write_bps: loads.write_bps[i],
            stored: loads.stored[i],
            cpu: loads.cpu[i],
            assets: loads.assets_on[i],
        };
        let sp = server_prediction(site, layout, catalog, terms, s, &load, interval_s, sync);
        if sp.cpu_cores > sm.cores as f64 {
            out.notes.push(format!(
                "{}: predicted {:.1} cores busy, the server model has {}",
                sp.name, sp.cpu_cores, sm.cores
            ));
        }
        out.restart_clean_s = out.restart_clean_s.max(sp.restart_clean_s);
        out.restart_unclean_s = out.restart_unclean_s.max(sp.restart_unclean_s);
        out.catch_up_s = out.catch_up_s.max(sp.catch_up_s);
        out.burst_bytes_max = out.burst_bytes_max.max(sp.burst_bytes);
        out.cpu_cores_max = out.cpu_cores_max.max(sp.cpu_cores);
        out.memory_bytes_max = out.memory_bytes_max.max(sp.memory_bytes);
        out.servers.push(sp);
    }
}

/// What one server carries, summed over the assets it holds.
struct ServerLoad {
    write_bps: f64,
    stored: f64,
    cpu: f64,
    assets: usize,
}

/// One JetStream server's resources and times from its load and its volume.
#[allow(clippy::too_many_arguments)]
fn server_prediction(
    site: &Site,
    layout: &Layout,
    catalog: &Catalog,
    terms: &Terms,
    s: ServerIdx,
    load: &ServerLoad,
    interval_s: f64,
    sync: Sync,
) -> ServerPrediction {
    let amp = terms.store.write_amplification;
    let vol = volume_of(site, layout, catalog, s);
    let read_bw = vol
        .as_ref()
        .map(|v| {
            let n = v.disks as f64;
            (n * v.disk.read_bw_bytes_per_s).min(v.array.read_bw_bytes_per_s) / v.luns_on_group.max(1) as f64
        })
        .unwrap_or(f64::INFINITY);
    let reread = terms.store.restart_read_bytes_per_s.min(read_bw);
    let catch_rate = catch_up_bytes_per_s(site, layout, catalog, s);
    let dirty_s = interval_s.max(if sync == Sync::Always { 0.0 } else { 1.0 });
    let heap = HEAP_BASE_BYTES + HEAP_PER_ASSET_BYTES * load.assets as f64;
    let page_cache = load.write_bps / amp.max(1.0) * (HOT_WINDOW_S + dirty_s);
    ServerPrediction {
        name: site.servers[s].name.clone(),
        write_bytes_per_s: load.write_bps,
        burst_bytes: load.write_bps * interval_s,
        cpu_cores: load.cpu,
        memory_bytes: heap + page_cache,
        gomemlimit_bytes: heap * 1.5,
        stored_bytes: load.stored,
        restart_clean_s: CLEAN_RESTART_FIXED_S + load.assets as f64 * CLEAN_RESTART_BLOCK_BYTES / reread,
        restart_unclean_s: CLEAN_RESTART_FIXED_S + load.stored / reread,
        catch_up_s: load.stored / catch_rate,
        reattach_s: vol
            .as_ref()
            .filter(|_| layout.array_of(s).is_some_and(|a| site.arrays[a].owner.is_none()))
            .map(|_| CLEAN_RESTART_FIXED_S + load.stored / reread),
    }
}

/// nats-server's own RAFT catch-up rate for a wiped replica: the site's `repair_times.catch_up_rate`, else
/// the catalog's (models/failure_rates.yaml, measured on the loopback lab with scripts/measure-catch-up,
/// where the link is not the limit).
pub fn raft_catch_up_bytes_per_s(site: &Site, catalog: &Catalog) -> f64 {
    site.repair_times
        .iter()
        .find(|(k, _)| k == "catch_up_rate")
        .map(|(_, v)| *v)
        .unwrap_or_else(|| catalog.failures.repair_s("catch_up_rate"))
}

/// The rate a rebuilt server's replicas catch up from their peers at: the slowest of nats-server's RAFT
/// catch-up rate, the share of its NIC catch-up may use while the cluster serves, and its volume's write
/// rate. The one figure design's `catch_up_s`, whatif's recovery steps and the yearly repair chain use.
pub fn catch_up_bytes_per_s(site: &Site, layout: &Layout, catalog: &Catalog, s: ServerIdx) -> f64 {
    let nic = catalog
        .server(&site.servers[s].model)
        .map(|m| m.nic_bits_per_s / 8.0)
        .unwrap_or(DEFAULT_NIC_BYTES_PER_S);
    let write = volume_of(site, layout, catalog, s)
        .map(|v| v.group_write_bytes_per_s() / v.luns_on_group.max(1) as f64)
        .unwrap_or(f64::INFINITY);
    let raft = raft_catch_up_bytes_per_s(site, catalog);
    let raft = if raft > 0.0 { raft } else { f64::INFINITY };
    (nic * CATCH_UP_NIC_SHARE).min(write).min(raft).max(1.0)
}
