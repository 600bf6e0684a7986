//! One nats-server configuration file as text. Both `emit` (files for real hosts) and `lab` (the same
//! file on loopback ports) render through this, so the lab runs exactly the tags, `unique_tag`, store
//! size and sync mode that `emit` writes.

use crate::units::SyncMode;

/// Everything that varies between the servers natsplan configures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConf {
    pub server_name: String,
    /// Client listen address, `host:port`.
    pub client_listen: String,
    /// Monitoring (HTTP) listen address, `host:port`.
    pub monitor_listen: Option<String>,
    /// Placement tags; written lower-case (tag matching is case-sensitive before nats-server 2.12).
    pub tags: Vec<String>,
    pub store_dir: String,
    /// `max_file_store`; `None` leaves nats-server's default (75 % of free space at `store_dir`).
    pub max_file_store_bytes: Option<u64>,
    /// `max_memory_store`; `None` leaves the default (75 % of RAM).
    pub max_memory_store_bytes: Option<u64>,
    /// `jetstream.unique_tag` prefix, e.g. `rack:`; must be the same on every server of the cluster.
    pub unique_tag: Option<String>,
    pub sync: SyncMode,
    /// `jetstream.limits.max_ha_assets`.
    pub max_ha_assets: Option<u32>,
    pub cluster_name: String,
    /// Route listen address, `host:port`.
    pub cluster_listen: String,
    /// Route URLs of the other servers (`nats-route://host:port`); none means a standalone server (no
    /// cluster block at all).
    pub routes: Vec<String>,
    /// Comment lines written at the top (without `#`).
    pub header: Vec<String>,
    /// TLS on the client port: clients must connect with TLS and trust the certificate's issuer.
    pub client_tls: Option<ClientTls>,
}

/// The server's certificate and key for client connections (PEM files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientTls {
    pub cert_file: String,
    pub key_file: String,
}

/// The system account natsplan writes where the deploy file names none: account `SYS` with one user `sys`
/// whose password nats-server reads from `$NATS_SYSTEM_PASSWORD` when it starts (never a literal in the
/// file). It is what the server-level recovery steps need: `$JS.API.SERVER.REMOVE` (`nats server cluster
/// peer-remove`), `SERVER.EVACUATE`, `META.LEADER.STEPDOWN` and `META.RESCUE` answer only the system
/// account (docs/emit.md).
pub const SYSTEM_ACCOUNT: &str = "SYS";
pub const SYSTEM_USER: &str = "sys";
pub const SYSTEM_PASSWORD_ENV: &str = "NATS_SYSTEM_PASSWORD";

