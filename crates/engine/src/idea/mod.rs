//! The idea arm: reversal-defect adaptive checkpointing. `probe` measures a trained model's
//! reversal defects and gradient cosines, `frontier` what exact checkpointing would have
//! cost at its memory, and `rule` is the arm's `GradientRule`; its backward pass is the
//! reversal schedule (`crate::schedule::reversal`). The interval policy and the mechanism judge are plain data
//! (`rdbench_core::policy`, `rdbench_core::mechanism`). Training never imports this module:
//! the protocol hands training an `IdeaRule`.

pub mod cost;
pub mod frontier;
pub mod probe;
pub mod rule;

pub use rule::IdeaRule;
