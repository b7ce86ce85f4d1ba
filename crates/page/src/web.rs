//! wasm-bindgen API for the page thread: load a report, get its card, draw its charts on
//! canvases (plotters-canvas) or as SVG text (export), and draw the live loss chart. Every
//! draw returns what it drew: the label boxes (tests check them) and the hover points. Also
//! the chart registry the page builds its figures from, and the number formats
//! (`crate::format`) the page's own text uses (`www/format.js`).

use crate::layout::{Drawn, Hover, Measure, Recorder};
use crate::style::Scale;
use crate::{CHARTS, card, draw_chart, format, live, load};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use rdbench_core::messages::TrivialLoss;
use wasm_bindgen::prelude::*;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

thread_local! {
    /// A detached canvas's 2d context, to measure text with.
    static MEASURER: Option<CanvasRenderingContext2d> = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("canvas").ok())
        .and_then(|c| c.dyn_into::<HtmlCanvasElement>().ok())
        .and_then(|c| c.get_context("2d").ok().flatten())
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok());
}

/// Text measured by the canvas's own `measureText` in the font it is drawn in. plotters'
/// default measures a styled `<span>` in the page, which the page's CSP (no inline styles)
/// forbids, and which forces a layout per label.
pub fn canvas_measure() -> Measure {
    Box::new(|text, font| {
        MEASURER.with(|ctx| {
            let ctx = ctx.as_ref()?;
            ctx.set_font(font);
            let m = ctx.measure_text(text).ok()?;
            let height = m.font_bounding_box_ascent() + m.font_bounding_box_descent();
            Some((m.width().round() as u32, height.round() as u32))
        })
    })
}

/// A canvas's backend: drawing on `canvas`, text measured by [`canvas_measure`], every
/// label's box recorded in the returned log.
pub fn canvas_backend(canvas: HtmlCanvasElement) -> Result<(Recorder<CanvasBackend>, crate::layout::Log), JsError> {
    let backend = CanvasBackend::with_canvas_object(canvas).ok_or_else(|| JsError::new("canvas has no 2d context"))?;
    Ok(Recorder::measured(backend, canvas_measure()))
}

/// Draw with `f` on `canvas` through a label recorder; the drawn boxes and hover points as JSON.
pub(crate) fn on_canvas(
    canvas: HtmlCanvasElement,
    f: impl FnOnce(&DrawingArea<Recorder<CanvasBackend>, Shift>) -> Result<Vec<Hover>, String>,
) -> Result<String, JsError> {
    let (rec, log) = canvas_backend(canvas)?;
    let area = rec.into_drawing_area();
    let points = f(&area).map_err(|e| JsError::new(&e))?;
    area.present().map_err(|e| JsError::new(&format!("{e:?}")))?;
    drop(area);
    let mut drawn: Drawn = log.borrow().clone();
    drawn.points = points;
    Ok(serde_json::to_string(&drawn).expect("drawn serialises"))
}

/// Draw with `f` as an SVG document of `width` x `height` CSS pixels (text measured as on a
/// canvas).
fn as_svg(
    width: u32,
    height: u32,
    f: impl FnOnce(&DrawingArea<Recorder<SVGBackend>, Shift>) -> Result<Vec<Hover>, String>,
) -> Result<String, JsError> {
    let mut out = String::new();
    {
        let (svg, _) = Recorder::measured(SVGBackend::with_string(&mut out, (width, height)), canvas_measure());
        let area = svg.into_drawing_area();
        f(&area).map_err(|e| JsError::new(&e))?;
        area.present().map_err(|e| JsError::new(&format!("{e:?}")))?;
    }
    Ok(out)
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

    /// Draw chart `name` ("per_seed", "sweep", "mechanism", "null") on `canvas`; returns
    /// `{width, height, labels: [{text, x0, y0, x1, y1}], points: [{x, y, text}]}` JSON.
    pub fn draw(&self, name: &str, canvas: HtmlCanvasElement, dpr: f64) -> Result<String, JsError> {
        on_canvas(canvas, |a| draw_chart(name, a, &self.loaded.report, Scale(dpr)))
    }

    /// The line shown in place of chart `name` when this report has nothing for it to draw
    /// (`crate::chart_note`), or undefined.
    pub fn note(&self, name: &str) -> Option<String> {
        crate::chart_note(name, &self.loaded.report)
    }

    /// Chart `name` as an SVG document of `width` x `height` pixels.
    pub fn svg(&self, name: &str, width: u32, height: u32) -> Result<String, JsError> {
        as_svg(width, height, |a| draw_chart(name, a, &self.loaded.report, Scale(1.0)))
    }
}

fn series(series_json: &str) -> Result<Vec<live::Series>, JsError> {
    serde_json::from_str(series_json).map_err(|e| JsError::new(&e.to_string()))
}

fn trivial(trivial_json: &str) -> Result<Option<TrivialLoss>, JsError> {
    serde_json::from_str(trivial_json).map_err(|e| JsError::new(&format!("trivial_loss: {e}")))
}

