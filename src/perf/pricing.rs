//! Pricing a layout's assets: one prediction per shape of demand on its leader (`PriceKey`, memoised in
//! `Pricer`), copied to every asset of that shape, with the site's publish mode described and the reach
//! advice (moved out of perf/mod.rs, unchanged).

use super::*;
use demand::{demands, Demand};
/// What pricing one demand depends on besides the layout-wide figures (server count, sync mode): assets
/// of one shape on one leader are priced once (a layout of 100,000 assets has a few dozen shapes).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PriceKey {
    leader: ServerIdx,
    /// The server whose volume sets the write pace (`pace_server`).
    pace: ServerIdx,
    kind: std::mem::Discriminant<Kind>,
    size: u64,
    rate_bits: u64,
    consumers: u32,
    replicas: u8,
    /// The site's publish mode for this name, when it gives one (publishers, sync, window, subjects).
    publish: Option<crate::site::PublishSpec>,
}

/// What a priced demand gives every asset of its `PriceKey`: the prediction's fields an
/// `AssetPrediction` copies, with the publish mode described and the reach advice (kept apart from the
/// `Prediction` so a hit clones these few strings, not the whole prediction with its notes).
struct Priced {
    ops_per_s: f64,
    bottleneck: Arc<str>,
    band: Band,
    source: Arc<str>,
    scaled: bool,
    calibration: Arc<str>,
    extrapolation_distance: f64,
    publish: Option<Arc<str>>,
    reach: Option<Arc<str>>,
    subjects: Option<Arc<str>>,
    /// Equal for two keys priced to the same fields (`Pricer::contents`).
    content: u32,
}

/// A priced demand's fields as an `AssetPrediction` copies them (floats by their bits).
#[derive(PartialEq, Eq, Hash)]
struct PricedContent {
    bits: [u64; 4],
    scaled: bool,
    text: [Arc<str>; 3],
    publish: Option<Arc<str>>,
    reach: Option<Arc<str>>,
    subjects: Option<Arc<str>>,
}

/// Lookups and the price memo for one layout's assets.
pub(super) struct Pricer<'a> {
    site: &'a Site,
    layout: &'a Layout,
    catalog: &'a Catalog,
    terms: &'a Terms,
    sync: SyncClass,
    specs: crate::layout::lookup::Specs<'a>,
    /// Position in `layout.servers` of each site server (usize::MAX when not a JetStream server).
    slot: Vec<usize>,
    /// FxHash (`crate::fxhash`): one lookup per asset, nothing iterated.
    memo: crate::fxhash::FxHashMap<PriceKey, Priced>,
    /// Each site server's volume write latency (s), once looked up (`pace_server`).
    latency: Vec<Option<f64>>,
    /// The reference disk's write latency (µs), looked up in the catalog once.
    ref_us: Option<f64>,
    /// The distinct contents of the memo's entries, numbered (`Priced::content`).
    contents: crate::fxhash::FxHashMap<PricedContent, u32>,
    /// `demands`' buffer, reused from asset to asset.
    demands: Vec<Demand>,
}

/// The server whose volume paces an asset's writes: a write commits once the leader has stored it and
/// enough followers for a quorum have too, so it is the slower of the leader's volume and the
/// (quorum − 1)-th fastest follower's. In a layout whose servers' storage differs (issue 16's mixed
/// layouts) a fast leader does not make a stream fast; with one kind of storage this is the leader.
fn pace_server(
    pricer: &mut Pricer,
    catalog: &Catalog,
    terms: &Terms,
    members: &[ServerIdx],
    replicas: u8,
) -> ServerIdx {
    let (site, layout) = (pricer.site, pricer.layout);
    let ref_us = *pricer.ref_us.get_or_insert_with(|| {
        catalog
            .disk(model::REF_DISK)
            .map(|d| d.write_latency_us)
            .unwrap_or(20.0)
    });
    let mut lat = |s: ServerIdx| -> f64 {
        if s >= pricer.latency.len() {
            pricer.latency.resize(s + 1, None);
        }
        *pricer.latency[s].get_or_insert_with(|| {
            volume_of(site, layout, catalog, s)
                .map(|v| model::volume_write_latency_s(terms, &v, ref_us).0)
                .unwrap_or(f64::INFINITY)
        })
    };
    let leader = members[0];
    let need = (crate::layout::quorum(replicas as u32) as usize).saturating_sub(1);
    if need == 0 || members.len() <= need {
        return leader;
    }
    // On the stack for up to five replicas (every asset but a hand-made one): one per asset of a layout.
    let mut inline = [(0.0f64, 0 as ServerIdx); 4];
    let mut heap: Vec<(f64, ServerIdx)>;
    let followers: &mut [(f64, ServerIdx)] = if members.len() <= inline.len() + 1 {
        for (f, &s) in inline.iter_mut().zip(&members[1..]) {
            *f = (lat(s), s);
        }
        &mut inline[..members.len() - 1]
    } else {
        heap = members[1..].iter().map(|&s| (lat(s), s)).collect();
        &mut heap
    };
    // Stable, as before: followers of equal latency stay in placement order.
    followers.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (f_lat, f) = followers[need - 1];
    if f_lat > lat(leader) {
        f
    } else {
        leader
    }
}

