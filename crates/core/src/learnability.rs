//! Whether an arm learned the task: its full runs' test metric against the track's trivial
//! predictor (`Track::reference`, what a model that learned nothing scores). A comparison of
//! two arms says nothing about accuracy when the baseline did not learn: both may sit at the
//! trivial predictor, and their difference is noise about it.

use crate::track::Direction;
use serde::{Deserialize, Serialize};

/// A lower-is-better metric (an MSE) learned when it is at most this fraction of the
/// trivial predictor's: the model removed 90% of the error a constant leaves.
pub const ERROR_FACTOR: f64 = 0.1;

/// A higher-is-better metric (an accuracy) learned when it beats the trivial predictor by
/// at least this much. On MNIST-1D's 1,000 test sequences chance's standard error is about
/// 0.01, so 0.1 is ten of them, and it lies far below every model that learned in the study
/// (lowest full run 0.298, rev_ode_small) while a model at 0.1133 against 0.1 fails it.
pub const ACCURACY_MARGIN: f64 = 0.1;

/// The metric an arm must reach to have learned, given the trivial predictor's `reference`.
pub fn threshold(direction: Direction, reference: f64) -> f64 {
    match direction {
        Direction::LowerIsBetter => ERROR_FACTOR * reference,
        Direction::HigherIsBetter => reference + ACCURACY_MARGIN,
    }
}

/// Whether `metric` passes the rule against `reference`.
pub fn learned(direction: Direction, metric: f64, reference: f64) -> bool {
    let bar = threshold(direction, reference);
    match direction {
        Direction::LowerIsBetter => metric <= bar,
        // An accuracy is a ratio of counts and the bar a sum of two decimals: 0.2 + 0.1 is
        // 0.30000000000000004 in f64, and an accuracy of 0.3 reaches it.
        Direction::HigherIsBetter => metric >= bar - 1e-9,
    }
}

/// The rule in words, as the report states it.
pub fn rule(direction: Direction, metric: &str) -> String {
    match direction {
        Direction::LowerIsBetter => {
            format!("learned when the {metric} is at most {ERROR_FACTOR} x the trivial predictor's")
        }
        Direction::HigherIsBetter => {
            format!("learned when the {metric} is at least the trivial predictor's + {ACCURACY_MARGIN}")
        }
    }
}

/// The report's `task.learnability`: the rule applied to each arm's full runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Learnability {
    /// The rule in words.
    pub rule: String,
    /// The test metric an arm must reach (from the trivial predictor's `task.reference`).
    pub threshold: f64,
    /// The baseline's full runs.
    pub baseline: ArmLearned,
    /// The idea's full runs.
    pub idea: ArmLearned,
    /// Whether the comparison says nothing about the metric: the baseline's mean did not
    /// learn.
    pub comparison_void: bool,
}

/// The rule applied to one arm's full runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmLearned {
    /// Whether the arm's mean test metric passes; null when the mean is (a diverged run).
    pub learned: Option<bool>,
    /// Full runs whose test metric passes (a diverged run does not).
    pub seeds_learned: usize,
    /// Full runs.
    pub n: usize,
}

impl ArmLearned {
    /// The rule applied to an arm's `mean` and `per_seed` test metrics.
    pub fn of(direction: Direction, reference: f64, mean: Option<f64>, per_seed: &[Option<f64>]) -> ArmLearned {
        ArmLearned {
            learned: mean.map(|m| learned(direction, m, reference)),
            seeds_learned: per_seed.iter().flatten().filter(|&&m| learned(direction, m, reference)).count(),
            n: per_seed.len(),
        }
    }
}

impl Learnability {
    /// The rule applied to both arms, against the trivial predictor's `reference` score.
    pub fn judge(
        direction: Direction,
        metric: &str,
        reference: f64,
        baseline: (Option<f64>, &[Option<f64>]),
        idea: (Option<f64>, &[Option<f64>]),
    ) -> Learnability {
        let baseline = ArmLearned::of(direction, reference, baseline.0, baseline.1);
        Learnability {
            rule: rule(direction, metric),
            threshold: threshold(direction, reference),
            comparison_void: baseline.learned == Some(false),
            idea: ArmLearned::of(direction, reference, idea.0, idea.1),
            baseline,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_learns_at_a_tenth_of_the_trivial_one() {
        let d = Direction::LowerIsBetter;
        // The adding problem's constant 1 scores about 1/6: 0.0166 learned, 0.17 not.
        assert!(learned(d, 0.0166, 1.0 / 6.0));
        assert!(learned(d, 0.05, 0.5));
        assert!(!learned(d, 0.0501, 0.5));
        assert!(!learned(d, 0.1681, 0.1535));
        assert_eq!(threshold(d, 0.5), 0.05);
    }

    #[test]
    fn an_accuracy_learns_a_margin_above_the_trivial_one() {
        let d = Direction::HigherIsBetter;
        assert!(!learned(d, 0.1133, 0.1));
        assert!(learned(d, 0.298, 0.1));
        assert!(learned(d, 0.3, 0.2));
        assert!(!learned(d, 0.29, 0.2));
        assert_eq!(threshold(d, 0.095), 0.095 + 0.1);
    }

    #[test]
    fn the_comparison_is_void_when_the_baselines_mean_did_not_learn() {
        let d = Direction::LowerIsBetter;
        // Reference 1: learned at 0.1 or below.
        let l = Learnability::judge(
            d,
            "test MSE",
            1.0,
            (Some(0.3), &[Some(0.05), Some(0.55)]),
            (Some(0.05), &[Some(0.02), Some(0.08)]),
        );
        assert_eq!(l.baseline, ArmLearned { learned: Some(false), seeds_learned: 1, n: 2 });
        assert_eq!(l.idea, ArmLearned { learned: Some(true), seeds_learned: 2, n: 2 });
        assert!(l.comparison_void);
        assert_eq!(l.threshold, 0.1);
        assert_eq!(l.rule, "learned when the test MSE is at most 0.1 x the trivial predictor's");
        // A diverged baseline run: no mean, so no verdict on the mean, and not void.
        let l = Learnability::judge(d, "test MSE", 1.0, (None, &[Some(0.05), None]), (Some(0.05), &[Some(0.05)]));
        assert_eq!(l.baseline, ArmLearned { learned: None, seeds_learned: 1, n: 2 });
        assert!(!l.comparison_void);
    }
}
