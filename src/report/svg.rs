//! A small SVG toolkit for the HTML reports: an element builder that escapes every text it is given, a
//! colour palette, and a line chart (log or linear axes, prediction bands, measured points). Hand-built
//! SVG rather than plotters: the drawings are boxes and bars, the charts are simple, and the output must be
//! inline, deterministic and free of external references (no fonts, no scripts, no `xmlns` URL — inline
//! SVG in HTML needs none).

use std::fmt::Write as _;

/// Escape text for XML/HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0; names never need them.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Categorical colours (distinct on screen and in grey-scale print), cycled.
pub const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
];

/// The palette colour for item `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Light tints of the palette (fills behind text).
pub const TINTS: [&str; 10] = [
    "#c6dbef", "#fdd0a2", "#c7e9c0", "#fcbba1", "#dadaeb", "#e7cfc4", "#f6d2e8", "#c2eef2", "#ecedb0", "#d9d9d9",
];

pub fn tint(i: usize) -> &'static str {
    TINTS[i % TINTS.len()]
}

/// Round a coordinate for output (stable text, small files).
fn n(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// An SVG document under construction. Coordinates are user units (pixels at 100 %).
#[derive(Debug, Clone)]
pub struct Svg {
    width: f64,
    height: f64,
    body: String,
    label: String,
}

impl Svg {
    /// A drawing of `width` × `height`; `label` is its accessible name (`aria-label`).
    pub fn new(width: f64, height: f64, label: &str) -> Svg {
        Svg {
            width,
            height,
            body: String::new(),
            label: label.to_string(),
        }
    }

    pub fn width(&self) -> f64 {
        self.width
    }

    pub fn set_height(&mut self, h: f64) {
        self.height = h;
    }

    /// A rectangle `(x, y, w, h)`; `style` is extra attributes written as is (trusted, never user text).
    pub fn rect(&mut self, (x, y, w, h): (f64, f64, f64, f64), fill: &str, stroke: &str, style: &str) {
        let _ = write!(
            self.body,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\"{}{style}/>",
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0)),
            if style.is_empty() { "" } else { " " }
        );
    }

    /// A rectangle `(x, y, w, h)` with a tooltip (`<title>`).
    pub fn rect_titled(
        &mut self,
        (x, y, w, h): (f64, f64, f64, f64),
        fill: &str,
        stroke: &str,
        style: &str,
        title: &str,
    ) {
        let _ = write!(
            self.body,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\"{}{style}><title>{}</title></rect>",
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0)),
            if style.is_empty() { "" } else { " " },
            esc(title)
        );
    }

    /// Text at (x, y) (baseline); `anchor` is start, middle or end. The text is escaped.
    pub fn text(&mut self, x: f64, y: f64, size: f64, anchor: &str, style: &str, text: &str) {
        let _ = write!(
            self.body,
            "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{anchor}\"{}{style}>{}</text>",
            n(x),
            n(y),
            n(size),
            if style.is_empty() { "" } else { " " },
            esc(text)
        );
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str, style: &str) {
        let _ = write!(
            self.body,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{stroke}\"{}{style}/>",
            n(x1),
            n(y1),
            n(x2),
            n(y2),
            if style.is_empty() { "" } else { " " }
        );
    }

    /// A polyline through `pts`.
    pub fn polyline(&mut self, pts: &[(f64, f64)], stroke: &str, style: &str) {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{},{}", n(*x), n(*y))).collect();
        let _ = write!(
            self.body,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{stroke}\"{}{style}/>",
            p.join(" "),
            if style.is_empty() { "" } else { " " }
        );
    }

    /// A closed polygon.
    pub fn polygon(&mut self, pts: &[(f64, f64)], fill: &str, style: &str) {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{},{}", n(*x), n(*y))).collect();
        let _ = write!(
            self.body,
            "<polygon points=\"{}\" fill=\"{fill}\"{}{style}/>",
            p.join(" "),
            if style.is_empty() { "" } else { " " }
        );
    }

    pub fn circle(&mut self, cx: f64, cy: f64, r: f64, fill: &str, stroke: &str, title: &str) {
        let _ = write!(
            self.body,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\"><title>{}</title></circle>",
            n(cx),
            n(cy),
            n(r),
            esc(title)
        );
    }

    /// Open a group carrying `data-*`-style attributes (trusted) and an optional tooltip.
    pub fn open(&mut self, attrs: &str, title: Option<&str>) {
        let _ = write!(self.body, "<g{}{attrs}>", if attrs.is_empty() { "" } else { " " });
        if let Some(t) = title {
            let _ = write!(self.body, "<title>{}</title>", esc(t));
        }
    }

    pub fn close(&mut self) {
        self.body.push_str("</g>");
    }

    /// The finished `<svg>` element (for inlining in HTML).
    pub fn finish(self) -> String {
        format!(
            "<svg viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{}\" \
             font-family=\"sans-serif\">{}</svg>",
            esc(&self.label),
            self.body,
            w = n(self.width),
            h = n(self.height),
        )
    }
}

