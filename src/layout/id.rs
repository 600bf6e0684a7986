//! Layout ids: content-derived, readable names for layouts (`p1-raid1-r3-Ax2.Bx2.Cx1-3f9a`), and the form
//! they had before servers per rack were written `RACKxN`, so `--layout OLD` still finds a layout.

use super::*;
use crate::site::{Pattern, Site};
use std::collections::BTreeMap;

/// `p1-raid1-r3-Ax2.Bx2.Cx1-3f9a`: pattern, RAID, default replicas, servers per rack (`RACKxN`, racks by
/// name, joined by `.`), and a short hash of the exact servers, volumes and placement (names only, sorted,
/// so input order does not matter). The `x` keeps rack names that end in digits readable (rack R1 with 2
/// servers is `R1x2`; it used to read `R12`): the count is the digits after a segment's last `x`. Every
/// character is a letter, digit, `_`, `.` or `-`, so an id is safe in file names and unquoted in a shell.
pub fn layout_id(site: &Site, l: &Layout) -> String {
    let mut per_rack: BTreeMap<String, usize> = BTreeMap::new();
    for &s in &l.servers {
        *per_rack
            .entry(clean(&site.racks[site.servers[s].rack].name))
            .or_default() += 1;
    }
    let racks: Vec<String> = per_rack.iter().map(|(r, n)| format!("{r}x{n}")).collect();
    let mut canon: Vec<String> = l
        .luns
        .iter()
        .map(|lun| {
            let g = &l.groups[lun.group];
            format!(
                "{}@{}:{}x{}:{}",
                site.servers[lun.server].name.to_ascii_lowercase(),
                site.arrays[g.array].name.to_ascii_lowercase(),
                g.raid.as_str(),
                g.disks.len(),
                lun.size_bytes
            )
        })
        .collect();
    canon.sort();
    canon.push(match &l.placement {
        PlacementRule::UniqueTag { prefix } => format!("unique:{prefix}"),
        PlacementRule::Free => "free".into(),
        PlacementRule::Pinned { sets } => {
            let mut v: Vec<String> = sets
                .iter()
                .map(|s| {
                    let mut n: Vec<String> = s
                        .servers
                        .iter()
                        .map(|&x| site.servers[x].name.to_ascii_lowercase())
                        .collect();
                    n.sort();
                    n.join("+")
                })
                .collect();
            v.sort();
            format!("pinned:{}", v.join("|"))
        }
    });
    let h = crate::units::fnv1a64(canon.join(";").as_bytes());
    format!(
        "{}-{}-r{}-{}-{:04x}",
        l.pattern.id_tag(),
        id_raid(l),
        l.replicas,
        if racks.is_empty() {
            "none".to_string()
        } else {
            racks.join(".")
        },
        (h & 0xffff) as u16
    )
}

/// The id's RAID part: the layout's level, or for a mixed layout every level in use joined by `+`, with a
/// RAID 1 volume on a DDP pool written `ddp` there (`mx-raid1+raid10+ddp-…`) so a mixed id still fits a
/// 100-column table whole; the JSON's `raid` keeps the full names (`Layout::raid_label`).
fn id_raid(l: &Layout) -> String {
    let label = l.raid_label();
    if l.pattern == Pattern::Mixed {
        label.replace("ddp-raid1", "ddp")
    } else {
        label
    }
}

/// The id a layout had before servers per rack were written `RACKxN` (`p1-raid1-r3-A1.B1.C1-fdce` for
/// `p1-raid1-r3-Ax1.Bx1.Cx1-fdce`; the hash is unchanged), so `--layout OLD` can name the new id.
pub fn legacy_layout_id(id: &str) -> String {
    let parts: Vec<&str> = id.split('-').collect();
    if parts.len() < 3 {
        return id.to_string();
    }
    // The rack segment is the one before the hash (the last).
    let i = parts.len() - 2;
    let racks: Vec<String> = parts[i]
        .split('.')
        .map(|seg| match seg.rfind('x') {
            Some(x) if x > 0 && x + 1 < seg.len() && seg[x + 1..].bytes().all(|b| b.is_ascii_digit()) => {
                format!("{}{}", &seg[..x], &seg[x + 1..])
            }
            _ => seg.to_string(),
        })
        .collect();
    let mut out: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    out[i] = racks.join(".");
    out.join("-")
}

