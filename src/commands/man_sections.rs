//! The man page sections clap cannot derive from the flags: EXAMPLES (per command), EXIT STATUS (the
//! codes `error.rs` maps outcomes to) and ENVIRONMENT (what natsplan reads, with the nats CLI's variables
//! for the commands that connect), rendered as roff around clap_mangen's own sections.

use std::io::Write;

/// Examples per page, keyed by the page's name (`natsplan`, `natsplan-bench`, `natsplan-lab-up`...).
fn examples(page: &str) -> &'static [(&'static str, &'static str)] {
    // Subcommands share their parent's examples (bench core, lab status...).
    let key = ["natsplan-bench", "natsplan-lab"]
        .into_iter()
        .find(|p| page.starts_with(p))
        .unwrap_or(page);
    EXAMPLES.iter().find(|(p, _)| *p == key).map_or(&[], |(_, e)| e)
}

/// The examples of each page (subcommands share their parent's).
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    ("natsplan", &[
        ("natsplan design site.yaml", "Rank the layouts for a site."),
        (
            "natsplan whatif site.yaml --layout ID --fail rack:A",
            "What one layout survives when rack A fails.",
        ),
        (
            "natsplan lab up site.yaml --layout ID --streams",
            "Run the layout's servers on loopback with its streams.",
        ),
        (
            "natsplan verify --lab natsplan-lab --site site.yaml --layout ID",
            "Benchmark the lab and check it against the plan.",
        ),
        (
            "natsplan man --out /usr/local/share/man/man1",
            "Install every man page.",
        ),
    ]),
    ("natsplan-design", &[
        ("natsplan design site.yaml", "Rank every layout; the best first."),
        (
            "natsplan design site.yaml --format json > plan.json",
            "The plan as JSON.",
        ),
        (
            "natsplan design site.yaml --layout ID --save plan.json",
            "Save a plan with its chosen layout for lab, emit and verify (--plan plan.json).",
        ),
    ]),
    ("natsplan-whatif", &[
        ("natsplan whatif site.yaml --layout ID --fail rack:A", "One scenario."),
        (
            "natsplan whatif site.yaml --layout ID --all 2",
            "Every combination of up to two failures.",
        ),
    ]),
    ("natsplan-simulate", &[(
        "natsplan simulate site.yaml --layout ID",
        "Years of failures and repairs.",
    )]),
    ("natsplan-emit", &[(
        "natsplan emit site.yaml --layout ID --out conf/",
        "nats-server.conf per server and the stream definitions.",
    )]),
    ("natsplan-lab", &[
        (
            "natsplan lab up --nodes 3",
            "Three plain servers on loopback; prints their client and monitoring URLs.",
        ),
        (
            "natsplan lab up site.yaml --layout ID --streams",
            "A planned layout with its streams.",
        ),
        ("natsplan lab down", "Stop the lab and remove its folder."),
    ]),
    ("natsplan-predict", &[(
        "natsplan predict --servers 3 --replicas 3 --sync always --size 8KiB --workers 4 --kind js",
        "One shape's predicted rate, with its band and bottleneck.",
    )]),
    ("natsplan-bench", &[
        (
            "natsplan bench js --msgs 100000 --size 1KiB",
            "JetStream publishes against $NATS_URL.",
        ),
        (
            "natsplan bench js -s nats://a:4222,nats://b:4222 --creds user.creds",
            "Spread over two servers with a creds file.",
        ),
        (
            "natsplan bench core --context prod",
            "Settings from the nats CLI context `prod`.",
        ),
        (
            "natsplan bench kv --tlsca ca.pem --tlsfirst --js-domain hub",
            "TLS before INFO and the hub's JetStream domain.",
        ),
    ]),
    ("natsplan-verify", &[
        (
            "natsplan verify --lab natsplan-lab --dry-run",
            "The rows that would run against a lab.",
        ),
        (
            "natsplan verify --server nats://n1:4222 --monitor http://n1:8222 --site site.yaml --layout ID",
            "A real cluster against its plan: ladder and drift.",
        ),
        ("natsplan verify --faults", "Inject failures into a lab of its own."),
    ]),
    ("natsplan-check", &[
        (
            "natsplan check --lab natsplan-lab",
            "A lab against the plan it was started from: every check, worst first.",
        ),
        (
            "natsplan --format nagios check --plan plan.json --monitor http://n1:8222,http://n2:8222,http://n3:8222",
            "A Nagios plugin: one status line with performance data; exit 0 ok, 1 warning, 2 critical, 3 unknown.",
        ),
    ]),
    ("natsplan-calibrate", &[(
        "natsplan calibrate --server nats://n1:4222 --out my-cluster.yaml",
        "Measure a cluster; predict with --calibration my-cluster.yaml.",
    )]),
    ("natsplan-agent", &[(
        "natsplan agent --server nats://n1:4222 --name host2",
        "A load generator that `bench --agents` and `verify --agents` drive.",
    )]),
    ("natsplan-completions", &[(
        "natsplan completions bash > /etc/bash_completion.d/natsplan",
        "bash completions.",
    )]),
    ("natsplan-man", &[
        ("natsplan man | man -l -", "Read this page."),
        (
            "natsplan man --out man1/",
            "Write natsplan.1 and natsplan-COMMAND.1 pages.",
        ),
    ]),
];

