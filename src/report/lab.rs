//! Renderers of `lab up`, `lab status` and `lab down` reports (JSON is the value itself).

use super::render::{json_to, Format, Render};
use crate::lab::status::{StatusReport, UpReport};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use std::path::{Path, PathBuf};

impl Render for UpReport {
    const COMMAND: &'static str = "lab up";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];

    fn write_to(&self, f: Format, _width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match f {
            Format::Json => json_to(self, w),
            _ => w.write_all(&up_table(self)),
        }
    }
}

impl Render for StatusReport {
    const COMMAND: &'static str = "lab status";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];

    fn write_to(&self, f: Format, _width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match f {
            Format::Json => json_to(self, w),
            _ => w.write_all(&status_table(self)),
        }
    }
}

/// `lab down`'s result: the lab's folder and, when a lab was there, what stopping it did.
pub struct Down<'a> {
    pub dir: &'a Path,
    pub removed: Option<Removed>,
}

/// A lab stopped and removed: the servers that were running, and the logs kept (`--keep-logs`).
pub struct Removed {
    pub stopped: Vec<String>,
    pub keep_logs: bool,
    pub logs: Vec<PathBuf>,
}

impl Render for Down<'_> {
    const COMMAND: &'static str = "lab down";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];

    fn write_to(&self, f: Format, _width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let Some(r) = &self.removed else {
            return match f {
                Format::Json => json_to(
                    &serde_json::json!({"dir": self.dir, "stopped": [], "removed": false}),
                    w,
                ),
                _ => writeln!(w, "no lab in {} (no lab.json); nothing to stop", self.dir.display()),
            };
        };
        match f {
            Format::Json => {
                let mut v = serde_json::json!({"dir": self.dir, "stopped": r.stopped, "removed": true});
                if r.keep_logs {
                    v["logs"] = serde_json::json!(r.logs);
                }
                json_to(&v, w)
            }
            _ => writeln!(
                w,
                "stopped {} server(s) ({}) and removed the lab in {}{}",
                r.stopped.len(),
                if r.stopped.is_empty() {
                    "none were running".to_string()
                } else {
                    r.stopped.join(", ")
                },
                self.dir.display(),
                if r.logs.is_empty() {
                    String::new()
                } else {
                    format!("; kept {} log(s) in {}", r.logs.len(), self.dir.join("logs").display())
                }
            ),
        }
    }
}

/// `lab up`'s terminal report.
pub fn up_table(r: &UpReport) -> Vec<u8> {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_header(vec!["server", "pid", "client URL", "monitor URL", "tags"]);
    for s in &r.servers {
        t.add_row(vec![
            s.name.clone(),
            s.pid.to_string(),
            s.client_url.clone(),
            s.monitor_url.clone(),
            s.tags.join(" "),
        ]);
    }
    let mut out = format!(
        "lab cluster '{}' up in {:.1} s, meta leader {} (dir {})\n",
        r.cluster_name,
        r.startup_s,
        r.meta_leader.as_deref().unwrap_or("?"),
        r.dir.display()
    );
    out.push_str(&t.to_string());
    out.push_str(&format!(
        "\nsystem account user `{}`: its password is system_user.password in {}/lab.json",
        r.system_user,
        r.dir.display()
    ));
    for c in &r.streams {
        match &c.error {
            None => out.push_str(&format!("\ncreated {} (R{}) from {}", c.name, c.replicas, c.file)),
            Some(e) => out.push_str(&format!(
                "\nCOULD NOT CREATE {} (R{}) from {}: {e}",
                c.name, c.replicas, c.file
            )),
        }
    }
    for c in &r.consumers {
        match &c.error {
            None => out.push_str(&format!("\ncreated consumer {}/{} (R{})", c.stream, c.name, c.replicas)),
            Some(e) => out.push_str(&format!(
                "\nCOULD NOT CREATE consumer {}/{} (R{}): {e}",
                c.stream, c.name, c.replicas
            )),
        }
    }
    if !r.streams.is_empty() {
        out.push_str(&format!(
            "\nwhere the replicas landed: natsplan lab status --dir {}\n",
            r.dir.display()
        ));
    }
    out.push_str(&format!(
        "\nNATS_URL={}\nstop with: natsplan lab down --dir {}\n",
        r.client_urls.join(","),
        r.dir.display()
    ));
    out.into_bytes()
}

/// `lab status`'s terminal report.
pub fn status_table(r: &StatusReport) -> Vec<u8> {
    let running = r.servers.iter().filter(|s| s.running).count();
    let mut out = format!(
        "lab cluster '{}' in {}: {running} of {} servers running, meta leader {}\n",
        r.cluster_name,
        r.dir.display(),
        r.servers.len(),
        r.meta_leader.as_deref().unwrap_or("none")
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_header(vec!["server", "state", "pid", "client URL", "monitor URL", "tags"]);
    for s in &r.servers {
        let state = match (s.running, &s.error) {
            (false, _) => "stopped".to_string(),
            (true, Some(_)) => "not answering".to_string(),
            (true, None) => format!("running {}", s.version.as_deref().unwrap_or("")),
        };
        t.add_row(vec![
            s.name.clone(),
            state,
            s.pid.to_string(),
            s.client_url.clone(),
            s.monitor_url.clone(),
            s.tags.join(" "),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    if r.streams.is_empty() {
        out.push_str("no streams\n");
    } else {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED)
            .set_header(vec!["stream", "account", "replicas", "leader", "peers"]);
        for s in &r.streams {
            t.add_row(vec![
                s.name.clone(),
                s.account.clone(),
                s.replicas.to_string(),
                s.leader.clone().unwrap_or_else(|| "none".into()),
                s.peers.join(" "),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out.into_bytes()
}
