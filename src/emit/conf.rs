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

/// A string as nats-server's config parser reads it (double-quoted, JSON escapes).
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("strings always serialise")
}

/// Render the configuration file.
pub fn render(c: &ServerConf) -> String {
    let mut o = String::new();
    for line in &c.header {
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
    if let Some(t) = &c.client_tls {
        o.push_str(&format!(
            "\ntls {{\n  cert_file: {}\n  key_file: {}\n}}\n",
            q(&t.cert_file),
            q(&t.key_file)
        ));
    }
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
}
