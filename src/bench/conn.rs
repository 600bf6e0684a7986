//! How bench connects: the NATS ecosystem's conventions (`--server` comma list or `NATS_URL`, `--creds`,
//! `--nkey`, `--user/--password`, `--tls-ca/--tls-cert/--tls-key`, `--context NAME` from the `nats` CLI's
//! context files). Workers spread their connections round-robin over the listed servers. Secrets stay in
//! this module: `describe()` and every error show servers with credentials stripped.

use anyhow::{anyhow, Context as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Connection flags shared by bench subcommands (and verify later).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConnArgs {
    /// NATS server URLs, comma separated; workers spread over them (default: $NATS_URL, the context's,
    /// else nats://127.0.0.1:4222).
    #[arg(long, short = 's', value_delimiter = ',', value_name = "URLS")]
    pub server: Vec<String>,
    /// User credentials file (JWT + seed).
    #[arg(long, value_name = "FILE")]
    pub creds: Option<PathBuf>,
    /// NKey seed file.
    #[arg(long, value_name = "FILE")]
    pub nkey: Option<PathBuf>,
    /// User name.
    #[arg(long)]
    pub user: Option<String>,
    /// Password (prefer a context file or $NATS_PASSWORD; it is never printed).
    #[arg(long, env = "NATS_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// CA certificate to verify the servers with.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (with --tls-key).
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// Client key (with --tls-cert).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// Read connection settings from the nats CLI context NAME (~/.config/nats/context/NAME.json);
    /// flags given here override it.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

/// Resolved connection settings.
#[derive(Clone, Default)]
pub struct ConnSpec {
    pub servers: Vec<String>,
    creds: Option<PathBuf>,
    nkey_seed: Option<String>,
    user: Option<String>,
    password: Option<String>,
    token: Option<String>,
    tls_ca: Option<PathBuf>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
}

// Hand-written so that a `{:?}` anywhere never shows a secret.
impl std::fmt::Debug for ConnSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The subset of a nats CLI context file bench uses.
#[derive(Debug, Default, serde::Deserialize)]
struct ContextFile {
    #[serde(default)]
    url: String,
    #[serde(default)]
    user: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    token: String,
    #[serde(default)]
    creds: String,
    #[serde(default)]
    nkey: String,
    #[serde(default)]
    cert: String,
    #[serde(default)]
    key: String,
    #[serde(default)]
    ca: String,
}

fn context_dir() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
        return Some(PathBuf::from(x).join("nats").join("context"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config").join("nats").join("context"))
}

fn opt(s: String) -> Option<String> {
    Some(s).filter(|s| !s.is_empty())
}

fn load_context(name: &str) -> anyhow::Result<ContextFile> {
    if name.is_empty() || name.contains('/') || name.contains("..") {
        return Err(anyhow!(
            "--context {name:?}: a context name is a plain name such as `prod`"
        ));
    }
    let dir = context_dir().ok_or_else(|| anyhow!("--context {name}: neither $XDG_CONFIG_HOME nor $HOME is set"))?;
    let path = dir.join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "--context {name}: cannot read {}; create it with `nats context add`",
            path.display()
        )
    })?;
    serde_json::from_str(&text)
        .with_context(|| format!("--context {name}: {} is not a nats context file", path.display()))
}

/// Strip `user:pass@` from a URL for display.
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => (&url[..i + 3], &url[i + 3..]),
        None => ("", url),
    };
    match rest.rfind('@') {
        Some(i) => format!("{scheme}***@{}", &rest[i + 1..]),
        None => url.to_string(),
    }
}

