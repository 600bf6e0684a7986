//! What a plan holds of a layout's assets (`Detail`: per asset or per class), the accessors that give the
//! per-asset lists only when present, and the layout's JSON, written from the fields as the derived
//! `Serialize` wrote them (issue 42).

use super::*;
use crate::layout::Layout;
use serde::Serialize;

/// What a plan holds of a layout's assets: every asset's entry, or the entries per class (on a site of
/// more than `classes::CLASS_THRESHOLD` assets, every layout but the top-ranked one and the one a
/// command takes). A per-class layout gives its per-asset lists only once materialised
/// (`Plan::materialise`, which `Inputs::choose` calls for the layout a command takes).
#[derive(Debug, Clone)]
pub enum Detail {
    PerAsset(PerAsset),
    PerClass(classes::Classes),
}

/// A layout's per-asset lists (each in plan order).
#[derive(Debug, Clone, Default)]
pub struct PerAsset {
    /// Where each asset's replicas go (`assets` in JSON).
    pub assets: Vec<PlannedAsset>,
    /// Each asset's predictions (`predicted.streams`; empty when the layout has no prediction).
    pub streams: Vec<crate::perf::AssetPrediction>,
    /// Each asset's yearly figures (`yearly.assets`; empty when the layout has no yearly figures).
    pub yearly: Vec<crate::survival::YearlyAsset>,
}

impl PlannedLayout {
    /// The per-asset lists or the classes.
    pub fn detail(&self) -> &Detail {
        &self.detail
    }

    /// The per-asset lists; None while the layout is per class (`classes`).
    pub fn per_asset(&self) -> Option<&PerAsset> {
        match &self.detail {
            Detail::PerAsset(d) => Some(d),
            Detail::PerClass(_) => None,
        }
    }

    /// The per-asset lists to change (tests that hand emit an edited plan); None while per class.
    pub fn per_asset_mut(&mut self) -> Option<&mut PerAsset> {
        match &mut self.detail {
            Detail::PerAsset(d) => Some(d),
            Detail::PerClass(_) => None,
        }
    }

    /// The classes; None when the layout is per asset.
    pub fn classes(&self) -> Option<&classes::Classes> {
        match &self.detail {
            Detail::PerClass(c) => Some(c),
            Detail::PerAsset(_) => None,
        }
    }

    /// The layout with every asset placed (`Layout::assets`); None while the layout is per class.
    pub fn placed(&self) -> Option<&Layout> {
        self.per_asset().map(|_| &self.layout)
    }

    /// The layout's servers, volumes, groups and placement rule, whichever its shape. Its `assets` are
    /// empty while the layout is per class: read them through `placed`.
    pub fn hardware(&self) -> &Layout {
        &self.layout
    }

    /// Every asset's prediction, or each class's entry when per class: in plan order, so the first one to
    /// meet a condition is the same either way.
    pub fn prediction_entries(&self) -> Box<dyn Iterator<Item = &crate::perf::AssetPrediction> + '_> {
        match &self.detail {
            Detail::PerAsset(d) => Box::new(d.streams.iter()),
            Detail::PerClass(c) => Box::new(c.predicted_streams.iter().map(|c| &c.entry)),
        }
    }
}

/// The JSON of a layout (a contract): the keys and order the derived `Serialize` gave when the lists were
/// fields — `assets`, `predicted.streams` and `yearly.assets` always (empty lists when per class), and
/// `classes` only when per class.
impl Serialize for PlannedLayout {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Every field named: a new field is a compile error here until it is given its JSON.
        let PlannedLayout {
            id,
            rank,
            pattern,
            raid,
            raid_levels,
            replicas,
            servers,
            unused_servers,
            idle_disks,
            wider_layout,
            hot_spares,
            verdict,
            reasons,
            not_placed,
            closeness: _,
            tolerates,
            tolerates_meta,
            capacity,
            disks_used,
            arrays_used,
            racks_used,
            unique_tag,
            replica_sets,
            endurance,
            yearly,
            predicted,
            detail,
            layout: _,
        } = self;
        let (assets, streams, yearly_assets, classes): (&[_], &[_], &[_], _) = match detail {
            Detail::PerAsset(d) => (&d.assets, &d.streams, &d.yearly, None),
            Detail::PerClass(c) => (&[], &[], &[], Some(c)),
        };
        LayoutJson {
            id,
            rank,
            pattern,
            raid,
            raid_levels,
            replicas,
            servers,
            unused_servers,
            idle_disks,
            wider_layout,
            hot_spares,
            verdict,
            reasons,
            not_placed,
            tolerates,
            tolerates_meta,
            capacity,
            disks_used,
            arrays_used,
            racks_used,
            unique_tag,
            replica_sets,
            assets,
            endurance,
            yearly: yearly.as_ref().map(|y| WithList(y, yearly_assets)),
            predicted: predicted.as_ref().map(|p| WithList(p, streams)),
            classes,
        }
        .serialize(s)
    }
}

/// `PlannedLayout` as JSON has it, borrowed.
#[derive(Serialize)]
#[serde(rename = "PlannedLayout")]
struct LayoutJson<'a> {
    id: &'a String,
    rank: &'a usize,
    pattern: &'a String,
    raid: &'a String,
    raid_levels: &'a Vec<crate::layout::Raid>,
    replicas: &'a u8,
    servers: &'a Vec<PlannedServer>,
    unused_servers: &'a Vec<UnusedServer>,
    #[serde(skip_serializing_if = "is_empty")]
    idle_disks: &'a Vec<IdleDisks>,
    #[serde(skip_serializing_if = "is_none")]
    wider_layout: &'a Option<String>,
    hot_spares: &'a u32,
    verdict: &'a Verdict,
    reasons: &'a Vec<String>,
    #[serde(skip_serializing_if = "is_none")]
    not_placed: &'a Option<NotPlaced>,
    tolerates: &'a Tolerance,
    tolerates_meta: &'a Tolerance,
    capacity: &'a Capacity,
    disks_used: &'a u32,
    arrays_used: &'a u32,
    racks_used: &'a u32,
    unique_tag: &'a Option<String>,
    replica_sets: &'a Vec<(String, Vec<String>)>,
    assets: &'a [PlannedAsset],
    endurance: &'a crate::survival::Endurance,
    #[serde(skip_serializing_if = "Option::is_none")]
    yearly: Option<WithList<'a, crate::survival::Yearly<()>, crate::survival::YearlyAsset>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    predicted: Option<WithList<'a, crate::perf::Predicted<()>, crate::perf::AssetPrediction>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    classes: Option<&'a classes::Classes>,
}

fn is_empty<T>(v: &&Vec<T>) -> bool {
    v.is_empty()
}

fn is_none<T>(v: &&Option<T>) -> bool {
    v.is_none()
}

/// A summary kept apart from its per-asset list (`yearly`, `predicted`), written as one object with the
/// list in its place. The summary is copied only when written (it is small: the list is not copied).
struct WithList<'a, T, E>(&'a T, &'a [E]);

impl Serialize for WithList<'_, crate::perf::Predicted<()>, crate::perf::AssetPrediction> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.clone().with_streams(self.1).0.serialize(s)
    }
}

impl Serialize for WithList<'_, crate::survival::Yearly<()>, crate::survival::YearlyAsset> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.clone().with_assets(self.1).0.serialize(s)
    }
}
