//! Chart 1: per-seed paired comparison (a slope chart). Each seed is a line from its
//! baseline metric to its idea metric, green when the idea is better (a lower MSE, a higher
//! accuracy), red when it is worse, grey when they are exactly equal.

use crate::format::{delta, exact, linear_ticks, num};
use crate::layout::{Hover, Item, Key, err, header, header_height, hover};
use crate::style::{BASELINE, Frame, IDEA, INK, LOSS, MUTED, Scale, WIN, axes, range};
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use rdbench_core::report::Report;
use std::cmp::Ordering;

/// Draw on `area`; returns the hover points.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &Report, s: Scale) -> Result<Vec<Hover>, String> {
    let e = err("per-seed chart");
    area.fill(&WHITE).map_err(&e)?;
    let base = &r.baseline.full.per_seed;
    let idea = &r.idea.per_seed;
    let pairs: Vec<(usize, f64, f64)> =
        base.iter().zip(idea).enumerate().filter_map(|(i, (b, x))| Some((i, (*b)?, (*x)?))).collect();
    let dir = r.direction();
    let idea_better = |p: &&(usize, f64, f64)| dir.gain(p.2 - p.1) > 0.0;
    let wins = pairs.iter().filter(idea_better).count();
    let means = [r.baseline.full.mean, r.idea.mean];
    // The trivial predictor's score, a dashed line: in the range where the baseline did not
    // learn (the arms sit at it, and the line says so); where it learned, drawn only when it
    // falls among the seeds, else named in the legend (so the seeds' spread is not squashed).
    let task = r.task.as_ref();
    let trivial = task.and_then(|t| t.reference.as_ref());
    let void = task.and_then(|t| t.learnability.as_ref()).is_some_and(|l| l.comparison_void);
    let data = || pairs.iter().flat_map(|&(_, b, x)| [b, x]).chain(means.iter().flatten().copied());
    let (dlo, dhi) = range(data(), false);
    let line_at = trivial.map(|f| f.value).filter(|&v| void || (dlo..=dhi).contains(&v));
    // Every point, both means and the trivial line lie inside the y range, so none is clipped.
    let (lo, hi) = range(data().chain(line_at), false);
    let lo = if pairs.iter().all(|p| p.1 >= 0.0 && p.2 >= 0.0) && line_at.is_none_or(|v| v >= 0.0) {
        lo.max(0.0)
    } else {
        lo
    };

    // A pair's line: the idea better, worse, or exactly equal (a tie is no loss).
    let outcome = |p: &(usize, f64, f64)| 0f64.partial_cmp(&dir.gain(p.2 - p.1)).unwrap_or(Ordering::Equal);
    let kinds = [
        ("idea better", WIN, Ordering::Less),
        ("baseline better", LOSS, Ordering::Greater),
        ("tie", MUTED, Ordering::Equal),
    ];
    let mut items = Vec::new();
    for (label, color, kind) in kinds {
        let n = pairs.iter().filter(|p| outcome(p) == kind).count();
        if n > 0 {
            items.push(Item::new(Key::Line(color.to_rgba(), 1.6, false), format!("{label} ({n})")));
        }
    }
    items.push(Item::new(
        Key::Line(INK.to_rgba(), 3.0, false),
        format!("mean: baseline {}, idea {}", num(means[0]), num(means[1])),
    ));
    if let Some(f) = trivial {
        let off = if line_at.is_some() { "" } else { ", off the chart" };
        let what = if void { ": the baseline did not learn" } else { "" };
        items.push(Item::new(
            Key::Line(MUTED.to_rgba(), 1.6, true),
            format!("trivial predictor ({}) {}{off}{what}", f.name, num(Some(f.value))),
        ));
    }
    let missing = base.len() - pairs.len();
    if missing > 0 {
        items.push(Item::new(Key::Note, format!("{missing} pair(s) without both metrics (a run diverged)")));
    }
    let metric = r.test_metric();
    let title = format!("Per-seed {metric}, paired: idea wins {wins}/{}", pairs.len());
    let frame = Frame { x_labels: 22.0, ..Frame::default() };
    // Whether every seed gets a label is known from the plot's size, before the legend that
    // would say otherwise is drawn.
    let below = area.split_vertically(header_height(area, &title, &items, s)?).1;
    let plan = frame.on(&below, s).build_cartesian_2d(-0.6f64..1.6f64, lo..hi).map_err(&e)?;
    if !seed_columns(area, &plan, &pairs, s)?.named_all {
        items.push(Item::new(Key::Note, "some seeds unlabelled (too close): hover a point or see Values"));
    }
    let rest = header(area, &title, &items, s)?;
    let mut chart = frame.on(&rest, s).build_cartesian_2d(-0.6f64..1.6f64, lo..hi).map_err(&e)?;
    let (_, plot_h) = chart.plotting_area().dim_in_pixel();
    axes(&mut chart, s)
        .disable_x_mesh()
        // The two arms are named below their points; plotters' own keys would put tick marks
        // at places that mean nothing.
        .x_labels(0)
        .y_labels(crate::layout::fit(plot_h, 28.0, s))
        .y_label_formatter(&linear_ticks(lo, hi))
        .y_desc(format!("{metric} ({})", dir.as_str()))
        .draw()
        .map_err(&e)?;

    if let Some(v) = line_at {
        let style = MUTED.stroke_width(s.px(1.6));
        chart.draw_series(DashedLineSeries::new([(-0.6, v), (1.6, v)], s.px(6.0), s.px(4.0), style)).map_err(&e)?;
    }
    for (_, color, kind) in kinds {
        chart
            .draw_series(
                pairs
                    .iter()
                    .filter(|p| outcome(p) == kind)
                    .map(|&(_, b, x)| PathElement::new(vec![(0.0, b), (1.0, x)], color.stroke_width(s.px(1.6)))),
            )
            .map_err(&e)?;
    }
    let origin = area.get_base_pixel();
    for (x, name) in [(0.0, "baseline"), (1.0, "idea")] {
        let (px, py) = chart.backend_coord(&(x, lo));
        area.draw(&Text::new(
            name,
            (px - origin.0, py - origin.1 + s.i(5.0)),
            s.font(11.5).color(&INK).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(&e)?;
    }
    let dot = s.px(3.5);
    chart
        .draw_series(pairs.iter().flat_map(|&(_, b, x)| {
            [Circle::new((0.0, b), dot, BASELINE.filled()), Circle::new((1.0, x), dot, IDEA.filled())]
        }))
        .map_err(&e)?;
    for (x, m) in [(0.0, means[0]), (1.0, means[1])] {
        let Some(m) = m else { continue };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x - 0.22, m), (x + 0.22, m)],
                INK.stroke_width(s.px(3.0)),
            )))
            .map_err(&e)?;
    }
    let columns = seed_columns(area, &chart, &pairs, s)?;
    seed_labels(area, &columns, s)?;

    let mut points = Vec::new();
    for &(i, b, x) in &pairs {
        points.push(hover(&chart, (0.0, b), format!("seed {i}: baseline {}", exact(b))));
        points.push(hover(&chart, (1.0, x), format!("seed {i}: idea {} (idea − baseline {})", exact(x), delta(x - b))));
    }
    for (x, m, arm) in [(0.0, means[0], "baseline"), (1.0, means[1], "idea")] {
        if let Some(m) = m {
            points.push(hover(&chart, (x + 0.2, m), format!("{arm} mean {}", exact(m))));
        }
    }
    if let (Some(v), Some(f)) = (line_at, trivial) {
        points.push(hover(&chart, (0.5, v), format!("trivial predictor ({}): {}", f.name, exact(v))));
    }
    Ok(points)
}

