//! Which layout `--layout ID` names: a whole id, the tables' short form of one (`layout::short_layout_id`),
//! or an old id answered with its new form; and the layout a command works on (`--layout`, else the saved
//! plan's choice, else the best).

use super::inputs::Inputs;
use super::{Plan, PlannedLayout};
use crate::error::{bad_input, Failure};
use anyhow::anyhow;

/// The layout `--layout ID` names, or an error suggesting the ids there are.
pub fn find_layout<'p>(plan: &'p Plan, id: &str) -> Result<&'p PlannedLayout, Failure> {
    if let Some(l) = plan.layout(id) {
        return Ok(l);
    }
    // The tables' short form of a layout on many racks (`layout::short_layout_id`; never a whole id's
    // form, so it cannot name another layout's whole id).
    let hits: Vec<&PlannedLayout> = plan
        .layouts
        .iter()
        .filter(|l| crate::layout::short_layout_id(&l.id) == id)
        .collect();
    match hits[..] {
        [l] => return Ok(l),
        [] => {}
        _ => {
            let ids: Vec<&str> = hits.iter().map(|l| l.id.as_str()).collect();
            return Err(bad_input(anyhow!(
                "--layout {id}: {} layouts go by this id in the tables; give the whole id, one of {}",
                ids.len(),
                ids.join(", ")
            )));
        }
    }
    // Ids before servers per rack were written `RACKxN` (`A1.B1.C1` is now `Ax1.Bx1.Cx1`).
    if let Some(l) = plan
        .layouts
        .iter()
        .find(|l| crate::layout::legacy_layout_id(&l.id) == id)
    {
        return Err(bad_input(anyhow!(
            "--layout {id}: layout ids now write servers per rack as RACKxN (docs/reports.md); this layout is {}",
            l.id
        )));
    }
    let mut ids: Vec<&str> = plan.layouts.iter().map(|l| l.id.as_str()).collect();
    let prefix: Vec<&str> = ids.iter().copied().filter(|x| x.starts_with(id)).collect();
    if prefix.len() == 1 {
        return Err(bad_input(anyhow!(
            "--layout {id}: no such layout; did you mean {}?",
            prefix[0]
        )));
    }
    ids.truncate(8);
    Err(bad_input(anyhow!(
        "--layout {id}: no such layout in this plan; run `natsplan design` to list them (e.g. {})",
        ids.join(", ")
    )))
}

impl Inputs {
    /// Give the layout `--layout ID` names (else the one the saved plan chose) its per-asset lists when the
    /// plan keeps them per class (`plan::classes`); the top-ranked layout has them already. Call it after
    /// `saved_plan_json`, whose hash is of the plan as built.
    pub fn expand(&self, plan: &mut Plan, id: Option<&str>) -> Result<(), Failure> {
        if let Some(id) = id.or(self.chosen_layout.as_deref()) {
            let id = find_layout(plan, id)?.id.clone();
            plan.expand(&id, &self.catalog, &self.calibration);
        }
        Ok(())
    }

    /// When `--layout` is not given: which layout the command takes and why, one line for stderr (issue
    /// 39: emit, lab up, verify, whatif and simulate follow this one rule and say so when it applies).
    /// None when `--layout` names it.
    pub fn layout_note(&self, plan: &Plan, id: Option<&str>) -> Option<String> {
        if id.is_some() {
            return None;
        }
        match &self.chosen_layout {
            Some(c) => Some(format!(
                "layout {c}: the saved plan's choice (`design --layout ID --save`); --layout ID for another"
            )),
            None => plan.layouts.first().map(|l| {
                format!(
                    "layout {}: the best of {} (rank 1, {}); --layout ID for another, or `design --layout ID --save` \
                     to fix the choice in a saved plan",
                    l.id,
                    plan.layouts.len(),
                    l.verdict.as_str()
                )
            }),
        }
    }

    /// The layout `--layout ID` names, else the one the saved plan chose, else the plan's best; an error
    /// when the plan has none.
    pub fn layout<'p>(&self, plan: &'p Plan, id: Option<&str>) -> Result<&'p PlannedLayout, Failure> {
        match id.or(self.chosen_layout.as_deref()) {
            Some(id) => find_layout(plan, id),
            None => plan.layouts.first().ok_or_else(|| {
                bad_input(anyhow!(
                    "{}: no layout could be built for this site; run `natsplan design` to see why",
                    self.site_path.display()
                ))
            }),
        }
    }
}
