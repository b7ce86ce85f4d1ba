//! The verdict of spec §4.8 as a type: its three spellings live here and nowhere else.

use crate::track::Direction;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Outcome of the paired comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// p < alpha and the idea's mean is better (lower for an error, higher for an accuracy).
    #[serde(rename = "significant win")]
    SignificantWin,
    /// p < alpha and the idea's mean is worse.
    #[serde(rename = "significant loss")]
    SignificantLoss,
    /// Anything else (including no testable pair).
    #[serde(rename = "no significant win")]
    NoSignificantWin,
}

impl Verdict {
    /// Every verdict, in the spec's order.
    pub const ALL: [Verdict; 3] = [Verdict::SignificantWin, Verdict::SignificantLoss, Verdict::NoSignificantWin];

    /// The report's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::SignificantWin => "significant win",
            Verdict::SignificantLoss => "significant loss",
            Verdict::NoSignificantWin => "no significant win",
        }
    }

    /// Spec §4.8: a win or loss needs p < alpha and a delta_mean (idea - baseline) that is
    /// better, or worse, in the metric's `direction` (a win is a lower MSE, a higher accuracy).
    pub fn decide(p_value: Option<f64>, delta_mean: Option<f64>, alpha: f64, direction: Direction) -> Verdict {
        match (p_value, delta_mean.map(|d| direction.gain(d))) {
            (Some(p), Some(g)) if p < alpha && g > 0.0 => Verdict::SignificantWin,
            (Some(p), Some(g)) if p < alpha && g < 0.0 => Verdict::SignificantLoss,
            _ => Verdict::NoSignificantWin,
        }
    }

    /// `comparison.system_worked`: true exactly for a significant win.
    pub fn system_worked(self) -> bool {
        self == Verdict::SignificantWin
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decide_table() {
        let low = Direction::LowerIsBetter;
        assert_eq!(Verdict::decide(Some(0.01), Some(-1.0), 0.05, low), Verdict::SignificantWin);
        assert_eq!(Verdict::decide(Some(0.01), Some(1.0), 0.05, low), Verdict::SignificantLoss);
        assert_eq!(Verdict::decide(Some(0.05), Some(-1.0), 0.05, low), Verdict::NoSignificantWin);
        assert_eq!(Verdict::decide(Some(0.2), Some(-1.0), 0.05, low), Verdict::NoSignificantWin);
        assert_eq!(Verdict::decide(Some(0.01), Some(0.0), 0.05, low), Verdict::NoSignificantWin);
        assert_eq!(Verdict::decide(None, Some(-1.0), 0.05, low), Verdict::NoSignificantWin);
        assert_eq!(Verdict::decide(Some(0.01), None, 0.05, low), Verdict::NoSignificantWin);
        // Higher is better: a higher idea accuracy is the win.
        let high = Direction::HigherIsBetter;
        assert_eq!(Verdict::decide(Some(0.01), Some(0.02), 0.05, high), Verdict::SignificantWin);
        assert_eq!(Verdict::decide(Some(0.01), Some(-0.02), 0.05, high), Verdict::SignificantLoss);
        assert_eq!(Verdict::decide(Some(0.01), Some(0.0), 0.05, high), Verdict::NoSignificantWin);
        assert_eq!(Verdict::decide(Some(0.3), Some(0.02), 0.05, high), Verdict::NoSignificantWin);
    }

    #[test]
    fn serde_spelling_is_as_str() {
        for v in Verdict::ALL {
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{}\"", v.as_str()));
            assert_eq!(serde_json::from_str::<Verdict>(&format!("\"{v}\"")).unwrap(), v);
        }
        assert!(serde_json::from_str::<Verdict>("\"a win\"").is_err());
        assert!(Verdict::SignificantWin.system_worked() && !Verdict::SignificantLoss.system_worked());
    }
}
