//! The study's chart: gradient cosine of the checkpointed pass against the one-step reversal
//! defect, for every idea full-run probe of every bench, at the chosen k (left) and at k_max
//! (right). Log defect axis, colour by model, marker by policy, tau as a dashed vertical line
//! and the 0.99 cosine of conditions (c) and (d) as a dotted horizontal one. The legend is a
//! row above the panels (it covers no point), its text measured by the backend (plotters' own
//! legend measures through the page's DOM, which the page's CSP forbids).
//!
//! Generic over any plotters backend: the CLI renders SVG, the page's charts crate a canvas.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use rdbench_core::mechanism::COSINE_OK;
use rdbench_core::records::{Arm, Phase};
use rdbench_core::study::StudyReport;

/// Reference lines.
const INK: RGBColor = RGBColor(40, 40, 48);
/// One colour per model, in the study's model order.
const MODEL_COLOURS: [RGBColor; 4] =
    [RGBColor(31, 119, 180), RGBColor(214, 39, 40), RGBColor(44, 160, 44), RGBColor(148, 103, 189)];

/// One plotted probe.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Index of the model in `StudyReport::models`.
    pub model: usize,
    /// Index of the policy in `StudyReport::policies`.
    pub policy: usize,
    /// One-step defect (finite, > 0).
    pub defect: f64,
    /// Cosine at the chosen k.
    pub cos_chosen: Option<f64>,
    /// Cosine at k_max.
    pub cos_kmax: Option<f64>,
}

/// The probes the chart shows, and how many it cannot (a defect that is null or exactly 0
/// has no place on a log axis).
pub fn points(study: &StudyReport) -> Result<(Vec<Point>, usize), String> {
    let reports = study.bench_reports()?;
    let (mut pts, mut hidden) = (Vec::new(), 0);
    for r in &reports {
        let cfg = r.config.as_ref().ok_or("an embedded report has no config")?;
        let model = study.models.iter().position(|m| *m == cfg.model).unwrap_or(0);
        let policy = study.policies.iter().position(|p| p == cfg.policy.as_str()).unwrap_or(0);
        let runs = r.runs.as_deref().unwrap_or_default();
        for p in runs.iter().filter(|r| r.arm == Arm::Idea && r.phase == Phase::Full).flat_map(|r| &r.probes) {
            match p.defect_mean {
                Some(d) if d > 0.0 && d.is_finite() => pts.push(Point {
                    model,
                    policy,
                    defect: d,
                    cos_chosen: p.grad_cos_chosen,
                    cos_kmax: p.grad_cos_kmax,
                }),
                _ => hidden += 1,
            }
        }
    }
    Ok((pts, hidden))
}

fn log_label(v: &f64) -> String {
    let e = v.log10().round() as i32;
    if (v.log10() - e as f64).abs() < 1e-6 { format!("1e{e}") } else { String::new() }
}

/// A policy's marker shape as pixel offsets around its centre: a disc (octagon) for the
/// first policy, a triangle for the second, a diamond for any other.
fn marker_shape(policy: usize, r: i32) -> Vec<(i32, i32)> {
    match policy {
        0 => (0..8)
            .map(|i| {
                let a = std::f64::consts::PI / 4.0 * i as f64;
                ((r as f64 * a.cos()).round() as i32, (r as f64 * a.sin()).round() as i32)
            })
            .collect(),
        1 => vec![(0, -r - 1), (r + 1, r), (-r - 1, r)],
        _ => vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)],
    }
}

/// A legend entry's key.
enum Key {
    /// A line of a colour and width.
    Line(RGBColor, u32),
    /// A filled box of a model's colour.
    Swatch(RGBColor),
    /// A policy's marker.
    Marker(usize),
}

/// The legend, left to right on `area` (wrapping to a next row where it must).
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    items: &[(Key, String)],
    scale: f64,
    draw: bool,
) -> Result<i32, String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("study chart legend: {e:?}");
    let px = |v: f64| (v * scale).round() as i32;
    let style = TextStyle::from(("sans-serif", 11.0 * scale).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let width = area.dim_in_pixel().0 as i32;
    let (mut x, mut y, mut rows) = (px(10.0), px(9.0), 1);
    for (key, label) in items {
        let (tw, _) = area.estimate_text_size(label, &style).map_err(e)?;
        let w = px(18.0) + tw as i32 + px(16.0);
        if x > px(10.0) && x + w > width {
            (x, y, rows) = (px(10.0), y + px(18.0), rows + 1);
        }
        if draw {
            match key {
                Key::Line(c, w) => area.draw(&PathElement::new(vec![(x, y), (x + px(14.0), y)], c.stroke_width(*w))),
                Key::Swatch(c) => {
                    area.draw(&Rectangle::new([(x + px(2.0), y - px(4.0)), (x + px(12.0), y + px(4.0))], c.filled()))
                }
                Key::Marker(p) => area.draw(
                    &(EmptyElement::at((x + px(7.0), y)) + Polygon::new(marker_shape(*p, px(4.0)), INK.filled())),
                ),
            }
            .map_err(e)?;
            area.draw(&Text::new(label.clone(), (x + px(18.0), y), style.clone())).map_err(e)?;
        }
        x += w;
    }
    Ok(rows)
}

