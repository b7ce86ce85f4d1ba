//! The verdict card: every number the page shows next to the charts, taken from the report.

use rdbench::report::Report;
use rdbench::stats::Verdict;
use serde::Serialize;

/// One mechanism condition as shown.
#[derive(Debug, Serialize, PartialEq)]
pub struct CardCondition {
    /// "a".."d".
    pub letter: String,
    /// What must hold, in one line.
    pub describe: String,
    /// Whether it holds.
    pub holds: bool,
    /// The measurement behind it.
    pub detail: String,
}

/// What the card shows. Numbers are raw report values; the page formats them.
#[derive(Debug, Serialize, PartialEq)]
pub struct Card {
    /// The verdict (serialised as the report spells it).
    pub verdict: Verdict,
    /// comparison.system_worked.
    pub system_worked: bool,
    /// Sign-flip p.
    pub p_value: Option<f64>,
    /// How p was computed, in words.
    pub p_method: String,
    /// mean(idea) - mean(baseline).
    pub delta_mean: Option<f64>,
    /// Bootstrap 95% CI of delta_mean.
    pub delta_ci95: Option<[f64; 2]>,
    /// Pairs the idea won.
    pub idea_wins: usize,
    /// Pairs tested.
    pub n_pairs: usize,
    /// Baseline full-run mean MSE.
    pub baseline_mean: Option<f64>,
    /// Idea full-run mean MSE.
    pub idea_mean: Option<f64>,
    /// Wilcoxon p.
    pub wilcoxon_p: Option<f64>,
    /// d_z.
    pub effect_size_dz: Option<f64>,
    /// Mechanism confirmed.
    pub mechanism_confirmed: bool,
    /// Conditions (empty for seed-era reports).
    pub conditions: Vec<CardCondition>,
    /// Final-probe mean defect.
    pub observed_mean_defect: Option<f64>,
    /// Final-probe mean checkpoints.
    pub observed_mean_checkpoints: Option<f64>,
    /// Share of hidden-state memory saved against dense BPTT.
    pub memory_saved_fraction: Option<f64>,
    /// Mean stored states per minibatch.
    pub mean_stored_states: Option<f64>,
    /// Dense states (T + 1).
    pub dense_states: Option<usize>,
    /// Whole-bench wall time, seconds.
    pub wall_time_s: Option<f64>,
    /// Backend name.
    pub backend: Option<String>,
    /// Adapter.
    pub adapter: Option<String>,
    /// Best lr of each arm.
    pub best_lr_baseline: f64,
    /// Best lr of the idea arm.
    pub best_lr_idea: f64,
    /// The report's warnings.
    pub warnings: Vec<String>,
}

/// The card of `r`.
pub fn card(r: &Report) -> Card {
    let st = r.statistics.as_ref();
    let p_method =
        st.and_then(|s| s.p_value_method.as_ref()).map_or_else(|| "method not recorded".into(), |m| m.describe());
    let conditions = r
        .mechanism
        .as_ref()
        .map(|m| {
            m.conditions()
                .map(|(c, judged)| CardCondition {
                    letter: c.letter().into(),
                    describe: c.describe().into(),
                    holds: judged.holds,
                    detail: judged.detail.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    let env = r.environment.as_ref();
    Card {
        verdict: r.comparison.verdict,
        system_worked: r.comparison.system_worked,
        p_value: r.comparison.p_value,
        p_method,
        delta_mean: r.comparison.delta_mean,
        delta_ci95: st.and_then(|s| s.delta_mean_ci95),
        idea_wins: r.comparison.idea_wins,
        n_pairs: r.comparison.n_pairs,
        baseline_mean: r.baseline.full.mean,
        idea_mean: r.idea.mean,
        wilcoxon_p: st.and_then(|s| s.wilcoxon.as_ref()).and_then(|w| w.p_value),
        effect_size_dz: st.and_then(|s| s.effect_size_dz),
        mechanism_confirmed: r.mechanism_signature.confirmed,
        conditions,
        observed_mean_defect: r.mechanism_signature.observed_mean_defect,
        observed_mean_checkpoints: r.mechanism_signature.observed_mean_checkpoints,
        memory_saved_fraction: r.memory.as_ref().and_then(|m| m.saved_fraction),
        mean_stored_states: r.memory.as_ref().and_then(|m| m.mean_stored_states),
        dense_states: r.memory.as_ref().map(|m| m.dense_states),
        wall_time_s: env.map(|e| e.wall_time_s),
        backend: env.map(|e| e.backend.clone()),
        adapter: env.map(|e| e.adapter.clone()),
        best_lr_baseline: r.baseline.best_cfg.lr,
        best_lr_idea: r.idea.best_cfg.lr,
        warnings: r.warnings.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdbench::idea::mechanism::{MechanismCondition, judge};

    #[test]
    fn conditions_come_from_the_mechanism_table() {
        let text = include_str!("../../www/examples/seed_bench_report.json");
        let mut r = Report::from_json(text).unwrap();
        // No probes: every condition fails, in the table's order.
        r.mechanism = Some(judge(&[], 0.08, "one_step").1);
        let c = card(&r);
        let letters: Vec<&str> = c.conditions.iter().map(|c| c.letter.as_str()).collect();
        assert_eq!(letters, ["a", "b", "c", "d"]);
        assert!(c.conditions.iter().all(|c| !c.holds));
        assert_eq!(c.conditions[2].describe, MechanismCondition::LowDefectCosine.describe());
        assert_eq!(c.verdict, Verdict::NoSignificantWin);
        assert_eq!(serde_json::to_value(&c).unwrap()["verdict"], "no significant win");
    }
}
