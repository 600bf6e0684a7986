//! Large per-asset lists written into a JSON report one entry at a time.
//!
//! Reports go through `serde_json::Value` so that keys come out sorted (the JSON contract's order since the
//! first release). On large sites the top-ranked layout's `assets`, `predicted.streams` and
//! `yearly.assets` are most of the plan, and as `Value`s they would double the memory the plan takes
//! (docs/scale.md has the figures). Inside `with_markers`, those lists
//! serialise as a marker string naming the list's address; `splice` then writes each entry into the
//! pretty-printed text where its marker stands, one `Value` at a time. The bytes are the same as printing
//! the whole `Value`: the entries are printed by the same formatter at the marker's depth.

use rayon::prelude::*;
use serde::{Serialize, Serializer};
use std::cell::Cell;
use std::collections::HashMap;
use std::io::Write;

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

/// A list the report may hold a marker for: its address and a way to print entry `i` (pretty, unindented).
pub struct Source<'a> {
    addr: usize,
    len: usize,
    entry: Box<dyn Fn(usize) -> Vec<u8> + Sync + 'a>,
}

impl<'a> Source<'a> {
    /// Entries printed through a `Value` (keys sorted), for a report printed from a `Value`.
    pub fn of<T: Serialize + Sync>(v: &'a [T]) -> Source<'a> {
        Source {
            addr: v.as_ptr() as usize,
            len: v.len(),
            entry: Box::new(move |i| {
                let value = serde_json::to_value(&v[i]).expect("an entry always serialises");
                serde_json::to_vec_pretty(&value).expect("a value always serialises")
            }),
        }
    }

    /// Entries printed straight from their type (keys in field order), for a report serialised straight
    /// from its types (`simulate`).
    pub fn of_typed<T: Serialize + Sync>(v: &'a [T]) -> Source<'a> {
        Source {
            addr: v.as_ptr() as usize,
            len: v.len(),
            entry: Box::new(move |i| serde_json::to_vec_pretty(&v[i]).expect("an entry always serialises")),
        }
    }
}

/// `pretty` (serde_json's pretty print of a value serialised inside `with_markers`) with each marker
/// replaced by its list, printed as the formatter would print it at the marker's depth, written to `w` as
/// it is made: the lists' text, which grows with the assets, is never held whole, and the entries of
/// the next batch are printed on the other cores while one batch is written.
pub fn splice(pretty: &[u8], sources: Vec<Source<'_>>, w: &mut (dyn Write + Send)) -> std::io::Result<()> {
    let by_addr: HashMap<usize, Source<'_>> = sources.into_iter().filter(|s| s.len > 0).map(|s| (s.addr, s)).collect();
    // How the marker reads in JSON: `"\u0000natsplan-splice:` then hex digits and `"`.
    let needle = b"\"\\u0000natsplan-splice:";
    // The indentation of the line being written (its leading spaces so far).
    let mut indent = 0;
    let mut rest = pretty;
    while let Some(at) = find(rest, needle) {
        let (before, tail) = rest.split_at(at);
        w.write_all(before)?;
        indent = match before.iter().rposition(|&b| b == b'\n') {
            Some(p) => before[p + 1..].iter().take_while(|&&b| b == b' ').count(),
            None if before.iter().all(|&b| b == b' ') => indent + before.len(),
            None => indent,
        };
        let digits = &tail[needle.len()..];
        let end = digits
            .iter()
            .position(|&b| b == b'"')
            .expect("a marker ends with a quote");
        let addr = usize::from_str_radix(std::str::from_utf8(&digits[..end]).expect("hex digits"), 16)
            .expect("a marker holds an address");
        let src = by_addr.get(&addr).expect("every marker has its list");
        let inner = " ".repeat(indent + 2);
        w.write_all(b"[")?;
        // Entries are printed on every core, a batch at a time and in order; batch k is written while
        // batch k + 1 is printed.
        const BATCH: usize = 4096;
        let render = |start: usize| -> Vec<u8> {
            let texts: Vec<Vec<u8>> = (start..(start + BATCH).min(src.len))
                .into_par_iter()
                .map(|i| entry_text(&(src.entry)(i), &inner, i == 0))
                .collect();
            texts.concat()
        };
        let mut ready = render(0);
        for next in (BATCH..src.len).step_by(BATCH) {
            let (written, printed) = rayon::join(|| w.write_all(&ready), || render(next));
            written?;
            ready = printed;
        }
        w.write_all(&ready)?;
        w.write_all(b"\n")?;
        w.write_all(" ".repeat(indent).as_bytes())?;
        w.write_all(b"]")?;
        rest = &digits[end + 1..];
    }
    w.write_all(rest)
}

/// Entry `text` (pretty-printed at the top level) as the formatter prints it one level inside a list whose entries are indented by `inner`,
/// with the separator before it (`\n`, or `,\n` after the first).
fn entry_text(text: &[u8], inner: &str, first: bool) -> Vec<u8> {
    let lines = text.iter().filter(|&&b| b == b'\n').count() + 1;
    let mut out = Vec::with_capacity(2 + text.len() + lines * inner.len());
    out.extend_from_slice(if first { b"\n" } else { b",\n" });
    // Every line of the entry one level deeper (JSON strings hold no raw newlines).
    for (j, line) in text.split(|&b| b == b'\n').enumerate() {
        if j > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(inner.as_bytes());
        out.extend_from_slice(line);
    }
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
        let mut spliced = Vec::new();
        splice(
            &pretty,
            vec![Source::of(&d.items), Source::of(&d.inner.deep), Source::of(&d.empty)],
            &mut spliced,
        )
        .unwrap();
        assert_eq!(String::from_utf8(spliced).unwrap(), String::from_utf8(whole).unwrap());
    }

    #[test]
    fn lists_longer_than_a_batch_are_spliced_whole_and_in_order() {
        // 10,001 entries: two full batches of 4,096, written while the next is printed, and a partial one.
        let mut d = doc();
        d.inner.deep = (0..10_001)
            .map(|i| Entry {
                name: format!("n{i}"),
                z: i,
                a: vec![(i % 7) as u8],
            })
            .collect();
        let whole = serde_json::to_vec_pretty(&serde_json::to_value(&d).unwrap()).unwrap();
        let marked = with_markers(|| serde_json::to_value(&d).unwrap());
        let pretty = serde_json::to_vec_pretty(&marked).unwrap();
        let mut streamed = Vec::new();
        splice(
            &pretty,
            vec![Source::of(&d.items), Source::of(&d.inner.deep)],
            &mut streamed,
        )
        .unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), String::from_utf8(whole).unwrap());
    }

    #[test]
    fn outside_with_markers_lists_serialise_as_lists() {
        let d = doc();
        let _ = with_markers(|| serde_json::to_value(&d).unwrap());
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["items"].as_array().unwrap().len(), 3);
    }
}