/// Racks an id's rack segment lists whole in the tables; past this `short_layout_id` counts them.
pub const SHORT_ID_RACKS: usize = 6;

/// The form of a layout id the tables show: the id itself for a layout on at most `SHORT_ID_RACKS` racks,
/// else with the rack segment written as servers per rack times racks, most servers first
/// (`p1-raid1-r5-5x30racks-3d27` for thirty racks of five; `5x28racks.4x2racks`), so a 30-rack site's
/// 190-character ids do not squeeze every other column of the table to one character. The pattern, RAID,
/// replicas and hash stay, and `--layout` takes this form too (`plan::inputs::find_layout`). A whole id's
/// rack segments all end in the count's digits (`RACKxN`), these in `racks`: a short id is never
/// another layout's whole id.
pub fn short_layout_id(id: &str) -> std::borrow::Cow<'_, str> {
    let parts: Vec<&str> = id.split('-').collect();
    if parts.len() < 3 {
        return id.into();
    }
    let i = parts.len() - 2;
    let racks: Vec<&str> = parts[i].split('.').collect();
    if racks.len() <= SHORT_ID_RACKS {
        return id.into();
    }
    // Servers per rack: the digits after a segment's last `x`; an id not of that form is kept whole.
    let mut per: BTreeMap<std::cmp::Reverse<u64>, usize> = BTreeMap::new();
    for seg in &racks {
        let n = seg.rfind('x').and_then(|x| seg[x + 1..].parse::<u64>().ok());
        match n {
            Some(n) => *per.entry(std::cmp::Reverse(n)).or_default() += 1,
            None => return id.into(),
        }
    }
    let counts: Vec<String> = per.iter().map(|(n, k)| format!("{}x{k}racks", n.0)).collect();
    let mut out: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    out[i] = counts.join(".");
    out.join("-").into()
}

fn clean(name: &str) -> String {
    let s: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if s.is_empty() {
        "x".into()
    } else {
        s
    }
}

#[cfg(test)]
mod short_tests {
    use super::short_layout_id;

    #[test]
    fn many_racks_are_counted_few_are_kept() {
        let few = "p1-raid1-r3-Ax2.Bx2.Cx1-3f9a";
        assert_eq!(short_layout_id(few), few);
        let racks: Vec<String> = (0..30).map(|r| format!("R{r}x{}", if r < 2 { 4 } else { 5 })).collect();
        let long = format!("ddp-ddp-raid1-r5-{}-3d27", racks.join("."));
        assert_eq!(short_layout_id(&long), "ddp-ddp-raid1-r5-5x28racks.4x2racks-3d27");
        let seven: Vec<String> = (0..7).map(|r| format!("R{r}x1")).collect();
        assert_eq!(
            short_layout_id(&format!("p4-raid10-r3-{}-00ff", seven.join("."))),
            "p4-raid10-r3-1x7racks-00ff"
        );
        // A whole id's rack segments end in digits (`RACKxN`); a short one's never do.
        for id in [long.as_str(), few] {
            let short = short_layout_id(id);
            let racks = short.rsplit('-').nth(1).unwrap();
            let counted = racks.split('.').all(|seg| seg.ends_with("racks"));
            let whole = racks.split('.').all(|seg| seg.ends_with(|c: char| c.is_ascii_digit()));
            assert!(counted != whole, "{short}");
        }
        // Not an id's shape: kept whole.
        assert_eq!(short_layout_id("a.b.c.d.e.f.g"), "a.b.c.d.e.f.g");
        assert_eq!(short_layout_id("p1-r3-A.B.C.D.E.F.G-1234"), "p1-r3-A.B.C.D.E.F.G-1234");
    }
}
