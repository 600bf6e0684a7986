//! Asset classes: on a site of more than `CLASS_THRESHOLD` assets, the layouts other than the top-ranked one
//! (and the one a command takes, see `Plan::materialise`) keep their per-asset lists (`assets`,
//! `predicted.streams`, `yearly.assets`) per class (`plan::Detail::PerClass`): the assets whose entries
//! are the same in every key but the name, with their count and first and last names in plan order.
//! 100,000 per-tenant streams of a few dozen shapes are a few dozen entries per layout instead of 100,000
//! (about 700 B each in memory, more in JSON). `assets` (placement) is given per shape too (kind, replicas, set, size), without each asset's
//! expected servers. Capacity per server, tolerances and every summary key are computed before, from the
//! exact per-asset evaluation, and the classes are built from the exact per-asset entries: nothing is
//! approximated, only said once.

use crate::perf::{AssetPrediction, Streams};
use crate::survival::{YearlyAsset, YearlyEntries};
use serde::{Serialize, Serializer};
use std::hash::Hash;

/// Above this many assets (streams, KV buckets, object stores, durable consumers) per layout, the layouts
/// that are not shown per asset give classes. At or below it every plan is as before (the examples' JSON
/// is byte-identical); issue 18 names 1,000.
pub const CLASS_THRESHOLD: usize = 1_000;

/// Entries that differ only by name, said once.
#[derive(Debug, Clone)]
pub struct Class<T> {
    pub count: usize,
    /// The first and last asset of the class in plan order.
    pub first: String,
    pub last: String,
    /// The shared entry (its `name` is the first asset's; JSON leaves it out).
    pub entry: T,
}

/// A layout's per-asset lists given per class (`classes` in JSON, beside the emptied lists).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Classes {
    /// In place of `assets`: the assets of one kind, replica count, pinned set and size per replica (their
    /// expected servers differ and are left out; capacity per server was computed from each asset's).
    pub assets: Vec<Class<AssetShape>>,
    /// In place of `predicted.streams`.
    pub predicted_streams: Vec<Class<AssetPrediction>>,
    /// In place of `yearly.assets`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub yearly_assets: Vec<Class<YearlyAsset>>,
}

/// A planned asset but for its name and expected servers.
#[derive(Debug, Clone, Serialize)]
pub struct AssetShape {
    #[serde(skip)]
    pub name: String,
    pub kind: crate::layout::AssetKind,
    pub replicas: u8,
    pub set: Option<String>,
    pub bytes_per_replica: u64,
}

impl<T: Serialize> Serialize for Class<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        // The entry's own keys, less `name`, after count, first and last (few classes: a Value is cheap).
        let v = serde_json::to_value(&self.entry).map_err(S::Error::custom)?;
        let serde_json::Value::Object(fields) = v else {
            return Err(S::Error::custom("a class entry serialises to an object"));
        };
        let mut m = s.serialize_map(Some(fields.len() + 2))?;
        m.serialize_entry("count", &self.count)?;
        m.serialize_entry("first", &self.first)?;
        m.serialize_entry("last", &self.last)?;
        for (k, v) in fields.iter().filter(|(k, _)| k.as_str() != "name") {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Group entries by `key` (every field but the name, borrowed: no allocation per entry), in order of
/// first appearance.
fn group<T: Keyed>(items: Vec<T>) -> Vec<Class<T>> {
    let (first, last, count) = classify(&items);
    let names = |at: &[usize]| at.iter().map(|&i| items[i].name().to_string()).collect::<Vec<_>>();
    let (firsts, lasts) = (names(&first), names(&last));
    // Each class's entry is its first member, moved out (`first` ascends: classes in order of appearance).
    let mut entries = Vec::with_capacity(first.len());
    let mut next = first.iter().copied().peekable();
    for (i, it) in items.into_iter().enumerate() {
        if next.peek() == Some(&i) {
            next.next();
            entries.push(it);
        }
    }
    entries
        .into_iter()
        .zip(firsts.into_iter().zip(lasts))
        .zip(count)
        .map(|((entry, (first, last)), count)| Class {
            count,
            first,
            last,
            entry,
        })
        .collect()
}

/// Per class, in order of first appearance: its first and last member (indices into `items`) and its
/// size. Two passes over indices rather than one over the entries: the last name is copied once per
/// class, not once per member.
fn classify<T: Keyed>(items: &[T]) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    // FxHash, not SipHash: the keys are the plan's own entries and the map is only looked up (the
    // classes come in order of first appearance whatever the hash), once per entry.
    use std::hash::BuildHasher;
    let hasher = crate::fxhash::FxBuild::default();
    let mut at: crate::fxhash::FxHashMap<u64, Vec<usize>> = Default::default();
    let (mut first, mut last, mut count): (Vec<usize>, Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new(), Vec::new());
    for (i, it) in items.iter().enumerate() {
        let key = it.key();
        let slot = at.entry(hasher.hash_one(&key)).or_default();
        match slot.iter().copied().find(|&c| items[first[c]].key() == key) {
            Some(c) => {
                count[c] += 1;
                last[c] = i;
            }
            None => {
                slot.push(first.len());
                first.push(i);
                last.push(i);
                count.push(1);
            }
        }
    }
    (first, last, count)
}

