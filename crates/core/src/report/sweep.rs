//! The sweep's rules (spec §4.2–4.3): an lr's sweep mean and the best lr. The protocol
//! picks the full runs' lr with these, and validation checks a report's best_cfg with them.

use crate::records::{Arm, Phase, RunRecord};
use crate::track::Direction;

/// Mean metric of `arm`'s sweep runs at each lr of `lrs`, in grid order; None when a run
/// of that lr diverged (or none was found).
pub fn sweep_means(lrs: &[f64], runs: &[RunRecord], arm: Arm) -> Vec<(f64, Option<f64>)> {
    lrs.iter()
        .map(|&lr| {
            let at: Vec<&RunRecord> =
                runs.iter().filter(|r| r.arm == arm && r.phase == Phase::Sweep && r.lr == lr).collect();
            let metrics: Option<Vec<f64>> = at.iter().map(|r| r.metric).collect();
            (lr, metrics.filter(|m| !m.is_empty()).map(|m| crate::stats::mean(&m)))
        })
        .collect()
}

/// The best lr: the best sweep mean in the metric's `direction` (lowest MSE, highest
/// accuracy), a null or non-finite mean counting as the worst, ties to the smaller lr. None
/// for an empty grid.
pub fn best_lr(means: &[(f64, Option<f64>)], direction: Direction) -> Option<f64> {
    let score = |m: Option<f64>| m.filter(|m| m.is_finite()).map_or(f64::INFINITY, |m| direction.cost(m));
    means.iter().min_by(|a, b| score(a.1).total_cmp(&score(b.1)).then(a.0.total_cmp(&b.0))).map(|&(lr, _)| lr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_mean_wins_diverged_is_infinite_ties_go_to_the_smaller_lr() {
        let low = Direction::LowerIsBetter;
        assert_eq!(best_lr(&[(0.001, Some(0.3)), (0.003, Some(0.1)), (0.01, Some(0.2))], low), Some(0.003));
        assert_eq!(best_lr(&[(0.01, Some(0.1)), (0.001, Some(0.1))], low), Some(0.001));
        assert_eq!(best_lr(&[(0.001, None), (0.01, Some(5.0))], low), Some(0.01));
        assert_eq!(best_lr(&[(0.01, None), (0.001, None)], low), Some(0.001));
        assert_eq!(best_lr(&[(0.01, Some(f64::NAN)), (0.1, Some(1.0))], low), Some(0.1));
        assert_eq!(best_lr(&[], low), None);
    }

    #[test]
    fn highest_accuracy_wins_when_higher_is_better() {
        let high = Direction::HigherIsBetter;
        assert_eq!(best_lr(&[(0.001, Some(0.3)), (0.003, Some(0.1)), (0.01, Some(0.2))], high), Some(0.001));
        assert_eq!(best_lr(&[(0.01, Some(0.5)), (0.001, Some(0.5))], high), Some(0.001));
        // A diverged lr is the worst, even against an accuracy of 0.
        assert_eq!(best_lr(&[(0.001, None), (0.01, Some(0.0))], high), Some(0.01));
        assert_eq!(best_lr(&[(0.01, None), (0.001, None)], high), Some(0.001));
    }
}
