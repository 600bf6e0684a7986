//! The failure-needs cache: what each server of one placement needs after each set of failed servers,
//! once they are peer-removed and their replicas rebuilt (`after_failure`'s engine), kept so that no set
//! is rebuilt twice on one placement.
//!
//! Plan's evaluator owns the caches (`plan::evaluator`: one per placement it holds, in its placement
//! memo, and the one a pattern-4 layout's LUN sizing hands over with its placement); the type is here,
//! below plan, because pattern 4's LUN sizing (`lun_size`) fills one while it sizes — the LUN sizes are
//! part of the candidate layout proposes (its id names them), and layout cannot see plan.

use super::after_failure::{Packed, Slots};
use super::Asset;
use crate::site::{ServerIdx, Site};

/// What each server (in the layout's server order) needs once a set of failed servers is peer-removed
/// and their replicas rebuilt (`Packed::rebuild` from the all-up needs), per set, on one placement and
/// one set of stores: `plan::capacity` and the LUN sizing read a set from here instead of rebuilding it
/// again, and record the ones they rebuild.
#[derive(Default)]
pub struct FailureNeeds {
    by_failed: crate::fxhash::FxHashMap<Vec<ServerIdx>, Vec<f64>>,
    /// The placement packed for rebuilding, once one was needed.
    packed: Option<Packed>,
}

impl FailureNeeds {
    /// The needs after `failed` (as the scenario lists them), if recorded.
    pub fn get(&self, failed: &[ServerIdx]) -> Option<&[f64]> {
        self.by_failed.get(failed).map(Vec::as_slice)
    }

    /// The needs after `failed`: recorded, or rebuilt from `base` (the all-up needs) on `assets` (the
    /// placement these needs are of) and recorded.
    pub fn needs(
        &mut self,
        site: &Site,
        servers: &[ServerIdx],
        assets: &[Asset],
        stores: &[f64],
        base: &[f64],
        failed: &[ServerIdx],
    ) -> &[f64] {
        if !self.by_failed.contains_key(failed) {
            let slots = Slots::new(site, servers);
            let mut need = base.to_vec();
            for &s in failed {
                if let Some(i) = slots.pos(s) {
                    need[i] = 0.0;
                }
            }
            let packed = self.packed.get_or_insert_with(|| Packed::new(site, servers, assets));
            packed.rebuild(site, servers, assets, stores, failed, &mut need);
            self.by_failed.insert(failed.to_vec(), need);
        }
        &self.by_failed[failed]
    }
}
