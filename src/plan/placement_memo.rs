//! The placement memo: the placement the evaluator keeps while it evaluates the candidates of one first
//! placement one after the other (`evaluator`): patterns 1 and 2 of one selection often have the same
//! stores, and pattern 4's first sizing round places on whole groups as pattern 1 does, so the first of
//! them places and the rest take its placement, with the needs after failures rebuilt on it so far (its
//! failure-needs cache, `layout::FailureNeeds`), instead of placing 100,000 assets and rebuilding again.

use super::capacity::stores;
use crate::layout::{Asset, FailureNeeds, Layout, PlacementRule, Problem};
use crate::site::{ServerIdx, Site};

/// What a placement is made of: the replica count (the assets follow from it and the site), the servers
/// in the layout's order, their stores (as bits) and the rule. Two layouts of one key get one placement.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementKey {
    r: u8,
    servers: Vec<ServerIdx>,
    stores: Vec<u64>,
    rule: PlacementRule,
}

impl PlacementKey {
    /// The key of a built layout's placement (its LUNs as they are).
    pub fn of(site: &Site, l: &Layout) -> PlacementKey {
        PlacementKey {
            r: l.replicas,
            servers: l.servers.clone(),
            stores: stores(site, l).iter().map(|s| s.to_bits()).collect(),
            rule: l.placement.clone(),
        }
    }
}

/// A placement the memo holds: the placed assets, the problems placing them gave, and the needs after
/// failures rebuilt on it so far.
pub struct Held {
    pub assets: Vec<Asset>,
    pub problems: Vec<Problem>,
    pub needs: FailureNeeds,
}

/// At most one placement, of one key: the candidates of a task come grouped by their first placement, so
/// one is all they share (and memory holds one more placement per task, not one per key).
#[derive(Default)]
pub struct PlacementMemo {
    held: Option<(PlacementKey, Held)>,
}

impl PlacementMemo {
    /// The placement of `key`: the one held, or made by `place` and held in place of another key's.
    pub fn get_or_place(&mut self, key: PlacementKey, place: impl FnOnce() -> (Vec<Asset>, Vec<Problem>)) -> &mut Held {
        if self.held.as_ref().is_none_or(|(k, _)| *k != key) {
            let (assets, problems) = place();
            let held = Held {
                assets,
                problems,
                needs: FailureNeeds::default(),
            };
            self.held = Some((key, held));
        }
        &mut self.held.as_mut().expect("held above").1
    }

    /// The placement held, given up: the last candidate of a task takes it without a copy.
    pub fn take(&mut self) -> Option<Held> {
        self.held.take().map(|(_, h)| h)
    }
}
