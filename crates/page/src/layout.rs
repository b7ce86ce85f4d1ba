//! What every chart shares beyond colours: a backend wrapper that records the box of every
//! text it draws (so tests can check that no label overlaps another or leaves the canvas),
//! the header (title and legend, drawn above the data so a legend never covers a point),
//! axis labels placed without collisions, and hover points (exact values under the pointer).

use crate::format::tick;
use crate::style::{Frame, INK, MUTED, Scale, axes};
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::Ranged;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendColor, BackendCoord, DrawingErrorKind, FontTransform};
use serde::Serialize;
use std::cell::RefCell;
use std::rc::Rc;

/// The box of one drawn text, in backend pixels.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TextBox {
    /// The text.
    pub text: String,
    /// Left.
    pub x0: i32,
    /// Top.
    pub y0: i32,
    /// Right.
    pub x1: i32,
    /// Bottom.
    pub y1: i32,
}

impl TextBox {
    /// Whether two boxes share more than a pixel of area.
    pub fn overlaps(&self, o: &TextBox) -> bool {
        self.x0 < o.x1 - 1 && o.x0 < self.x1 - 1 && self.y0 < o.y1 - 1 && o.y0 < self.y1 - 1
    }
}

/// A point the pointer can read: its position in backend pixels and what it is.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Hover {
    /// x, backend pixels.
    pub x: i32,
    /// y, backend pixels.
    pub y: i32,
    /// The exact values, in words.
    pub text: String,
}

/// What one drawing left behind: every text box and every hover point.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Drawn {
    /// Canvas width, backend pixels.
    pub width: u32,
    /// Canvas height, backend pixels.
    pub height: u32,
    /// Every text drawn.
    pub labels: Vec<TextBox>,
    /// Every point with a read-out.
    pub points: Vec<Hover>,
}

impl Drawn {
    /// Pairs of labels that overlap and labels that leave the canvas, in words (empty: fine).
    pub fn label_problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        let (w, h) = (self.width as i32, self.height as i32);
        for (i, a) in self.labels.iter().enumerate() {
            if a.x0 < -1 || a.y0 < -1 || a.x1 > w + 1 || a.y1 > h + 1 {
                out.push(format!(
                    "{:?} at ({}, {})-({}, {}) leaves the {w}x{h} canvas",
                    a.text, a.x0, a.y0, a.x1, a.y1
                ));
            }
            for b in &self.labels[i + 1..] {
                if a.overlaps(b) {
                    out.push(format!("{:?} overlaps {:?}", a.text, b.text));
                }
            }
        }
        out
    }
}

/// The shared record a [`Recorder`] writes to.
pub type Log = Rc<RefCell<Drawn>>;

/// Measures `text` in `font` (CSS: "style size family", as plotters-canvas sets it):
/// (width, height) in pixels, or `None` to let the backend measure.
pub type Measure = Box<dyn Fn(&str, &str) -> Option<(u32, u32)>>;

/// A drawing backend that passes everything to `inner` and records the box of every text;
/// with a [`Measure`], text is measured by it instead of by `inner`.
pub struct Recorder<DB> {
    inner: DB,
    log: Log,
    measure: Option<Measure>,
}

impl<DB: DrawingBackend> Recorder<DB> {
    /// Wrap `inner`; read what was drawn from the returned log.
    pub fn new(inner: DB) -> (Self, Log) {
        let (width, height) = inner.get_size();
        let log = Rc::new(RefCell::new(Drawn { width, height, ..Drawn::default() }));
        (Recorder { inner, log: log.clone(), measure: None }, log)
    }

    /// Wrap `inner`, measuring text with `measure`.
    pub fn measured(inner: DB, measure: Measure) -> (Self, Log) {
        let (mut r, log) = Recorder::new(inner);
        r.measure = Some(measure);
        (r, log)
    }
}

type Res<E> = Result<(), DrawingErrorKind<E>>;