impl ConnSpec {
    /// Flags, then the context, then `$NATS_URL`, then the default local server. Errors are bad input.
    pub fn resolve(a: &ConnArgs) -> anyhow::Result<ConnSpec> {
        let ctx = match &a.context {
            Some(name) => load_context(name)?,
            None => ContextFile::default(),
        };
        let mut servers: Vec<String> = a
            .server
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if servers.is_empty() {
            let from = opt(ctx.url.clone())
                .or_else(|| std::env::var("NATS_URL").ok())
                .unwrap_or_default();
            servers = from
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
        }
        if servers.is_empty() {
            servers.push("nats://127.0.0.1:4222".into());
        }
        for s in &servers {
            if s.contains(char::is_whitespace) {
                return Err(anyhow!(
                    "--server {:?}: a server URL has no spaces (e.g. nats://host:4222)",
                    redact_url(s)
                ));
            }
        }
        let path = |flag: &Option<PathBuf>, c: String| flag.clone().or_else(|| opt(c).map(PathBuf::from));
        let spec = ConnSpec {
            servers,
            creds: path(&a.creds, ctx.creds),
            nkey_seed: match path(&a.nkey, ctx.nkey) {
                Some(p) => Some(read_seed(&p)?),
                None => None,
            },
            user: a.user.clone().or_else(|| opt(ctx.user)),
            password: a.password.clone().or_else(|| opt(ctx.password)),
            token: opt(ctx.token),
            tls_ca: path(&a.tls_ca, ctx.ca),
            tls_cert: path(&a.tls_cert, ctx.cert),
            tls_key: path(&a.tls_key, ctx.key),
        };
        if spec.tls_cert.is_some() != spec.tls_key.is_some() {
            return Err(anyhow!("--tls-cert and --tls-key go together: give both or neither"));
        }
        if spec.password.is_some() && spec.user.is_none() {
            return Err(anyhow!("--password needs --user"));
        }
        for (flag, p) in [
            ("--creds", &spec.creds),
            ("--tls-ca", &spec.tls_ca),
            ("--tls-cert", &spec.tls_cert),
            ("--tls-key", &spec.tls_key),
        ] {
            if let Some(p) = p {
                if !p.is_file() {
                    return Err(anyhow!("{flag} {}: no such file", p.display()));
                }
            }
        }
        Ok(spec)
    }

    /// For reports and errors: servers without credentials, and which auth is in use (not its value).
    pub fn describe(&self) -> String {
        let servers: Vec<String> = self.servers.iter().map(|s| redact_url(s)).collect();
        let auth = if self.creds.is_some() {
            "creds"
        } else if self.nkey_seed.is_some() {
            "nkey"
        } else if self.user.is_some() {
            "user/password"
        } else if self.token.is_some() {
            "token"
        } else {
            "none"
        };
        format!(
            "servers={} auth={auth}{}",
            servers.join(","),
            if self.tls_ca.is_some() || self.tls_cert.is_some() {
                " tls"
            } else {
                ""
            }
        )
    }

    /// The server worker `i` uses: round-robin over the list.
    pub fn server_for(&self, i: usize) -> &str {
        &self.servers[i % self.servers.len()]
    }

