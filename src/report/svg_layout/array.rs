//! An array in the layout drawing: its frame, its disks (failed, spare, hot) and its RAID groups with the
//! links to the servers they serve. Moved out of svg_layout.rs whole.

use super::*;

/// Array `a` at `(x, y)`, `w` wide: its disks, groups and LUNs (`links` gets each LUN's anchor).
pub(super) fn draw_array(
    svg: &mut Svg,
    site: &Site,
    pl: &PlannedLayout,
    a: ArrayIdx,
    (x, y, w): (f64, f64, f64),
    overlay: Option<&Overlay>,
    links: &mut Vec<(f64, f64, ServerIdx, String)>,
) {
    let l = pl.hardware();
    let arr = &site.arrays[a];
    // An array in a failed rack is out with it (power or network), so it is greyed too.
    let rack = &site.racks[arr.rack].name;
    let failed = overlay.is_some_and(|o| o.arrays.iter().any(|n| n == &arr.name) || o.racks.iter().any(|n| n == rack));
    let h = array_height(site, pl, a, w);
    let who = match arr.owner {
        // The generated name (`<server>-internal`) says nothing the words do not.
        Some(o) if arr.name == format!("{}-internal", site.servers[o].name) => {
            format!("internal disks of {}", site.servers[o].name)
        }
        Some(o) => format!("{} — internal disks of {}", arr.name, site.servers[o].name),
        None => format!("array {} ({})", arr.name, arr.model),
    };
    let who = if failed { format!("{who} — FAILED") } else { who };
    // The whole title is the box's tooltip; the drawn one fits the box (issue 39: a long internal-disk
    // title ran out of it).
    svg.open(&attr("data-array", &arr.name), Some(&who));
    svg.rect(
        (x, y, w, h),
        if failed { GREY } else { "#ffffff" },
        if failed { "#666666" } else { "#6b6b80" },
        "rx=\"4\"",
    );
    svg.text(
        x + 8.0,
        y + 15.0,
        12.0,
        "start",
        "font-weight=\"bold\"",
        &clip(&who, title_chars(w)),
    );
    let spares = l.spares.iter().find(|(ai, _)| *ai == a).map(|(_, n)| *n).unwrap_or(0);
    svg.text(
        x + 8.0,
        y + 28.0,
        10.0,
        "start",
        "fill=\"#555555\"",
        &format!(
            "{} × {}{}",
            arr.disks,
            arr.disk_model,
            if spares > 0 {
                format!(", {spares} hot spare{}", plural_s(spares))
            } else {
                String::new()
            }
        ),
    );
    draw_disks(svg, arr, l, a, (x, y), spares, overlay);
    draw_groups(svg, site, l, a, (x, y), links);
    let rows = arr.disks.div_ceil(DISKS_PER_ROW).max(1) as f64;
    let mut ty = y + 34.0 + rows * ROW_H + 6.0;
    let lines = caption_lines(site, pl, a, w);
    if lines.is_empty() {
        svg.text(
            x + 8.0,
            ty,
            10.0,
            "start",
            "fill=\"#777777\"",
            "not used by this layout",
        );
    }
    for (swatch, text) in lines {
        if let Some(gi) = swatch {
            svg.rect((x + 8.0, ty - 8.0, 8.0, 8.0), colour(gi), "none", "");
        }
        svg.text(x + 20.0, ty, 10.0, "start", "", &text);
        ty += 13.0;
    }
    svg.close();
}

/// Height of one row of disks with its group and LUN bars.
const ROW_H: f64 = DISK_H + 2.0 * BAR_H + 12.0;

/// Left edge of disk `d` (from 1) in an array drawn at `x`.
fn disk_x(x: f64, d: u32) -> f64 {
    x + PAD + ((d - 1) % DISKS_PER_ROW) as f64 * (DISK_W + DISK_GAP)
}

