//! What a stream, KV bucket, object-store or durable-consumer name may hold: one set of rules that site
//! validation (`design`, with the name's place) and `emit` (before it writes) both apply, so a name design
//! accepts is one emit can write and nats-server and the NATS clients take.
//!
//! - nats-server refuses asset names that are empty or hold whitespace, `.`, `*`, `>`, `/` or `\`
//!   (server/jetstream.go `isValidAssetName`, for streams and consumers) and names over 255 bytes
//!   (`JSMaxNameLen`, server/jetstream_api.go); natsplan keeps 250 (`limits::MAX_ASSET_NAME_BYTES`) so that
//!   `<name>.json` fits a file name (NAME_MAX 255).
//! - The NATS clients open a KV bucket or object store only by a name of ASCII letters, digits, `-` and `_`
//!   (nats.go kv.go and object.go `validBucketRe = ^[a-zA-Z0-9_-]+$`; async-nats the same).
//! - Control characters, and characters that are not drawn but change how the text around them is drawn
//!   (bidirectional controls such as U+202E, zero-width ones such as U+200B, the rest of Unicode's
//!   default-ignorable code points), pass nats-server but make a name that reads as another in every
//!   listing, log and file name: refused.

use crate::input::limits::MAX_ASSET_NAME_BYTES;

/// A character that is not drawn: Unicode's `Default_Ignorable_Code_Point` set (zero-width spaces and
/// joiners, the soft hyphen, variation selectors, tags, fillers) and the bidirectional controls
/// (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069), which reorder the text after them.
pub fn is_invisible(c: char) -> bool {
    matches!(c as u32,
        0x00AD | 0x034F | 0x061C | 0x115F..=0x1160 | 0x17B4..=0x17B5 | 0x180B..=0x180F
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF
        | 0xFFA0 | 0xFFF0..=0xFFFB | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF)
}

/// The first control or invisible character of `s`, described (`a control character (U+0001)`, `an
/// invisible character (U+202E)`), if any.
pub fn hidden_char(s: &str) -> Option<String> {
    s.chars().find(|&c| c.is_control() || is_invisible(c)).map(|c| {
        if c.is_control() {
            format!("a control character (U+{:04X})", c as u32)
        } else {
            format!("an invisible character (U+{:04X})", c as u32)
        }
    })
}

/// What kind of name: the rules differ (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    Stream,
    /// A KV bucket or an object store.
    Bucket,
    /// A durable consumer (written as `consumers/<stream>/<name>.json`).
    Consumer,
}

/// Why `name` cannot be used as a `kind` name, in words that fit after the quoted name ("'x' …"), or None.
pub fn problem(kind: NameKind, name: &str) -> Option<String> {
    if name.len() > MAX_ASSET_NAME_BYTES {
        return Some(format!(
            "is {} bytes long; at most {MAX_ASSET_NAME_BYTES} (nats-server's limit is 255 bytes and the emitted \
             <name>.json must fit a file name)",
            name.len()
        ));
    }
    if let Some(c) = hidden_char(name) {
        return Some(format!(
            "holds {c}: a control, zero-width or text-direction character makes the name read as another"
        ));
    }
    match kind {
        NameKind::Bucket
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            Some(
                "is not a name the NATS clients open as a KV bucket or object store (letters, digits, '-' and '_' \
                 only: nats.go validBucketRe)"
                    .into(),
            )
        }
        _ if name.is_empty() || name.chars().any(|c| c.is_whitespace() || ".*>/\\".contains(c)) => {
            Some("is not a valid name for nats-server (no spaces, '.', '*', '>', '/' or '\\')".into())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_nats_server_and_the_clients_take_and_the_ones_they_do_not() {
        assert_eq!(problem(NameKind::Stream, "orders-EU_1"), None);
        // nats-server takes any visible character but its separators in a stream name.
        assert_eq!(problem(NameKind::Stream, "ørders+eu"), None);
        assert!(problem(NameKind::Bucket, "ørders").unwrap().contains("validBucketRe"));
        assert!(problem(NameKind::Stream, "orders.eu").unwrap().contains("'.'"));
        assert!(problem(NameKind::Consumer, "").is_some());
        let rtl = problem(NameKind::Stream, "ev\u{202e}ents").unwrap();
        assert!(rtl.contains("U+202E"), "{rtl}");
        assert!(problem(NameKind::Consumer, "a\u{200b}b").unwrap().contains("U+200B"));
        assert!(problem(NameKind::Stream, "a\u{1}b").unwrap().contains("U+0001"));
        assert!(problem(NameKind::Stream, &"o".repeat(251))
            .unwrap()
            .contains("251 bytes"));
        assert_eq!(problem(NameKind::Stream, &"o".repeat(250)), None);
    }
}
