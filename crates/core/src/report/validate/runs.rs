//! The runs of a report against its config: exactly the protocol's runs (each arm's sweep
//! over the lr grid, its full runs at its best lr), and each record consistent in itself: a metric exactly when it did not diverge, no
//! probes in the baseline, and in the idea arm each probe's k the policy's choice from the
//! probe's own defects, with the checkpoints and bytes that k stores.

use super::diff::shown;
use super::{Checker, join};
use crate::config::BenchConfig;
use crate::policy::{chained_ks, choose_k};
use crate::records::{Arm, RunRecord, RunSpec, full_runs, sweep_runs};
use crate::report::sweep::{best_lr, sweep_means};

fn describe(s: &RunSpec) -> String {
    format!("the {} {} run at lr {} seed {}", s.arm.as_str(), s.phase.as_str(), s.lr, s.seed)
}

/// The runs the protocol trains under `cfg`, given the runs' sweep (which picks the full lr).
fn protocol_runs(cfg: &BenchConfig, runs: &[RunRecord]) -> Vec<RunSpec> {
    let arms = [Arm::Baseline, Arm::Idea];
    let mut specs: Vec<RunSpec> = arms.iter().flat_map(|&a| sweep_runs(a, &cfg.lrs, cfg.n_sweep_seeds)).collect();
    for arm in arms {
        let lr = best_lr(
            &sweep_means(&cfg.lrs, runs, arm),
            cfg.task().map_or(crate::track::Direction::LowerIsBetter, |t| t.direction()),
        )
        .expect("a valid config has an lr grid");
        specs.extend(full_runs(arm, lr, cfg.n_seeds));
    }
    specs
}

pub(super) fn check(cfg: &BenchConfig, runs: &[RunRecord], c: &mut Checker) {
    let specs = protocol_runs(cfg, runs);
    let spec_of = |r: &RunRecord| RunSpec { arm: r.arm, phase: r.phase, lr: r.lr, seed: r.seed };
    let mut seen: Vec<RunSpec> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let path = format!("runs[{i}]");
        let spec = spec_of(r);
        if !specs.contains(&spec) {
            c.fail(&path, format!("{} is not a run of this config's protocol", describe(&spec)));
        } else if seen.contains(&spec) {
            c.fail(&path, format!("{} is recorded twice", describe(&spec)));
        }
        seen.push(spec);
        record(cfg, r, &path, c);
    }
    for s in specs.iter().filter(|s| !seen.contains(s)) {
        c.fail("runs", format!("{} is missing", describe(s)));
    }
}

/// One run record against the config.
fn record(cfg: &BenchConfig, r: &RunRecord, path: &str, c: &mut Checker) {
    match r.metric {
        Some(m) if r.diverged => c.fail(&join(path, "metric"), format!("{m}, though the run diverged")),
        None if !r.diverged => c.fail(&join(path, "metric"), "null, though the run did not diverge"),
        Some(m) if !m.is_finite() || m < 0.0 => {
            c.fail(&join(path, "metric"), format!("an MSE must be finite and >= 0, found {m}"))
        }
        _ => {}
    }
    if r.arm == Arm::Baseline {
        if !r.probes.is_empty() {
            c.fail(&join(path, "probes"), "a baseline run has no probes: dense BPTT chooses no interval");
        }
        if let Some(s) = r.mean_stored_states {
            c.fail(&join(path, "mean_stored_states"), format!("{s}, though a baseline run stores every state"));
        }
        return;
    }
    let Some(t) = cfg.resolved_seq_len() else { return };
    let state_bytes = (cfg.batch_size * cfg.hidden_size * 4) as u64;
    let ks = chained_ks(cfg.k_max);
    for (j, p) in r.probes.iter().enumerate() {
        let at = format!("{path}.probes[{j}]");
        let probed: Vec<usize> = p.chained.iter().map(|d| d.k).collect();
        if probed != ks {
            c.fail(&join(&at, "chained"), format!("probes k = {probed:?}, but k_max {} probes {ks:?}", cfg.k_max));
            continue;
        }
        let chained: Vec<(usize, f64)> = p.chained.iter().map(|d| (d.k, d.defect.unwrap_or(f64::NAN))).collect();
        let want = choose_k(cfg.policy, p.defect_mean.unwrap_or(f64::NAN), &chained, cfg.tau, cfg.k_max);
        if p.k != want {
            c.fail(
                &join(&at, "k"),
                format!(
                    "{} but the {} policy chooses k = {want} from this probe's defects (tau {}, k_max {})",
                    p.k,
                    cfg.policy.as_str(),
                    cfg.tau,
                    cfg.k_max
                ),
            );
        }
        let states = t.div_ceil(p.k.max(1)) + 1;
        if p.checkpoints != states {
            c.fail(
                &join(&at, "checkpoints"),
                format!("{} but k = {} keeps ceil({t} / k) + 1 = {states}", p.checkpoints, p.k),
            );
        }
        if p.stored_bytes != p.checkpoints as u64 * state_bytes {
            let want = p.checkpoints as u64 * state_bytes;
            c.fail(
                &join(&at, "stored_bytes"),
                format!("{} but checkpoints x batch x hidden x 4 = {want}", p.stored_bytes),
            );
        }
        if p.dense_bytes != (t + 1) as u64 * state_bytes {
            let want = (t + 1) as u64 * state_bytes;
            c.fail(&join(&at, "dense_bytes"), format!("{} but (T + 1) x batch x hidden x 4 = {want}", p.dense_bytes));
        }
    }
    // Probe e's k drives every minibatch of epoch e, so a run that trained every epoch stored
    // the mean of those probes' checkpoints per minibatch.
    if !r.diverged && r.probes.len() == cfg.epochs + 1 {
        let per_epoch: Vec<f64> = r.probes[..cfg.epochs].iter().map(|p| p.checkpoints as f64).collect();
        let want = crate::stats::mean(&per_epoch);
        if r.mean_stored_states != Some(want) {
            c.fail(
                &join(path, "mean_stored_states"),
                format!("{} but its probes' intervals store {want} states per minibatch", shown(&r.mean_stored_states)),
            );
        }
    }
}
