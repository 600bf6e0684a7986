//! The layout drawing (seed 000's picture, generalised): racks as columns; in each rack its servers
//! (JetStream or not, each with a chip per stream replica the plan expects on it) and its arrays, with
//! every disk a vertical rectangle (hot spares dashed and marked S), volume groups and the LUNs cut from
//! them as horizontal bars under their disks, each LUN naming (and linked to) the server it serves.
//!
//! With an `Overlay` (whatif) the failed domains are greyed — racks, arrays, disks, servers down or with
//! their store destroyed — and every replica chip takes its stream's status colour.

use super::svg::{attr, colour, tint, Svg};
use crate::plan::PlannedLayout;
use crate::site::{ArrayIdx, ServerIdx, Site};
use crate::survival::Status;
use crate::text::plural_s;
use crate::units::fmt_bytes;
use std::collections::BTreeMap;

pub use super::svg_overlay::{status_colour, Overlay};

mod array;
use array::draw_array;

const PAD: f64 = 10.0;
const DISK_W: f64 = 16.0;
const DISK_GAP: f64 = 4.0;
const DISK_H: f64 = 44.0;
const DISKS_PER_ROW: u32 = 24;
const BAR_H: f64 = 15.0;
const CHIP_W: f64 = 22.0;
const CHIP_H: f64 = 15.0;
const CHIPS_MAX: usize = 240;
const COL_MIN_W: f64 = 250.0;
const GREY: &str = "#c8c8c8";

/// One asset as the drawing shows it.
struct AssetMark<'a> {
    number: usize,
    name: &'a str,
    kind: &'a str,
    replicas: u8,
    servers: &'a [String],
}

/// Where each JetStream server's box is, to link LUN bars to it.
type Boxes = BTreeMap<ServerIdx, (f64, f64, f64, f64)>;

fn array_width(disks: u32) -> f64 {
    let per_row = disks.clamp(1, DISKS_PER_ROW) as f64;
    (per_row * (DISK_W + DISK_GAP) - DISK_GAP + 2.0 * PAD).max(COL_MIN_W)
}

/// The arrays drawn in a rack: its shared arrays, then the internal disks of its servers.
fn rack_arrays(site: &Site, rack: usize) -> Vec<ArrayIdx> {
    let mut v: Vec<ArrayIdx> = site.rack_arrays(rack).collect();
    for s in site.rack_servers(rack) {
        if let Some(a) = site.servers[s].internal {
            v.push(a);
        }
    }
    v
}

/// Lines of text under an array (two per volume group: the group, then its LUNs), computed once for
/// height and drawing.
fn group_lines(site: &Site, pl: &PlannedLayout, a: ArrayIdx) -> Vec<(usize, String)> {
    let l = pl.hardware();
    let mut out = Vec::new();
    for (gi, g) in l.groups.iter().enumerate().filter(|(_, g)| g.array == a) {
        let luns: Vec<String> = l
            .luns
            .iter()
            .filter(|x| x.group == gi)
            .map(|x| format!("{} {}", site.servers[x.server].name, fmt_bytes(x.size_bytes as f64)))
            .collect();
        let disks = match (g.disks.first(), g.disks.last()) {
            (Some(f), Some(last)) if f != last => format!("disks {f}–{last}"),
            (Some(f), _) => format!("disk {f}"),
            _ => "no disks".into(),
        };
        out.push((
            gi,
            format!(
                "{} {} · {} · {} usable",
                g.name,
                g.raid.as_str(),
                disks,
                fmt_bytes(g.usable_bytes as f64)
            ),
        ));
        out.push((
            usize::MAX,
            format!(
                "LUN → {}",
                if luns.is_empty() {
                    "none".into()
                } else {
                    luns.join(", ")
                }
            ),
        ));
    }
    out
}

/// Characters of 10-px caption text a box `w` wide holds beside its colour swatch.
fn caption_chars(w: f64) -> usize {
    (((w - 24.0) / 5.2) as usize).max(12)
}

/// Characters of the 12-px bold array title a box `w` wide holds.
fn title_chars(w: f64) -> usize {
    (((w - 16.0) / 7.2) as usize).max(8)
}

