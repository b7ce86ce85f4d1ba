//! The scale study's charts: against the sequence length T (log), the hidden states held
//! (log), the cell evaluations (log), the gradient cosine against dense BPTT, one line per
//! schedule at the idea's memory (dense, the idea, revolve, fixed interval); and each arm's
//! mean test metric. A row per chart (per track), a column per model.
//!
//! Generic over any plotters backend: the CLI renders SVG (`rdbench scale --chart`), and the
//! page can draw the same on a canvas.

use crate::format::{linear_ticks, num};
use crate::layout::{Axis, Hover, Item, Key, err, header, hover, log_candidates, log_log, place_labels};
use crate::style::{BASELINE, IDEA, INK, Scale, axes, range};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench_core::records::ScheduleKind;
use rdbench_core::scale::{ScaleReport, ScaleRow};

/// The four charts, top to bottom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScaleChart {
    /// Hidden states held at the peak.
    States,
    /// Forward plus reversal cell evaluations.
    CellEvals,
    /// Gradient cosine against dense BPTT.
    Cosine,
    /// Each arm's mean test metric.
    Metric,
}

/// Every chart, in drawing order.
pub const SCALE_CHARTS: [ScaleChart; 4] =
    [ScaleChart::States, ScaleChart::CellEvals, ScaleChart::Cosine, ScaleChart::Metric];

/// One line: its label, colour, whether it is drawn wide and faint under the others (revolve
/// at the idea's memory holds the idea's states; the arms often tie), and its points (T, value).
struct Line {
    label: String,
    colour: RGBColor,
    under: bool,
    points: Vec<(f64, f64)>,
}

impl Line {
    /// Its stroke at scale `s`.
    fn stroke(&self, s: Scale) -> ShapeStyle {
        if self.under { self.colour.mix(0.5).stroke_width(s.px(5.0)) } else { self.colour.stroke_width(s.px(2.0)) }
    }
}

/// A schedule's line colour (the frontier chart's, dense and the idea as the arms').
fn colour(kind: ScheduleKind) -> RGBColor {
    match kind {
        ScheduleKind::Dense => INK,
        ScheduleKind::Idea => IDEA,
        ScheduleKind::Revolve => RGBColor(148, 103, 189),
        ScheduleKind::FixedInterval => BASELINE,
        ScheduleKind::Reversal => RGBColor(140, 86, 75),
    }
}

/// The lines of `chart` over one model's rows (T ascending).
fn lines(chart: ScaleChart, rows: &[&ScaleRow]) -> Vec<Line> {
    let t = |r: &ScaleRow| r.seq_len as f64;
    if chart == ScaleChart::Metric {
        // A length where an arm has no mean (a run diverged) has no point: the legend says so.
        let arm = |label: &str, colour, f: fn(&ScaleRow) -> Option<f64>| {
            let missing: Vec<String> = rows.iter().filter(|r| f(r).is_none()).map(|r| r.seq_len.to_string()).collect();
            Line {
                label: if missing.is_empty() {
                    label.to_string()
                } else {
                    format!("{label} (no mean at T = {}: a run diverged)", missing.join(", "))
                },
                colour,
                under: colour == BASELINE,
                points: rows.iter().filter_map(|r| Some((t(r), f(r)?))).collect(),
            }
        };
        return vec![
            arm("baseline", BASELINE, |r| r.outcome.baseline_metric),
            arm("idea", IDEA, |r| r.outcome.idea_metric),
        ];
    }
    // Revolve first, under the idea.
    [ScheduleKind::Revolve, ScheduleKind::Dense, ScheduleKind::FixedInterval, ScheduleKind::Idea]
        .into_iter()
        .map(|kind| Line {
            under: kind == ScheduleKind::Revolve,
            label: match kind {
                ScheduleKind::Dense | ScheduleKind::Idea => kind.label().to_string(),
                _ => format!("{} at the idea's memory", kind.label()),
            },
            colour: colour(kind),
            points: rows
                .iter()
                .filter_map(|r| {
                    let p = r.point(kind)?;
                    let v = match chart {
                        ScaleChart::States => Some(p.stored_states),
                        ScaleChart::CellEvals => Some(p.cell_evals()),
                        _ => p.grad_cos,
                    };
                    Some((t(r), v?))
                })
                .collect(),
        })
        .filter(|l| !l.points.is_empty())
        .collect()
}

/// What a chart shows, for its title and y axis.
fn describe(chart: ScaleChart, rows: &[&ScaleRow]) -> (String, String) {
    match chart {
        ScaleChart::States => ("hidden states held".into(), "states held at the peak".into()),
        ScaleChart::CellEvals => ("cell evaluations".into(), "forward + reversal cells".into()),
        ScaleChart::Cosine => ("gradient cosine to dense BPTT".into(), "gradient cosine".into()),
        ScaleChart::Metric => {
            let m = rows.first().map_or("test metric".to_string(), |r| r.outcome.metric.clone());
            (format!("mean {m} per arm"), m)
        }
    }
}

