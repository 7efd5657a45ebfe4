//! The charts and the page read back as a person reads them: every bar of
//! `stacks.svg`, `errors.svg` and `penalties.svg` (and of a sweep's
//! `sweep.svg`) is measured against the chart's own axis and compared with
//! the number `stacks.json` holds for it, its colour with the legend's, its
//! place with its workload's and method's; every number of `index.html`'s
//! tables with the report's.
//!
//! `stacks --check-only` compares the charts with what the report renders,
//! so it cannot see a renderer that draws a wrong bar: these tests can.

use std::collections::BTreeMap;

use cpistack::stacks::{self, run_study, Report, Settings, Source, COMPARED, COMPONENTS, METHODS};

/// A bar: a `rect` with a tooltip.
#[derive(Clone, Debug)]
struct Bar {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
    fill: String,
    title: String,
}

/// A text drawn at (`x`, `y`): its own position or its `translate`.
#[derive(Clone, Debug)]
struct Label {
    x: f64,
    y: f64,
    text: String,
    /// The tooltip inside it, if any.
    title: Option<String>,
    /// Its lines (`tspan`s), if it has several.
    lines: Vec<String>,
    fill: Option<String>,
    rotated: bool,
}

/// One chart (a whole SVG, or one `g` panel of a stacked one).
#[derive(Debug, Default)]
struct Panel {
    /// The grid lines' values and heights, as their tick labels say.
    ticks: Vec<(f64, f64)>,
    /// The grid lines' horizontal extent: the plot's left and right.
    plot_x: (f64, f64),
    bars: Vec<Bar>,
    /// The legend's names and colours, top to bottom.
    legend: Vec<(String, String)>,
    /// Every other text.
    labels: Vec<Label>,
    /// Width and height (of a panel: the chart's width, its own height).
    size: (f64, f64),
    /// What every text and rectangle covers at least: `[x0, y0, x1, y1]`.
    boxes: Vec<(String, [f64; 4])>,
    /// One of several panels stacked in one chart.
    stacked: bool,
    /// Where the legend's swatches are (12 pixels square), top to bottom.
    swatches: Vec<(f64, f64)>,
}

/// The boxes a text covers at least, a line each: its lines run from
/// their anchor (start, middle or end) along its rotation, each at least
/// [`min_width`] long and half its font size high.
fn text_boxes(n: roxmltree::Node) -> Vec<(String, [f64; 4])> {
    let font = n
        .attribute("font-size")
        .map_or(11.0, |f| f.parse().unwrap());
    // bold is about a tenth wider
    let bold = if n.attribute("font-weight") == Some("bold") {
        1.1
    } else {
        1.0
    };
    let (x, y, angle) = placement(n);
    let lines = tspans(n, x);
    let lines = if lines.is_empty() {
        vec![(own_text(n), x)]
    } else {
        lines
    };
    let (dx, dy) = (angle.to_radians().cos(), angle.to_radians().sin());
    lines
        .into_iter()
        .enumerate()
        .map(|(i, (line, x))| {
            let l = bold * min_width(&line, font);
            let from = match n.attribute("text-anchor") {
                Some("end") => -l,
                Some("middle") => -l / 2.0,
                _ => 0.0,
            };
            let y = y + 13.0 * i as f64;
            let (ax, ay) = (x + dx * from, y + dy * from);
            let (bx, by) = (x + dx * (from + l), y + dy * (from + l));
            let up = 0.5 * font;
            let bx_ = [
                ax.min(bx),
                ay.min(by) - up * dx.abs(),
                ax.max(bx),
                ay.max(by),
            ];
            (line, bx_)
        })
        .collect()
}

/// Where a text is anchored and its rotation in degrees: its `x` and `y`,
/// or its `translate(x,y)` and optional `rotate(a)`.
fn placement(n: roxmltree::Node) -> (f64, f64, f64) {
    let Some(tf) = n.attribute("transform") else {
        return (num(n, "x"), num(n, "y"), 0.0);
    };
    let (t, r) = tf
        .strip_prefix("translate(")
        .and_then(|r| r.split_once(')'))
        .unwrap_or_else(|| panic!("transform {tf}"));
    let (x, y) = t.split_once(',').unwrap();
    let angle = r
        .trim()
        .strip_prefix("rotate(")
        .map_or(0.0, |a| a.trim_end_matches(')').parse().unwrap());
    (x.parse().unwrap(), y.parse().unwrap(), angle)
}

/// A text's lines (`tspan`s) and the `x` each is drawn at (its own, or
/// the text's `x`); none for a text of one line.
fn tspans(n: roxmltree::Node, x: f64) -> Vec<(String, f64)> {
    n.children()
        .filter(|c| c.has_tag_name("tspan"))
        .map(|t| {
            let tx = t.attribute("x").map_or(x, |v| v.parse().unwrap());
            (own_text(t), tx)
        })
        .collect()
}

/// A legend swatch: a `rect` with no tooltip that is not the background.
fn is_swatch(n: roxmltree::Node) -> bool {
    n.has_tag_name("rect") && title_of(n).is_none() && n.attribute("width") != Some("100%")
}

fn num(n: roxmltree::Node, attr: &str) -> f64 {
    n.attribute(attr)
        .unwrap_or_else(|| panic!("<{}> without {attr}", n.tag_name().name()))
        .parse()
        .unwrap_or_else(|e| panic!("<{}> {attr}: {e}", n.tag_name().name()))
}

/// The text of `n` without its tooltip.
fn own_text(n: roxmltree::Node) -> String {
    n.descendants()
        .filter(|d| d.is_text() && d.parent().is_some_and(|p| !p.has_tag_name("title")))
        .map(|d| d.text().unwrap_or(""))
        .collect()
}

fn title_of(n: roxmltree::Node) -> Option<String> {
    n.children()
        .find(|c| c.has_tag_name("title"))
        .map(|t| t.text().unwrap_or("").to_string())
}

/// A tick label's value: the number before the unit.
fn tick_value(text: &str) -> Option<f64> {
    text.trim_end_matches('%').parse().ok()
}

