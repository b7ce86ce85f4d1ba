//! The mechanism signature (spec §5): is a larger reversal defect what makes the idea keep
//! more checkpoints, and does the gradient need them exactly when it is large?
//!
//! Non-engine: it judges probe records, so the report, the summary and the page's card use
//! it without burn. Conditions (a)–(d) are data ([`MechanismCondition`]); nothing else lists
//! them by hand.

use crate::records::{ProbeRecord, RunRecord};
use crate::stats::{mean, rank::spearman};
use serde::{Deserialize, Serialize};

/// The prediction under test.
pub const PREDICTION: &str = "larger trained-model reversal defects trigger denser checkpoint policy";
/// Cosine that counts as "the checkpointed gradient is the dense one".
pub const COSINE_OK: f64 = 0.99;

/// One of the four conditions of the signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MechanismCondition {
    /// (a) both regimes occur.
    BothRegimes,
    /// (b) Spearman(defect, checkpoints) > 0.
    SpearmanPositive,
    /// (c) low-defect probes keep the gradient at the chosen k.
    LowDefectCosine,
    /// (d) high-defect probes lose the gradient at k_max.
    HighDefectNeedsDense,
}

impl MechanismCondition {
    /// Every condition, in the spec's order.
    pub const ALL: [MechanismCondition; 4] = [
        MechanismCondition::BothRegimes,
        MechanismCondition::SpearmanPositive,
        MechanismCondition::LowDefectCosine,
        MechanismCondition::HighDefectNeedsDense,
    ];

    /// The spec's letter, "a".."d" (also what `MechanismDetail::failed` lists).
    pub fn letter(self) -> &'static str {
        match self {
            MechanismCondition::BothRegimes => "a",
            MechanismCondition::SpearmanPositive => "b",
            MechanismCondition::LowDefectCosine => "c",
            MechanismCondition::HighDefectNeedsDense => "d",
        }
    }

    /// The report's JSON key of the condition inside `mechanism`.
    pub fn key(self) -> &'static str {
        match self {
            MechanismCondition::BothRegimes => "a_both_regimes",
            MechanismCondition::SpearmanPositive => "b_spearman_positive",
            MechanismCondition::LowDefectCosine => "c_low_defect_cosine",
            MechanismCondition::HighDefectNeedsDense => "d_high_defect_needs_dense",
        }
    }

    /// What must hold, in one line.
    pub fn describe(self) -> &'static str {
        match self {
            MechanismCondition::BothRegimes => "both regimes occur: some probe defect <= tau and some > tau",
            MechanismCondition::SpearmanPositive => "Spearman correlation of defect and checkpoint count is positive",
            MechanismCondition::LowDefectCosine => {
                "probes with defect <= tau keep mean gradient cosine at the chosen k >= 0.99"
            }
            MechanismCondition::HighDefectNeedsDense => {
                "probes with defect > tau have mean gradient cosine at k_max < 0.99"
            }
        }
    }
}

/// One mechanism condition as judged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// Whether it holds.
    pub holds: bool,
    /// The measured value(s) behind it, in words.
    pub detail: String,
    /// The number it is judged on (null when there is none).
    pub value: Option<f64>,
    /// Probes whose value for this condition was not finite: a null defect counts as high
    /// defect in (a) and (b); a null cosine makes (c) or (d) fail. 0 in older reports.
    #[serde(default)]
    pub non_finite: usize,
}

/// The mechanism signature of spec §5 (the seed report's `mechanism_signature`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MechanismSignature {
    /// The prediction under test.
    pub prediction: String,
    /// Mean over idea full-run seeds of the final probe's defect.
    pub observed_mean_defect: Option<f64>,
    /// Mean over idea full-run seeds of the final probe's checkpoint count.
    pub observed_mean_checkpoints: Option<f64>,
    /// What the probes show about defect and checkpoints, in words.
    pub low_defect_checkpoint_relation: String,
    /// All four conditions hold.
    pub confirmed: bool,
}

/// The probe trace of one idea full-run seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeTrace {
    /// Seed.
    pub seed: u64,
    /// One-step defect mean per probe.
    pub defect: Vec<Option<f64>>,
    /// Interval chosen per probe.
    pub k: Vec<usize>,
    /// Checkpoint count per probe.
    pub checkpoints: Vec<usize>,
    /// Gradient cosine at the chosen k per probe.
    pub grad_cos_chosen: Vec<Option<f64>>,
    /// Gradient cosine at k_max per probe.
    pub grad_cos_kmax: Vec<Option<f64>>,
}

