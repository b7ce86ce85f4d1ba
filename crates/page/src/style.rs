//! Colours, fonts, sizes (scaled by the device pixel ratio) and the frame and axes every chart
//! shares. Number formats are in `format`.

use plotters::chart::{ChartBuilder, ChartContext, MeshStyle};
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::prelude::{DrawingArea, DrawingBackend};
use plotters::style::{Color, FontDesc, FontFamily, FontStyle, RGBColor};

/// Baseline arm.
pub const BASELINE: RGBColor = RGBColor(76, 114, 176);
/// Idea arm.
pub const IDEA: RGBColor = RGBColor(221, 132, 82);
/// The idea did better on a seed.
pub const WIN: RGBColor = RGBColor(44, 160, 44);
/// The idea did worse on a seed.
pub const LOSS: RGBColor = RGBColor(214, 39, 40);
/// Reference lines (tau, observed value).
pub const INK: RGBColor = RGBColor(40, 40, 48);
/// Grid and muted marks.
pub const MUTED: RGBColor = RGBColor(150, 150, 160);

/// A categorical palette for per-seed / per-run series.
pub fn series(i: usize) -> RGBColor {
    const P: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    P[i % P.len()]
}

/// Sizes for one device pixel ratio.
#[derive(Clone, Copy, Debug)]
pub struct Scale(pub f64);

impl Scale {
    /// `v` CSS pixels in device pixels.
    pub fn px(&self, v: f64) -> u32 {
        (v * self.0).round().max(1.0) as u32
    }
    /// `v` CSS pixels as a signed coordinate.
    pub fn i(&self, v: f64) -> i32 {
        (v * self.0).round() as i32
    }
    /// A sans-serif font of `size` CSS pixels.
    pub fn font(&self, size: f64) -> FontDesc<'static> {
        FontDesc::new(FontFamily::SansSerif, size * self.0, FontStyle::Normal)
    }
    /// A bold sans-serif font.
    pub fn bold(&self, size: f64) -> FontDesc<'static> {
        FontDesc::new(FontFamily::SansSerif, size * self.0, FontStyle::Bold)
    }
}

/// Axis range covering `vals` with a margin; log ranges stay positive.
pub fn range(vals: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let v: Vec<f64> = vals.filter(|x| x.is_finite() && (!log || *x > 0.0)).collect();
    if v.is_empty() {
        return if log { (1e-3, 1.0) } else { (0.0, 1.0) };
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if log {
        let (lo, hi) = if hi / lo < 1.5 { (lo / 1.5, hi * 1.5) } else { (lo, hi) };
        (lo / 1.25, hi * 1.25)
    } else {
        let span = if hi > lo { hi - lo } else { hi.abs().max(1e-9) };
        (lo - 0.08 * span, hi + 0.08 * span)
    }
}

/// Where a chart's plot sits in its area, in CSS pixels: the margins (the left one is always
/// 6 px; 0 leaves one unset) and the label areas below (x) and left of (y) the plot.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    /// Right margin.
    pub right: f64,
    /// Top margin.
    pub top: f64,
    /// Bottom margin.
    pub bottom: f64,
    /// Height of the x label area.
    pub x_labels: f64,
    /// Width of the y label area.
    pub y_labels: f64,
}

impl Default for Frame {
    /// What most charts use; each chart changes only what it needs.
    fn default() -> Self {
        Frame { right: 14.0, top: 0.0, bottom: 6.0, x_labels: 40.0, y_labels: 62.0 }
    }
}

impl Frame {
    /// A chart builder on `area` with this frame at scale `s`.
    pub fn on<'a, 'b, DB: DrawingBackend>(
        self,
        area: &'a DrawingArea<DB, Shift>,
        s: Scale,
    ) -> ChartBuilder<'a, 'b, DB> {
        let mut b = ChartBuilder::on(area);
        b.margin_left(s.px(6.0))
            .margin_right(s.px(self.right))
            .x_label_area_size(s.px(self.x_labels))
            .y_label_area_size(s.px(self.y_labels));
        // Scale::px never gives 0, so an unset margin is left at plotters' 0.
        if self.top > 0.0 {
            b.margin_top(s.px(self.top));
        }
        if self.bottom > 0.0 {
            b.margin_bottom(s.px(self.bottom));
        }
        b
    }
}

/// The axes of `chart` in the style every chart shares (label fonts, faint grid); the caller
/// adds its labels and descriptions and draws.
pub fn axes<'a, 'b, X, Y, DB>(
    chart: &'b mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    s: Scale,
) -> MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    DB: DrawingBackend,
{
    let mut mesh = chart.configure_mesh();
    mesh.label_style(s.font(11.5))
        .axis_desc_style(s.font(12.0))
        .light_line_style(MUTED.mix(0.15))
        .bold_line_style(MUTED.mix(0.3));
    mesh
}
