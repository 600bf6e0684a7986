//! The HTML layout drawing keeps its words inside their boxes (issue 39): a long internal-disk title ran
//! out of its array box and long volume captions were cut with `…`. Titles now fit (the whole title is the
//! box's tooltip) and captions wrap at spaces.

use crate::common::{repo_file, run};

/// Estimated right end of a start-anchored text: 12-px bold ≈ 7.2 px a character, 10-px ≈ 5.2 (the
/// widths the drawing budgets with; DejaVu Sans averages below both).
fn right_end(x: f64, size: f64, text: &str) -> f64 {
    let per = if size >= 12.0 { 7.2 } else { 5.2 };
    x + per * text.chars().count() as f64
}

#[test]
fn long_names_stay_inside_their_boxes_and_captions_wrap_whole() {
    let site = std::fs::read_to_string(repo_file("examples/mixed-storage.yaml"))
        .unwrap()
        .replace("[alpha]", "[alpha-storage-node-with-a-long-name-01]")
        .replace(
            "name: charlie",
            "name: charlie-internal-nvme-server-with-a-very-long-name-03",
        );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long-names.yaml");
    std::fs::write(&path, site).unwrap();
    let (code, html, err) = run(&["--format", "html", "design", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // Every array and server box: kind, name, tooltip, left edge, width, and its own texts.
    let mut boxes = Vec::new();
    let mut at = 0;
    while let Some(i) = next_box(&html, at) {
        let tag_end = i + html[i..].find('>').unwrap();
        let open = &html[i..tag_end];
        let kind = if open.starts_with("<g data-array") {
            "array"
        } else {
            "server"
        };
        let name = attr(open, if kind == "array" { "data-array" } else { "data-server" });
        let rest = &html[tag_end + 1..];
        let tip = rest
            .strip_prefix("<title>")
            .map(|t| t[..t.find("</title>").unwrap()].to_string())
            .unwrap_or_default();
        let rect = &rest[rest.find("<rect ").unwrap()..];
        let rect = &rect[..rect.find('>').unwrap()];
        let (x0, w): (f64, f64) = (attr(rect, "x").parse().unwrap(), attr(rect, "width").parse().unwrap());
        let end = [
            next_box(&html, tag_end),
            html[tag_end..].find("<g data-rack").map(|j| j + tag_end),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(html.len());
        boxes.push((kind, name, tip, x0, w, html[tag_end..end].to_string()));
        at = tag_end;
    }
    assert!(boxes.len() >= 6, "arrays and servers drawn: {}", boxes.len());
    let mut captions = String::new();
    for (kind, name, tip, x0, w, body) in &boxes {
        let mut t = 0;
        while let Some(j) = body[t..].find("<text ").map(|j| j + t) {
            let close = j + body[j..].find('>').unwrap();
            let tag = &body[j..close];
            let s = &body[close + 1..close + 1 + body[close + 1..].find("</text>").unwrap()];
            t = close;
            if attr(tag, "text-anchor") != "start" {
                continue;
            }
            let (x, size): (f64, f64) = (attr(tag, "x").parse().unwrap(), attr(tag, "font-size").parse().unwrap());
            assert!(
                right_end(x, size, s) <= x0 + w + 1.0,
                "{kind} {name}: '{s}' runs out of its box (ends near {:.0}, box ends at {:.0})",
                right_end(x, size, s),
                x0 + w
            );
            if *kind == "array" && size < 12.0 {
                captions.push_str(s);
                captions.push(' ');
            }
        }
        // Each box's whole name is in its tooltip.
        assert!(
            tip.contains(name.trim_end_matches("-internal")),
            "tooltip of {kind} {name}: {tip}"
        );
    }
    assert!(
        html.contains("<title>internal disks of charlie-internal-nvme-server-with-a-very-long-name-03</title>"),
        "the whole internal-disk title is the tooltip"
    );
    // The LUN caption is whole, over two lines: not cut at the box's edge.
    assert!(
        captions.contains("alpha-storage-node-with-a-long-name-01 2.97 TiB"),
        "{captions}"
    );
}

/// The next array or server box at or after `from`.
fn next_box(html: &str, from: usize) -> Option<usize> {
    let a = html[from..].find("<g data-array=\"").map(|i| i + from);
    let s = html[from..].find("<g data-server=\"").map(|i| i + from);
    a.into_iter().chain(s).filter(|&i| i > from || from == 0).min()
}

/// An attribute's value in a tag.
fn attr(tag: &str, name: &str) -> String {
    let key = format!(" {name}=\"");
    let i = tag.find(&key).map(|i| i + key.len()).or_else(|| {
        let key = format!("<g {name}=\"");
        tag.find(&key).map(|i| i + key.len())
    });
    let i = i.unwrap_or_else(|| panic!("no {name} in {tag}"));
    tag[i..i + tag[i..].find('"').unwrap()].to_string()
}
