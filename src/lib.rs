//! The native CLI of the bench (`rdbench --help`): its commands over the engine, the text
//! summaries, the timing tool, the journal of finished runs and the counting allocator the
//! memory measurements read.

pub mod alloc_count;
pub mod cli;
pub mod summary;