/// Pages of commands that connect to NATS (their ENVIRONMENT lists the nats CLI's variables).
fn connects(page: &str) -> bool {
    page == "natsplan"
        || ["bench", "verify", "calibrate", "agent", "check"]
            .iter()
            .any(|c| page == format!("natsplan-{c}") || page.starts_with(&format!("natsplan-{c}-")))
}

const EXIT: &[(&str, &str)] = &[
    ("0", "Success."),
    ("1", "A check failed: a verify row outside its band, drift against the plan, a --fail-on condition met, an incomplete agent run."),
    ("2", "Bad input or usage: a site file, a flag, a layout id, a nats CLI context."),
    ("3", "Could not run: the cluster unreachable or refusing the credentials, nats-server missing."),
    (
        "check",
        "Exits as a Nagios plugin instead: 0 ok, 1 warning, 2 critical, 3 unknown; bad input, bad usage and an unreachable cluster are 3, never 2 (docs/check.md).",
    ),
    ("130, 143, 129", "Interrupted by SIGINT, SIGTERM or SIGHUP (128 + the signal, as a shell reports it); what was measured was reported."),
];

const CONN_ENV: &[(&str, &str)] = &[
    ("NATS_URL", "Server URLs, comma separated, when --server is not given; beats a context's url (as in the nats CLI)."),
    ("NATS_CONTEXT", "The nats CLI context to read when --context is not given."),
    ("NATS_USER, NATS_PASSWORD", "--user and --password. A user without a password is sent as a token."),
    ("NATS_TOKEN", "--token."),
    ("NATS_CREDS, NATS_NKEY", "--creds and --nkey."),
    ("NATS_CERT, NATS_KEY, NATS_CA", "--tlscert, --tlskey and --tlsca."),
    ("NATS_TIMEOUT", "How long connecting may take (5s by default)."),
    (
        "XDG_CONFIG_HOME, HOME",
        "Where nats CLI contexts are read: $XDG_CONFIG_HOME/nats/context/NAME.json, else ~/.config/nats/...; the selected context is named in nats/context.txt there.",
    ),
];

const OTHER_ENV: &[(&str, &str)] = &[
    (
        "NATS_SERVER_BIN",
        "The nats-server binary for lab and verify --faults (else .tools/bin/nats-server, then PATH).",
    ),
    ("COLUMNS", "Table width on a terminal (--width overrides)."),
];

/// Text safe in roff: backslashes and hyphens escaped, a leading `.` or `'` neutralised.
fn esc(s: &str) -> String {
    let t = s.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

fn tagged(out: &mut String, items: &[(&str, &str)], bold: bool) {
    for (tag, text) in items {
        let tag = if bold {
            format!("\\fB{}\\fR", esc(tag))
        } else {
            esc(tag)
        };
        out.push_str(&format!(".TP\n{tag}\n{}\n", esc(text)));
    }
}

/// The EXAMPLES, EXIT STATUS and ENVIRONMENT sections of `page` (roff).
pub fn extra_sections(page: &str) -> String {
    let mut out = String::new();
    let ex = examples(page);
    if !ex.is_empty() {
        out.push_str(".SH EXAMPLES\n");
        tagged(&mut out, ex, true);
    }
    out.push_str(".SH \"EXIT STATUS\"\n");
    tagged(&mut out, EXIT, false);
    out.push_str(".SH ENVIRONMENT\n");
    if connects(page) {
        tagged(&mut out, CONN_ENV, true);
    }
    tagged(&mut out, OTHER_ENV, true);
    out.push_str(
        ".SH \"SEE ALSO\"\nnats(1), nats\\-server(8); docs/connections.md and docs/verify.md in natsplan's source.\n",
    );
    out
}

/// One page: clap_mangen's sections, then ours, then the version.
pub fn render(cmd: &clap::Command, w: &mut dyn Write) -> std::io::Result<()> {
    let page = cmd.get_display_name().unwrap_or_else(|| cmd.get_name()).to_string();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(w)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(w)?;
    }
    w.write_all(extra_sections(&page).as_bytes())?;
    if cmd.get_version().is_some() {
        man.render_version_section(w)?;
    }
    Ok(())
}

/// Every visible page under `cmd` (built, so subcommands carry `natsplan-...` names): (file name, roff).
pub fn all_pages(cmd: clap::Command) -> Vec<(String, Vec<u8>)> {
    fn walk(cmd: &clap::Command, out: &mut Vec<(String, Vec<u8>)>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            walk(sub, out);
        }
        let mut bytes = Vec::new();
        render(cmd, &mut bytes).expect("rendering into memory cannot fail");
        let name = cmd.get_display_name().unwrap_or_else(|| cmd.get_name());
        out.push((format!("{name}.1"), bytes));
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, &mut out);
    out
}
