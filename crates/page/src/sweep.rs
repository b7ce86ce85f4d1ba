//! Chart 2: the lr sweep: mean validation metric (MSE, accuracy) against lr (log axes) for
//! both arms, each arm's best lr ringed, and every sweep seed's own metric with its min–max
//! bar (from the report's runs, when it has them).

use crate::format::{exact, tick};
use crate::layout::{Hover, Item, Key, err, header, hover, log_log};
use crate::style::{BASELINE, IDEA, MUTED, Scale, range};
use plotters::coord::Shift;
use plotters::prelude::*;
use rdbench_core::records::{Arm, Phase};
use rdbench_core::report::Report;

/// Each arm's sweep-seed metrics per lr, from the report's runs (empty for seed-era reports).
fn seed_points(r: &Report, arm: Arm) -> Vec<(f64, u64, f64)> {
    r.runs
        .iter()
        .flatten()
        .filter(|run| run.arm == arm && run.phase == Phase::Sweep)
        .filter_map(|run| Some((run.lr, run.seed, run.metric?)))
        .collect()
}

/// Draw on `area`; returns the hover points.
pub fn draw<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &Report, s: Scale) -> Result<Vec<Hover>, String> {
    let e = err("sweep chart");
    area.fill(&WHITE).map_err(&e)?;
    let base: Vec<(f64, f64)> = r.baseline.sweep.iter().filter_map(|e| Some((e.cfg.lr, e.mean?))).collect();
    let mut idea: Vec<(f64, f64)> =
        r.idea_sweep.iter().filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, v.mean?))).collect();
    idea.sort_by(|a, b| a.0.total_cmp(&b.0));
    let seeds = [seed_points(r, Arm::Baseline), seed_points(r, Arm::Idea)];
    let mut lrs: Vec<f64> = r.baseline.sweep.iter().map(|e| e.cfg.lr).chain(idea.iter().map(|p| p.0)).collect();
    lrs.sort_by(f64::total_cmp);
    lrs.dedup();
    let (xlo, xhi) = range(lrs.iter().copied(), true);
    let all_y = base.iter().chain(&idea).map(|p| p.1).chain(seeds.iter().flatten().map(|p| p.2));
    let (ylo, yhi) = range(all_y, true);
    let n_seeds = seeds.iter().map(|v| v.len()).max().unwrap_or(0);

    let mut items = vec![
        Item::new(
            Key::Line(BASELINE.to_rgba(), 2.0, false),
            format!("baseline (best lr {})", tick(r.baseline.best_cfg.lr)),
        ),
        Item::new(Key::Line(IDEA.to_rgba(), 2.0, false), format!("idea (best lr {})", tick(r.idea.best_cfg.lr))),
        Item::new(Key::Ring(MUTED.to_rgba()), "best lr"),
    ];
    if n_seeds > 0 {
        items.push(Item::new(Key::Line(MUTED.mix(0.9), 1.0, false), "each sweep seed, min–max bar"));
    }
    // Arms whose sweep means are the same (an exact reversal trains the idea bit for bit as the
    // baseline) would draw one line over the other: the idea's is dashed over the baseline's.
    let coincide = !base.is_empty()
        && base.len() == idea.len()
        && base.iter().zip(&idea).all(|(b, x)| b.0 == x.0 && (b.1 - x.1).abs() <= 1e-12 * b.1.abs().max(1e-300));
    if coincide {
        items.push(Item::new(Key::Note, "the arms' means coincide at every lr: idea dashed over baseline"));
    }
    let metric = format!("validation {}", r.metric_name());
    let rest = header(area, &format!("lr sweep: mean {metric}"), &items, s)?;
    // Both axes are labelled by place_labels: every grid lr, then 1-2-5 values, none touching.
    let desc = ("learning rate", metric.as_str());
    let mut chart = log_log(area, &rest, ((xlo, xhi), (ylo, yhi)), desc, (&lrs, &[]), s)?;

    let mut points = Vec::new();
    // The arms' seed points sit a little left (baseline) and right (idea) of their lr.
    let offsets = [0.97, 1.03];
    for (k, (name, pts, color, best)) in
        [("baseline", &base, BASELINE, r.baseline.best_cfg.lr), ("idea", &idea, IDEA, r.idea.best_cfg.lr)]
            .into_iter()
            .enumerate()
    {
        for &lr in &lrs {
            let here: Vec<f64> = seeds[k].iter().filter(|p| p.0 == lr).map(|p| p.2).collect();
            if here.is_empty() {
                continue;
            }
            let x = lr * offsets[k];
            let (mn, mx) = here.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, &v| (a.0.min(v), a.1.max(v)));
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, mn), (x, mx)],
                    color.mix(0.6).stroke_width(s.px(1.2)),
                )))
                .map_err(&e)?;
            chart
                .draw_series(here.iter().map(|&v| Circle::new((x, v), s.px(2.2), color.mix(0.8).stroke_width(1))))
                .map_err(&e)?;
            for p in seeds[k].iter().filter(|p| p.0 == lr) {
                points.push(hover(
                    &chart,
                    (x, p.2),
                    format!("{name} lr {} sweep seed {}: {}", tick(lr), p.1, exact(p.2)),
                ));
            }
        }
        let line = color.stroke_width(s.px(2.0));
        if coincide && k == 1 {
            chart.draw_series(DashedLineSeries::new(pts.iter().copied(), s.px(6.0), s.px(6.0), line)).map_err(&e)?;
            // A ring, so the baseline's dot shows inside it.
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, s.px(4.5), color.stroke_width(s.px(2.0)))))
                .map_err(&e)?;
        } else {
            chart.draw_series(LineSeries::new(pts.iter().copied(), line)).map_err(&e)?;
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, s.px(3.5), color.filled()))).map_err(&e)?;
        }
        if let Some(&p) = pts.iter().find(|p| p.0 == best) {
            chart.draw_series(std::iter::once(Circle::new(p, s.px(8.0), color.stroke_width(s.px(2.0))))).map_err(&e)?;
        }
        for &(lr, m) in pts.iter() {
            let best = if lr == best { " (best)" } else { "" };
            points.push(hover(&chart, (lr, m), format!("{name} lr {}: mean {}{best}", tick(lr), exact(m))));
        }
    }
    Ok(points)
}
