//! How natsplan connects, with the nats CLI's conventions: the same flag names (`--server`/`-s`, `--user`,
//! `--password`, `--token`, `--creds`, `--nkey`, `--tlscert`, `--tlskey`, `--tlsca`, `--tlsfirst`,
//! `--js-domain`, `--context`; the older `--tls-*` spellings stay as aliases), the same environment variables
//! and the same nats CLI context files (`context.rs`). Workers spread their connections round-robin over the
//! listed servers. Secrets stay in this module: `describe()`, `Debug` and every error show servers with
//! credentials stripped and name the kind of auth, never its value.
//!
//! Precedence, as the nats CLI has it: a flag, else its environment variable, else the context's field, else
//! the default. natscli declares each flag with its variable (`nats/main.go`: `Flag("server")...Envar
//! ("NATS_URL")`, and so on), so flag and variable arrive as one value; `cli/util.go` `loadContext` passes it
//! to the context as an option, and jsm.go's `natscontext/registry.go` `Registry.Load` applies options after
//! reading the file, each overriding only when non-empty (`natscontext/context.go`, `WithServerURL`). So
//! `$NATS_URL` beats a context's `url` (before this module followed natscli, natsplan had it the other way
//! round). Which auth is sent follows jsm.go's `Context.NATSOptions`: user/password, else creds, else nkey,
//! else user_jwt/user_seed; a token is sent besides. A `--user` (or `$NATS_USER`) without a password is sent
//! as a token (`loadContext`: `WithToken(opts.Username)`).

use super::context::{self as natsctx, EnvLookup};
use anyhow::{anyhow, Context as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Connection flags shared by every command that connects (bench, verify, calibrate, agent). `Debug` is
/// written by hand below so that no `{:?}` of a command's arguments shows the password or token.
#[derive(Clone, Default, clap::Args)]
pub struct ConnArgs {
    /// NATS server URLs, comma separated; workers spread over them [env: NATS_URL] (default: the context's,
    /// else nats://127.0.0.1:4222).
    #[arg(long, short = 's', value_delimiter = ',', value_name = "URLS")]
    pub server: Vec<String>,
    /// User name [env: NATS_USER]; without a password it is sent as a token, as the nats CLI does.
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// Password [env: NATS_PASSWORD] (prefer the variable or a context file: a flag shows in `ps`). Never
    /// printed.
    #[arg(long, value_name = "PASSWORD")]
    pub password: Option<String>,
    /// Authentication token [env: NATS_TOKEN]. Never printed.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// User credentials file (JWT and nkey seed, as `nsc` writes it) [env: NATS_CREDS].
    #[arg(long, value_name = "FILE")]
    pub creds: Option<PathBuf>,
    /// File holding the user's nkey seed (a line starting with `SU`) [env: NATS_NKEY].
    #[arg(long, value_name = "FILE")]
    pub nkey: Option<PathBuf>,
    /// Client certificate for mutual TLS, with --tlskey [env: NATS_CERT].
    #[arg(long = "tlscert", alias = "tls-cert", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// Client certificate's private key, with --tlscert [env: NATS_KEY].
    #[arg(long = "tlskey", alias = "tls-key", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// CA certificate to verify the servers with [env: NATS_CA].
    #[arg(long = "tlsca", alias = "tls-ca", value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// TLS handshake before the server's INFO (servers with `handshake_first` in their tls block).
    #[arg(long = "tlsfirst", alias = "tls-first")]
    pub tls_first: bool,
    /// JetStream domain: the JetStream API is reached at `$JS.<DOMAIN>.API` (a leaf node's or hub's domain).
    #[arg(long = "js-domain", value_name = "DOMAIN", conflicts_with = "js_api_prefix")]
    pub js_domain: Option<String>,
    /// JetStream API subject prefix (instead of `$JS.API`), for an account that imports another's JetStream.
    #[arg(long = "js-api-prefix", value_name = "PREFIX")]
    pub js_api_prefix: Option<String>,
    /// nats CLI context to read settings from: NAME (~/.config/nats/context/NAME.json, honouring
    /// $XDG_CONFIG_HOME) or a .json file [env: NATS_CONTEXT] (default: the one `nats context select` chose).
    /// Flags and variables override its fields.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Ignore nats CLI contexts, even a selected one.
    #[arg(long, conflicts_with = "context")]
    pub no_context: bool,
}

impl std::fmt::Debug for ConnArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hidden = |o: &Option<String>| o.as_ref().map(|_| "***");
        f.debug_struct("ConnArgs")
            .field("server", &self.server.iter().map(|s| redact_url(s)).collect::<Vec<_>>())
            .field("user", &self.user.as_ref().map(|_| "***"))
            .field("password", &hidden(&self.password))
            .field("token", &hidden(&self.token))
            .field("creds", &self.creds)
            .field("nkey", &self.nkey)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .field("tls_ca", &self.tls_ca)
            .field("tls_first", &self.tls_first)
            .field("js_domain", &self.js_domain)
            .field("js_api_prefix", &self.js_api_prefix)
            .field("context", &self.context)
            .field("no_context", &self.no_context)
            .finish()
    }
}

