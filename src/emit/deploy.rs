//! The deploy file (`natsplan emit --deploy FILE`): what a real deployment adds to a plan — accounts with
//! users or nkeys and a system account, TLS, and the durable consumers of the site's streams by name.
//! YAML, read with `input::Doc` so every problem is reported at once at its `FILE:LINE:COL`. The format
//! is documented in docs/emit.md.

use super::conf::{Account, Security, Tls, User};
use crate::input::{Doc, InputError, InputErrors};
use crate::site::Workload;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Deserialize)]
struct File {
    accounts: Option<BTreeMap<String, AccountSpec>>,
    system_account: Option<String>,
    tls: Option<TlsSpec>,
    consumers: Option<BTreeMap<String, Vec<ConsumerSpec>>>,
}

#[derive(Debug, Deserialize)]
struct AccountSpec {
    jetstream: Option<bool>,
    users: Option<Vec<UserSpec>>,
}

#[derive(Debug, Deserialize)]
struct UserSpec {
    user: Option<String>,
    password: Option<String>,
    nkey: Option<String>,
}

#[derive(Debug, Deserialize)]
struct TlsSpec {
    cert: String,
    key: String,
    ca: Option<String>,
    verify: Option<bool>,
    routes: Option<bool>,
}

/// One durable consumer as the deploy file gives it (names as nats-server's ConsumerConfig).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ConsumerSpec {
    pub durable: String,
    pub description: Option<String>,
    pub filter_subject: Option<String>,
    pub deliver_policy: Option<String>,
    pub ack_policy: Option<String>,
    pub ack_wait: Option<String>,
    pub max_deliver: Option<i64>,
    pub max_ack_pending: Option<i64>,
}

/// The deploy file, checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Deploy {
    pub security: Security,
    /// Durable consumers by stream name.
    pub consumers: BTreeMap<String, Vec<ConsumerSpec>>,
}

/// A user nkey: `U` and 55 more base32 characters (nkeys' public user key, 56 in all).
fn is_user_nkey(k: &str) -> bool {
    k.len() == 56 && k.starts_with('U') && k.chars().all(|c| c.is_ascii_uppercase() || ('2'..='7').contains(&c))
}

/// Why `n` cannot name an account or a durable consumer, or None: nats-server's asset-name rules
/// (`site::names`: no spaces, `.`, `*`, `>`, `/`, `\`, control or invisible characters, at most 250 bytes)
/// and, for an account, no `"`: its name is a quoted key of the `accounts` block, which nats-server's
/// lexer ends at the next `"` with no escapes (conf/lex.go `lexDubQuotedKey`).
fn name_problem(n: &str, account: bool) -> Option<String> {
    if account && n.contains('"') {
        return Some("holds '\"', which nats-server's configuration cannot quote in an account name".into());
    }
    crate::site::names::problem(crate::site::names::NameKind::Consumer, n)
}

/// A control or invisible character in a user, password or TLS path: nats-server would read it (emit quotes
/// it), but it is a paste or YAML escape gone wrong, and in a path it names a file that is not there.
fn hidden(doc: &Doc, path: &str, what: &str, v: &str, errs: &mut Vec<InputError>) {
    if let Some(c) = crate::site::names::hidden_char(v) {
        errs.push(doc.error(
            path,
            format!("the {what} holds {c}"),
            "remove it (a YAML \"...\" escape such as \\n or \\t writes one)",
        ));
    }
}

/// nats-server's longest description (`JSMaxDescriptionLen`, server/jetstream_api.go).
const MAX_DESCRIPTION_BYTES: usize = 4 * 1024;

/// Read and check a deploy file's text against the site's workload.
pub fn parse(text: &str, file: &str, workload: &Workload) -> Result<Deploy, InputErrors> {
    let doc = Doc::parse(text, file)?;
    let (f, mut errs) = doc.read::<File>();
    let Some(f) = f else {
        return Err(doc.errors(errs));
    };
    let mut more = Vec::new();
    let security = security(&f, &doc, &mut more);
    let consumers = consumers(&f, &doc, workload, &mut more);
    errs = doc.merge(errs, more);
    if errs.is_empty() {
        Ok(Deploy { security, consumers })
    } else {
        Err(doc.errors(errs))
    }
}

