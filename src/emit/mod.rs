//! emit: the configuration that makes a plan real — one `nats-server.conf` per JetStream server and the
//! stream, KV and object-store definitions as JetStream API JSON (what `nats stream add --config FILE`
//! takes), with a README in every folder saying which host gets which file and LUN, and what streams that
//! applications create later will and will not get.
//!
//! `render` is a pure function from a plan to files; `write_atomically` puts them on disk so that either
//! the whole output exists or none of it does.

pub mod conf;
pub mod consumers;
pub mod deploy;
pub mod helm;
pub mod monitoring;

use crate::layout::PlacementRule;
use crate::plan::{Plan, PlannedAsset, PlannedLayout};
use crate::site::names::NameKind;
use crate::units::fmt_bytes;
use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

mod write;
pub use write::{write_atomically, Interrupted};

/// nats-server's default duplicate window (2 minutes); shortened to `max_age` when that is shorter,
/// because the server rejects a window longer than the age limit.
const DUPLICATE_WINDOW_S: f64 = 120.0;

/// Where the emitted servers listen and store; defaults are nats-server's usual ports.
#[derive(Debug, Clone, PartialEq)]
pub struct EmitOptions {
    /// Mount point of each server's LUN, written as `jetstream.store_dir`.
    pub store_dir: String,
    pub client_port: u16,
    pub cluster_port: u16,
    pub monitor_port: u16,
    /// Accounts, TLS and named consumers (`--deploy FILE`); the default adds none.
    pub deploy: deploy::Deploy,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions {
            store_dir: "/var/lib/nats".into(),
            client_port: 4222,
            cluster_port: 6222,
            monitor_port: 8222,
            deploy: deploy::Deploy::default(),
        }
    }
}

/// A name as nats-server and the NATS clients take it: the rules site validation applies (`site::names`),
/// checked again because a plan may come from elsewhere than a validated site.
fn check_name(kind: &str, rules: NameKind, name: &str) -> Result<()> {
    if let Some(why) = crate::site::names::problem(rules, name) {
        bail!(
            "{kind} name '{}' {why}; rename it in the site file's workload (letters, digits, '-' and '_')",
            name.escape_debug()
        );
    }
    Ok(())
}

/// A size written where nats-server reads an int64 (`max_bytes`, `max_file_store`): refused past it, with
/// what it is, instead of a number nats-server cannot read (error 10025, "integer out of range").
fn int64_bytes(what: &str, bytes: u64) -> Result<i64> {
    i64::try_from(bytes).map_err(|_| {
        anyhow!(
            "{what} is {bytes} bytes, more than nats-server reads (an int64: at most {} bytes, 8 EiB); lower the \
             asset's rate, size or retention in the site, or cap it with max_bytes",
            i64::MAX
        )
    })
}

fn ns(seconds: f64) -> i64 {
    (seconds * 1e9).round() as i64
}

fn duplicate_window_ns(max_age_s: f64) -> i64 {
    if max_age_s > 0.0 && max_age_s < DUPLICATE_WINDOW_S {
        ns(max_age_s)
    } else {
        ns(DUPLICATE_WINDOW_S)
    }
}

/// `placement` for an asset: the cluster, and its set's tag when pinned.
fn placement(plan: &Plan, a: &PlannedAsset) -> Value {
    let mut p = json!({ "cluster": plan.input.nats.cluster_name });
    if let Some(set) = &a.set {
        p["tags"] = json!([format!("set:{}", set.to_lowercase())]);
    }
    p
}

fn compression(plan: &Plan) -> &'static str {
    match plan.input.nats.compression {
        crate::site::Compression::S2 => "s2",
        crate::site::Compression::None => "none",
    }
}

/// The planned asset of a kind and name (the plan has one per stream, bucket and object store).
fn asset<'l>(layout: &'l PlannedLayout, kind: &str, name: &str) -> Result<&'l PlannedAsset> {
    let d = layout
        .per_asset()
        .ok_or_else(|| anyhow!("layout {} is kept per class: {}", layout.id, crate::plan::MATERIALISED))?;
    d.assets
        .iter()
        .find(|a| a.kind.as_str() == kind && a.name == name)
        .ok_or_else(|| anyhow!("layout {} has no planned {kind} '{name}'", layout.id))
}

