//! Large per-asset lists written into a JSON report one entry at a time.
//!
//! Reports go through `serde_json::Value` so that keys come out sorted (the JSON contract's order since the
//! first release). On a site of 100,000 assets the top-ranked layout's `assets`, `predicted.streams` and
//! `yearly.assets` are most of the plan, and as `Value`s they took about 700 MiB beside the plan itself
//! (design --format json peaked at 1.49 GiB against 774 MiB for the table). Inside `with_markers`, those lists
//! serialise as a marker string naming the list's address; `splice` then writes each entry into the
//! pretty-printed text where its marker stands, one `Value` at a time. The bytes are the same as printing
//! the whole `Value`: the entries are printed by the same formatter at the marker's depth.

use serde::{Serialize, Serializer};
use std::cell::Cell;
use std::collections::HashMap;

thread_local! {
    static MARKING: Cell<bool> = const { Cell::new(false) };
}

const MARK: &str = "\u{0}natsplan-splice:";

/// `serialize_with` for a list that may be spliced: its marker inside `with_markers`, else the list.
pub fn list<T: Serialize, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
    if !v.is_empty() && MARKING.with(|m| m.get()) {
        s.serialize_str(&format!("{MARK}{:x}", v.as_ptr() as usize))
    } else {
        v.serialize(s)
    }
}

/// Run `f` with the lists serialising as markers (restored on the way out, a panic included).
pub fn with_markers<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            MARKING.with(|m| m.set(self.0));
        }
    }
    let _reset = Reset(MARKING.with(|m| m.replace(true)));
    f()
}

/// A list the report may hold a marker for: its address and a way to print entry `i` as a `Value`.
pub struct Source<'a> {
    addr: usize,
    len: usize,
    entry: Box<dyn Fn(usize) -> serde_json::Value + 'a>,
}

impl<'a> Source<'a> {
    pub fn of<T: Serialize>(v: &'a [T]) -> Source<'a> {
        Source {
            addr: v.as_ptr() as usize,
            len: v.len(),
            entry: Box::new(move |i| serde_json::to_value(&v[i]).expect("an entry always serialises")),
        }
    }
}

/// `pretty` (serde_json's pretty print of a value serialised inside `with_markers`) with each marker
/// replaced by its list, printed as the formatter would print it at the marker's depth.
pub fn splice(pretty: &[u8], sources: Vec<Source<'_>>) -> Vec<u8> {
    let by_addr: HashMap<usize, Source<'_>> = sources.into_iter().filter(|s| s.len > 0).map(|s| (s.addr, s)).collect();
    // How the marker reads in JSON: `"\u0000natsplan-splice:` then hex digits and `"`.
    let needle = b"\"\\u0000natsplan-splice:";
    let mut out = Vec::with_capacity(pretty.len());
    let mut rest = pretty;
    while let Some(at) = find(rest, needle) {
        let (before, tail) = rest.split_at(at);
        out.extend_from_slice(before);
        let digits = &tail[needle.len()..];
        let end = digits
            .iter()
            .position(|&b| b == b'"')
            .expect("a marker ends with a quote");
        let addr = usize::from_str_radix(std::str::from_utf8(&digits[..end]).expect("hex digits"), 16)
            .expect("a marker holds an address");
        let src = by_addr.get(&addr).expect("every marker has its list");
        // The key's indentation: the spaces after the last newline before the marker.
        let line_start = out.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let indent = out[line_start..].iter().take_while(|&&b| b == b' ').count();
        let inner = " ".repeat(indent + 2);
        out.push(b'[');
        for i in 0..src.len {
            out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
            let text = serde_json::to_vec_pretty(&(src.entry)(i)).expect("a value always serialises");
            // Every line of the entry one level deeper (JSON strings hold no raw newlines).
            for (j, line) in text.split(|&b| b == b'\n').enumerate() {
                if j > 0 {
                    out.push(b'\n');
                }
                out.extend_from_slice(inner.as_bytes());
                out.extend_from_slice(line);
            }
        }
        out.push(b'\n');
        out.extend_from_slice(" ".repeat(indent).as_bytes());
        out.push(b']');
        rest = &digits[end + 1..];
    }
    out.extend_from_slice(rest);
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Entry {
        name: String,
        z: u32,
        a: Vec<u8>,
    }

    #[derive(Serialize)]
    struct Doc {
        title: String,
        #[serde(serialize_with = "list")]
        items: Vec<Entry>,
        inner: Inner,
        #[serde(serialize_with = "list")]
        empty: Vec<Entry>,
    }

    #[derive(Serialize)]
    struct Inner {
        #[serde(serialize_with = "list")]
        deep: Vec<Entry>,
        b: f64,
    }

    fn doc() -> Doc {
        let e = |i: u32| Entry {
            name: format!("e{i} \"quoted\"\n"),
            z: i,
            a: vec![1, 2],
        };
        Doc {
            title: "t".into(),
            items: (0..3).map(e).collect(),
            inner: Inner {
                deep: (5..7).map(e).collect(),
                b: 0.1,
            },
            empty: vec![],
        }
    }

    #[test]
    fn spliced_text_is_byte_identical_to_the_whole_value_printed() {
        let d = doc();
        let whole = serde_json::to_vec_pretty(&serde_json::to_value(&d).unwrap()).unwrap();
        let marked = with_markers(|| serde_json::to_value(&d).unwrap());
        let pretty = serde_json::to_vec_pretty(&marked).unwrap();
        assert!(pretty.len() < whole.len());
        let spliced = splice(
            &pretty,
            vec![Source::of(&d.items), Source::of(&d.inner.deep), Source::of(&d.empty)],
        );
        assert_eq!(String::from_utf8(spliced).unwrap(), String::from_utf8(whole).unwrap());
    }

    #[test]
    fn outside_with_markers_lists_serialise_as_lists() {
        let d = doc();
        let _ = with_markers(|| serde_json::to_value(&d).unwrap());
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["items"].as_array().unwrap().len(), 3);
    }
}