/// `text` broken at spaces into lines no wider than `width` pixels in `font`.
fn wrap<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str, font: &FontDesc, width: i32) -> Vec<String> {
    let style = TextStyle::from(font.clone());
    let fits = |t: &str| area.estimate_text_size(t, &style).map_or(true, |(w, _)| w as i32 <= width);
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if fits(&format!("{line} {word}")) => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Draw the chart on `area` (`scale` multiplies sizes: the page's device pixel ratio); on a
/// narrow screen (`stacked`) the two panels sit one above the other, and the title and the
/// legend wrap to the width either way.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    study: &StudyReport,
    scale: f64,
    stacked: bool,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("study chart: {e:?}");
    let px = |v: f64| (v * scale).round().max(1.0) as u32;
    let font = |size: f64| ("sans-serif", size * scale).into_font();
    area.fill(&WHITE).map_err(e)?;
    let (pts, hidden) = points(study)?;
    let defects = pts.iter().map(|p| p.defect).chain([study.tau]);
    let lo = defects.clone().fold(f64::INFINITY, f64::min) / 3.0;
    let hi = defects.fold(0.0f64, f64::max) * 3.0;
    let cosines = pts.iter().flat_map(|p| [p.cos_chosen, p.cos_kmax]).flatten().filter(|c| c.is_finite());
    let ylo = cosines.fold(COSINE_OK, f64::min);
    let ylo = (ylo - 0.05 * (1.0 - ylo).max(0.02)).max(-1.05);

    let grey = RGBColor(150, 150, 160);
    let items: Vec<(Key, String)> = [
        (Key::Line(INK, px(2.0)), format!("tau = {}", study.tau)),
        (Key::Line(grey, px(1.0)), format!("cosine {COSINE_OK}")),
    ]
    .into_iter()
    .chain(
        study.models.iter().enumerate().map(|(i, m)| (Key::Swatch(MODEL_COLOURS[i % MODEL_COLOURS.len()]), m.clone())),
    )
    .chain(study.policies.iter().enumerate().map(|(i, p)| (Key::Marker(i), p.clone())))
    .collect();
    let note =
        if hidden > 0 { format!(" ({hidden} probes with a null or zero defect not shown)") } else { String::new() };
    let width = area.dim_in_pixel().0 as i32;
    let lines = wrap(
        area,
        &format!("Gradient cosine vs reversal defect, idea full-run probes{note}"),
        &font(15.0),
        width - 2 * px(10.0) as i32,
    );
    let (title, body) = area.split_vertically(px(10.0) + px(19.0) * lines.len() as u32);
    let rows = legend(&body, &items, scale, false)?;
    let (key_row, body) = body.split_vertically(px(4.0) + px(18.0) * rows as u32);
    legend(&key_row, &items, scale, true)?;
    for (i, line) in lines.iter().enumerate() {
        title
            .draw(&Text::new(line.clone(), (px(10.0) as i32, (px(8.0) + px(19.0) * i as u32) as i32), font(15.0)))
            .map_err(e)?;
    }
    let panels = body.split_evenly(if stacked { (2, 1) } else { (1, 2) });
    for (panel, (label, kmax)) in panels.iter().zip([("at the chosen k", false), ("at k_max", true)]) {
        let mut chart = ChartBuilder::on(panel)
            .caption(format!("cosine {label} vs dense BPTT"), font(13.0))
            .margin(px(10.0))
            .x_label_area_size(px(36.0))
            .y_label_area_size(px(52.0))
            .build_cartesian_2d((lo..hi).log_scale(), ylo..1.01f64)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("one-step reversal defect (log)")
            .y_desc("gradient cosine")
            .x_label_formatter(&log_label)
            // The page's one tick format: never "-0.0" at zero.
            .y_label_formatter(&crate::format::linear_ticks(ylo, 1.01))
            .label_style(font(11.0))
            .axis_desc_style(font(12.0))
            .light_line_style(RGBColor(235, 235, 240))
            .draw()
            .map_err(e)?;
        let tau = study.tau;
        chart
            .draw_series(DashedLineSeries::new(
                vec![(tau, ylo), (tau, 1.01)],
                px(6.0),
                px(4.0),
                INK.stroke_width(px(1.5)),
            ))
            .map_err(e)?;
        chart
            .draw_series(DashedLineSeries::new(
                vec![(lo, COSINE_OK), (hi, COSINE_OK)],
                px(2.0),
                px(3.0),
                grey.stroke_width(px(1.0)),
            ))
            .map_err(e)?;
        let size = px(3.5) as i32;
        for p in &pts {
            let cos = if kmax { p.cos_kmax } else { p.cos_chosen };
            if let Some(c) = cos.filter(|c| c.is_finite()) {
                let colour = MODEL_COLOURS[p.model % MODEL_COLOURS.len()];
                let mark =
                    EmptyElement::at((p.defect, c)) + Polygon::new(marker_shape(p.policy, size), colour.mix(0.8));
                chart.plotting_area().draw(&mark).map_err(e)?;
            }
        }
    }
    Ok(())
}