/// An attribute value for `data-*` attributes: escaped, quoted.
pub fn attr(name: &str, value: &str) -> String {
    format!("{name}=\"{}\"", esc(value))
}

/// One line of a chart: a model curve, optionally with a band (low, high) at each x.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub colour: String,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
    /// (x, low, high) per point; drawn as a translucent area.
    pub band: Vec<(f64, f64, f64)>,
}

/// Measured or published points (seed rows, verify measurements).
#[derive(Debug, Clone)]
pub struct Marks {
    pub name: String,
    pub colour: String,
    /// Filled circle (true) or open (false).
    pub filled: bool,
    /// (x, y, tooltip).
    pub points: Vec<(f64, f64, String)>,
}

/// A line chart with a legend under the plot.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    /// Fixed x ticks (value, label); empty = automatic.
    pub x_ticks: Vec<(f64, String)>,
    pub series: Vec<Series>,
    pub marks: Vec<Marks>,
    pub width: f64,
    pub height: f64,
}

impl Chart {
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Chart {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_log: false,
            y_log: false,
            x_ticks: Vec::new(),
            series: Vec::new(),
            marks: Vec::new(),
            width: 760.0,
            height: 360.0,
        }
    }
}

/// "Nice" ticks (1, 2, 5 × 10^k) covering [lo, hi].
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return vec![lo];
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut v = Vec::new();
    while t <= hi + step * 1e-9 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    v
}

/// Short number for axis labels: 1.2k, 35, 0.5, 2M.
pub fn short_num(x: f64) -> String {
    let a = x.abs();
    if a >= 1e9 || (a > 0.0 && a < 1e-2) {
        format!("{x:.0e}")
    } else if a >= 1e6 {
        format!("{}M", trim(x / 1e6))
    } else if a >= 1e3 {
        format!("{}k", trim(x / 1e3))
    } else {
        trim(x)
    }
}

