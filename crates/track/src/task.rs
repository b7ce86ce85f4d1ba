//! What a track asks of a model: the loss it trains on, where the loss sits (every step or
//! the last one), and the metric a run is scored by with its direction. The config check, the
//! report (its `metric_direction`, the verdict, wins, the best lr) and the engine's loss all
//! read it from here.

/// Which way a metric improves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Smaller is better (an error).
    LowerIsBetter,
    /// Larger is better (an accuracy).
    HigherIsBetter,
}

impl Direction {
    /// Both, in the report's order of appearance.
    pub const ALL: [Direction; 2] = [Direction::LowerIsBetter, Direction::HigherIsBetter];

    /// The report's `metric_direction` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "lower is better",
            Direction::HigherIsBetter => "higher is better",
        }
    }

    /// The direction a report spells; None for anything else.
    pub fn parse(s: &str) -> Option<Direction> {
        Direction::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// `change` (new - old) expressed as an improvement: positive when it is better.
    pub fn gain(self, change: f64) -> f64 {
        match self {
            Direction::LowerIsBetter => -change,
            Direction::HigherIsBetter => change,
        }
    }

    /// A score to minimise: the metric itself, or its negation when higher is better.
    pub fn cost(self, metric: f64) -> f64 {
        -self.gain(metric)
    }
}

/// A track's task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    /// Predict every step's target from that step's readout: the loss is the mean squared
    /// error over steps and features, and so is the metric (lower is better).
    Regression,
    /// Predict one target per sequence from the readout of its last hidden state (the
    /// adding problem): the loss and the metric are the mean squared error over sequences
    /// and features (lower is better).
    LastStepRegression,
    /// Classify each sequence from the readout of its last hidden state: the loss is the
    /// cross-entropy of the softmax, the metric is accuracy (higher is better) and the
    /// cross-entropy is reported beside it.
    Classification {
        /// Classes (the readout's width).
        classes: usize,
    },
}

impl Task {
    /// Which way the metric improves.
    pub fn direction(self) -> Direction {
        match self {
            Task::Regression | Task::LastStepRegression => Direction::LowerIsBetter,
            Task::Classification { .. } => Direction::HigherIsBetter,
        }
    }

    /// The metric's name ("MSE", "accuracy"); "test " or "validation " goes before it.
    pub fn metric(self) -> &'static str {
        match self {
            Task::Regression | Task::LastStepRegression => "MSE",
            Task::Classification { .. } => "accuracy",
        }
    }

    /// What a full run is scored by, as the report spells it: "test MSE", "test accuracy".
    pub fn test_metric(self) -> String {
        format!("test {}", self.metric())
    }

    /// The training loss, as the report spells it.
    pub fn loss(self) -> &'static str {
        match self {
            Task::Regression | Task::LastStepRegression => "mse",
            Task::Classification { .. } => "cross_entropy",
        }
    }

    /// The figure reported beside the metric, when it is not the metric itself: the
    /// cross-entropy of a classification (lower is better).
    pub fn secondary(self) -> Option<&'static str> {
        match self {
            Task::Regression | Task::LastStepRegression => None,
            Task::Classification { .. } => Some("cross-entropy"),
        }
    }

    /// Where the loss reads the model out: "every_step" or "last_step".
    pub fn readout(self) -> &'static str {
        match self {
            Task::Regression => "every_step",
            Task::LastStepRegression | Task::Classification { .. } => "last_step",
        }
    }

    /// Target steps of a sequence of `t` steps.
    pub fn target_steps(self, t: usize) -> usize {
        if self.every_step() { t } else { 1 }
    }

    /// Whether the loss reads the model out at every step (else at the last step alone).
    pub fn every_step(self) -> bool {
        matches!(self, Task::Regression)
    }

    /// Whether the targets are numbers to regress (else one-hot classes).
    pub fn is_regression(self) -> bool {
        !matches!(self, Task::Classification { .. })
    }

    /// The report's `classes`: the readout's width of a classification, None otherwise.
    pub fn classes(self) -> Option<usize> {
        match self {
            Task::Classification { classes } => Some(classes),
            Task::Regression | Task::LastStepRegression => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gain_is_positive_when_the_metric_improves() {
        assert_eq!(Direction::LowerIsBetter.gain(-0.5), 0.5);
        assert_eq!(Direction::HigherIsBetter.gain(-0.5), -0.5);
        assert!(Direction::HigherIsBetter.cost(0.9) < Direction::HigherIsBetter.cost(0.8));
        assert!(Direction::LowerIsBetter.cost(0.1) < Direction::LowerIsBetter.cost(0.2));
        for d in Direction::ALL {
            assert_eq!(Direction::parse(d.as_str()), Some(d));
        }
        assert_eq!(Direction::parse("lower_is_better"), None);
    }
}