impl<DB: DrawingBackend> DrawingBackend for Recorder<DB> {
    type ErrorType = DB::ErrorType;
    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }
    fn ensure_prepared(&mut self) -> Res<DB::ErrorType> {
        self.inner.ensure_prepared()
    }
    fn present(&mut self) -> Res<DB::ErrorType> {
        self.inner.present()
    }
    fn draw_pixel(&mut self, p: BackendCoord, c: BackendColor) -> Res<DB::ErrorType> {
        self.inner.draw_pixel(p, c)
    }
    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        a: BackendCoord,
        b: BackendCoord,
        s: &S,
    ) -> Res<DB::ErrorType> {
        self.inner.draw_line(a, b, s)
    }
    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        a: BackendCoord,
        b: BackendCoord,
        s: &S,
        f: bool,
    ) -> Res<DB::ErrorType> {
        self.inner.draw_rect(a, b, s, f)
    }
    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        p: I,
        s: &S,
    ) -> Res<DB::ErrorType> {
        self.inner.draw_path(p, s)
    }
    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        c: BackendCoord,
        r: u32,
        s: &S,
        f: bool,
    ) -> Res<DB::ErrorType> {
        self.inner.draw_circle(c, r, s, f)
    }
    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        v: I,
        s: &S,
    ) -> Res<DB::ErrorType> {
        self.inner.fill_polygon(v, s)
    }
    fn draw_text<T: plotters_backend::BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Res<DB::ErrorType> {
        if !text.trim().is_empty() && plotters_backend::BackendTextStyle::color(style).alpha > 0.0 {
            let (w, h) = self.estimate_text_size(text, style)?;
            let (w, h) = (w as i32, h as i32);
            let anchor = plotters_backend::BackendTextStyle::anchor(style);
            let dx = match anchor.h_pos {
                HPos::Left => 0,
                HPos::Right => -w,
                HPos::Center => -w / 2,
            };
            let dy = match anchor.v_pos {
                VPos::Top => 0,
                VPos::Center => -h / 2,
                VPos::Bottom => -h,
            };
            // The unrotated box relative to the anchor, turned as the backend turns the text.
            let (x0, y0, x1, y1) = match plotters_backend::BackendTextStyle::transform(style) {
                FontTransform::None => (dx, dy, dx + w, dy + h),
                FontTransform::Rotate90 => (-(dy + h), dx, -dy, dx + w),
                FontTransform::Rotate180 => (-(dx + w), -(dy + h), -dx, -dy),
                FontTransform::Rotate270 => (dy, -(dx + w), dy + h, -dx),
            };
            self.log.borrow_mut().labels.push(TextBox {
                text: text.to_string(),
                x0: pos.0 + x0,
                y0: pos.1 + y0,
                x1: pos.0 + x1,
                y1: pos.1 + y1,
            });
        }
        self.inner.draw_text(text, style, pos)
    }
    fn estimate_text_size<T: plotters_backend::BackendTextStyle>(
        &self,
        text: &str,
        style: &T,
    ) -> Result<(u32, u32), DrawingErrorKind<DB::ErrorType>> {
        use plotters_backend::BackendTextStyle as S;
        let font = || format!("{} {}px {}", S::style(style).as_str(), S::size(style), S::family(style).as_str());
        match self.measure.as_ref().and_then(|m| m(text, &font())) {
            Some(size) => Ok(size),
            None => self.inner.estimate_text_size(text, style),
        }
    }
    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Res<DB::ErrorType> {
        self.inner.blit_bitmap(pos, size, src)
    }
}

/// How a legend entry is keyed.
#[derive(Clone, Copy, Debug)]
pub enum Key {
    /// A line of a colour and width (CSS px); dashed or not.
    Line(RGBAColor, f64, bool),
    /// A filled box.
    Swatch(RGBAColor),
    /// A filled dot.
    Dot(RGBAColor),
    /// A ring (e.g. "best lr").
    Ring(RGBAColor),
    /// Text only.
    Note,
}

/// One legend entry.
#[derive(Clone, Debug)]
pub struct Item {
    /// Its key.
    pub key: Key,
    /// Its text.
    pub label: String,
}

impl Item {
    /// An entry.
    pub fn new(key: Key, label: impl Into<String>) -> Self {
        Item { key, label: label.into() }
    }
}

/// Error text of a drawing-area error.
pub fn err<E: std::fmt::Debug>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("{what}: {e:?}")
}

fn text_w<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str, font: &FontDesc) -> i32 {
    area.estimate_text_size(text, &TextStyle::from(font.clone()))
        .map_or((text.len() as f64 * font.get_size() * 0.55) as i32, |s| s.0 as i32)
}

/// Words of `text` in lines no wider than `width` in `font`.
fn wrap<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str, font: &FontDesc, width: i32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() { word.to_string() } else { format!("{line} {word}") };
        if !line.is_empty() && text_w(area, &candidate, font) > width {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Draw a title (shrunk, then wrapped, to fit the width) and the legend rows above the data;
/// return the area left below them for the chart.
pub fn header<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    items: &[Item],
    s: Scale,
) -> Result<DrawingArea<DB, Shift>, String> {
    Ok(area.split_vertically(lay_header(area, title, items, s, true)?).1)
}

