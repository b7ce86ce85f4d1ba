//! The CLI's text summaries of a bench report and of a study report.

pub mod bench;
pub mod frontier;
pub mod scale;
pub mod study;
