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

/// Which end of the lr grid an arm's best lr sits at, if it does: the sweep then cannot
/// tell whether an lr beyond the grid would do better. None for a grid of one lr (nothing
/// was chosen) and for a best lr whose sweep mean is not finite (every lr failed; the
/// divergence warnings say so).
pub fn lr_at_edge(means: &[(f64, Option<f64>)], best: f64) -> Option<GridEdge> {
    if means.len() < 2 || !means.iter().any(|&(lr, m)| lr == best && m.is_some_and(f64::is_finite)) {
        return None;
    }
    let lo = means.iter().map(|m| m.0).fold(f64::INFINITY, f64::min);
    let hi = means.iter().map(|m| m.0).fold(f64::NEG_INFINITY, f64::max);
    if best == lo {
        Some(GridEdge::Smallest)
    } else if best == hi {
        Some(GridEdge::Largest)
    } else {
        None
    }
}

/// An end of the lr grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridEdge {
    /// The smallest lr.
    Smallest,
    /// The largest lr.
    Largest,
}

impl GridEdge {
    /// The report's warning for `arm`'s best lr `best` at this end of `lrs`.
    pub fn warning(self, arm: &str, best: f64, lrs: &[f64]) -> String {
        let grid: Vec<String> = lrs.iter().map(|l| l.to_string()).collect();
        let (end, beyond, way) = match self {
            GridEdge::Smallest => ("smallest", "a smaller", "below"),
            GridEdge::Largest => ("largest", "a larger", "above"),
        };
        format!(
            "the {arm} arm's best lr {best} is the {end} of the lr grid ({}): {beyond} lr may do better, so the \
             comparison may not be at this arm's best; extend the lr grid {way} {best}",
            grid.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_best_lr_at_either_end_of_the_grid_is_named_with_the_way_to_extend_it() {
        let m = |a: f64, b: f64, c: f64| vec![(0.003, Some(a)), (0.01, Some(b)), (0.03, Some(c))];
        assert_eq!(lr_at_edge(&m(0.1, 0.2, 0.3), 0.003), Some(GridEdge::Smallest));
        assert_eq!(lr_at_edge(&m(0.3, 0.2, 0.1), 0.03), Some(GridEdge::Largest));
        assert_eq!(lr_at_edge(&m(0.3, 0.1, 0.2), 0.01), None);
        // One lr chose nothing; a best lr that failed is said by the divergence warnings.
        assert_eq!(lr_at_edge(&[(0.01, Some(0.1))], 0.01), None);
        assert_eq!(lr_at_edge(&[(0.003, None), (0.01, None)], 0.003), None);
        // The grid need not be sorted.
        assert_eq!(lr_at_edge(&[(0.03, Some(0.1)), (0.003, Some(0.2))], 0.03), Some(GridEdge::Largest));
        assert_eq!(
            GridEdge::Smallest.warning("idea", 0.003, &[0.003, 0.01, 0.03]),
            "the idea arm's best lr 0.003 is the smallest of the lr grid (0.003, 0.01, 0.03): a smaller lr may do \
             better, so the comparison may not be at this arm's best; extend the lr grid below 0.003"
        );
    }

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