fn read_panel(node: roxmltree::Node) -> Panel {
    let mut p = Panel::default();
    for n in node.children().filter(|n| n.is_element()) {
        if n.has_tag_name("text") {
            p.boxes.extend(text_boxes(n));
        } else if n.has_tag_name("rect") && n.attribute("width") != Some("100%") {
            let (x, y) = (num(n, "x"), num(n, "y"));
            let b = [x, y, x + num(n, "width"), y + num(n, "height")];
            p.boxes
                .push((title_of(n).unwrap_or_else(|| "a legend swatch".into()), b));
        }
        match n.tag_name().name() {
            "line" => {
                let t = n
                    .next_sibling_element()
                    .expect("a grid line has its tick label");
                let v = tick_value(&own_text(t))
                    .unwrap_or_else(|| panic!("tick label {:?}", own_text(t)));
                assert_eq!(num(n, "y1"), num(n, "y2"), "a grid line is level");
                p.ticks.push((v, num(n, "y1")));
                p.plot_x = (num(n, "x1"), num(n, "x2"));
            }
            "rect" if n.attribute("width") == Some("100%") => {}
            "rect" => match title_of(n) {
                Some(title) => p.bars.push(Bar {
                    x: num(n, "x"),
                    y: num(n, "y"),
                    w: num(n, "width"),
                    h: num(n, "height"),
                    fill: n.attribute("fill").unwrap().to_string(),
                    title,
                }),
                None => {
                    let t = n
                        .next_sibling_element()
                        .expect("a legend swatch has its name");
                    assert!(
                        t.has_tag_name("text"),
                        "a rect with no tooltip is a legend swatch"
                    );
                    p.legend
                        .push((own_text(t), n.attribute("fill").unwrap().to_string()));
                    p.swatches.push((num(n, "x"), num(n, "y")));
                }
            },
            "text" => {
                // a tick label was read with its line; a legend name with its swatch
                if n.prev_sibling_element()
                    .is_some_and(|q| q.has_tag_name("line") || is_swatch(q))
                {
                    continue;
                }
                let (x, y, angle) = placement(n);
                let lines = tspans(n, x);
                p.labels.push(Label {
                    // a text in lines is drawn where its first line's `tspan` says
                    x: lines.first().map_or(x, |l| l.1),
                    y,
                    text: own_text(n),
                    title: title_of(n),
                    lines: lines.into_iter().map(|l| l.0).collect(),
                    fill: n.attribute("fill").map(str::to_string),
                    rotated: angle != 0.0,
                });
            }
            "g" => panic!("a panel inside a panel"),
            other => panic!("unexpected <{other}>"),
        }
    }
    p
}

/// The panels of a chart: its `g` children, or the chart itself.
fn read_chart(svg: &str) -> Vec<Panel> {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let root = doc.root_element();
    assert!(root.has_tag_name("svg"));
    let (w, h) = (num(root, "width"), num(root, "height"));
    let groups: Vec<_> = root.children().filter(|n| n.has_tag_name("g")).collect();
    if groups.is_empty() {
        let mut p = read_panel(root);
        p.size = (w, h);
        return vec![p];
    }
    // each panel down to the next one's top, the last to the chart's bottom
    let tops: Vec<f64> = groups
        .iter()
        .map(|g| {
            let tf = g.attribute("transform").expect("a panel is moved down");
            tf.strip_prefix("translate(0,")
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or_else(|| panic!("panel transform {tf}"))
                .parse()
                .unwrap()
        })
        .collect();
    let panels: Vec<Panel> = groups
        .into_iter()
        .enumerate()
        .map(|(i, g)| {
            let mut p = read_panel(g);
            p.size = (w, tops.get(i + 1).copied().unwrap_or(h) - tops[i]);
            p.stacked = true;
            p
        })
        .collect();
    // the widest panel sets the width, and is no wider than it needs
    let right = panels
        .iter()
        .flat_map(|p| p.boxes.iter().map(|b| b.1[2]))
        .fold(0.0f64, f64::max);
    assert!(
        w - right <= 160.0,
        "{} pixels spare on the right",
        w - right
    );
    panels
}

/// A lower bound of the width in pixels of `text` at `px` in a sans-serif
/// font: half an em a character (narrow letters such as `i` and `l` are
/// less, but the names on these charts are mostly digits and lower case,
/// which are wider).
fn min_width(text: &str, px: f64) -> f64 {
    0.5 * px * text.chars().count() as f64
}

impl Panel {
    /// Every text and bar inside the chart: nothing is cut off at an edge;
    /// and the chart no larger than what it holds needs (the boxes are
    /// lower bounds, so the room to the right and below is an upper bound);
    /// and the bars inside the plot, near both its ends.
    fn check_inside(&self, what: &str) {
        let (w, h) = self.size;
        // the legend right of the plot, its swatches one under the other
        for (i, &(x, y)) in self.swatches.iter().enumerate() {
            assert!(
                x >= self.plot_x.1,
                "{what}: a legend swatch at {x}, in the plot"
            );
            if i > 0 {
                let (px, py) = self.swatches[i - 1];
                assert!(x == px && y >= py + 12.0, "{what}: legend swatches overlap");
            }
        }
        let (mut right, mut bottom) = (0.0f64, 0.0f64);
        for (t, b) in &self.boxes {
            assert!(
                b[0] >= -0.06 && b[1] >= -0.06 && b[2] <= w + 0.06 && b[3] <= h + 0.06,
                "{what}: `{t}` covers {b:?}, outside the chart of {w} x {h}"
            );
            (right, bottom) = (right.max(b[2]), bottom.max(b[3]));
        }
        // (a panel of a stacked chart is as wide as the widest panel)
        assert!(
            self.stacked || w - right <= 160.0,
            "{what}: {} pixels spare on the right",
            w - right
        );
        assert!(
            h - bottom <= 70.0,
            "{what}: {} pixels spare below",
            h - bottom
        );
        // the slots of the bars, those marked n/a included (the mark is
        // written 2 pixels left of its slot's right edge)
        if let Some(bar) = self.bars.first().map(|b| b.w) {
            let na = self
                .labels
                .iter()
                .filter(|l| l.text == "n/a")
                .map(|l| (l.x + 2.0 - bar, l.x + 2.0));
            let slots: Vec<(f64, f64)> = self
                .bars
                .iter()
                .map(|b| (b.x, b.x + b.w))
                .chain(na)
                .collect();
            let first = slots.iter().map(|s| s.0).fold(f64::MAX, f64::min);
            let last = slots.iter().map(|s| s.1).fold(f64::MIN, f64::max);
            let (l, r) = (first - self.plot_x.0, self.plot_x.1 - last);
            assert!(
                (-0.06..=3.0 * bar).contains(&l) && (-0.06..=3.0 * bar).contains(&r),
                "{what}: the bars start {l} pixels into the plot and end {r} pixels before its end"
            );
        }
    }