/// The height `header` would take, drawing nothing (for a chart that must know its plot's
/// size before it writes its legend).
pub fn header_height<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    items: &[Item],
    s: Scale,
) -> Result<u32, String> {
    lay_header(area, title, items, s, false)
}

/// Lay out the header, drawing it if `draw`; returns its height.
fn lay_header<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    items: &[Item],
    s: Scale,
    draw: bool,
) -> Result<u32, String> {
    let e = err("header");
    let out = Skip { area, draw };
    let (w, _) = area.dim_in_pixel();
    let w = w as i32;
    let pad = s.i(10.0);
    let avail = w - 2 * pad;
    // The largest size from 15 px down to 12 px at which the title fits one line, else wrap.
    // (Regular weight: the canvas backend measures text without its weight, so bold text
    // would be wider than measured.)
    let mut size = 15.0;
    while size > 12.0 && text_w(area, title, &s.font(size)) > avail {
        size -= 0.5;
    }
    let font = s.font(size);
    let mut y = s.i(6.0);
    for line in wrap(area, title, &font, avail) {
        out.draw(&Text::new(line, (w / 2, y), font.clone().color(&INK).pos(Pos::new(HPos::Center, VPos::Top))))
            .map_err(&e)?;
        y += s.i(size * 1.3);
    }
    // Legend entries flow left to right and wrap; each is a key and its label.
    let lfont = s.font(11.0);
    let key_w = s.i(16.0);
    let row_h = s.i(16.0);
    let gap = s.i(14.0);
    let mut x = pad;
    if !items.is_empty() {
        y += s.i(2.0);
    }
    let mut row_used = false;
    for item in items {
        let label_w = text_w(area, &item.label, &lfont);
        let key = if matches!(item.key, Key::Note) { 0 } else { key_w + s.i(4.0) };
        // A label wider than the row wraps onto lines of its own.
        let lines =
            if key + label_w > avail { wrap(area, &item.label, &lfont, avail - key) } else { vec![item.label.clone()] };
        let item_w = key + lines.iter().map(|l| text_w(area, l, &lfont)).max().unwrap_or(0);
        if row_used && x + item_w > w - pad {
            x = pad;
            y += row_h;
        }
        let cy = y + row_h / 2;
        match item.key {
            Key::Line(c, width, dashed) => {
                let style = c.stroke_width(s.px(width));
                if dashed {
                    let n = 3;
                    for i in 0..n {
                        let a = x + i * key_w / n;
                        out.draw(&PathElement::new(vec![(a, cy), (a + key_w / (2 * n) + 1, cy)], style)).map_err(&e)?;
                    }
                } else {
                    out.draw(&PathElement::new(vec![(x, cy), (x + key_w, cy)], style)).map_err(&e)?;
                }
            }
            Key::Swatch(c) => {
                out.draw(&Rectangle::new([(x, cy - s.i(5.0)), (x + key_w, cy + s.i(5.0))], c.filled())).map_err(&e)?;
            }
            Key::Dot(c) => out.draw(&Circle::new((x + key_w / 2, cy), s.px(3.5), c.filled())).map_err(&e)?,
            Key::Ring(c) => {
                out.draw(&Circle::new((x + key_w / 2, cy), s.px(5.5), c.stroke_width(s.px(1.6)))).map_err(&e)?
            }
            Key::Note => {}
        }
        for (i, line) in lines.iter().enumerate() {
            let ly = cy + i as i32 * row_h;
            out.draw(&Text::new(
                line.clone(),
                (x + key, ly),
                lfont.clone().color(&INK).pos(Pos::new(HPos::Left, VPos::Center)),
            ))
            .map_err(&e)?;
        }
        y += (lines.len() as i32 - 1) * row_h;
        x += item_w + gap;
        row_used = true;
    }
    if row_used {
        y += row_h;
    }
    y += s.i(4.0);
    Ok(y.max(0) as u32)
}

/// An area whose drawing is skipped unless `draw` (measuring still happens).
struct Skip<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
    draw: bool,
}

impl<DB: DrawingBackend> Skip<'_, DB> {
    fn draw<'b, E>(&self, element: &'b E) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
    where
        &'b E: plotters::element::PointCollection<'b, (i32, i32)>,
        E: plotters::element::Drawable<DB>,
    {
        if self.draw { self.area.draw(element) } else { Ok(()) }
    }
}