fn trim(x: f64) -> String {
    let s = if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Render a chart. Points that cannot be shown on a log axis (≤ 0, not finite) are left out.
pub fn line_chart(c: &Chart) -> String {
    let ok = |x: f64, log: bool| x.is_finite() && (!log || x > 0.0);
    let (xs, ys) = extent(c);
    let legend_rows = (c.series.len() + c.marks.len()).div_ceil(2);
    let (ml, mr, mt, mb) = (64.0, 16.0, 28.0, 44.0 + 16.0 * legend_rows as f64);
    let mut svg = Svg::new(c.width, c.height + 16.0 * legend_rows as f64, &c.title);
    svg.text(c.width / 2.0, 16.0, 13.0, "middle", "font-weight=\"bold\"", &c.title);
    let (pw, ph) = (c.width - ml - mr, c.height + 16.0 * legend_rows as f64 - mt - mb);
    svg.rect((ml, mt, pw, ph), "#ffffff", "#999999", "");
    if xs.is_empty() || ys.is_empty() {
        svg.text(ml + pw / 2.0, mt + ph / 2.0, 12.0, "middle", "", "no data");
        return svg.finish();
    }
    let f = |v: f64, log: bool| if log { v.log10() } else { v };
    let span = |v: &[f64], log: bool| {
        let lo = v.iter().map(|&x| f(x, log)).fold(f64::INFINITY, f64::min);
        let hi = v.iter().map(|&x| f(x, log)).fold(f64::NEG_INFINITY, f64::max);
        if hi - lo < 1e-9 {
            (lo - 0.5, hi + 0.5)
        } else {
            let pad = (hi - lo) * 0.05;
            (lo - pad, hi + pad)
        }
    };
    let (x0, x1) = span(&xs, c.x_log);
    let (mut y0, y1) = span(&ys, c.y_log);
    if !c.y_log && y0 > 0.0 && ys.iter().all(|&y| y >= 0.0) {
        y0 = 0.0;
    }
    let px = |x: f64| ml + (f(x, c.x_log) - x0) / (x1 - x0) * pw;
    let py = |y: f64| mt + ph - (f(y, c.y_log) - y0) / (y1 - y0) * ph;
    let xt: Vec<(f64, String)> = if c.x_ticks.is_empty() {
        axis_ticks(x0, x1, c.x_log)
            .into_iter()
            .map(|t| (t, short_num(t)))
            .collect()
    } else {
        c.x_ticks
            .iter()
            .filter(|(t, _)| {
                let v = f(*t, c.x_log);
                v >= x0 && v <= x1
            })
            .cloned()
            .collect()
    };
    for (t, label) in &xt {
        let x = px(*t);
        svg.line(x, mt, x, mt + ph, "#e4e4e4", "");
        svg.text(x, mt + ph + 14.0, 10.0, "middle", "", label);
    }
    for t in axis_ticks(y0, y1, c.y_log) {
        let y = py(t);
        svg.line(ml, y, ml + pw, y, "#e4e4e4", "");
        svg.text(ml - 4.0, y + 3.0, 10.0, "end", "", &short_num(t));
    }
    svg.text(ml + pw / 2.0, mt + ph + 30.0, 11.0, "middle", "", &c.x_label);
    svg.text(
        14.0,
        mt + ph / 2.0,
        11.0,
        "middle",
        &format!("transform=\"rotate(-90 14 {})\"", n(mt + ph / 2.0)),
        &c.y_label,
    );
    // Bands, then lines, then points on top.
    for s in &c.series {
        let band: Vec<&(f64, f64, f64)> = s
            .band
            .iter()
            .filter(|(x, lo, hi)| ok(*x, c.x_log) && ok(*lo, c.y_log) && ok(*hi, c.y_log))
            .collect();
        if band.len() >= 2 {
            let mut pts: Vec<(f64, f64)> = band.iter().map(|(x, _, hi)| (px(*x), py(*hi))).collect();
            pts.extend(band.iter().rev().map(|(x, lo, _)| (px(*x), py(*lo))));
            svg.polygon(&pts, &s.colour, "fill-opacity=\"0.12\"");
        }
    }
    for s in &c.series {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|(x, y)| ok(*x, c.x_log) && ok(*y, c.y_log))
            .map(|(x, y)| (px(*x), py(*y)))
            .collect();
        svg.open(&attr("data-series", &s.name), Some(&s.name));
        svg.polyline(
            &pts,
            &s.colour,
            if s.dashed {
                "stroke-width=\"2\" stroke-dasharray=\"6 4\""
            } else {
                "stroke-width=\"2\""
            },
        );
        svg.close();
    }
    for m in &c.marks {
        svg.open(&attr("data-marks", &m.name), None);
        for (x, y, tip) in &m.points {
            if ok(*x, c.x_log) && ok(*y, c.y_log) {
                let fill = if m.filled { m.colour.as_str() } else { "#ffffff" };
                svg.circle(px(*x), py(*y), 4.0, fill, &m.colour, tip);
            }
        }
        svg.close();
    }
    // Axes and grid above; the legend in two columns under the plot.
    chart_legend(&mut svg, c, ml, mt + ph + 44.0, pw / 2.0);
    svg.finish()
}

/// The points a chart shows (both coordinates), bands and marks included, for its axes' extent.
fn extent(c: &Chart) -> (Vec<f64>, Vec<f64>) {
    let ok = |x: f64, log: bool| x.is_finite() && (!log || x > 0.0);
    let mut xs: Vec<f64> = Vec::new();
    let mut ys: Vec<f64> = Vec::new();
    for s in &c.series {
        for &(x, y) in &s.points {
            if ok(x, c.x_log) && ok(y, c.y_log) {
                xs.push(x);
                ys.push(y);
            }
        }
        for &(x, lo, hi) in &s.band {
            if ok(x, c.x_log) {
                for y in [lo, hi] {
                    if ok(y, c.y_log) {
                        ys.push(y);
                    }
                }
            }
        }
    }
    for m in &c.marks {
        for (x, y, _) in &m.points {
            if ok(*x, c.x_log) && ok(*y, c.y_log) {
                xs.push(*x);
                ys.push(*y);
            }
        }
    }
    (xs, ys)
}

/// Tick positions between `lo` and `hi` (log10 units on a log axis): decades, or 1-2-5 inside less
/// than one.
fn axis_ticks(lo: f64, hi: f64, log: bool) -> Vec<f64> {
    if log {
        let mut v = Vec::new();
        let step = ((hi - lo) / 8.0).ceil().max(1.0);
        let mut e = lo.floor();
        while e <= hi.ceil() {
            let t = 10f64.powf(e);
            if e >= lo && e <= hi {
                v.push(t);
            }
            e += step;
        }
        if v.len() < 2 {
            // Less than a decade: 1-2-5 ticks inside it.
            let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
            v = nice_ticks(a, b, 4).into_iter().filter(|t| *t > 0.0).collect();
        }
        v
    } else {
        nice_ticks(lo, hi, 6)
    }
}

