//! Chart 4: the sign-flip null distribution of the mean paired difference, with the
//! observed value (and its mirror) marked; the bins as extreme as it are shaded. The title
//! says what is drawn and how the report's p was computed; the legend gives the share of the
//! drawn null as extreme as observed. The two are the same number when both are the exact
//! enumeration; a Monte Carlo p (the seed report's) differs a little.

use crate::card::p_method;
use crate::format::{delta, exact, linear_ticks, num};
use crate::layout::{Hover, Item, Key, err, fit, header, hover};
use crate::style::{Frame, INK, LOSS, MUTED, Scale, axes};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench_core::report::Report;
use rdbench_core::stats::permutation::{as_extreme, null_distribution};

/// Sign vectors drawn when there are too many pairs to enumerate.
pub const SAMPLED: usize = 20_000;

/// The null sample of the mean diff and whether it is exact.
pub fn null_of(diffs: &[f64]) -> (Vec<f64>, bool) {
    if diffs.len() <= 16 {
        return (null_distribution(diffs), true);
    }
    // A fixed xorshift stream: the chart only needs the shape, reproducibly.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let n = diffs.len() as f64;
    let sample = (0..SAMPLED)
        .map(|_| {
            diffs
                .iter()
                .map(|&d| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    if state & 1 == 1 { -d } else { d }
                })
                .sum::<f64>()
                / n
        })
        .collect();
    (sample, false)
}

/// The complete pairs' diffs.
fn diffs(r: &Report) -> Vec<f64> {
    r.comparison.per_seed_diffs.iter().flatten().copied().collect()
}

/// The line the page shows instead of the chart when `r` has nothing to draw.
pub fn note(r: &Report) -> Option<String> {
    diffs(r).is_empty().then(|| "No complete pairs: no null distribution.".to_string())
}

/// The chart's title: what is drawn (`drawn`), and the report's p with how it was computed.
pub fn title(r: &Report, drawn: &str) -> String {
    format!("Sign-flip null of the mean diff, {drawn}; report p = {} ({})", num(r.comparison.p_value), p_method(r))
}

/// Share of `null` at least as extreme as `observed` (two-sided, ties as the test counts them).
pub fn share_as_extreme(null: &[f64], observed: f64) -> f64 {
    null.iter().filter(|&&v| as_extreme(v, observed)).count() as f64 / null.len().max(1) as f64
}

/// Draw on `area`; returns the hover points.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &Report, s: Scale) -> Result<Vec<Hover>, String> {
    let e = err("null chart");
    area.fill(&WHITE).map_err(&e)?;
    if let Some(note) = note(r) {
        header(area, "Sign-flip null of the mean diff", &[Item::new(Key::Note, note)], s)?;
        return Ok(Vec::new());
    }
    let diffs = diffs(r);
    let obs = diffs.iter().sum::<f64>() / diffs.len() as f64;
    let (null, is_exact) = null_of(&diffs);
    let span = null.iter().fold(obs.abs(), |a, v| a.max(v.abs())).max(1e-12) * 1.05;
    let bins = 41usize;
    let width = 2.0 * span / bins as f64;
    let mut counts = vec![0usize; bins];
    for v in &null {
        counts[(((v + span) / width) as usize).min(bins - 1)] += 1;
    }
    let total = null.len() as f64;
    let ymax = counts.iter().copied().max().unwrap_or(1) as f64 / total * 1.12;
    let p = num(r.comparison.p_value);
    let drawn = if is_exact {
        format!("all {} sign assignments", null.len())
    } else {
        format!("{} sampled sign vectors", null.len())
    };
    let items = [
        Item::new(Key::Line(INK.to_rgba(), 2.0, false), format!("observed {}", delta(obs))),
        Item::new(Key::Line(INK.to_rgba(), 1.0, true), "mirror (two-sided)"),
        Item::new(Key::Swatch(LOSS.mix(0.55)), format!("as extreme: {}", num(share_as_extreme(&null, obs)))),
    ];
    let rest = header(area, &title(r, &drawn), &items, s)?;
    let mut chart = Frame { right: 18.0, y_labels: 52.0, ..Frame::default() }
        .on(&rest, s)
        .build_cartesian_2d(-span..span, 0f64..ymax)
        .map_err(&e)?;
    let (w, h) = chart.plotting_area().dim_in_pixel();
    axes(&mut chart, s)
        .x_desc("mean(idea − baseline) under random sign flips")
        .y_desc("share")
        .x_labels(fit(w, 70.0, s))
        .y_labels(fit(h, 28.0, s))
        .x_label_formatter(&linear_ticks(-span, span))
        .y_label_formatter(&linear_ticks(0.0, ymax))
        .draw()
        .map_err(&e)?;
    chart
        .draw_series(counts.iter().enumerate().map(|(i, &c)| {
            let x0 = -span + i as f64 * width;
            let mid = x0 + width / 2.0;
            let color = if as_extreme(mid, obs) { LOSS.mix(0.55) } else { MUTED.mix(0.6) };
            Rectangle::new([(x0, 0.0), (x0 + width * 0.92, c as f64 / total)], color.filled())
        }))
        .map_err(&e)?;
    chart
        .draw_series(std::iter::once(PathElement::new(vec![(obs, 0.0), (obs, ymax)], INK.stroke_width(s.px(2.0)))))
        .map_err(&e)?;
    chart
        .draw_series(DashedLineSeries::new(
            vec![(-obs, 0.0), (-obs, ymax)],
            s.px(5.0),
            s.px(4.0),
            INK.stroke_width(s.px(1.0)),
        ))
        .map_err(&e)?;
    let mut points: Vec<Hover> = counts
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(i, &c)| {
            let x0 = -span + i as f64 * width;
            let share = c as f64 / total;
            hover(
                &chart,
                (x0 + width / 2.0, share),
                format!("{} to {}: share {}", exact(x0), exact(x0 + width), num(share)),
            )
        })
        .collect();
    points.push(hover(&chart, (obs, ymax * 0.95), format!("observed mean diff {}, p = {p}", delta(obs))));
    Ok(points)
}