/// The array's caption lines at its box width: each group's line wrapped at spaces (issue 39: long
/// captions were cut), the swatch's group on the first line of each (None: no swatch).
fn caption_lines(site: &Site, pl: &PlannedLayout, a: ArrayIdx, w: f64) -> Vec<(Option<usize>, String)> {
    let n = caption_chars(w);
    let mut out = Vec::new();
    for (gi, text) in group_lines(site, pl, a) {
        let swatch = (gi != usize::MAX).then_some(gi);
        for (k, line) in super::wrap(&text, n as u16).lines().enumerate() {
            // A single word longer than the box (a very long name) is still cut, with its tooltip.
            out.push((swatch.filter(|_| k == 0), clip(line, n)));
        }
    }
    out
}

fn array_height(site: &Site, pl: &PlannedLayout, a: ArrayIdx, w: f64) -> f64 {
    let rows = site.arrays[a].disks.div_ceil(DISKS_PER_ROW).max(1) as f64;
    let lines = caption_lines(site, pl, a, w).len().max(1) as f64;
    34.0 + rows * (DISK_H + 2.0 * BAR_H + 12.0) + lines * 13.0 + 6.0
}

fn chips_per_row(w: f64) -> usize {
    (((w - 2.0 * PAD) / (CHIP_W + 3.0)).floor() as usize).max(1)
}

fn server_height(chips: usize, w: f64) -> f64 {
    let rows = chips.min(CHIPS_MAX + 1).div_ceil(chips_per_row(w)) as f64;
    38.0 + rows * (CHIP_H + 3.0) + 4.0
}

/// The drawing of one layout, optionally with a whatif overlay.
pub fn layout_drawing(site: &Site, pl: &PlannedLayout, overlay: Option<&Overlay>) -> String {
    let l = pl.hardware();
    // A layout kept per class is drawn without its assets (`--layout ID` draws them).
    let assets: Vec<AssetMark> = pl
        .per_asset()
        .map(|d| &d.assets[..])
        .unwrap_or_default()
        .iter()
        .filter(|a| a.kind != crate::layout::AssetKind::Consumer)
        .enumerate()
        .map(|(i, a)| AssetMark {
            number: i + 1,
            name: &a.name,
            kind: a.kind.as_str(),
            replicas: a.replicas,
            servers: &a.expected,
        })
        .collect();
    let chips_of =
        |name: &str| -> Vec<&AssetMark> { assets.iter().filter(|a| a.servers.iter().any(|s| s == name)).collect() };

    // Column widths: wide enough for the widest array, at least COL_MIN_W.
    let widths: Vec<f64> = (0..site.racks.len())
        .map(|r| {
            rack_arrays(site, r)
                .iter()
                .map(|&a| array_width(site.arrays[a].disks))
                .fold(COL_MIN_W, f64::max)
        })
        .collect();
    let total_w = widths.iter().map(|w| w + 2.0 * PAD).sum::<f64>() + PAD;
    let top = 74.0;
    let mut svg = Svg::new(total_w.max(640.0), 100.0, &format!("layout {}", pl.id));
    let title = match overlay {
        Some(o) => format!("layout {} — failed: {}", pl.id, o.caption),
        None => format!(
            "layout {} — pattern {} ({}), R{}",
            pl.id, pl.pattern, pl.raid, pl.replicas
        ),
    };
    svg.text(PAD, 18.0, 14.0, "start", "font-weight=\"bold\"", &title);
    key(&mut svg, 30.0, overlay.is_some());

    let mut boxes: Boxes = BTreeMap::new();
    let mut links: Vec<(f64, f64, ServerIdx, String)> = Vec::new();
    let mut x = PAD;
    let mut bottom: f64 = top;
    for (r, rack) in site.racks.iter().enumerate() {
        let w = widths[r];
        let failed = overlay.is_some_and(|o| o.racks.iter().any(|n| n == &rack.name));
        // Height first (the column background goes under everything).
        let servers: Vec<ServerIdx> = site.rack_servers(r).collect();
        let arrays = rack_arrays(site, r);
        let mut h = 30.0;
        for &s in &servers {
            h += server_height(chips_of(&site.servers[s].name).len(), w) + 6.0;
        }
        h += 8.0;
        for &a in &arrays {
            h += array_height(site, pl, a, w) + 6.0;
        }
        let col_x = x;
        svg.open(&attr("data-rack", &rack.name), None);
        svg.rect(
            (col_x, top, w + PAD, h),
            if failed { "#d0d0d0" } else { "#f7f7fa" },
            if failed { "#7a7a7a" } else { "#b8b8c8" },
            "rx=\"6\"",
        );
        let label = if failed {
            format!("rack {} — FAILED", rack.name)
        } else {
            format!("rack {}", rack.name)
        };
        svg.text(col_x + PAD, top + 19.0, 13.0, "start", "font-weight=\"bold\"", &label);
        let mut y = top + 30.0;
        for &s in &servers {
            let sh = server_height(chips_of(&site.servers[s].name).len(), w);
            draw_server(
                &mut svg,
                site,
                pl,
                s,
                (col_x + PAD / 2.0, y, w, sh),
                &chips_of(&site.servers[s].name),
                overlay,
            );
            if l.servers.contains(&s) {
                boxes.insert(s, (col_x + PAD / 2.0, y, w, sh));
            }
            y += sh + 6.0;
        }
        y += 8.0;
        for &a in &arrays {
            let ah = array_height(site, pl, a, w);
            draw_array(&mut svg, site, pl, a, (col_x + PAD / 2.0, y, w), overlay, &mut links);
            y += ah + 6.0;
        }
        svg.close();
        bottom = bottom.max(top + h);
        x += w + 2.0 * PAD;
    }
    draw_links(&mut svg, &links, &boxes);
    draw_legend(&mut svg, &assets, overlay, bottom);
    svg.finish()
}