    /// The axis: pixels per unit and the pixel of zero, from the grid lines,
    /// which must be evenly spaced in value and in height, rising in value
    /// and include zero.
    fn axis(&self) -> (f64, f64) {
        let t = &self.ticks;
        assert!(t.len() >= 2, "an axis of {} ticks", t.len());
        let (v0, y0) = t[0];
        let (v1, y1) = t[t.len() - 1];
        assert!(v1 > v0, "ticks rise: {t:?}");
        let scale = (y0 - y1) / (v1 - v0);
        let step = t[1].0 - t[0].0;
        for (i, &(v, y)) in t.iter().enumerate() {
            assert!(
                (v - (v0 + i as f64 * step)).abs() <= 1e-9 * step.abs().max(1.0) + 1e-9,
                "ticks evenly stepped: {t:?}"
            );
            assert!(
                (y - (y0 - (v - v0) * scale)).abs() <= 0.06,
                "grid line of {v} at {y}, off the axis {t:?}"
            );
        }
        let zero = t
            .iter()
            .find(|&&(v, _)| v.abs() <= 1e-9 * step)
            .expect("a zero line");
        (scale, zero.1)
    }

    fn colour(&self, name: &str) -> &str {
        &self
            .legend
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no `{name}` in the legend {:?}", self.legend))
            .1
    }

    fn bars_titled(&self, prefix: &str) -> Vec<&Bar> {
        self.bars
            .iter()
            .filter(|b| b.title.starts_with(prefix))
            .collect()
    }

    /// The red label of a bar clipped at the top stands right over the
    /// plot; of one clipped at the bottom, inside the plot at its foot.
    fn check_clip_label(&self, what: &str, l: &Label, high: bool) {
        let (lo_y, hi_y) = (self.ticks[0].1, self.ticks[self.ticks.len() - 1].1);
        let at = if high { hi_y } else { lo_y };
        assert!(
            l.y <= at + 0.06 && l.y >= at - 4.06,
            "{what}: the clip label `{}` at {}, not just over {at}",
            l.text,
            l.y
        );
    }

    fn red_labels_at(&self, x: f64) -> Vec<&Label> {
        self.labels
            .iter()
            .filter(|l| l.fill.as_deref() == Some("#c00") && (l.x - x).abs() < 0.06)
            .collect()
    }
}

/// How far a bar's edge may be from where the axis puts it, in pixels:
/// the grid lines are written to 0.1 pixel, the bars to 0.01, so the
/// axis read from the grid lines is off by up to 0.05 pixel at each end.
const AXIS_TOL: f64 = 0.12;

fn near(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// A grouped chart (`errors.svg`, a panel of `penalties.svg`, of
/// `sweep.svg`): one group of bars per name, one bar per series; each bar
/// from zero to its value as the axis reads it (a value under a pixel
/// still one pixel high), clipped at `cap` either way with its value in
/// red; a missing value marked n/a and not drawn.
fn check_grouped(
    what: &str,
    p: &Panel,
    names: &[String],
    series: &[&str],
    unit: &str,
    value: &dyn Fn(usize, usize) -> Option<f64>,
    cap: f64,
) {
    p.check_inside(what);
    let legend: Vec<&str> = p.legend.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        legend, series,
        "{what}: the legend names the series in order"
    );
    let mut colours: Vec<&str> = p.legend.iter().map(|(_, c)| c.as_str()).collect();
    colours.sort();
    colours.dedup();
    assert_eq!(colours.len(), series.len(), "{what}: a colour per series");
    let (scale, y0) = p.axis();
    let (lo, hi) = (p.ticks[0].0, p.ticks[p.ticks.len() - 1].0);
    let values: Vec<f64> = (0..names.len())
        .flat_map(|i| (0..series.len()).map(move |j| (i, j)))
        .filter_map(|(i, j)| value(i, j).filter(|v| v.is_finite()))
        .collect();
    // the axis reaches every value up to the clip, and not much further
    let vmax = values.iter().copied().fold(0.0f64, f64::max).min(cap);
    let vmin = values.iter().copied().fold(0.0f64, f64::min).max(-cap);
    assert!(
        hi >= vmax && lo <= vmin,
        "{what}: axis {lo}..{hi} for {vmin}..{vmax}"
    );
    assert!(p.ticks.len() <= 8, "{what}: {} ticks", p.ticks.len());
    let step = p.ticks[1].0 - lo;
    assert!(
        (vmax <= 0.0 || hi - step < vmax) && (vmin >= 0.0 || lo + step > vmin),
        "{what}: axis {lo}..{hi} a step past {vmin}..{vmax}"
    );
    let plot = (hi - lo) * scale;
    assert!(
        (150.0..=600.0).contains(&plot),
        "{what}: a plot {plot} pixels high"
    );
    assert_eq!(p.bars.len(), values.len(), "{what}: a bar per value");
    let mut prev_right = p.plot_x.0;
    let mut prev_group: Option<(f64, f64)> = None;
    for (i, name) in names.iter().enumerate() {
        let mut group_x = None;
        let mut w = 0.0;
        for (j, s) in series.iter().enumerate() {
            let key = format!("{name} {s}: ");
            let found = p.bars_titled(&key);
            let Some(v) = value(i, j).filter(|v| v.is_finite()) else {
                assert!(found.is_empty(), "{what}: {key}drawn without a value");
                if !values.is_empty() {
                    let na = format!("{name} {s}: no such event");
                    assert!(
                        p.labels
                            .iter()
                            .any(|l| l.title.as_deref() == Some(&na) && l.text == "n/a"),
                        "{what}: `{na}` not marked n/a"
                    );
                }
                continue;
            };
            assert_eq!(found.len(), 1, "{what}: bars titled `{key}`");
            let b = found[0];
            let shown: f64 = b.title[key.len()..]
                .strip_suffix(unit)
                .unwrap()
                .parse()
                .unwrap();
            assert!(near(shown, v, 0.0051), "{what}: `{}` for {v}", b.title);
            assert_eq!(b.fill, p.colour(s), "{what}: {key}colour");
            // where the bar stands: its x follows its group and series
            let gx = *group_x.get_or_insert(b.x - j as f64 * b.w);
            assert!(
                near(b.x, gx + j as f64 * b.w, 0.06),
                "{what}: {key}x {}",
                b.x
            );
            assert!(
                b.x >= prev_right - 0.06,
                "{what}: {key}overlaps the bar before"
            );
            prev_right = b.x + b.w;
            w = b.w;
            // how high: zero to the value (clipped), one pixel at least
            let c = v.clamp(lo, hi);
            let (top, bottom) = if c >= 0.0 {
                (y0 - (c * scale).max(1.0), y0)
            } else {
                (y0, y0 + (-c * scale).max(1.0))
            };
            assert!(
                near(b.y, top, AXIS_TOL) && near(b.y + b.h, bottom, AXIS_TOL),
                "{what}: {key}{v} drawn from {} to {}, the axis puts it from {top} to {bottom}",
                b.y,
                b.y + b.h
            );
            let red = p.red_labels_at(b.x + b.w - 2.0);
            if v > hi || v < lo {
                assert_eq!(red.len(), 1, "{what}: {key}{v} clipped without its label");
                assert_eq!(red[0].text, format!("{v:.0}"), "{what}: {key}");
                assert!(red[0].rotated, "{what}: {key}");
                p.check_clip_label(what, red[0], v > hi);
            } else {
                assert!(red.is_empty(), "{what}: {key}{v} labelled as clipped");
            }
        }
        assert!(
            prev_right <= p.plot_x.1 + 0.06,
            "{what}: {name} past the plot"
        );
        // the bars of a group side by side, the groups apart by one to
        // three bars: the chart reads as groups
        if let Some(gx) = group_x {
            if let Some((pgx, pw)) = prev_group {
                let gap = gx - (pgx + series.len() as f64 * pw);
                assert!(
                    gap >= w - 0.06 && gap <= 3.0 * w + 0.06,
                    "{what}: {gap} pixels before the group of {name}"
                );
            }
            prev_group = Some((gx, w));
        }
        // the group's name under it, slanted, anchored within its bars
        let label = p
            .labels
            .iter()
            .filter(|l| l.rotated && l.text == *name && l.fill.is_none())
            .collect::<Vec<_>>();
        assert_eq!(label.len(), 1, "{what}: the name `{name}` under its group");
        // slanted up to the left from its end: inside the chart however long
        let (reach, drop) = {
            let (l, a) = (min_width(name, 11.0), 40f64.to_radians());
            (l * a.cos(), l * a.sin())
        };
        assert!(
            label[0].x - reach >= 0.0 && label[0].y + drop <= p.size.1,
            "{what}: `{name}` runs off the chart (anchor {}, {}; size {:?})",
            label[0].x,
            label[0].y,
            p.size
        );
        if let Some(gx) = group_x {
            assert!(
                label[0].x >= gx && label[0].x <= gx + series.len() as f64 * w,
                "{what}: `{name}` at {} is not under its bars from {gx}",
                label[0].x
            );
        }
    }
}

