//! Rank enrichment (spec §7): a run of a ranked model gains one rank at the end of every
//! window of epochs in which its training loss improved too little, up to r_max. Each run
//! decides on its own loss curve, so the runs of one population may have different ranks.

use rdbench_core::records::RankStep;
use serde::{Deserialize, Serialize};

/// When a run gains a rank.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Enrichment {
    /// Epochs per window (windows end after epochs window, 2 window, ..).
    pub window: usize,
    /// A window whose relative loss improvement is below this adds a rank.
    pub threshold: f64,
}

impl Enrichment {
    /// Whether a run with epoch losses `curve` (one per finished epoch) gains a rank now:
    /// the last epoch closes a window, and from that window's first epoch to its last the
    /// mean training loss fell by less than `threshold` of the first (rose, or stayed). A
    /// window of one epoch compares the epoch before it. A null loss (diverged) never enriches.
    pub fn due(&self, curve: &[Option<f64>]) -> bool {
        let (n, w) = (curve.len(), self.window.max(1));
        if n == 0 || !n.is_multiple_of(w) {
            return false;
        }
        let first = if w == 1 { n.checked_sub(2) } else { Some(n - w) };
        match (first.and_then(|i| curve[i]), curve[n - 1]) {
            (Some(f), Some(l)) if f.is_finite() && l.is_finite() && f > 0.0 => (f - l) / f < self.threshold,
            _ => false,
        }
    }
}

/// Ranks of a population's runs while it trains, with each run's history.
#[derive(Clone, Debug)]
pub struct Ranks {
    rule: Enrichment,
    max: usize,
    /// Current rank of each run.
    pub rank: Vec<usize>,
    /// (epoch, rank) of each run: its starting rank at epoch 0, then one entry per enrichment.
    pub history: Vec<Vec<RankStep>>,
}

impl Ranks {
    /// `runs` runs starting at `r0`, growing up to `max` by `rule`.
    pub fn new(rule: Enrichment, (r0, max): (usize, usize), runs: usize) -> Self {
        Ranks { rule, max, rank: vec![r0; runs], history: vec![vec![RankStep { epoch: 0, rank: r0 }]; runs] }
    }

    /// After a finished epoch (`curve` holds the run's losses so far; the next epoch is
    /// `next_epoch`): the new rank if run `run` gains one now.
    pub fn after_epoch(&mut self, run: usize, curve: &[Option<f64>], next_epoch: usize) -> Option<usize> {
        if self.rank[run] >= self.max || !self.rule.due(curve) {
            return None;
        }
        self.rank[run] += 1;
        self.history[run].push(RankStep { epoch: next_epoch, rank: self.rank[run] });
        Some(self.rank[run])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: Enrichment = Enrichment { window: 5, threshold: 0.05 };

    fn curve(v: &[f64]) -> Vec<Option<f64>> {
        v.iter().map(|&x| Some(x)).collect()
    }

    #[test]
    fn only_at_window_ends_and_only_when_the_loss_stalls() {
        // 4% over the window (1.0 -> 0.96): enrich; 6%: not; between window ends: never.
        assert!(RULE.due(&curve(&[1.0, 0.99, 0.98, 0.97, 0.96])));
        assert!(!RULE.due(&curve(&[1.0, 0.99, 0.98, 0.97, 0.94])));
        assert!(!RULE.due(&curve(&[1.0, 1.0, 1.0, 1.0])));
        assert!(!RULE.due(&curve(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0])));
        // The second window compares its own first and last epochs (5 and 9).
        assert!(RULE.due(&curve(&[9.0, 5.0, 3.0, 2.0, 1.0, 0.5, 0.5, 0.5, 0.49, 0.49])));
        assert!(!RULE.due(&curve(&[1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.4, 0.3, 0.2, 0.1])));
        // A loss that rose counts as no improvement; a null loss never enriches.
        assert!(RULE.due(&curve(&[1.0, 1.1, 1.2, 1.3, 1.4])));
        assert!(!RULE.due(&[Some(1.0), Some(1.0), Some(1.0), Some(1.0), None]));
        let w1 = Enrichment { window: 1, threshold: 0.05 };
        assert!(!w1.due(&curve(&[1.0])));
        assert!(w1.due(&curve(&[1.0, 0.97])));
        assert!(!w1.due(&curve(&[1.0, 0.9])));
    }

    #[test]
    fn one_rank_at_a_time_up_to_the_cap() {
        let mut r = Ranks::new(RULE, (2, 3), 2);
        let flat = curve(&[1.0; 5]);
        assert_eq!(r.after_epoch(0, &flat, 5), Some(3));
        assert_eq!(r.after_epoch(0, &curve(&[1.0; 10]), 10), None, "capped at r_max");
        assert_eq!(r.rank, vec![3, 2]);
        assert_eq!(r.history[0], vec![RankStep { epoch: 0, rank: 2 }, RankStep { epoch: 5, rank: 3 }]);
        assert_eq!(r.history[1], vec![RankStep { epoch: 0, rank: 2 }]);
    }
}
