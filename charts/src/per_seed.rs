//! Chart 1: per-seed paired comparison (a slope chart). Each seed is a line from its
//! baseline MSE to its idea MSE, green when the idea is lower, red when it is higher.

use crate::style::{BASELINE, IDEA, INK, LOSS, MUTED, Scale, WIN, legend, linear_ticks, mesh, range, tick};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench::report::Report;

/// Draw on `area`.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &Report, s: Scale) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("per-seed chart: {e:?}");
    area.fill(&WHITE).map_err(e)?;
    let base = &r.baseline.full.per_seed;
    let idea = &r.idea.per_seed;
    let pairs: Vec<(usize, f64, f64)> =
        base.iter().zip(idea).enumerate().filter_map(|(i, (b, x))| Some((i, (*b)?, (*x)?))).collect();
    let wins = pairs.iter().filter(|p| p.2 < p.1).count();
    let (lo, hi) = range(pairs.iter().flat_map(|&(_, b, x)| [b, x]), false);
    let lo = lo.max(0.0);
    let mut chart = ChartBuilder::on(area)
        .caption(format!("Per-seed test MSE, paired: idea wins {wins}/{}", pairs.len()), s.bold(15.0))
        .margin(s.px(10.0))
        .x_label_area_size(s.px(30.0))
        .y_label_area_size(s.px(70.0))
        .build_cartesian_2d(-0.6f64..1.6f64, lo..hi)
        .map_err(e)?;
    mesh(&mut chart.configure_mesh(), s)
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
        .y_label_formatter(&linear_ticks(lo, hi))
        .y_desc("test MSE (lower is better)")
        .draw()
        .map_err(e)?;

    for (label, color, better) in [("idea better", WIN, true), ("baseline better", LOSS, false)] {
        let chosen: Vec<&(usize, f64, f64)> = pairs.iter().filter(|p| (p.2 < p.1) == better).collect();
        let n = chosen.len();
        let series = chart
            .draw_series(
                chosen
                    .iter()
                    .map(|&&(_, b, x)| PathElement::new(vec![(0.0, b), (1.0, x)], color.stroke_width(s.px(1.6)))),
            )
            .map_err(e)?;
        if n > 0 {
            series
                .label(format!("{label} ({n})"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        }
    }
    let dot = s.px(3.5);
    chart
        .draw_series(pairs.iter().flat_map(|&(_, b, x)| {
            [Circle::new((0.0, b), dot, BASELINE.filled()), Circle::new((1.0, x), dot, IDEA.filled())]
        }))
        .map_err(e)?;
    // Seed numbers beside the baseline points.
    chart
        .draw_series(
            pairs
                .iter()
                .map(|&(i, b, _)| Text::new(format!("{i}"), (-0.13, b), s.font(10.0).color(&MUTED).pos(text_right()))),
        )
        .map_err(e)?;
    // Means: a bar across each column.
    for (x, m, color) in [(0.0, r.baseline.full.mean, BASELINE), (1.0, r.idea.mean, IDEA)] {
        let Some(m) = m else { continue };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x - 0.22, m), (x + 0.22, m)],
                INK.stroke_width(s.px(3.0)),
            )))
            .map_err(e)?;
        let anchor = if x < 0.5 { (x - 0.25, m) } else { (x + 0.25, m) };
        let pos = if x < 0.5 { text_right() } else { text_left() };
        chart
            .draw_series(std::iter::once(Text::new(
                format!("mean {}", tick(m)),
                anchor,
                s.font(11.0).color(&color).pos(pos),
            )))
            .map_err(e)?;
    }
    chart
        .draw_series(std::iter::once(PathElement::new(vec![(-0.55, hi), (-0.55, hi)], INK.stroke_width(s.px(3.0)))))
        .map_err(e)?
        .label("mean")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], INK.stroke_width(4)));
    legend(&mut chart, s).map_err(e)?;
    let missing = base.len() - pairs.len();
    if missing > 0 {
        let note = format!("{missing} pair(s) without both metrics (a run diverged)");
        let (_, h) = area.dim_in_pixel();
        area.draw(&Text::new(note, (s.i(80.0), h as i32 - s.i(14.0)), s.font(11.0).color(&LOSS))).map_err(e)?;
    }
    Ok(())
}

/// Text anchored at its right edge, vertically centred.
pub fn text_right() -> plotters::style::text_anchor::Pos {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    Pos::new(HPos::Right, VPos::Center)
}

/// Text anchored at its left edge, vertically centred.
pub fn text_left() -> plotters::style::text_anchor::Pos {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    Pos::new(HPos::Left, VPos::Center)
}