/// Where the seed numbers go: left of the baseline points and right of the idea points, clear
/// of the mean bars (which reach ±0.22 around each arm).
const LABEL_X: [(f64, f64); 2] = [(-0.28, 0.0), (1.28, 1.0)];

/// Label centres (backend y) for `targets` (sorted ascending) stacked `h` apart, each as near
/// its target as the others allow, within `top..bottom`; None if they do not fit. Neighbours
/// that would overlap are merged into a block centred on their targets, repeatedly.
pub fn spread(targets: &[i32], h: i32, top: i32, bottom: i32) -> Option<Vec<i32>> {
    if targets.len() as i32 * h > bottom - top {
        return None;
    }
    // Blocks of consecutive labels: (first index, count, top edge).
    let mut blocks: Vec<(usize, usize, i32)> = Vec::new();
    for (i, &t) in targets.iter().enumerate() {
        blocks.push((i, 1, t - h / 2));
        loop {
            let &(first, n, _) = blocks.last().unwrap();
            // The block centred on its labels' targets, kept inside the plot.
            let mean: i32 = (targets[first..first + n]
                .iter()
                .enumerate()
                .map(|(j, t)| *t as i64 - (j as i64) * h as i64)
                .sum::<i64>()
                / n as i64) as i32;
            let y = (mean - h / 2).clamp(top, bottom - n as i32 * h);
            blocks.last_mut().unwrap().2 = y;
            match blocks.len().checked_sub(2).map(|k| blocks[k]) {
                Some((pf, pn, py)) if py + pn as i32 * h > y => {
                    blocks.pop();
                    let last = blocks.last_mut().unwrap();
                    *last = (pf, pn + n, py);
                }
                _ => break,
            }
        }
    }
    Some(blocks.iter().flat_map(|&(_, n, y)| (0..n).map(move |j| y + j as i32 * h + h / 2)).collect())
}

/// One seed number beside one arm's point: its text, where its point is and where the
/// label's centre goes (None: no room).
struct SeedLabel {
    text: String,
    point: (i32, i32),
    y: Option<i32>,
}

/// Seed numbers beside both arms' points, each joined to its point by a thin line: a column
/// of labels per arm, spread apart where the values are close, so every seed is named even
/// when one arm's seeds sit on one line. An arm whose labels do not fit the plot's height
/// gets only those that touch no other (the largest |difference| first).
struct SeedColumns {
    /// The baseline's labels (right-aligned at `edges[0]`), then the idea's (left-aligned).
    sides: [Vec<SeedLabel>; 2],
    edges: [i32; 2],
    /// Every seed has a label on at least one side.
    named_all: bool,
}