/// Draw `chart` of one model's rows on `area` (`scope` leads the title); returns the hover points.
pub fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: ScaleChart,
    rows: &[&ScaleRow],
    scope: &str,
    s: Scale,
) -> Result<Vec<Hover>, String> {
    let e = err("scale chart");
    area.fill(&WHITE).map_err(&e)?;
    let lines = lines(chart, rows);
    let (what, y_desc) = describe(chart, rows);
    let items: Vec<Item> = lines
        .iter()
        .map(|l| Item::new(Key::Line(l.stroke(s).color, if l.under { 4.0 } else { 2.0 }, false), l.label.clone()))
        .collect();
    let rest = header(area, &format!("{scope}: {what} against T"), &items, s)?;
    let ts: Vec<f64> = rows.iter().map(|r| r.seq_len as f64).collect();
    let (x0, x1) = range(ts.iter().copied(), true);
    let ys = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let log_y = matches!(chart, ScaleChart::States | ScaleChart::CellEvals);
    let (y0, y1) = match chart {
        // Cosines sit near 1: the axis reaches at least down to 0.99 (condition (c)'s bound).
        ScaleChart::Cosine => {
            let lo = ys.fold(0.99f64, f64::min);
            (lo - 0.1 * (1.0 - lo), 1.0 + 0.1 * (1.0 - lo))
        }
        _ => range(ys, log_y),
    };
    if log_y {
        let mut c = log_log(area, &rest, ((x0, x1), (y0, y1)), ("sequence length T", &y_desc), (&ts, &[]), s)?;
        plot(&mut c, &lines, scope, s)
    } else {
        let mut c = crate::style::Frame { right: 16.0, ..Default::default() }
            .on(&rest, s)
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
            .map_err(&e)?;
        axes(&mut c, s)
            .disable_x_mesh()
            .max_light_lines(0)
            .x_label_formatter(&|_| String::new())
            .y_label_formatter(&linear_ticks(y0, y1))
            .x_desc("sequence length T")
            .y_desc(y_desc.as_str())
            .draw()
            .map_err(&e)?;
        place_labels(area, &c, Axis::X, &log_candidates(x0, x1, &ts), y0, 10, s)?;
        plot(&mut c, &lines, scope, s)
    }
}

/// Draw each line with a marker at each length; returns the hover points.
fn plot<DB: DrawingBackend, Y: Ranged<ValueType = f64>>(
    c: &mut ChartContext<'_, DB, Cartesian2d<LogCoord<f64>, Y>>,
    lines: &[Line],
    scope: &str,
    s: Scale,
) -> Result<Vec<Hover>, String> {
    let e = err("scale chart lines");
    let mut points = Vec::new();
    for l in lines {
        c.draw_series(LineSeries::new(l.points.clone(), l.stroke(s))).map_err(&e)?;
        c.draw_series(l.points.iter().map(|&p| Circle::new(p, s.px(3.5), l.colour.filled()))).map_err(&e)?;
        let text = |p: (f64, f64)| format!("{scope} {}: T = {}, {}", l.label, p.0, num(p.1));
        points.extend(l.points.iter().map(|&p| hover(c, p, text(p))));
    }
    Ok(points)
}

/// Every chart of `scale`: a row per chart and track, a column per model (side by side), or
/// every panel one above the other when `stacked` (a phone); returns the hover points.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    scale: &ScaleReport,
    s: Scale,
    stacked: bool,
) -> Result<Vec<Hover>, String> {
    area.fill(&WHITE).map_err(err("scale charts"))?;
    let (rows, cols) = grid(scale, stacked);
    let panels = area.split_evenly((rows, cols));
    let mut panel = panels.iter();
    let mut points = Vec::new();
    for track in &scale.tracks {
        for chart in SCALE_CHARTS {
            for model in &scale.models {
                let rows = scale.line(track, model);
                let scope = if scale.tracks.len() > 1 { format!("{track} {model}") } else { model.clone() };
                points.extend(draw_panel(panel.next().expect("a panel per chart"), chart, &rows, &scope, s)?);
            }
        }
    }
    Ok(points)
}

/// Panel rows and columns of [`draw`].
fn grid(scale: &ScaleReport, stacked: bool) -> (usize, usize) {
    let (models, rows) = (scale.models.len().max(1), SCALE_CHARTS.len() * scale.tracks.len().max(1));
    if stacked { (rows * models, 1) } else { (rows, models) }
}

/// The size in pixels of `scale`'s charts drawn by [`draw`] at scale 1, side by side.
pub fn size(scale: &ScaleReport) -> (u32, u32) {
    let (rows, cols) = grid(scale, false);
    (600 * cols as u32, 340 * rows as u32)
}

/// Panel rows of [`draw`] (the page sizes its canvas by them).
pub fn panel_rows(scale: &ScaleReport, stacked: bool) -> usize {
    grid(scale, stacked).0
}
