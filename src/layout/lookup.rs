//! The workload's specs by name, built once per evaluation: placement, survival and perf look up each asset's
//! rate and size, and a linear search per asset would make those steps quadratic in the assets.
//! The first spec of a name wins, as the linear searches it replaces found it. The maps use FxHash
//! (`crate::fxhash`): they are only looked up, once per asset per pass.
//! An asset made from the workload carries its spec's index (`Asset::spec`); `*_for` read that (the name
//! checked) and each map is built only when a lookup by name needs it. It lives in `layout`, the lowest
//! module that reads it, so perf and survival share it without importing each other (ARCHITECTURE.md).

use crate::fxhash::FxHashMap as HashMap;
use crate::layout::Asset;
use crate::site::{KvSpec, ObjectStoreSpec, Site, StreamSpec};
use std::cell::OnceCell;

/// Index of the site's streams, KV buckets and object stores by name.
pub struct Specs<'a> {
    site: &'a Site,
    streams: OnceCell<HashMap<&'a str, usize>>,
    kv: OnceCell<HashMap<&'a str, usize>>,
    objects: OnceCell<HashMap<&'a str, usize>>,
}

/// Entry `i` of `items` when it is named `name` (the index an asset carries, checked).
fn at_named<'a, T>(items: &'a [T], i: Option<usize>, name: &str, of: impl Fn(&T) -> &str) -> Option<(usize, &'a T)> {
    let i = i?;
    items.get(i).filter(|x| same_text(of(x), name)).map(|x| (i, x))
}

/// `a == b`, compared inline a word at a time: these are short names checked once per asset per
/// evaluation, too short for a call to `memcmp` each to pay.
fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        if x != y {
            return false;
        }
    }
    ca.remainder().iter().zip(cb.remainder()).all(|(x, y)| x == y)
}

fn index<'a, T>(items: &'a [T], name: impl Fn(&'a T) -> &'a str) -> HashMap<&'a str, usize> {
    let mut m = HashMap::with_capacity_and_hasher(items.len(), Default::default());
    for (i, x) in items.iter().enumerate() {
        m.entry(name(x)).or_insert(i);
    }
    m
}

impl<'a> Specs<'a> {
    pub fn new(site: &'a Site) -> Specs<'a> {
        Specs {
            site,
            streams: OnceCell::new(),
            kv: OnceCell::new(),
            objects: OnceCell::new(),
        }
    }
    /// The first stream named `name`, with its position in the site's list.
    pub fn stream_at(&self, name: &str) -> Option<(usize, &'a StreamSpec)> {
        let w = &self.site.workload;
        let m = self.streams.get_or_init(|| index(&w.streams, |s| s.name.as_str()));
        m.get(name).map(|&i| (i, &w.streams[i]))
    }
    pub fn kv_at(&self, name: &str) -> Option<(usize, &'a KvSpec)> {
        let w = &self.site.workload;
        let m = self.kv.get_or_init(|| index(&w.kv, |k| k.name.as_str()));
        m.get(name).map(|&i| (i, &w.kv[i]))
    }
    pub fn object_store_at(&self, name: &str) -> Option<(usize, &'a ObjectStoreSpec)> {
        let w = &self.site.workload;
        let m = self
            .objects
            .get_or_init(|| index(&w.object_stores, |o| o.name.as_str()));
        m.get(name).map(|&i| (i, &w.object_stores[i]))
    }
    /// `stream_at(&a.name)`, from the index the asset carries when it names that stream.
    pub fn stream_for(&self, a: &Asset) -> Option<(usize, &'a StreamSpec)> {
        at_named(&self.site.workload.streams, a.spec, &a.name, |s| &s.name).or_else(|| self.stream_at(&a.name))
    }
    /// `kv_at(&a.name)`, as `stream_for`.
    pub fn kv_for(&self, a: &Asset) -> Option<(usize, &'a KvSpec)> {
        at_named(&self.site.workload.kv, a.spec, &a.name, |k| &k.name).or_else(|| self.kv_at(&a.name))
    }
    /// `object_store_at(&a.name)`, as `stream_for`.
    pub fn object_store_for(&self, a: &Asset) -> Option<(usize, &'a ObjectStoreSpec)> {
        at_named(&self.site.workload.object_stores, a.spec, &a.name, |o| &o.name)
            .or_else(|| self.object_store_at(&a.name))
    }
    pub fn stream(&self, name: &str) -> Option<&'a StreamSpec> {
        self.stream_at(name).map(|x| x.1)
    }
    pub fn kv(&self, name: &str) -> Option<&'a KvSpec> {
        self.kv_at(name).map(|x| x.1)
    }
    pub fn object_store(&self, name: &str) -> Option<&'a ObjectStoreSpec> {
        self.object_store_at(name).map(|x| x.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_spec_of_a_name_wins() {
        let cat = crate::catalog::Catalog::builtin();
        let site = crate::site::parse_str(
            "site: t\nracks:\n  - name: A\n    servers: [a]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 4 }\n\
             workload:\n  streams:\n    - { name: s, msgs_per_s: 5, msg_size: 1KiB, retention: 1h }\n\
             \x20   - { name: t, msgs_per_s: 7, msg_size: 1KiB, retention: 1h }\n",
            "t.yaml",
            &cat,
        )
        .unwrap();
        let specs = Specs::new(&site);
        assert_eq!(specs.stream("t").map(|s| s.msgs_per_s), Some(7.0));
        assert_eq!(specs.stream_at("s").map(|s| s.0), Some(0));
        assert!(specs.stream("nope").is_none() && specs.kv("s").is_none() && specs.object_store("s").is_none());
    }

    #[test]
    fn names_compare_as_text_does() {
        let names = [
            "",
            "a",
            "b",
            "ab",
            "s1",
            "s10",
            "orders",
            "orders-",
            "Orders",
            "tenant-000123-events",
            "tenant-000123-eventz",
            "tenant-000124-events",
            "é",
            "e\u{301}",
            "12345678",
            "123456789",
        ];
        for a in names {
            for b in names {
                assert_eq!(same_text(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }
}
