//! Units as users write them: sizes (`512B`, `1KiB`, `3.84TB`), durations (`30s`, `2m`, `24h`, `1y`)
//! and the nats-server `sync_interval` value (`always` or a duration).
//!
//! Sizes use binary prefixes for `KiB`/`MiB`/… and decimal ones for `KB`/`MB`/`TB`, because disk vendors
//! sell decimal terabytes while NATS and Linux report binary sizes; mixing them silently is the classic
//! 10 % sizing error.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// Parse a size such as `512B`, `1KiB`, `1.5 GiB`, `3.84TB` or a bare number of bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty size; write e.g. 512B, 1KiB, 4GiB or 3.84TB".into());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: f64 = num
        .replace('_', "")
        .parse()
        .map_err(|_| format!("'{t}' is not a size; write e.g. 512B, 1KiB, 4GiB or 3.84TB"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "p" | "pb" => 1e15,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0f64.powi(3),
        "tib" => 1024.0f64.powi(4),
        "pib" => 1024.0f64.powi(5),
        other => {
            return Err(format!(
                "unknown size unit '{other}' in '{t}'; use B, KiB, MiB, GiB, TiB (binary) or KB, MB, GB, TB (decimal)"
            ))
        }
    };
    let bytes = num * mult;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("size '{t}' is out of range"));
    }
    Ok(bytes.round() as u64)
}

/// Parse a duration in humantime form (`30s`, `2m`, `24h`, `7d`, `1y`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim()).map_err(|e| {
        format!(
            "'{}' is not a duration ({e}); write e.g. 30s, 2m, 24h, 7d or 1y",
            text.trim()
        )
    })
}

/// Seconds in a (Julian) year, the unit of every yearly figure.
pub const YEAR_S: f64 = 365.25 * 86_400.0;

/// Format bytes with binary prefixes, 3 significant digits (`1.50 TiB`).
pub fn fmt_bytes(bytes: f64) -> String {
    // 2⁶⁴ B is where u64 sums saturate: a figure there is an overflow, not 16384 PiB.
    if !bytes.is_finite() || bytes.abs() >= u64::MAX as f64 {
        return "overflowed (≥ 16 EiB)".into();
    }
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes;
    let mut i = 0;
    while v.abs() >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else if v.abs() >= 100.0 {
        format!("{v:.0} {}", units[i])
    } else if v.abs() >= 10.0 {
        format!("{v:.1} {}", units[i])
    } else {
        format!("{v:.2} {}", units[i])
    }
}

/// Format a duration compactly (`45 s`, `12 min`, `3.2 h`).
pub fn fmt_secs(secs: f64) -> String {
    if !secs.is_finite() {
        return "overflowed".into();
    }
    if secs < 120.0 {
        format!("{secs:.0} s")
    } else if secs < 7200.0 {
        format!("{:.0} min", secs / 60.0)
    } else if secs < 3.0 * 86_400.0 {
        format!("{:.1} h", secs / 3600.0)
    } else {
        format!("{:.1} d", secs / 86_400.0)
    }
}

/// The longest duration nats-server reads from its configuration, in whole seconds: it parses durations with
/// Go's `time.ParseDuration` (server/opts.go `parseDuration`), whose `time.Duration` is an int64 of
/// nanoseconds (2⁶³−1 ns = 9,223,372,036.85 s, about 292 years); a longer one is "invalid duration".
pub const MAX_GO_DURATION_S: u64 = (i64::MAX as u64) / 1_000_000_000;

/// How nats-server flushes JetStream writes: `sync_interval: always` or a periodic interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMode {
    /// fsync after every write batch: acknowledged means on disk.
    Always,
    /// Periodic fsync; the value is the interval in seconds (nats-server default 120).
    Interval(u64),
}