/// `stacks.svg`: per study, per method, a bar of the stack's components as
/// shares of the real run's cycles, each the height of its share on the
/// axis, the positive ones stacked up from zero and the negative ones down
/// from it in component order, clipped to the axis (the clipped extent in
/// red), coloured as the legend says, the methods in one order under
/// labels of their own.
fn check_stacks_chart(p: &Panel, r: &Report) {
    p.check_inside("stacks.svg");
    let mut legend: Vec<&str> = p.legend.iter().map(|(n, _)| n.as_str()).collect();
    legend.reverse();
    assert_eq!(
        legend, COMPONENTS,
        "the legend lists the components top down"
    );
    let (scale, y0) = p.axis();
    let (lo, hi) = (p.ticks[0].0, p.ticks[p.ticks.len() - 1].0);
    assert!(near(p.ticks[1].0 - lo, 25.0, 1e-9), "25 % a grid line");
    assert!(
        (-50.0..=0.0).contains(&lo) && (100.0..=150.0).contains(&hi),
        "{lo}..{hi}"
    );
    let (y_hi, y_lo) = (y0 - hi * scale, y0 - lo * scale);
    // the axis reaches the tallest stack and the deepest, up to the clip,
    // to the first grid line past them (100 % at least)
    let (mut top, mut bottom) = (100.0f64, 0.0f64);
    for st in &r.studies {
        for m in METHODS {
            let t = st.cycles.max(1) as f64;
            let sk = &st.stacks[m];
            let share = |v: &i64| 100.0 * *v as f64 / t;
            let up: f64 = sk.iter().filter(|&&v| v > 0).map(share).sum();
            let down: f64 = sk.iter().filter(|&&v| v < 0).map(share).sum();
            (top, bottom) = (top.max(up), bottom.min(down));
            assert!(
                hi >= up.min(150.0) - 1e-9,
                "axis to {hi} %, {} {m}: {up} %",
                st.name
            );
            assert!(
                lo <= down.max(-50.0) + 1e-9,
                "axis from {lo} %, {} {m}: {down} %",
                st.name
            );
        }
    }
    assert!(
        hi - 25.0 < top.min(150.0) && lo + 25.0 > bottom.max(-50.0),
        "axis {lo}..{hi} % a grid line past the stacks' {bottom}..{top} %"
    );
    assert!(
        (150.0..=600.0).contains(&(100.0 * scale)),
        "100 % is {} pixels",
        100.0 * scale
    );
    let mut xs: Vec<f64> = Vec::new();
    let mut method_labels: BTreeMap<&str, String> = BTreeMap::new();
    let mut drawn = 0;
    for st in &r.studies {
        let t = st.cycles.max(1) as f64;
        let group_x = xs.len();
        for m in METHODS {
            let key = format!("{} {m} ", st.name);
            let bars = p.bars_titled(&key);
            let x = bars.first().map(|b| b.x);
            let (mut up, mut down) = (0.0f64, 0.0f64);
            let mut seen = 0;
            for (k, &v) in st.stacks[m].iter().enumerate() {
                let share = 100.0 * v as f64 / t;
                let (a, b) = if share >= 0.0 {
                    up += share;
                    (up, up - share)
                } else {
                    down += share;
                    (down - share, down)
                };
                // the segment from share a (top) to b (bottom), clipped
                let top = (y0 - a * scale).max(y_hi);
                let bottom = (y0 - b * scale).min(y_lo);
                let comp = COMPONENTS[k];
                let bar = bars
                    .iter()
                    .find(|b| b.title.starts_with(&format!("{key}{comp}: ")));
                if bottom - top < 0.01 {
                    // nothing to see: drawn with no height, or not at all
                    if let Some(b) = bar {
                        assert!(b.h < 0.011, "{key}{comp}: {b:?}");
                        seen += 1;
                    }
                    continue;
                }
                let b = bar.unwrap_or_else(|| panic!("no bar for {key}{comp} ({share} %)"));
                seen += 1;
                let shown: f64 = b.title[key.len() + comp.len() + 2..]
                    .strip_suffix('%')
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(near(shown, share, 0.0501), "`{}` for {share}", b.title);
                assert!(
                    near(b.y, top, AXIS_TOL) && near(b.y + b.h, bottom, AXIS_TOL),
                    "{key}{comp} ({share} %) drawn from {} to {}, the axis puts it from {top} to {bottom}",
                    b.y,
                    b.y + b.h
                );
                assert_eq!(b.fill, p.colour(comp), "{key}{comp}: colour");
                assert_eq!(Some(b.x), x, "{key}{comp}: one bar");
            }
            assert_eq!(
                seen,
                bars.len(),
                "{key}: a bar segment per component at most"
            );
            drawn += seen;
            let x = x.unwrap_or_else(|| panic!("{key}: no bar"));
            let w = bars[0].w;
            assert!(bars.iter().all(|b| b.w == w));
            assert!(
                xs.last().is_none_or(|&l| x >= l + w),
                "{key}: not right of the bar before"
            );
            xs.push(x);
            // clipped: the extent in red where the bar meets the axis's end
            let red = p.red_labels_at(x + w - 2.0);
            let want: Vec<String> = [(up > hi + 1e-9, up), (down < lo - 1e-9, down)]
                .iter()
                .filter(|c| c.0)
                .map(|c| format!("{:.0}%", c.1))
                .collect();
            let got: Vec<String> = red.iter().map(|l| l.text.clone()).collect();
            assert_eq!(got, want, "{key}: red labels");
            for (l, high) in red.iter().zip([up > hi + 1e-9, false]) {
                p.check_clip_label(&key, l, high);
            }
            // the method's label under its bar: the same under every group
            let under: Vec<&Label> = p
                .labels
                .iter()
                .filter(|l| l.rotated && l.fill.is_none() && near(l.x, x + w - 2.0, 0.06))
                .collect();
            assert_eq!(under.len(), 1, "{key}: one label under the bar");
            assert!(under[0].y >= y_lo, "{key}: its label is under the plot");
            // an abbreviation of the method's name: its letters in order
            let mut rest = m.chars();
            assert!(
                !under[0].text.is_empty()
                    && under[0]
                        .text
                        .replace('-', "_")
                        .chars()
                        .all(|c| rest.any(|r| r == c)),
                "{key}: `{}` does not abbreviate {m}",
                under[0].text
            );
            let first = method_labels
                .entry(m)
                .or_insert_with(|| under[0].text.clone());
            assert_eq!(*first, under[0].text, "{key}: label");
        }
        // the methods' bars close together, the groups apart by one to
        // three bars: the chart reads as groups
        let w = p.bars[0].w;
        for pair in xs[group_x..].windows(2) {
            assert!(pair[1] - pair[0] - w <= w / 2.0, "{}: bars apart", st.name);
        }
        if group_x > 0 {
            let gap = xs[group_x] - (xs[group_x - 1] + w);
            assert!(
                gap >= w - 0.06 && gap <= 3.0 * w + 0.06,
                "{gap} pixels before the group of {}",
                st.name
            );
        }
        let span = xs[xs.len() - 1] + w - xs[group_x];
        // the study's name under its group, whole in its tooltip, in lines
        // no wider than the group (bold: a tenth wider)
        let name = p
            .labels
            .iter()
            .find(|l| l.title.as_deref() == Some(st.name.as_str()))
            .unwrap_or_else(|| panic!("no name for {}", st.name));
        assert!(name.y > y_lo, "{}: its name is under the plot", st.name);
        // (a name that fits under its group with room to spare is one line)
        if 0.7 * 11.0 * st.name.chars().count() as f64 <= span {
            assert_eq!(name.lines.len(), 1, "{}: {:?}", st.name, name.lines);
        }
        let middle = xs[group_x] + span / 2.0;
        assert!(
            (name.x - middle).abs() <= w,
            "{}: its name at {}, not under the middle of its group at {middle}",
            st.name,
            name.x
        );
        let below = name.y + 13.0 * (name.lines.len() as f64 - 1.0);
        assert!(
            name.lines.len() <= 3 && below < p.size.1,
            "{}: {:?} below the chart",
            st.name,
            name.lines
        );
        for l in &name.lines {
            assert!(
                1.1 * min_width(l, 11.0) <= span + 14.0,
                "{}: the line `{l}` is wider than its group",
                st.name
            );
        }
        if st.name.len() < 30 {
            assert_eq!(name.text, st.name);
        }
    }
    assert_eq!(drawn, p.bars.len(), "a bar that is no study's and method's");
    let mut labels: Vec<&String> = method_labels.values().collect();
    labels.sort();
    labels.dedup();
    assert_eq!(
        labels.len(),
        METHODS.len(),
        "a label per method: {method_labels:?}"
    );
    assert!(
        xs.last().unwrap() + p.bars[0].w <= p.plot_x.1 + 0.06,
        "bars past the plot"
    );
}