/// Cut a label to `n` characters with an ellipsis (the full text is in the tables and tooltips).
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

/// The symbol key under the title.
fn key(svg: &mut Svg, y: f64, whatif: bool) {
    let mut x = PAD;
    let items: Vec<(&str, &str, &str, &str)> = {
        let mut v = vec![
            (tint(0), colour(0), "", "disk in a volume group"),
            ("#ffffff", "#555555", "stroke-dasharray=\"3 2\"", "hot spare (S)"),
            ("#eeeeee", "#bbbbbb", "", "unused disk"),
        ];
        if whatif {
            v.push(("#555555", "#333333", "", "failed disk / domain (grey)"));
            v.push((status_colour(Status::Ok), "none", "", "ok"));
            v.push((status_colour(Status::Degraded), "none", "", "degraded"));
            v.push((status_colour(Status::Unavailable), "none", "", "unavailable"));
            v.push((status_colour(Status::DataLost), "none", "", "data lost"));
        } else {
            v.push((
                colour(1),
                "none",
                "",
                "numbered chip: a stream's replica on that server",
            ));
        }
        v
    };
    for (fill, stroke, style, text) in items {
        svg.rect((x, y, 9.0, 16.0), fill, stroke, style);
        svg.text(x + 14.0, y + 12.0, 10.5, "start", "", text);
        x += 24.0 + text.len() as f64 * 5.6;
    }
    svg.text(
        PAD,
        y + 34.0,
        10.5,
        "start",
        "fill=\"#555555\"",
        "bars under the disks: volume group (upper), LUNs cut from it (lower, named by the server each serves; dashed line to it)",
    );
}

