//! How the page writes numbers: the one place the rules live. The verdict card and the chart
//! labels call these functions; history, compare, study and the run panel call them through
//! the charts wasm (`web.rs`, `www/format.js`), so a number reads the same everywhere.
//!
//! The rules (docs/PAGE.md, "Numbers"):
//! - a value (test MSE, p, α, lr, defect, cosine, d_z, a mean): 4 significant digits; fixed
//!   notation from 0.001 up to 10 000, exponent form outside ("0.1697", "2.116e-4",
//!   "1.526e-5", "1.235e4"). Trailing zeros are dropped only when the value is exactly what
//!   is shown ("0.03125", "0.125", "0.05", "81"); a rounded value keeps its digits (a
//!   cosine of 0.999996 is "1.000", not "1");
//! - a difference (Δ, idea − baseline): the same digits with its sign ("+0.001289");
//! - a read-out under the pointer: 6 significant digits, same notation;
//! - a share: a percentage with one decimal ("48.9%");
//! - bytes: binary units, 3 significant digits ("82.8 KiB", "162 KiB", "5.67 MiB");
//! - a duration: "8.2 s" under 10 s, then "42 s", "1 min 05 s", "2 h 03 min";
//! - never "-0"; NaN, a missing value or a negative size or duration is "n/a"; ±∞ is "∞"/"-∞".

/// What a missing or undefined number reads as.
pub const NA: &str = "n/a";

/// `s` without the zeros after its last significant decimal (and without a bare ".").
fn trim(s: &str) -> &str {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { s }
}

/// `s` without a minus sign when it shows no non-zero digit ("-0", "-0.00" → "0").
fn unsigned_zero(s: String) -> String {
    match s.strip_prefix('-') {
        Some(rest) if !rest.bytes().any(|b| (b'1'..=b'9').contains(&b)) => rest.to_string(),
        _ => s,
    }
}

/// `v` with `digits` significant digits: fixed notation for 0.001 <= |v| < 10 000 (after
/// rounding), exponent form outside; trailing zeros dropped when `v` is exactly what is shown.
pub fn sig(v: f64, digits: usize) -> String {
    if v.is_nan() {
        return NA.into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "∞" } else { "-∞" }.into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let p = digits.max(1) - 1;
    // The exponent after rounding: 0.00099996 to 4 digits is 1.000e-3, so fixed "0.001".
    let sci = format!("{v:.p$e}");
    let (mantissa, exp) = sci.split_once('e').expect("exponent form has an e");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    // Zeros that only pad a rounded value would claim digits it does not have if dropped.
    let exact = sci.parse::<f64>() == Ok(v);
    let short = |s: &str| if exact { trim(s).to_string() } else { s.to_string() };
    let s = if (-3..4).contains(&exp) {
        let decimals = (p as i32 - exp).max(0) as usize;
        short(&format!("{v:.decimals$}"))
    } else {
        format!("{}e{exp}", short(mantissa))
    };
    unsigned_zero(s)
}

/// A value: 4 significant digits (`None` reads "n/a").
pub fn num(v: impl Into<Option<f64>>) -> String {
    v.into().map_or_else(|| NA.into(), |v| sig(v, 4))
}

/// A difference: a value with its sign ("+0.001289", "-3.1e-5", "0").
pub fn delta(v: impl Into<Option<f64>>) -> String {
    match v.into() {
        Some(v) if v > 0.0 => format!("+{}", sig(v, 4)),
        v => num(v),
    }
}

/// A read-out under the pointer: 6 significant digits.
pub fn exact(v: impl Into<Option<f64>>) -> String {
    v.into().map_or_else(|| NA.into(), |v| sig(v, 6))
}

/// A share (0.489) as a percentage with one decimal ("48.9%").
pub fn percent(share: impl Into<Option<f64>>) -> String {
    match share.into() {
        Some(v) if v.is_finite() => format!("{}%", unsigned_zero(format!("{:.1}", 100.0 * v))),
        Some(v) if v.is_infinite() => format!("{}%", sig(v, 1)),
        _ => NA.into(),
    }
}

/// A size in bytes, in binary units with 3 significant digits ("812 B", "82.8 KiB", "5.67 MiB").
pub fn bytes(b: impl Into<Option<f64>>) -> String {
    let Some(b) = b.into().filter(|b| b.is_finite() && *b >= 0.0) else { return NA.into() };
    if b < 1024.0 {
        // As an integer: -0.0 bytes is "0 B".
        return format!("{} B", b.round() as u64);
    }
    let mut v = b;
    let mut unit = 0;
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{} {}", trim(&format!("{v:.decimals$}")), UNITS[unit])
}