/// An entry's name, and every other field as a borrowed key.
trait Keyed {
    type Key<'a>: Hash + Eq
    where
        Self: 'a;
    fn key(&self) -> Self::Key<'_>;
    fn name(&self) -> &str;
}

impl Keyed for AssetPrediction {
    type Key<'a> = PredictionKey<'a>;
    fn key(&self) -> PredictionKey<'_> {
        prediction_key(self)
    }
    fn name(&self) -> &str {
        &self.name
    }
}

/// A placed asset by the fields `PlannedAsset` gives it but its name and expected servers: kind,
/// replicas, set and bytes per replica (rounded up as there).
impl Keyed for crate::layout::Asset {
    type Key<'a> = (&'static str, u8, Option<&'a str>, u64);
    fn key(&self) -> Self::Key<'_> {
        (
            self.kind.as_str(),
            self.replicas,
            self.set.as_deref(),
            self.bytes_per_replica.ceil() as u64,
        )
    }
    fn name(&self) -> &str {
        &self.name
    }
}

impl Keyed for YearlyAsset {
    type Key<'a> = YearlyKey;
    fn key(&self) -> YearlyKey {
        yearly_key(self)
    }
    fn name(&self) -> &str {
        &self.name
    }
}

impl<T: Keyed> Keyed for &T {
    type Key<'a>
        = T::Key<'a>
    where
        Self: 'a;
    fn key(&self) -> T::Key<'_> {
        (**self).key()
    }
    fn name(&self) -> &str {
        (**self).name()
    }
}

/// Predictions by class, in order of first appearance (for reports: the entries stay where they are).
pub fn of_predictions(p: &[AssetPrediction]) -> Vec<Class<&AssetPrediction>> {
    group(p.iter().collect())
}

/// Every field of a prediction but its name (floats by their bits: equal entries are bit-equal).
#[derive(Hash, PartialEq, Eq)]
pub struct PredictionKey<'a> {
    kind: &'static str,
    bits: [u64; 6],
    scaled: bool,
    text: [&'a str; 3],
    publish: Option<&'a str>,
    reach: Option<&'a str>,
}

fn prediction_key(p: &AssetPrediction) -> PredictionKey<'_> {
    PredictionKey {
        kind: p.kind.as_str(),
        bits: [
            p.required_per_s.to_bits(),
            p.ops_per_s.to_bits(),
            p.band.low.to_bits(),
            p.band.high.to_bits(),
            p.headroom.to_bits(),
            p.extrapolation_distance.to_bits(),
        ],
        scaled: p.scaled,
        text: [&p.bottleneck, &p.source, &p.calibration],
        publish: p.publish.as_deref(),
        reach: p.reach.as_deref(),
    }
}

/// Every field of a yearly entry but its name.
#[derive(Hash, PartialEq, Eq)]
pub struct YearlyKey {
    kind: crate::survival::GroupKind,
    bits: [u64; 12],
    mttdl: Option<u64>,
    ci: Option<[u64; 12]>,
}