/// Server `s` in its box `(x, y, w, h)`: its name and state, its volume, and a chip per replica it holds.
fn draw_server(
    svg: &mut Svg,
    site: &Site,
    pl: &PlannedLayout,
    s: ServerIdx,
    (x, y, w, h): (f64, f64, f64, f64),
    chips: &[&AssetMark],
    overlay: Option<&Overlay>,
) {
    let srv = &site.servers[s];
    let js = pl.hardware().servers.contains(&s);
    let down = overlay.is_some_and(|o| o.down.contains(&srv.name));
    let destroyed = overlay.is_some_and(|o| o.destroyed.contains(&srv.name));
    let full = overlay.is_some_and(|o| o.full.contains(&srv.name));
    // The server's whole volume line (which LUN or volume from which array or pool) is its tooltip.
    let planned = pl.servers.iter().find(|p| p.name == srv.name);
    let volume = planned.and_then(|p| p.volume.as_deref()).filter(|_| js);
    let mut name = srv.name.clone();
    if let Some(host) = &srv.host {
        name.push_str(&format!(" (host {host})"));
    }
    // The drawn name fits the box; the whole name leads the tooltip.
    let tip = match volume {
        Some(v) => format!("{name}: {v}"),
        None => name.clone(),
    };
    svg.open(&attr("data-server", &srv.name), Some(&tip));
    let (fill, stroke) = match (js, down || destroyed) {
        (_, true) => (GREY, if destroyed { "#b00000" } else { "#666666" }),
        (true, false) => ("#ffffff", "#333333"),
        (false, false) => ("#f0f0f0", "#c0c0c0"),
    };
    svg.rect(
        (x, y, w, h),
        fill,
        stroke,
        if destroyed {
            "rx=\"4\" stroke-width=\"2\""
        } else {
            "rx=\"4\""
        },
    );
    let mut state = Vec::new();
    if destroyed {
        state.push("STORE DESTROYED");
    } else if down {
        state.push("DOWN");
    }
    if full {
        state.push("STORE FULL");
    }
    // The state (10.5 px bold, right) keeps its room; the name has the rest.
    let state_chars = if state.is_empty() {
        0
    } else {
        state.join(", ").chars().count() * 6 / 7 + 2
    };
    let room = title_chars(w).saturating_sub(state_chars).max(8);
    svg.text(
        x + 8.0,
        y + 15.0,
        12.0,
        "start",
        "font-weight=\"bold\"",
        &clip(&name, room),
    );
    if !state.is_empty() {
        svg.text(
            x + w - 8.0,
            y + 15.0,
            10.5,
            "end",
            "fill=\"#b00000\" font-weight=\"bold\"",
            &state.join(", "),
        );
    }
    let sub = if js {
        match pl.hardware().lun_of(s) {
            Some(l) => format!("JetStream · {}", volume_label(site, pl, l, srv)),
            None => "JetStream".into(),
        }
    } else {
        "not a JetStream server in this layout".into()
    };
    svg.text(x + 8.0, y + 30.0, 10.0, "start", "fill=\"#555555\"", &sub);
    draw_chips(svg, &srv.name, chips, (x, y, w), overlay, down || destroyed);
    svg.close();
}

/// A chip per replica a server holds (at most `CHIPS_MAX`, then how many more), in its stream's colour or
/// the overlay's status; faded when the server is `out` (down or destroyed).
fn draw_chips(
    svg: &mut Svg,
    server: &str,
    chips: &[&AssetMark],
    (x, y, w): (f64, f64, f64),
    overlay: Option<&Overlay>,
    out: bool,
) {
    let per_row = chips_per_row(w);
    for (i, a) in chips.iter().take(CHIPS_MAX).enumerate() {
        let cx = x + PAD + (i % per_row) as f64 * (CHIP_W + 3.0);
        let cy = y + 38.0 + (i / per_row) as f64 * (CHIP_H + 3.0);
        let st = overlay.and_then(|o| o.status.get(a.name).copied());
        let fill = match st {
            Some(st) => status_colour(st),
            None => colour(a.number - 1),
        };
        let tip = format!(
            "{} ({} R{}) replica on {}{}",
            a.name,
            a.kind,
            a.replicas,
            server,
            st.map(|s| format!(": {}", s.as_str())).unwrap_or_default()
        );
        svg.open(
            &format!("{} class=\"replica\"", attr("data-replica", a.name)),
            Some(&tip),
        );
        // A replica on a server that is down or destroyed is out: faded, still in its stream's colour.
        let faded = if out {
            "rx=\"3\" fill-opacity=\"0.4\""
        } else {
            "rx=\"3\""
        };
        svg.rect((cx, cy, CHIP_W, CHIP_H), fill, "none", faded);
        svg.text(
            cx + CHIP_W / 2.0,
            cy + 11.0,
            9.5,
            "middle",
            "fill=\"#ffffff\"",
            &a.number.to_string(),
        );
        svg.close();
    }
    if chips.len() > CHIPS_MAX {
        let i = CHIPS_MAX;
        let cx = x + PAD + (i % per_row) as f64 * (CHIP_W + 3.0);
        let cy = y + 38.0 + (i / per_row) as f64 * (CHIP_H + 3.0);
        svg.text(
            cx,
            cy + 11.0,
            10.0,
            "start",
            "",
            &format!("+{}", chips.len() - CHIPS_MAX),
        );
    }
}

