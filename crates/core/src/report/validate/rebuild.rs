//! Rebuild and compare: the report `report::build` makes from the file's own `config` and
//! `runs` (with the file's environment, which records where and when it ran and is not
//! derivable), compared with the file path by path. Every block `build` derives from the
//! runs is checked this way, whichever it is.

use super::diff::{differences, json};
use super::{Checker, Report};
use crate::config::BenchConfig;
use crate::records::RunRecord;
use serde_json::Value;

/// Name every path where the file (`value`) differs from the rebuilt report.
pub(super) fn check(report: &Report, cfg: &BenchConfig, runs: &[RunRecord], value: &Value, c: &mut Checker) {
    let rebuilt = json(&crate::report::build(cfg, runs.to_vec(), report.environment.clone()));
    let mut out = Vec::new();
    differences(value, &rebuilt, "", &mut out);
    for (path, what) in out {
        c.fail_once(&path, format!("{what} from the report's own config and runs"));
    }
}
