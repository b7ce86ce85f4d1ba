//! The mechanism signature (spec §5): is a larger reversal defect what makes the idea keep
//! more checkpoints, and does the gradient need them exactly when it is large?

use crate::progress::{ProbeRecord, RunRecord};
use crate::report::{Condition, MechanismDetail, MechanismSignature, ProbeTrace};
use crate::stats::{mean, rank::spearman};

/// The prediction under test.
pub const PREDICTION: &str = "larger trained-model reversal defects trigger denser checkpoint policy";
/// Cosine that counts as "the checkpointed gradient is the dense one".
pub const COSINE_OK: f64 = 0.99;

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.4}"))
}

/// Judge the signature on the probes of the idea arm's full runs.
pub fn judge(idea_full: &[RunRecord], tau: f64, policy: &str) -> (MechanismSignature, MechanismDetail) {
    let probes: Vec<&ProbeRecord> = idea_full.iter().flat_map(|r| &r.probes).collect();
    // Probes whose defect is not finite cannot be placed in a regime; they are left out.
    let judged: Vec<(f64, &ProbeRecord)> = probes.iter().filter_map(|p| p.defect_mean.map(|d| (d, *p))).collect();
    let low: Vec<&ProbeRecord> = judged.iter().filter(|(d, _)| *d <= tau).map(|(_, p)| *p).collect();
    let high: Vec<&ProbeRecord> = judged.iter().filter(|(d, _)| *d > tau).map(|(_, p)| *p).collect();

    let a = Condition {
        holds: !low.is_empty() && !high.is_empty(),
        detail: format!("{} probes with defect <= {tau}, {} with defect > {tau}", low.len(), high.len()),
        value: None,
    };
    let defects: Vec<f64> = judged.iter().map(|(d, _)| *d).collect();
    let counts: Vec<f64> = judged.iter().map(|(_, p)| p.checkpoints as f64).collect();
    let rho = if judged.len() >= 2 { spearman(&defects, &counts) } else { f64::NAN };
    let rho = rho.is_finite().then_some(rho);
    let b = Condition {
        holds: rho.is_some_and(|r| r > 0.0),
        detail: match rho {
            Some(r) => format!("Spearman rho(defect, checkpoints) = {r:.4} over {} probes", judged.len()),
            None => "Spearman rho undefined (a constant defect or checkpoint count)".into(),
        },
        value: rho,
    };
    let mean_of = |ps: &[&ProbeRecord], f: fn(&ProbeRecord) -> Option<f64>| -> Option<f64> {
        let v: Vec<f64> = ps.iter().filter_map(|p| f(p)).collect();
        (!v.is_empty()).then(|| mean(&v))
    };
    let cos_low = mean_of(&low, |p| p.grad_cos_chosen);
    let c = Condition {
        holds: cos_low.is_some_and(|c| c >= COSINE_OK),
        detail: format!(
            "mean gradient cosine at the chosen k over {} low-defect probes = {}",
            low.len(),
            fmt_opt(cos_low)
        ),
        value: cos_low,
    };
    let cos_high = mean_of(&high, |p| p.grad_cos_kmax);
    let d = Condition {
        holds: cos_high.is_some_and(|c| c < COSINE_OK),
        detail: format!("mean gradient cosine at k_max over {} high-defect probes = {}", high.len(), fmt_opt(cos_high)),
        value: cos_high,
    };
    let failed: Vec<String> = [("a", &a), ("b", &b), ("c", &c), ("d", &d)]
        .iter()
        .filter(|(_, c)| !c.holds)
        .map(|(l, _)| l.to_string())
        .collect();

    let finals: Vec<&ProbeRecord> = idea_full.iter().filter_map(|r| r.probes.last()).collect();
    let final_defects: Option<Vec<f64>> = finals.iter().map(|p| p.defect_mean).collect();
    let observed_mean_defect = final_defects.filter(|v| !v.is_empty()).map(|v| mean(&v));
    let observed_mean_checkpoints =
        (!finals.is_empty()).then(|| mean(&finals.iter().map(|p| p.checkpoints as f64).collect::<Vec<_>>()));

    let ck_low = mean_of(&low, |p| Some(p.checkpoints as f64));
    let ck_high = mean_of(&high, |p| Some(p.checkpoints as f64));
    let relation = format!(
        "{policy} policy: mean checkpoints {} over {} probes with defect <= {tau} vs {} over {} probes with defect > {tau}",
        fmt_opt(ck_low),
        low.len(),
        fmt_opt(ck_high),
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
    let confirmed = failed.is_empty();
    (
        MechanismSignature {
            prediction: PREDICTION.into(),
            observed_mean_defect,
            observed_mean_checkpoints,
            low_defect_checkpoint_relation: relation,
            confirmed,
        },
        MechanismDetail {
            tau,
            policy: policy.into(),
            n_probes: probes.len(),
            a_both_regimes: a,
            b_spearman_positive: b,
            c_low_defect_cosine: c,
            d_high_defect_needs_dense: d,
            failed,
            traces,
        },
    )
}
