//! `emit --helm-values`: a values file for the official nats Helm chart (nats-io/k8s, `helm/charts/nats`,
//! chart 2.14.2, read at commit 957650f) that carries a planned layout — servers, store sizes, the pinned
//! nats-server image, resources from the per-server needs, the system account, the rack spread and the
//! rack tag — with the `nats.conf` the chart renders from it, and a README saying what the values cannot
//! carry.
//!
//! The chart ships no values schema: the keys written here are held against its `values.yaml` by
//! `tests/data/helm-nats-2.14.2-keys.txt` (the unit tests below). `chart_conf` follows the chart's config
//! templates (`files/config/config.yaml`, `cluster.yaml`, `jetstream.yaml`, `_helpers.tpl`
//! `nats.loadMergePatch` and `nats.formatConfig`) for the keys emitted here, so the result can be checked
//! with `nats-server -t`.
//!
//! The chart renders one configuration for every pod; only `$SERVER_NAME` (the pod name) differs. A pod's
//! rack tag therefore comes from its node: the node's `topology.kubernetes.io/zone` label (the rack) is
//! copied onto the pod by the `PodTopologyLabels` admission plugin (KEP-4742: alpha in Kubernetes 1.33,
//! beta in 1.35), read by the downward API into `$NATS_RACK`, and `$NATS_RACK_TAG` (`rack:$(NATS_RACK)`)
//! becomes `server_tags` through `config.merge` (nats-server resolves a `$VAR` it does not define from its
//! environment).

use super::EmitOptions;
use crate::plan::{Plan, PlannedLayout};
use crate::units::fmt_bytes;
use anyhow::{anyhow, bail, Result};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

mod readme;
use readme::readme;

/// The chart the values are written for, and where its keys were read.
pub const CHART_VERSION: &str = "2.14.2";
pub const CHART_SOURCE: &str = "github.com/nats-io/k8s helm/charts/nats at commit 957650f";
/// The nats-server version natsplan plans for: its figures, recovery steps and `nats-server -t` checks are
/// taken on 2.15.1 (`scripts/install-nats-server`). The image tag follows the chart's default form
/// (`2.14.2-alpine` for its appVersion).
pub const NATS_SERVER_VERSION: &str = "2.15.1";
/// The release name the rendered `nats.conf` assumes (routes name `<release>-<i>.<release>-headless`).
pub const RELEASE: &str = "nats";
/// The node label that names a server's rack, copied onto the pod by `PodTopologyLabels`.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
pub const RACK_ENV: &str = "NATS_RACK";
pub const RACK_TAG_ENV: &str = "NATS_RACK_TAG";
/// The Secret the system user's password is read from (key `password`).
pub const SYSTEM_SECRET: &str = "nats-system-account";

/// What `--helm-values` writes, and the warnings about what the values do not carry.
#[derive(Debug, Clone)]
pub struct Helm {
    pub values: Value,
    /// The values file's header comment (what wrote it, for which site and layout).
    pub header: String,
    pub values_yaml: String,
    pub nats_conf: String,
    pub readme: String,
    pub warnings: Vec<String>,
}

impl Helm {
    /// The chart's prometheus-nats-exporter sidecar turned on (`promExporter.enabled`, off by default in the
    /// chart's values.yaml), for `emit --monitoring` with that exporter: the chart runs it with
    /// `-prefix=nats -use_internal_server_id` (files/stateful-set/prom-exporter-container.yaml).
    pub fn with_exporter(mut self) -> Result<Helm> {
        self.values["promExporter"] = serde_json::json!({ "enabled": true });
        let yaml =
            serde_norway::to_string(&self.values).map_err(|e| anyhow!("values do not serialise as YAML: {e}"))?;
        self.values_yaml = format!("{}{yaml}", self.header);
        Ok(self)
    }

    /// The files, relative to emit's output folder.
    pub fn files(&self) -> Vec<(PathBuf, String)> {
        vec![
            (PathBuf::from("helm/values.yaml"), self.values_yaml.clone()),
            (PathBuf::from("helm/nats.conf"), self.nats_conf.clone()),
            (PathBuf::from("helm/README.md"), self.readme.clone()),
        ]
    }
}

