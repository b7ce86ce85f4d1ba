//! Chart 5: the frontier: cell evaluations (forward + reversal) against hidden
//! states held, both log, one line per schedule family (fixed interval, revolve, reversal at a
//! fixed k; dense BPTT a square), every point coloured by its gradient's cosine with dense
//! BPTT, the idea's operating points ringed. A point below and left of the idea's is an exact
//! schedule that did its job with no more memory for less work.

use crate::format::{exact, num, percent};
use crate::layout::{Hover, Item, Key, err, header, hover, log_log};
use crate::style::{BASELINE, INK, Scale, range};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench_core::frontier::{Frontier, every_probe};
use rdbench_core::records::ScheduleKind;
use rdbench_core::report::Report;

/// Colour of a gradient cosine, and the bins the legend names (lower bound, label).
const COSINE_BINS: [(f64, RGBColor, &str); 4] = [
    (0.9999, RGBColor(26, 152, 80), "cos ≥ 0.9999"),
    (0.99, RGBColor(145, 207, 96), "≥ 0.99"),
    (0.9, RGBColor(240, 200, 80), "≥ 0.9"),
    (f64::NEG_INFINITY, RGBColor(215, 48, 39), "< 0.9 or n/a"),
];

/// A family's line colour, width (CSS px) and whether it is dashed (dense and the idea have
/// no line). Fixed interval is drawn wide and first: near T / 2 states it runs along revolve.
fn family(kind: ScheduleKind) -> Option<(RGBColor, f64, bool)> {
    match kind {
        ScheduleKind::FixedInterval => Some((BASELINE, 4.0, false)),
        ScheduleKind::Revolve => Some((RGBColor(148, 103, 189), 1.8, false)),
        ScheduleKind::Reversal => Some((RGBColor(140, 86, 75), 1.8, true)),
        ScheduleKind::Dense | ScheduleKind::Idea => None,
    }
}

/// How opaque a family's line is (the wide fixed-interval line lets revolve's show through).
fn line_alpha(kind: ScheduleKind) -> f64 {
    if kind == ScheduleKind::FixedInterval { 0.55 } else { 1.0 }
}

/// The fill of a point with cosine `c`.
pub fn cosine_colour(c: Option<f64>) -> RGBColor {
    let c = c.filter(|c| c.is_finite()).unwrap_or(f64::NEG_INFINITY);
    COSINE_BINS.iter().find(|b| c >= b.0).map_or(COSINE_BINS[3].1, |b| b.1)
}

/// Draw the report's frontier on `area`; a report without one gets a note.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &Report, s: Scale) -> Result<Vec<Hover>, String> {
    draw_frontier(area, r.frontier.as_ref(), "", s)
}

