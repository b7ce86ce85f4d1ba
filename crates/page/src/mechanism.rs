//! Chart 3: the mechanism. Top panel: one-step reversal defect at every probe for each
//! idea full-run seed, with the tau line. Bottom panel: the checkpoint count it led to.

use crate::format::{exact, integer, num};
use crate::layout::{Axis, Hover, Item, Key, err, fit, header, hover, log_candidates, place_labels};
use crate::style::{Frame, INK, Scale, axes, range, series};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench_core::report::Report;

/// The line the page shows instead of the chart when `r` has no probe trace to draw (a
/// seed-era report, or no idea full run that probed).
pub fn note(r: &Report) -> Option<String> {
    let traced = r.mechanism.as_ref().is_some_and(|m| m.traces.iter().any(|t| !t.defect.is_empty()));
    if traced {
        return None;
    }
    let why = if r.mechanism.is_none() { " (seed-era format)" } else { "" };
    let sig = &r.mechanism_signature;
    Some(format!(
        "No probe traces in this report{why}. Final probe: mean defect {}, mean checkpoints {}; mechanism {}.",
        num(sig.observed_mean_defect),
        num(sig.observed_mean_checkpoints),
        if sig.confirmed { "confirmed" } else { "not confirmed" }
    ))
}

/// Draw on `area`; a report without probe traces gets its note instead.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &Report, s: Scale) -> Result<Vec<Hover>, String> {
    let e = err("mechanism chart");
    area.fill(&WHITE).map_err(&e)?;
    let (Some(m), None) = (&r.mechanism, note(r)) else {
        let note = note(r).unwrap_or_default();
        header(area, "Mechanism: reversal defect and checkpoints", &[Item::new(Key::Note, note)], s)?;
        return Ok(Vec::new());
    };
    let verdict = if r.mechanism_signature.confirmed {
        "confirmed".to_string()
    } else {
        format!("not confirmed: ({}) failed", m.failed.join("), ("))
    };
    let mut items: Vec<Item> = m
        .traces
        .iter()
        .enumerate()
        .map(|(i, t)| Item::new(Key::Line(series(i).to_rgba(), 2.0, false), format!("seed {}", t.seed)))
        .collect();
    items.push(Item::new(Key::Line(INK.to_rgba(), 1.5, true), format!("τ = {}", num(m.tau))));
    let rest = header(area, &format!("Mechanism ({verdict}): defect and checkpoints per probe"), &items, s)?;

    let (_, h) = rest.dim_in_pixel();
    let (top, bottom) = rest.split_vertically(h / 2);
    let probes = m.traces.iter().map(|t| t.defect.len()).max().unwrap_or(1).max(1);
    let x_range = -0.3f64..(probes as f64 - 0.7);
    let (w, _) = top.dim_in_pixel();
    let x_labels = fit(w, 34.0, s).min(probes + 1);

    let (ylo, yhi) = range(m.traces.iter().flat_map(|t| t.defect.iter().flatten().copied()).chain([m.tau]), true);
    let mut c1 = Frame { top: 4.0, bottom: 0.0, x_labels: 20.0, ..Frame::default() }
        .on(&top, s)
        .build_cartesian_2d(x_range.clone(), (ylo..yhi).log_scale())
        .map_err(&e)?;
    axes(&mut c1, s)
        .disable_y_mesh()
        .y_desc("one-step defect")
        .x_labels(x_labels)
        .x_label_formatter(&integer)
        .y_label_formatter(&|_| String::new())
        .draw()
        .map_err(&e)?;
    let (_, top_h) = c1.plotting_area().dim_in_pixel();
    place_labels(&top, &c1, Axis::Y, &log_candidates(ylo, yhi, &[m.tau]), x_range.start, fit(top_h, 22.0, s), s)?;
    let mut points = Vec::new();
    for (i, t) in m.traces.iter().enumerate() {
        let color = series(i);
        let pts: Vec<(f64, f64)> =
            t.defect.iter().enumerate().filter_map(|(x, d)| Some((x as f64, (*d)?))).filter(|p| p.1 > 0.0).collect();
        c1.draw_series(LineSeries::new(pts.clone(), color.stroke_width(s.px(1.5)))).map_err(&e)?;
        c1.draw_series(pts.iter().map(|&p| Circle::new(p, s.px(2.2), color.filled()))).map_err(&e)?;
        for &(x, d) in &pts {
            let k = t.k.get(x as usize).map_or(String::new(), |k| format!(", k = {k}"));
            points.push(hover(&c1, (x, d), format!("seed {} probe {}: defect {}{k}", t.seed, x as usize, exact(d))));
        }
    }
    c1.draw_series(DashedLineSeries::new(
        vec![(x_range.start, m.tau), (x_range.end, m.tau)],
        s.px(6.0),
        s.px(4.0),
        INK.stroke_width(s.px(1.5)),
    ))
    .map_err(&e)?;

    let max_ck = m.traces.iter().flat_map(|t| t.checkpoints.iter().copied()).max().unwrap_or(1) as f64;
    let mut c2 = Frame { top: 8.0, bottom: 4.0, x_labels: 36.0, ..Frame::default() }
        .on(&bottom, s)
        .build_cartesian_2d(x_range, 0f64..(max_ck * 1.08).max(2.0))
        .map_err(&e)?;
    let (_, bot_h) = c2.plotting_area().dim_in_pixel();
    axes(&mut c2, s)
        .x_desc("probe (before epoch e; the last is after training)")
        .y_desc("checkpoints kept")
        .x_labels(x_labels)
        .y_labels(fit(bot_h, 24.0, s))
        .x_label_formatter(&integer)
        .y_label_formatter(&integer)
        .draw()
        .map_err(&e)?;
    let n = m.traces.len().max(1) as f64;
    for (i, t) in m.traces.iter().enumerate() {
        // Small horizontal offsets keep identical counts of different seeds visible.
        let off = (i as f64 - (n - 1.0) / 2.0) * 0.25 / n;
        let pts: Vec<(f64, f64)> = t.checkpoints.iter().enumerate().map(|(x, &c)| (x as f64 + off, c as f64)).collect();
        c2.draw_series(LineSeries::new(pts.clone(), series(i).stroke_width(s.px(1.2)))).map_err(&e)?;
        c2.draw_series(pts.iter().map(|&p| Circle::new(p, s.px(2.2), series(i).filled()))).map_err(&e)?;
        for (x, &(px, c)) in pts.iter().enumerate() {
            points.push(hover(&c2, (px, c), format!("seed {} probe {x}: {} checkpoints", t.seed, c as usize)));
        }
    }
    Ok(points)
}
