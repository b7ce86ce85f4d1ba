//! The frontier as text: one row per schedule and parameter, then the verdict on
//! dominance. The bench summary and the study summary print it.

use rdbench_core::frontier::{Frontier, PointMean};
use std::fmt::Write;

/// The frontier table of `f`, each line indented by `indent`.
pub fn table(f: &Frontier, indent: &str) -> String {
    let mut s = points(&f.points, indent);
    let _ = writeln!(s, "{indent}{}", f.dominated.conclusion);
    s
}

/// A row per point, under a header, each line indented by `indent`.
pub fn points(points: &[PointMean], indent: &str) -> String {
    let mut s = String::new();
    let opt = |v: Option<f64>, p: usize| v.map_or("n/a".to_string(), |v| format!("{v:.p$}"));
    let _ = writeln!(
        s,
        "{indent}{:<20} {:>9} {:>7} {:>8} {:>9} {:>8} {:>9} {:>10} {:>10} {:>8} {:>4}",
        "schedule",
        "parameter",
        "states",
        "forward",
        "reversal",
        "cells",
        "cosine",
        "rel. err",
        "peak B",
        "ms/run",
        "n"
    );
    for p in points {
        let _ = writeln!(
            s,
            "{indent}{:<20} {:>9} {:>7.1} {:>8.1} {:>9.1} {:>8.1} {:>9} {:>10} {:>10} {:>8} {:>4}",
            p.at.schedule.label(),
            p.at.param(),
            p.stored_states,
            p.forward_evals,
            p.reversal_evals,
            p.cell_evals(),
            opt(p.grad_cos, 4),
            p.grad_rel_err.map_or("n/a".to_string(), |e| format!("{e:.1e}")),
            opt(p.peak_bytes, 0),
            opt(p.seconds.map(|s| s * 1e3), 2),
            p.n
        );
    }
    s
}