/// Authentication and TLS beyond what `ServerConf` carries (emit's `--deploy` file); the default adds
/// nothing (`render`). `Security::system_only` is what emit writes without accounts and what the lab and
/// the faults sandbox run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Security {
    /// Accounts with their users; empty = no authentication (nats-server's global account).
    pub accounts: Vec<Account>,
    /// `system_account`; None = nats-server's own `$SYS` (no users can log into it).
    pub system_account: Option<String>,
    /// TLS for clients (and routes when `routes`), replacing `ServerConf::client_tls`.
    pub tls: Option<Tls>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    /// `jetstream: enabled` for this account.
    pub jetstream: bool,
    pub users: Vec<User>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum User {
    /// A user and its password: either `$VAR` (nats-server reads it from its environment when it starts,
    /// so the secret is never in the file) or a literal (a bcrypt hash from `nats server passwd`, or text).
    Password { user: String, password: String },
    /// An nkey user by its public key (`U…`); the seed stays with the client.
    Nkey(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tls {
    pub cert_file: String,
    pub key_file: String,
    pub ca_file: Option<String>,
    /// Clients must present a certificate the CA signed (`verify: true`).
    pub verify: bool,
    /// The same certificate on the route port, peers verified against the CA.
    pub routes: bool,
}

/// A string as nats-server's config parser reads it back unchanged: double-quoted, with only the escapes
/// its lexer knows (conf/lex.go `lexStringEscape`: `\\`, `\"`, `\t`, `\n`, `\r` and `\xHH`). JSON's
/// `\u0001`, `\b` or `\f` are errors there ("Invalid escape character"), so other control characters are
/// written as `\xHH`. Inside double quotes nats-server expands no `$VARIABLE`.
pub fn q(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\t' => o.push_str("\\t"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => o.push_str(&format!("\\x{:02x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A map key as nats-server's lexer reads a double-quoted key (conf/lex.go `lexDubQuotedKey`): everything
/// up to the next `"`, with no escapes, so a key cannot hold `"` (or a line break). Names reach here
/// checked (`deploy::parse` refuses such account names, with their place).
fn key(s: &str) -> String {
    debug_assert!(!s.contains(['"', '\n', '\r']), "unquotable key {s:?}");
    format!("\"{s}\"")
}

impl Security {
    /// Only natsplan's system account. Anonymous clients keep working: with no account but the system
    /// account and the global one, no `authorization` block, no operator and no `no_auth_user`,
    /// nats-server adds a no-auth user for the global account (server/server.go, `configureAccounts`:
    /// "check to see if its just us and the $G account"; nats-server main 1787eee, 2.15.0-dev), and the
    /// global account keeps JetStream (server/jetstream.go `globalAccountOnly` ignores the system
    /// account). Checked live on nats-server 2.15.1 (tests/live/system_account_live.rs).
    pub fn system_only() -> Security {
        Security::default().with_system_account()
    }

    /// This security with natsplan's system account added when it names none (`system_account` unset).
    pub fn with_system_account(mut self) -> Security {
        if self.system_account.is_none() {
            self.accounts.push(Account {
                name: SYSTEM_ACCOUNT.into(),
                jetstream: false,
                users: vec![User::Password {
                    user: SYSTEM_USER.into(),
                    password: format!("${SYSTEM_PASSWORD_ENV}"),
                }],
            });
            self.system_account = Some(SYSTEM_ACCOUNT.into());
        }
        self
    }

    /// Only the system account is given: clients without credentials log into the global account.
    pub fn anonymous_clients(&self) -> bool {
        self.accounts
            .iter()
            .all(|a| self.system_account.as_deref() == Some(a.name.as_str()))
    }

    /// The system account's first password user (user, password as written: `$VAR` or a literal).
    pub fn system_user(&self) -> Option<(&str, &str)> {
        let sys = self.system_account.as_deref()?;
        self.accounts
            .iter()
            .find(|a| a.name == sys)?
            .users
            .iter()
            .find_map(|u| match u {
                User::Password { user, password } => Some((user.as_str(), password.as_str())),
                User::Nkey(_) => None,
            })
    }
}

/// A `$VAR` reference nats-server resolves from its environment (written bare: quoted it is text).
pub fn is_env_ref(s: &str) -> bool {
    let mut c = s.chars();
    c.next() == Some('$')
        && c.next().is_some_and(|x| x.is_ascii_alphabetic() || x == '_')
        && s[2..].chars().all(|x| x.is_ascii_alphanumeric() || x == '_')
}

fn secret(s: &str) -> String {
    if is_env_ref(s) {
        s.to_string()
    } else {
        q(s)
    }
}

fn tls_block(indent: &str, t: &Tls, verify: bool) -> String {
    let mut o = format!("{indent}tls {{\n");
    o.push_str(&format!("{indent}  cert_file: {}\n", q(&t.cert_file)));
    o.push_str(&format!("{indent}  key_file: {}\n", q(&t.key_file)));
    if let Some(ca) = &t.ca_file {
        o.push_str(&format!("{indent}  ca_file: {}\n", q(ca)));
    }
    if verify {
        o.push_str(&format!("{indent}  verify: true\n"));
    }
    o.push_str(&format!("{indent}}}\n"));
    o
}

fn accounts_block(s: &Security) -> String {
    if s.accounts.is_empty() {
        return String::new();
    }
    let mut o = String::from("\naccounts {\n");
    for a in &s.accounts {
        o.push_str(&format!("  {}: {{\n", key(&a.name)));
        if a.jetstream {
            o.push_str("    jetstream: enabled\n");
        }
        o.push_str("    users: [\n");
        for u in &a.users {
            match u {
                User::Password { user, password } => o.push_str(&format!(
                    "      {{ user: {}, password: {} }}\n",
                    q(user),
                    secret(password)
                )),
                User::Nkey(k) => o.push_str(&format!("      {{ nkey: {} }}\n", q(k))),
            }
        }
        o.push_str("    ]\n  }\n");
    }
    o.push_str("}\n");
    if let Some(sys) = &s.system_account {
        o.push_str(&format!("system_account: {}\n", q(sys)));
    }
    o
}

/// Render the configuration file.
pub fn render(c: &ServerConf) -> String {
    render_secured(c, &Security::default())
}

/// Render the configuration file with accounts and TLS.
pub fn render_secured(c: &ServerConf, sec: &Security) -> String {
    let mut o = String::new();
    for line in &c.header {
        // A comment ends at the line's end: a line break (or any control character) in a name would start
        // a line nats-server parses.
        let line: String = line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        o.push_str(&format!("# {line}\n"));
    }
    if !c.header.is_empty() {
        o.push('\n');
    }
    o.push_str(&format!("server_name: {}\n", q(&c.server_name)));
    o.push_str(&format!("listen: {}\n", q(&c.client_listen)));
    if let Some(m) = &c.monitor_listen {
        o.push_str(&format!("http: {}\n", q(m)));
    }
    if !c.tags.is_empty() {
        let tags: Vec<String> = c.tags.iter().map(|t| q(&t.trim().to_lowercase())).collect();
        o.push_str(&format!("server_tags: [{}]\n", tags.join(", ")));
    }
    if let Some(t) = &sec.tls {
        o.push('\n');
        o.push_str(&tls_block("", t, t.verify));
    } else if let Some(t) = &c.client_tls {
        o.push_str(&format!(
            "\ntls {{\n  cert_file: {}\n  key_file: {}\n}}\n",
            q(&t.cert_file),
            q(&t.key_file)
        ));
    }
    o.push_str(&accounts_block(sec));
    o.push_str("\njetstream {\n");
    o.push_str(&format!("  store_dir: {}\n", q(&c.store_dir)));
    if let Some(b) = c.max_file_store_bytes {
        o.push_str(&format!("  max_file_store: {b}\n"));
    }
    if let Some(b) = c.max_memory_store_bytes {
        o.push_str(&format!("  max_memory_store: {b}\n"));
    }
    if let Some(u) = &c.unique_tag {
        o.push_str(&format!("  unique_tag: {}\n", q(&u.trim().to_lowercase())));
    }
    o.push_str(&format!("  sync_interval: {}\n", q(&c.sync.config_value())));
    if let Some(n) = c.max_ha_assets {
        o.push_str(&format!("  limits {{\n    max_ha_assets: {n}\n  }}\n"));
    }
    o.push_str("}\n");
    if c.routes.is_empty() {
        // A single server runs standalone: nats-server refuses JetStream in a cluster block without routes.
        return o;
    }
    o.push_str("\ncluster {\n");
    o.push_str(&format!("  name: {}\n", q(&c.cluster_name)));
    o.push_str(&format!("  listen: {}\n", q(&c.cluster_listen)));
    if let Some(t) = sec.tls.as_ref().filter(|t| t.routes) {
        o.push_str(&tls_block("  ", t, true));
    }
    o.push_str("  routes: [\n");
    for r in &c.routes {
        o.push_str(&format!("    {}\n", q(r)));
    }
    o.push_str("  ]\n}\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_tags_lower_case_and_every_jetstream_setting() {
        let c = ServerConf {
            server_name: "nats-a1".into(),
            client_listen: "0.0.0.0:4222".into(),
            monitor_listen: Some("0.0.0.0:8222".into()),
            tags: vec!["rack:A".into(), "array:A1".into()],
            store_dir: "/data/nats".into(),
            max_file_store_bytes: Some(1_000_000),
            max_memory_store_bytes: None,
            unique_tag: Some("rack:".into()),
            sync: SyncMode::Always,
            max_ha_assets: Some(2000),
            cluster_name: "c1".into(),
            cluster_listen: "0.0.0.0:6222".into(),
            routes: vec!["nats-route://nats-b1:6222".into()],
            header: vec!["hello".into()],
            client_tls: None,
        };
        let t = render(&c);
        assert!(!t.contains("tls {"));
        let tls = render(&ServerConf {
            client_tls: Some(ClientTls {
                cert_file: "/etc/nats/server.pem".into(),
                key_file: "/etc/nats/server-key.pem".into(),
            }),
            ..c.clone()
        });
        assert!(
            tls.contains("tls {\n  cert_file: \"/etc/nats/server.pem\"\n  key_file: \"/etc/nats/server-key.pem\"\n}")
        );
        assert!(t.starts_with("# hello\n"));
        assert!(t.contains(r#"server_tags: ["rack:a", "array:a1"]"#));
        assert!(t.contains("max_file_store: 1000000"));
        assert!(t.contains(r#"unique_tag: "rack:""#));
        assert!(t.contains(r#"sync_interval: "always""#));
        assert!(t.contains("max_ha_assets: 2000"));
        assert!(t.contains(r#""nats-route://nats-b1:6222""#));
        assert!(!t.contains("max_memory_store"));
    }

    #[test]
    fn strings_are_quoted_with_the_escapes_nats_servers_lexer_knows() {
        // conf/lex.go lexStringEscape: \\ \" \t \n \r \xHH, nothing else (JSON's \u0001 is an error there).
        assert_eq!(q("plain"), r#""plain""#);
        assert_eq!(q("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(q("t\tn\nr\r"), r#""t\tn\nr\r""#);
        assert_eq!(q("x\u{1}y\u{7f}\u{8}\u{c}"), r#""x\x01y\x7f\x08\x0c""#);
        assert_eq!(q("$VAR ünï"), r#""$VAR ünï""#);
        // A name with a line break cannot start a line nats-server parses from a comment.
        let t = render(&ServerConf {
            header: vec!["evil\nlisten: 0.0.0.0:1".into()],
            ..conf("a")
        });
        assert!(t.starts_with("# evil listen: 0.0.0.0:1\n"), "{t}");
    }

    fn conf(name: &str) -> ServerConf {
        ServerConf {
            server_name: name.into(),
            client_listen: "0.0.0.0:4222".into(),
            monitor_listen: None,
            tags: vec![],
            store_dir: "/d".into(),
            max_file_store_bytes: None,
            max_memory_store_bytes: None,
            unique_tag: None,
            sync: SyncMode::Always,
            max_ha_assets: None,
            cluster_name: "c".into(),
            cluster_listen: "0.0.0.0:6222".into(),
            routes: vec![],
            header: vec![],
            client_tls: None,
        }
    }

    #[test]
    fn accounts_users_and_tls_render_as_nats_server_reads_them() {
        let c = ServerConf {
            server_name: "a".into(),
            client_listen: "0.0.0.0:4222".into(),
            monitor_listen: None,
            tags: vec![],
            store_dir: "/d".into(),
            max_file_store_bytes: None,
            max_memory_store_bytes: None,
            unique_tag: None,
            sync: SyncMode::Always,
            max_ha_assets: None,
            cluster_name: "c".into(),
            cluster_listen: "0.0.0.0:6222".into(),
            routes: vec!["nats-route://b:6222".into()],
            header: vec![],
            client_tls: None,
        };
        let sec = Security {
            accounts: vec![
                Account {
                    name: "APP".into(),
                    jetstream: true,
                    users: vec![
                        User::Password {
                            user: "app".into(),
                            password: "$APP_PASSWORD".into(),
                        },
                        User::Password {
                            user: "b".into(),
                            password: "$2a$11$hash".into(),
                        },
                        User::Nkey("UABC".into()),
                    ],
                },
                Account {
                    name: "SYS".into(),
                    jetstream: false,
                    users: vec![],
                },
            ],
            system_account: Some("SYS".into()),
            tls: Some(Tls {
                cert_file: "/c.pem".into(),
                key_file: "/k.pem".into(),
                ca_file: Some("/ca.pem".into()),
                verify: true,
                routes: true,
            }),
        };
        let t = render_secured(&c, &sec);
        assert!(t.contains("{ user: \"app\", password: $APP_PASSWORD }"), "{t}");
        assert!(t.contains("{ user: \"b\", password: \"$2a$11$hash\" }"), "{t}");
        assert!(t.contains("{ nkey: \"UABC\" }"), "{t}");
        assert!(t.contains("  \"APP\": {\n    jetstream: enabled\n"), "{t}");
        assert!(t.contains("system_account: \"SYS\""), "{t}");
        assert!(
            t.contains(
                "\ntls {\n  cert_file: \"/c.pem\"\n  key_file: \"/k.pem\"\n  ca_file: \"/ca.pem\"\n  verify: true\n}"
            ),
            "{t}"
        );
        assert!(t.contains("  tls {\n    cert_file"), "{t}");
        assert_eq!(render(&c), render_secured(&c, &Security::default()));
        assert!(is_env_ref("$A_1") && !is_env_ref("$2a$") && !is_env_ref("A"));
        // A deploy file's own system account is kept; none given: natsplan's is added beside the others.
        assert_eq!(sec.clone().with_system_account(), sec);
        let added = Security {
            accounts: sec.accounts[..1].to_vec(),
            system_account: None,
            ..sec.clone()
        }
        .with_system_account();
        assert_eq!(added.accounts.len(), 2);
        assert_eq!(added.system_user(), Some(("sys", "$NATS_SYSTEM_PASSWORD")));
        assert!(!added.anonymous_clients());
    }

    #[test]
    fn the_system_account_alone_keeps_anonymous_clients_and_reads_its_password_from_the_environment() {
        let sec = Security::system_only();
        assert!(sec.anonymous_clients());
        let c = ServerConf {
            server_name: "a".into(),
            client_listen: "0.0.0.0:4222".into(),
            monitor_listen: None,
            tags: vec![],
            store_dir: "/d".into(),
            max_file_store_bytes: None,
            max_memory_store_bytes: None,
            unique_tag: None,
            sync: SyncMode::Always,
            max_ha_assets: None,
            cluster_name: "c".into(),
            cluster_listen: "0.0.0.0:6222".into(),
            routes: vec![],
            header: vec![],
            client_tls: None,
        };
        let t = render_secured(&c, &sec);
        assert!(
            t.contains(
                "accounts {\n  \"SYS\": {\n    users: [\n      { user: \"sys\", password: $NATS_SYSTEM_PASSWORD }\n"
            ),
            "{t}"
        );
        assert!(t.contains("system_account: \"SYS\""), "{t}");
        // Anything that would stop nats-server adding the no-auth user for the global account is absent.
        assert!(!t.contains("authorization") && !t.contains("no_auth_user") && !t.contains("jetstream: enabled"));
    }
}