impl SyncMode {
    pub fn parse(text: &str) -> Result<SyncMode, String> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("always") {
            return Ok(SyncMode::Always);
        }
        let d = parse_duration(t).map_err(|_| {
            format!("sync_interval '{t}' is neither 'always' nor a duration; write e.g. always, 10s or 2m")
        })?;
        if d.as_secs() == 0 {
            return Err("sync_interval must be at least 1s, or 'always'".into());
        }
        if d.as_secs() > MAX_GO_DURATION_S {
            return Err(format!(
                "sync_interval '{t}' is longer than nats-server reads (a Go duration: at most {MAX_GO_DURATION_S} s, \
                 about 292 years); write e.g. always, 10s or 2m"
            ));
        }
        Ok(SyncMode::Interval(d.as_secs()))
    }

    /// True when acknowledged writes may sit only in the page cache.
    pub fn is_delayed(self) -> bool {
        matches!(self, SyncMode::Interval(_))
    }

    /// The window in which acknowledged but unsynced writes can vanish on a power loss: the shorter of the
    /// sync interval and the kernel's dirty-page expiry (`vm.dirty_expire_centisecs`, 30 s by default).
    pub fn loss_window_s(self, dirty_expire_s: f64) -> f64 {
        match self {
            SyncMode::Always => 0.0,
            SyncMode::Interval(s) => (s as f64).min(dirty_expire_s),
        }
    }

    /// The value as nats-server's configuration takes it.
    pub fn config_value(self) -> String {
        match self {
            SyncMode::Always => "always".into(),
            SyncMode::Interval(s) if s % 60 == 0 => format!("{}m", s / 60),
            SyncMode::Interval(s) => format!("{s}s"),
        }
    }
}

impl fmt::Display for SyncMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.config_value())
    }
}

/// Stable 64-bit FNV-1a: layout ids must not change between Rust versions or runs (std's hasher may).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A probability or yearly rate: three decimals, or scientific notation when small; exactly 0 stays "0".
pub fn fmt_sci(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.2e}")
    }
}

/// Whether `s` is a valid NATS subject filter: non-empty tokens separated by '.', no white space,
/// `*` only as a whole token and `>` only as the whole last token.
pub fn check_subject(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("it is empty".into());
    }
    if s.chars().any(char::is_whitespace) {
        return Err("it contains white space".into());
    }
    let tokens: Vec<&str> = s.split('.').collect();
    for (i, t) in tokens.iter().enumerate() {
        if t.is_empty() {
            return Err("it has an empty token (two dots, or a dot at an end)".into());
        }
        if t.contains('>') && (*t != ">" || i + 1 != tokens.len()) {
            return Err("'>' may only stand alone as the last token".into());
        }
        if t.contains('*') && *t != "*" {
            return Err("'*' must be a whole token".into());
        }
    }
    Ok(())
}

/// Whether two subject filters can match a common subject (nats-server refuses streams that overlap).
pub fn subjects_overlap(a: &str, b: &str) -> bool {
    tokens_overlap(a.split('.'), b.split('.'))
}

/// `subjects_overlap` on subjects already split into tokens, token by token and without allocating:
/// pairwise checks over many subjects split each once and call this.
pub fn tokens_overlap<'a>(mut a: impl Iterator<Item = &'a str>, mut b: impl Iterator<Item = &'a str>) -> bool {
    loop {
        match (a.next(), b.next()) {
            (Some(">"), Some(_)) | (Some(_), Some(">")) => return true,
            (None, None) => return true,
            (None, _) | (_, None) => return false,
            (Some(x), Some(y)) if x == y || x == "*" || y == "*" => {}
            _ => return false,
        }
    }
}

