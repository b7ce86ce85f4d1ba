//! wasm-bindgen API of the page's Scale view: the benches of a scale study, the scale report
//! built from their reports (or a loaded `scale_report.json` validated), and its charts on a
//! canvas. Each calls `rdbench_core::scale`, the same functions as `rdbench scale`.

use crate::scale_chart;
use rdbench_core::config::BenchConfig;
use rdbench_core::scale::validate_scale_json;
use rdbench_core::scale::{ScaleReport, bench_grid, scale_bench_name};
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

fn err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// The comma-separated values of a field, each once (a repeat is named with `field`).
fn list<'a>(text: &'a str, field: &str) -> Result<Vec<&'a str>, String> {
    let values: Vec<&str> = text.split(',').map(str::trim).filter(|v| !v.is_empty()).collect();
    if values.is_empty() {
        return Err(format!("{field}: give at least one value"));
    }
    if let Some(v) = values.iter().enumerate().find_map(|(i, v)| values[..i].contains(v).then_some(v)) {
        return Err(format!("{field}: {v} is given twice"));
    }
    Ok(values)
}

/// The configs of a scale study's benches (JSON array) for a base config (JSON), on the
/// comma-separated `tracks`, `lens` and `models`; throws naming the field or the first bench
/// whose config is invalid.
#[wasm_bindgen]
pub fn scale_configs(config_json: &str, tracks: &str, lens: &str, models: &str) -> Result<String, JsError> {
    let base: BenchConfig = serde_json::from_str(config_json).map_err(|e| err(format!("config: {e}")))?;
    let (tracks, models) = (list(tracks, "tracks").map_err(err)?, list(models, "models").map_err(err)?);
    let lens = list(lens, "lengths").map_err(err)?;
    let cfgs = bench_grid(&tracks, &lens, &models, "lengths", |track, len, model| {
        let seq_len = len.parse().map_err(|_| format!("lengths: {len:?} is not a whole number"))?;
        let c = BenchConfig { track: track.into(), model: model.into(), seq_len, ..base.clone() };
        c.validate().map_err(|e| format!("the scale study's bench {}: {e}", scale_bench_name(&c)))?;
        Ok(c)
    })
    .map_err(err)?;
    serde_json::to_string(&cfgs).map_err(err)
}

/// `scale_report.json` (pretty JSON) from a JSON array of bench report texts; throws with the
/// reason when the reports do not make a scale study.
#[wasm_bindgen]
pub fn build_scale(texts_json: &str) -> Result<String, JsError> {
    let texts: Vec<String> = serde_json::from_str(texts_json).map_err(|e| err(format!("report list: {e}")))?;
    rdbench_core::scale::build_scale(&texts).map(|s| s.to_json()).map_err(err)
}

/// A loaded `scale_report.json` checked as `rdbench validate` checks it (every figure rebuilt
/// from its embedded bench reports); throws listing the problems.
#[wasm_bindgen]
pub fn check_scale(text: &str) -> Result<(), JsError> {
    validate_scale_json(text).map(|_| ()).map_err(|p| crate::web::problems_error(&p))
}

/// Panel rows of the scale charts (side by side, or `stacked` on a phone): the page sizes
/// its canvas by them.
#[wasm_bindgen]
pub fn scale_panel_rows(scale_json: &str, stacked: bool) -> Result<usize, JsError> {
    let scale: ScaleReport = serde_json::from_str(scale_json).map_err(|e| err(format!("scale report: {e}")))?;
    Ok(scale_chart::panel_rows(&scale, stacked))
}

/// Draw the charts of `scale_json` against T on `canvas` (`dpr`: device pixel ratio), a column
/// per model or `stacked`; returns what was drawn (labels and hover points), as the report
/// charts do.
#[wasm_bindgen]
pub fn draw_scale(canvas: HtmlCanvasElement, scale_json: &str, dpr: f64, stacked: bool) -> Result<String, JsError> {
    let scale: ScaleReport = serde_json::from_str(scale_json).map_err(|e| err(format!("scale report: {e}")))?;
    crate::web::on_canvas(canvas, |a| scale_chart::draw(a, &scale, crate::style::Scale(dpr), stacked))
}
