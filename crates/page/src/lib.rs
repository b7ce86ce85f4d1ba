//! The page's charts and verdict card, drawn from a `bench_report.json`.
//!
//! This crate is the page thread's module: it has no burn in it, so it is small and loads
//! before the engine's wasm. Every chart is a function over any plotters backend; the page
//! uses plotters-canvas (`web` module), the tests render SVG.

pub mod card;
pub mod format;
pub mod frontier;
pub mod layout;
pub mod live;
pub mod mechanism;
pub mod null;
pub mod per_seed;
pub mod scale_chart;
#[cfg(target_arch = "wasm32")]
pub mod scale_view;
#[cfg(target_arch = "wasm32")]
pub mod study;
pub mod study_chart;
pub mod style;
pub mod sweep;
#[cfg(target_arch = "wasm32")]
pub mod web;

use layout::Hover;
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend};
use rdbench_core::report::{Report, validate_json};
use serde::Serialize;
use style::Scale;

/// A report chart of the page: the name it is drawn by, and what its figure says about it.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ChartInfo {
    /// The name the page and the tests draw it by ("per_seed").
    pub name: &'static str,
    /// The id of its canvas on the page.
    pub canvas_id: &'static str,
    /// What the chart is, in words: the canvas's accessible name, and what its export
    /// buttons download.
    pub title: &'static str,
    /// Two stacked panels: the figure is drawn taller.
    pub tall: bool,
}

/// The report charts, in the order the page shows them; the page builds their figures from
/// this list (`chart_registry` in `web`).
pub const CHARTS: [ChartInfo; 5] = [
    ChartInfo { name: "per_seed", canvas_id: "chart-per-seed", title: "Per-seed comparison chart", tall: false },
    ChartInfo { name: "sweep", canvas_id: "chart-sweep", title: "Learning-rate sweep chart", tall: false },
    ChartInfo {
        name: "mechanism",
        canvas_id: "chart-mechanism",
        title: "Mechanism chart: defect and checkpoints per probe",
        tall: true,
    },
    ChartInfo { name: "null", canvas_id: "chart-null", title: "Permutation null distribution chart", tall: false },
    ChartInfo {
        name: "frontier",
        canvas_id: "chart-frontier",
        title: "Frontier chart: cell evaluations against states held, per gradient schedule",
        tall: true,
    },
];

/// Draw the report chart `name` of `r` on `area`; returns its hover points.
pub fn draw_chart<DB: DrawingBackend>(
    name: &str,
    area: &DrawingArea<DB, Shift>,
    r: &Report,
    s: Scale,
) -> Result<Vec<Hover>, String> {
    match name {
        "per_seed" => per_seed::draw(area, r, s),
        "sweep" => sweep::draw(area, r, s),
        "mechanism" => mechanism::draw(area, r, s),
        "null" => null::draw(area, r, s),
        "frontier" => frontier::draw(area, r, s),
        other => {
            let names: Vec<&str> = CHARTS.iter().map(|c| c.name).collect();
            Err(format!("no chart named {other:?} (charts: {})", names.join(", ")))
        }
    }
}

/// The line the page shows in place of the report chart `name` when `r` has nothing for it
/// to draw (no probe traces, no complete pair); `None` when the chart draws. The chart's own
/// drawing (the SVG export) says the same.
pub fn chart_note(name: &str, r: &Report) -> Option<String> {
    match name {
        "mechanism" => mechanism::note(r),
        "null" => null::note(r),
        _ => None,
    }
}

/// A loaded report and what the validator said about it.
#[derive(Debug)]
pub struct Loaded {
    /// The report.
    pub report: Report,
    /// Arithmetic problems that do not stop it from being drawn.
    pub problems: Vec<String>,
}

pub use rdbench_core::report::MAX_REPORT_BYTES;

/// Parse report text. Structural errors (not JSON, missing keys, wrong types) are fatal;
/// inconsistent numbers are returned as problems next to the report.
pub fn load(text: &str) -> Result<Loaded, String> {
    if text.len() > MAX_REPORT_BYTES {
        let size = |b: usize| format::bytes(b as f64);
        return Err(format!("the file is {}; a report is at most {}", size(text.len()), size(MAX_REPORT_BYTES)));
    }
    match validate_json(text) {
        Ok(report) => Ok(Loaded { report, problems: Vec::new() }),
        Err(problems) => {
            let structural = problems.iter().any(|p| p.kind.is_structural());
            if structural {
                let list: Vec<String> = problems.iter().take(5).map(|p| p.to_string()).collect();
                let more =
                    if problems.len() > 5 { format!(" (and {} more)", problems.len() - 5) } else { String::new() };
                return Err(format!("not a bench report: {}{more}", list.join("; ")));
            }
            let report = Report::from_json(text).map_err(|e| format!("not a bench report: {e}"))?;
            Ok(Loaded { report, problems: problems.iter().map(|p| p.to_string()).collect() })
        }
    }
}
