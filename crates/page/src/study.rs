//! wasm-bindgen API of the page's Study mode: the study's bench configs, the study report
//! from the bench reports, the check of a loaded one, and its charts on a canvas (the mechanism chart, and each
//! model's frontier side by side). Each calls the crate's
//! `rdbench_core::study`, the same functions as the CLI's `rdbench study`.

use crate::study_chart as chart;
use plotters::prelude::*;
use rdbench_core::config::BenchConfig;
use rdbench_core::study::{StudyReport, all_tracks, bench_configs};
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

fn err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// The configs of the study's benches (JSON array) for a base config (JSON): every track,
/// model and policy, all else as given; throws naming the first bench whose config is invalid.
#[wasm_bindgen]
pub fn study_configs(config_json: &str) -> Result<String, JsError> {
    let base: BenchConfig = serde_json::from_str(config_json).map_err(|e| err(format!("config: {e}")))?;
    base.validate().map_err(err)?;
    serde_json::to_string(&bench_configs(&base, &all_tracks()).map_err(err)?).map_err(err)
}

/// `study_report.json` (pretty JSON) from a JSON array of bench report texts; throws with
/// the reason when the reports do not make a study.
#[wasm_bindgen]
pub fn build_study(texts_json: &str) -> Result<String, JsError> {
    let texts: Vec<String> = serde_json::from_str(texts_json).map_err(|e| err(format!("report list: {e}")))?;
    rdbench_core::study::build_study(&texts).map(|s| s.to_json()).map_err(err)
}

/// Check `study_report.json` as `rdbench validate` does (every figure rebuilt from its
/// embedded bench reports); throws listing the problems.
#[wasm_bindgen]
pub fn check_study(text: &str) -> Result<(), JsError> {
    rdbench_core::study::validate_study_json(text).map(|_| ()).map_err(|p| crate::web::problems_error(&p))
}

/// Draw the study chart of `study_json` on `canvas` (`dpr`: device pixel ratio).
#[wasm_bindgen]
pub fn draw_study(canvas: HtmlCanvasElement, study_json: &str, dpr: f64, stacked: bool) -> Result<(), JsError> {
    let study: StudyReport = serde_json::from_str(study_json).map_err(|e| err(format!("study report: {e}")))?;
    let (backend, _) = crate::web::canvas_backend(canvas)?;
    chart::draw(&backend.into_drawing_area(), &study, dpr, stacked).map_err(err)
}

/// Draw each model's frontier of `study_json` on `canvas`, side by side (or stacked on a
/// narrow screen); returns the hover points (JSON).
#[wasm_bindgen]
pub fn draw_study_frontier(
    canvas: HtmlCanvasElement,
    study_json: &str,
    dpr: f64,
    stacked: bool,
) -> Result<String, JsError> {
    let study: StudyReport = serde_json::from_str(study_json).map_err(|e| err(format!("study report: {e}")))?;
    // Text measured by the canvas (`canvas_backend`): plotters' own measuring needs inline styles.
    let (backend, _) = crate::web::canvas_backend(canvas)?;
    let area = backend.into_drawing_area();
    let points =
        crate::frontier::draw_frontiers(&area, &study.frontier, stacked, crate::style::Scale(dpr)).map_err(err)?;
    serde_json::to_string(&points).map_err(err)
}
