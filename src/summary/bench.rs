//! A one-screen text summary of a report (the CLI prints it after a run).

use rdbench_core::report::Report;
use std::fmt::Write;

fn num(v: Option<f64>) -> String {
    v.map_or("null".into(), |v| format!("{v:.6}"))
}

fn tick(b: bool) -> &'static str {
    if b { "ok  " } else { "FAIL" }
}

/// An arm's mean against the learnability rule, in words.
fn learned(mean: Option<bool>) -> &'static str {
    match mean {
        Some(true) => "learned",
        Some(false) => "did not learn",
        None => "no mean, a run diverged",
    }
}

/// Render `r` as plain text.
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let env = r.environment.as_ref();
    let _ = writeln!(
        s,
        "\n{} / {} — {} paired seeds — backend {} — wall {}",
        r.track,
        r.model,
        r.n_seeds,
        env.map_or("?".into(), |e| e.backend.clone()),
        env.map_or("?".into(), |e| format!("{:.1} s", e.wall_time_s))
    );
    if let Some(e) = env.filter(|e| e.reused_runs > 0 || e.run_backends.len() > 1) {
        let backends: Vec<String> = e.run_backends.iter().map(|(b, n)| format!("{b} {n}")).collect();
        let _ = writeln!(
            s,
            "runs reused from an interrupted bench: {}; runs per backend: {}",
            e.reused_runs,
            backends.join(", ")
        );
    }
    let metric = r.metric_name();
    let direction = r.direction();
    let head = format!("lr sweep (mean validation {metric})");
    let _ = writeln!(s, "\n{head:<32} baseline       idea");
    for e in &r.baseline.sweep {
        let key = rdbench_core::config::BenchConfig::lr_key(e.cfg.lr);
        let idea = r.idea_sweep.get(&key).and_then(|m| m.mean);
        let mark = |best: f64| if best == e.cfg.lr { "*" } else { " " };
        let _ = writeln!(
            s,
            "  lr {:<27} {:>12}{} {:>12}{}",
            rdbench_page::format::num(e.cfg.lr),
            num(e.mean),
            mark(r.baseline.best_cfg.lr),
            num(idea),
            mark(r.idea.best_cfg.lr)
        );
    }
    let _ = writeln!(s, "  (* = best lr of the arm)");
    let _ = writeln!(s, "\nseed   baseline      idea          idea - base");
    for (i, d) in r.comparison.per_seed_diffs.iter().enumerate() {
        let b = r.baseline.full.per_seed.get(i).copied().flatten();
        let x = r.idea.per_seed.get(i).copied().flatten();
        let tag = match d {
            Some(d) if direction.gain(*d) > 0.0 => "idea better",
            Some(d) if direction.gain(*d) < 0.0 => "baseline better",
            Some(_) => "tie",
            None => "diverged",
        };
        let diff = d.map_or("null".into(), |d| format!("{d:+.6}"));
        let _ = writeln!(s, "{i:<6} {:<13} {:<13} {diff:<13} {tag}", num(b), num(x));
    }
    let _ = writeln!(
        s,
        "mean   {:<13} {:<13} {}",
        num(r.baseline.full.mean),
        num(r.idea.mean),
        num(r.comparison.delta_mean)
    );
    let _ = writeln!(s, "std    {:<13} {:<13}", num(r.baseline.full.std), num(r.idea.std));
    let _ = writeln!(s, "(test {metric} per seed, {})", direction.as_str());
    if let Some(sec) = r.task.as_ref().and_then(|t| t.secondary.as_ref()) {
        let _ = writeln!(
            s,
            "{}: baseline {}, idea {} (lower is better)",
            sec.name,
            num(sec.baseline_mean),
            num(sec.idea_mean)
        );
    }
    if let Some(f) = r.task.as_ref().and_then(|t| t.reference.as_ref()) {
        let _ = writeln!(
            s,
            "trivial predictor ({}): {} {} (a model that learned nothing scores this)",
            f.name,
            f.metric,
            num(Some(f.value))
        );
    }
    let learnability = r.task.as_ref().and_then(|t| t.learnability.as_ref());
    if let Some(l) = learnability {
        let _ = writeln!(s, "learnability ({}: {}):", l.rule, num(Some(l.threshold)));
        for (arm, a) in [("baseline", &l.baseline), ("idea", &l.idea)] {
            let _ = writeln!(s, "  {arm:<9} {} ({} of {} seeds learned)", learned(a.learned), a.seeds_learned, a.n);
        }
    }

    let c = &r.comparison;
    let method = r
        .statistics
        .as_ref()
        .and_then(|st| st.p_value_method.as_ref())
        .map_or("".into(), |m| format!(" ({})", m.describe()));
    let _ = writeln!(s, "\nsign-flip p = {}{method}", c.p_value.map_or("null".into(), |p| format!("{p:.6}")));
    if let Some(st) = &r.statistics {
        if let Some(w) = &st.wilcoxon {
            let _ = writeln!(s, "Wilcoxon p = {} ({:?})", num(w.p_value), w.method);
        }
        if let Some([lo, hi]) = st.delta_mean_ci95 {
            let _ = writeln!(s, "bootstrap 95% CI of delta_mean = [{lo:.6}, {hi:.6}]");
        }
        let _ = writeln!(s, "effect size d_z = {}", num(st.effect_size_dz));
        if !st.dropped_pairs.is_empty() {
            let _ = writeln!(s, "pairs left out: {} (see warnings)", st.dropped_pairs.len());
        }
    }
    if learnability.is_some_and(|l| l.comparison_void) {
        let _ = writeln!(
            s,
            "verdict: VOID at this protocol: the baseline did not learn, so the {metric} comparison says nothing \
             (the test reads {}, idea wins {}/{} pairs)",
            c.verdict.as_str(),
            c.idea_wins,
            c.n_pairs
        );
    } else {
        let _ = writeln!(
            s,
            "verdict: {} (idea wins {}/{} pairs)",
            c.verdict.as_str().to_uppercase(),
            c.idea_wins,
            c.n_pairs
        );
    }

    let m = &r.mechanism_signature;
    let _ = writeln!(s, "\nmechanism: {} — {}", if m.confirmed { "CONFIRMED" } else { "not confirmed" }, m.prediction);
    let _ = writeln!(
        s,
        "  final probe: mean defect {}, mean checkpoints {}",
        num(m.observed_mean_defect),
        num(m.observed_mean_checkpoints)
    );
    if let Some(d) = &r.mechanism {
        for (cond, judged) in d.conditions() {
            let _ = writeln!(s, "  ({}) {} {}", cond.letter(), tick(judged.holds), judged.detail);
        }
    }
    let _ = writeln!(s, "  {}", m.low_defect_checkpoint_relation);
    if let Some(mem) = &r.memory {
        let _ = writeln!(
            s,
            "\nmemory: mean stored states per minibatch {} of {} dense ({} saved)",
            num(mem.mean_stored_states),
            mem.dense_states,
            mem.saved_fraction.map_or("n/a".into(), |f| format!("{:.1}%", 100.0 * f))
        );
        if let (Some(ck), Some(dense), Some(f)) =
            (mem.measured_peak_bytes_checkpointed, mem.measured_peak_bytes_dense, mem.measured_saved_fraction)
        {
            let _ = writeln!(
                s,
                "measured on the probe batch: peak {ck:.0} bytes checkpointed vs {dense:.0} dense ({:.1}% saved)",
                100.0 * f
            );
        }
    }
    if let Some(f) = &r.frontier {
        let _ = writeln!(
            s,
            "\nfrontier: each gradient schedule on the probe batch (T = {}), means over {} probes of the idea's full runs; cells = forward + reversal evaluations",
            f.t, f.dominated.n_probes
        );
        s.push_str(&super::frontier::table(f, "  "));
    }
    for w in r.warnings.iter().flatten() {
        let _ = writeln!(s, "warning: {w}");
    }
    s
}