/// Which axis a set of labels goes on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Axis {
    /// Horizontal, labels below the plot.
    X,
    /// Vertical, labels left of the plot.
    Y,
}

/// Candidate label values of a log axis over `lo..hi`, most important first: values the
/// chart must label, then powers of ten, then 5 and 2 times them (the 1-2-5 ticks a log axis
/// is read by); only on a range too narrow for three of those the other mantissas, and on a
/// very narrow one evenly spaced values as a last resort.
pub fn log_candidates(lo: f64, hi: f64, must: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = must.iter().copied().filter(|v| *v >= lo && *v <= hi).collect();
    if !(lo > 0.0 && hi > lo && lo.is_finite() && hi.is_finite()) {
        return out;
    }
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    // The values the chart must label count among the three.
    let mut ticks = out.len();
    for tier in [&[1.0, 5.0, 2.0][..], &[3.0, 4.0, 6.0, 7.0, 8.0, 9.0]] {
        if ticks >= 3 {
            break;
        }
        for m in tier {
            for k in k0..=k1 {
                let v = m * 10f64.powi(k);
                // Rounded to the mantissa's digits so labels read 0.003, not 0.0030000000000000005.
                let v: f64 = format!("{v:.0e}").parse().unwrap_or(v);
                if v >= lo && v <= hi {
                    out.push(v);
                    ticks += 1;
                }
            }
        }
    }
    // Too narrow a range for any of those: evenly spaced (in log) values.
    if ticks < 3 {
        for i in 1..8 {
            let v = lo * (hi / lo).powf(i as f64 / 8.0);
            out.push(format!("{v:.2e}").parse().unwrap_or(v));
        }
    }
    out
}

/// Draw labels (and light grid lines) at `values` along `axis` of `chart`, each only if it
/// does not touch a label already placed, in the given order; at most `max` labels. The
/// chart's own labels on that axis must be blank. Returns the values labelled.
#[allow(clippy::too_many_arguments)]
pub fn place_labels<DB: DrawingBackend, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    area: &DrawingArea<DB, Shift>,
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    axis: Axis,
    values: &[f64],
    other: f64,
    max: usize,
    s: Scale,
) -> Result<Vec<f64>, String> {
    let e = err("axis labels");
    let base = area.get_base_pixel();
    let font = s.font(11.5);
    let plot = chart.plotting_area();
    let (px, py) = plot.get_pixel_range();
    let mut placed: Vec<(f64, TextBox)> = Vec::new();
    for &v in values {
        if placed.len() >= max || placed.iter().any(|(p, _)| (p - v).abs() <= 1e-9 * v.abs().max(1e-300)) {
            continue;
        }
        let text = tick(v);
        let (tw, th) = area.estimate_text_size(&text, &TextStyle::from(font.clone())).map_err(&e)?;
        let (tw, th) = (tw as i32, th as i32);
        let at = chart.backend_coord(&match axis {
            Axis::X => (v, other),
            Axis::Y => (other, v),
        });
        let bx = match axis {
            Axis::X => TextBox {
                text: text.clone(),
                x0: at.0 - tw / 2,
                y0: py.end + s.i(5.0),
                x1: at.0 - tw / 2 + tw,
                y1: py.end + s.i(5.0) + th,
            },
            Axis::Y => TextBox {
                text: text.clone(),
                x0: px.start - s.i(6.0) - tw,
                y0: at.1 - th / 2,
                x1: px.start - s.i(6.0),
                y1: at.1 - th / 2 + th,
            },
        };
        let spaced = |b: &TextBox| TextBox {
            x0: b.x0 - s.i(4.0),
            x1: b.x1 + s.i(4.0),
            y0: b.y0 - s.i(1.0),
            y1: b.y1 + s.i(1.0),
            ..b.clone()
        };
        let (w, _) = area.dim_in_pixel();
        let off_canvas = bx.x0 < base.0 || bx.x1 > base.0 + w as i32;
        if off_canvas || placed.iter().any(|(_, p)| spaced(p).overlaps(&bx)) {
            continue;
        }
        placed.push((v, bx));
    }
    for (_, b) in &placed {
        let (anchor, pos) = match axis {
            Axis::X => (Pos::new(HPos::Center, VPos::Top), ((b.x0 + b.x1) / 2, b.y0)),
            Axis::Y => (Pos::new(HPos::Right, VPos::Center), (b.x1, (b.y0 + b.y1) / 2)),
        };
        let rel = (pos.0 - base.0, pos.1 - base.1);
        area.draw(&Text::new(b.text.clone(), rel, font.clone().color(&INK).pos(anchor))).map_err(&e)?;
        // A tick mark and a light grid line at the labelled value.
        let (a, z, t0, t1) = match axis {
            Axis::X => {
                let x = (b.x0 + b.x1) / 2 - base.0;
                ((x, py.start - base.1), (x, py.end - base.1), (x, py.end - base.1), (x, py.end - base.1 + s.i(4.0)))
            }
            Axis::Y => {
                let y = (b.y0 + b.y1) / 2 - base.1;
                (
                    (px.start - base.0, y),
                    (px.end - base.0, y),
                    (px.start - base.0 - s.i(4.0), y),
                    (px.start - base.0, y),
                )
            }
        };
        area.draw(&PathElement::new(vec![a, z], MUTED.mix(0.25).stroke_width(1))).map_err(&e)?;
        area.draw(&PathElement::new(vec![t0, t1], INK.stroke_width(1))).map_err(&e)?;
    }
    Ok(placed.into_iter().map(|(v, _)| v).collect())
}

