//! The environment block: a backend the runs were trained on, a platform that backend runs
//! on, a start time in RFC 3339, wall times that are finite and not negative, and the
//! report's build that of every run (a resume or a merge takes only runs of its own build).

use super::structure::Era;
use super::{Checker, join};
use crate::records::RunRecord;
use crate::report::Environment;

/// The backends a report names, with the platforms each runs on.
const BACKENDS: &[(&str, &[&str])] = &[
    ("cpu-flex", &["native", "wasm"]),
    ("cpu-ndarray", &["native"]),
    ("wgpu-vulkan", &["native"]),
    ("webgpu", &["wasm"]),
];

/// Whether `s` is an RFC 3339 date-time (`2026-12-01T12:00:00Z`, fractions and offsets too).
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .map(|d| d.iter().fold(0u32, |n, &c| n * 10 + (c - b'0') as u32))
    };
    let (Some(year), Some(month), Some(day), Some(hour), Some(min), Some(sec)) =
        (digits(0..4), digits(5..7), digits(8..10), digits(11..13), digits(14..16), digits(17..19))
    else {
        return false;
    };
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || min > 59 || sec > 60 {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest.as_bytes() {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            let all = [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit());
            all && (h1 - b'0') * 10 + (h2 - b'0') <= 23 && (m1 - b'0') * 10 + (m2 - b'0') <= 59
        }
        _ => false,
    }
}

/// A duration in seconds: finite and not negative.
fn seconds(c: &mut Checker, path: &str, s: f64) {
    if !s.is_finite() || s < 0.0 {
        c.fail(path, format!("{s} seconds: a wall time is finite and not negative"));
    }
}

pub(super) fn check(env: &Environment, runs: &[RunRecord], era: Era, c: &mut Checker) {
    let e = "environment";
    match BACKENDS.iter().find(|(name, _)| *name == env.backend) {
        None => {
            let names: Vec<&str> = BACKENDS.iter().map(|(n, _)| *n).collect();
            c.fail(&join(e, "backend"), format!("{:?} is not a backend ({})", env.backend, names.join(", ")));
        }
        Some((name, platforms)) if !platforms.contains(&env.platform.as_str()) => {
            c.fail(&join(e, "platform"), format!("{:?}, but {name} runs on {}", env.platform, platforms.join(" or ")))
        }
        _ => {}
    }
    let mut trained_on: Vec<&str> = Vec::new();
    for r in runs.iter().filter(|r| !r.backend.is_empty()) {
        if !trained_on.contains(&r.backend.as_str()) {
            trained_on.push(&r.backend);
        }
    }
    if !trained_on.is_empty() && !trained_on.contains(&env.backend.as_str()) {
        c.fail(
            &join(e, "backend"),
            format!("{:?}, but its runs were trained on {}", env.backend, trained_on.join(", ")),
        );
    }
    if !is_rfc3339(&env.started_at) {
        c.fail(&join(e, "started_at"), format!("{:?} is not an RFC 3339 time (2026-12-01T12:00:00Z)", env.started_at));
    }
    seconds(c, &join(e, "wall_time_s"), env.wall_time_s);
    for (k, &s) in &env.phase_wall_time_s {
        seconds(c, &format!("{e}.phase_wall_time_s.{k}"), s);
    }
    for (i, r) in runs.iter().enumerate() {
        seconds(c, &format!("runs[{i}].wall_time_s"), r.wall_time_s);
    }
    for (i, cal) in env.calibration.iter().enumerate() {
        if !(cal.ms_per_work_unit.is_finite() && cal.ms_per_work_unit > 0.0) {
            let msg = format!("{}: a speed is finite and positive", cal.ms_per_work_unit);
            c.fail(&format!("{e}.calibration[{i}].ms_per_work_unit"), msg);
        }
        if let Some(fit) = &cal.population {
            for (key, v) in
                [("ms_per_population_unit", fit.ms_per_population_unit), ("ms_per_run_unit", fit.ms_per_run_unit)]
            {
                if !(v.is_finite() && v >= 0.0) {
                    c.fail(
                        &format!("{e}.calibration[{i}].population.{key}"),
                        format!("{v}: a cost is finite and not negative"),
                    );
                }
            }
        }
    }
    if env.reused_runs > runs.len() {
        c.fail(&join(e, "reused_runs"), format!("{}, but the report has {} runs", env.reused_runs, runs.len()));
    }
    // A report is made by one build: its runs are its own (a resume or a merge sets aside the
    // runs of any other). Reports from before builds were recorded name none anywhere.
    for (i, r) in runs.iter().enumerate().filter(|(_, r)| r.build != env.build) {
        let what = match era {
            Era::Current => format!("{:?}, but the report was made by build {:?}", r.build, env.build),
            _ => format!("{:?}, but the report names no build", r.build),
        };
        c.fail(&format!("runs[{i}].build"), what);
    }
}

#[cfg(test)]
mod tests {
    use super::is_rfc3339;

    #[test]
    fn rfc3339_times_are_told_from_others() {
        for ok in ["2026-12-01T12:00:00Z", "2024-02-29T23:59:60.5+05:30", "2026-01-01t00:00:00z"] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "",
            "yesterday",
            "2026-12-01 12:00:00Z",
            "2026-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2026-12-01T12:00Z",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
        assert!(!is_rfc3339("2026-12-01T12:00:00"), "no offset");
        assert!(!is_rfc3339("2026-12-01T12:00:00.Z"));
        assert!(!is_rfc3339("2026-12-01T12:00:00+24:00"));
    }
}
