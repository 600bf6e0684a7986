//! `natsplan bench core|js|kv|obj|ping|flood`: one benchmark run against a live cluster, with the flags
//! NATS users know from `nats bench`. Parses flags into a `bench::BenchSpec`, runs it on a tokio runtime,
//! prints the result through the render seam (`report::bench`, on `bench::export`'s pure exporters).

use crate::bench::{
    self, BenchSpec, BenchWorkload, ClientChoice, ConnArgs, ConnSpec, ConsumeMode, Existing, ObjOp, PublishMode,
    Storage,
};
use crate::cli::{Format, Global};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use clap::{Args, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

mod args;

pub use args::*;

/// What a subcommand's flags ask for: the workload, its count and the options that only some take
/// (absent ones at their defaults).
struct Parsed {
    workload: BenchWorkload,
    msgs: u64,
    rate: Option<f64>,
    backlog_cutoff: Duration,
    core: CoreOpts,
    client: ClientChoice,
    common: Common,
    subjects: bench::Subjects,
    /// `--consumer-leader` (consumer runs only).
    consumer_leader: Option<bench::LeaderPlacement>,
}

impl Parsed {
    fn new(
        workload: BenchWorkload,
        msgs: u64,
        rate: RateOpts,
        core: CoreOpts,
        client: ClientOpt,
        common: Common,
    ) -> Parsed {
        Parsed {
            workload,
            msgs,
            rate: rate.rate,
            backlog_cutoff: rate.backlog_cutoff,
            core,
            client: client.client,
            common,
            subjects: bench::Subjects::default(),
            consumer_leader: None,
        }
    }
    fn on(mut self, subject: Option<String>, multi: Option<u64>) -> Parsed {
        self.subjects = bench::Subjects { subject, multi };
        self
    }
}

fn existing(stream: Option<String>, subject: Option<String>) -> Option<Existing> {
    stream.map(|stream| Existing { stream, subject })
}

/// `bench js`: to a stream the run creates, or to an existing one.
fn js_workload(
    clients: usize,
    stream: StreamOpts,
    publish: PublishMode,
    batch: usize,
    target: Option<Existing>,
    consumers: usize,
) -> Result<BenchWorkload, Failure> {
    Ok(match target {
        Some(target) if consumers > 0 => {
            return Err(bad_input(anyhow::anyhow!(
                "--consumers {consumers} with --stream {}: readers run on the stream the run creates (each \
                 reads it from its first message); drop --stream, or run `bench consumer fetch --stream {}` \
                 beside the publishers",
                target.stream,
                target.stream
            )))
        }
        Some(target) => BenchWorkload::JsExisting {
            pubs: clients,
            publish,
            window: batch,
            target,
        },
        None => BenchWorkload::Js {
            pubs: clients,
            replicas: stream.replicas,
            storage: stream.storage,
            publish,
            window: batch,
            consumers,
        },
    })
}

/// `bench kv put|get`: `--publish` is a put's (a get waits for its value).
fn kv_workload(
    op: KvOp,
    clients: usize,
    publish: PublishMode,
    batch: Option<usize>,
    stream: StreamOpts,
) -> Result<BenchWorkload, Failure> {
    let (replicas, storage) = (stream.replicas, stream.storage);
    let name = |m: PublishMode| clap::ValueEnum::to_possible_value(&m).map_or("?".into(), |v| v.get_name().to_string());
    if let (Some(b), false) = (batch, op == KvOp::Put && publish == PublishMode::Async) {
        return Err(bad_input(anyhow::anyhow!(
            "--batch {b}: only asynchronous puts keep puts in flight; use `bench kv put --publish async --batch {b}`, or drop --batch"
        )));
    }
    Ok(match op {
        KvOp::Put => BenchWorkload::Kv {
            clients,
            replicas,
            storage,
            publish,
            window: batch.unwrap_or(500),
        },
        KvOp::Get if publish != PublishMode::Sync => {
            return Err(bad_input(anyhow::anyhow!(
                "--publish {}: a KV get waits for its value; --publish applies to `bench kv put`",
                name(publish)
            )))
        }
        KvOp::Get => BenchWorkload::KvGet {
            clients,
            replicas,
            storage,
        },
    })
}

/// The options a workload does not take, at their defaults.
fn no_core() -> CoreOpts {
    CoreOpts {
        monitor: vec![],
        sub_sleep: None,
        sub_buffer: None,
    }
}

fn no_rate() -> RateOpts {
    RateOpts {
        rate: None,
        backlog_cutoff: Duration::from_secs(1),
    }
}

fn auto() -> ClientOpt {
    ClientOpt {
        client: ClientChoice::Auto,
    }
}

/// `bench consumer MODE [--push] [--client C]`: the consumer to read with, or what is wrong with the
/// combination.
fn consumer_mode(mode: ConsumeMode, push: bool, client: ClientChoice) -> Result<ConsumeMode, Failure> {
    let mode = match (mode, push) {
        (ConsumeMode::Ordered, true) => ConsumeMode::OrderedPush,
        (m, true) => {
            return Err(bad_input(anyhow::anyhow!(
                "--push: only the ordered consumer has a push mode here (`bench consumer ordered --push`); \
                 {} reads a pull consumer",
                m.as_str()
            )))
        }
        (m, false) => m,
    };
    if client == ClientChoice::Raw && mode != ConsumeMode::OrderedPush {
        return Err(bad_input(anyhow::anyhow!(
            "--client raw: only `bench consumer ordered --push` has a raw protocol path; {} reads through \
             async-nats (drop --client, or add --push to an ordered run)",
            mode.as_str()
        )));
    }
    Ok(mode)
}

/// Flags → what to run.
fn parse(cmd: BenchCmd) -> Result<Parsed, Failure> {
    Ok(match cmd {
        BenchCmd::Core {
            clients,
            subs,
            multi,
            count,
            core,
            rate,
            client,
            common,
        } => Parsed::new(
            BenchWorkload::Core { pubs: clients, subs },
            count.msgs,
            rate,
            core,
            client,
            common,
        )
        .on(None, multi.max()),
        BenchCmd::Pub {
            subject,
            clients,
            multi,
            count,
            rate,
            client,
            common,
        } => Parsed::new(
            BenchWorkload::Core { pubs: clients, subs: 0 },
            count.msgs,
            rate,
            no_core(),
            client,
            common,
        )
        .on(Some(subject), multi.max()),
        BenchCmd::Sub {
            subject,
            clients,
            multisubject,
            count,
            core,
            client,
            common,
        } => Parsed::new(
            BenchWorkload::Core { pubs: 0, subs: clients },
            count.msgs,
            no_rate(),
            core,
            client,
            common,
        )
        // A subscriber only listens: any maximum gives the same SUBJECT.* subscription.
        .on(Some(subject), multisubject.then_some(0)),
        BenchCmd::Js {
            form: None,
            publish,
            args,
        } => js_parsed(publish, args, None)?,
        BenchCmd::Js { form: Some(form), .. } => js_form_parsed(form)?,
        BenchCmd::Consumer { mode, args } => consumer_parsed(mode, args)?,
        BenchCmd::Kv {
            op,
            clients,
            publish,
            batch,
            stream,
            count,
            rate,
            common,
        } => Parsed::new(
            kv_workload(op, clients, publish, batch, stream)?,
            count.msgs,
            rate,
            no_core(),
            auto(),
            common,
        ),
        BenchCmd::Obj {
            op,
            clients,
            objects,
            stream,
            common,
        } => Parsed::new(
            BenchWorkload::Obj {
                op,
                clients,
                replicas: stream.replicas,
                storage: stream.storage,
            },
            objects,
            no_rate(),
            no_core(),
            auto(),
            common,
        ),
        BenchCmd::Ping { count, client, common } => {
            Parsed::new(BenchWorkload::Ping, count.msgs, no_rate(), no_core(), client, common)
        }
        BenchCmd::Flood {
            clients,
            count,
            core,
            client,
            common,
        } => Parsed::new(
            BenchWorkload::Flood { pubs: clients },
            count.msgs,
            no_rate(),
            core,
            client,
            common,
        ),
    })
}

/// natscli's `nats bench js …` forms → what to run.
fn js_form_parsed(form: JsForm) -> Result<Parsed, Failure> {
    Ok(match form {
        JsForm::Pub { mode, subject, args } => js_parsed(natscli_publish(mode)?, args, subject)?,
        JsForm::Ordered(a) => consumer_parsed(ConsumeMode::Ordered, a)?,
        JsForm::Consume(a) => consumer_parsed(ConsumeMode::Consume, a)?,
        JsForm::Fetch(a) => consumer_parsed(ConsumeMode::Fetch, a)?,
        JsForm::Get {
            mode: GetMode::Batch, ..
        } => {
            return Err(bad_input(anyhow::anyhow!(
                "`bench js get batch`: natsplan has no batched direct get yet; `bench js get sync` times \
                 one direct get at a time per client (--clients N for more in parallel)"
            )))
        }
        JsForm::Get {
            mode: GetMode::Sync,
            clients,
            stream,
            count,
            common,
        } => Parsed::new(
            BenchWorkload::JsGet {
                clients,
                replicas: stream.replicas,
                storage: stream.storage,
            },
            count.msgs,
            no_rate(),
            no_core(),
            auto(),
            common,
        ),
    })
}

/// natscli's publish modes: sync and async are natsplan's; its atomic and fast batch publishers are not
/// yet (a clear error, not a different measurement under the same name).
fn natscli_publish(mode: NatsPubMode) -> Result<PublishMode, Failure> {
    match mode {
        NatsPubMode::Sync => Ok(PublishMode::Sync),
        NatsPubMode::Async => Ok(PublishMode::Async),
        NatsPubMode::Batch => Ok(PublishMode::Atomic),
        NatsPubMode::Fast => Err(bad_input(anyhow::anyhow!(
            "`bench js pub fast`: natsplan has no fast batch publisher yet (nats-server 2.14's flow-controlled \
             batches); `bench js pub async SUBJECT --batch N` keeps N publishes in flight per client, `bench js \
             pub atomic SUBJECT --batch N` commits atomic batches of N"
        ))),
    }
}

/// `bench js` and `bench js pub MODE [SUBJECT]`: SUBJECT names the subject of the stream the run creates,
/// or with --stream the subject to publish to on that existing stream (as --subject does).
fn js_parsed(publish: PublishMode, a: JsArgs, positional: Option<String>) -> Result<Parsed, Failure> {
    let (subject, created_on) = match (positional, a.subject, &a.existing_stream) {
        (Some(p), Some(f), _) => {
            return Err(bad_input(anyhow::anyhow!(
                "SUBJECT {p} and --subject {f}: give the subject once (the positional SUBJECT is natscli's form)"
            )))
        }
        (Some(p), None, Some(_)) => (Some(p), None),
        (Some(p), None, None) => (None, Some(p)),
        (None, f, _) => (f, None),
    };
    let w = js_workload(
        a.clients,
        a.stream,
        publish,
        a.batch,
        existing(a.existing_stream, subject),
        a.consumers,
    )?;
    Ok(Parsed::new(w, a.count.msgs, a.rate, no_core(), a.client, a.common).on(created_on, a.multi.max()))
}

/// `bench consumer MODE` and natscli's `bench js ordered|consume|fetch`.
fn consumer_parsed(mode: ConsumeMode, a: ConsumerArgs) -> Result<Parsed, Failure> {
    let w = BenchWorkload::Consume {
        mode: consumer_mode(mode, a.push, a.client)?,
        clients: a.clients,
        batch: a.batch,
        replicas: a.stream.replicas,
        storage: a.stream.storage,
        target: existing(a.existing_stream, a.subject),
    };
    let core = CoreOpts {
        sub_sleep: a.sleep,
        ..no_core()
    };
    let mut p = Parsed::new(
        w,
        a.count.msgs,
        no_rate(),
        core,
        ClientOpt { client: a.client },
        a.common,
    );
    p.consumer_leader = a.consumer_leader;
    Ok(p)
}

/// `--leader` where it means something: runs that write to a stream (js, kv, obj), in one process.
fn leader_placement(
    w: &bench::BenchWorkload,
    leader: Option<bench::LeaderPlacement>,
    agents: bool,
) -> Result<bench::LeaderPlacement, Failure> {
    use bench::{BenchWorkload, LeaderPlacement};
    let Some(l) = leader.filter(|&l| l != LeaderPlacement::Any) else {
        return Ok(LeaderPlacement::Any);
    };
    if !matches!(
        w,
        BenchWorkload::Js { .. }
            | BenchWorkload::JsExisting { .. }
            | BenchWorkload::Kv { .. }
            | BenchWorkload::KvGet { .. }
            | BenchWorkload::Obj { .. }
    ) {
        let hint = match w {
            BenchWorkload::Consume { .. } => "; to place each reader by its consumer's leader, use --consumer-leader",
            _ => "",
        };
        return Err(bad_input(anyhow::anyhow!(
            "--leader {}: only js, kv and obj runs write to a stream leader; leave --leader out for `{}`{hint}",
            l.as_str(),
            w.name()
        )));
    }
    if agents {
        return Err(bad_input(anyhow::anyhow!(
            "--leader {} with --agents: agents connect by worker index; run without --agents, or leave --leader out",
            l.as_str()
        )));
    }
    Ok(l)
}

pub fn run(g: &Global, a: BenchArgs) -> Result<Outcome, Failure> {
    let format = super::format(g);
    super::refuse_unless::<bench::result::BenchResult>(format)?;
    let p = parse(*a.what)?;
    let common = p.common;
    let (conn, lab_monitors) = super::connect_to(&common.conn, &p.core.monitor, common.lab.as_deref())?;
    // The lab's monitors serve the runs that read /varz (core and flood: slow consumers).
    let monitor = match p.workload {
        BenchWorkload::Core { .. } | BenchWorkload::Flood { .. } => lab_monitors,
        _ => p.core.monitor.clone(),
    };
    let leader = leader_placement(&p.workload, common.leader, common.agents.is_some())?;
    let consumer_leader = p.consumer_leader.unwrap_or_default();
    if consumer_leader != bench::LeaderPlacement::Any && common.agents.is_some() {
        return Err(bad_input(anyhow::anyhow!(
            "--consumer-leader {} with --agents: agents connect by worker index; run without --agents, or leave \
             --consumer-leader out",
            consumer_leader.as_str()
        )));
    }
    let spec = BenchSpec {
        workload: p.workload,
        msgs: p.msgs,
        size: common.size,
        rate_per_s: p.rate,
        backlog_cutoff: p.backlog_cutoff,
        timeout: common.timeout,
        monitor,
        keep: common.keep,
        sub_sleep: p.core.sub_sleep,
        client: p.client,
        sub_buffer: p.core.sub_buffer,
        progress: !common.no_progress && std::io::stderr().is_terminal(),
        leader,
        consumer_leader,
        subjects: p.subjects,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(cannot_run)?;
    if let Some(n) = common.agents {
        let out = run_on_agents(
            &rt,
            &conn,
            &spec,
            n,
            common.agents_timeout,
            format,
            common.csv.as_deref(),
        );
        rt.shutdown_timeout(Duration::from_millis(100));
        return out;
    }
    let cancel = bench::Cancel::new();
    let result = rt.block_on(async {
        // SIGINT/SIGTERM stop the load; the run then reports what it measured and removes its assets.
        let _signals = cancel.trip_on_signals().map_err(cannot_run)?;
        bench::run_with(&conn, &spec, &cancel).await
    })?;
    // Dropping the runtime would wait for background tasks of the clients; they hold nothing we need.
    rt.shutdown_timeout(Duration::from_millis(100));
    if let Some(path) = &common.csv {
        super::save_as("--csv", path, &crate::report::bench::CsvFile(&result), Format::Csv)?;
    }
    super::print(g, &result)?;
    Ok(completion_outcome(&result.completion))
}

/// A run that did not do all it was asked is a failed check (exit 1); one a signal stopped exits 130.
fn completion_outcome(c: &bench::result::Completion) -> Outcome {
    match c.shortfall() {
        None => Outcome::Ok,
        Some(why) if c.interrupted => Outcome::Interrupted(why),
        Some(why) => Outcome::CheckFailed(format!("the run is {why}")),
    }
}

/// `--agents N`: discover, run the spec spread over the agents, print the merged result and each agent's
/// part. Exit 1 when the run is incomplete.
fn run_on_agents(
    rt: &tokio::runtime::Runtime,
    conn: &ConnSpec,
    spec: &BenchSpec,
    n: usize,
    timeout: Duration,
    format: Format,
    csv: Option<&std::path::Path>,
) -> Result<Outcome, Failure> {
    use crate::agent::{report, AgentsOptions, Coordinator};
    bench::check(spec)?;
    if spec.subjects != bench::Subjects::default() {
        return Err(bad_input(anyhow::anyhow!(
            "--agents with a SUBJECT or --multisubject: agents run on the run's own subjects; drop --agents, \
             or the SUBJECT and --multisubject"
        )));
    }
    if matches!(
        spec.workload,
        BenchWorkload::Consume { .. }
            | BenchWorkload::KvGet { .. }
            | BenchWorkload::JsGet { .. }
            | BenchWorkload::JsExisting { .. }
    ) {
        return Err(bad_input(anyhow::anyhow!(
            "--agents runs publishers, KV puts and object operations; consumer, KV get, stream get and --stream runs \
             run here only (drop --agents)"
        )));
    }
    if let BenchWorkload::Js { consumers: n @ 1.., .. } = spec.workload {
        return Err(bad_input(anyhow::anyhow!(
            "--consumers {n} with --agents: the readers run here only (each reads every message of the whole run); \
             drop --agents or --consumers"
        )));
    }
    let mut opts = AgentsOptions::new(n);
    opts.discover_timeout = timeout;
    let cancel = bench::Cancel::new();
    let out = rt.block_on(async {
        // SIGINT/SIGTERM: the agents abort the row, its assets are removed, exit 130.
        let _signals = cancel.trip_on_signals().map_err(|e| Failure::CannotRun(e.into()))?;
        let mut c = Coordinator::connect(conn, opts).await?;
        c.set_cancel(cancel.clone());
        for l in report::summary_lines(&c.summary) {
            eprintln!("{l}");
        }
        let d = c.run(spec).await?;
        Ok::<_, Failure>((c.summary.clone(), d))
    });
    let (summary, d) = match out {
        Err(e) if cancel.is_cancelled() => return Ok(Outcome::Interrupted(format!("bench --agents: {e}"))),
        other => other?,
    };
    if let Some(path) = csv {
        super::save_as("--csv", path, &crate::report::bench::CsvFile(&d.result), Format::Csv)?;
    }
    let shown = crate::report::bench::OnAgents {
        run: &d,
        summary: &summary,
    };
    super::print_as(&shown, format, 120)?;
    if !d.agents.complete {
        let lost: Vec<String> = d
            .agents
            .agents
            .iter()
            .filter(|a| a.status != crate::agent::ShareStatus::Completed)
            .map(|a| a.name.clone())
            .collect();
        return Ok(Outcome::CheckFailed(format!(
            "the run is incomplete: agent(s) {} did not finish their share",
            lost.join(", ")
        )));
    }
    Ok(completion_outcome(&d.result.completion))
}