fn check_errors_chart(svg: &str, r: &Report) {
    let panels = read_chart(svg);
    assert_eq!(panels.len(), 1);
    let names: Vec<String> = r.studies.iter().map(|s| s.name.clone()).collect();
    check_grouped(
        "errors.svg",
        &panels[0],
        &names,
        &COMPARED,
        "",
        &|i, j| Some(r.studies[i].errors_pp[COMPARED[j]]),
        40.0,
    );
}

fn check_penalties_chart(svg: &str, r: &Report) {
    let panels = read_chart(svg);
    assert_eq!(panels.len(), 4, "three penalty panels and the overlap");
    let names: Vec<String> = r.studies.iter().map(|s| s.name.clone()).collect();
    type Pick = fn(&stacks::Penalties) -> Option<f64>;
    let picks: [(&str, Pick); 3] = [
        ("l1i", |p| p.l1i),
        ("bpred", |p| p.bpred),
        ("l2d", |p| p.l2d),
    ];
    for (p, (what, f)) in panels.iter().zip(picks) {
        check_grouped(
            &format!("penalties.svg, per {what} event"),
            p,
            &names,
            &METHODS,
            "",
            &|i, j| f(&r.studies[i].penalties[METHODS[j]]),
            400.0,
        );
    }
    check_grouped(
        "penalties.svg, overlap",
        &panels[3],
        &names,
        &["overlap"],
        "%",
        &|i, _| Some(100.0 * r.studies[i].overlap.fraction),
        100.0,
    );
}