/// A stream the site defined by a StreamConfig file (`workload.streams[].config`): the file as given, with
/// the layout's replicas and placement (its `preferred` kept), and the planned size where it sets no
/// `max_bytes`.
fn configured_stream_json(plan: &Plan, a: &PlannedAsset, s: &crate::site::StreamSpec, given: &Value) -> Result<Value> {
    let mut v = given.clone();
    let cluster = &plan.input.nats.cluster_name;
    if let Some(c) = given["placement"]["cluster"].as_str().filter(|c| !c.is_empty()) {
        if c != cluster {
            bail!(
                "stream {}: its config file places it in cluster '{c}', but the site's cluster is '{cluster}'; write \
                 \"cluster\": \"{cluster}\" in the file (or drop it), or set nats.cluster_name",
                s.name
            );
        }
    }
    let mut place = placement(plan, a);
    if let Some(p) = given["placement"].get("preferred").filter(|p| !p.is_null()) {
        place["preferred"] = p.clone();
    }
    v["placement"] = place;
    v["num_replicas"] = json!(a.replicas);
    if given.get("compression").is_none_or(|c| c.is_null()) {
        // The plan sized the stream with the site's compression.
        v["compression"] = json!(compression(plan));
    }
    if given["max_bytes"].as_i64().is_none_or(|b| b <= 0) {
        let b = s.max_bytes.unwrap_or(a.bytes_per_replica).max(1);
        v["max_bytes"] = json!(int64_bytes(&format!("stream {}: max_bytes", s.name), b)?);
    }
    Ok(v)
}

/// The JetStream API stream configuration of a planned stream.
fn stream_json(plan: &Plan, layout: &PlannedLayout, s: &crate::site::StreamSpec) -> Result<Value> {
    check_name("stream", NameKind::Stream, &s.name)?;
    let a = asset(layout, "stream", &s.name)?;
    if let Some(given) = plan.input.workload.stream_configs.get(&s.name) {
        return configured_stream_json(plan, a, s, given);
    }
    let max_bytes = int64_bytes(
        &format!("stream {}: max_bytes", s.name),
        s.max_bytes.unwrap_or(a.bytes_per_replica).max(1),
    )?;
    Ok(json!({
        "name": s.name,
        "subjects": if s.subjects.is_empty() { vec![format!("{}.>", s.name.to_lowercase())] } else { s.subjects.clone() },
        "retention": "limits",
        "storage": "file",
        "num_replicas": a.replicas,
        "max_consumers": -1,
        "max_msgs": -1,
        "max_msgs_per_subject": -1,
        "max_bytes": max_bytes,
        "max_age": ns(s.retention_s),
        "max_msg_size": -1,
        "discard": "old",
        "duplicate_window": duplicate_window_ns(s.retention_s),
        "compression": compression(plan),
        "allow_direct": true,
        "placement": placement(plan, a),
    }))
}

/// A KV bucket as its backing stream `KV_<bucket>`, configured as the NATS clients create it.
fn kv_json(plan: &Plan, layout: &PlannedLayout, k: &crate::site::KvSpec) -> Result<Value> {
    check_name("KV bucket", NameKind::Bucket, &k.name)?;
    let a = asset(layout, "kv", &k.name)?;
    let max_bytes = int64_bytes(&format!("KV bucket {}: max_bytes", k.name), a.bytes_per_replica.max(1))?;
    Ok(json!({
        "name": format!("KV_{}", k.name),
        "subjects": [format!("$KV.{}.>", k.name)],
        "retention": "limits",
        "storage": "file",
        "num_replicas": a.replicas,
        "max_consumers": -1,
        "max_msgs": -1,
        "max_msgs_per_subject": k.history.max(1),
        "max_bytes": max_bytes,
        "max_age": 0,
        "max_msg_size": -1,
        "discard": "new",
        "duplicate_window": ns(DUPLICATE_WINDOW_S),
        "allow_rollup_hdrs": true,
        "deny_delete": true,
        "allow_direct": true,
        "compression": compression(plan),
        "placement": placement(plan, a),
    }))
}

