//! The live loss chart: minibatch loss of every run in flight, kept for the whole bench so
//! the two arms' losses stand side by side (colour = arm; sweep runs faint, full runs solid).
//! A resumed bench's reused runs are drawn too, dashed and muted: they were not trained in
//! this attempt, and their record keeps only each epoch's mean loss.
//! On a regression the trivial predictor's MSE and the learning bar are drawn across: a run
//! on the plateau sits at the first, one that learned drops below the second.

use crate::format::{exact, integer, num};
use crate::layout::{Axis, Hover, Item, Key, err, fit, header, hover, log_candidates, place_labels};
use crate::style::{BASELINE, Frame, IDEA, MUTED, Scale, WIN, axes, range, series};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench_core::messages::TrivialLoss;
use serde::Deserialize;

/// One run's loss trace.
#[derive(Clone, Debug, Deserialize)]
pub struct Series {
    /// Label (e.g. "idea full lr 0.01 seed 3").
    pub label: String,
    /// "baseline" or "idea" (colours the line); anything else gets a palette colour.
    #[serde(default)]
    pub arm: Option<String>,
    /// "sweep" or "full" (sweep lines are drawn faint).
    #[serde(default)]
    pub phase: Option<String>,
    /// (step, loss) points.
    pub points: Vec<(f64, f64)>,
    /// A run reused from a stopped attempt (its points: the record's epoch means).
    #[serde(default)]
    pub reused: bool,
}

impl Series {
    fn color(&self, i: usize) -> RGBAColor {
        let base = match self.arm.as_deref() {
            Some("baseline") => BASELINE,
            Some("idea") => IDEA,
            _ => series(i),
        };
        let alpha = if self.phase.as_deref() == Some("sweep") { 0.45 } else { 1.0 };
        base.mix(if self.reused { alpha * 0.8 } else { alpha })
    }

    /// The legend group: arm and phase when known (and whether reused), else the run's own
    /// label.
    fn group(&self) -> String {
        let g = match (&self.arm, &self.phase) {
            (Some(a), Some(p)) => format!("{a} {p}"),
            _ => self.label.clone(),
        };
        if self.reused { format!("{g}, reused") } else { g }
    }
}

/// Draw `runs` with a caption, and `trivial`'s lines when given; returns the hover points
/// (each run's last point, and the lines').
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    runs: &[Series],
    trivial: Option<&TrivialLoss>,
    s: Scale,
) -> Result<Vec<Hover>, String> {
    let e = err("loss chart");
    area.fill(&WHITE).map_err(&e)?;
    if runs.iter().all(|r| r.points.is_empty()) {
        let msg = "No run in flight: the loss of every run appears here while the bench trains.";
        header(area, caption, &[Item::new(Key::Note, msg)], s)?;
        return Ok(Vec::new());
    }
    // One legend entry per group (arm and phase), with its run count; at most 12.
    // A run counts once it has a point to draw.
    let mut groups: Vec<(String, RGBAColor, bool, usize)> = Vec::new();
    for (i, r) in runs.iter().enumerate().filter(|(_, r)| !r.points.is_empty()) {
        let g = r.group();
        match groups.iter_mut().find(|x| x.0 == g) {
            Some(x) => x.3 += 1,
            None => groups.push((g, r.color(i), r.reused, 1)),
        }
    }
    let mut items: Vec<Item> = groups
        .iter()
        .take(12)
        .map(|(g, c, reused, n)| {
            let runs = if *n == 1 { "1 run".to_string() } else { format!("{n} runs") };
            Item::new(Key::Line(*c, 2.0, *reused), format!("{g} ({runs})"))
        })
        .collect();
    if groups.len() > 12 {
        items.push(Item::new(Key::Note, format!("and {} more", groups.len() - 12)));
    }
    // Only positive finite lines can sit on the log axis.
    let trivial = trivial.filter(|t| t.value > 0.0 && t.learned_below > 0.0 && t.value.is_finite());
    let lines = trivial.map(|t| {
        [
            (t.value, MUTED, format!("trivial predictor ({})", t.name), "the plateau: nothing learned"),
            (t.learned_below, WIN, "learned below".to_string(), "the report's bar"),
        ]
    });
    for (v, color, label, _) in lines.iter().flatten() {
        items.push(Item::new(Key::Line(color.to_rgba(), 1.6, true), format!("{label}: {}", num(Some(*v)))));
    }
    let rest = header(area, caption, &items, s)?;
    let xmax = runs.iter().flat_map(|r| r.points.iter().map(|p| p.0)).fold(1.0, f64::max);
    let line_values = lines.iter().flatten().map(|l| l.0);
    let (ylo, yhi) = range(runs.iter().flat_map(|r| r.points.iter().map(|p| p.1)).chain(line_values), true);
    let mut chart = Frame { right: 16.0, bottom: 4.0, x_labels: 36.0, ..Frame::default() }
        .on(&rest, s)
        .build_cartesian_2d(0f64..xmax, (ylo..yhi).log_scale())
        .map_err(&e)?;
    let (w, h) = chart.plotting_area().dim_in_pixel();
    axes(&mut chart, s)
        .disable_y_mesh()
        .x_desc("training step of the run")
        .y_desc("minibatch loss")
        .x_labels(fit(w, 60.0, s))
        .x_label_formatter(&integer)
        .y_label_formatter(&|_| String::new())
        .draw()
        .map_err(&e)?;
    place_labels(area, &chart, Axis::Y, &log_candidates(ylo, yhi, &[]), 0.0, fit(h, 22.0, s), s)?;
    let mut points = Vec::new();
    for (v, color, label, what) in lines.iter().flatten() {
        let style = color.stroke_width(s.px(1.6));
        chart.draw_series(DashedLineSeries::new([(0.0, *v), (xmax, *v)], s.px(6.0), s.px(4.0), style)).map_err(&e)?;
        points.push(hover(&chart, (xmax / 2.0, *v), format!("{label}: {} ({what})", exact(*v))));
    }
    for (i, run) in runs.iter().enumerate() {
        let color = run.color(i);
        let pts: Vec<(f64, f64)> = run.points.iter().copied().filter(|p| p.1.is_finite() && p.1 > 0.0).collect();
        let style = color.stroke_width(s.px(1.3));
        if run.reused {
            chart.draw_series(DashedLineSeries::new(pts.iter().copied(), s.px(5.0), s.px(3.0), style)).map_err(&e)?;
        } else {
            chart.draw_series(LineSeries::new(pts.iter().copied(), style)).map_err(&e)?;
        }
        if let Some(&last) = pts.last() {
            let what = if run.reused { "mean loss of its last epoch" } else { "loss" };
            points.push(hover(&chart, last, format!("{}: step {}, {what} {}", run.label, last.0, exact(last.1))));
        }
    }
    Ok(points)
}