fn seed_columns<DB: DrawingBackend, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    area: &DrawingArea<DB, Shift>,
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    pairs: &[(usize, f64, f64)],
    s: Scale,
) -> Result<SeedColumns, String> {
    let e = err("per-seed labels");
    let style = TextStyle::from(s.font(10.0));
    let (_, ys) = chart.plotting_area().get_pixel_range();
    let (top, bottom) = (ys.start, ys.end);
    let mut named = vec![false; pairs.len()];
    let mut sides: [Vec<SeedLabel>; 2] = [Vec::new(), Vec::new()];
    let mut edges = [0; 2];
    for (side, &(label_x, point_x)) in LABEL_X.iter().enumerate() {
        let value = |p: &(usize, f64, f64)| if side == 0 { p.1 } else { p.2 };
        let gap = s.i(5.0) * if side == 0 { -1 } else { 1 };
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.sort_by_key(|&k| chart.backend_coord(&(point_x, value(&pairs[k]))).1);
        let mut labels = Vec::new();
        let mut h = 0;
        for &k in &order {
            let text = pairs[k].0.to_string();
            let (_, th) = area.estimate_text_size(&text, &style).map_err(&e)?;
            h = h.max(th as i32 + s.i(1.0));
            let (px, py) = chart.backend_coord(&(point_x, value(&pairs[k])));
            labels.push(SeedLabel { text, point: (px + gap, py), y: None });
        }
        let targets: Vec<i32> = labels.iter().map(|l| l.point.1).collect();
        let ys = match spread(&targets, h, top, bottom) {
            Some(c) => c.into_iter().map(Some).collect(),
            None => greedy(&order, &targets, pairs, h),
        };
        for ((l, y), &k) in labels.iter_mut().zip(ys).zip(&order) {
            l.y = y;
            named[k] |= y.is_some();
        }
        edges[side] = chart.backend_coord(&(label_x, 0.0)).0;
        sides[side] = labels;
    }
    Ok(SeedColumns { sides, edges, named_all: named.iter().all(|n| *n) })
}

/// Draw the seed numbers of `seed_columns` and the lines to their points.
fn seed_labels<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, c: &SeedColumns, s: Scale) -> Result<(), String> {
    let e = err("per-seed labels");
    let font = s.font(10.0);
    let base = area.get_base_pixel();
    for (side, labels) in c.sides.iter().enumerate() {
        let edge = c.edges[side];
        let (pos, from) = if side == 0 { (HPos::Right, edge + s.i(2.0)) } else { (HPos::Left, edge - s.i(2.0)) };
        for l in labels {
            let Some(y) = l.y else { continue };
            area.draw(&PathElement::new(
                vec![(from - base.0, y - base.1), (l.point.0 - base.0, l.point.1 - base.1)],
                MUTED.mix(0.7).stroke_width(s.px(0.8)),
            ))
            .map_err(&e)?;
            area.draw(&Text::new(
                l.text.clone(),
                (edge - base.0, y - base.1),
                font.clone().color(&INK).pos(Pos::new(pos, VPos::Center)),
            ))
            .map_err(&e)?;
        }
    }
    Ok(())
}

/// Labels at their own points, the largest |difference| first, each only where it touches
/// none already placed (too many close seeds for a column).
fn greedy(order: &[usize], targets: &[i32], pairs: &[(usize, f64, f64)], h: i32) -> Vec<Option<i32>> {
    let diff = |i: usize| (pairs[order[i]].2 - pairs[order[i]].1).abs();
    let mut by_size: Vec<usize> = (0..order.len()).collect();
    by_size.sort_by(|&a, &b| diff(b).total_cmp(&diff(a)));
    let mut out = vec![None; order.len()];
    let mut taken: Vec<i32> = Vec::new();
    for i in by_size {
        let y = targets[i];
        if taken.iter().all(|t| (t - y).abs() >= h) {
            taken.push(y);
            out[i] = Some(y);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::spread;

    #[test]
    fn spread_centres_close_labels_on_their_targets_and_keeps_them_inside() {
        assert_eq!(spread(&[100, 100, 100], 10, 0, 300), Some(vec![90, 100, 110]));
        assert_eq!(spread(&[20, 200], 10, 0, 300), Some(vec![20, 200]), "apart: each at its target");
        assert_eq!(spread(&[0, 1], 10, 0, 300), Some(vec![5, 15]), "pushed below the top");
        assert_eq!(spread(&[295, 299, 300], 10, 0, 300), Some(vec![275, 285, 295]), "pushed above the bottom");
        // A block pushed up into the one above merges with it.
        assert_eq!(spread(&[30, 31, 40, 41], 10, 0, 50), Some(vec![15, 25, 35, 45]));
        assert_eq!(spread(&[10, 10, 10, 10], 10, 0, 30), None, "four labels in 30 px");
    }
}
