//! The study in plain text: one block per bench (track, model and policy), then the
//! mechanism conditions pooled over every bench, per model and per track. The CLI prints it;
//! the README quotes it.

use rdbench_core::study::{Outcome, PooledMechanism, StudyReport};
use std::fmt::Write;

/// The arms on the metric in one line: "test MSE (lower is better): baseline .., idea ..
/// (delta ..), p = .., verdict".
pub fn outcome(o: &Outcome) -> String {
    format!(
        "{} ({}): baseline {}, idea {} (delta {}), p = {}, {}",
        o.metric,
        o.metric_direction,
        num(o.baseline_metric),
        num(o.idea_metric),
        num(o.delta_mean),
        num(o.p_value),
        o.verdict.as_str()
    )
}

/// The baseline's learnability from a bench report's `task.learnability`, as a clause after
/// its outcome ("" for a report without it): "baseline learned", or "baseline did not learn:
/// comparison void".
pub fn baseline_learned(report: Option<&serde_json::Value>) -> String {
    let Some(l) = report.map(|r| &r["task"]["learnability"]).filter(|l| l.is_object()) else { return String::new() };
    let seeds = format!("{} of {} seeds", l["baseline"]["seeds_learned"], l["baseline"]["n"]);
    match (l["baseline"]["learned"].as_bool(), l["comparison_void"].as_bool()) {
        (_, Some(true)) => format!("; baseline did not learn ({seeds}): comparison void"),
        (Some(true), _) => format!("; baseline learned ({seeds})"),
        _ => format!("; baseline has no mean ({seeds} learned)"),
    }
}

pub(super) fn num(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| if v != 0.0 && v.abs() < 1e-3 { format!("{v:.3e}") } else { format!("{v:.4}") })
}

fn pct(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{:.1}%", 100.0 * v))
}

fn conditions(out: &mut String, m: &PooledMechanism) {
    let verdict =
        if m.confirmed { "confirmed".to_string() } else { format!("not confirmed, failed ({})", m.failed.join(", ")) };
    let _ = writeln!(out, "  {} ({} probes from {}): {verdict}", m.scope, m.n_probes, m.benches.join(", "));
    for (key, c) in &m.conditions {
        let _ = writeln!(out, "    {key}: {} -- {}", if c.holds { "holds" } else { "fails" }, c.detail);
    }
}

/// The study as text.
pub fn render(s: &StudyReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mechanism study (tau {}, {} benches)", s.tau, s.table.len());
    for (i, r) in s.table.iter().enumerate() {
        let _ = writeln!(out, "{} / {} / {}:", r.track, r.model, r.policy);
        let _ = writeln!(
            out,
            "  probes {} (null defects {}): mean defect {}, mean checkpoints {}, cosine chosen k {}, cosine k_max {}",
            r.n_probes,
            r.null_defects,
            num(r.mean_defect),
            num(r.mean_checkpoints),
            num(r.mean_grad_cos_chosen),
            num(r.mean_grad_cos_kmax)
        );
        let _ = writeln!(
            out,
            "  memory saved: counted {}, measured {} (peak bytes checkpointed {} vs dense {})",
            pct(r.memory_saved_counted),
            pct(r.memory_saved_measured),
            r.mean_peak_bytes_checkpointed.map_or("n/a".into(), |b| format!("{b:.0}")),
            r.mean_peak_bytes_dense.map_or("n/a".into(), |b| format!("{b:.0}"))
        );
        let _ = writeln!(
            out,
            "  {}{}; mechanism alone {}",
            outcome(&r.outcome),
            baseline_learned(s.reports.get(i)),
            if r.mechanism_confirmed {
                "confirmed".to_string()
            } else {
                format!("not confirmed ({})", r.mechanism_failed.join(", "))
            }
        );
        if !r.lr_at_grid_edge.is_empty() {
            let _ = writeln!(
                out,
                "  best lr at the lr grid's edge: {} (a better lr may lie beyond it)",
                r.lr_at_grid_edge.join(", ")
            );
        }
    }
    let _ = writeln!(out, "conditions over pooled probes:");
    conditions(&mut out, &s.pooled);
    for m in s.per_model.iter().chain(&s.per_track) {
        conditions(&mut out, m);
    }
    for m in &s.frontier {
        let _ = writeln!(
            out,
            "frontier of {} on {} (both policies' idea full-run probes pooled; cells = forward + reversal evaluations):",
            m.model, m.track
        );
        out.push_str(&super::frontier::table(&m.frontier, "  "));
    }
    out
}