fn security(f: &File, doc: &Doc, errs: &mut Vec<InputError>) -> Security {
    let mut accounts = Vec::new();
    let mut seen_users = BTreeSet::new();
    let sys = f.system_account.clone();
    for (name, a) in f.accounts.iter().flatten() {
        let p = format!("accounts.{name}");
        if let Some(why) = name_problem(name, true) {
            errs.push(doc.error(
                &p,
                format!("'{}' is not an account name: it {why}", name.escape_debug()),
                "use letters, digits, '-' and '_'",
            ));
        }
        let is_sys = sys.as_deref() == Some(name.as_str());
        // Every account but the system account gets JetStream unless told otherwise.
        let jetstream = a.jetstream.unwrap_or(!is_sys);
        if is_sys && jetstream {
            errs.push(doc.error(
                &format!("{p}.jetstream"),
                "the system account cannot have JetStream (nats-server refuses it)",
                "drop jetstream: true here, and give JetStream to another account",
            ));
        }
        let users = users(doc, &p, a, &mut seen_users, errs);
        if users.is_empty() {
            errs.push(doc.error(
                &p,
                "an account without users cannot be logged into",
                "add users: [{ user: app, password: $APP_PASSWORD }]",
            ));
        }
        accounts.push(Account {
            name: name.clone(),
            jetstream,
            users,
        });
    }
    account_problems(doc, &accounts, sys.as_deref(), &seen_users, errs);
    let tls = f.tls.as_ref().map(|t| tls(t, doc, errs));
    Security {
        accounts,
        system_account: sys,
        tls,
    }
}

/// The users of account `a` (at `p`), each checked; `seen` gathers user names over all accounts.
fn users(
    doc: &Doc,
    p: &str,
    a: &AccountSpec,
    seen_users: &mut BTreeSet<String>,
    errs: &mut Vec<InputError>,
) -> Vec<User> {
    let mut users = Vec::new();
    for (i, u) in a.users.iter().flatten().enumerate() {
        let up = format!("{p}.users[{i}]");
        match (&u.user, &u.password, &u.nkey) {
            (Some(user), Some(password), None) => {
                hidden(doc, &format!("{up}.user"), "user name", user, errs);
                hidden(doc, &format!("{up}.password"), "password", password, errs);
                if !seen_users.insert(user.clone()) {
                    errs.push(doc.error(
                        &format!("{up}.user"),
                        format!("user '{user}' is given twice (nats-server needs user names unique over all accounts)"),
                        "give each user its own name",
                    ));
                }
                if password.is_empty() {
                    errs.push(doc.error(
                        &format!("{up}.password"),
                        "the password is empty",
                        "write password: $ENV_VAR",
                    ));
                }
                users.push(User::Password {
                    user: user.clone(),
                    password: password.clone(),
                });
            }
            (None, None, Some(k)) => {
                if !is_user_nkey(k) {
                    errs.push(doc.error(
                        &format!("{up}.nkey"),
                        "not a public user nkey (56 characters starting with U)",
                        "write the public key `nk -gen user -pubout` prints (never the seed, which starts with SU)",
                    ));
                }
                users.push(User::Nkey(k.clone()));
            }
            _ => errs.push(doc.error(
                &up,
                "a user is either `user` with `password`, or `nkey` alone",
                "write { user: app, password: $APP_PASSWORD } or { nkey: U... }",
            )),
        }
    }
    users
}