fn yearly_key(y: &YearlyAsset) -> YearlyKey {
    YearlyKey {
        kind: y.kind,
        bits: y.bits(),
        mttdl: y.mttdl_years.map(f64::to_bits),
        ci: y.ci_bits(),
    }
}

/// A layout's per-asset lists (`expected`), or their classes. The placement classes come from the placed
/// assets (`layout.assets`), grouped as their `PlannedAsset`s would be (a layout given per class never
/// builds those); predictions and yearly figures made per class (`perf::predict_layout_by_class`,
/// `survival::Entries::Classes`) are taken as they are: the same classes `group` makes of the lists.
pub(super) fn detail(
    site: &crate::site::Site,
    layout: &crate::layout::Layout,
    expected: bool,
    streams: Option<Streams>,
    yearly: Option<YearlyEntries>,
) -> super::Detail {
    if expected {
        let list = |what: &str| -> ! { unreachable!("{what} per class for a layout given per asset") };
        return super::Detail::PerAsset(super::PerAsset {
            assets: super::planned_assets(site, layout),
            streams: match streams {
                None => Vec::new(),
                Some(Streams::List(l)) => l,
                Some(Streams::Classes(_)) => list("predictions"),
            },
            yearly: match yearly {
                None => Vec::new(),
                Some(YearlyEntries::List(l)) => l,
                Some(YearlyEntries::Classes(_)) => list("yearly figures"),
            },
        });
    }
    let assets = group(layout.assets.iter().collect())
        .into_iter()
        .map(|k| Class {
            count: k.count,
            first: k.first,
            last: k.last,
            entry: AssetShape {
                name: k.entry.name.to_string(),
                kind: k.entry.kind,
                replicas: k.entry.replicas,
                set: k.entry.set.as_deref().map(str::to_string),
                bytes_per_replica: k.entry.bytes_per_replica.ceil() as u64,
            },
        })
        .collect();
    fn named<T>(count: usize, first: &str, last: &str, entry: T) -> Class<T> {
        Class {
            count,
            first: first.to_string(),
            last: last.to_string(),
            entry,
        }
    }
    let predicted_streams = match streams {
        None => Vec::new(),
        Some(Streams::List(l)) => group(l),
        Some(Streams::Classes(c)) => c
            .into_iter()
            .map(|c| named(c.count, &c.first, &c.last, c.entry))
            .collect(),
    };
    let yearly_assets = match yearly {
        None => Vec::new(),
        Some(YearlyEntries::List(l)) => group(l),
        Some(YearlyEntries::Classes(c)) => c
            .into_iter()
            .map(|c| named(c.count, &c.first, &c.last, c.entry))
            .collect(),
    };
    super::Detail::PerClass(Classes {
        assets,
        predicted_streams,
        yearly_assets,
    })
}

/// Whether a site's layouts give classes: more than `CLASS_THRESHOLD` assets in a layout.
pub fn applies(assets: usize) -> bool {
    assets > CLASS_THRESHOLD
}

