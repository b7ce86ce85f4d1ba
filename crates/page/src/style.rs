//! Colours, fonts and sizes shared by the charts (scaled by the device pixel ratio).

use plotters::style::{FontDesc, FontFamily, FontStyle, RGBColor};

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

/// Short tick labels: up to four significant digits, exponent form below 1e-4.
pub fn tick(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { format!("{v}") };
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..3).contains(&mag) {
        // "1e-5", "2.5e-7": no trailing ".0".
        return format!("{v:.1e}").replace(".0e", "e");
    }
    let decimals = (3 - mag).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// A value for a read-out: six significant digits (exponent form below 1e-4).
pub fn exact(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..6).contains(&mag) {
        return format!("{v:.5e}");
    }
    let decimals = (5 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

/// Tick labels for a linear axis spanning `lo..hi`: as many decimals as the span needs,
/// so ticks on a narrow axis stay distinct.
pub fn linear_ticks(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let step = ((hi - lo).abs() / 5.0).max(f64::MIN_POSITIVE);
    let decimals = (1 - step.log10().floor() as i32).clamp(0, 12) as usize;
    move |v: &f64| {
        let scale = v.abs().max((hi - lo).abs());
        if scale >= 1e-4 || *v == 0.0 {
            let s = format!("{v:.decimals$}");
            if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
        } else {
            format!("{v:.1e}")
        }
    }
}

/// Tick labels for a log axis over `lo..hi`: 1-2-5 ticks on wide ranges, every tick on
/// narrow ones (where 1-2-5 ticks may not occur at all).
pub fn log_ticks(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let narrow = hi / lo < 8.0;
    move |v: &f64| if narrow { tick(*v) } else { log_tick(*v) }
}

/// Labels for a log axis: only at 1, 2 and 5 times a power of ten, so they never crowd.
pub fn log_tick(v: f64) -> String {
    if v <= 0.0 || !v.is_finite() {
        return String::new();
    }
    let m = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0, 10.0].iter().any(|t| (m - t).abs() < 1e-6 * t) { tick(v) } else { String::new() }
}

/// The axis styling every chart shares.
pub fn mesh<'a, 'b, X, Y, DB>(
    m: &'b mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>,
    s: Scale,
) -> &'b mut plotters::chart::MeshStyle<'a, 'b, X, Y, DB>
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    DB: plotters::backend::DrawingBackend,
{
    use plotters::style::Color;
    m.label_style(s.font(11.5))
        .axis_desc_style(s.font(12.0))
        .light_line_style(MUTED.mix(0.15))
        .bold_line_style(MUTED.mix(0.3))
}

/// Integer labels only (fractional tick positions stay blank).
pub fn integer(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-6 { format!("{}", v.round() as i64) } else { String::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_short() {
        assert_eq!(tick(0.007), "0.007");
        assert_eq!(tick(0.0025), "0.0025");
        assert_eq!(tick(0.02), "0.02");
        assert_eq!(tick(1.5), "1.5");
        assert_eq!(tick(12.0), "12");
        assert_eq!(tick(0.00001234), "1.2e-5");
        assert_eq!(tick(0.00001), "1e-5");
        assert_eq!(tick(-0.001), "-0.001");
        assert_eq!(log_tick(0.002), "0.002");
        assert_eq!(log_tick(0.003), "");
        assert_eq!(log_tick(0.1), "0.1");
        let f = linear_ticks(0.2362, 0.2362004);
        assert_ne!(f(&0.2362001), f(&0.2362002));
        assert_eq!(linear_ticks(0.0, 0.007)(&0.0025), "0.0025");
    }
}