/// Each planned server and the pod that runs it under the chart: the StatefulSet's pods `RELEASE-<i>` in
/// the layout's server order (the order of helm/README.md's table and of the PersistentVolumes bound to
/// them). Every pod's `server_name` is its pod name, so what reads servers by name (monitoring rules,
/// `natsplan check`) must use these.
pub fn pod_names(layout: &crate::plan::PlannedLayout) -> Vec<(String, String)> {
    layout
        .servers
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.clone(), format!("{RELEASE}-{i}")))
        .collect()
}

/// A StorageClass name as Kubernetes takes it (a DNS subdomain: lower-case letters, digits, '-' and '.',
/// starting and ending with a letter or digit, at most 253 characters); the error names the flag and
/// the fix.
pub fn check_storage_class(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if !ok {
        bail!(
            "--storage-class {:?} is not a Kubernetes StorageClass name; give a DNS subdomain (lower-case letters, \
             digits, '-' and '.', starting and ending with a letter or digit, at most 253), e.g. nats-jetstream",
            name
        );
    }
    Ok(())
}

/// Servers per rack (rack name, count), racks in name order.
fn rack_counts(layout: &PlannedLayout) -> BTreeMap<&str, usize> {
    let mut m = BTreeMap::new();
    for s in &layout.servers {
        *m.entry(s.rack.as_str()).or_insert(0) += 1;
    }
    m
}

fn mebibytes_ceil(bytes: f64) -> u64 {
    (bytes / (1024.0 * 1024.0)).ceil().max(1.0) as u64
}

/// The values for a planned layout: refused (an error) where the chart cannot run the plan's placement,
/// warned where it runs it with less than the plan says.
pub fn render(plan: &Plan, layout_id: &str, opts: &EmitOptions, storage_class: &str) -> Result<Helm> {
    check_storage_class(storage_class)?;
    let layout = super::emittable(plan, layout_id)?;
    let site = &plan.input;
    let mut warnings = Vec::new();

    refuse_replica_sets(plan, layout)?;
    // Refused: a spread the scheduler cannot be held to. The chart's one lever is a topology spread
    // constraint (maxSkew); with maxSkew 1 the racks get counts that differ by at most one, so a plan whose
    // racks differ by more (4 + 1 + 1) would be scheduled as another spread (2 + 2 + 2) with other capacity
    // and failure figures, and a larger maxSkew allows 3 + 2 + 1 as well as 4 + 1 + 1.
    let racks = rack_counts(layout);
    check_racks(layout, &racks, &mut warnings)?;

    let (pvc_bytes, max_bytes) = volumes(layout, storage_class, &mut warnings)?;

    let (sys, sys_user, password_env) = system_account(opts, &mut warnings)?;

    let mut env = Map::new();
    env.insert(
        RACK_ENV.into(),
        json!({"valueFrom": {"fieldRef": {"fieldPath": format!("metadata.labels['{ZONE_LABEL}']")}}}),
    );
    // Kubernetes expands $(VAR) from variables defined before it; the chart writes env in key order.
    env.insert(RACK_TAG_ENV.into(), json!(format!("rack:$({RACK_ENV})")));
    env.insert(
        password_env.clone(),
        json!({"valueFrom": {"secretKeyRef": {"name": SYSTEM_SECRET, "key": "password"}}}),
    );
    let resources = resources(layout, &mut env, &mut warnings);

    // Topology spread from the racks: an even spread over exactly the plan's racks (node affinity to their
    // zone labels, which also makes sure every pod's rack tag is set), and pods spread over nodes (maxSkew 1:
    // one per node while there are as many eligible nodes as pods, not a hard rule; the PersistentVolumes'
    // node affinity is what pins each pod to its planned host, helm/README.md).
    let mut spread = Map::new();
    spread.insert(
        ZONE_LABEL.into(),
        json!({"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule", "minDomains": racks.len()}),
    );
    spread.insert(
        "kubernetes.io/hostname".into(),
        json!({"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}),
    );
    let zones: Vec<String> = racks.keys().map(|r| r.to_lowercase()).collect();

    let n = layout.servers.len();
    let mut js_merge = json!({ "sync_interval": site.nats.sync.config_value() });
    if let Some(u) = &layout.unique_tag {
        js_merge["unique_tag"] = json!(u.trim().to_lowercase());
    }
    if let Some(m) = site.nats.max_ha_assets {
        js_merge["limits"] = json!({ "max_ha_assets": m });
    }
    let mut accounts = Map::new();
    accounts.insert(
        sys.clone(),
        json!({"users": [{"user": sys_user, "password": format!("<< ${password_env} >>")}]}),
    );
    let mut values = json!({
        "config": {
            "cluster": {
                "enabled": n > 1,
                "replicas": n,
                "merge": { "name": site.nats.cluster_name },
            },
            "jetstream": {
                "enabled": true,
                "fileStore": {
                    "enabled": true,
                    "maxSize": max_bytes.to_string(),
                    "pvc": {
                        "enabled": true,
                        "size": pvc_bytes.to_string(),
                        "storageClassName": storage_class,
                    },
                },
                "merge": js_merge,
            },
            "merge": {
                "server_tags": [format!("<< ${RACK_TAG_ENV} >>")],
                "accounts": accounts,
                "system_account": sys,
            },
        },
        "container": {
            "image": { "tag": format!("{NATS_SERVER_VERSION}-alpine") },
            "env": env,
        },
        "podTemplate": {
            "topologySpreadConstraints": spread,
            "merge": { "spec": { "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{ "matchExpressions": [{
                    "key": ZONE_LABEL, "operator": "In", "values": zones,
                }]}],
            }}}}},
        },
    });
    if let Some(r) = resources {
        values["container"]["resources"] = r;
    }
    let yaml = serde_norway::to_string(&values).map_err(|e| anyhow!("values do not serialise as YAML: {e}"))?;
    let header = values_header(plan, layout);
    let values_yaml = format!("{header}{yaml}");
    let nats_conf = chart_conf(&values, RELEASE);
    let readme = readme(plan, layout, storage_class, &values, pvc_bytes, max_bytes, &warnings);
    Ok(Helm {
        values,
        header,
        values_yaml,
        nats_conf,
        readme,
        warnings,
    })
}

