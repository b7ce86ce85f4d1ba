//! The bench's shared core, with no burn in it: what the engine, the CLI, the browser worker
//! and the page all speak. The configuration ([`config`]: one knob table that the CLI flags,
//! the page's controls, the parser and the run hash follow), the records a bench produces
//! ([`records`], [`progress`]), the worker's messages ([`messages`]), and everything derived
//! from records: the report ([`report`]: build and validate), the statistics ([`stats`]),
//! the idea's interval policy ([`policy`]) and mechanism judge ([`mechanism`]), and the
//! study ([`study`]).
//!
//! "spec §N" in comments means section N of the bench contract, `docs/SPEC.md`.

pub mod config;
pub mod context;
pub mod footprint;
pub mod frontier;
pub mod learnability;
pub mod mechanism;
pub mod messages;
pub mod models;
pub mod optimizer;
pub mod plan;
pub mod policy;
pub mod progress;
pub mod records;
pub mod report;
pub mod rerun;
pub mod scale;
pub mod stats;
pub mod study;

pub use rdbench_track as track;
