//! The bench's engine, on burn: [`model`] (recurrent cells, their reversal and step VJP,
//! the fused CPU and GPU kernels) → [`train`] (population training with an arm's
//! `GradientRule`; dense BPTT is the baseline's) → [`idea`] (the idea arm: probe, policy,
//! checkpointed backward pass) → [`protocol`] (phases → runs, resume) → a report built by
//! `rdbench_core::report`. Imports point down that list only; training never imports
//! `idea`. Two thin doors drive it: the native CLI (the root package) and the browser
//! worker (`rdbench-worker`), both through [`host::Host`].
//!
//! "spec §N" in comments means section N of the bench contract, `docs/SPEC.md`.

pub mod backend;
pub mod batch;
pub mod calibrate;
pub mod error;
#[cfg(feature = "cube")]
pub mod fused_check;
pub mod host;
pub mod idea;
pub mod memory;
pub mod model;
pub mod peak;
pub mod protocol;
pub mod rev_gru_check;
pub mod schedule;
pub mod train;
pub mod work;

pub use rdbench_core as core;

/// This build's identity: the crate version and a hash of the source that decides a run's
/// numbers (`build.rs`), e.g. "0.1.0+3f0c2a9d5e6b7a81". Every run record and report carries
/// it; a resume or a merge takes only runs of the same build.
pub const BUILD: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("RDBENCH_SOURCE_HASH"));
