//! wasm-bindgen API for the page thread: load a report, get its card, draw its charts on
//! canvases (plotters-canvas), and draw the live loss chart.

use crate::style::Scale;
use crate::{card, live, load, mechanism, null, per_seed, sweep};
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

fn area(canvas: HtmlCanvasElement) -> Result<DrawingArea<CanvasBackend, plotters::coord::Shift>, JsError> {
    let backend = CanvasBackend::with_canvas_object(canvas).ok_or_else(|| JsError::new("canvas has no 2d context"))?;
    Ok(backend.into_drawing_area())
}

fn js(r: Result<(), String>) -> Result<(), JsError> {
    r.map_err(|e| JsError::new(&e))
}

/// A loaded report.
#[wasm_bindgen]
pub struct View {
    loaded: crate::Loaded,
}

#[wasm_bindgen]
impl View {
    /// Parse report text; throws with a message naming what is wrong.
    #[wasm_bindgen(constructor)]
    pub fn new(text: &str) -> Result<View, JsError> {
        load(text).map(|loaded| View { loaded }).map_err(|e| JsError::new(&e))
    }

    /// Inconsistencies the validator found (the report is still drawn).
    pub fn problems(&self) -> Vec<String> {
        self.loaded.problems.clone()
    }

    /// The verdict card as JSON.
    pub fn card_json(&self) -> String {
        serde_json::to_string(&card::card(&self.loaded.report)).expect("card serialises")
    }

    /// Chart 1.
    pub fn draw_per_seed(&self, canvas: HtmlCanvasElement, dpr: f64) -> Result<(), JsError> {
        js(per_seed::draw(&area(canvas)?, &self.loaded.report, Scale(dpr)))
    }

    /// Chart 2.
    pub fn draw_sweep(&self, canvas: HtmlCanvasElement, dpr: f64) -> Result<(), JsError> {
        js(sweep::draw(&area(canvas)?, &self.loaded.report, Scale(dpr)))
    }

    /// Chart 3.
    pub fn draw_mechanism(&self, canvas: HtmlCanvasElement, dpr: f64) -> Result<(), JsError> {
        js(mechanism::draw(&area(canvas)?, &self.loaded.report, Scale(dpr)))
    }

    /// Chart 4.
    pub fn draw_null(&self, canvas: HtmlCanvasElement, dpr: f64) -> Result<(), JsError> {
        js(null::draw(&area(canvas)?, &self.loaded.report, Scale(dpr)))
    }
}

/// Draw the live loss chart from `series_json` (`[{label, points: [[step, loss], ..]}, ..]`).
#[wasm_bindgen]
pub fn draw_losses(canvas: HtmlCanvasElement, caption: &str, series_json: &str, dpr: f64) -> Result<(), JsError> {
    let runs: Vec<live::Series> = serde_json::from_str(series_json).map_err(|e| JsError::new(&e.to_string()))?;
    js(live::draw(&area(canvas)?, caption, &runs, Scale(dpr)))
}

/// The smallest two-sided sign-flip p that `n_pairs` pairs can give (see `card::min_reachable_p`).
#[wasm_bindgen]
pub fn min_reachable_p(n_pairs: usize) -> f64 {
    card::min_reachable_p(n_pairs)
}

/// The fewest pairs that can reach p < `alpha` (undefined when alpha is not in (0, 1)).
#[wasm_bindgen]
pub fn pairs_needed(alpha: f64) -> Option<usize> {
    card::pairs_needed(alpha)
}

/// The configuration schema (knobs, presets, defaults) as JSON: the page builds its controls
/// from it, so it keeps no defaults or limits of its own.
#[wasm_bindgen]
pub fn config_schema() -> String {
    rdbench::config::schema().to_string()
}

/// Parse the page's control texts (`{key: text}` JSON) into `{config, errors, texts}` JSON:
/// the config to run (null unless every field is valid), every error with its field, and the
/// canonical text of every knob (the URL hash).
#[wasm_bindgen]
pub fn parse_config(texts_json: &str) -> Result<String, JsError> {
    let texts: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(texts_json).map_err(|e| JsError::new(&format!("control texts: {e}")))?;
    Ok(rdbench::config::parse_page_texts(&texts).to_string())
}