/// An object store as its backing stream `OBJ_<bucket>`, configured as the NATS clients create it.
fn object_store_json(plan: &Plan, layout: &PlannedLayout, o: &crate::site::ObjectStoreSpec) -> Result<Value> {
    check_name("object store", NameKind::Bucket, &o.name)?;
    let a = asset(layout, "object_store", &o.name)?;
    let age = o.retention_s.unwrap_or(0.0);
    let max_bytes = int64_bytes(
        &format!("object store {}: max_bytes", o.name),
        a.bytes_per_replica.max(1),
    )?;
    Ok(json!({
        "name": format!("OBJ_{}", o.name),
        "subjects": [format!("$O.{}.C.>", o.name), format!("$O.{}.M.>", o.name)],
        "retention": "limits",
        "storage": "file",
        "num_replicas": a.replicas,
        "max_consumers": -1,
        "max_msgs": -1,
        "max_msgs_per_subject": -1,
        "max_bytes": max_bytes,
        "max_age": ns(age),
        "max_msg_size": -1,
        "discard": "new",
        "duplicate_window": duplicate_window_ns(age),
        "allow_rollup_hdrs": true,
        "allow_direct": true,
        "compression": compression(plan),
        "placement": placement(plan, a),
    }))
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("json values serialise") + "\n"
}

/// Every file `natsplan emit` writes: `render`'s, and the durable consumers (`consumers/`), relative to the
/// output folder, in a stable order.
pub fn render_all(plan: &Plan, layout_id: &str, opts: &EmitOptions) -> Result<Vec<(PathBuf, String)>> {
    let mut files = render(plan, layout_id, opts)?;
    let layout = plan.layout(layout_id).expect("render found it");
    files.extend(consumers::files(plan, layout, &opts.deploy)?);
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, _) in &files {
        check_path(p)?;
    }
    Ok(files)
}

/// The files that hold a secret in clear, to be written 0600: every server's configuration when the deploy
/// file gives a literal password (a bcrypt hash or text) rather than a `$VAR` nats-server reads from its
/// environment when it starts.
pub fn private_files(files: &[(PathBuf, String)], opts: &EmitOptions) -> Vec<PathBuf> {
    if !deploy::has_literal_password(&opts.deploy) {
        return Vec::new();
    }
    files
        .iter()
        .filter(|(p, _)| p.file_name().is_some_and(|n| n == "nats-server.conf"))
        .map(|(p, _)| p.clone())
        .collect()
}

/// The longest file or folder name Linux file systems take (NAME_MAX).
const NAME_MAX_BYTES: usize = 255;

/// Every name in an emitted path fits a file name, so writing cannot fail half-way with "File name too long".
fn check_path(p: &Path) -> Result<()> {
    for c in p.components() {
        let n = c.as_os_str().len();
        if n > NAME_MAX_BYTES {
            bail!(
                "cannot write {}: a name in it is {n} bytes, more than a file name holds ({NAME_MAX_BYTES}); shorten \
                 the stream or consumer name in the site or deploy file",
                p.display()
            );
        }
    }
    Ok(())
}

/// The layout `layout_id` of the plan, refused when the plan has no such layout or it has no JetStream
/// server (what every emitter — configurations, Helm values, monitoring — needs first).
pub(crate) fn emittable<'p>(plan: &'p Plan, layout_id: &str) -> Result<&'p PlannedLayout> {
    let layout = plan.layout(layout_id).ok_or_else(|| {
        anyhow!(
            "--layout {layout_id}: no such layout in the plan for site '{}'",
            plan.site
        )
    })?;
    if layout.servers.is_empty() {
        bail!("layout {layout_id} has no JetStream servers; nothing to emit");
    }
    Ok(layout)
}