/// Conditions (a)–(d) of the signature, which failed, and the traces they were judged on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MechanismDetail {
    /// Threshold tau.
    pub tau: f64,
    /// Policy that drove training.
    pub policy: String,
    /// Probes judged (all probes of the idea's full runs).
    pub n_probes: usize,
    /// (a) both regimes occur.
    pub a_both_regimes: Condition,
    /// (b) Spearman(defect, checkpoints) > 0.
    pub b_spearman_positive: Condition,
    /// (c) low-defect probes keep mean cosine at the chosen k >= 0.99.
    pub c_low_defect_cosine: Condition,
    /// (d) high-defect probes have mean cosine at k_max < 0.99.
    pub d_high_defect_needs_dense: Condition,
    /// Letters of the conditions that failed.
    pub failed: Vec<String>,
    /// Per-seed probe traces.
    pub traces: Vec<ProbeTrace>,
}

impl MechanismDetail {
    /// The judged condition `c`.
    pub fn condition(&self, c: MechanismCondition) -> &Condition {
        match c {
            MechanismCondition::BothRegimes => &self.a_both_regimes,
            MechanismCondition::SpearmanPositive => &self.b_spearman_positive,
            MechanismCondition::LowDefectCosine => &self.c_low_defect_cosine,
            MechanismCondition::HighDefectNeedsDense => &self.d_high_defect_needs_dense,
        }
    }

    /// Every condition with its judgement, in the spec's order.
    pub fn conditions(&self) -> impl Iterator<Item = (MechanismCondition, &Condition)> {
        MechanismCondition::ALL.into_iter().map(move |c| (c, self.condition(c)))
    }
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.4}"))
}

/// Mean cosine of `probes` and how many were not finite; a condition on it must fail when
/// any was not finite (a checkpointed gradient that is NaN is no evidence either way).
fn cosines(probes: &[&ProbeRecord], f: fn(&ProbeRecord) -> Option<f64>) -> (Option<f64>, usize) {
    let v: Vec<f64> = probes.iter().filter_map(|p| f(p)).collect();
    ((!v.is_empty()).then(|| mean(&v)), probes.len() - v.len())
}

impl ProbeTrace {
    /// The trace's probes as records, with every value the judge reads (the others empty);
    /// None when its lists do not have one value per probe.
    pub fn probes(&self) -> Option<Vec<ProbeRecord>> {
        let n = self.defect.len();
        let lens = [self.k.len(), self.checkpoints.len(), self.grad_cos_chosen.len(), self.grad_cos_kmax.len()];
        if lens.iter().any(|&l| l != n) {
            return None;
        }
        let probe = |j: usize| ProbeRecord {
            epoch: j,
            defect_mean: self.defect[j],
            defect_max: None,
            chained: Vec::new(),
            k: self.k[j],
            checkpoints: self.checkpoints[j],
            stored_bytes: 0,
            dense_bytes: 0,
            grad_cos_chosen: self.grad_cos_chosen[j],
            grad_cos_kmax: self.grad_cos_kmax[j],
            peak_bytes_checkpointed: None,
            peak_bytes_dense: None,
            frontier: Vec::new(),
        };
        Some((0..n).map(probe).collect())
    }
}