/// Draw the live loss chart from `series_json` (`[{label, arm, phase, points: [[step, loss], ..]}, ..]`)
/// and `trivial_json` (the `backend` event's `trivial_loss`, or `null`); returns what was
/// drawn, as [`View::draw`] does.
#[wasm_bindgen]
pub fn draw_losses(
    canvas: HtmlCanvasElement,
    caption: &str,
    series_json: &str,
    trivial_json: &str,
    dpr: f64,
) -> Result<String, JsError> {
    let (runs, trivial) = (series(series_json)?, trivial(trivial_json)?);
    on_canvas(canvas, |a| live::draw(a, caption, &runs, trivial.as_ref(), Scale(dpr)))
}

/// The live loss chart as an SVG document.
#[wasm_bindgen]
pub fn svg_losses(
    caption: &str,
    series_json: &str,
    trivial_json: &str,
    width: u32,
    height: u32,
) -> Result<String, JsError> {
    let (runs, trivial) = (series(series_json)?, trivial(trivial_json)?);
    as_svg(width, height, |a| live::draw(a, caption, &runs, trivial.as_ref(), Scale(1.0)))
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

/// The warning before a bench whose `n_pairs` can never give p < `alpha` (undefined when they
/// can): the same sentence the CLI prints.
#[wasm_bindgen]
pub fn alpha_warning(n_pairs: usize, alpha: f64) -> Option<String> {
    rdbench_core::stats::permutation::unreachable_alpha_warning(n_pairs, alpha)
}

/// The configuration schema (knobs, presets, defaults) as JSON: the page builds its controls
/// from it, so it keeps no defaults or limits of its own.
#[wasm_bindgen]
pub fn config_schema() -> String {
    rdbench_core::config::schema().to_string()
}

/// Parse the page's control texts (`{key: text}` JSON) into `{config, errors, texts}` JSON:
/// the config to run (null unless every field is valid), every error with its field, and the
/// canonical text of every knob (the URL hash).
#[wasm_bindgen]
pub fn parse_config(texts_json: &str) -> Result<String, JsError> {
    let texts: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(texts_json).map_err(|e| JsError::new(&format!("control texts: {e}")))?;
    Ok(rdbench_core::config::parse_page_texts(&texts).to_string())
}

/// What one browser worker may hold: a wasm32 instance's whole address space.
const WORKER_MEMORY_BYTES: u64 = 4 << 30;

/// The memory a config needs on `workers` workers, before any work: `{text, refused,
/// largest_seq_len}` JSON (`refused` null when it fits each worker's 4 GiB, else the
/// message with the figure and the longest T that fits).
#[wasm_bindgen]
pub fn memory_check(config_json: &str, workers: usize) -> Result<String, JsError> {
    let cfg: rdbench_core::config::BenchConfig =
        serde_json::from_str(config_json).map_err(|e| JsError::new(&format!("config: {e}")))?;
    let bench = cfg.resolve().map_err(|e| JsError::new(&e.to_string()))?;
    let fp = rdbench_core::footprint::Footprint::of(&bench, workers);
    let text = fp.line(true);
    let short = fp.short(true);
    let verdict =
        rdbench_core::footprint::check(&bench, workers, WORKER_MEMORY_BYTES, true, "what a browser worker can address");
    Ok(match verdict {
        Ok(_) => serde_json::json!({"text": text, "short": short, "refused": null, "largest_seq_len": null}),
        Err(too) => serde_json::json!({"text": text, "short": short, "refused": too.message, "largest_seq_len": too.largest_seq_len}),
    }
    .to_string())
}

/// The report charts the page shows, in order (`CHARTS`): `[{name, canvas_id, title, tall}]` JSON.
#[wasm_bindgen]
pub fn chart_registry() -> String {
    serde_json::to_string(&CHARTS).expect("the registry serialises")
}

// The number formats of `crate::format`; null, undefined and NaN read "n/a".

/// A value: 4 significant digits.
#[wasm_bindgen]
pub fn fmt_num(v: Option<f64>) -> String {
    format::num(v)
}

/// A difference, signed.
#[wasm_bindgen]
pub fn fmt_delta(v: Option<f64>) -> String {
    format::delta(v)
}

/// A share as a percentage.
#[wasm_bindgen]
pub fn fmt_percent(share: Option<f64>) -> String {
    format::percent(share)
}

/// A size in bytes.
#[wasm_bindgen]
pub fn fmt_bytes(b: Option<f64>) -> String {
    format::bytes(b)
}

/// A duration in seconds.
#[wasm_bindgen]
pub fn fmt_duration(seconds: Option<f64>) -> String {
    format::duration(seconds)
}

/// A result file's validation problems as one error, a line each (what Load shows).
pub(crate) fn problems_error(problems: &[rdbench_core::report::Problem]) -> JsError {
    JsError::new(&problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n"))
}