/// A duration in seconds: tenths below 10 s, whole seconds below a minute, then minutes and
/// seconds, then hours and minutes ("8.2 s", "42 s", "1 min 05 s", "2 h 03 min").
pub fn duration(seconds: impl Into<Option<f64>>) -> String {
    let Some(s) = seconds.into().filter(|s| s.is_finite() && *s >= 0.0) else { return NA.into() };
    // Rounded to what is shown before the unit is chosen: 9.96 s is "10 s", 59.6 s "1 min 00 s".
    if (s * 10.0).round() < 100.0 {
        return format!("{} s", unsigned_zero(format!("{s:.1}")));
    }
    let whole = s.round() as u64;
    if whole < 60 {
        format!("{whole} s")
    } else if whole < 3600 {
        format!("{} min {:02} s", whole / 60, whole % 60)
    } else {
        let minutes = (s / 60.0).round() as u64;
        format!("{} h {:02} min", minutes / 60, minutes % 60)
    }
}

// ------------------------------------------------------------------ axis labels
// Tick labels follow the value rule, with as many decimals as the axis needs to keep
// neighbouring ticks apart.

/// A tick label: a value ([`num`]) of the tick's nice value. An axis places a tick at a value
/// a rounding error off it (10000.000000001, 0.7000000000001), which [`num`] would write with
/// the zeros that say "not exactly" ("1.000e4", "0.7000"); a tick is at the round value.
pub fn tick(v: f64) -> String {
    let round: f64 = if v.is_finite() { format!("{v:.3e}").parse().unwrap_or(v) } else { v };
    num(round)
}