/// A chart with log axes on both sides.
pub type LogLogChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<LogCoord<f64>, LogCoord<f64>>>;

/// A chart on `rest` (the part of the canvas `area` below its header) with log axes over
/// `x` and `y`, described by `desc`; its labels are placed by [`place_labels`], at `must`'s
/// values first (then powers of ten, 5, 2, ..), none touching.
pub fn log_log<'a, DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    rest: &'a DrawingArea<DB, Shift>,
    (x, y): ((f64, f64), (f64, f64)),
    desc: (&str, &str),
    must: (&[f64], &[f64]),
    s: Scale,
) -> Result<LogLogChart<'a, DB>, String> {
    let e = err("log axes");
    let mut chart = Frame { right: 16.0, ..Frame::default() }
        .on(rest, s)
        .build_cartesian_2d((x.0..x.1).log_scale(), (y.0..y.1).log_scale())
        .map_err(&e)?;
    axes(&mut chart, s)
        .disable_mesh()
        .x_label_formatter(&|_| String::new())
        .y_label_formatter(&|_| String::new())
        .x_desc(desc.0)
        .y_desc(desc.1)
        .draw()
        .map_err(&e)?;
    place_labels(area, &chart, Axis::X, &log_candidates(x.0, x.1, must.0), y.0, 10, s)?;
    place_labels(area, &chart, Axis::Y, &log_candidates(y.0, y.1, must.1), x.0, 9, s)?;
    Ok(chart)
}

/// A hover point at data coordinates `p` of `chart`, relative to the canvas.
pub fn hover<DB: DrawingBackend, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    chart: &ChartContext<'_, DB, Cartesian2d<X, Y>>,
    p: (f64, f64),
    text: String,
) -> Hover {
    let (x, y) = chart.backend_coord(&p);
    Hover { x, y, text }
}

/// How many labels fit along `len` backend pixels when each needs about `each` CSS pixels.
pub fn fit(len: u32, each: f64, s: Scale) -> usize {
    ((len as f64 / (each * s.0)) as usize).clamp(2, 12)
}

#[cfg(test)]
mod tests {
    use super::log_candidates;

    /// The mantissa of a positive value (3 for 0.003).
    fn mantissa(v: f64) -> f64 {
        (v / 10f64.powf(v.log10().floor())).round()
    }

    #[test]
    fn log_ticks_are_1_2_5_where_the_range_allows() {
        // An MNIST-1D cross-entropy falling from 2.3 to 0.4; a test MSE over four decades.
        for (lo, hi) in [(0.4, 2.4), (2e-5, 0.3), (0.09, 1.1)] {
            let c = log_candidates(lo, hi, &[]);
            assert!(c.len() >= 3 && c.iter().all(|v| [1.0, 2.0, 5.0].contains(&mantissa(*v))), "{lo}..{hi}: {c:?}");
        }
        // Values the chart must label come first; a range with fewer than three 1-2-5 values
        // gets the other single-digit mantissas, and a very narrow one evenly spaced values.
        assert_eq!(log_candidates(0.002, 0.02, &[0.003])[0], 0.003);
        let narrow = log_candidates(0.55, 0.95, &[]);
        assert!(narrow.contains(&0.6) && narrow.contains(&0.9), "{narrow:?}");
        assert!(log_candidates(0.61, 0.64, &[]).len() >= 3);
    }
}