/// The legend: two columns of `col_w` under the plot, from `ml`, `ly`.
fn chart_legend(svg: &mut Svg, c: &Chart, ml: f64, ly: f64, col_w: f64) {
    let mut i = 0usize;
    for s in &c.series {
        let (lx, yy) = (ml + (i % 2) as f64 * col_w, ly + (i / 2) as f64 * 16.0);
        svg.line(
            lx,
            yy - 4.0,
            lx + 22.0,
            yy - 4.0,
            &s.colour,
            if s.dashed {
                "stroke-width=\"2\" stroke-dasharray=\"6 4\""
            } else {
                "stroke-width=\"2\""
            },
        );
        svg.text(lx + 28.0, yy, 10.5, "start", "", &s.name);
        i += 1;
    }
    for m in &c.marks {
        let (lx, yy) = (ml + (i % 2) as f64 * col_w, ly + (i / 2) as f64 * 16.0);
        let fill = if m.filled { m.colour.as_str() } else { "#ffffff" };
        svg.circle(lx + 11.0, yy - 4.0, 4.0, fill, &m.colour, &m.name);
        svg.text(lx + 28.0, yy, 10.5, "start", "", &m.name);
        i += 1;
    }
}

/// One bar of a horizontal bar chart: a value with an optional interval (whiskers) and a second value
/// drawn as a diamond (e.g. Monte Carlo with its 95 % interval, and the exact figure).
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub interval: Option<(f64, f64)>,
    pub marker: Option<f64>,
    pub colour: String,
}

