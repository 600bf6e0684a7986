//! Which layout `--layout ID` names: a whole id, the tables' short form of one (`layout::short_layout_id`),
//! or an old id answered with its new form; and the layout a command works on (`--layout`, else the saved
//! plan's choice, else the best).

use super::inputs::Inputs;
use super::{Plan, PlannedLayout};
use crate::error::{bad_input, Failure};
use crate::perf::curves::PerfCurves;
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

/// What a command works on: its inputs, their plan, and the layout it takes, given per asset.
pub struct Loaded {
    pub inputs: Inputs,
    pub plan: Plan,
    /// The whole id of the layout the command takes: the one `--layout ID` names (whole or the tables'
    /// short form), else the saved plan's choice, else the best; None only when none is named and the plan
    /// has no layout.
    pub id: Option<String>,
}

impl Loaded {
    /// The layout the command takes (`id`); an error when the plan has none.
    pub fn layout(&self) -> Result<&PlannedLayout, Failure> {
        self.inputs.layout(&self.plan, self.id.as_deref())
    }

    /// The layout the command takes and its placed assets. `choose` materialised it, so a per-class
    /// layout here is a bug in natsplan: an error that says so (exit 3), not a panic.
    pub fn placed(&self) -> Result<(&PlannedLayout, &crate::layout::Layout), Failure> {
        let l = self.layout()?;
        let placed = l.placed().ok_or_else(|| {
            Failure::CannotRun(anyhow::anyhow!(
                "layout {} is kept per class (a natsplan bug: {})",
                l.id,
                crate::plan::MATERIALISED
            ))
        })?;
        Ok((l, placed))
    }

    /// HTML's perf curves (`report::svg_perf`): the predicted rates of the layouts `sel` shows (the first
    /// three) against message size, from the inputs the plan was built with (catalog, calibration), with
    /// the calibration's seed points. Made here, not by the command or the report, which only draws them.
    pub fn perf_curves(&self, sel: &Selection) -> PerfCurves {
        let shown: Vec<(&str, &crate::layout::Layout)> = self
            .plan
            .selected(sel)
            .into_iter()
            .map(|l| (l.id.as_str(), l.hardware()))
            .collect();
        PerfCurves::build(&self.plan.input, &shown, &self.inputs.catalog, &self.inputs.calibration)
    }
}

/// Which layouts a report shows: the `top` best (all when None), or only `layout` (a whole id).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub top: Option<usize>,
    pub layout: Option<String>,
}

impl Plan {
    /// The layouts `sel` selects, in rank order.
    pub fn selected(&self, sel: &Selection) -> Vec<&PlannedLayout> {
        let it = self
            .layouts
            .iter()
            .filter(|l| sel.layout.as_ref().is_none_or(|id| &l.id == id));
        match sel.top {
            Some(n) => it.take(n).collect(),
            None => it.collect(),
        }
    }
}

impl Inputs {
    /// The plan these inputs built, with the layout the command takes (`--layout ID`, else the saved plan's
    /// choice, else the best) materialised: given per asset again when the plan keeps it per class
    /// (`plan::classes`, over 1,000 assets; the top-ranked layout is per asset as built). The one place a
    /// layout is expanded, so no command can forget it. A saved plan's hash is of the plan as built:
    /// `saved_plan_json` comes before this.
    pub fn choose(self, mut plan: Plan, layout: Option<&str>) -> Result<Loaded, Failure> {
        let id = match layout.or(self.chosen_layout.as_deref()) {
            Some(id) => Some(find_layout(&plan, id)?.id.clone()),
            None => plan.layouts.first().map(|l| l.id.clone()),
        };
        if let Some(id) = &id {
            plan.materialise(id, &self.catalog, &self.calibration);
        }
        Ok(Loaded { inputs: self, plan, id })
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

#[cfg(test)]
mod tests {
    use super::super::classes::CLASS_THRESHOLD;
    use super::super::inputs::Sources;
    use super::*;

    /// The inputs of a site of `CLASS_THRESHOLD + 1` streams (layouts below the top one given per class),
    /// read from a file as a command reads it.
    fn inputs(dir: &std::path::Path) -> Inputs {
        let mut t = String::from("site: classes\nnats: { replicas: [3] }\nracks:\n");
        for r in ["A", "B", "C", "D"] {
            t.push_str(&format!(
                "  - name: {r}\n    servers: [n{r}]\n    arrays:\n      - {{ name: {r}1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }}\n"
            ));
        }
        t.push_str("workload:\n  streams:\n");
        for s in 0..=CLASS_THRESHOLD {
            t.push_str(&format!(
                "    - {{ name: s{s}, msgs_per_s: 1, msg_size: 1KiB, retention: 1h }}\n"
            ));
        }
        t.push_str("policy:\n  patterns: [\"1\", \"4\"]\n");
        let p = dir.join("site.yaml");
        std::fs::write(&p, t).unwrap();
        Inputs::load(&Sources {
            site: Some(p),
            interval: "10s".into(),
            ..Sources::default()
        })
        .unwrap()
    }

    #[test]
    fn the_layout_a_command_takes_comes_per_asset_with_its_whole_id() {
        let tmp = tempfile::tempdir().unwrap();
        let inputs = inputs(tmp.path());
        let built = inputs.plan().unwrap();
        assert!(built.layouts.len() >= 2, "{}", built.layouts.len());
        let second = built.layouts[1].id.clone();
        assert!(
            built.layouts[1].classes().is_some(),
            "the second layout is given per class"
        );
        // Named by `--layout`: that layout, per asset, every other as built.
        let loaded = inputs.choose(built, Some(&second)).unwrap();
        assert_eq!(loaded.id.as_deref(), Some(second.as_str()));
        let l = loaded.layout().unwrap();
        assert_eq!(l.id, second);
        assert!(l.classes().is_none());
        let d = l.per_asset().expect("materialised");
        assert_eq!(d.assets.len(), CLASS_THRESHOLD + 1);
        assert_eq!(l.placed().unwrap().assets.len(), CLASS_THRESHOLD + 1);
        assert_eq!(d.streams.len(), CLASS_THRESHOLD + 1);
        assert!(loaded.plan.layouts[2..].iter().all(|l| l.classes().is_some()));
        // None named: the best, whose lists are there as built.
        let inputs = loaded.inputs;
        let loaded = inputs.choose(loaded.plan, None).unwrap();
        assert_eq!(loaded.id.as_deref(), Some(loaded.plan.layouts[0].id.as_str()));
        assert_eq!(
            loaded.layout().unwrap().per_asset().unwrap().assets.len(),
            CLASS_THRESHOLD + 1
        );
        // An id that names no layout is refused, naming it.
        let e = loaded.inputs.choose(loaded.plan, Some("p9-nope")).err().unwrap();
        assert!(format!("{e:?}").contains("p9-nope"), "{e:?}");
    }
}
