//! `natsplan emit SITE.yaml --layout ID --out DIR [--deploy FILE]`: write a planned layout's nats-server
//! configurations, stream, KV and object-store definitions and durable consumers (see `emit`).

use crate::cli::{Global, PlanArgs};
use crate::emit::{self, EmitOptions};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use crate::plan::Verdict;
use anyhow::anyhow;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct EmitArgs {
    /// The site file; optional with --plan.
    #[arg(value_name = "SITE.yaml", required_unless_present = "plan")]
    pub site: Option<PathBuf>,
    #[command(flatten)]
    pub inputs: PlanArgs,
    /// Layout id from `natsplan design`; default: the layout a --plan was saved with, else the best-ranked one (said on stderr).
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
    /// Output folder (created; must be empty unless --force).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace a non-empty output folder.
    #[arg(long)]
    pub force: bool,
    /// Emit even a layout the plan rejects (its reasons are written into the README).
    #[arg(long)]
    pub allow_rejected: bool,
    /// Where each host mounts its LUN (jetstream.store_dir).
    #[arg(long, value_name = "PATH", default_value = "/var/lib/nats")]
    pub store_dir: String,
    /// A deploy file (YAML, docs/emit.md): accounts with users or nkeys and a system account, TLS (cert,
    /// key, CA, verify, routes), and the site's durable consumers by name, written as
    /// `consumers/<stream>/<name>.json` for `nats consumer add --config`.
    #[arg(long, value_name = "FILE")]
    pub deploy: Option<PathBuf>,
    /// Also write `helm/values.yaml` for the official nats Helm chart 2.14.x, the `nats.conf` the chart
    /// renders from it and a README (docs/emit.md): refused for layouts the chart cannot run (pinned
    /// `set:` tags, racks whose server counts differ by more than one).
    #[arg(long)]
    pub helm_values: bool,
    /// The StorageClass the Helm values claim each server's volume from (with --helm-values).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "nats-jetstream",
        requires = "helm_values"
    )]
    pub storage_class: String,
    /// Also write Prometheus alerting rules and a Grafana dashboard for the layout into `monitoring/`, with
    /// the plan's thresholds (docs/emit.md).
    #[arg(long)]
    pub monitoring: bool,
    /// The exporter whose metric names --monitoring uses.
    #[arg(long, value_enum, value_name = "EXPORTER", default_value_t = ExporterArg::PrometheusNatsExporter, requires = "monitoring")]
    pub exporter: ExporterArg,
    /// prometheus-nats-exporter's `-prefix` (the Helm chart passes `nats`): its metrics are then `PREFIX_varz_*`
    /// and `PREFIX_*` instead of `gnatsd_varz_*` and `jetstream_*`.
    #[arg(long, value_name = "PREFIX", requires = "monitoring")]
    pub metric_prefix: Option<String>,
}

/// `--exporter`: prometheus-nats-exporter or nats-surveyor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExporterArg {
    /// nats-io/prometheus-nats-exporter (`gnatsd_varz_*`, `jetstream_*`).
    PrometheusNatsExporter,
    /// nats-io/nats-surveyor (`nats_core_*`, `nats_stream_*`, `nats_consumer_*`; needs the system account).
    Surveyor,
}