/// Tick labels for a linear axis spanning `lo..hi`: as many digits as the span needs, so
/// ticks on a narrow axis stay distinct; the notation of the largest value on the axis.
pub fn linear_ticks(lo: f64, hi: f64) -> impl Fn(&f64) -> String {
    let step = ((hi - lo).abs() / 5.0).max(f64::MIN_POSITIVE);
    let step_exp = step.log10().floor() as i32;
    let top = lo.abs().max(hi.abs());
    let fixed = (1e-3..1e4).contains(&top);
    move |v: &f64| {
        if *v == 0.0 || !v.is_finite() {
            return num(*v);
        }
        if fixed {
            let decimals = (1 - step_exp).clamp(0, 12) as usize;
            unsigned_zero(trim(&format!("{v:.decimals$}")).to_string())
        } else {
            // Digits from this value's magnitude down to a tenth of the step, of the round
            // value the tick stands for (see `tick`).
            let exp = v.abs().log10().floor() as i32;
            let digits = (exp - step_exp + 2).clamp(1, 12) as usize;
            let round: f64 = format!("{v:.p$e}", p = digits - 1).parse().unwrap_or(*v);
            sig(round, digits)
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

/// Integer labels only (fractional tick positions stay blank).
pub fn integer(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-6 { format!("{}", v.round() as i64) } else { String::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `(input, expected)` of `cases` through `f`.
    fn check(f: impl Fn(f64) -> String, cases: &[(f64, &str)]) {
        for &(v, want) in cases {
            assert_eq!(f(v), want, "{v:e}");
        }
    }

    #[test]
    fn ticks_read_as_their_round_value() {
        check(tick, &[(10000.000000001, "1e4"), (0.7000000000001, "0.7"), (0.6999999999999, "0.7"), (2e-7, "2e-7")]);
        let log = log_ticks(3.0, 12000.0);
        assert_eq!(log(&10000.000000001), "1e4");
        assert_eq!(log(&5000.0000001), "5000");
        let narrow = log_ticks(0.5, 1.1);
        assert_eq!(narrow(&0.7000000000001), "0.7");
        // A linear axis in exponent form: a tick off its value by a rounding error.
        let lin = linear_ticks(-2e-5, 2e-5);
        assert_eq!(lin(&1.0000000000001e-5), "1e-5");
        assert_eq!(lin(&-0.9999999999999e-5), "-1e-5");
        assert_eq!(lin(&1.5e-5), "1.5e-5");
    }

    #[test]
    fn values_have_four_significant_digits() {
        check(
            num,
            &[
                // Exact p-values in full up to 4 digits; the seed report's p as written.
                (0.03125, "0.03125"),
                (0.125, "0.125"),
                (0.1697, "0.1697"),
                (2.0 / 256.0, "0.007812"),
                (1.0, "1"),
                (0.05, "0.05"),
                (81.0, "81"),
                (62.275, "62.27"),
                (9999.0, "9999"),
                // Small values in exponent form, large ones too.
                (2.0 / 65536.0, "3.052e-5"),
                (0.000211634, "2.116e-4"),
                (1e-5, "1e-5"),
                (1e-300, "1e-300"),
                (12345.0, "1.234e4"),
                (6.02e23, "6.02e23"),
                // A rounded value keeps its digits; rounding that crosses a threshold takes the
                // notation of the rounded value.
                (0.999996, "1.000"),
                (0.12300049, "0.1230"),
                (-0.0052603801, "-0.005260"),
                (1.00002e-5, "1.000e-5"),
                (0.00099996, "0.001000"),
                (9999.6, "1.000e4"),
                (-0.0012889, "-0.001289"),
                (-3.2e-7, "-3.2e-7"),
                (f64::INFINITY, "∞"),
                (f64::NEG_INFINITY, "-∞"),
            ],
        );
    }

    #[test]
    fn never_minus_zero_and_missing_is_na() {
        let all: [fn(Option<f64>) -> String; 6] = [num, delta, exact, percent, bytes, duration];
        for f in all {
            assert_eq!(f(None), NA);
            assert_eq!(f(Some(f64::NAN)), NA);
            assert!(!f(Some(-0.0)).starts_with('-'), "{}", f(Some(-0.0)));
        }
        check(percent, &[(-0.0, "0.0%"), (-0.00001, "0.0%")]);
        check(duration, &[(-0.0, "0.0 s"), (-3.0, NA)]);
        check(bytes, &[(-1.0, NA)]);
        let ticks = linear_ticks(-1.0, 1.0);
        check(|v| ticks(&v), &[(-1e-17, "0"), (-0.0, "0")]);
        check(|v| integer(&v), &[(-0.0, "0"), (-1e-9, "0"), (2.5, "")]);
    }

    #[test]
    fn differences_readouts_shares() {
        check(delta, &[(0.0012889819, "+0.001289"), (-0.0010110547, "-0.001011"), (4.551e-5, "+4.551e-5"), (0.0, "0")]);
        check(exact, &[(0.0034995359852, "0.00349954"), (0.000575343475, "5.75343e-4"), (1234.5678, "1234.57")]);
        check(percent, &[(0.4886831, "48.9%"), (1.0, "100.0%")]);
    }

    #[test]
    fn bytes_and_durations() {
        const MIB: f64 = 1048576.0;
        check(
            bytes,
            &[
                (812.0, "812 B"),
                (84821.3, "82.8 KiB"),
                (165888.0, "162 KiB"),
                (5.67 * MIB, "5.67 MiB"),
                (50.0 * MIB, "50 MiB"),
                (3e15, "2.66 PiB"),
            ],
        );
        check(
            duration,
            &[
                (0.0, "0.0 s"),
                (8.24, "8.2 s"),
                (9.96, "10 s"),
                (42.4, "42 s"),
                (59.6, "1 min 00 s"),
                (65.0, "1 min 05 s"),
                (495.0, "8 min 15 s"),
                (3599.6, "1 h 00 min"),
                (7380.0, "2 h 03 min"),
                (1e9, "277777 h 47 min"),
            ],
        );
    }

    #[test]
    fn ticks_are_short_and_distinct() {
        check(
            tick,
            &[
                (0.007, "0.007"),
                (0.0025, "0.0025"),
                (1.5, "1.5"),
                (12.0, "12"),
                (0.00001234, "1.234e-5"),
                (-0.001, "-0.001"),
            ],
        );
        check(log_tick, &[(0.002, "0.002"), (0.003, ""), (0.1, "0.1"), (-1.0, "")]);
        let f = linear_ticks(0.2362, 0.2362004);
        assert_ne!(f(&0.2362001), f(&0.2362002));
        assert_eq!(linear_ticks(0.0, 0.007)(&0.0025), "0.0025");
        // A narrow axis of small values: exponent form, still distinct.
        let f = linear_ticks(2.36e-4, 2.3604e-4);
        assert_ne!(f(&2.3601e-4), f(&2.3602e-4));
        assert_eq!(linear_ticks(-4e-4, 4e-4)(&-2e-4), "-2e-4");
    }
}
