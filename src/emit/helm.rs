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

fn readme(
    plan: &Plan,
    layout: &PlannedLayout,
    storage_class: &str,
    values: &Value,
    pvc_bytes: u64,
    max_bytes: u64,
    warnings: &[String],
) -> String {
    let mut o = format!(
        "# Helm values for site `{}`, layout `{}`\n\n`values.yaml` is for the official nats chart {CHART_VERSION} \
         ({CHART_SOURCE}); `nats.conf` is the configuration the chart renders from it for a release named \
         `{RELEASE}` (natsplan's own rendering of the chart's templates, checked with `nats-server -t`).\n\n\
         ```\nkubectl create secret generic {SYSTEM_SECRET} --from-literal=password=\"p$(openssl rand -hex 24)\"\nhelm repo add nats \
         https://nats-io.github.io/k8s/helm/charts/\nhelm install {RELEASE} nats/nats --version {CHART_VERSION} -f \
         values.yaml\n```\n\nThe password must be letters and digits starting with a letter (the command above makes one): \
         nats-server reads `$NATS_SYSTEM_PASSWORD` as a configuration value (conf/parse.go `lookupVariable`), so \
         a password that is a number, `true`, or has spaces, `;` or `,` would not arrive as given.\n\n",
        plan.site, layout.id
    );
    o.push_str(&readme_values(
        plan,
        layout,
        storage_class,
        values,
        pvc_bytes,
        max_bytes,
    ));
    o.push_str(&format!(
        "## The rack tag: from the node's zone label\n\nThe chart renders one `nats.conf` for every pod; only \
         `$SERVER_NAME` (the pod name) differs. Each pod learns its rack from its node:\n\n1. Label every node that \
         may run a NATS pod with its rack, lower case: `kubectl label node NODE {ZONE_LABEL}=RACK` (racks: {}).\n\
         2. Enable the `PodTopologyLabels` admission plugin (Kubernetes 1.33 alpha, with feature gate \
         `PodTopologyLabelsAdmission`; beta from 1.35): it copies the node's `{ZONE_LABEL}` onto the pod when it is \
         bound. Before 1.33, a mutating admission webhook that does the same on `pods/binding` gives the same label; an \
         init container that reads its node (RBAC: get nodes) and writes `server_tags` into a file the \
         configuration includes (`config.merge` `$include`) would also do, but is not what these values emit.\n3. The values read it with the downward API into \
         `${RACK_ENV}` (`fieldPath: metadata.labels['{ZONE_LABEL}']`), make `${RACK_TAG_ENV}` = `rack:$({RACK_ENV})` \
         (Kubernetes expands variables defined before; the chart writes `container.env` in key order), and \
         `config.merge.server_tags: [${RACK_TAG_ENV}]`: nats-server reads a `$VAR` it does not define from its \
         environment. Check with `nats server list` (tags column) once the pods run.\n\n",
        rack_counts(layout).keys().map(|r| r.to_lowercase()).collect::<Vec<_>>().join(", ")
    ));
    o.push_str(&readme_volumes(layout, storage_class, pvc_bytes));
    o.push_str("## What the values cannot carry\n\n");
    o.push_str(
        "- Replica sets pinned with `set:` tags: refused (every pod gets the same configuration).\n- A spread whose \
         racks differ by more than one server (4 + 1 + 1): refused (maxSkew cannot fix counts per rack).\n- A LUN per \
         server: only by the PersistentVolumes above.\n- Different store sizes per server: one claim size for all \
         (the smallest).\n- `array:` and `host:` tags, the deploy file's accounts other than the system account, and \
         TLS.\n",
    );
    if !warnings.is_empty() {
        o.push_str("\n## Warnings for this layout\n\n");
        for w in warnings {
            o.push_str(&format!("- {w}\n"));
        }
    }
    o
}