/// Problems of the accounts as a whole: the system account named but not given, no account with
/// JetStream, and names that clash with the system account emit adds when none is given.
fn account_problems(
    doc: &Doc,
    accounts: &[Account],
    sys: Option<&str>,
    seen_users: &BTreeSet<String>,
    errs: &mut Vec<InputError>,
) {
    if let Some(s) = sys {
        if !accounts.iter().any(|a| a.name == s) {
            errs.push(doc.error(
                "system_account",
                format!("system_account '{s}' is not one of the accounts"),
                "name one of the accounts given under accounts:",
            ));
        }
    }
    // Only a system account: clients without credentials log into the global account, which keeps
    // JetStream (conf::Security::system_only says why). Other accounts replace it: one needs JetStream.
    let apps = accounts.iter().filter(|a| sys != Some(a.name.as_str()));
    if apps.clone().next().is_some() && !apps.clone().any(|a| a.jetstream) {
        errs.push(doc.error(
            "accounts",
            "no account has JetStream, so the planned streams cannot be created",
            "give one account jetstream: true",
        ));
    }
    if sys.is_none() && seen_users.contains(super::conf::SYSTEM_USER) {
        errs.push(doc.error(
            "accounts",
            format!(
                "emit adds its own system account {} with user {} when system_account is not given, and a user of \
                 that name is given here (nats-server needs user names unique over all accounts)",
                super::conf::SYSTEM_ACCOUNT,
                super::conf::SYSTEM_USER
            ),
            "rename that user, or give the system account yourself (system_account: NAME with its users)",
        ));
    }
    if sys.is_none() {
        if let Some(a) = accounts.iter().find(|a| a.name == super::conf::SYSTEM_ACCOUNT) {
            errs.push(doc.error(
                &format!("accounts.{}", a.name),
                format!(
                    "emit adds its own system account {} (user {}) when system_account is not given, and this \
                     account has that name",
                    super::conf::SYSTEM_ACCOUNT,
                    super::conf::SYSTEM_USER
                ),
                format!(
                    "write system_account: {} if this is the system account, or rename this account",
                    a.name
                ),
            ));
        }
    }
}

/// The TLS block: absolute paths, and the CA routes need.
fn tls(t: &TlsSpec, doc: &Doc, errs: &mut Vec<InputError>) -> Tls {
    for (k, v) in [("cert", Some(&t.cert)), ("key", Some(&t.key)), ("ca", t.ca.as_ref())] {
        if let Some(v) = v {
            hidden(doc, &format!("tls.{k}"), "path", v, errs);
        }
        if v.is_some_and(|v| !v.starts_with('/')) {
            errs.push(doc.error(
                &format!("tls.{k}"),
                "the path must be absolute (nats-server reads it on the host, from its own working folder)",
                "write e.g. /etc/nats/tls/server.pem",
            ));
        }
    }
    let routes = t.routes.unwrap_or(false);
    if routes && t.ca.is_none() {
        errs.push(doc.error(
            "tls.routes",
            "TLS between servers needs the CA that signed their certificates",
            "add ca: /etc/nats/tls/ca.pem",
        ));
    }
    Tls {
        cert_file: t.cert.clone(),
        key_file: t.key.clone(),
        ca_file: t.ca.clone(),
        verify: t.verify.unwrap_or(false),
        routes,
    }
}