/// A server's volume in a few words under its name: what kind, how large, on which group, and the array's
/// rack when it is another (the full line is the server's tooltip).
fn volume_label(site: &Site, pl: &PlannedLayout, l: &crate::layout::Lun, srv: &crate::site::Server) -> String {
    let g = &pl.hardware().groups[l.group];
    let arr = &site.arrays[g.array];
    let size = fmt_bytes(l.size_bytes as f64);
    if let Some(h) = &arr.host {
        return format!("VM disk {size} on host {h}'s pool");
    }
    if arr.owner.is_some() {
        let what = if srv.host.is_some() {
            "VM disks"
        } else {
            "internal disks"
        };
        return format!("{what} {size}, {}", g.raid.as_str());
    }
    let what = if g.raid == crate::layout::Raid::DdpRaid1 {
        "RAID 1 volume"
    } else {
        "LUN"
    };
    let far = if arr.rack != srv.rack {
        format!(" · array in rack {}", site.racks[arr.rack].name)
    } else {
        String::new()
    };
    format!("{what} {size} on {}{far}", g.name)
}

/// LUN → server links, drawn over the columns, faint.
fn draw_links(svg: &mut Svg, links: &[(f64, f64, ServerIdx, String)], boxes: &Boxes) {
    for (lx, ly, s, tip) in links {
        if let Some((bx, by, bw, bh)) = boxes.get(s) {
            let (tx, ty) = (bx + bw / 2.0, by + bh);
            svg.open("class=\"link\"", Some(tip));
            svg.polyline(
                &[(*lx, *ly), (*lx, ly - 6.0), (tx, ty + 6.0), (tx, ty)],
                "#555555",
                "stroke-width=\"1\" stroke-opacity=\"0.45\" stroke-dasharray=\"3 3\"",
            );
            svg.close();
        }
    }
}

/// The asset legend under the columns (which end at `bottom`): number, name, kind, replicas, where the
/// plan expects them (and their status under a failure); sets the drawing's height.
fn draw_legend(svg: &mut Svg, assets: &[AssetMark], overlay: Option<&Overlay>, bottom: f64) {
    let mut y = bottom + 22.0;
    let meta = overlay.and_then(|o| o.meta);
    if let Some(m) = meta {
        svg.text(
            PAD,
            y,
            11.5,
            "start",
            &format!("fill=\"{}\" font-weight=\"bold\"", status_colour(m)),
            &format!("meta group (all JetStream servers): {}", m.as_str()),
        );
        y += 18.0;
    }
    svg.text(
        PAD,
        y,
        12.0,
        "start",
        "font-weight=\"bold\"",
        "streams, KV buckets and object stores (replicas where the plan expects them)",
    );
    y += 16.0;
    let col_w = 420.0;
    let cols = ((svg.width() - PAD) / col_w).floor().max(1.0) as usize;
    for (i, a) in assets.iter().enumerate() {
        let (cx, cy) = (PAD + (i % cols) as f64 * col_w, y + (i / cols) as f64 * 17.0);
        let st = overlay.and_then(|o| o.status.get(a.name).copied());
        let fill = match st {
            Some(s) => status_colour(s),
            None => colour(a.number - 1),
        };
        svg.open(&attr("data-asset", a.name), None);
        svg.rect((cx, cy - 11.0, CHIP_W, CHIP_H - 1.0), fill, "none", "rx=\"3\"");
        svg.text(
            cx + CHIP_W / 2.0,
            cy,
            9.5,
            "middle",
            "fill=\"#ffffff\"",
            &a.number.to_string(),
        );
        let text = format!(
            "{} ({} R{}){}: {}",
            a.name,
            a.kind,
            a.replicas,
            st.map(|s| format!(" {}", s.as_str())).unwrap_or_default(),
            if a.servers.is_empty() {
                "not placed".into()
            } else {
                a.servers.join(", ")
            }
        );
        svg.text(cx + CHIP_W + 6.0, cy, 10.5, "start", "", &clip(&text, 66));
        svg.close();
    }
    let rows = assets.len().div_ceil(cols) as f64;
    svg.set_height(y + rows * 17.0 + 10.0);
}