impl<'a> Pricer<'a> {
    pub(super) fn new(
        site: &'a Site,
        layout: &'a Layout,
        catalog: &'a Catalog,
        terms: &'a Terms,
        sync: SyncClass,
    ) -> Pricer<'a> {
        let mut slot = vec![usize::MAX; site.servers.len().max(layout.servers.iter().max().map_or(0, |m| m + 1))];
        for (i, &s) in layout.servers.iter().enumerate() {
            slot[s] = i;
        }
        Pricer {
            site,
            layout,
            catalog,
            terms,
            sync,
            specs: crate::layout::lookup::Specs::new(site),
            slot,
            memo: Default::default(),
            latency: vec![None; site.servers.len()],
            ref_us: None,
            contents: Default::default(),
            demands: Vec::new(),
        }
    }
}

/// Messages per stored message, for one demand (objects: their chunks and the meta message).
fn msgs_per_op(d: &Demand) -> f64 {
    match d.kind {
        Kind::ObjPut => d.size.div_ceil(model::CHUNK_BYTES).max(1) as f64 + 1.0,
        Kind::ObjGet => 0.0,
        _ => 1.0,
    }
}

/// One asset's stored messages (its bytes per replica at its demands' bytes per message) and the messages/s
/// written to it: what its catch-up copies and applies, and what its group gains meanwhile.
pub(super) fn asset_msgs(a: &crate::layout::Asset, ds: &[Demand]) -> (f64, f64) {
    let (mut msgs_s, mut bytes_s) = (0.0, 0.0);
    for d in ds.iter().filter(|d| d.stored_per_op > 0.0) {
        msgs_s += d.rate * msgs_per_op(d);
        bytes_s += d.rate * d.stored_per_op;
    }
    let msgs = if bytes_s > 0.0 {
        a.bytes_per_replica * msgs_s / bytes_s
    } else {
        0.0
    };
    (msgs, msgs_s)
}

/// Price every demand of one placed asset on its leader's hardware, and add its load.
pub(super) fn price_asset(
    pricer: &mut Pricer,
    a: &crate::layout::Asset,
    loads: &mut Loads,
    out: &mut Predicted<()>,
    sink: &mut Sink,
) {
    let (site, catalog, terms) = (pricer.site, pricer.catalog, pricer.terms);
    let slot = std::mem::take(&mut pricer.slot);
    let idx_of = |s: ServerIdx| slot.get(s).copied().filter(|&i| i != usize::MAX);
    let members: &[ServerIdx] = if a.expected.is_empty() {
        &a.candidates[..a.candidates.len().min(a.replicas as usize)]
    } else {
        &a.expected
    };
    for &m in members {
        if let Some(i) = idx_of(m) {
            loads.stored[i] += a.bytes_per_replica;
            loads.assets_on[i] += 1;
            if a.kind == crate::layout::AssetKind::Consumer {
                loads.consumers_on[i] += 1;
            }
        }
    }
    let Some(&leader) = members.first() else {
        pricer.slot = slot;
        return;
    };
    let pace = pace_server(pricer, catalog, terms, members, a.replicas);
    let mut ds = std::mem::take(&mut pricer.demands);
    demands(&pricer.specs, a, &mut ds);
    let (msgs, msgs_in) = asset_msgs(a, &ds);
    for &m in members {
        if let Some(i) = idx_of(m) {
            loads.stored_msgs[i] += msgs;
            loads.group_in_bytes_max[i] = loads.group_in_bytes_max[i].max(msgs_in * a.bytes_per_replica);
            loads.group_in_msgs_max[i] = loads.group_in_msgs_max[i].max(msgs_in * msgs);
        }
    }
    for d in ds.drain(..) {
        let named = site.workload.publish.get(&*d.name).copied();
        let key = PriceKey {
            leader,
            pace,
            kind: std::mem::discriminant(&d.kind),
            size: d.size,
            rate_bits: d.rate.to_bits(),
            consumers: d.consumers,
            replicas: a.replicas,
            publish: named,
        };
        // One lookup when priced before (most assets: a few dozen shapes).
        if !pricer.memo.contains_key(&key) {
            let Some(priced) = price_demand(pricer, a, &d, leader, pace) else {
                out.notes
                    .push(format!("{}: its leader's server has no volume in this layout", d.name));
                continue;
            };
            pricer.memo.insert(key.clone(), priced);
        }
        let p = &pricer.memo[&key];
        let headroom = if d.rate > 0.0 {
            p.ops_per_s / d.rate
        } else {
            f64::INFINITY
        };
        if headroom < out.headroom {
            out.headroom = headroom;
            out.headroom_limited_by = d.name.to_string();
        }
        loads.add_demand(site, &slot, terms.store.write_amplification, &d, members);
        record_prediction(sink, d, p, headroom);
    }
    pricer.demands = ds;
    pricer.slot = slot;
}

