//! The idea arm: reversal-defect adaptive checkpointing, in one place. `policy` (interval
//! from a probe) and `mechanism` (judging the probes) are plain data and need no engine;
//! `probe`, `checkpointed` (the backward pass) and `rule` (the arm's `GradientRule`) run
//! on burn. Training never imports this module: the protocol hands training an `IdeaRule`.

pub mod mechanism;
pub mod policy;

#[cfg(feature = "engine")]
pub mod checkpointed;
#[cfg(feature = "engine")]
pub mod probe;
#[cfg(feature = "engine")]
pub mod rule;

#[cfg(feature = "engine")]
pub use rule::{IDEA_STEP_WEIGHT, IdeaRule};