/// Refused: pinned replica sets. Every pod gets the same configuration, so no pod can carry a `set:` tag
/// that another lacks, and the emitted streams' `placement.tags: [set:…]` would find no server.
fn refuse_replica_sets(plan: &Plan, layout: &PlannedLayout) -> Result<()> {
    if !layout.replica_sets.is_empty() {
        let alternatives: Vec<&str> = plan
            .layouts
            .iter()
            .filter(|l| l.replica_sets.is_empty() && l.unique_tag.is_some() && !l.servers.is_empty())
            .map(|l| l.id.as_str())
            .take(3)
            .collect();
        bail!(
            "--helm-values: layout {} pins replica sets with set: tags ({}), which the nats chart cannot give: it \
         renders one configuration for every pod, so no pod can carry a set: tag another lacks and the \
         emitted streams (placement tags set:…) would find no server; {}, or deploy this layout with the \
         per-server configurations emit writes without --helm-values",
            layout.id,
            layout
                .replica_sets
                .iter()
                .map(|(n, m)| format!("{n}: {}", m.join(", ")))
                .collect::<Vec<_>>()
                .join("; "),
            if alternatives.is_empty() {
                "give the site racks enough for unique_tag rack: (one per replica)".to_string()
            } else {
                format!(
                    "choose a layout placed by unique_tag rack: with --layout ({})",
                    alternatives.join(", ")
                )
            }
        );
    }
    Ok(())
}