fn consumers(f: &File, doc: &Doc, w: &Workload, errs: &mut Vec<InputError>) -> BTreeMap<String, Vec<ConsumerSpec>> {
    let mut out = BTreeMap::new();
    for (stream, list) in f.consumers.iter().flatten() {
        let p = format!("consumers.{stream}");
        let Some(s) = w.streams.iter().find(|s| &s.name == stream) else {
            errs.push(doc.error(
                &p,
                format!("the site has no stream '{stream}'"),
                "name a stream of the site's workload",
            ));
            continue;
        };
        if list.len() as u64 != s.consumers as u64 {
            errs.push(doc.error(
                &p,
                format!(
                    "{} consumers listed, but the site plans {} for {stream} (each is a RAFT group the plan counts)",
                    list.len(),
                    s.consumers
                ),
                format!(
                    "list {} consumers here, or set consumers: {} in the site",
                    s.consumers,
                    list.len()
                ),
            ));
        }
        let mut names = BTreeSet::new();
        for (i, c) in list.iter().enumerate() {
            let cp = format!("{p}[{i}]");
            if let Some(why) = name_problem(&c.durable, false) {
                errs.push(doc.error(
                    &format!("{cp}.durable"),
                    format!("'{}' is not a usable durable name: it {why}", c.durable.escape_debug()),
                    "use letters, digits, '-' and '_', one name per consumer",
                ));
            } else if !names.insert(c.durable.clone()) {
                errs.push(doc.error(
                    &format!("{cp}.durable"),
                    format!("'{}' is not a usable durable name: it is given twice", c.durable),
                    "use letters, digits, '-' and '_', one name per consumer",
                ));
            }
            if c.description.as_ref().is_some_and(|d| d.len() > MAX_DESCRIPTION_BYTES) {
                errs.push(doc.error(
                    &format!("{cp}.description"),
                    format!("the description is longer than nats-server takes ({MAX_DESCRIPTION_BYTES} bytes)"),
                    "shorten it",
                ));
            }
            if let Some(fs) = &c.filter_subject {
                let subjects = if s.subjects.is_empty() {
                    vec![format!("{}.>", s.name.to_lowercase())]
                } else {
                    s.subjects.clone()
                };
                if crate::units::check_subject(fs).is_err()
                    || !subjects.iter().any(|x| crate::units::subjects_overlap(x, fs))
                {
                    errs.push(doc.error(
                        &format!("{cp}.filter_subject"),
                        format!("'{fs}' is not a subject of stream {stream} ({})", subjects.join(", ")),
                        "filter on a subject the stream captures",
                    ));
                }
            }
            let enums: [(&str, &Option<String>, &[&str]); 2] = [
                (
                    "deliver_policy",
                    &c.deliver_policy,
                    &["all", "last", "new", "last_per_subject"],
                ),
                ("ack_policy", &c.ack_policy, &["explicit", "all", "none"]),
            ];
            for (k, v, allowed) in enums {
                if let Some(v) = v.as_deref().filter(|v| !allowed.contains(v)) {
                    errs.push(doc.error(
                        &format!("{cp}.{k}"),
                        format!("{k} '{v}' is unknown"),
                        format!("write one of {}", allowed.join(", ")),
                    ));
                }
            }
            if let Some(w) = &c.ack_wait {
                match crate::units::parse_duration(w) {
                    Ok(d) if !d.is_zero() && d.as_secs() <= crate::units::MAX_GO_DURATION_S => {}
                    Ok(d) if !d.is_zero() => errs.push(doc.error(
                        &format!("{cp}.ack_wait"),
                        format!(
                            "ack_wait '{w}' is longer than nats-server takes (a Go duration: at most {} s, about 292 \
                             years)",
                            crate::units::MAX_GO_DURATION_S
                        ),
                        "write e.g. 30s",
                    )),
                    _ => errs.push(doc.error(
                        &format!("{cp}.ack_wait"),
                        format!("ack_wait '{w}' is not a duration above 0"),
                        "write e.g. 30s",
                    )),
                }
            }
            if c.max_deliver.is_some_and(|m| m == 0 || m < -1) || c.max_ack_pending.is_some_and(|m| m == 0 || m < -1) {
                errs.push(doc.error(
                    &cp,
                    "max_deliver and max_ack_pending are -1 (unlimited) or at least 1",
                    "write -1 or a count",
                ));
            }
        }
        out.insert(stream.clone(), list.clone());
    }
    out
}

/// Whether a user's password is written into the configuration as it is (not a `$VAR` reference).
pub fn has_literal_password(d: &Deploy) -> bool {
    literal_password(&d.security)
}

fn literal_password(s: &Security) -> bool {
    s.accounts
        .iter()
        .flat_map(|a| a.users.iter())
        .any(|u| matches!(u, User::Password { password, .. } if !super::conf::is_env_ref(password)))
}