/// Price demand `d` of asset `a` with the leader `leader` and its pace-setting server `pace`: the model's
/// prediction for its shape, with its content numbered in `pricer.contents`; `None` when the pace-setting
/// server has no volume in the layout.
fn price_demand(
    pricer: &mut Pricer,
    a: &crate::layout::Asset,
    d: &Demand,
    leader: ServerIdx,
    pace: ServerIdx,
) -> Option<Priced> {
    let (site, layout, catalog, terms, sync) = (pricer.site, pricer.layout, pricer.catalog, pricer.terms, pricer.sync);
    let named = site.workload.publish.get(&*d.name).copied();
    let volume = volume_of(site, layout, catalog, pace)?;
    // The publish mode is described once per key: the key holds the kind and the site's spec.
    let ps = named.unwrap_or_default();
    let (workers, batch, publish) = publish_mode(d.kind, &ps);
    let shape = Shape {
        kind: d.kind,
        servers: (layout.servers.len() as u32).max(1),
        replicas: a.replicas,
        sync,
        size_bytes: d.size.max(1),
        workers,
        subscribers: 0,
        consumers: d.consumers,
        consumers_spread: true,
        volume,
        server: server_model(site, catalog, leader),
        rate: Some(d.rate),
        // Capacity means what the servers can carry with the site's publish mode, or without one
        // with enough asynchronous publishers that the leader sets the pace (`publish_mode`).
        batch,
        nats_version: None,
        subjects: ps.subjects,
    };
    let p = predict_shape(terms, catalog, &shape);
    let reach = p
        .stream
        .as_ref()
        .and_then(|f| reach(d.rate, f, &ps, d.kind, &site.servers[leader].model));
    let mut priced = Priced {
        ops_per_s: p.ops_per_s,
        bottleneck: p.bottleneck.into(),
        band: p.band,
        source: p.source.into(),
        scaled: p.scaled,
        calibration: p.calibration.into(),
        extrapolation_distance: p.extrapolation_distance,
        publish: publish.map(Into::into),
        reach: reach.map(Into::into),
        subjects: p.subjects.clone().map(Into::into),
        content: 0,
    };
    let content = PricedContent {
        bits: [
            priced.ops_per_s.to_bits(),
            priced.band.low.to_bits(),
            priced.band.high.to_bits(),
            priced.extrapolation_distance.to_bits(),
        ],
        scaled: priced.scaled,
        text: [
            priced.bottleneck.clone(),
            priced.source.clone(),
            priced.calibration.clone(),
        ],
        publish: priced.publish.clone(),
        reach: priced.reach.clone(),
        subjects: priced.subjects.clone(),
    };
    let n = pricer.contents.len() as u32;
    priced.content = *pricer.contents.entry(content).or_insert(n);
    Some(priced)
}

