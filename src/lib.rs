//! Reversal-defect adaptive checkpointing bench.
//!
//! The pipeline: [`track`] → `model` → `train` (with an arm's `GradientRule`: the baseline's
//! in `train`, the idea's in [`idea`]) → `protocol` (phases → runs) → [`report`] (runs →
//! report, with [`stats`]). Imports point down that list only. Two thin doors drive it: the native CLI (`src/main.rs`, `cli`) and the wasm
//! bindings of the browser worker (`wasm`). Without the `engine` feature (no burn) the crate
//! is just the report, statistics and config types, which the page's chart module uses.
//!
//! "spec §N" in comments means section N of the bench contract, `docs/SPEC.md`.

pub mod config;
pub mod error;
pub mod idea;
pub mod messages;
pub mod model;
pub mod progress;
pub mod report;
pub mod stats;
pub mod study;
pub mod summary;
pub mod track;

#[cfg(feature = "engine")]
pub mod backend;
#[cfg(feature = "engine")]
pub mod calibrate;
#[cfg(feature = "cube")]
pub mod fused_check;
#[cfg(feature = "engine")]
pub mod protocol;
#[cfg(feature = "engine")]
pub mod train;

#[cfg(not(target_arch = "wasm32"))]
pub mod alloc_count;
#[cfg(all(feature = "engine", not(target_arch = "wasm32")))]
pub mod benchmark;
#[cfg(all(feature = "engine", not(target_arch = "wasm32")))]
pub mod cli;
#[cfg(all(feature = "engine", target_arch = "wasm32"))]
pub mod wasm;
