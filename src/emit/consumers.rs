//! The site's durable consumers as `nats consumer add STREAM --config FILE` JSON (nats-server's
//! `ConsumerConfig`, server/consumer.go): the ones the deploy file names, else `consumers: N` generic
//! pull consumers per stream, with the stream's replicas (consumers follow their stream's placement).

use super::deploy::{ConsumerSpec, Deploy};
use crate::plan::{Plan, PlannedLayout};
use anyhow::Result;
use serde_json::{json, Value};
use std::path::PathBuf;

/// nats-server's default ack wait (30 s, server/consumer.go `JsAckWaitDefault`).
const ACK_WAIT_DEFAULT_NS: i64 = 30_000_000_000;

/// The ConsumerConfig of one durable pull consumer.
pub fn consumer_json(c: &ConsumerSpec, replicas: u8) -> Value {
    let ack_wait = c
        .ack_wait
        .as_deref()
        .and_then(|w| crate::units::parse_duration(w).ok())
        // deploy::parse refuses an ack_wait past a Go duration; never wrap to a negative one.
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(ACK_WAIT_DEFAULT_NS);
    let mut v = json!({
        "durable_name": c.durable,
        "name": c.durable,
        "deliver_policy": c.deliver_policy.as_deref().unwrap_or("all"),
        "ack_policy": c.ack_policy.as_deref().unwrap_or("explicit"),
        "ack_wait": ack_wait,
        "max_deliver": c.max_deliver.unwrap_or(-1),
        "replay_policy": "instant",
        "max_ack_pending": c.max_ack_pending.unwrap_or(1000),
        "num_replicas": replicas,
    });
    if let Some(d) = &c.description {
        v["description"] = json!(d);
    }
    if let Some(f) = &c.filter_subject {
        v["filter_subject"] = json!(f);
    }
    v
}

/// A placeholder consumer's name, `<stream>-c<k>`, with the stream's part shortened (at a character
/// boundary) where the whole would pass 250 bytes: the file `consumers/<stream>/<name>.json` must fit a
/// file name (NAME_MAX 255) and nats-server takes consumer names up to 255 bytes (`JSMaxNameLen`).
fn placeholder_name(stream: &str, k: u32) -> String {
    let tail = format!("-c{k}");
    let mut keep = crate::input::limits::MAX_ASSET_NAME_BYTES
        .saturating_sub(tail.len())
        .min(stream.len());
    while !stream.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{}{tail}", &stream[..keep])
}

/// The consumers of every stream: the deploy file's, else `N` named `<stream>-c1`… as placeholders.
pub fn specs(plan: &Plan, deploy: &Deploy) -> Vec<(String, Vec<ConsumerSpec>, bool)> {
    let mut out = Vec::new();
    for s in &plan.input.workload.streams {
        if let Some(list) = deploy.consumers.get(&s.name) {
            out.push((s.name.clone(), list.clone(), true));
        } else if s.consumers > 0 {
            let list = (1..=s.consumers)
                .map(|k| ConsumerSpec {
                    durable: placeholder_name(&s.name, k),
                    description: Some(format!("placeholder {k} of {} planned for {}", s.consumers, s.name)),
                    filter_subject: None,
                    deliver_policy: None,
                    ack_policy: None,
                    ack_wait: None,
                    max_deliver: None,
                    max_ack_pending: None,
                })
                .collect();
            out.push((s.name.clone(), list, false));
        }
    }
    out
}

