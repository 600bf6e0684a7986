//! The chart folder's README: how to install it, what each value the plan set means, and the volumes.
//! Moved out of emit/helm.rs whole.

use super::*;

pub(super) fn readme(
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