/// A horizontal bar chart, one row per bar; a log axis when the values span more than two decades.
pub fn bar_chart(title: &str, x_label: &str, bars: &[Bar], marker_name: &str) -> String {
    let row_h = 20.0;
    let (ml, mr, mt) = (190.0, 30.0, 30.0);
    let width = 760.0;
    let h = mt + bars.len() as f64 * row_h + 56.0;
    let mut svg = Svg::new(width, h, title);
    svg.text(width / 2.0, 16.0, 13.0, "middle", "font-weight=\"bold\"", title);
    let vals: Vec<f64> = bars
        .iter()
        .flat_map(|b| {
            let mut v = vec![b.value];
            if let Some((lo, hi)) = b.interval {
                v.extend([lo, hi]);
            }
            v.extend(b.marker);
            v
        })
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let pw = width - ml - mr;
    let ph = bars.len() as f64 * row_h;
    svg.rect((ml, mt, pw, ph), "#ffffff", "#999999", "");
    if vals.is_empty() {
        svg.text(ml + pw / 2.0, mt + ph / 2.0 + 4.0, 11.0, "middle", "", "all zero");
    }
    let hi = vals.iter().copied().fold(0.0, f64::max);
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let log = hi > 0.0 && lo.is_finite() && hi / lo > 100.0;
    let (l0, l1) = if log {
        (lo.log10().floor(), hi.log10().ceil())
    } else {
        (0.0, if hi > 0.0 { hi * 1.05 } else { 1.0 })
    };
    let px = |v: f64| -> f64 {
        if log {
            if v <= 0.0 {
                ml
            } else {
                ml + ((v.log10() - l0) / (l1 - l0)).clamp(0.0, 1.0) * pw
            }
        } else {
            ml + (v / l1).clamp(0.0, 1.0) * pw
        }
    };
    let ticks: Vec<f64> = if log {
        // At most about eight labelled decades, however wide the range.
        let step = (((l1 - l0) / 8.0).ceil() as usize).max(1);
        (l0 as i32..=l1 as i32).step_by(step).map(|e| 10f64.powi(e)).collect()
    } else {
        nice_ticks(0.0, l1, 5)
    };
    for t in ticks {
        let x = px(t);
        svg.line(x, mt, x, mt + ph, "#e4e4e4", "");
        svg.text(x, mt + ph + 13.0, 10.0, "middle", "", &short_num(t));
    }
    svg.text(
        ml + pw / 2.0,
        mt + ph + 28.0,
        11.0,
        "middle",
        "",
        &format!("{x_label}{}", if log { " (log scale)" } else { "" }),
    );
    for (i, b) in bars.iter().enumerate() {
        let y = mt + i as f64 * row_h;
        svg.open(&attr("data-bar", &b.label), None);
        svg.text(ml - 6.0, y + 14.0, 10.5, "end", "", &b.label);
        let x1 = px(b.value);
        svg.rect_titled(
            (ml, y + 4.0, (x1 - ml).max(0.0), row_h - 8.0),
            &b.colour,
            "none",
            "",
            &format!("{}: {}", b.label, short_num(b.value)),
        );
        if let Some((lo, hi)) = b.interval {
            let (a, c) = (px(lo), px(hi));
            svg.line(a, y + row_h / 2.0, c, y + row_h / 2.0, "#333333", "");
            svg.line(a, y + 6.0, a, y + row_h - 6.0, "#333333", "");
            svg.line(c, y + 6.0, c, y + row_h - 6.0, "#333333", "");
        }
        if let Some(m) = b.marker {
            let (cx, cy) = (px(m), y + row_h / 2.0);
            svg.polygon(
                &[(cx, cy - 5.0), (cx + 5.0, cy), (cx, cy + 5.0), (cx - 5.0, cy)],
                "#111111",
                "",
            );
        }
        svg.close();
    }
    if !marker_name.is_empty() {
        let y = mt + ph + 44.0;
        svg.polygon(
            &[(ml, y - 9.0), (ml + 5.0, y - 4.0), (ml, y + 1.0), (ml - 5.0, y - 4.0)],
            "#111111",
            "",
        );
        svg.text(ml + 10.0, y, 10.5, "start", "", marker_name);
    }
    svg.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        let mut s = Svg::new(10.0, 10.0, "a<b");
        s.text(0.0, 0.0, 10.0, "start", "", "x & <y> \"z\"");
        let out = s.finish();
        assert!(out.contains("x &amp; &lt;y&gt; &quot;z&quot;"));
        assert!(out.contains("aria-label=\"a&lt;b\""));
        assert!(!out.contains("<y>"));
    }

    #[test]
    fn nice_ticks_cover_the_range_with_round_steps() {
        assert_eq!(nice_ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = nice_ticks(13.0, 987.0, 6);
        assert!(t.first().unwrap() >= &13.0 && t.last().unwrap() <= &987.0);
        assert!(t.windows(2).all(|w| (w[1] - w[0] - 200.0).abs() < 1e-9));
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short_num(1500.0), "1.5k");
        assert_eq!(short_num(2_000_000.0), "2M");
        assert_eq!(short_num(0.5), "0.5");
        assert_eq!(short_num(35.0), "35");
    }

    #[test]
    fn a_chart_draws_every_series_and_mark_and_skips_non_positive_points_on_log_axes() {
        let mut c = Chart::new("t", "x", "y");
        c.x_log = true;
        c.y_log = true;
        c.series.push(Series {
            name: "model".into(),
            colour: colour(0).into(),
            dashed: false,
            points: vec![(1.0, 10.0), (10.0, 100.0), (0.0, 5.0)],
            band: vec![(1.0, 8.0, 12.0), (10.0, 80.0, 120.0)],
        });
        c.marks.push(Marks {
            name: "seed".into(),
            colour: colour(1).into(),
            filled: true,
            points: vec![(2.0, 20.0, "row a".into()), (-1.0, 3.0, "bad".into())],
        });
        let out = line_chart(&c);
        assert!(out.contains("data-series=\"model\""));
        assert!(out.contains("data-marks=\"seed\""));
        assert!(out.contains("<title>row a</title>"));
        assert!(!out.contains("<title>bad</title>"));
        assert!(out.contains("<polygon"));
        assert!(!out.contains("NaN") && !out.contains("inf"));
    }

    #[test]
    fn bar_charts_switch_to_log_for_wide_ranges() {
        let bar = |v: f64| Bar {
            label: format!("b{v}"),
            value: v,
            interval: Some((v * 0.5, v * 2.0)),
            marker: Some(v),
            colour: colour(0).into(),
        };
        let out = bar_chart("t", "min/yr", &[bar(0.01), bar(100.0)], "exact");
        assert!(out.contains("(log scale)"));
        assert!(out.contains("data-bar=\"b0.01\"") && out.contains("data-bar=\"b100\""));
        let out = bar_chart("t", "min/yr", &[bar(1.0), bar(5.0)], "");
        assert!(!out.contains("(log scale)"));
        assert!(!out.contains("NaN"));
    }

    #[test]
    fn an_empty_chart_says_so() {
        let out = line_chart(&Chart::new("t", "x", "y"));
        assert!(out.contains("no data"));
    }
}