/// Draw `f` on `area` (`scope`, e.g. a model's name, leads the title); None gets a note.
pub fn draw_frontier<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    f: Option<&Frontier>,
    scope: &str,
    s: Scale,
) -> Result<Vec<Hover>, String> {
    let e = err("frontier chart");
    area.fill(&WHITE).map_err(&e)?;
    let lead = if scope.is_empty() { String::new() } else { format!("{scope}: ") };
    let Some(f) = f.filter(|f| !f.points.is_empty()) else {
        let note = "No frontier in this report: it has no probe of the idea's full runs that ran every schedule.";
        header(area, &format!("{lead}Frontier: cost against memory"), &[Item::new(Key::Note, note)], s)?;
        return Ok(Vec::new());
    };
    let d = &f.dominated;
    let standing = match d.n_dominated {
        0 => format!("the idea on the frontier at {}", every_probe(d.n_probes)),
        k => format!(
            "the idea dominated by exact checkpointing at {k} of {} probes ({})",
            d.n_probes,
            percent(d.fraction)
        ),
    };
    let title = format!("{lead}Frontier, T = {}: {standing}", f.t);
    let mut items = vec![Item::new(Key::Swatch(INK.to_rgba()), "dense BPTT")];
    for kind in [ScheduleKind::FixedInterval, ScheduleKind::Revolve, ScheduleKind::Reversal] {
        if let Some((c, width, dashed)) = family(kind).filter(|_| f.points.iter().any(|p| p.at.schedule == kind)) {
            items.push(Item::new(Key::Line(c.mix(line_alpha(kind)), width.min(3.0), dashed), kind.label()));
        }
    }
    items.push(Item::new(Key::Ring(INK.to_rgba()), "idea's operating points"));
    items.extend(COSINE_BINS.iter().map(|b| Item::new(Key::Dot(b.1.to_rgba()), b.2)));
    let rest = header(area, &title, &items, s)?;

    let xs = f.points.iter().map(|p| p.stored_states);
    let ys = f.points.iter().map(|p| p.cell_evals());
    let (xlo, xhi) = range(xs, true);
    let (ylo, yhi) = range(ys, true);
    let desc = ("hidden states held at the peak", "cell evaluations (forward + reversal)");
    let mut chart = log_log(area, &rest, ((xlo, xhi), (ylo, yhi)), desc, (&[(f.t + 1) as f64], &[]), s)?;

    for kind in [ScheduleKind::FixedInterval, ScheduleKind::Revolve, ScheduleKind::Reversal] {
        let Some((c, width, dashed)) = family(kind) else { continue };
        let mut line: Vec<(f64, f64)> =
            f.points.iter().filter(|p| p.at.schedule == kind).map(|p| (p.stored_states, p.cell_evals())).collect();
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        let style = c.mix(line_alpha(kind)).stroke_width(s.px(width));
        if dashed {
            chart.draw_series(DashedLineSeries::new(line, s.px(6.0), s.px(4.0), style)).map_err(&e)?;
        } else {
            chart.draw_series(LineSeries::new(line, style)).map_err(&e)?;
        }
    }
    let mut points = Vec::new();
    for p in &f.points {
        let at = (p.stored_states, p.cell_evals());
        let fill = cosine_colour(p.grad_cos).filled();
        match p.at.schedule {
            ScheduleKind::Dense => {
                let h = s.i(5.0);
                let square = |style: ShapeStyle| EmptyElement::at(at) + Rectangle::new([(-h, -h), (h, h)], style);
                chart.draw_series([square(fill), square(INK.stroke_width(s.px(1.4)))]).map_err(&e)?;
            }
            ScheduleKind::Idea => {
                chart.draw_series(std::iter::once(Circle::new(at, s.px(4.0), fill))).map_err(&e)?;
                chart
                    .draw_series(std::iter::once(Circle::new(at, s.px(8.0), INK.stroke_width(s.px(2.0)))))
                    .map_err(&e)?;
            }
            _ => {
                chart.draw_series(std::iter::once(Circle::new(at, s.px(3.8), fill))).map_err(&e)?;
            }
        }
        points.push(hover(
            &chart,
            at,
            format!(
                "{}{}: {} states, {} cell evaluations ({} forward + {} reversal), cosine {}, relative error {} \
                 (mean of {} probe{})",
                p.at.schedule.label(),
                if p.at.param().is_empty() { String::new() } else { format!(", {}", p.at.param()) },
                num(p.stored_states),
                num(p.cell_evals()),
                num(p.forward_evals),
                num(p.reversal_evals),
                exact(p.grad_cos),
                num(p.grad_rel_err),
                p.n,
                if p.n == 1 { "" } else { "s" }
            ),
        ));
    }
    Ok(points)
}

/// Each frontier of a study (one per track and model) in its own panel: side by side in rows
/// of two, or one above the other when `stacked` (a narrow screen).
pub fn draw_frontiers<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    frontiers: &[rdbench_core::study::ModelFrontier],
    stacked: bool,
    s: Scale,
) -> Result<Vec<Hover>, String> {
    let e = err("frontier panels");
    area.fill(&WHITE).map_err(&e)?;
    if frontiers.is_empty() {
        return draw_frontier(area, None, "study", s);
    }
    let n = frontiers.len();
    // Side by side in rows of two (a study over two tracks: a row per track), or one column.
    let grid = if stacked {
        (n, 1)
    } else if n > 2 {
        (n.div_ceil(2), 2)
    } else {
        (1, n)
    };
    let panels = area.split_evenly(grid);
    let several_tracks = frontiers.iter().any(|f| f.track != frontiers[0].track);
    let mut points = Vec::new();
    for (panel, m) in panels.iter().zip(frontiers) {
        let label = if several_tracks { format!("{} {}", m.track, m.model) } else { m.model.clone() };
        points.extend(draw_frontier(panel, Some(&m.frontier), &label, s)?);
    }
    Ok(points)
}