/// Each rack's name must be a label value (the rack tag comes from the node's zone label), and the
/// racks' counts must differ by at most one (the chart's topology spread, maxSkew 1).
fn check_racks(layout: &PlannedLayout, racks: &BTreeMap<&str, usize>, warnings: &mut Vec<String>) -> Result<()> {
    // The rack tag comes from the node's zone label, so each rack's name (lower case) must be a label value.
    for r in racks.keys() {
        let v = r.to_lowercase();
        let ok = v.len() <= 63
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && v.starts_with(|c: char| c.is_ascii_alphanumeric())
            && v.ends_with(|c: char| c.is_ascii_alphanumeric());
        if !ok {
            bail!(
                "--helm-values: rack '{}' cannot be a Kubernetes label value, and the pods learn their rack tag from \
                 their node's {ZONE_LABEL} label; rename the rack in the site file (racks[].name: at most 63 letters, \
                 digits, '-', '_' or '.', starting and ending with a letter or digit)",
                r.escape_debug()
            );
        }
    }
    let (lo, hi) = (
        racks.values().copied().min().unwrap_or(0),
        racks.values().copied().max().unwrap_or(0),
    );
    if hi - lo > 1 {
        bail!(
            "--helm-values: layout {} spreads its servers unevenly over the racks ({}); the nats chart's only \
             control is a topology spread constraint (maxSkew), which cannot fix a count per rack, so the pods \
             would land in another spread than the plan's capacity and failure figures are for; choose a layout \
             with counts per rack that differ by at most one, or deploy this one with the per-server \
             configurations emit writes without --helm-values",
            layout.id,
            racks
                .iter()
                .map(|(r, n)| format!("rack {r}: {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if hi > lo {
        warnings.push(format!(
            "racks hold {lo} or {hi} servers ({}); the scheduler chooses which racks get {hi} (maxSkew 1), so racks \
             must be alike for the plan's figures to hold",
            racks
                .iter()
                .map(|(r, n)| format!("{r}: {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(())
}

/// One volume size for every pod: the smallest LUN and its store size (the PVC's and maxSize), with the
/// warnings of what the values cannot say (larger LUNs, which LUN each pod gets, the tags a pod lacks).
fn volumes(layout: &PlannedLayout, storage_class: &str, warnings: &mut Vec<String>) -> Result<(u64, u64)> {
    // One size for every pod: the smallest LUN, and its store size.
    let pvc_bytes = layout.servers.iter().map(|s| s.lun_bytes).min().unwrap_or(0);
    let max_bytes = layout.servers.iter().map(|s| s.store_bytes).min().unwrap_or(0);
    super::int64_bytes("--helm-values: config.jetstream.fileStore.maxSize", max_bytes)?;
    let larger: Vec<&str> = layout
        .servers
        .iter()
        .filter(|s| s.lun_bytes > pvc_bytes)
        .map(|s| s.name.as_str())
        .collect();
    if !larger.is_empty() {
        warnings.push(format!(
            "the chart gives every pod one volume size: the values claim the smallest planned LUN ({}) and cap \
             every store at {}; {} {} whose extra space JetStream will not use",
            fmt_bytes(pvc_bytes as f64),
            fmt_bytes(max_bytes as f64),
            larger.join(", "),
            if larger.len() == 1 {
                "has a larger LUN"
            } else {
                "have larger LUNs"
            }
        ));
    }
    warnings.push(format!(
        "the values cannot say which LUN each server gets (the chart claims one volume per pod from StorageClass \
         {storage_class}); pre-provision one PersistentVolume per planned LUN, bound by claimRef to \
         {RELEASE}-js-{RELEASE}-<ordinal> with node affinity to its host (helm/README.md)"
    ));
    // Tags the pod cannot learn: its array (which LUN) and hypervisor host.
    let dropped: std::collections::BTreeSet<&str> = layout
        .servers
        .iter()
        .flat_map(|s| s.tags.iter())
        .filter(|t| !t.starts_with("rack:"))
        .filter_map(|t| t.split_once(':').map(|(k, _)| k))
        .collect();
    if !dropped.is_empty() {
        warnings.push(format!(
            "the pods carry only the rack tag (rack:<zone label>); the plan's {} tags are not set (nothing in a pod \
             says which array or host it is on), and no emitted stream places by them",
            dropped.iter().map(|k| format!("{k}:")).collect::<Vec<_>>().join(", ")
        ));
    }
    Ok((pvc_bytes, max_bytes))
}

/// The system account (the recovery steps need it): its name, its user and the variable of the user's
/// password, which must be a `$VAR` (the values give it from a Secret).
fn system_account(opts: &EmitOptions, warnings: &mut Vec<String>) -> Result<(String, String, String)> {
    // The system account: the recovery steps need it (conf::Security::with_system_account).
    let security = opts.deploy.security.clone().with_system_account();
    let sys = security.system_account.clone().unwrap_or_default();
    let (sys_user, sys_password) = security
        .system_user()
        .map(|(u, p)| (u.to_string(), p.to_string()))
        .ok_or_else(|| {
            anyhow!(
                "--helm-values: the deploy file's system account '{sys}' has no password user; the values give the \
                 system user its password from Secret {SYSTEM_SECRET}: add a user with password: $VAR to it"
            )
        })?;
    let Some(password_env) = sys_password
        .strip_prefix('$')
        .filter(|_| super::conf::is_env_ref(&sys_password))
    else {
        bail!(
            "--helm-values: the deploy file gives system user '{sys_user}' a literal password, which the values would \
             put in the chart's ConfigMap in clear; write password: $NATS_SYSTEM_PASSWORD in the deploy file and put \
             the password in Secret {SYSTEM_SECRET} (key password)"
        );
    };
    if security.accounts.len() > 1 || security.tls.is_some() {
        warnings.push(
            "the values carry only the system account: the deploy file's other accounts and TLS are not in them (add \
             them under config.merge and config.nats.tls by hand, or deploy with the per-server configurations)"
                .into(),
        );
    }
    Ok((sys, sys_user, password_env.to_string()))
}

/// Resources from the per-server needs (perf::servers::server_needs), the largest of the layout: every
/// pod gets the same; GOMEMLIMIT beside them when it is below the memory limit.
fn resources(layout: &PlannedLayout, env: &mut Map<String, Value>, warnings: &mut Vec<String>) -> Option<Value> {
    let predicted = layout.predicted.as_ref().filter(|p| !p.servers.is_empty());
    let mut resources = None;
    if let Some(p) = predicted {
        let cpu = p.servers.iter().map(|s| s.needs.cpu_cores.needed).fold(0.0, f64::max);
        let mem = p
            .servers
            .iter()
            .map(|s| s.needs.memory_bytes.needed)
            .fold(0.0, f64::max);
        let gomem = p.servers.iter().map(|s| s.gomemlimit_bytes).fold(0.0, f64::max);
        let mem_mi = mebibytes_ceil(mem);
        resources = Some(json!({
            "requests": {
                "cpu": format!("{}m", ((cpu * 1000.0).ceil() as u64).max(1)),
                "memory": format!("{mem_mi}Mi"),
            },
            "limits": { "memory": format!("{mem_mi}Mi") },
        }));
        let gomem_mi = mebibytes_ceil(gomem);
        if gomem > 0.0 && gomem_mi < mem_mi {
            env.insert("GOMEMLIMIT".into(), json!(format!("{gomem_mi}MiB")));
        }
    } else {
        warnings.push(
            "the plan has no per-server needs for this layout, so container.resources is left empty (the chart's \
             default: no requests or limits)"
                .into(),
        );
    }
    resources
}

/// The comment values.yaml opens with: the chart, the site and layout, and how to install it.
fn values_header(plan: &Plan, layout: &PlannedLayout) -> String {
    let n = layout.servers.len();
    format!(
        "# Values for the nats Helm chart {CHART_VERSION} ({CHART_SOURCE}),\n# written by natsplan {} for site \
         {}, layout {} ({} servers, R{}).\n# helm install {RELEASE} nats/nats --version {CHART_VERSION} -f values.yaml \
         — read README.md first\n# (node labels, the system password Secret, PersistentVolumes).\n",
        env!("CARGO_PKG_VERSION"),
        plan.site
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect::<String>(),
        layout.id,
        n,
        layout.replicas
    )
}

/// `a` with `b` merged in as sprig's `mergeOverwrite` does: maps deeply, anything else replaced.
fn merge_overwrite(a: &mut Value, b: &Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(k) {
                    Some(x) if x.is_object() && v.is_object() => merge_overwrite(x, v),
                    _ => {
                        a.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (a, b) => *a = b.clone(),
    }
}

/// The value at a dotted path of the values, or the chart's default for it (values.yaml) when not set.
fn get<'v>(values: &'v Value, path: &str, default: &'v Value) -> &'v Value {
    let mut v = values;
    for k in path.split('.') {
        match v.get(k) {
            Some(x) if !x.is_null() => v = x,
            _ => return default,
        }
    }
    v
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Null => false,
        Value::String(s) => !s.is_empty(),
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The `nats.conf` the chart renders from `values` for a release named `release` (not installed with
/// `fullnameOverride`), for the keys natsplan writes: the chart's `files/config/config.yaml` with its
/// cluster and jetstream blocks and their `merge`, then `config.merge` over the whole, printed as sorted,
/// indented JSON whose `"<< X >>"` strings are written bare (`nats.formatConfig`).
pub fn chart_conf(values: &Value, release: &str) -> String {
    let t = Value::Bool(true);
    let f = Value::Bool(false);
    let null = Value::Null;
    let empty = Value::Object(Map::new());
    // nats.fullname: the release name when it contains the chart's name, else <release>-nats.
    let full = if release.contains("nats") {
        release.to_string()
    } else {
        format!("{release}-nats")
    };
    let mut c = json!({
        "server_name": "<< $SERVER_NAME >>",
        "lame_duck_grace_period": "10s",
        "lame_duck_duration": "30s",
        "pid_file": "/var/run/nats/nats.pid",
        "port": get(values, "config.nats.port", &json!(4222)),
    });
    if truthy(get(values, "config.cluster.enabled", &f)) {
        let port = get(values, "config.cluster.port", &json!(6222))
            .as_u64()
            .unwrap_or(6222);
        let replicas = get(values, "config.cluster.replicas", &json!(3)).as_u64().unwrap_or(3);
        let headless = format!("{full}-headless");
        let routes: Vec<String> = (0..replicas)
            .map(|i| format!("nats://{full}-{i}.{headless}:{port}"))
            .collect();
        let mut cl = json!({
            "name": full,
            "port": port,
            "no_advertise": get(values, "config.cluster.noAdvertise", &t),
            "routes": routes,
        });
        merge_overwrite(&mut cl, get(values, "config.cluster.merge", &empty));
        c["cluster"] = cl;
    }
    if truthy(get(values, "config.monitor.enabled", &t)) {
        c["http_port"] = get(values, "config.monitor.port", &json!(8222)).clone();
    }
    if truthy(get(values, "config.jetstream.enabled", &f)) {
        let mut js = Map::new();
        if truthy(get(values, "config.jetstream.memoryStore.enabled", &f)) {
            let m = get(values, "config.jetstream.memoryStore.maxSize", &null);
            if truthy(m) {
                js.insert("max_memory_store".into(), json!(format!("<< {} >>", scalar(m))));
            }
        } else {
            js.insert("max_memory_store".into(), json!(0));
        }
        if truthy(get(values, "config.jetstream.fileStore.enabled", &t)) {
            js.insert(
                "store_dir".into(),
                get(values, "config.jetstream.fileStore.dir", &json!("/data")).clone(),
            );
            let max = get(values, "config.jetstream.fileStore.maxSize", &null);
            if truthy(max) {
                js.insert("max_file_store".into(), json!(format!("<< {} >>", scalar(max))));
            } else if truthy(get(values, "config.jetstream.fileStore.pvc.enabled", &t)) {
                let default = json!("10Gi");
                let size = get(values, "config.jetstream.fileStore.pvc.size", &default);
                js.insert("max_file_store".into(), json!(format!("<< {} >>", scalar(size))));
            }
        } else {
            js.insert("max_file_store".into(), json!(0));
        }
        let mut js = Value::Object(js);
        merge_overwrite(&mut js, get(values, "config.jetstream.merge", &empty));
        c["jetstream"] = js;
    }
    merge_overwrite(&mut c, get(values, "config.merge", &empty));
    unquote_raw(&(serde_json::to_string_pretty(&c).expect("json values serialise") + "\n"))
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// `nats.formatConfig`'s rule: a JSON string `"<< X >>"` is written as `X`.
fn unquote_raw(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("\"<< ") {
        o.push_str(&rest[..i]);
        let after = &rest[i + 4..];
        let line_end = after.find('\n').unwrap_or(after.len());
        match after[..line_end].find(" >>\"") {
            Some(j) => {
                o.push_str(after[..j].trim());
                rest = &after[j + 4..];
            }
            None => {
                o.push_str("\"<< ");
                rest = after;
            }
        }
    }
    o.push_str(rest);
    o
}

/// Every key path of `values`: a leaf's dotted path, or a free-form map's path and its first key below it.
pub fn key_paths(values: &Value) -> Vec<String> {
    fn walk(v: &Value, path: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, x) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(x, &p, out);
                }
            }
            _ => out.push(path.to_string()),
        }
    }
    let mut out = Vec::new();
    walk(values, "", &mut out);
    out
}

/// The key paths of `values` the chart's key tree does not have. `tree` lines: a dotted key path of the
/// chart's values.yaml; one ending in `.*` is free-form below it (merge, env, resources, …); `#` comments.
pub fn unknown_keys(values: &Value, tree: &str) -> Vec<String> {
    let known: Vec<&str> = tree
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    key_paths(values)
        .into_iter()
        .filter(|p| {
            !known.iter().any(|k| match k.strip_suffix(".*") {
                Some(free) => p.starts_with(&format!("{free}.")),
                None => p == k,
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "helm_tests.rs"]
mod tests;
