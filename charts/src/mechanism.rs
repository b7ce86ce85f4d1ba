//! Chart 3: the mechanism. Top panel: one-step reversal defect at every probe for each
//! idea full-run seed, with the tau line. Bottom panel: the checkpoint count it led to.

use crate::style::{INK, Scale, integer, legend, log_ticks, mesh, range, series, tick};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench::report::Report;

/// Draw on `area`; a report without probe traces (the seed era) gets a note instead.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &Report, s: Scale) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("mechanism chart: {e:?}");
    area.fill(&WHITE).map_err(e)?;
    let Some(m) = &r.mechanism else {
        let lines = [
            "No probe traces in this report (seed-era format).".to_string(),
            format!(
                "Final probe: mean defect {}, mean checkpoints {}.",
                r.mechanism_signature.observed_mean_defect.map_or("n/a".into(), tick),
                r.mechanism_signature.observed_mean_checkpoints.map_or("n/a".into(), tick)
            ),
            format!("Mechanism {}.", if r.mechanism_signature.confirmed { "confirmed" } else { "not confirmed" }),
        ];
        area.draw(&Text::new("Mechanism: reversal defect and checkpoints", (s.i(12.0), s.i(10.0)), s.bold(15.0)))
            .map_err(e)?;
        for (i, line) in lines.iter().enumerate() {
            let y = s.i(44.0 + 20.0 * i as f64);
            area.draw(&Text::new(line.clone(), (s.i(12.0), y), s.font(12.0).color(&INK))).map_err(e)?;
        }
        return Ok(());
    };
    let (_, h) = area.dim_in_pixel();
    let (top, bottom) = area.split_vertically(h * 56 / 100);
    let probes = m.traces.iter().map(|t| t.defect.len()).max().unwrap_or(1).max(1);
    let x_range = -0.3f64..(probes as f64 - 0.7);

    let (ylo, yhi) = range(m.traces.iter().flat_map(|t| t.defect.iter().flatten().copied()).chain([m.tau]), true);
    let mut c1 = ChartBuilder::on(&top)
        .caption("Reversal defect per probe (idea full runs)", s.bold(15.0))
        .margin(s.px(10.0))
        .x_label_area_size(s.px(22.0))
        .y_label_area_size(s.px(70.0))
        .build_cartesian_2d(x_range.clone(), (ylo..yhi).log_scale())
        .map_err(e)?;
    mesh(&mut c1.configure_mesh(), s)
        .y_desc("one-step defect")
        .x_labels(probes.min(16) + 1)
        .x_label_formatter(&integer)
        .y_label_formatter(&log_ticks(ylo, yhi))
        .draw()
        .map_err(e)?;
    for (i, t) in m.traces.iter().enumerate() {
        let color = series(i);
        let pts: Vec<(f64, f64)> =
            t.defect.iter().enumerate().filter_map(|(x, d)| Some((x as f64, (*d)?))).filter(|p| p.1 > 0.0).collect();
        c1.draw_series(LineSeries::new(pts.clone(), color.stroke_width(s.px(1.5))))
            .map_err(e)?
            .label(format!("seed {}", t.seed))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(2)));
        c1.draw_series(pts.iter().map(|&p| Circle::new(p, s.px(2.2), color.filled()))).map_err(e)?;
    }
    c1.draw_series(DashedLineSeries::new(
        vec![(x_range.start, m.tau), (x_range.end, m.tau)],
        s.px(6.0),
        s.px(4.0),
        INK.stroke_width(s.px(1.5)),
    ))
    .map_err(e)?
    .label(format!("tau = {}", tick(m.tau)))
    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], INK.stroke_width(2)));
    legend(&mut c1, s).map_err(e)?;

    let max_ck = m.traces.iter().flat_map(|t| t.checkpoints.iter().copied()).max().unwrap_or(1) as f64;
    let verdict = if r.mechanism_signature.confirmed {
        "mechanism confirmed".to_string()
    } else {
        format!("not confirmed: ({}) failed", m.failed.join("), ("))
    };
    let mut c2 = ChartBuilder::on(&bottom)
        .caption(format!("Checkpoints kept per probe ({verdict})"), s.font(12.5))
        .margin(s.px(10.0))
        .x_label_area_size(s.px(34.0))
        .y_label_area_size(s.px(70.0))
        .build_cartesian_2d(x_range, 0f64..(max_ck * 1.1).max(2.0))
        .map_err(e)?;
    mesh(&mut c2.configure_mesh(), s)
        .x_desc("probe (before epoch e; the last is after training)")
        .y_desc("checkpoints kept")
        .x_labels(probes.min(16) + 1)
        .x_label_formatter(&integer)
        .y_label_formatter(&integer)
        .draw()
        .map_err(e)?;
    let n = m.traces.len().max(1) as f64;
    for (i, t) in m.traces.iter().enumerate() {
        // Small horizontal offsets keep identical counts of different seeds visible.
        let off = (i as f64 - (n - 1.0) / 2.0) * 0.25 / n;
        let pts: Vec<(f64, f64)> = t.checkpoints.iter().enumerate().map(|(x, &c)| (x as f64 + off, c as f64)).collect();
        c2.draw_series(LineSeries::new(pts.clone(), series(i).stroke_width(s.px(1.2)))).map_err(e)?;
        c2.draw_series(pts.iter().map(|&p| Circle::new(p, s.px(2.2), series(i).filled()))).map_err(e)?;
    }
    Ok(())
}
