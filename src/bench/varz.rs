//! Reads `slow_consumers` from a server's `/varz` so a run can report server-side cut-offs.
//! A tiny HTTP/1.0 GET on loopback or cluster monitor ports; replaced by `crate::monitor` once that lands.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn get(url: &str, path: &str) -> anyhow::Result<serde_json::Value> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| anyhow::anyhow!("--monitor {url}: only http:// URLs are supported"))?;
    let host = rest.trim_end_matches('/');
    let fut = async {
        let mut s = tokio::net::TcpStream::connect(host).await?;
        s.write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
            .await?;
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await?;
        anyhow::Ok(buf)
    };
    let buf = tokio::time::timeout(Duration::from_secs(3), fut)
        .await
        .map_err(|_| anyhow::anyhow!("{url}{path}: timed out"))??;
    let text = String::from_utf8_lossy(&buf);
    let body = text.split_once("\r\n\r\n").map(|x| x.1).unwrap_or("");
    Ok(serde_json::from_str(body)?)
}

/// `slow_consumers` of one server, or None when it cannot be read.
pub async fn slow_consumers(url: &str) -> Option<u64> {
    get(url, "/varz").await.ok()?.get("slow_consumers")?.as_u64()
}

/// Sum over servers; None when no URL was given or none answered.
pub async fn total_slow_consumers(urls: &[String]) -> Option<u64> {
    let mut total = None;
    for u in urls {
        if let Some(n) = slow_consumers(u).await {
            total = Some(total.unwrap_or(0) + n);
        }
    }
    total
}