/// Judge the signature on the probes of the idea arm's full runs.
pub fn judge(idea_full: &[RunRecord], tau: f64, policy: &str) -> (MechanismSignature, MechanismDetail) {
    let probes: Vec<&ProbeRecord> = idea_full.iter().flat_map(|r| &r.probes).collect();
    // A null (non-finite) defect means reversal cannot be trusted: it belongs to the high
    // regime, and ranks above every finite defect (+infinity) in (b).
    let defect = |p: &ProbeRecord| p.defect_mean.unwrap_or(f64::INFINITY);
    let null_defects = probes.iter().filter(|p| p.defect_mean.is_none()).count();
    let low: Vec<&ProbeRecord> = probes.iter().copied().filter(|p| defect(p) <= tau).collect();
    let high: Vec<&ProbeRecord> = probes.iter().copied().filter(|p| defect(p) > tau).collect();

    let a = Condition {
        holds: !low.is_empty() && !high.is_empty(),
        detail: format!("{} probes with defect <= {tau}, {} with defect > {tau}", low.len(), high.len()),
        value: None,
        non_finite: null_defects,
    };
    let defects: Vec<f64> = probes.iter().map(|p| defect(p)).collect();
    let counts: Vec<f64> = probes.iter().map(|p| p.checkpoints as f64).collect();
    let rho = if probes.len() >= 2 { spearman(&defects, &counts) } else { f64::NAN };
    let rho = rho.is_finite().then_some(rho);
    let b = Condition {
        holds: rho.is_some_and(|r| r > 0.0),
        detail: match rho {
            Some(r) => format!("Spearman rho(defect, checkpoints) = {r:.4} over {} probes", probes.len()),
            None => "Spearman rho undefined (a constant defect or checkpoint count)".into(),
        },
        value: rho,
        non_finite: null_defects,
    };
    let (cos_low, bad_low) = cosines(&low, |p| p.grad_cos_chosen);
    let c = Condition {
        holds: bad_low == 0 && cos_low.is_some_and(|c| c >= COSINE_OK),
        detail: format!(
            "mean gradient cosine at the chosen k over {} low-defect probes = {}{}",
            low.len(),
            fmt_opt(cos_low),
            not_finite_note(bad_low)
        ),
        value: cos_low,
        non_finite: bad_low,
    };
    let (cos_high, bad_high) = cosines(&high, |p| p.grad_cos_kmax);
    let d = Condition {
        holds: bad_high == 0 && cos_high.is_some_and(|c| c < COSINE_OK),
        detail: format!(
            "mean gradient cosine at k_max over {} high-defect probes = {}{}",
            high.len(),
            fmt_opt(cos_high),
            not_finite_note(bad_high)
        ),
        value: cos_high,
        non_finite: bad_high,
    };

    let finals: Vec<&ProbeRecord> = idea_full.iter().filter_map(|r| r.probes.last()).collect();
    let final_defects: Option<Vec<f64>> = finals.iter().map(|p| p.defect_mean).collect();
    let observed_mean_defect = final_defects.filter(|v| !v.is_empty()).map(|v| mean(&v));
    let observed_mean_checkpoints =
        (!finals.is_empty()).then(|| mean(&finals.iter().map(|p| p.checkpoints as f64).collect::<Vec<_>>()));

    let checkpoints = |ps: &[&ProbeRecord]| {
        (!ps.is_empty()).then(|| mean(&ps.iter().map(|p| p.checkpoints as f64).collect::<Vec<_>>()))
    };
    let relation = format!(
        "{policy} policy: mean checkpoints {} over {} probes with defect <= {tau} vs {} over {} probes with defect > {tau}",
        fmt_opt(checkpoints(&low)),
        low.len(),
        fmt_opt(checkpoints(&high)),
        high.len()
    );

    let traces = idea_full
        .iter()
        .map(|r| ProbeTrace {
            seed: r.seed,
            defect: r.probes.iter().map(|p| p.defect_mean).collect(),
            k: r.probes.iter().map(|p| p.k).collect(),
            checkpoints: r.probes.iter().map(|p| p.checkpoints).collect(),
            grad_cos_chosen: r.probes.iter().map(|p| p.grad_cos_chosen).collect(),
            grad_cos_kmax: r.probes.iter().map(|p| p.grad_cos_kmax).collect(),
        })
        .collect();
    let mut detail = MechanismDetail {
        tau,
        policy: policy.into(),
        n_probes: probes.len(),
        a_both_regimes: a,
        b_spearman_positive: b,
        c_low_defect_cosine: c,
        d_high_defect_needs_dense: d,
        failed: Vec::new(),
        traces,
    };
    detail.failed = detail.conditions().filter(|(_, c)| !c.holds).map(|(m, _)| m.letter().to_string()).collect();
    let signature = MechanismSignature {
        prediction: PREDICTION.into(),
        observed_mean_defect,
        observed_mean_checkpoints,
        low_defect_checkpoint_relation: relation,
        confirmed: detail.failed.is_empty(),
    };
    (signature, detail)
}