/// How a connection authenticates: at most one of these (jsm.go `Context.NATSOptions`' order), plus a
/// token besides.
#[derive(Clone, Default)]
enum Auth {
    #[default]
    None,
    UserPassword(String, String),
    Creds(PathBuf),
    NkeySeed(String),
    /// A user JWT and its seed (a context's `user_jwt`/`user_seed`), sent as a creds file would be.
    JwtSeed(String, String),
}

/// Resolved connection settings.
#[derive(Clone, Default)]
pub struct ConnSpec {
    pub servers: Vec<String>,
    auth: Auth,
    token: Option<String>,
    tls_ca: Option<PathBuf>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    tls_first: bool,
    /// `$JS.API`, `$JS.<domain>.API` or a given prefix.
    js_api_prefix: Option<String>,
    inbox_prefix: Option<String>,
    /// `$NATS_TIMEOUT` (the nats CLI's "time to wait on responses"), else 5 s: how long a connection
    /// attempt and the first contact may take.
    pub connect_timeout: Duration,
    /// The context used, for `describe()`.
    context: Option<String>,
}

// Hand-written so that a `{:?}` anywhere never shows a secret.
impl std::fmt::Debug for ConnSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Strip `user:pass@` (or `token@`) from each URL of a comma list, for display.
pub fn redact_url(url: &str) -> String {
    if url.contains(',') {
        return url.split(',').map(redact_url).collect::<Vec<_>>().join(",");
    }
    let (scheme, rest) = match url.find("://") {
        Some(i) => (&url[..i + 3], &url[i + 3..]),
        None => ("", url),
    };
    match rest.rfind('@') {
        Some(i) => format!("{scheme}***@{}", &rest[i + 1..]),
        None => url.to_string(),
    }
}

/// Credentials written in a server URL: `nats://user:password@host` or `nats://token@host`.
#[derive(Debug, PartialEq)]
enum UrlAuth {
    UserPassword(String, String),
    Token(String),
}

/// The credentials in `url`'s user info, percent-decoded as Go's net/url decodes them (nats.go sends them
/// in place of the options' user, password and token; a user without a password is a token).
fn url_auth(url: &str) -> Option<UrlAuth> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let (info, _) = authority.rsplit_once('@')?;
    Some(match info.split_once(':') {
        Some((u, p)) => UrlAuth::UserPassword(percent_decoded(u), percent_decoded(p)),
        None => UrlAuth::Token(percent_decoded(info)),
    })
}

