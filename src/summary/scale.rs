//! The scale study in plain text: per track and model, a block per length with the arms'
//! test metric, the idea's chosen k and where it stands, and the frontier's points at the
//! idea's memory (dense, the idea, revolve, fixed interval).

use super::study::num;
use rdbench_core::scale::ScaleReport;
use std::fmt::Write;

/// The scale study as text.
pub fn render(s: &ScaleReport) -> String {
    let mut out = String::new();
    let lens: Vec<String> = s.seq_lens.iter().map(|t| t.to_string()).collect();
    let _ = writeln!(
        out,
        "scale study ({} policy, {} benches): T = {}; cells = forward + reversal evaluations",
        s.config.policy.as_str(),
        s.table.len(),
        lens.join(", ")
    );
    for (i, r) in s.table.iter().enumerate() {
        let _ = writeln!(out, "{} / {} / T = {}:", r.track, r.model, r.seq_len);
        let _ = writeln!(
            out,
            "  {}{}",
            super::study::outcome(&r.outcome),
            super::study::baseline_learned(s.reports.get(i))
        );
        let ks: Vec<String> = r.k_over_training.iter().map(|k| num(Some(k.mean_k))).collect();
        let _ = writeln!(
            out,
            "  chosen k over training: {} (mean {}); at the idea's memory (k = {}, {} of {} probes): {}",
            ks.join(" "),
            num(r.mean_k),
            r.operating_k.map_or("n/a".into(), |k| k.to_string()),
            r.operating_probes,
            r.frontier_probes,
            r.standing.as_deref().unwrap_or("no frontier")
        );
        out.push_str(&super::frontier::points(&r.schedules, "  "));
    }
    out
}