/// The cells after the label of the first `<table>` row in `html` that
/// starts with the cell `label`.
fn row_cells(html: &str, label: &str) -> Vec<String> {
    let start = html
        .find(&format!("<tr><td>{label}</td>"))
        .unwrap_or_else(|| panic!("no row `{label}`"));
    let row = &html[start..start + html[start..].find("</tr>").unwrap()];
    row.split("<td>")
        .skip(2)
        .map(|c| c.split("</td>").next().unwrap().to_string())
        .collect()
}

/// `index.html`: the summary table holds each method's average and maximum
/// error, each study's section its CPI, overlap and table of shares and
/// errors; the charts and files it shows are the ones written beside it.
fn check_page(html: &str, r: &Report, dir: &std::path::Path) {
    for file in html
        .split(" data=\"")
        .skip(1)
        .chain(html.split(" src=\"").skip(1))
        .chain(html.split(" href=\"").skip(1))
    {
        let file = file.split('"').next().unwrap();
        assert!(
            dir.join(file).is_file(),
            "index.html shows {file}, not written"
        );
    }
    for f in ["stacks.svg", "errors.svg", "penalties.svg"] {
        assert!(
            // embedded as an object, so that its tooltips (each bar's
            // <title>) show on hover, which an <img> does not
            html.contains(&format!("<object data=\"{f}\" type=\"image/svg+xml\"")),
            "index.html without {f}"
        );
    }
    let summary = &html[html.find("<h2>Summary").unwrap()..];
    let summary = &summary[..summary.find("</table>").unwrap()];
    let header: Vec<&str> = summary
        .split("<th>")
        .skip(2)
        .map(|c| c.split("</th>").next().unwrap())
        .collect();
    assert_eq!(header, COMPARED, "the summary's columns");
    let both = !r.summary_workloads.is_empty() && !r.summary_traces.is_empty();
    let all = if both {
        r.summary.clone()
    } else {
        BTreeMap::new()
    };
    let rows = [
        ("synthetic workloads", &r.summary_workloads),
        ("traces", &r.summary_traces),
        ("all", &all),
    ];
    for (label, sum) in rows {
        if sum.is_empty() {
            assert!(!summary.contains(&format!("<td>{label}</td>")), "{label}");
            continue;
        }
        let cells = row_cells(summary, label);
        let want: Vec<String> = COMPARED
            .iter()
            .map(|m| format!("{:.3} / {:.3}", sum[*m].avg_error_pp, sum[*m].max_error_pp))
            .collect();
        assert_eq!(cells, want, "summary row `{label}`");
    }
    for st in &r.studies {
        let at = html
            .find(&format!("<summary>{} (", st.name))
            .unwrap_or_else(|| panic!("no section for {}", st.name));
        let sec = &html[at..at + html[at..].find("</details>").unwrap()];
        assert!(
            sec.contains(&format!("CPI {:.3},", st.cpi)),
            "{}: CPI",
            st.name
        );
        let ov = format!("overlap {:.2} %", 100.0 * st.overlap.fraction);
        assert!(sec.contains(&ov), "{}: {ov}", st.name);
        // after the tables, why the head load waited in FMT's data-miss
        // cycles, for each level that has some
        let hw = &st.stats.head_waits;
        for (level, w) in [("l1d", &hw.l1d), ("l2d", &hw.l2d)] {
            let at = sec.find(&format!("<p>Why FMT's {level} head waited: "));
            if w.total() == 0 {
                assert_eq!(at, None, "{} {level}: no head waits, no sentence", st.name);
                continue;
            }
            let p = &sec[at.unwrap_or_else(|| panic!("{} {level}: no sentence", st.name))..];
            let p = &p[..p.find("</p>").unwrap()];
            let text = &p[p.find(": ").unwrap() + 2..];
            crate::stacks::check_head_wait_sentence(text, w, p);
            assert!(p.ends_with("(<code>stats.head_waits</code>)"), "{p}");
        }
        // the stacks' table, then the census's
        let split = sec.find("</table>").unwrap();
        let (sec, census) = sec.split_at(split + "</table>".len());
        check_census_table(census, st);
        let header: Vec<&str> = sec
            .split("<th>")
            .skip(2)
            .map(|c| c.split("</th>").next().unwrap())
            .collect();
        let mut want_header: Vec<&str> = COMPONENTS.to_vec();
        want_header.push("error (pp)");
        assert_eq!(header, want_header, "{}: columns", st.name);
        for m in METHODS {
            let cells = row_cells(sec, m);
            assert_eq!(cells.len(), COMPONENTS.len() + 1, "{} {m}", st.name);
            for (k, cell) in cells[..COMPONENTS.len()].iter().enumerate() {
                let share = 100.0 * st.stacks[m][k] as f64 / st.cycles as f64;
                let shown: f64 = cell.parse().unwrap();
                assert!(
                    near(shown, share, 0.0501),
                    "{} {m} {}: {cell} for {share}",
                    st.name,
                    COMPONENTS[k]
                );
            }
            let e = &cells[COMPONENTS.len()];
            match st.errors_pp.get(m) {
                Some(v) => assert!(
                    near(e.parse().unwrap(), *v, 0.00501),
                    "{} {m}: {e}",
                    st.name
                ),
                None => assert_eq!(e, "-", "{} {m}", st.name),
            }
        }
    }
}