/// Add demand `d`'s prediction to `out`: one entry per demand, or counted into its class.
fn record_prediction(sink: &mut Sink, d: Demand, p: &Priced, headroom: f64) {
    let entry = |name: Arc<str>| AssetPrediction {
        name,
        kind: d.kind,
        required_per_s: d.rate,
        ops_per_s: p.ops_per_s,
        bottleneck: p.bottleneck.clone(),
        band: p.band,
        headroom,
        source: p.source.clone(),
        scaled: p.scaled,
        calibration: p.calibration.clone(),
        extrapolation_distance: p.extrapolation_distance,
        publish: p.publish.clone(),
        reach: p.reach.clone(),
        subjects: p.subjects.clone(),
    };
    match sink {
        Sink::List(list) => list.push(entry(d.name)),
        Sink::Classes(at, classes) => match at.entry((p.content, d.kind.as_str(), d.rate.to_bits())) {
            std::collections::hash_map::Entry::Occupied(c) => {
                let c = &mut classes[*c.get()];
                c.count += 1;
                c.last = d.name;
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(classes.len());
                classes.push(PredictionClass {
                    count: 1,
                    first: d.name.clone(),
                    last: d.name.clone(),
                    entry: entry(d.name),
                });
            }
        },
    }
}

/// Publishers, window and the description of the publish mode priced for a demand. Streams without a
/// site publish mode: async, window 256, as many publishers as the rate needs (the leader sets the pace).
/// KV puts are one round trip each unless the site says otherwise; object stores are not publish-priced.
fn publish_mode(kind: Kind, ps: &crate::site::PublishSpec) -> (u32, u32, Option<String>) {
    let default_sync = kind == Kind::Kv;
    let sync = ps.sync.unwrap_or(default_sync);
    let window = if sync { 1 } else { ps.window.unwrap_or(ASYNC_WINDOW) };
    let workers = ps.publishers.unwrap_or(CAPACITY_WORKERS);
    let described = match kind {
        Kind::Js | Kind::Kv => Some(format!(
            "{} publish{}, {}{}",
            if sync { "sync" } else { "async" },
            if sync {
                String::new()
            } else {
                format!(" with a window of {window}")
            },
            match ps.publishers {
                Some(p) => format!("{p} publishers"),
                None => "as many publishers as the rate needs".into(),
            },
            // The subjects are said apart (`AssetPrediction::subjects`): a site giving only them gave no mode.
            if (crate::site::PublishSpec { subjects: None, ..*ps }) == crate::site::PublishSpec::default() {
                " (assumed: the site gives no publish mode)"
            } else {
                ""
            }
        )),
        _ => None,
    };
    (workers, window, described)
}

/// What reaches `rate` on this stream, solved from the law that predicts it (`StreamFacts`): when one leader
/// cannot carry the rate however many clients it has, split the stream; else as many synchronous publishers
/// as the law needs, or the async window per publisher. Following it predicts at least `rate` (issue 36:
/// the advice once came from a formula without the clients' contention and contradicted the prediction).
fn reach(
    rate: f64,
    f: &model::StreamFacts,
    ps: &crate::site::PublishSpec,
    kind: Kind,
    server_model: &str,
) -> Option<String> {
    if rate <= 0.0 {
        return None;
    }
    let ops = if kind == Kind::Kv { "puts" } else { "publishes" };
    let pubs = ps.publishers.map(|p| p as f64).unwrap_or(1.0);
    let window = f.window_for(rate, pubs);
    if window.is_none() && f.window_for(rate, 1_000.0).is_none() {
        // The leader's ceiling: no client count or window reaches it.
        let parts = (rate / f.leader_per_s.max(1.0)).ceil().max(2.0);
        return Some(format!(
            "one stream leader on {server_model} servers carries at most about {:.0} {ops}/s however many clients it has: split the stream into {parts:.0} by subject ({:.0}/s each), or use faster servers",
            f.leader_per_s,
            rate / parts
        ));
    }
    let sync = ps.sync.unwrap_or(kind == Kind::Kv);
    let sync_p = f.sync_publishers_for(rate);
    let sync_text = match sync_p {
        Some(p) => format!(
            "sync publish reaches {rate:.0}/s with ≥ {p:.0} concurrent publishers ({:.2} ms to one ack, {:.1} µs more per publisher in flight)",
            f.round_trip_s * 1e3,
            f.saturation_s * 1e6
        ),
        None => format!(
            "sync publishers top out at about {:.0}/s here however many there are",
            f.sync_ceiling_per_s()
        ),
    };
    let async_text = match window {
        Some(w) => format!(
            "async with a window ≥ {w:.0} per publisher ({pubs:.0} publisher{})",
            if pubs == 1.0 { "" } else { "s" }
        ),
        None => format!("async with more publishers ({pubs:.0} cannot keep enough in flight)"),
    };
    Some(if sync {
        format!("{sync_text}; or {async_text}")
    } else {
        format!("{async_text}; or {sync_text}")
    })
}