/// The server configurations and the stream, KV and object-store definitions (every `.json` a stream's
/// configuration, which `lab up --streams` and `verify` create and compare), with the READMEs, relative to
/// the output folder, in a stable order.
pub fn render(plan: &Plan, layout_id: &str, opts: &EmitOptions) -> Result<Vec<(PathBuf, String)>> {
    let layout = emittable(plan, layout_id)?;
    let site = &plan.input;
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let version = env!("CARGO_PKG_VERSION");
    // The recovery steps that remove a server or rescue the meta group answer only the system account:
    // every emitted cluster has one with a user (conf::Security::with_system_account).
    let security = opts.deploy.security.clone().with_system_account();

    // One folder per server: its configuration and a README for whoever sets up that host.
    if let crate::units::SyncMode::Interval(i) = site.nats.sync {
        if i > crate::units::MAX_GO_DURATION_S {
            bail!(
                "sync_interval {i} s is longer than nats-server reads (a Go duration: at most {} s, about 292 years); \
                 set nats.sync_interval in the site to e.g. 2m",
                crate::units::MAX_GO_DURATION_S
            );
        }
    }
    for s in &layout.servers {
        check_server_name(&s.name)?;
        int64_bytes(&format!("server {}: max_file_store", s.name), s.store_bytes)?;
        let routes: Vec<String> = layout
            .servers
            .iter()
            .filter(|o| o.name != s.name)
            .map(|o| format!("nats-route://{}:{}", o.name, opts.cluster_port))
            .collect();
        let header = vec![
            format!(
                "nats-server configuration for {} (rack {}), written by natsplan {version}",
                s.name, s.rack
            ),
            format!("site {}, layout {}", plan.site, layout.id),
            format!(
                "store_dir is the mount point of its LUN: {} on {} ({}); max_file_store leaves headroom",
                fmt_bytes(s.lun_bytes as f64),
                s.volume_group.as_deref().unwrap_or("local disk"),
                s.array.as_deref().unwrap_or("internal disks"),
            ),
            "routes name the other servers by server name: replace them with their addresses if DNS differs".into(),
        ];
        let text = conf::render_secured(
            &conf::ServerConf {
                server_name: s.name.clone(),
                client_listen: format!("0.0.0.0:{}", opts.client_port),
                monitor_listen: Some(format!("0.0.0.0:{}", opts.monitor_port)),
                tags: s.tags.iter().map(|t| t.to_lowercase()).collect(),
                store_dir: opts.store_dir.clone(),
                max_file_store_bytes: Some(s.store_bytes),
                max_memory_store_bytes: None,
                unique_tag: layout.unique_tag.clone(),
                sync: site.nats.sync,
                max_ha_assets: site.nats.max_ha_assets,
                cluster_name: site.nats.cluster_name.clone(),
                cluster_listen: format!("0.0.0.0:{}", opts.cluster_port),
                routes,
                header,
                client_tls: None,
            },
            &security,
        );
        files.push((PathBuf::from(&s.name).join("nats-server.conf"), text));
        files.push((
            PathBuf::from(&s.name).join("README.md"),
            server_readme(plan, layout, s, opts),
        ));
    }

    let mut streams = Vec::new();
    let stems = file_stems(site.workload.streams.iter().map(|s| s.name.as_str()));
    for (s, stem) in site.workload.streams.iter().zip(stems) {
        let v = stream_json(plan, layout, s)?;
        files.push((PathBuf::from("streams").join(format!("{stem}.json")), pretty(&v)));
        streams.push((s.name.clone(), stem));
    }
    let mut kvs = Vec::new();
    let stems = file_stems(site.workload.kv.iter().map(|k| k.name.as_str()));
    for (k, stem) in site.workload.kv.iter().zip(stems) {
        let v = kv_json(plan, layout, k)?;
        files.push((PathBuf::from("kv").join(format!("{stem}.json")), pretty(&v)));
        kvs.push((k.name.clone(), stem));
    }
    let mut objs = Vec::new();
    let stems = file_stems(site.workload.object_stores.iter().map(|o| o.name.as_str()));
    for (o, stem) in site.workload.object_stores.iter().zip(stems) {
        let v = object_store_json(plan, layout, o)?;
        files.push((PathBuf::from("object_stores").join(format!("{stem}.json")), pretty(&v)));
        objs.push((o.name.clone(), stem));
    }
    if !streams.is_empty() {
        files.push((
            PathBuf::from("streams/README.md"),
            assets_readme(plan, layout, "stream", &streams),
        ));
    }
    if !kvs.is_empty() {
        files.push((PathBuf::from("kv/README.md"), assets_readme(plan, layout, "kv", &kvs)));
    }
    if !objs.is_empty() {
        files.push((
            PathBuf::from("object_stores/README.md"),
            assets_readme(plan, layout, "object_store", &objs),
        ));
    }
    files.push((PathBuf::from("README.md"), top_readme(plan, layout, opts, &security)));
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

fn check_server_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.');
    if !ok {
        bail!("server name '{name}' cannot be an output folder; use letters, digits, '-', '_' or '.'");
    }
    Ok(())
}

