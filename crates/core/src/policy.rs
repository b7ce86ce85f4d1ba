//! Interval policies of the idea arm: from a probe's defects to a checkpoint interval k.

use serde::{Deserialize, Serialize};

/// How the idea arm picks its checkpoint interval k from a probe (spec §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// k from the one-step defect: 1 above tau, else clamp(floor(tau / defect), 2, k_max).
    OneStep,
    /// k = the largest power of two whose chained defect is <= tau, else 1.
    Chained,
}

impl Policy {
    /// The config/CLI spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::OneStep => "one_step",
            Policy::Chained => "chained",
        }
    }

    /// Every policy, in the order the page and the CLI list them.
    pub const ALL: [Policy; 2] = [Policy::OneStep, Policy::Chained];
}

/// k from the one-step defect: 1 if defect > tau, else clamp(floor(tau / defect), 2, k_max).
/// A non-finite defect means reversal cannot be trusted: k = 1.
pub fn one_step_k(defect: f64, tau: f64, k_max: usize) -> usize {
    if !defect.is_finite() || defect > tau {
        return 1;
    }
    let ratio = tau / defect; // +inf when the defect is exactly 0
    let k = if ratio >= k_max as f64 { k_max } else { ratio.floor() as usize };
    k.clamp(2, k_max)
}

/// The chained-defect intervals probed: 2, 4, 8, .. up to k_max, and k_max itself when it
/// is not a power of two.
pub fn chained_ks(k_max: usize) -> Vec<usize> {
    let mut ks = Vec::new();
    let mut k = 2;
    while k <= k_max {
        ks.push(k);
        k *= 2;
    }
    if ks.last() != Some(&k_max) {
        ks.push(k_max);
    }
    ks
}

/// k = the largest probed interval whose chained defect is <= tau, or 1 if none.
pub fn chained_k(chained: &[(usize, f64)], tau: f64) -> usize {
    chained.iter().filter(|(_, d)| d.is_finite() && *d <= tau).map(|(k, _)| *k).max().unwrap_or(1)
}

/// The interval chosen by `policy`.
pub fn choose_k(policy: Policy, defect: f64, chained: &[(usize, f64)], tau: f64, k_max: usize) -> usize {
    match policy {
        Policy::OneStep => one_step_k(defect, tau, k_max),
        Policy::Chained => chained_k(chained, tau),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_table() {
        assert_eq!(one_step_k(0.5, 0.08, 16), 1);
        assert_eq!(one_step_k(0.0800001, 0.08, 16), 1);
        assert_eq!(one_step_k(0.08, 0.08, 16), 2); // floor(1) clamped up to 2
        assert_eq!(one_step_k(0.02, 0.08, 16), 4);
        assert_eq!(one_step_k(0.03, 0.08, 16), 2);
        assert_eq!(one_step_k(0.001, 0.08, 16), 16);
        assert_eq!(one_step_k(0.0, 0.08, 16), 16);
        assert_eq!(one_step_k(f64::NAN, 0.08, 16), 1);
    }

    #[test]
    fn chained_table() {
        assert_eq!(chained_ks(16), vec![2, 4, 8, 16]);
        assert_eq!(chained_ks(12), vec![2, 4, 8, 12]);
        assert_eq!(chained_ks(2), vec![2]);
        let c = [(2, 0.01), (4, 0.05), (8, 0.09), (16, 0.5)];
        assert_eq!(chained_k(&c, 0.08), 4);
        assert_eq!(chained_k(&c, 0.001), 1);
        assert_eq!(chained_k(&c, 1.0), 16);
        // not monotone: the largest passing k wins
        assert_eq!(chained_k(&[(2, 0.5), (4, 0.01)], 0.08), 4);
    }
}
