//! Rebuild and compare: the report `report::build` makes from the file's own `config` and
//! `runs` (with the file's environment, which records where and when it ran and is not
//! derivable), compared with the file path by path. Every block `build` derives from the
//! runs is checked this way, whichever it is; and every key the rebuild writes must be in
//! the file (`structure::check_missing`), so no check is skipped by leaving its key out.

use super::Checker;
use super::diff::{differences, json};
use crate::context::BenchContext;
use crate::records::RunRecord;
use crate::report::Report;
use serde_json::Value;

/// The report `report::build` makes from `report`'s config (resolved: `ctx`) and runs, with
/// its environment.
pub(super) fn rebuilt(report: &Report, ctx: &BenchContext, runs: &[RunRecord]) -> Value {
    json(&crate::report::build(ctx, runs.to_vec(), report.environment.clone()))
}

/// Name every path where the file (`value`) differs from the rebuilt report.
pub(super) fn check(value: &Value, rebuilt: &Value, c: &mut Checker) {
    let mut out = Vec::new();
    differences(value, rebuilt, "", &mut out);
    for (path, what) in out {
        c.fail_once(&path, format!("{what} from the report's own config and runs"));
    }
}