fn not_finite_note(n: usize) -> String {
    if n == 0 { String::new() } else { format!(" ({n} not finite: fails)") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe with `defect`, `checkpoints` and the two cosines.
    fn probe(defect: Option<f64>, checkpoints: usize, cos_chosen: Option<f64>, cos_kmax: Option<f64>) -> ProbeRecord {
        ProbeRecord {
            epoch: 0,
            defect_mean: defect,
            defect_max: defect,
            chained: Vec::new(),
            k: 1,
            checkpoints,
            stored_bytes: 0,
            dense_bytes: 0,
            grad_cos_chosen: cos_chosen,
            grad_cos_kmax: cos_kmax,
            peak_bytes_checkpointed: None,
            peak_bytes_dense: None,
            frontier: Vec::new(),
        }
    }

    fn run(probes: Vec<ProbeRecord>) -> RunRecord {
        RunRecord::of_probes(0, probes)
    }

    fn failed(d: &MechanismDetail) -> Vec<&str> {
        d.failed.iter().map(String::as_str).collect()
    }

    #[test]
    fn both_regimes_with_the_predicted_cosines_confirm() {
        let r = run(vec![
            probe(Some(0.01), 6, Some(0.999), Some(0.999)),
            probe(Some(0.02), 11, Some(0.995), Some(0.99)),
            probe(Some(0.3), 81, Some(1.0), Some(0.5)),
            probe(Some(0.5), 81, Some(1.0), Some(0.7)),
        ]);
        let (sig, d) = judge(&[r], 0.08, "one_step");
        assert!(sig.confirmed, "{:?}", d.failed);
        assert!(failed(&d).is_empty());
        assert!((d.c_low_defect_cosine.value.unwrap() - 0.997).abs() < 1e-12);
        assert!((d.d_high_defect_needs_dense.value.unwrap() - 0.6).abs() < 1e-12);
        assert_eq!(d.conditions().map(|(_, c)| c.non_finite).sum::<usize>(), 0);
    }

    #[test]
    fn only_the_low_regime_fails_a_and_d() {
        let r = run(vec![probe(Some(0.01), 6, Some(0.999), Some(0.9)), probe(Some(0.02), 11, Some(0.995), Some(0.9))]);
        let (sig, d) = judge(&[r], 0.08, "one_step");
        assert!(!sig.confirmed);
        // (b): more defect, more checkpoints still holds within one regime.
        assert_eq!(failed(&d), ["a", "d"]);
        assert_eq!(d.d_high_defect_needs_dense.value, None);
    }

    #[test]
    fn only_the_high_regime_fails_a_b_and_c() {
        let r = run(vec![probe(Some(0.3), 81, Some(1.0), Some(0.5)), probe(Some(0.5), 81, Some(1.0), Some(0.7))]);
        let (_, d) = judge(&[r], 0.08, "one_step");
        // Constant checkpoint count: rho undefined.
        assert_eq!(failed(&d), ["a", "b", "c"]);
    }

    #[test]
    fn a_null_defect_is_high_defect() {
        // The third probe's reversal blew up (null defect, k = 1): it is the high regime,
        // so (a) holds and it ranks above the finite defects in (b).
        let r = run(vec![
            probe(Some(0.01), 6, Some(0.999), Some(0.999)),
            probe(Some(0.02), 11, Some(0.999), Some(0.999)),
            probe(None, 81, Some(1.0), Some(0.2)),
        ]);
        let (sig, d) = judge(&[r], 0.08, "one_step");
        assert!(d.a_both_regimes.holds, "{}", d.a_both_regimes.detail);
        assert_eq!(d.a_both_regimes.non_finite, 1);
        assert_eq!(d.b_spearman_positive.value, Some(1.0));
        assert_eq!(d.d_high_defect_needs_dense.value, Some(0.2));
        assert!(sig.confirmed, "{:?}", d.failed);
        assert_eq!(d.n_probes, 3);
    }

    #[test]
    fn a_null_cosine_fails_its_condition_and_is_counted() {
        // Without the null the finite low-defect cosines would pass (c).
        let r = run(vec![
            probe(Some(0.01), 6, Some(0.999), Some(0.999)),
            probe(Some(0.02), 11, None, Some(0.999)),
            probe(Some(0.3), 81, Some(1.0), None),
            probe(Some(0.5), 81, Some(1.0), Some(0.5)),
        ]);
        let (sig, d) = judge(&[r], 0.08, "one_step");
        assert!(!sig.confirmed);
        assert_eq!(failed(&d), ["c", "d"]);
        assert_eq!(d.c_low_defect_cosine.non_finite, 1);
        assert_eq!(d.d_high_defect_needs_dense.non_finite, 1);
        assert_eq!(d.c_low_defect_cosine.value, Some(0.999));
        assert!(d.c_low_defect_cosine.detail.contains("1 not finite"));
    }

    #[test]
    fn condition_keys_are_the_serialised_field_names() {
        let (_, d) = judge(&[run(vec![probe(Some(0.01), 6, Some(1.0), Some(1.0))])], 0.08, "one_step");
        let v = serde_json::to_value(&d).unwrap();
        for (c, cond) in d.conditions() {
            assert_eq!(v[c.key()]["holds"], cond.holds, "{}", c.key());
        }
        let letters: Vec<&str> = MechanismCondition::ALL.iter().map(|c| c.letter()).collect();
        assert_eq!(letters, ["a", "b", "c", "d"]);
    }
}
