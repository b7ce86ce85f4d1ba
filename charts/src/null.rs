//! Chart 4: the sign-flip null distribution of the mean paired difference, with the
//! observed value (and its mirror) marked; the bins as extreme as it are shaded.

use crate::style::{INK, LOSS, MUTED, Scale, legend, linear_ticks, mesh, tick};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench::report::Report;
use rdbench::stats::permutation::null_distribution;

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

/// Draw on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &Report, s: Scale) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("null chart: {e:?}");
    area.fill(&WHITE).map_err(e)?;
    let diffs: Vec<f64> = r.comparison.per_seed_diffs.iter().flatten().copied().collect();
    if diffs.is_empty() {
        area.draw(&Text::new("No complete pairs: no null distribution.", (s.i(12.0), s.i(20.0)), s.font(13.0)))
            .map_err(e)?;
        return Ok(());
    }
    let obs = diffs.iter().sum::<f64>() / diffs.len() as f64;
    let (null, exact) = null_of(&diffs);
    let span = null.iter().fold(obs.abs(), |a, v| a.max(v.abs())).max(1e-12) * 1.05;
    let bins = 41usize;
    let width = 2.0 * span / bins as f64;
    let mut counts = vec![0usize; bins];
    for v in &null {
        counts[(((v + span) / width) as usize).min(bins - 1)] += 1;
    }
    let total = null.len() as f64;
    let ymax = counts.iter().copied().max().unwrap_or(1) as f64 / total * 1.15;
    let caption =
        format!("Sign-flip null of the mean diff ({}, {} values)", if exact { "exact" } else { "sampled" }, null.len());
    let mut chart = ChartBuilder::on(area)
        .caption(caption, s.bold(15.0))
        .margin(s.px(10.0))
        .x_label_area_size(s.px(40.0))
        .y_label_area_size(s.px(60.0))
        .build_cartesian_2d(-span..span, 0f64..ymax)
        .map_err(e)?;
    mesh(&mut chart.configure_mesh(), s)
        .x_desc("mean(idea - baseline) under random sign flips")
        .y_desc("share")
        .x_labels(7)
        .x_label_formatter(&linear_ticks(-span, span))
        .y_label_formatter(&|y| format!("{y:.2}"))
        .draw()
        .map_err(e)?;
    let threshold = obs.abs() * (1.0 - 1e-12);
    chart
        .draw_series(counts.iter().enumerate().map(|(i, &c)| {
            let x0 = -span + i as f64 * width;
            let mid = x0 + width / 2.0;
            let color = if mid.abs() >= threshold { LOSS.mix(0.55) } else { MUTED.mix(0.6) };
            Rectangle::new([(x0, 0.0), (x0 + width * 0.92, c as f64 / total)], color.filled())
        }))
        .map_err(e)?;
    chart
        .draw_series(std::iter::once(PathElement::new(vec![(obs, 0.0), (obs, ymax)], INK.stroke_width(s.px(2.0)))))
        .map_err(e)?
        .label(format!("observed {}", tick(obs)))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], INK.stroke_width(2)));
    chart
        .draw_series(DashedLineSeries::new(
            vec![(-obs, 0.0), (-obs, ymax)],
            s.px(5.0),
            s.px(4.0),
            INK.stroke_width(s.px(1.0)),
        ))
        .map_err(e)?
        .label("mirror (two-sided)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], INK.stroke_width(1)));
    let p = r.comparison.p_value.map_or("n/a".into(), |p| format!("{p:.4}"));
    chart
        .draw_series(std::iter::once(Rectangle::new([(-span, 0.0), (-span, 0.0)], LOSS.mix(0.55).filled())))
        .map_err(e)?
        .label(format!("as extreme (p = {p})"))
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], LOSS.mix(0.55).filled()));
    legend(&mut chart, s).map_err(e)?;
    Ok(())
}