/// `consumers/<stream>/<durable>.json` for every consumer, and a README.
pub fn files(plan: &Plan, layout: &PlannedLayout, deploy: &Deploy) -> Result<Vec<(PathBuf, String)>> {
    let mut files = Vec::new();
    let mut rows = String::new();
    let mut placeholders = false;
    // Folders and files as streams/ names them: names equal but for case apart (`emit::file_stems`).
    let streams = &plan.input.workload.streams;
    let folders: std::collections::HashMap<&str, String> = streams
        .iter()
        .map(|s| s.name.as_str())
        .zip(super::file_stems(streams.iter().map(|s| s.name.as_str())))
        .collect();
    let mut renamed = false;
    for (stream, list, named) in specs(plan, deploy) {
        let a = super::asset(layout, "stream", &stream)?;
        let folder = folders.get(stream.as_str()).cloned().unwrap_or_else(|| stream.clone());
        let stems = super::file_stems(list.iter().map(|c| c.durable.as_str()));
        renamed |= folder != stream || list.iter().zip(&stems).any(|(c, s)| &c.durable != s);
        for (c, stem) in list.iter().zip(stems) {
            let v = consumer_json(c, a.replicas);
            files.push((
                PathBuf::from("consumers").join(&folder).join(format!("{stem}.json")),
                super::pretty(&v),
            ));
            rows.push_str(&format!(
                "| {stream} | `{}` | {} | `nats consumer add {stream} --config consumers/{folder}/{stem}.json` |\n",
                c.durable, a.replicas
            ));
        }
        placeholders |= !named;
    }
    if files.is_empty() {
        return Ok(files);
    }
    let mut o = format!(
        "# Durable consumers (site `{}`, layout `{}`)\n\nCreate each after its stream. Each file is a ConsumerConfig \
         as `nats consumer add --config` takes it: a durable pull consumer, explicit acks, replicas as its stream \
         (each is its own RAFT group on the stream's servers).\n\n| stream | consumer | replicas | create with |\n\
         |---|---|---|---|\n{rows}",
        plan.site, layout.id
    );
    if placeholders {
        o.push_str(
            "\nConsumers named `<stream>-cN` stand in for the `consumers: N` of the site: name them, and set their \
             filters and limits, in the deploy file's `consumers:` (docs/emit.md), or rename them here.\n",
        );
    }
    if renamed {
        o.push_str(
            "\nSome stream or consumer names differ only in case, which nats-server tells apart but a \
             case-insensitive file system (macOS, Windows) does not: their folders and files are written as the \
             name, `~` and eight hex digits of the name's SHA-256 (the table gives each path).\n",
        );
    }
    files.push((PathBuf::from("consumers/README.md"), o));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::{render_all as render, EmitOptions};

    fn plan() -> Plan {
        let cat = crate::catalog::Catalog::builtin();
        let text = include_str!("../../tests/data/four-racks-r3.yaml");
        let site = crate::site::parse_str(text, "four-racks-r3.yaml", &cat).unwrap();
        crate::plan::build(&site, &cat)
    }

    fn consumer_files(files: &[(PathBuf, String)]) -> Vec<(String, Value)> {
        files
            .iter()
            .filter(|(p, _)| p.starts_with("consumers") && p.extension().is_some_and(|e| e == "json"))
            .map(|(p, t)| (p.display().to_string(), serde_json::from_str(t).unwrap()))
            .collect()
    }

    #[test]
    fn planned_consumers_become_consumer_configs_with_the_streams_replicas() {
        let plan = plan();
        let l = &plan.layouts[0];
        let files = render(&plan, &l.id, &EmitOptions::default()).unwrap();
        let c = consumer_files(&files);
        // orders plans one consumer, events none.
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].0, "consumers/orders/orders-c1.json");
        let orders = l
            .per_asset()
            .unwrap()
            .assets
            .iter()
            .find(|a| a.name == "orders")
            .unwrap();
        assert_eq!(c[0].1["num_replicas"], orders.replicas);
        assert_eq!(c[0].1["durable_name"], "orders-c1");
        assert_eq!(c[0].1["ack_policy"], "explicit");
        assert!(files.iter().any(|(p, _)| p == &PathBuf::from("consumers/README.md")));
    }

    #[test]
    fn placeholder_names_fit_a_file_name_whatever_the_stream_name() {
        assert_eq!(placeholder_name("orders", 3), "orders-c3");
        let long = "é".repeat(125); // 250 bytes
        let n = placeholder_name(&long, 10_000);
        assert!(n.len() <= 250 && n.ends_with("-c10000"), "{} bytes", n.len());
        assert!(n.starts_with(&"é".repeat(121)));
    }

    #[test]
    fn render_keeps_only_stream_definitions_as_json_for_lab_and_verify() {
        // `lab up --streams` and `verify` create and compare every `.json` of `render` as a stream.
        let plan = plan();
        let l = &plan.layouts[0];
        for (p, t) in crate::emit::render(&plan, &l.id, &EmitOptions::default()).unwrap() {
            if p.extension().is_some_and(|e| e == "json") {
                let v: Value = serde_json::from_str(&t).unwrap();
                assert!(
                    v["subjects"].is_array() && v.get("durable_name").is_none(),
                    "{}",
                    p.display()
                );
            }
        }
    }

    #[test]
    fn the_deploy_files_consumers_are_named_and_filtered() {
        let plan = plan();
        let l = &plan.layouts[0];
        let deploy = crate::emit::deploy::parse(
            "consumers:\n  orders: [{ durable: billing, filter_subject: returns.*.created, ack_wait: 1m, max_deliver: 5 }]\n",
            "deploy.yaml",
            &plan.input.workload,
        )
        .unwrap();
        let opts = EmitOptions {
            deploy,
            ..EmitOptions::default()
        };
        let c = consumer_files(&render(&plan, &l.id, &opts).unwrap());
        assert_eq!(c[0].0, "consumers/orders/billing.json");
        assert_eq!(c[0].1["filter_subject"], "returns.*.created");
        assert_eq!(c[0].1["ack_wait"], 60_000_000_000i64);
        assert_eq!(c[0].1["max_deliver"], 5);
        // Two where the site plans one, and a filter outside the stream: both refused.
        let e = crate::emit::deploy::parse(
            "consumers:\n  orders: [{ durable: a }, { durable: b, filter_subject: payments.> }]\n",
            "deploy.yaml",
            &plan.input.workload,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("2 consumers listed, but the site plans 1"), "{e}");
        assert!(e.contains("'payments.>' is not a subject of stream orders"), "{e}");
    }
}