/// A study's census table on the page: every class of its census, in
/// order, with its cycles, share and rates; none without a census.
fn check_census_table(html: &str, st: &cpistack::stacks::Study) {
    if st.census.is_empty() {
        assert!(
            !html.contains("<table>"),
            "{}: a census table without a census",
            st.name
        );
        return;
    }
    let header: Vec<&str> = html
        .split("<th>")
        .skip(1)
        .map(|c| c.split("</th>").next().unwrap())
        .collect();
    assert_eq!(
        header,
        [
            "window",
            "cycle census class",
            "cycles",
            "share",
            "commits a cycle",
            "dispatches a cycle",
            "FMT counts it as"
        ],
        "{}: census columns",
        st.name
    );
    let rows: Vec<Vec<&str>> = html
        .split("<tr><td>")
        .skip(1)
        .map(|r| {
            r.split("</tr>")
                .next()
                .unwrap()
                .split("<td>")
                .map(|c| c.split("</td>").next().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), st.census.len(), "{}: census rows", st.name);
    for (row, c) in rows.iter().zip(&st.census) {
        let want = [
            c.window.clone(),
            c.what.clone(),
            c.cycles.to_string(),
            format!("{:.2}", c.share_pct),
            format!("{:.2}", c.commits_per_cycle),
            format!("{:.2}", c.dispatches_per_cycle),
            c.fmt.clone(),
        ];
        assert_eq!(row, &want, "{}: census row", st.name);
    }
}

/// The page's census overview: a row per study with a census, FMT's and the
/// reference's base, and the census's parts of FMT's base.
fn check_census_overview(html: &str, r: &Report) {
    let at = html
        .find("<h2>What FMT's base is made of")
        .expect("a census overview");
    let sec = &html[at..at + html[at..].find("</table>").unwrap()];
    for st in &r.studies {
        let cells = row_cells(sec, &st.name);
        let pct = |c: i64| format!("{:.1}", 100.0 * c as f64 / st.cycles as f64);
        let part = |what: &[&str]| {
            let rows = st.census.iter().filter(|c| what.contains(&c.what.as_str()));
            let (c, n) = rows.fold((0, 0), |(c, n), r| (c + r.cycles, n + r.commits));
            (
                pct(c as i64),
                if c > 0 {
                    format!(" ({:.2})", n as f64 / c as f64)
                } else {
                    String::new()
                },
            )
        };
        let full = part(&[
            "commits, 1-4 cycles after a backend stall",
            "commits, 5-19 cycles after a backend stall",
            "commits, 20+ cycles after one (or none yet)",
        ]);
        let fill = part(&["no fetch stall, dispatches, head waits (fill)"]);
        let open = part(&["no fetch stall, dispatches, head not waiting"]);
        let ideal = st.stacks["reference"][0];
        // the rest of FMT's base: its base less the three parts before
        let cycles = |what: &[&str]| -> i64 {
            (st.census.iter())
                .filter(|c| what.contains(&c.what.as_str()))
                .map(|c| c.cycles as i64)
                .sum()
        };
        let rest = st.stacks["fmt"][0]
            - cycles(&[
                "commits, 1-4 cycles after a backend stall",
                "commits, 5-19 cycles after a backend stall",
                "commits, 20+ cycles after one (or none yet)",
                "no fetch stall, dispatches, head waits (fill)",
                "no fetch stall, dispatches, head not waiting",
            ]);
        let want = [
            pct(st.stacks["fmt"][0]),
            pct(ideal),
            full.0 + &full.1,
            fill.0,
            open.0 + &open.1,
            pct(rest),
            format!("{:.2}", st.instructions as f64 / ideal as f64),
        ];
        assert_eq!(cells, want, "{}: census overview", st.name);
    }
}

fn short_report() -> Report {
    let s = Settings {
        cfg: sim::Config::default(),
        instructions: 10_000,
        warmup: 2_000,
    };
    let sources = vec![
        Source::workload("balanced", 1).unwrap(),
        Source::workload("mlp", 1).unwrap(),
    ];
    run_study(&sources, &s, 0, &|_, _| {}).expect("study runs")
}

/// Every chart and the page of a real run, read back.
#[test]
fn every_bar_and_number_of_the_charts_and_page_is_the_reports() {
    let r = short_report();
    // `mlp` has head waits, so the page's head-wait sentences are read back
    assert!(r.studies.iter().any(|s| !s.stats.head_waits.is_zero()));
    let dir = crate::scratch::Scratch::new("charts-read-back");
    stacks::write_all(&r, &dir).unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let panels = read_chart(&read("stacks.svg"));
    assert_eq!(panels.len(), 1);
    check_stacks_chart(&panels[0], &r);
    check_errors_chart(&read("errors.svg"), &r);
    check_penalties_chart(&read("penalties.svg"), &r);
    check_page(&read("index.html"), &r, &dir);
    check_census_overview(&read("index.html"), &r);

    // with no naive stack past the cycles the stacks' axis ends near 100 %
    let mut tame = r.clone();
    for st in &mut tame.studies {
        for m in ["naive", "naive_nonspec"] {
            let fmt = st.stacks["fmt"];
            st.stacks.insert(m.into(), fmt);
        }
    }
    let outputs = stacks::render_outputs(&tame).unwrap();
    let svg = &outputs.iter().find(|o| o.0 == "stacks.svg").unwrap().1;
    let panels = read_chart(svg);
    check_stacks_chart(&panels[0], &tame);
    assert!(panels[0].ticks.last().unwrap().0 <= 125.0);
}

/// The same report with numbers no short run reaches: a naive stack of
/// several times the cycles with a base far below zero (clipped both ways),
/// an error past the errors chart's clip, a penalty past its panel's clip
/// and one below zero, a missing penalty (n/a), a trace among the studies.
#[test]
fn clipped_negative_and_missing_values_are_drawn_as_the_legend_and_axis_say() {
    let mut r = short_report();
    {
        let st = &mut r.studies[0];
        let t = st.cycles as i64;
        let naive = st.stacks.get_mut("naive").unwrap();
        *naive = [0; COMPONENTS.len()];
        naive[0] = -t * 6 / 5;
        naive[6] = t * 2;
        naive[8] = t / 3;
        st.errors_pp.insert("naive".into(), 75.0);
        let pen = st.penalties.get_mut("naive").unwrap();
        pen.bpred = Some(1234.4);
        pen.l2d = Some(-30.0);
        st.penalties.get_mut("fmt").unwrap().l1i = None;
        st.penalties.get_mut("reference").unwrap().l1i = Some(-567.8);
        st.kind = "trace".into();
        st.name = "sqlite3_x86_skip100M_13M.champsimtrace-first-part".into();
    }
    r.summary_traces = r.summary.clone();
    // enough studies that the plot, not the title, sets the charts' width
    for i in 0..4 {
        let mut copy = r.studies[1].clone();
        copy.name = format!("copy-{i}");
        r.studies.push(copy);
    }
    let dir = crate::scratch::Scratch::new("charts-read-back-extremes");
    for (f, text) in stacks::render_outputs(&r).unwrap() {
        std::fs::write(dir.join(f), text).unwrap();
    }
    std::fs::write(dir.join("stacks.json"), serde_json::to_string(&r).unwrap()).unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let stacks_svg = read("stacks.svg");
    let panels = read_chart(&stacks_svg);
    check_stacks_chart(&panels[0], &r);
    assert!(
        stacks_svg.contains(">233%</text>"),
        "the clipped top is labelled"
    );
    assert!(
        stacks_svg.contains(">-120%</text>"),
        "the clipped foot is labelled"
    );
    let errors = read("errors.svg");
    check_errors_chart(&errors, &r);
    assert!(errors.contains(">75</text>"));
    let penalties = read("penalties.svg");
    check_penalties_chart(&penalties, &r);
    assert!(penalties.contains(">1234</text>"));
    assert!(penalties.contains(">-568</text>"));
    assert!(penalties.contains("no such event</title>n/a"));
    check_page(&read("index.html"), &r, &dir);

    // a sweep of two machines: one method's average past the clip, one
    // method missing from the second's summary
    let base = short_report();
    r.summary.get_mut("naive").unwrap().avg_error_pp = 55.0;
    r.summary.remove("power5");
    let point = |name: &str| stacks::sweep::Point {
        name: name.into(),
        set: None,
        cfg: sim::Config::default(),
    };
    let points = vec![(point("base"), base), (point("core.rob=64"), r)];
    let panels = read_chart(&stacks::sweep::sweep_svg(&points));
    assert_eq!(panels.len(), 2, "average and maximum");
    let names: Vec<String> = points.iter().map(|(p, _)| p.name.clone()).collect();
    for (p, avg) in panels.iter().zip([true, false]) {
        check_grouped(
            &format!("sweep.svg, {}", if avg { "average" } else { "maximum" }),
            p,
            &names,
            &COMPARED,
            "",
            &|i, j| {
                let x = points[i].1.summary.get(COMPARED[j])?;
                Some(if avg { x.avg_error_pp } else { x.max_error_pp })
            },
            40.0,
        );
    }
}

/// A reader that accepts anything proves nothing: a chart with one bar
/// moved, recoloured, resized or retitled, or one label changed, is refused.
#[test]
fn the_chart_reader_refuses_a_chart_with_one_thing_wrong() {
    let r = short_report();
    let outputs: BTreeMap<&str, String> = stacks::render_outputs(&r).unwrap().into_iter().collect();
    let stacks_svg = &outputs["stacks.svg"];
    let errors = &outputs["errors.svg"];
    let refused = |what: &str, f: &dyn Fn()| {
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        assert!(res.is_err(), "the reader took a chart with {what}");
    };
    // the mlp fmt l2d segment (a tall one) and the fmt bar of errors.svg
    let seg = stacks_svg
        .lines()
        .find(|l| l.contains("<title>mlp fmt l2d:"))
        .unwrap();
    let bar = errors
        .lines()
        .find(|l| l.contains("<title>mlp fmt:"))
        .unwrap();
    let attr = |line: &str, a: &str| -> String {
        line.split(&format!(" {a}=\""))
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .to_string()
    };
    let edits: Vec<(&str, &str, &str, String)> = vec![
        (
            "a segment moved up",
            seg,
            "y",
            format!("{:.2}", attr(seg, "y").parse::<f64>().unwrap() - 3.0),
        ),
        (
            "a segment taller",
            seg,
            "height",
            format!("{:.2}", attr(seg, "height").parse::<f64>().unwrap() + 3.0),
        ),
        ("a segment recoloured", seg, "fill", "#000000".into()),
        (
            "a segment moved right",
            seg,
            "x",
            format!("{:.1}", attr(seg, "x").parse::<f64>().unwrap() + 13.0),
        ),
    ];
    for (what, line, a, v) in &edits {
        let changed = line.replacen(
            &format!(" {a}=\"{}\"", attr(line, a)),
            &format!(" {a}=\"{v}\""),
            1,
        );
        let svg = stacks_svg.replace(line, &changed);
        refused(what, &|| check_stacks_chart(&read_chart(&svg)[0], &r));
    }
    let retitled = seg.replacen("mlp fmt l2d:", "mlp fmt dtlb:", 1);
    let svg = stacks_svg.replace(seg, &retitled);
    refused("a segment named for another component", &|| {
        check_stacks_chart(&read_chart(&svg)[0], &r)
    });
    let svg = stacks_svg.replacen(">100%</text>", ">90%</text>", 1);
    refused("a tick mislabelled", &|| {
        check_stacks_chart(&read_chart(&svg)[0], &r)
    });
    let h = attr(bar, "height").parse::<f64>().unwrap();
    let shorter = bar.replacen(
        &format!(" height=\"{}\"", attr(bar, "height")),
        &format!(" height=\"{:.2}\"", h * 0.9),
        1,
    );
    let svg = errors.replace(bar, &shorter);
    refused("an error bar shorter than its value", &|| {
        check_errors_chart(&svg, &r)
    });
    let v = r.studies[1].errors_pp["fmt"];
    let svg = errors.replace(
        &format!("mlp fmt: {v:.2}<"),
        &format!("mlp fmt: {:.2}<", v + 1.0),
    );
    refused("an error bar titled with another value", &|| {
        check_errors_chart(&svg, &r)
    });
    let svg = errors.replacen(">mlp</text>", ">balanced</text>", 1);
    refused("a group named for another workload", &|| {
        check_errors_chart(&svg, &r)
    });
    // and it takes the charts as they are
    check_stacks_chart(&read_chart(stacks_svg)[0], &r);
    check_errors_chart(errors, &r);
}

/// The page of a report holding the whole suite points at the limit
/// workloads' page (`make paper` writes it to `limits/`); the page of the
/// limit workloads says why they are kept apart and labels its summary so;
/// any other set of workloads gets neither.
#[test]
fn the_suites_page_points_at_the_limits_and_the_limits_page_says_why() {
    let r = short_report();
    let page = |names: Vec<&'static str>| {
        let mut x = r.clone();
        x.studies = (names.iter())
            .map(|n| {
                let mut st = r.studies[0].clone();
                st.name = n.to_string();
                st
            })
            .collect();
        let files = stacks::render_outputs(&x).unwrap();
        files.into_iter().find(|f| f.0 == "index.html").unwrap().1
    };
    let suite = page(sim::workloads::suite().iter().map(|w| w.name).collect());
    assert!(suite.contains("<a href=\"limits/index.html\">limit workloads</a>"));
    assert!(suite.contains("<td>synthetic workloads</td>"));
    let limits = page(sim::workloads::limits().iter().map(|w| w.name).collect());
    assert!(limits.contains("<title>cpistack: CPI stacks compared: the limit workloads</title>"));
    assert!(limits.contains("kept out of the suite and its averages on purpose"));
    assert!(limits.contains("<td>limit workloads</td>") && !limits.contains("limits/index.html"));
    let other = page(vec!["balanced", "mlp"]);
    assert!(!other.contains("limits/index.html") && !other.contains("on purpose"));
}
