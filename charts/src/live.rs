//! The live loss chart: minibatch loss of every run in flight, drawn while the bench runs.

use crate::style::{INK, Scale, integer, legend, log_ticks, mesh, range, series};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Deserialize;

/// One run's loss trace.
#[derive(Debug, Deserialize)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// (step, loss) points.
    pub points: Vec<(f64, f64)>,
}

/// Draw `runs` (at most the first 12 get legend entries) with a caption.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    runs: &[Series],
    s: Scale,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("loss chart: {e:?}");
    area.fill(&WHITE).map_err(e)?;
    if runs.iter().all(|r| r.points.is_empty()) {
        area.draw(&Text::new(caption.to_string(), (s.i(12.0), s.i(10.0)), s.bold(14.0))).map_err(e)?;
        let msg = "No run in flight: the loss of every run appears here while the bench trains.";
        area.draw(&Text::new(msg, (s.i(12.0), s.i(40.0)), s.font(12.0).color(&INK))).map_err(e)?;
        return Ok(());
    }
    let xmax = runs.iter().flat_map(|r| r.points.iter().map(|p| p.0)).fold(1.0, f64::max);
    let (ylo, yhi) = range(runs.iter().flat_map(|r| r.points.iter().map(|p| p.1)), true);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, s.bold(14.0))
        .margin(s.px(8.0))
        .x_label_area_size(s.px(34.0))
        .y_label_area_size(s.px(64.0))
        .build_cartesian_2d(0f64..xmax, (ylo..yhi).log_scale())
        .map_err(e)?;
    mesh(&mut chart.configure_mesh(), s)
        .x_desc("training step")
        .y_desc("minibatch loss")
        .x_label_formatter(&integer)
        .y_label_formatter(&log_ticks(ylo, yhi))
        .draw()
        .map_err(e)?;
    for (i, run) in runs.iter().enumerate() {
        let color = series(i);
        let pts = run.points.iter().copied().filter(|p| p.1.is_finite() && p.1 > 0.0);
        let drawn = chart.draw_series(LineSeries::new(pts, color.stroke_width(s.px(1.3)))).map_err(e)?;
        if i < 12 {
            drawn
                .label(run.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(2)));
        }
    }
    if !runs.is_empty() {
        legend(&mut chart, s).map_err(e)?;
    }
    Ok(())
}