pub fn run(g: &Global, a: EmitArgs) -> Result<Outcome, Failure> {
    super::refuse_unless::<crate::report::emit::Emitted>(super::format(g))?;
    if let Some(c) = crate::site::names::hidden_char(&a.store_dir) {
        return Err(bad_input(anyhow!(
            "--store-dir {:?} holds {c}; give the mount point's path",
            a.store_dir
        )));
    }
    if !a.store_dir.starts_with('/') {
        return Err(bad_input(anyhow!(
            "--store-dir '{}' must be an absolute path, e.g. /var/lib/nats",
            a.store_dir
        )));
    }
    let loaded = super::load_plan(g, &a.inputs, a.site.as_deref(), a.layout.as_deref())?;
    let (inputs, plan) = (&loaded.inputs, &loaded.plan);
    if let Some(note) = inputs.layout_note(plan, a.layout.as_deref()) {
        eprintln!("natsplan: {note}");
    }
    let layout = loaded.layout()?;
    if layout.verdict == Verdict::Rejected && !a.allow_rejected {
        return Err(bad_input(anyhow!(
            "--layout {}: the plan rejects this layout ({}); choose another from `natsplan design`, or pass \
             --allow-rejected to emit it anyway",
            layout.id,
            layout.reasons.join("; ")
        )));
    }
    let deploy = match &a.deploy {
        None => emit::deploy::Deploy::default(),
        Some(p) => {
            let text = crate::input::read_text(p, "--deploy").map_err(bad_input)?;
            emit::deploy::parse(&text, &p.display().to_string(), &plan.input.workload).map_err(bad_input)?
        }
    };
    let opts = EmitOptions {
        store_dir: a.store_dir.clone(),
        deploy,
        ..EmitOptions::default()
    };
    let monitoring = monitoring_of(&a, layout)?;
    let mut files = emit::render_all(plan, &layout.id, &opts).map_err(bad_input)?;
    let chart_exporter = monitoring
        .as_ref()
        .is_some_and(|m| m.exporter == emit::monitoring::Exporter::PrometheusNatsExporter);
    let helm = match a.helm_values {
        true => {
            let h = emit::helm::render(plan, &layout.id, &opts, &a.storage_class).map_err(bad_input)?;
            Some(if chart_exporter {
                h.with_exporter().map_err(bad_input)?
            } else {
                h
            })
        }
        false => None,
    };
    if let Some(h) = &helm {
        files.extend(h.files());
        for w in &h.warnings {
            eprintln!("natsplan: warning: helm values: {w}");
        }
    }
    if let Some(m) = &monitoring {
        files.extend(emit::monitoring::render(plan, &layout.id, m).map_err(bad_input)?);
    }
    files.sort_by(|x, y| x.0.cmp(&y.0));
    let private = emit::private_files(&files, &opts);
    if let Err(e) = emit::write_atomically(&a.out, &files, a.force, &private) {
        return match e.downcast_ref::<emit::Interrupted>() {
            Some(i) => Ok(Outcome::Interrupted(format!("emit: {i}"))),
            None if e.to_string().starts_with("--out") => Err(bad_input(e)),
            None => Err(cannot_run(e)),
        };
    }
    let report = crate::report::emit::Emitted {
        out: &a.out,
        layout,
        files: files.iter().map(|(p, _)| p.display().to_string()).collect(),
        helm: helm.as_ref(),
        monitoring: monitoring.as_ref(),
    };
    super::print(g, &report)?;
    Ok(Outcome::Ok)
}

/// `--monitoring` with its exporter and metric prefix (a prefix is prometheus-nats-exporter's only).
fn monitoring_of(
    a: &EmitArgs,
    layout: &crate::plan::PlannedLayout,
) -> Result<Option<emit::monitoring::Monitoring>, Failure> {
    Ok(match a.monitoring {
        false => None,
        true => {
            let exporter = match a.exporter {
                ExporterArg::PrometheusNatsExporter => emit::monitoring::Exporter::PrometheusNatsExporter,
                ExporterArg::Surveyor => emit::monitoring::Exporter::Surveyor,
            };
            if a.metric_prefix.is_some() && exporter != emit::monitoring::Exporter::PrometheusNatsExporter {
                return Err(bad_input(anyhow!(
                    "--metric-prefix is prometheus-nats-exporter's -prefix; nats-surveyor's names have none (drop \
                     --metric-prefix, or use --exporter prometheus-nats-exporter)"
                )));
            }
            // Under the Helm chart every server is named for its pod and the chart's exporter runs with
            // `-prefix=nats` (files/stateful-set/prom-exporter-container.yaml): the rules must say so.
            let (prefix, server_names) = match a.helm_values {
                false => (a.metric_prefix.clone(), Vec::new()),
                true => {
                    let chart = exporter == emit::monitoring::Exporter::PrometheusNatsExporter;
                    if chart && a.metric_prefix.as_deref().is_some_and(|p| p != "nats") {
                        return Err(bad_input(anyhow!(
                            "--metric-prefix {}: with --helm-values the chart runs prometheus-nats-exporter with \
                             -prefix=nats, so the rules use that; drop --metric-prefix",
                            a.metric_prefix.as_deref().unwrap_or_default()
                        )));
                    }
                    let prefix = if chart { Some("nats".to_string()) } else { None };
                    (prefix, emit::helm::pod_names(layout))
                }
            };
            Some(emit::monitoring::Monitoring {
                exporter,
                prefix,
                server_names,
            })
        }
    })
}