/// What the top README says about accounts, the credentials each recovery step needs, and TLS, from the
/// security `emit` writes (the deploy file's, with natsplan's system account where it names none).
pub fn readme_section(s: &Security) -> String {
    let mut o = String::from("## Accounts and credentials\n\n");
    for a in &s.accounts {
        let users: Vec<String> = a
            .users
            .iter()
            .map(|u| match u {
                User::Password { user, .. } => format!("user `{user}`"),
                User::Nkey(k) => format!("nkey `{}…`", &k[..k.len().min(8)]),
            })
            .collect();
        let role = if s.system_account.as_deref() == Some(a.name.as_str()) {
            " (system account: `nats server report`, `nats server request` and the cluster's recovery steps below)"
        } else if a.jetstream {
            " (JetStream: create the streams with one of its users)"
        } else {
            ""
        };
        o.push_str(&format!("- Account `{}`{role}: {}.\n", a.name, users.join(", ")));
    }
    if s.anonymous_clients() {
        o.push_str(
            "- Clients without credentials log into the global account `$G`, which has JetStream: with the system \
             account as the only account (no `authorization` block, no operator, no `no_auth_user`), nats-server \
             adds a no-auth user for `$G` (server/server.go `configureAccounts`; checked on nats-server 2.15.1). \
             Give the deploy file (`--deploy`) an application account to require credentials.\n",
        );
    }
    let vars: BTreeSet<&str> = s
        .accounts
        .iter()
        .flat_map(|a| a.users.iter())
        .filter_map(|u| match u {
            User::Password { password, .. } if super::conf::is_env_ref(password) => Some(&password[1..]),
            _ => None,
        })
        .collect();
    if !vars.is_empty() {
        o.push_str(&format!(
            "- Passwords are read by nats-server from its environment when it starts, and it refuses to start \
             without them: set {} for it (e.g. in the systemd unit's `Environment=` or an `EnvironmentFile=`), \
             never in this folder.\n",
            vars.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    if literal_password(s) {
        o.push_str(
            "- Some passwords are written into the configuration as given (a bcrypt hash or text): each \
             `nats-server.conf` is written readable by its owner only (mode 0600); keep it so on the host, or \
             write `password: $VAR` in the deploy file so the secret stays out of the file.\n",
        );
    }
    o.push_str(&recovery_credentials(s));
    if let Some(t) = &s.tls {
        o.push_str("\n## TLS\n\n");
        o.push_str(&format!(
            "- TLS on the client port with `{}` / `{}`{}{}. Clients connect with `tls://` and trust the CA \
             (`nats --tlsca`).\n",
            t.cert_file,
            t.key_file,
            t.ca_file.as_ref().map(|c| format!(", CA `{c}`")).unwrap_or_default(),
            if t.verify {
                "; clients must present a certificate the CA signed (`verify: true`)"
            } else {
                ""
            },
        ));
        if t.routes {
            o.push_str(
                "- TLS between servers too: each server's certificate must name the host the routes dial (the \
                 server names in `routes`).\n",
            );
        }
    }
    o.push('\n');
    o
}

/// Which credentials each recovery command needs (nats-server 2.15.1; `survival::Credentials` says where
/// the split is in nats-server's source).
fn recovery_credentials(s: &Security) -> String {
    let sys = match s.system_user() {
        Some((user, password)) if super::conf::is_env_ref(password) => {
            format!("`nats --user {user} --password \"{password}\" …`")
        }
        Some((user, _)) => format!("`nats --user {user} --password … …`"),
        None => format!(
            "a user of system account `{}` (an nkey user: `nats --nkey FILE …`)",
            s.system_account.as_deref().unwrap_or("$SYS")
        ),
    };
    let app = if s.anonymous_clients() {
        "any client (the global account)".to_string()
    } else {
        "a user of the stream's account".to_string()
    };
    format!(
        "\n### Who may run the recovery steps\n\n\
         `natsplan whatif` names each step's credentials. The cluster's steps answer only the system account; a \
         request from any other account is not answered at all (it times out):\n\n\
         | step | command | credentials |\n|---|---|---|\n\
         | remove a lost server from the cluster | `nats server cluster peer-remove NAME` (`$JS.API.SERVER.REMOVE`) | system account: {sys} |\n\
         | move every replica off a server | `nats request '$JS.API.SERVER.EVACUATE' '{{\"peer\":\"NAME\"}}'` | system account |\n\
         | elect another meta leader | `nats server cluster step-down` (`$JS.API.META.LEADER.STEPDOWN`) | system account |\n\
         | lower the meta quorum after losing it for good (≥ 2.15, unsafe) | `nats request '$JS.API.META.RESCUE' '{{\"quorum_needed\": N}}'` | system account |\n\
         | remove one replica of a stream | `nats stream cluster peer-remove STREAM PEER` (`$JS.API.STREAM.PEER.REMOVE`) | {app} |\n\
         | restart nats-server, free space, mount a new volume | on the host | a shell on the host |\n\n\
         After `nats server cluster peer-remove`, nats-server re-places the removed server's replicas on a live \
         server that satisfies the stream's placement (tags, `unique_tag`) and holds no replica of it yet; where \
         there is none the stream stays a replica short until such a server joins (checked on nats-server \
         2.15.1).\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload() -> Workload {
        let cat = crate::catalog::Catalog::builtin();
        let text = include_str!("../../tests/data/four-racks-r3.yaml");
        crate::site::parse_str(text, "four-racks-r3.yaml", &cat)
            .unwrap()
            .workload
    }

    const NKEY: &str = "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4";

    #[test]
    fn accounts_users_nkeys_and_tls_are_read() {
        let text = format!(
            "accounts:\n  APP:\n    users:\n      - {{ user: app, password: $APP_PASSWORD }}\n      - {{ nkey: {NKEY} }}\n  SYS:\n    users: [{{ user: admin, password: $SYS_PASSWORD }}]\nsystem_account: SYS\ntls: {{ cert: /etc/nats/s.pem, key: /etc/nats/k.pem, ca: /etc/nats/ca.pem, verify: true }}\n"
        );
        let d = parse(&text, "deploy.yaml", &workload()).unwrap();
        let app = &d.security.accounts[0];
        assert_eq!(app.name, "APP");
        assert!(app.jetstream);
        assert_eq!(app.users[1], User::Nkey(NKEY.into()));
        assert!(!d.security.accounts[1].jetstream);
        assert_eq!(d.security.system_account.as_deref(), Some("SYS"));
        assert!(d.security.tls.as_ref().unwrap().verify);
    }

    #[test]
    fn every_problem_is_placed() {
        let text = "accounts:\n  APP:\n    users:\n      - { user: app }\n      - { nkey: SUABC }\nsystem_account: SYSTEM\ntls: { cert: s.pem, key: /k.pem, routes: true }\nconsumers:\n  nope: [{ durable: x }]\n";
        let e = parse(text, "deploy.yaml", &workload()).unwrap_err().to_string();
        assert!(
            e.contains("deploy.yaml:4:9: accounts.APP.users[0]: a user is either"),
            "{e}"
        );
        assert!(e.contains("accounts.APP.users[1].nkey: not a public user nkey"), "{e}");
        assert!(
            e.contains("system_account: system_account 'SYSTEM' is not one of the accounts"),
            "{e}"
        );
        assert!(e.contains("tls.cert: the path must be absolute"), "{e}");
        assert!(e.contains("tls.routes: TLS between servers needs the CA"), "{e}");
        assert!(e.contains("consumers.nope: the site has no stream 'nope'"), "{e}");
        // What nats-server's configuration cannot carry, or what is a paste gone wrong, at its place.
        let text = "accounts:\n  \"A\\\"B\":\n    users: [{ user: \"u\\x01\", password: \"p\\nq\" }]\n\
                    tls: { cert: \"/etc/a\\tb.pem\", key: /k.pem }\n\
                    consumers:\n  orders: [{ durable: \"bill\\u200Bing\", ack_wait: 300y }]\n";
        let e = parse(text, "deploy.yaml", &workload()).unwrap_err().to_string();
        assert!(
            e.contains("deploy.yaml:3:5: accounts.A\"B: 'A\\\"B' is not an account name: it holds '\"'"),
            "{e}"
        );
        assert!(
            e.contains("accounts.A\"B.users[0].user: the user name holds a control character (U+0001)"),
            "{e}"
        );
        assert!(
            e.contains("accounts.A\"B.users[0].password: the password holds a control character"),
            "{e}"
        );
        assert!(
            e.contains("tls.cert: the path holds a control character (U+0009)"),
            "{e}"
        );
        assert!(
            e.contains("consumers.orders[0].durable: 'bill\\u{200b}ing' is not a usable durable name"),
            "{e}"
        );
        assert!(
            e.contains("consumers.orders[0].ack_wait: ack_wait '300y' is longer than nats-server takes"),
            "{e}"
        );
        let e = parse("colour: red\n", "deploy.yaml", &workload())
            .unwrap_err()
            .to_string();
        assert!(e.contains("deploy.yaml:1:1: colour: unknown key 'colour'"), "{e}");
    }
}
