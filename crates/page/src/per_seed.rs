//! Chart 1: per-seed paired comparison (a slope chart). Each seed is a line from its
//! baseline metric to its idea metric, green when the idea is better (a lower MSE, a higher
//! accuracy), red when it is worse, grey when they are exactly equal.

use crate::format::{delta, exact, linear_ticks, num};
use crate::layout::{Hover, Item, Key, TextBox, err, header, hover};
use crate::style::{BASELINE, Frame, IDEA, INK, LOSS, MUTED, Scale, WIN, axes, range};
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
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
    // Every point and both means lie inside the y range, so no line is clipped.
    let (lo, hi) = range(pairs.iter().flat_map(|&(_, b, x)| [b, x]).chain(means.iter().flatten().copied()), false);
    let lo = if pairs.iter().all(|p| p.1 >= 0.0 && p.2 >= 0.0) { lo.max(0.0) } else { lo };

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
    let missing = base.len() - pairs.len();
    if missing > 0 {
        items.push(Item::new(Key::Note, format!("{missing} pair(s) without both metrics (a run diverged)")));
    }
    let metric = r.test_metric();
    let title = format!("Per-seed {metric}, paired: idea wins {wins}/{}", pairs.len());
    let rest = header(area, &title, &items, s)?;

    let mut chart = Frame { x_labels: 22.0, ..Frame::default() }
        .on(&rest, s)
        .build_cartesian_2d(-0.6f64..1.6f64, lo..hi)
        .map_err(&e)?;
    let (_, plot_h) = chart.plotting_area().dim_in_pixel();
    axes(&mut chart, s)
        .disable_x_mesh()
        .x_labels(12)
        .x_label_formatter(&|x| {
            if x.abs() < 1e-9 {
                "baseline".into()
            } else if (x - 1.0).abs() < 1e-9 {
                "idea".into()
            } else {
                String::new()
            }
        })
        .y_labels(crate::layout::fit(plot_h, 28.0, s))
        .y_label_formatter(&linear_ticks(lo, hi))
        .y_desc(format!("{metric} ({})", dir.as_str()))
        .draw()
        .map_err(&e)?;

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
    seed_labels(area, &chart, &pairs, s)?;

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
    Ok(points)
}

/// Seed numbers left of the baseline points: the seeds with the largest |difference| first,
/// each only where it does not touch one already placed (close values would overlap).
fn seed_labels<DB: DrawingBackend, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    area: &DrawingArea<DB, Shift>,
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    pairs: &[(usize, f64, f64)],
    s: Scale,
) -> Result<(), String> {
    let e = err("per-seed labels");
    let font = s.font(10.0);
    let base = area.get_base_pixel();
    let mut order: Vec<&(usize, f64, f64)> = pairs.iter().collect();
    order.sort_by(|a, b| (b.2 - b.1).abs().total_cmp(&(a.2 - a.1).abs()));
    let mut placed: Vec<TextBox> = Vec::new();
    for &&(i, b, _) in &order {
        let text = format!("{i}");
        let (tw, th) = area.estimate_text_size(&text, &TextStyle::from(font.clone())).map_err(&e)?;
        let (x, y) = chart.backend_coord(&(-0.1, b));
        let bx = TextBox { text, x0: x - tw as i32, y0: y - th as i32 / 2, x1: x, y1: y - th as i32 / 2 + th as i32 };
        if placed.iter().any(|p| p.overlaps(&bx)) {
            continue;
        }
        area.draw(&Text::new(
            bx.text.clone(),
            (bx.x1 - base.0, bx.y0 - base.1),
            font.clone().color(&MUTED).pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Right,
                plotters::style::text_anchor::VPos::Top,
            )),
        ))
        .map_err(&e)?;
        placed.push(bx);
    }
    Ok(())
}