/// README.md's "What the values carry": each value the plan sets and where its figure comes from.
fn readme_values(
    plan: &Plan,
    layout: &PlannedLayout,
    storage_class: &str,
    values: &Value,
    pvc_bytes: u64,
    max_bytes: u64,
) -> String {
    let site = &plan.input;
    let n = layout.servers.len();
    let mut o = String::new();
    o.push_str("## What the values carry\n\n");
    o.push_str(&format!(
        "- `config.cluster.replicas: {n}` (the layout's JetStream servers); the cluster is named `{}` \
         (`config.cluster.merge.name`), the name the emitted streams' `placement.cluster` gives.\n",
        site.nats.cluster_name
    ));
    o.push_str(&format!(
        "- `config.jetstream.fileStore.pvc.size: {pvc_bytes}` ({}: the smallest planned LUN) from StorageClass \
         `{storage_class}`, and `fileStore.maxSize: {max_bytes}` ({}): the chart's default `max_file_store` is the \
         whole claim, but the filesystem on it keeps its reserve and metadata (`policy.fs_reserve`, {:.0} %) and \
         natsplan keeps `policy.store_headroom` ({:.0} %) of the store free so a store never fills to the brim \
         (nats-server stops taking writes on a full disk); {:.1} % below the claim in all.\n",
        fmt_bytes(pvc_bytes as f64),
        fmt_bytes(max_bytes as f64),
        site.policy.fs_reserve * 100.0,
        site.policy.store_headroom * 100.0,
        if pvc_bytes > 0 {
            100.0 * (1.0 - max_bytes as f64 / pvc_bytes as f64)
        } else {
            0.0
        }
    ));
    o.push_str(&format!(
        "- `container.image.tag: {NATS_SERVER_VERSION}-alpine`: the nats-server version natsplan's figures and checks \
         are taken on (the chart's own default is its appVersion, {CHART_VERSION}).\n"
    ));
    match values["container"]["resources"]["requests"].as_object() {
        Some(r) => o.push_str(&format!(
            "- `container.resources`: requests {} CPU and {} memory, the largest of the servers' predicted needs \
             (`predicted.servers[].needs` of the plan: stream, consumer and core work; heap, write caches, page \
             cache), with the memory request as the limit and `GOMEMLIMIT` from the plan's suggestion where it is \
             below it. No CPU limit: a throttled server misses RAFT heartbeats.\n",
            r["cpu"].as_str().unwrap_or("?"),
            r["memory"].as_str().unwrap_or("?")
        )),
        None => o.push_str("- `container.resources`: empty, the plan has no per-server needs for this layout.\n"),
    }
    o.push_str(&format!(
        "- The system account `{}` with user `{}` (`config.merge.accounts`, `system_account`): its password comes \
         from Secret `{SYSTEM_SECRET}` (key `password`) through the container's environment, never the ConfigMap. \
         The recovery steps (`nats server cluster peer-remove`, …) need it (docs/emit.md).\n",
        values["config"]["merge"]["system_account"].as_str().unwrap_or(""),
        values["config"]["merge"]["accounts"]
            .as_object()
            .and_then(|m| m.values().next())
            .and_then(|a| a["users"][0]["user"].as_str())
            .unwrap_or("")
    ));
    o.push_str(&format!(
        "- `jetstream.sync_interval: {}`{}{} (`config.jetstream.merge`).\n",
        site.nats.sync.config_value(),
        layout
            .unique_tag
            .as_ref()
            .map(|u| format!(", `unique_tag: {u}`"))
            .unwrap_or_default(),
        site.nats
            .max_ha_assets
            .map(|m| format!(", `limits.max_ha_assets: {m}`"))
            .unwrap_or_default()
    ));
    o.push_str(&format!(
        "- Topology spread (`podTemplate.topologySpreadConstraints`): `{ZONE_LABEL}` with maxSkew 1 over at least \
         {} racks, `kubernetes.io/hostname` with maxSkew 1, and node affinity to the plan's racks \
         ({}).\n\n",
        rack_counts(layout).len(),
        rack_counts(layout)
            .keys()
            .map(|r| r.to_lowercase())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    o
}

/// README.md's "Which LUN each server gets": the PersistentVolumes to create, one per planned LUN.
fn readme_volumes(layout: &PlannedLayout, storage_class: &str, pvc_bytes: u64) -> String {
    let mut o = String::new();
    o.push_str(
        "## Which LUN each server gets: PersistentVolumes bound by claimRef\n\nThe chart's volume claim template \
         asks the StorageClass for one volume per pod; nothing in it says which LUN. To give each server its planned \
         LUN, create one PersistentVolume per LUN before installing, with the StorageClass above (a class with \
         `provisioner: kubernetes.io/no-provisioner`, `volumeBindingMode: WaitForFirstConsumer`), a `claimRef` to the \
         claim the StatefulSet will make, and node affinity to the host the LUN is mapped to:\n\n",
    );
    o.push_str("| pod | claim (claimRef.name) | planned server | rack | LUN | size |\n|---|---|---|---|---|---|\n");
    for (i, s) in layout.servers.iter().enumerate() {
        o.push_str(&format!(
            "| {RELEASE}-{i} | {RELEASE}-js-{RELEASE}-{i} | {} | {} | {} | {} |\n",
            s.name,
            s.rack,
            s.volume.as_deref().unwrap_or("-"),
            s.lun_bytes
        ));
    }
    o.push_str(&format!(
        "\n```yaml\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: {RELEASE}-js-{RELEASE}-0\nspec:\n  \
         capacity:\n    storage: \"{pvc_bytes}\"\n  accessModes: [ReadWriteOnce]\n  persistentVolumeReclaimPolicy: \
         Retain\n  storageClassName: {storage_class}\n  claimRef:\n    namespace: NAMESPACE\n    name: \
         {RELEASE}-js-{RELEASE}-0\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n      - \
         matchExpressions:\n        - {{key: kubernetes.io/hostname, operator: In, values: [NODE]}}\n  local:\n    \
         path: /mnt/LUN   # or the volume source of your SAN (fc, iscsi, csi)\n```\n\n"
    ));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    const TREE: &str = include_str!("../../tests/data/helm-nats-2.14.2-keys.txt");

    fn plan(file: &str) -> Plan {
        let path = format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let cat = crate::catalog::Catalog::builtin();
        let site = crate::site::parse_str(&text, &path, &cat).unwrap();
        crate::plan::build(&site, &cat)
    }

    #[test]
    fn emitted_keys_are_all_in_the_charts_values() {
        let p = plan("three-racks-raid1.yaml");
        let h = render(&p, &p.layouts[0].id, &EmitOptions::default(), "nats-jetstream").unwrap();
        assert_eq!(unknown_keys(&h.values, TREE), Vec::<String>::new());
        // The check can fail: a misspelt key and a key below a leaf are caught.
        let mut v = h.values.clone();
        v["config"]["jetstream"]["fileStore"]["pvc"]["sizee"] = json!("1Gi");
        v["config"]["cluster"]["replicas"] = json!({"count": 3});
        assert_eq!(
            unknown_keys(&v, TREE),
            vec!["config.cluster.replicas.count", "config.jetstream.fileStore.pvc.sizee"]
        );
    }

    #[test]
    fn the_key_tree_names_its_source_and_chart_version() {
        assert!(TREE.contains("nats-io/k8s") && TREE.contains(CHART_VERSION) && TREE.contains("values.yaml"));
    }

    #[test]
    fn the_rendered_config_follows_the_charts_templates() {
        let v = json!({
            "config": {
                "cluster": {"enabled": true, "replicas": 3, "merge": {"name": "c1"}},
                "jetstream": {"enabled": true, "fileStore": {"maxSize": "900", "pvc": {"size": "1000"}},
                              "merge": {"unique_tag": "rack:"}},
                "merge": {"server_tags": ["<< $T >>"]},
            }
        });
        let c = chart_conf(&v, "nats");
        assert!(c.contains("\"server_name\": $SERVER_NAME,"), "{c}");
        assert!(c.contains("\"max_file_store\": 900,"), "{c}");
        assert!(c.contains("\"max_memory_store\": 0,"), "{c}");
        assert!(c.contains("\"nats://nats-2.nats-headless:6222\""), "{c}");
        assert!(c.contains("\"name\": \"c1\""), "{c}");
        assert!(c.contains("\"unique_tag\": \"rack:\""), "{c}");
        assert!(c.contains("\"http_port\": 8222"), "{c}");
        assert!(!c.contains("<<"), "{c}");
        // Without maxSize the chart's default: the whole claim.
        let mut w = v.clone();
        w["config"]["jetstream"]["fileStore"]["maxSize"] = Value::Null;
        assert!(chart_conf(&w, "nats").contains("\"max_file_store\": 1000,"));
        // A release without "nats" in its name: <release>-nats.
        assert!(chart_conf(&v, "prod").contains("nats://prod-nats-0.prod-nats-headless:6222"));
    }

    /// The chart's own test (helm/charts/nats/test/config_test.go `TestConfigJetStreamCluster`, with the
    /// defaults of defaults_test.go) expects this configuration for `cluster.enabled` and `jetstream.enabled`
    /// (its `server_name` the pod's, `10Gi` as nats-server reads it).
    #[test]
    fn the_charts_own_jetstream_cluster_case_renders_as_its_test_expects() {
        let v = json!({"config": {"cluster": {"enabled": true}, "jetstream": {"enabled": true}}});
        let c = chart_conf(&v, "nats")
            .replace("$SERVER_NAME", "\"nats-0\"")
            .replace(": 10Gi", ": 10737418240");
        let got: Value = serde_json::from_str(&c).unwrap_or_else(|e| panic!("{e}: {c}"));
        let want = json!({
            "http_port": 8222, "lame_duck_duration": "30s", "lame_duck_grace_period": "10s",
            "pid_file": "/var/run/nats/nats.pid", "port": 4222, "server_name": "nats-0",
            "cluster": {"name": "nats", "no_advertise": true, "port": 6222, "routes": [
                "nats://nats-0.nats-headless:6222", "nats://nats-1.nats-headless:6222",
                "nats://nats-2.nats-headless:6222"]},
            "jetstream": {"max_file_store": 10737418240u64, "max_memory_store": 0, "store_dir": "/data"},
        });
        assert_eq!(got, want);
    }

    #[test]
    fn pinned_sets_and_uneven_racks_are_refused_with_the_fix() {
        let p = plan("one-rack-raid10.yaml");
        let e = render(&p, &p.layouts[0].id, &EmitOptions::default(), "nats-jetstream")
            .unwrap_err()
            .to_string();
        assert!(e.contains("set: tags") && e.contains("without --helm-values"), "{e}");
        let p = plan("seed-five-servers-raid0.yaml");
        let l = p.layouts.iter().find(|l| !l.replica_sets.is_empty()).unwrap();
        let e = render(&p, &l.id, &EmitOptions::default(), "nats-jetstream")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unique_tag rack:") && e.contains("--layout"), "{e}");
        // 2 + 2 + 1 is what maxSkew 1 gives (warned); 3 + 1 + 1 is not (refused).
        let l = p
            .layouts
            .iter()
            .find(|l| l.replica_sets.is_empty() && l.servers.len() == 5)
            .unwrap();
        let h = render(&p, &l.id, &EmitOptions::default(), "nats-jetstream").unwrap();
        assert!(h.warnings.iter().any(|w| w.contains("maxSkew 1")), "{:?}", h.warnings);
        let mut q = p.clone();
        let m = q.layouts.iter_mut().find(|x| x.id == l.id).unwrap();
        let b = m.servers.iter().position(|s| s.rack == "B").unwrap();
        m.servers[b].rack = "A".into();
        let e = render(&q, &l.id, &EmitOptions::default(), "nats-jetstream")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unevenly") && e.contains("rack A: 3, rack B: 1, rack C: 1"),
            "{e}"
        );
    }

    #[test]
    fn a_rack_name_no_node_label_can_hold_is_refused_with_the_site_field() {
        let mut p = plan("three-racks-raid1.yaml");
        let id = p.layouts[0].id.clone();
        p.layouts[0].servers[0].rack = "Row 1/A".into();
        let e = render(&p, &id, &EmitOptions::default(), "nats-jetstream")
            .unwrap_err()
            .to_string();
        assert!(e.contains("rack 'Row 1/A'") && e.contains("racks[].name"), "{e}");
    }

    #[test]
    fn storage_class_names_are_checked() {
        assert!(check_storage_class("nats-jetstream").is_ok());
        let e = check_storage_class("Fast SSD").unwrap_err().to_string();
        assert!(e.contains("--storage-class") && e.contains("e.g."), "{e}");
        assert!(check_storage_class("-x").is_err());
        assert!(check_storage_class("").is_err());
    }
}