/// Why nats-server refuses `s` as a subject of an acknowledged stream (natsplan's streams are; it never
/// writes `no_ack`), or None. nats-server `server/stream.go` 2.14.6 lines 2170–2196 (`checkStreamCfg`):
/// `>` needs `no_ack` and R1; a subject colliding with `$JS.>`, `$JSC.>` or `$NRG.>` (but inside
/// `$JS.EVENT.>`) or with `$SYS.>` (but inside `$SYS.ACCOUNT.>`) needs `no_ack`.
pub fn reserved_subject(s: &str) -> Option<&'static str> {
    if s == ">" {
        return Some(
            "captures every subject, the JetStream API's included; nats-server takes that only for a no_ack R1 stream",
        );
    }
    let jetstream = ["$JS.>", "$JSC.>", "$NRG.>"].iter().any(|api| subjects_overlap(s, api));
    if jetstream && !s.starts_with("$JS.EVENT.") {
        return Some(
            "overlaps the JetStream API ($JS.>, $JSC.>, $NRG.>), which nats-server refuses for an acknowledged stream",
        );
    }
    if subjects_overlap(s, "$SYS.>") && !s.starts_with("$SYS.ACCOUNT.") {
        return Some("overlaps the system API ($SYS.>), which nats-server refuses for an acknowledged stream");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_nats_server_refuses_for_an_acknowledged_stream() {
        for s in [
            ">",
            "$JS.API.>",
            "$JS.>",
            "*.*",
            "*.>",
            "$JSC.x",
            "$NRG.>",
            "$SYS.SERVER.>",
            "$SYS.>",
        ] {
            assert!(reserved_subject(s).is_some(), "{s}");
        }
        for s in [
            "orders.>",
            "*",
            "a.*",
            "$JSX.a",
            "$JS.EVENT.ADVISORY.>",
            "$SYS.ACCOUNT.>",
            "$KV.cfg.>",
        ] {
            assert_eq!(reserved_subject(s), None, "{s}");
        }
    }

    #[test]
    fn sizes_binary_and_decimal() {
        assert_eq!(parse_size("512B").unwrap(), 512);
        assert_eq!(parse_size("1KiB").unwrap(), 1024);
        assert_eq!(parse_size("1 MiB").unwrap(), 1 << 20);
        assert_eq!(parse_size("3.84TB").unwrap(), 3_840_000_000_000);
        assert_eq!(parse_size("128").unwrap(), 128);
        assert!(parse_size("12 parsecs").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("").is_err());
        assert!(parse_size("-1KiB").is_err());
    }

    #[test]
    fn sync_modes() {
        assert_eq!(SyncMode::parse("always").unwrap(), SyncMode::Always);
        assert_eq!(SyncMode::parse("2m").unwrap(), SyncMode::Interval(120));
        assert_eq!(SyncMode::Interval(120).config_value(), "2m");
        assert_eq!(SyncMode::Interval(10).config_value(), "10s");
        assert_eq!(SyncMode::Interval(120).loss_window_s(30.0), 30.0);
        assert_eq!(SyncMode::Always.loss_window_s(30.0), 0.0);
        assert!(SyncMode::parse("sometimes").is_err());
        // nats-server reads durations as Go's int64 nanoseconds: 292 years is the end.
        assert!(SyncMode::parse("300y").unwrap_err().contains("292 years"));
        let longest = SyncMode::parse(&format!("{MAX_GO_DURATION_S}s")).unwrap();
        assert!(
            SyncMode::parse(&format!("{}s", MAX_GO_DURATION_S + 1)).is_err(),
            "{longest:?}"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("24h").unwrap().as_secs(), 86_400);
        assert!(parse_duration("1y").unwrap().as_secs() > 365 * 86_400);
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn sci_keeps_zero_and_switches_to_exponent_below_a_hundredth() {
        assert_eq!(fmt_sci(0.0), "0");
        assert_eq!(fmt_sci(0.25), "0.250");
        assert_eq!(fmt_sci(0.0012), "1.20e-3");
    }

    #[test]
    fn subjects_are_checked_and_overlaps_found() {
        for ok in ["orders", "orders.>", "a.*.c", "*", ">"] {
            assert!(check_subject(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a..b", ".a", "a.", "a.>.b", "a>", "a*.b", "a b"] {
            assert!(check_subject(bad).is_err(), "{bad}");
        }
        assert!(subjects_overlap("orders.>", "orders.eu.created"));
        assert!(subjects_overlap("orders.*.created", "orders.eu.*"));
        assert!(subjects_overlap(">", "x"));
        assert!(!subjects_overlap("orders.>", "orders"));
        assert!(!subjects_overlap("orders.*", "orders.eu.created"));
        assert!(!subjects_overlap("orders.>", "payments.>"));
    }

    #[test]
    fn saturated_figures_say_they_overflowed() {
        assert_eq!(fmt_bytes(u64::MAX as f64), "overflowed (≥ 16 EiB)");
        assert_eq!(fmt_bytes(f64::INFINITY), "overflowed (≥ 16 EiB)");
        assert_eq!(fmt_bytes(1.5 * 1024f64.powi(4)), "1.50 TiB");
        assert_eq!(fmt_bytes(2.0 * 1024f64.powi(5)), "2.00 PiB");
        assert_eq!(fmt_secs(f64::INFINITY), "overflowed");
        assert_eq!(fmt_secs(45.0), "45 s");
    }
}
