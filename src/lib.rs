//! Reversal-defect adaptive checkpointing bench.
//!
//! The pipeline: [`track`] → [`model`] → [`train`] → [`probe`] → [`protocol`] → [`stats`]
//! → [`report`]. Two thin doors drive it: the native CLI (`src/main.rs`, [`cli`]) and the
//! wasm bindings for the browser worker.

pub mod config;
pub mod error;
pub mod model;
pub mod policy;
pub mod probe;
pub mod progress;
pub mod track;
pub mod train;
pub mod backend;
pub mod mechanism;
pub mod protocol;
pub mod report;
pub mod stats;
pub mod summary;

#[cfg(not(target_arch = "wasm32"))]
pub mod alloc_count;
#[cfg(not(target_arch = "wasm32"))]
pub mod benchmark;
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