/// The array's disks, coloured by group, spares dashed, failed ones crossed out.
fn draw_disks(
    svg: &mut Svg,
    arr: &crate::site::Array,
    l: &crate::layout::Layout,
    a: ArrayIdx,
    (x, y): (f64, f64),
    spares: u32,
    overlay: Option<&Overlay>,
) {
    // Which group each disk is in; spares are the last `spares` disks (the planner takes groups from disk 1).
    let group_of = |d: u32| l.groups.iter().position(|g| g.array == a && g.disks.contains(&d));
    let is_spare = |d: u32| group_of(d).is_none() && d > arr.disks.saturating_sub(spares);
    let disk_x = |d: u32| disk_x(x, d);
    let row_y = |d: u32| y + 34.0 + ((d - 1) / DISKS_PER_ROW) as f64 * ROW_H;
    for d in 1..=arr.disks {
        let (dx, dy) = (disk_x(d), row_y(d));
        let dead = overlay.is_some_and(|o| o.disks.iter().any(|(an, n)| an == &arr.name && *n == d));
        let g = group_of(d);
        let (fill, stroke, style, what) = if dead {
            ("#555555", "#222222", "", "FAILED".to_string())
        } else if let Some(gi) = g {
            (
                tint(gi),
                colour(gi),
                "",
                format!("in {} ({})", l.groups[gi].name, l.groups[gi].raid.as_str()),
            )
        } else if is_spare(d) {
            (
                "#ffffff",
                "#555555",
                "stroke-dasharray=\"3 2\"",
                "hot spare".to_string(),
            )
        } else {
            ("#eeeeee", "#bbbbbb", "", "not used by this layout".to_string())
        };
        svg.open(
            &format!("{} class=\"disk\"", attr("data-disk", &format!("{}/{d}", arr.name))),
            None,
        );
        svg.rect_titled(
            (dx, dy, DISK_W, DISK_H),
            fill,
            stroke,
            &format!("rx=\"2\" {style}"),
            &format!("disk {}/{d}: {what}", arr.name),
        );
        if dead {
            svg.text(
                dx + DISK_W / 2.0,
                dy + DISK_H / 2.0 + 4.0,
                11.0,
                "middle",
                "fill=\"#ffffff\"",
                "✕",
            );
        } else if is_spare(d) {
            svg.text(
                dx + DISK_W / 2.0,
                dy + DISK_H / 2.0 + 4.0,
                10.0,
                "middle",
                "font-weight=\"bold\"",
                "S",
            );
        }
        svg.text(
            dx + DISK_W / 2.0,
            dy + DISK_H - 3.0,
            7.5,
            "middle",
            "fill=\"#666666\"",
            &d.to_string(),
        );
        svg.close();
    }
}

/// Group bars and LUN bars under each row the group's disks are in; `links` gets each LUN's anchor for
/// the line to its server.
fn draw_groups(
    svg: &mut Svg,
    site: &Site,
    l: &crate::layout::Layout,
    a: ArrayIdx,
    (x, y): (f64, f64),
    links: &mut Vec<(f64, f64, ServerIdx, String)>,
) {
    let arr = &site.arrays[a];
    for (gi, g) in l.groups.iter().enumerate().filter(|(_, g)| g.array == a) {
        let mut rows: BTreeMap<u32, (f64, f64)> = BTreeMap::new();
        for &d in g.disks.iter().filter(|&&d| d >= 1 && d <= arr.disks) {
            let e = rows.entry((d - 1) / DISKS_PER_ROW).or_insert((f64::INFINITY, 0.0));
            e.0 = e.0.min(disk_x(x, d));
            e.1 = e.1.max(disk_x(x, d) + DISK_W);
        }
        let tip = format!(
            "volume group {}: {}, {} disk{}, {} usable",
            g.name,
            g.raid.as_str(),
            g.disks.len(),
            plural_s(g.disks.len()),
            fmt_bytes(g.usable_bytes as f64)
        );
        let short = g.name.rsplit('-').next().unwrap_or(&g.name).to_string();
        for (i, (row, (x0, x1))) in rows.iter().enumerate() {
            let by = y + 34.0 + *row as f64 * ROW_H + DISK_H + 4.0;
            svg.open(&format!("{} class=\"group\"", attr("data-group", &g.name)), Some(&tip));
            svg.rect((*x0, by, x1 - x0, BAR_H - 2.0), colour(gi), "none", "rx=\"2\"");
            let label = format!("{short} {}", g.raid.as_str());
            let label = if (x1 - x0) > label.len() as f64 * 5.5 {
                label
            } else {
                short.clone()
            };
            if (x1 - x0) > label.len() as f64 * 5.5 {
                svg.text((x0 + x1) / 2.0, by + 10.0, 9.5, "middle", "fill=\"#ffffff\"", &label);
            }
            svg.close();
            if i > 0 {
                continue;
            }
            // LUNs: proportional slices of the first row's span; what is left serves others (pattern 4).
            let ly = by + BAR_H;
            let mut lx = *x0;
            let span = x1 - x0;
            for lun in l.luns.iter().filter(|x| x.group == gi) {
                let frac = if g.usable_bytes > 0 {
                    (lun.size_bytes as f64 / g.usable_bytes as f64).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let lw = (span * frac).max(3.0);
                let server = &site.servers[lun.server].name;
                let tip = format!(
                    "LUN {} on {} → server {}",
                    fmt_bytes(lun.size_bytes as f64),
                    g.name,
                    server
                );
                svg.open(&format!("{} class=\"lun\"", attr("data-lun", server)), Some(&tip));
                svg.rect((lx, ly, lw - 1.0, BAR_H - 2.0), tint(gi), colour(gi), "rx=\"2\"");
                if lw > server.len() as f64 * 5.6 + 4.0 {
                    svg.text(lx + lw / 2.0, ly + 10.0, 9.0, "middle", "", server);
                }
                svg.close();
                links.push((lx + lw / 2.0, ly + BAR_H - 2.0, lun.server, tip));
                lx += lw;
            }
            if x0 + span - lx > 2.0 {
                svg.rect_titled(
                    (lx, ly, x0 + span - lx - 1.0, BAR_H - 2.0),
                    "#f4f4f4",
                    "#bbbbbb",
                    "rx=\"2\" stroke-dasharray=\"2 2\"",
                    &format!("{}: capacity left for other services", g.name),
                );
            }
        }
    }
}