/// What applications get for streams, buckets and stores they create themselves.
fn later_assets_text(plan: &Plan, layout: &PlannedLayout) -> String {
    let mut o = String::new();
    let racks = layout
        .servers
        .iter()
        .map(|s| s.rack.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    match &layout.hardware().placement {
        PlacementRule::UniqueTag { prefix } => {
            o.push_str(&format!(
                "- Placement: every server has `unique_tag: \"{prefix}\"`, so NATS puts every replica of *any* \
                 stream, KV bucket or object store on a different `{prefix}` value ({racks} in this layout), \
                 including ones applications create later. The flip side: nothing with more than {racks} \
                 replicas can be created (`no suitable peers for placement`).\n"
            ));
        }
        PlacementRule::Pinned { sets } => {
            o.push_str(
                "- Placement: `unique_tag` could not be used (some planned stream has more replicas than there \
                 are racks), so the planned streams are pinned to replica sets with placement tags:\n",
            );
            for s in sets {
                let names: Vec<String> = layout
                    .replica_sets
                    .iter()
                    .find(|(n, _)| *n == s.name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                o.push_str(&format!("  - `set:{}`: {}\n", s.name.to_lowercase(), names.join(", ")));
            }
            o.push_str(
                "  A stream an application creates *without* `placement.tags` is not confined to a set: NATS \
                 may put all its replicas in one rack. Create it with e.g. `nats stream add --tag set:NAME` (or \
                 `placement: {tags: [\"set:NAME\"]}` in code) using a set of the right size.\n",
            );
        }
        PlacementRule::Free => {
            o.push_str(
                "- Placement: no tag steers replicas; NATS may put all replicas of a stream in one rack. \
                 Survivability in the plan assumes that worst case.\n",
            );
        }
    }
    o.push_str(&format!(
        "- Replicas: NATS does not apply the plan's replica count ({}) to streams it does not know. An \
         application's stream gets what it asks for (default 1). KV buckets and object stores created by \
         applications default to **R1** (`nats kv add`, `nats object add` and the client libraries all use \
         replicas 1 unless told otherwise): pass `--replicas {}` (or `Replicas`/`num_replicas` in code).\n",
        layout.replicas, layout.replicas
    ));
    o.push_str(&format!(
        "- Limits: streams created later have no `max_bytes` unless they set one; they share each server's \
         `max_file_store` with the planned ones. Sync: `sync_interval: {}` applies to every stream on these \
         servers.{}\n",
        plan.input.nats.sync,
        if plan.input.nats.sync.is_delayed() {
            " Acknowledged writes can sit in the page cache until the next sync; a power event that takes a \
             quorum of a stream's replicas can lose them."
        } else {
            ""
        }
    ));
    o
}

fn top_readme(plan: &Plan, layout: &PlannedLayout, opts: &EmitOptions, security: &conf::Security) -> String {
    let mut o = format!(
        "# NATS configuration for site `{}`, layout `{}`\n\nWritten by natsplan {} — pattern {}, {}, default \
         R{}, verdict **{}**.\n\n",
        plan.site,
        layout.id,
        env!("CARGO_PKG_VERSION"),
        layout.pattern,
        layout.raid,
        layout.replicas,
        layout.verdict.as_str()
    );
    if !layout.reasons.is_empty() {
        o.push_str("Reasons from the plan:\n\n");
        for r in &layout.reasons {
            o.push_str(&format!("- {r}\n"));
        }
        o.push('\n');
    }
    o.push_str(
        "## Which host gets what\n\n| host (server_name) | rack | file | LUN | volume group / array | \
         max_file_store | tags |\n|---|---|---|---|---|---|---|\n",
    );
    for s in &layout.servers {
        o.push_str(&format!(
            "| {} | {} | `{}/nats-server.conf` | {} mounted at `{}` | {} / {} | {} | {} |\n",
            s.name,
            s.rack,
            s.name,
            fmt_bytes(s.lun_bytes as f64),
            opts.store_dir,
            s.volume_group.as_deref().unwrap_or("-"),
            s.array.as_deref().unwrap_or("internal"),
            fmt_bytes(s.store_bytes as f64),
            s.tags.join(" ")
        ));
    }
    o.push_str("\nWhat each server's store sits on:\n\n");
    for s in &layout.servers {
        o.push_str(&format!(
            "- {}: {}\n",
            s.name,
            s.volume.as_deref().unwrap_or("no volume")
        ));
    }
    o.push_str(&format!(
        "\nStart each server with `nats-server -c nats-server.conf` (check first with `nats-server -t -c \
         nats-server.conf`). Ports: clients {}, routes {}, monitoring {}.\n\n",
        opts.client_port, opts.cluster_port, opts.monitor_port
    ));
    o.push_str(&deploy::readme_section(security));
    o.push_str(
        "## Streams, KV buckets and object stores\n\nThe folders `streams/`, `kv/` and `object_stores/` hold \
         JetStream API stream configurations; create each with `nats stream add --config FILE` once the \
         cluster is up (KV buckets and object stores are the streams `KV_<bucket>` and `OBJ_<store>` the \
         clients use). See the README in each folder.\n\n## What streams created later will and will not \
         get\n\n",
    );
    o.push_str(&later_assets_text(plan, layout));
    o
}

/// The volume group's drives in the order natsplan modelled them (survival's mirror pairs for RAID 10).
fn drives_line(s: &crate::plan::PlannedServer) -> String {
    let list: Vec<String> = s.drives.iter().map(|d| d.to_string()).collect();
    let pairs =
        if matches!(s.raid.as_deref(), Some("raid10")) || (s.raid.as_deref() == Some("raid1") && s.drives.len() > 2) {
            let p: Vec<String> = s
                .drives
                .chunks(2)
                .filter(|c| c.len() == 2)
                .map(|c| format!("({},{})", c[0], c[1]))
                .collect();
            format!(
            "; natsplan models the mirror pairs as {} (adjacent drives in this order): check that the array pairs them \
             so before relying on which two drives may fail together",
            p.join(", ")
        )
        } else {
            String::new()
        };
    format!(
        "- Volume group {} ({}): drives {} in this order{pairs}.\n",
        s.volume_group.as_deref().unwrap_or("-"),
        s.raid.as_deref().unwrap_or("-"),
        list.join(", ")
    )
}

/// Where a server's store goes, by what its volume is: a LUN or pool volume presented by an array (the
/// array's rack named when it is another), its internal disks, or a VM disk on its host's pool.
fn store_line(s: &crate::plan::PlannedServer, store_dir: &str) -> String {
    use crate::layout::VolumeKind;
    let mount = format!(
        "put a filesystem on it and mount it at `{store_dir}` before starting nats-server (each server must have \
         its own store; never share it)"
    );
    let Some(volume) = s.volume.as_deref() else {
        return format!("- This server has no volume in the layout; {mount}.\n");
    };
    match s.volume_kind {
        Some(VolumeKind::Internal) => {
            format!("- Its store is {volume}: build that group on the server's own disks, {mount}.\n")
        }
        Some(VolumeKind::VmDisk) => format!(
            "- Give this VM the {volume}; {mount}. The disk lives on the host's pool, so the plan counts \
             losing that host as losing this store.\n"
        ),
        _ => format!("- Give this host the {volume}; {mount}.\n"),
    }
}

fn server_readme(plan: &Plan, layout: &PlannedLayout, s: &crate::plan::PlannedServer, opts: &EmitOptions) -> String {
    let mut o = format!(
        "# {}\n\nHost `{}` in rack {} (site `{}`, layout `{}`).\n\n",
        s.name, s.name, s.rack, plan.site, layout.id
    );
    o.push_str(&store_line(s, &opts.store_dir));
    if !s.drives.is_empty() {
        o.push_str(&drives_line(s));
    }
    o.push_str(&format!(
        "- Copy `nats-server.conf` to the host and run `nats-server -c nats-server.conf`. `max_file_store` is \
         {} ({} bytes): the LUN less filesystem reserve and headroom.\n",
        fmt_bytes(s.store_bytes as f64),
        s.store_bytes
    ));
    o.push_str(&format!(
        "- Tags: {}. They are lower case on purpose (tag matching is case-sensitive before nats-server \
         2.12).\n",
        s.tags.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
    ));
    o.push_str(&format!(
        "- Routes point at the other servers by name on port {}; replace the names with addresses if DNS \
         does not resolve them.\n",
        opts.cluster_port
    ));
    o
}

/// File names (without `.json`) for names that share a folder, in their order: each name as it is, but
/// names equal but for case — two streams to nats-server (`ORDERS` and `orders`; names are case-sensitive)
/// and one file on a case-insensitive file system (macOS, Windows) — each get `~` and eight hex digits of
/// the SHA-256 of the name. The suffix depends on the name alone, so a name's file changes only when
/// another name that differs from it only in case comes or goes.
pub(crate) fn file_stems<'a>(names: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
    use sha2::{Digest, Sha256};
    let mut folded: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for n in names.clone() {
        *folded.entry(n.to_lowercase()).or_default() += 1;
    }
    names
        .map(|n| {
            if folded[&n.to_lowercase()] > 1 {
                let h = Sha256::digest(n.as_bytes());
                format!("{n}~{:02x}{:02x}{:02x}{:02x}", h[0], h[1], h[2], h[3])
            } else {
                n.to_string()
            }
        })
        .collect()
}

/// The README's paragraph on names told apart by case only (`file_stems`), when there are any.
fn case_note(what: &str, named: &[(String, String)]) -> String {
    let renamed: Vec<String> = named
        .iter()
        .filter(|(n, stem)| n != stem)
        .map(|(n, stem)| format!("`{n}` in `{stem}.json`"))
        .collect();
    if renamed.is_empty() {
        return String::new();
    }
    format!(
        "Some {what} names differ only in case, which nats-server tells apart but a case-insensitive file system \
         (macOS, Windows) does not: so that no file overwrites another, each of them is written as its name, `~` \
         and eight hex digits of the name's SHA-256 ({}). The `name` inside each file is the one nats-server \
         gets.\n\n",
        renamed.join(", ")
    )
}

fn assets_readme(plan: &Plan, layout: &PlannedLayout, kind: &str, named: &[(String, String)]) -> String {
    let (title, note) = match kind {
        "stream" => (
            "Streams",
            "`subjects` are the site's `subjects:`; where a stream gives none, `<name>.>` stands in: set the \
             subjects your applications publish to before creating it. `max_bytes` is the stream's planned size at the end of the planning horizon \
             (or the site's cap); with `discard: old` the oldest messages go first when it is reached.",
        ),
        "kv" => (
            "KV buckets",
            "Each file is the stream `KV_<bucket>` exactly as `nats kv add` would create it, with the plan's \
             replicas, placement and `max_bytes`; `max_msgs_per_subject` is the bucket's history.",
        ),
        _ => (
            "Object stores",
            "Each file is the stream `OBJ_<store>` exactly as `nats object add` would create it (chunks under \
             `$O.<store>.C.>`, metadata under `$O.<store>.M.>`), with the plan's replicas, placement and size.",
        ),
    };
    let mut o = format!("# {title} (site `{}`, layout `{}`)\n\n", plan.site, layout.id);
    o.push_str("Create each once the cluster is up: `nats stream add --config FILE`.\n\n");
    let what = match kind {
        "stream" => "stream",
        "kv" => "bucket",
        _ => "object store",
    };
    o.push_str(&case_note(what, named));
    o.push_str("| file | replicas | placement | expected servers |\n|---|---|---|---|\n");
    for (n, stem) in named {
        // Per asset only (`asset` refused a layout kept per class before this is written).
        let assets = layout.per_asset().map(|d| &d.assets[..]).unwrap_or_default();
        if let Some(a) = assets.iter().find(|a| a.kind.as_str() == kind && &a.name == n) {
            let place = match (&a.set, &layout.unique_tag) {
                (Some(set), _) => {
                    let members = layout
                        .replica_sets
                        .iter()
                        .find(|(n, _)| n == set)
                        .map(|(_, m)| m.join(", "));
                    format!("tag `set:{}` ({})", set.to_lowercase(), members.unwrap_or_default())
                }
                (None, Some(u)) => format!("`unique_tag: \"{u}\"` spreads it"),
                (None, None) => "anywhere (NATS chooses)".into(),
            };
            o.push_str(&format!(
                "| `{stem}.json` | {} | {place} | {} |\n",
                a.replicas,
                a.expected.join(", ")
            ));
        }
    }
    o.push_str(&format!(
        "\n{note}\n\n\"Expected servers\" is where natsplan's emulation of the meta leader puts the replicas; \
         NATS breaks ties at random, so the exact servers may differ within the placement constraint.\n\n\
         ## Created later by applications\n\n{}",
        later_assets_text(plan, layout)
    ));
    o
}

#[cfg(test)]
mod tests;