/// Four racks of one server each and `n` small streams of two shapes (for tests of classes).
#[cfg(test)]
pub(crate) fn test_site(n: usize) -> crate::site::Site {
    let mut t = String::from("site: classes\nnats: { replicas: [3] }\nracks:\n");
    for r in ["A", "B", "C", "D"] {
        t.push_str(&format!(
            "  - name: {r}\n    servers: [n{r}]\n    arrays:\n      - {{ name: {r}1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }}\n"
        ));
    }
    t.push_str("workload:\n  streams:\n");
    for s in 0..n {
        t.push_str(&format!(
            "    - {{ name: s{s}, msgs_per_s: {}, msg_size: 1KiB, retention: 1h }}\n",
            1 + s % 2
        ));
    }
    t.push_str("policy:\n  patterns: [\"1\", \"4\"]\n");
    crate::site::parse_str(&t, "classes.yaml", &crate::catalog::Catalog::builtin()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y(name: &str, unavailable: f64) -> YearlyAsset {
        YearlyAsset {
            name: name.into(),
            kind: crate::layout::AssetKind::Stream.into(),
            unavailable_min_per_year: unavailable,
            ..YearlyAsset::default()
        }
    }

    use super::test_site as site;

    #[test]
    fn above_the_threshold_other_layouts_keep_classes_and_materialise_to_the_same_entries() {
        let (cat, cal) = (crate::catalog::Catalog::builtin(), crate::perf::Calibration::builtin());
        let site = site(CLASS_THRESHOLD + 1);
        let plan = super::super::build_with(&site, &cat, &cal);
        assert!(plan.layouts.len() >= 2, "{}", plan.layouts.len());
        let top = &plan.layouts[0];
        assert!(top.classes().is_none());
        let d = top.per_asset().expect("the top-ranked layout is per asset");
        assert_eq!(d.streams.len(), CLASS_THRESHOLD + 1);
        assert_eq!(d.assets.len(), CLASS_THRESHOLD + 1);
        for other in &plan.layouts[1..] {
            // Per class: no per-asset list to read, nor a placed layout, until materialised.
            assert!(other.per_asset().is_none());
            assert!(other.placed().is_none());
            let c = other.classes().expect("classes");
            assert_eq!(
                c.predicted_streams.iter().map(|c| c.count).sum::<usize>(),
                CLASS_THRESHOLD + 1
            );
            assert!(c.predicted_streams.len() < 10, "{}", c.predicted_streams.len());
            if other.yearly.is_some() {
                assert_eq!(
                    c.yearly_assets.iter().map(|c| c.count).sum::<usize>(),
                    CLASS_THRESHOLD + 1
                );
            }
            assert_eq!(c.assets.iter().map(|c| c.count).sum::<usize>(), CLASS_THRESHOLD + 1);
            assert!(c.assets.len() < 10, "{}", c.assets.len());
            // The JSON keeps its shape: the lists there and empty, `classes` beside them.
            let v = serde_json::to_value(other).unwrap();
            assert_eq!(v["assets"], serde_json::json!([]));
            assert_eq!(v["predicted"]["streams"], serde_json::json!([]));
            if other.yearly.is_some() {
                assert_eq!(v["yearly"]["assets"], serde_json::json!([]));
            }
            assert!(v["classes"].is_object(), "{}", other.id);
        }
        let js = |v: &dyn erased::Ser| v.json();
        // Layouts given per class keep no placed assets (memory); the top one does.
        assert!(plan.layouts[1..].iter().all(|l| l.hardware().assets.is_empty()));
        assert_eq!(top.placed().unwrap().assets.len(), CLASS_THRESHOLD + 1);
        assert!(serde_json::to_value(top).unwrap().get("classes").is_none());
        // Materialising gives what a plain per-asset evaluation of that layout (placed as it was
        // enumerated) gives, entry for entry and key for key, and the same placed assets and problems;
        // every layout of the plan, one by one.
        let enumerated = crate::layout::Enumerate::new(&site, &cat).placed();
        let mut materialised = plan.clone();
        for other in &plan.layouts[1..] {
            let placed = enumerated
                .iter()
                .find(|l| l.id == other.id)
                .expect("the layout is enumerated");
            let mut fresh = super::super::plan_layout(&site, &cat, &cal, placed.clone());
            materialised.materialise(&other.id, &cat, &cal);
            let e = materialised.layout(&other.id).unwrap();
            assert!(e.classes().is_none());
            let l = e.placed().expect("materialised");
            assert_eq!(js(&l.assets), js(&placed.assets));
            assert_eq!(js(&l.problems), js(&placed.problems));
            // The whole layout as JSON, but for what ranking sets.
            (fresh.rank, fresh.wider_layout) = (e.rank, e.wider_layout.clone());
            assert_eq!(js(e), js(&fresh), "{}", e.id);
            // The classes say the same: each class entry is its members' entry.
            let streams = &fresh.per_asset().unwrap().streams;
            for c in &other.classes().unwrap().predicted_streams {
                let first = streams.iter().find(|p| *p.name == *c.first).unwrap();
                let mut entry = c.entry.clone();
                entry.name = first.name.clone();
                assert_eq!(js(&entry), js(first));
            }
        }
        // Materialising a layout per asset leaves it as it is.
        let before = js(&materialised);
        materialised.materialise(&top.id, &cat, &cal);
        assert_eq!(js(&materialised), before);
    }

    #[test]
    fn at_the_threshold_every_layout_is_per_asset() {
        let (cat, cal) = (crate::catalog::Catalog::builtin(), crate::perf::Calibration::builtin());
        let plan = super::super::build_with(&site(CLASS_THRESHOLD), &cat, &cal);
        assert!(plan.layouts.len() >= 2);
        assert!(plan
            .layouts
            .iter()
            .all(|l| l.classes().is_none() && l.per_asset().is_some()));
    }

    mod erased {
        /// `serde_json::to_string` on values of different types through one closure.
        pub trait Ser {
            fn json(&self) -> String;
        }
        impl<T: serde::Serialize> Ser for T {
            fn json(&self) -> String {
                serde_json::to_string(self).unwrap()
            }
        }
    }

    /// What a list of classes says, entry by entry: count, first and last asset, the entry's JSON.
    fn said<T: Serialize>(c: &[Class<T>]) -> Vec<(usize, String, String, String)> {
        said_of(c.iter().map(|c| (c.count, c.first.as_str(), c.last.as_str(), &c.entry)))
    }

    fn said_of<'a, T: Serialize + 'a>(
        c: impl Iterator<Item = (usize, &'a str, &'a str, &'a T)>,
    ) -> Vec<(usize, String, String, String)> {
        c.map(|(n, first, last, e)| {
            (
                n,
                first.to_string(),
                last.to_string(),
                serde_json::to_string(e).unwrap(),
            )
        })
        .collect()
    }

    #[test]
    fn predictions_made_per_class_are_the_classes_of_the_per_asset_list() {
        // Every layout of a site of streams, KV buckets and object stores (with gets) of a few shapes
        // and rates, on two kinds of storage: `predict_layout_by_class` gives the same classes, in the
        // same order, with the same counts, first and last names and entries, as grouping the per-asset
        // list; and the same figures besides.
        let mut t = crate::sitegen::test_site(
            "site: byclass\nnats: { replicas: [3, 5] }\n",
            5,
            2,
            |r| {
                let disk = if r % 2 == 0 { "nvme-3.84t" } else { "nl-sas-8t" };
                let model = if r % 2 == 0 { "EF600" } else { "E5700" };
                format!("model: {model}, disk_model: {disk}, disks: 12")
            },
            60,
            |s| {
                format!(
                    "msgs_per_s: {}, msg_size: {}, retention: 1h, consumers: {}",
                    [10, 500, 20000][s % 3],
                    ["256B", "1KiB"][s % 2],
                    s % 3
                )
            },
        );
        t.push_str("  kv:\n");
        for k in 0..20 {
            t.push_str(&format!(
                "    - {{ name: k{k}, puts_per_s: {}, value_size: 512B, keys: 1000 }}\n",
                [5, 3000][k % 2]
            ));
        }
        t.push_str("  object_stores:\n");
        for o in 0..10 {
            t.push_str(&format!(
                "    - {{ name: o{o}, puts_per_s: 2, gets_per_s: {}, object_size: 1MiB, retention: 6h }}\n",
                o % 2 * 7
            ));
        }
        let cat = crate::catalog::Catalog::builtin();
        let cal = crate::perf::Calibration::builtin();
        let site = crate::site::parse_str(&t, "byclass.yaml", &cat).unwrap();
        let layouts = crate::layout::Enumerate::new(&site, &cat).placed();
        let (mut compared, mut classes) = (0, 0);
        for l in layouts.iter().filter(|l| !l.servers.is_empty()) {
            let list = crate::perf::predict_layout(&site, l, &cat, &cal);
            let by_class = crate::perf::predict_layout_by_class(&site, l, &cat, &cal);
            let want = group(list.streams.clone());
            let got = by_class
                .streams
                .iter()
                .map(|g| (g.count, &*g.first, &*g.last, &g.entry));
            assert_eq!(said(&want), said_of(got), "{}", l.id);
            assert_eq!(list.cannot_carry(), by_class.cannot_carry());
            assert_eq!(list.at_risk(), by_class.at_risk());
            // Every other figure is the same (the lists apart).
            let a = serde_json::to_value(list.with_streams(()).0).unwrap();
            let b = serde_json::to_value(by_class.with_streams(()).0).unwrap();
            assert_eq!(a, b, "{}", l.id);
            compared += 1;
            classes = classes.max(want.len());
        }
        assert!(
            compared > 5 && classes > 6,
            "{compared} layouts, at most {classes} classes"
        );
    }

    #[test]
    fn yearly_figures_made_per_class_are_the_classes_of_the_per_asset_list() {
        // Every layout small enough for yearly figures, of a site of streams (with consumers), KV and
        // object stores of a few shapes, R1 to R5: `Entries::Classes` gives the classes grouping the
        // list gives, and every total and the worst asset the same.
        let mut t = crate::sitegen::test_site(
            "site: yclass\nnats: { replicas: [3, 5] }\n",
            3,
            2,
            |r| format!("model: EF600, disk_model: nvme-3.84t, disks: 6, hot_spares: {}", r % 2),
            30,
            |s| {
                format!(
                    "msgs_per_s: {}, msg_size: 1KiB, retention: 1h, consumers: {}, replicas: {}",
                    [10, 500][s % 2],
                    s % 3,
                    [1, 3, 5][s % 3]
                )
            },
        );
        t.push_str("  kv:\n    - { name: k1, puts_per_s: 50, value_size: 512B, keys: 1000 }\n");
        t.push_str("  object_stores:\n    - { name: o1, puts_per_s: 2, object_size: 1MiB, retention: 6h }\n");
        let cat = crate::catalog::Catalog::builtin();
        let site = crate::site::parse_str(&t, "yclass.yaml", &cat).unwrap();
        let mut compared = 0;
        for l in crate::layout::Enumerate::new(&site, &cat)
            .placed()
            .iter()
            .filter(|l| !l.servers.is_empty())
        {
            let list = crate::survival::yearly_with(&site, l, &cat, crate::survival::Entries::List).listed();
            let (by_class, classes) =
                crate::survival::yearly_with(&site, l, &cat, crate::survival::Entries::Classes).with_assets(());
            let YearlyEntries::Classes(classes) = classes else {
                panic!("classes were asked for")
            };
            let want = group(list.assets.clone());
            let got = classes.iter().map(|g| (g.count, &*g.first, &*g.last, &g.entry));
            assert_eq!(said(&want), said_of(got), "{}", l.id);
            let a = serde_json::to_value(list.with_assets(()).0).unwrap();
            let b = serde_json::to_value(by_class).unwrap();
            assert_eq!(a, b, "{}", l.id);
            compared += usize::from(want.len() > 3);
        }
        assert!(compared > 3, "{compared} layouts with several classes");
    }

    #[test]
    fn entries_that_differ_only_by_name_are_one_class_in_order() {
        let items = vec![y("a", 1.0), y("b", 2.0), y("c", 1.0), y("d", 1.0), y("e", 2.0)];
        let g = group(items);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].count, g[0].first.as_str(), g[0].last.as_str()), (3, "a", "d"));
        assert_eq!((g[1].count, g[1].first.as_str(), g[1].last.as_str()), (2, "b", "e"));
        // Any other field apart makes another class (here the kind).
        let mut kv = y("f", 1.0);
        kv.kind = crate::layout::AssetKind::Kv.into();
        assert_eq!(group(vec![y("a", 1.0), kv]).len(), 2);
    }

    #[test]
    fn a_class_serialises_its_entry_without_the_name() {
        let g = group(vec![y("a", 1.5), y("b", 1.5)]);
        let v = serde_json::to_value(&g[0]).unwrap();
        assert_eq!(v["count"], 2);
        assert_eq!(v["first"], "a");
        assert_eq!(v["last"], "b");
        assert_eq!(v["unavailable_min_per_year"], 1.5);
        assert!(v.get("name").is_none(), "{v}");
    }
}
