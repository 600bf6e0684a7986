//! Predicted object-store put rate against object size, per layout and sync mode, beside seed 000's
//! Appendix B rows: the data behind the design page's perf chart (`report::svg_perf` draws it).

use super::{Calibration, Kind, Shape, SyncClass, VolumeSpec};
use crate::catalog::Catalog;
use crate::layout::{Layout, Raid};
use crate::site::Site;
use serde::Serialize;

/// Object sizes on the x axis: 1 KiB to 16 MiB, powers of two.
const SIZES: [u64; 15] = [
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
    2 << 20,
    4 << 20,
    8 << 20,
    16 << 20,
];

/// Concurrent putters for every curve: seed 000's second batch ran 3, spread over the servers.
const WORKERS: u32 = 3;

/// One predicted curve.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    pub label: String,
    pub always: bool,
    /// (object bytes, puts/s, band low, band high).
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// One published seed row.
#[derive(Debug, Clone, Serialize)]
pub struct SeedPoint {
    pub label: String,
    pub always: bool,
    pub size_bytes: f64,
    pub put_obj_per_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Panel {
    pub title: String,
    pub curves: Vec<Curve>,
    pub seed: Vec<SeedPoint>,
}

/// The chart data: one panel for seed 000's own shapes (model against the published rows), one for the
/// plan's layouts.
#[derive(Debug, Clone, Serialize)]
pub struct PerfCurves {
    pub panels: Vec<Panel>,
    pub workers: u32,
    pub sources: Vec<String>,
}

fn curve(cal: &Calibration, catalog: &Catalog, label: &str, base: &Shape, always: bool) -> Curve {
    let mut sh = base.clone();
    sh.sync = if always { SyncClass::Always } else { SyncClass::Delayed };
    let points = SIZES
        .iter()
        .map(|&size| {
            sh.size_bytes = size;
            let p = super::predict_shape(&cal.terms, catalog, &sh);
            (size as f64, p.ops_per_s, p.band.low, p.band.high)
        })
        .collect();
    Curve {
        label: format!("{label} {}", if always { "always" } else { "delayed" }),
        always,
        points,
    }
}

impl PerfCurves {
    /// Predict the curves for the given layouts (id and layout; the first three) and seed 000's shapes.
    pub fn build(site: &Site, layouts: &[(&str, &Layout)], catalog: &Catalog, cal: &Calibration) -> PerfCurves {
        let server = catalog
            .server(&catalog.default_server)
            .cloned()
            .unwrap_or_else(|| catalog.servers[0].clone());
        let base = |servers: u32, replicas: u8, volume: VolumeSpec, consumers: u32| Shape {
            kind: Kind::ObjPut,
            servers,
            replicas,
            sync: SyncClass::Always,
            size_bytes: 8 << 10,
            workers: WORKERS,
            subscribers: 0,
            consumers,
            consumers_spread: true,
            volume,
            server: server.clone(),
            rate: None,
            batch: 1,
            nats_version: None,
            subjects: None,
        };
        // Seed 000's second batch: 3 putters and 20 consumers spread, three LUNs on one 2-disk group.
        let seed_rows: Vec<SeedPoint> = cal
            .set
            .rows_of(Kind::ObjPut)
            .filter(|(_, r)| r.workers == Some(WORKERS) && r.fit)
            .filter_map(|(_, r)| {
                Some(SeedPoint {
                    label: format!("{} {}", r.label, r.sync.as_deref().unwrap_or("?")),
                    always: r.sync_always()?,
                    size_bytes: r.size_bytes()? as f64,
                    put_obj_per_s: r.measured("put_obj_per_s")?,
                })
            })
            .collect();
        let mut seed_panel = Panel {
            title: "the NATS-on-E-Series guide's shapes (EF600, 2-disk groups, write cache off, 3 putters, 20 consumers): model and \
                    published rows"
                .into(),
            curves: Vec::new(),
            seed: seed_rows.clone(),
        };
        for (label, servers, replicas, raid, luns) in [
            ("r0-single", 1u32, 1u8, Raid::Raid0, 1u32),
            ("r0-rf3", 3, 3, Raid::Raid0, 3),
            ("r1-rf3", 3, 3, Raid::Raid1, 3),
        ] {
            let sh = base(servers, replicas, VolumeSpec::seed000(catalog, raid, luns), 20);
            for always in [true, false] {
                seed_panel.curves.push(curve(cal, catalog, label, &sh, always));
            }
        }
        let mut layout_panel = Panel {
            title: "this site's layouts (3 putters, no consumers; the guide's measured rows for reference)".into(),
            curves: Vec::new(),
            seed: seed_rows,
        };
        for &(id, layout) in layouts.iter().take(3) {
            let Some(&first) = layout.servers.first() else {
                continue;
            };
            let Some(volume) = super::volume_of(site, layout, catalog, first) else {
                continue;
            };
            let mut sh = base(layout.servers.len() as u32, layout.replicas, volume, 0);
            if let Some(m) = catalog.server(&site.servers[first].model) {
                sh.server = m.clone();
            }
            for always in [true, false] {
                layout_panel.curves.push(curve(cal, catalog, id, &sh, always));
            }
        }
        let mut sources: Vec<String> = cal.set.rows_of(Kind::ObjPut).map(|(f, _)| f.id.clone()).collect();
        sources.dedup();
        PerfCurves {
            panels: vec![layout_panel, seed_panel],
            workers: WORKERS,
            sources,
        }
    }
}
