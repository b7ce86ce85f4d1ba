//! Chart 2: the lr sweep: mean validation MSE against lr (log axes) for both arms, each
//! arm's best lr ringed.

use crate::style::{BASELINE, IDEA, Scale, legend, log_tick, log_ticks, mesh, range, tick};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench::report::Report;

/// Draw on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &Report, s: Scale) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("sweep chart: {e:?}");
    area.fill(&WHITE).map_err(e)?;
    let base: Vec<(f64, f64)> = r.baseline.sweep.iter().filter_map(|e| Some((e.cfg.lr, e.mean?))).collect();
    let mut idea: Vec<(f64, f64)> =
        r.idea_sweep.iter().filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.mean?))).collect();
    idea.sort_by(|a, b| a.0.total_cmp(&b.0));
    let lrs: Vec<f64> = r.baseline.sweep.iter().map(|e| e.cfg.lr).chain(idea.iter().map(|p| p.0)).collect();
    let (xlo, xhi) = range(lrs.iter().copied(), true);
    // Label the grid's own lrs as well as the 1-2-5 ticks.
    let x_label = |x: &f64| {
        if lrs.iter().any(|lr| (lr - x).abs() <= 1e-9 * lr) { tick(*x) } else { log_tick(*x) }
    };
    let (ylo, yhi) = range(base.iter().chain(&idea).map(|p| p.1), true);
    let mut chart = ChartBuilder::on(area)
        .caption("lr sweep: mean validation MSE", s.bold(15.0))
        .margin(s.px(10.0))
        .x_label_area_size(s.px(40.0))
        .y_label_area_size(s.px(70.0))
        .build_cartesian_2d((xlo..xhi).log_scale(), (ylo..yhi).log_scale())
        .map_err(e)?;
    mesh(&mut chart.configure_mesh(), s)
        .x_desc("learning rate")
        .y_desc("validation MSE")
        .x_label_formatter(&x_label)
        .y_label_formatter(&log_ticks(ylo, yhi))
        .draw()
        .map_err(e)?;
    for (name, pts, color, best) in
        [("baseline", &base, BASELINE, r.baseline.best_cfg.lr), ("idea", &idea, IDEA, r.idea.best_cfg.lr)]
    {
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(s.px(2.0))))
            .map_err(e)?
            .label(format!("{name} (best lr {})", tick(best)))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, s.px(3.5), color.filled()))).map_err(e)?;
        if let Some(&p) = pts.iter().find(|p| p.0 == best) {
            chart.draw_series(std::iter::once(Circle::new(p, s.px(8.0), color.stroke_width(s.px(2.0))))).map_err(e)?;
        }
    }
    legend(&mut chart, s).map_err(e)?;
    Ok(())
}