/// `%XX` escapes decoded (others kept as written).
fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (b[i], hex) {
            (b'%', Some(x)) => {
                out.push(x);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `o` with the credentials of `url`, if it carries any: async-nats parses them and never sends them.
fn with_url_auth(o: async_nats::ConnectOptions, url: &str) -> async_nats::ConnectOptions {
    match url_auth(url) {
        Some(UrlAuth::UserPassword(u, p)) => o.user_and_password(u, p),
        Some(UrlAuth::Token(t)) => o.token(t),
        None => o,
    }
}

fn split_urls(s: &str) -> Vec<String> {
    s.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// One setting's value and where it came from (`--creds`, `$NATS_CREDS`, `context prod (creds)`), so an
/// error can say which to fix.
struct Src<T> {
    value: T,
    from: String,
}

/// The flag, else the variable, else the context's field (natscli's precedence, see the module doc).
fn pick(
    flag: Option<String>,
    flag_name: &str,
    var: &str,
    ctx: Option<(&str, &str)>,
    env: EnvLookup,
) -> Option<Src<String>> {
    if let Some(v) = flag.filter(|v| !v.is_empty()) {
        return Some(Src {
            value: v,
            from: flag_name.into(),
        });
    }
    if let Some(v) = (!var.is_empty()).then(|| env(var)).flatten() {
        return Some(Src {
            value: v,
            from: format!("${var}"),
        });
    }
    let (field, v) = ctx?;
    (!v.is_empty()).then(|| Src {
        value: v.to_string(),
        from: format!("the context's `{field}`"),
    })
}

fn path_str(p: &Option<PathBuf>) -> Option<String> {
    p.as_ref().map(|p| p.to_string_lossy().into_owned())
}

/// `--server`, else `$NATS_URL`, else the context's `url`, else the local default; no URL with spaces.
fn servers_of(a: &ConnArgs, c: &natsctx::ContextFile, env: EnvLookup) -> anyhow::Result<Vec<String>> {
    let servers = pick(
        Some(a.server.join(",")),
        "--server",
        "NATS_URL",
        Some(("url", &c.url)),
        env,
    )
    .map(|s| split_urls(&s.value))
    .filter(|v| !v.is_empty())
    .unwrap_or_else(|| vec!["nats://127.0.0.1:4222".into()]);
    if let Some(s) = servers.iter().find(|s| s.contains(char::is_whitespace)) {
        return Err(anyhow!(
            "--server {:?}: a server URL has no spaces (e.g. nats://host:4222)",
            redact_url(s)
        ));
    }
    // A URL the client cannot parse is the user's to fix (exit 2), not a server that could not be reached
    // (issue 39: `nats://[::1` exited 3 as "cannot connect").
    for s in &servers {
        if let Err(e) = s.parse::<async_nats::ServerAddr>() {
            return Err(anyhow!(
                "server URL {:?} (--server, $NATS_URL or the context's url): not a URL a NATS client takes: {e}; \
                 e.g. nats://127.0.0.1:4222",
                redact_url(s)
            ));
        }
    }
    Ok(servers)
}

/// The JetStream API prefix from `--js-domain`, `--js-api-prefix`, or the context's domain or prefix.
fn js_prefix_of(a: &ConnArgs, c: &natsctx::ContextFile) -> anyhow::Result<Option<String>> {
    Ok(match (&a.js_domain, &a.js_api_prefix) {
        (Some(d), _) => Some(js_domain_prefix(d, "--js-domain")?),
        (None, Some(p)) => Some(p.clone()),
        (None, None) if !c.jetstream_domain.is_empty() => Some(js_domain_prefix(
            &c.jetstream_domain,
            "the context's `jetstream_domain`",
        )?),
        (None, None) => opt(&c.jetstream_api_prefix),
    })
}

/// `NATS_TIMEOUT` as the nats CLI takes it (a Go duration such as `5s`, `500ms`, `1m`).
fn parse_timeout(v: &str) -> anyhow::Result<Duration> {
    let d = crate::units::parse_duration(v)
        .or_else(|_| humantime::parse_duration(v).map_err(|e| e.to_string()))
        .map_err(|e| anyhow!("$NATS_TIMEOUT {v:?}: {e}; give a duration such as 5s"))?;
    if d.is_zero() {
        return Err(anyhow!("$NATS_TIMEOUT {v:?}: give a duration above zero, such as 5s"));
    }
    Ok(d)
}

impl ConnSpec {
    /// Resolve the flags with the process environment and the nats CLI's context files. Errors are bad
    /// input and name the flag, variable or context field to fix.
    pub fn resolve(a: &ConnArgs) -> anyhow::Result<ConnSpec> {
        ConnSpec::resolve_with(a, &natsctx::process_env)
    }

    /// `resolve` with an explicit environment (tests).
    pub fn resolve_with(a: &ConnArgs, env: EnvLookup) -> anyhow::Result<ConnSpec> {
        let loaded = natsctx::load(a.context.as_deref(), a.no_context, env)?;
        let c = loaded.as_ref().map(|l| l.file.clone()).unwrap_or_default();
        let cname = loaded.as_ref().map(|l| l.name.clone());
        let in_ctx = |e: anyhow::Error| match &loaded {
            Some(l) => e.context(format!("context {} ({})", l.name, l.path.display())),
            None => e,
        };
        let servers = servers_of(a, &c, env)?;
        let ctx_secret = |field: &str, v: &str| -> anyhow::Result<String> {
            natsctx::resolve_secret(v, &format!("the context's `{field}`"), env).map_err(in_ctx)
        };
        // natscli: a user from the flag or $NATS_USER with no password from either is a token.
        let flag_user = pick(a.user.clone(), "--user", "NATS_USER", None, env);
        let flag_pass = pick(a.password.clone(), "--password", "NATS_PASSWORD", None, env);
        let (mut user, mut password) = (opt(&c.user), opt(&c.password));
        let mut token = pick(a.token.clone(), "--token", "NATS_TOKEN", None, env).map(|s| s.value);
        if token.is_none() && !c.token.is_empty() {
            token = Some(ctx_secret("token", &c.token)?);
        }
        match (flag_user, flag_pass) {
            (Some(u), None) => token = Some(u.value),
            (u, p) => {
                if let Some(u) = u {
                    user = Some(u.value);
                }
                match p {
                    Some(p) => password = Some(p.value),
                    None => {
                        if let Some(pw) = password.take() {
                            password = Some(ctx_secret("password", &pw)?);
                        }
                    }
                }
            }
        }
        let file = |flag: &Option<PathBuf>, name: &str, var: &str, field: &str, v: &str| -> Option<Src<PathBuf>> {
            pick(path_str(flag), name, var, Some((field, v)), env).map(|s| Src {
                value: if s.from.starts_with("the context") {
                    natsctx::resolve_path(&s.value, env)
                } else {
                    PathBuf::from(s.value)
                },
                from: s.from,
            })
        };
        let creds = file(&a.creds, "--creds", "NATS_CREDS", "creds", &c.creds);
        let nkey = file(&a.nkey, "--nkey", "NATS_NKEY", "nkey", &c.nkey);
        let tls_cert = file(&a.tls_cert, "--tlscert", "NATS_CERT", "cert", &c.cert);
        let tls_key = file(&a.tls_key, "--tlskey", "NATS_KEY", "key", &c.key);
        let tls_ca = file(&a.tls_ca, "--tlsca", "NATS_CA", "ca", &c.ca);
        for f in [&creds, &nkey, &tls_cert, &tls_key, &tls_ca].into_iter().flatten() {
            // Through the one bounded reader: a FIFO, a device or a folder is named for what it is (it
            // said "no such file"), a file past the limit is refused before anything reads it whole.
            let refused = match f.value.symlink_metadata() {
                Err(_) => Some("no such file".to_string()),
                Ok(_) => crate::input::read_bytes(&f.value, "file")
                    .err()
                    .map(|e| crate::input::one_line(&e)),
            };
            if let Some(why) = refused {
                let e = anyhow!("{} {}: {why}", f.from, f.value.display());
                return Err(if f.from.starts_with("the context") {
                    in_ctx(e)
                } else {
                    e
                });
            }
        }
        if tls_cert.is_some() != tls_key.is_some() {
            return Err(anyhow!(
                "--tlscert and --tlskey go together (or $NATS_CERT and $NATS_KEY, or a context's cert and key): \
                 give both or neither"
            ));
        }
        let auth = match (user, creds, nkey) {
            (Some(u), _, _) => Auth::UserPassword(u, password.unwrap_or_default()),
            (None, Some(cr), _) => Auth::Creds(cr.value),
            (None, None, Some(nk)) => Auth::NkeySeed(read_seed(&nk.value, &nk.from)?),
            (None, None, None) if !c.user_jwt.is_empty() => {
                if c.user_seed.is_empty() {
                    return Err(in_ctx(anyhow!(
                        "`user_jwt` without `user_seed`: natsplan signs the server's nonce with the seed; add it"
                    )));
                }
                Auth::JwtSeed(
                    ctx_secret("user_jwt", &c.user_jwt)?,
                    ctx_secret("user_seed", &c.user_seed)?,
                )
            }
            _ => Auth::None,
        };
        let js_api_prefix = js_prefix_of(a, &c).map_err(in_ctx)?;
        let connect_timeout = match env("NATS_TIMEOUT") {
            Some(v) => parse_timeout(&v)?,
            None => Duration::from_secs(5),
        };
        Ok(ConnSpec {
            servers,
            auth,
            token,
            tls_ca: tls_ca.map(|s| s.value),
            tls_cert: tls_cert.map(|s| s.value),
            tls_key: tls_key.map(|s| s.value),
            tls_first: a.tls_first || c.tls_first,
            js_api_prefix,
            inbox_prefix: opt(&c.inbox_prefix),
            connect_timeout,
            context: cname,
        })
    }

    /// The JetStream API prefix every JetStream context of a run uses (`$JS.API` by default).
    pub fn js_api_prefix(&self) -> String {
        self.js_api_prefix.clone().unwrap_or_else(|| "$JS.API".into())
    }

    fn uses_tls(&self) -> bool {
        self.tls_ca.is_some() || self.tls_cert.is_some() || self.tls_first
    }

    /// For reports and errors: servers without credentials, which auth is in use (not its value), TLS, the
    /// JetStream prefix when it is not the default, and the context read.
    pub fn describe(&self) -> String {
        let servers: Vec<String> = self.servers.iter().map(|s| redact_url(s)).collect();
        let mut auth = match &self.auth {
            Auth::None => "none",
            Auth::UserPassword(..) => "user/password",
            Auth::Creds(_) => "creds",
            Auth::NkeySeed(_) => "nkey",
            Auth::JwtSeed(..) => "user_jwt",
        }
        .to_string();
        if self.token.is_some() {
            auth = if auth == "none" {
                "token".into()
            } else {
                format!("{auth}+token")
            };
        }
        let mut out = format!("servers={} auth={auth}", servers.join(","));
        if self.uses_tls() {
            out.push_str(if self.tls_first { " tls(first)" } else { " tls" });
        }
        if let Some(p) = &self.js_api_prefix {
            out.push_str(&format!(" js_api={p}"));
        }
        if let Some(c) = &self.context {
            out.push_str(&format!(" context={c}"));
        }
        out
    }

    /// The server worker `i` uses: round-robin over the list.
    pub fn server_for(&self, i: usize) -> &str {
        &self.servers[i % self.servers.len()]
    }

    /// How many server URLs were given.
    pub fn server_count(&self) -> usize {
        self.servers.len()
    }

    async fn options(
        &self,
        name: String,
        slow_events: Option<Arc<AtomicU64>>,
    ) -> anyhow::Result<async_nats::ConnectOptions> {
        let mut o = async_nats::ConnectOptions::new()
            .name(name)
            .connection_timeout(self.connect_timeout)
            // A bench run should fail fast, not reconnect forever behind the user's back.
            .max_reconnects(Some(3))
            .skip_subject_validation(true);
        match &self.auth {
            Auth::None => {}
            Auth::UserPassword(u, p) => o = o.user_and_password(u.clone(), p.clone()),
            Auth::Creds(p) => {
                // Read through the bounded reader (async-nats's own read has no limit); async-nats's
                // message says what is wrong with the file, never its content.
                let text = crate::input::read_text(p, "creds file")
                    .map_err(|e| anyhow!("creds {}: {}", p.display(), crate::input::one_line(&e)))?;
                o = o
                    .credentials(&text)
                    .with_context(|| format!("creds {}: cannot use", p.display()))?;
            }
            Auth::NkeySeed(seed) => o = o.nkey(seed.clone()),
            Auth::JwtSeed(jwt, seed) => {
                // The layout of a creds file (what `nsc generate creds` writes), which async-nats parses.
                let creds = format!(
                    "-----BEGIN NATS USER JWT-----\n{jwt}\n------END NATS USER JWT------\n\n\
                     -----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
                );
                o = o
                    .credentials(&creds)
                    .map_err(|_| anyhow!("the context's `user_jwt`/`user_seed` are not a valid JWT and seed"))?;
            }
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
        if self.tls_first {
            o = o.tls_first();
        }
        if let Some(p) = &self.inbox_prefix {
            o = o.custom_inbox_prefix(p);
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
        if self.uses_tls() || !matches!(self.auth, Auth::None | Auth::UserPassword(..)) {
            return None;
        }
        let url = self.server_for(i);
        let rest = match url.split_once("://") {
            Some(("nats", r)) => r,
            Some(_) => return None,
            None => url,
        };
        let rest = rest.trim_end_matches('/');
        let hostport = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
        let addr = if hostport.rsplit_once(':').is_some_and(|(_, p)| p.parse::<u16>().is_ok()) {
            hostport.to_string()
        } else {
            format!("{hostport}:4222")
        };
        let (mut user, mut pass) = match &self.auth {
            Auth::UserPassword(u, p) => (Some(u.clone()), Some(p.clone())),
            _ => (None, None),
        };
        let mut token = self.token.clone();
        match url_auth(url) {
            Some(UrlAuth::UserPassword(u, p)) => {
                user = Some(u);
                pass = Some(p);
            }
            Some(UrlAuth::Token(t)) => token = Some(t),
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
        self.connect_via(i, i, role, slow_events).await
    }

    /// Connect worker `i` to `server_for(server)` (a run that places its workers by the stream leader,
    /// `bench::leader`, picks the server itself).
    pub async fn connect_via(
        &self,
        server: usize,
        i: usize,
        role: &str,
        slow_events: Option<Arc<AtomicU64>>,
    ) -> Result<async_nats::Client, ConnectFailure> {
        let url = self.server_for(server).to_string();
        self.connect_url(&url, i, role, slow_events).await
    }

    /// The URL of a server the cluster advertised (`host:port` from INFO `connect_urls`), in the scheme
    /// and with the credentials of the first URL given, so it is reached as the given ones are.
    pub fn advertised_url(&self, host_port: &str) -> String {
        let first = self.servers.first().map(String::as_str).unwrap_or("");
        let scheme = first.split_once("://").map_or("nats", |(s, _)| s);
        let rest = first.split_once("://").map_or(first, |(_, r)| r);
        let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
        let info = authority
            .rsplit_once('@')
            .map(|(i, _)| format!("{i}@"))
            .unwrap_or_default();
        let hp = host_port.split_once("://").map_or(host_port, |(_, r)| r);
        format!("{scheme}://{info}{hp}")
    }

    /// [`ConnSpec::connect_via`] to a URL given whole (one `advertised_url` made).
    pub async fn connect_url(
        &self,
        url: &str,
        i: usize,
        role: &str,
        slow_events: Option<Arc<AtomicU64>>,
    ) -> Result<async_nats::Client, ConnectFailure> {
        let url = url.to_string();
        let o = self
            .options(format!("natsplan-bench-{role}{i}"), slow_events)
            .await
            .map_err(ConnectFailure::Setup)?;
        with_url_auth(o, &url)
            .connect(url.as_str())
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
        // One set of options for every server: the first URL's credentials, if any carries them.
        if let Some(url) = self.servers.iter().find(|u| url_auth(u).is_some()) {
            o = with_url_auth(o, url);
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
        with_url_auth(o, &url)
            .subscription_capacity(capacity)
            .connect(url.as_str())
            .await
            .map_err(|e| ConnectFailure::Unreachable(anyhow!("cannot connect to {}: {e}", redact_url(&url))))
    }

    /// Connect once (to the first server, within `connect_timeout`) to learn which server answers: its name, its
    /// version and whether JetStream is enabled. What verify and calibrate detect before anything else.
    pub async fn server_facts(&self, role: &str) -> anyhow::Result<(String, String, bool)> {
        let c = tokio::time::timeout(self.connect_timeout, self.connect(0, role, None))
            .await
            .map_err(|_| {
                anyhow!(
                    "cannot connect to {}: timed out after {:?} ($NATS_TIMEOUT sets it)",
                    self.describe(),
                    self.connect_timeout
                )
            })?
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

fn opt(s: &str) -> Option<String> {
    Some(s.to_string()).filter(|s| !s.is_empty())
}

/// `$JS.<domain>.API`, the prefix nats.go and async-nats derive from a JetStream domain.
fn js_domain_prefix(domain: &str, from: &str) -> anyhow::Result<String> {
    let d = domain.trim();
    if d.is_empty() || d.contains(|c: char| c.is_whitespace() || matches!(c, '.' | '*' | '>')) {
        return Err(anyhow!(
            "{from} {domain:?}: a JetStream domain is one subject token (no spaces, `.`, `*` or `>`), e.g. hub"
        ));
    }
    Ok(format!("$JS.{d}.API"))
}

/// The seed line of an nkey file. `from` names where the path came from (`--nkey`, `$NATS_NKEY`, ...).
fn read_seed(p: &Path, from: &str) -> anyhow::Result<String> {
    let text = crate::input::read_text(p, "nkey seed file").map_err(|e| {
        anyhow!(
            "{from} {}: cannot read the seed file: {}",
            p.display(),
            crate::input::one_line(&e)
        )
    })?;
    let seed = text.lines().map(str::trim).find(|l| l.starts_with('S') && l.len() > 50);
    seed.map(str::to_string).ok_or_else(|| {
        anyhow!(
            "{from} {}: no nkey seed (a line starting with `S`) in the file",
            p.display()
        )
    })
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