    async fn options(
        &self,
        name: String,
        slow_events: Option<Arc<AtomicU64>>,
    ) -> anyhow::Result<async_nats::ConnectOptions> {
        let mut o = async_nats::ConnectOptions::new()
            .name(name)
            .connection_timeout(Duration::from_secs(5))
            // A bench run should fail fast, not reconnect forever behind the user's back.
            .max_reconnects(Some(3))
            .skip_subject_validation(true);
        if let Some(p) = &self.creds {
            o = o
                .credentials_file(p)
                .await
                .with_context(|| format!("--creds {}: cannot read", p.display()))?;
        }
        if let Some(seed) = &self.nkey_seed {
            o = o.nkey(seed.clone());
        }
        if let (Some(u), Some(p)) = (&self.user, &self.password) {
            o = o.user_and_password(u.clone(), p.clone());
        } else if let Some(u) = &self.user {
            o = o.user_and_password(u.clone(), String::new());
        }
        if let Some(t) = &self.token {
            o = o.token(t.clone());
        }
        if let Some(ca) = &self.tls_ca {
            o = o.add_root_certificates(ca.clone()).require_tls(true);
        }
        if let (Some(c), Some(k)) = (&self.tls_cert, &self.tls_key) {
            o = o.add_client_certificate(c.clone(), k.clone()).require_tls(true);
        }
        let counter = slow_events.clone();
        o = o.event_callback(move |ev| {
            let counter = counter.clone();
            async move {
                if let (async_nats::Event::SlowConsumer(_), Some(c)) = (ev, counter) {
                    c.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Ok(o)
    }

    /// The raw fast path's target for worker `i`: plain TCP with user/password or token only (no TLS, creds
    /// or nkey), else None and the run uses async-nats.
    pub fn raw_target(&self, i: usize) -> Option<crate::bench::raw::RawTarget> {
        if self.tls_ca.is_some() || self.tls_cert.is_some() || self.creds.is_some() || self.nkey_seed.is_some() {
            return None;
        }
        let url = self.server_for(i);
        let rest = match url.split_once("://") {
            Some(("nats", r)) => r,
            Some(_) => return None,
            None => url,
        };
        let rest = rest.trim_end_matches('/');
        let (userinfo, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, rest),
        };
        let addr = if hostport.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
            hostport.to_string()
        } else {
            format!("{hostport}:4222")
        };
        let (mut user, mut pass, mut token) = (self.user.clone(), self.password.clone(), self.token.clone());
        match userinfo.map(|u| u.split_once(':')) {
            Some(Some((u, p))) => {
                user = Some(u.to_string());
                pass = Some(p.to_string());
            }
            Some(None) => token = userinfo.map(str::to_string),
            None => {}
        }
        Some(crate::bench::raw::RawTarget {
            addr,
            display: redact_url(url),
            user,
            pass,
            token,
        })
    }

    /// Connect worker `i` (to `server_for(i)`), counting client-side slow-consumer events.
    pub async fn connect(
        &self,
        i: usize,
        role: &str,
        slow_events: Option<Arc<AtomicU64>>,
    ) -> Result<async_nats::Client, ConnectFailure> {
        let url = self.server_for(i).to_string();
        let o = self
            .options(format!("natsplan-bench-{role}{i}"), slow_events)
            .await
            .map_err(ConnectFailure::Setup)?;
        o.connect(url.as_str())
            .await
            .map_err(|e| ConnectFailure::Unreachable(anyhow!("cannot connect to {}: {e}", redact_url(&url))))
    }

    /// The control connection of an agent or coordinator (`natsplan agent`, `--agents`): same credentials
    /// and TLS as the data connections, every listed server to fail over to, request inboxes under
    /// `inbox_prefix` (so control traffic stays on its own subjects), and for a long-running agent
    /// (`reconnect_forever`) no limit on reconnecting.
    pub async fn connect_control(
        &self,
        name: &str,
        inbox_prefix: &str,
        reconnect_forever: bool,
    ) -> Result<async_nats::Client, ConnectFailure> {
        let mut o = self
            .options(name.to_string(), None)
            .await
            .map_err(ConnectFailure::Setup)?
            .custom_inbox_prefix(inbox_prefix);
        if reconnect_forever {
            o = o.max_reconnects(None);
        }
        o.connect(self.servers.clone())
            .await
            .map_err(|e| ConnectFailure::Unreachable(anyhow!("cannot connect to {}: {e}", self.describe())))
    }

    /// Same, tuned for a subscriber expecting `capacity` buffered messages.
    pub async fn connect_sub(
        &self,
        i: usize,
        capacity: usize,
        slow_events: Arc<AtomicU64>,
    ) -> Result<async_nats::Client, ConnectFailure> {
        let url = self.server_for(i).to_string();
        let o = self
            .options(format!("natsplan-bench-sub{i}"), Some(slow_events))
            .await
            .map_err(ConnectFailure::Setup)?;
        o.subscription_capacity(capacity)
            .connect(url.as_str())
            .await
            .map_err(|e| ConnectFailure::Unreachable(anyhow!("cannot connect to {}: {e}", redact_url(&url))))
    }

    /// Connect once (to the first server, within 5 s) to learn which server answers: its name, its
    /// version and whether JetStream is enabled. What verify and calibrate detect before anything else.
    pub async fn server_facts(&self, role: &str) -> anyhow::Result<(String, String, bool)> {
        let c = tokio::time::timeout(Duration::from_secs(5), self.connect(0, role, None))
            .await
            .map_err(|_| anyhow!("cannot connect to {}: timed out after 5 s", self.describe()))?
            .map_err(|e| match e {
                ConnectFailure::Setup(e) | ConnectFailure::Unreachable(e) => e,
            })?;
        let info = c.server_info();
        Ok((info.server_name.clone(), info.version.clone(), info.jetstream))
    }
}

/// Why a connection could not be made: the setup was wrong (bad input) or the server is not there.
#[derive(Debug)]
pub enum ConnectFailure {
    Setup(anyhow::Error),
    Unreachable(anyhow::Error),
}

fn read_seed(p: &Path) -> anyhow::Result<String> {
    let text =
        std::fs::read_to_string(p).with_context(|| format!("--nkey {}: cannot read the seed file", p.display()))?;
    let seed = text.lines().map(str::trim).find(|l| l.starts_with('S') && l.len() > 50);
    seed.map(str::to_string).ok_or_else(|| {
        anyhow!(
            "--nkey {}: no nkey seed (a line starting with `S`) in the file",
            p.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_credentials_for_display() {
        assert_eq!(
            redact_url("nats://bob:s3cret@10.0.0.1:4222"),
            "nats://***@10.0.0.1:4222"
        );
        assert_eq!(redact_url("nats://127.0.0.1:4222"), "nats://127.0.0.1:4222");
        assert_eq!(redact_url("tok@host:4222"), "***@host:4222");
    }

    #[test]
    fn describe_never_shows_the_password() {
        let a = ConnArgs {
            server: vec!["nats://u:hunter2@127.0.0.1:4222".into(), "nats://127.0.0.1:4223".into()],
            user: Some("u".into()),
            password: Some("hunter2".into()),
            ..Default::default()
        };
        let s = ConnSpec::resolve(&a).unwrap();
        let d = format!("{} {:?}", s.describe(), s);
        assert!(!d.contains("hunter2"), "{d}");
        assert_eq!(s.server_for(0), "nats://u:hunter2@127.0.0.1:4222");
        assert_eq!(s.server_for(3), "nats://127.0.0.1:4223");
    }

    #[test]
    fn raw_targets_take_credentials_from_the_url_and_skip_tls() {
        let s = ConnSpec::resolve(&ConnArgs {
            server: vec!["nats://u:p@127.0.0.1:5000".into(), "127.0.0.1".into()],
            ..Default::default()
        })
        .unwrap();
        let t = s.raw_target(0).unwrap();
        assert_eq!(
            (t.addr.as_str(), t.user.as_deref(), t.pass.as_deref()),
            ("127.0.0.1:5000", Some("u"), Some("p"))
        );
        assert_eq!(s.raw_target(1).unwrap().addr, "127.0.0.1:4222");
        let s = ConnSpec::resolve(&ConnArgs {
            server: vec!["tls://127.0.0.1:5000".into()],
            ..Default::default()
        })
        .unwrap();
        assert!(s.raw_target(0).is_none());
    }

    #[test]
    fn half_a_tls_pair_is_bad_input() {
        let a = ConnArgs {
            tls_cert: Some("/etc/hostname".into()),
            ..Default::default()
        };
        let e = ConnSpec::resolve(&a).unwrap_err().to_string();
        assert!(e.contains("--tls-cert and --tls-key"), "{e}");
    }

    #[test]
    fn context_file_supplies_url_and_user() {
        let dir = tempfile::tempdir().unwrap();
        let cdir = dir.path().join("nats").join("context");
        std::fs::create_dir_all(&cdir).unwrap();
        std::fs::write(
            cdir.join("lab.json"),
            r#"{"url":"nats://127.0.0.1:5000,nats://127.0.0.1:5001","user":"a","password":"pw"}"#,
        )
        .unwrap();
        let ctx: ContextFile = serde_json::from_str(&std::fs::read_to_string(cdir.join("lab.json")).unwrap()).unwrap();
        assert_eq!(ctx.url, "nats://127.0.0.1:5000,nats://127.0.0.1:5001");
        assert_eq!(ctx.user, "a");
        assert!(load_context("../x").is_err());
    }
}
