//! The runs of a report against its config: exactly the protocol's runs (each arm's sweep
//! over the lr grid, its full runs at its best lr), each trained under this config (its run
//! hash), and each record consistent in itself and with what the config fixes: a metric
//! exactly when it did not diverge, one loss per epoch (null from the epoch it diverged),
//! no probes in the baseline, and in the idea arm one probe before each epoch it trained and
//! one after the last, each probe's k the policy's choice from the probe's own defects, with
//! the checkpoints and bytes that k stores, and the states stored per minibatch between the
//! fewest and the most its probes' intervals keep.

use super::diff::shown;
use super::structure::Era;
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

/// `config` is the file's config object: a knob it does not name did not exist when the
/// report was written, and its runs were hashed without it.
pub(super) fn check(cfg: &BenchConfig, runs: &[RunRecord], config: &serde_json::Value, era: Era, c: &mut Checker) {
    let specs = protocol_runs(cfg, runs);
    let hash = cfg.run_hash_of(&|k| config.get(k).is_some());
    let spec_of = RunRecord::spec;
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
        // Reports from before run hashes were recorded have none; a current one has its own.
        if r.run_hash != hash && !(era == Era::Earlier && r.run_hash.is_empty()) {
            c.fail_once(
                &join(&path, "run_hash"),
                format!(
                    "{:?}, but this report's config hashes to {hash:?}: the run was trained under another config",
                    r.run_hash
                ),
            );
        }
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
    epochs(cfg, r, path, c);
    if r.arm == Arm::Baseline {
        if !r.probes.is_empty() {
            c.fail(&join(path, "probes"), "a baseline run has no probes: dense BPTT chooses no interval");
        }
        if let Some(s) = r.mean_stored_states {
            c.fail(&join(path, "mean_stored_states"), format!("{s}, though a baseline run stores every state"));
        }
        return;
    }
    // A probe before each epoch the run trained (the epoch it diverged in included) and one
    // after the last.
    let trained = r.diverged_at.as_ref().map_or(cfg.epochs, |d| d.epoch.min(cfg.epochs));
    let epochs: Vec<usize> = r.probes.iter().map(|p| p.epoch).collect();
    if epochs != (0..=trained).collect::<Vec<_>>() {
        c.fail(
            &join(path, "probes"),
            format!(
                "probes at epochs {}, but this run is probed at epochs 0 to {trained} (before each epoch it \
                 trained, and after the last of config.epochs {})",
                shown(&epochs),
                cfg.epochs,
            ),
        );
    }
    let Some(t) = cfg.resolved_seq_len() else { return };
    let state_bytes = (cfg.batch_size * cfg.hidden_size * 4) as u64;
    // A model with an information buffer (rev_gru) holds its words with the checkpoints.
    let buffer = crate::models::info(&cfg.model)
        .filter(|m| m.info_buffer)
        .map_or(0, |_| crate::models::buffer_words(t, cfg.forget_bits));
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
        if p.stored_bytes != (p.checkpoints + buffer) as u64 * state_bytes {
            let want = (p.checkpoints + buffer) as u64 * state_bytes;
            let held = if buffer > 0 { format!("(checkpoints + {buffer} buffer words)") } else { "checkpoints".into() };
            c.fail(&join(&at, "stored_bytes"), format!("{} but {held} x batch x hidden x 4 = {want}", p.stored_bytes));
        }
        if p.dense_bytes != (t + 1) as u64 * state_bytes {
            let want = (t + 1) as u64 * state_bytes;
            c.fail(&join(&at, "dense_bytes"), format!("{} but (T + 1) x batch x hidden x 4 = {want}", p.dense_bytes));
        }
    }
    // Probe e's k drives every minibatch of epoch e, so a run that trained every epoch stored
    // the mean of those probes' checkpoints per minibatch, and one that diverged stored
    // between the fewest and the most of the epochs it trained.
    let every_epoch = r.diverged_at.as_ref().is_none_or(|d| d.epoch >= cfg.epochs);
    let drove: Vec<usize> = r.probes.iter().filter(|p| p.epoch < cfg.epochs).map(|p| p.checkpoints + buffer).collect();
    match (r.mean_stored_states, drove.iter().min(), drove.iter().max()) {
        (None, _, _) => c.fail(&join(path, "mean_stored_states"), "null, though an idea run trains at least one step"),
        (Some(s), Some(&lo), Some(&hi)) if !every_epoch && !(lo as f64..=hi as f64).contains(&s) => c.fail(
            &join(path, "mean_stored_states"),
            format!("{s}, but its probes' intervals store {lo} to {hi} states per minibatch"),
        ),
        _ => {}
    }
    if every_epoch && r.probes.len() == cfg.epochs + 1 {
        let per_epoch: Vec<f64> = r.probes[..cfg.epochs].iter().map(|p| (p.checkpoints + buffer) as f64).collect();
        let want = crate::stats::mean(&per_epoch);
        if r.mean_stored_states != Some(want) {
            c.fail(
                &join(path, "mean_stored_states"),
                format!("{} but its probes' intervals store {want} states per minibatch", shown(&r.mean_stored_states)),
            );
        }
    }
}

/// One mean loss per epoch, finite and not negative up to the epoch the run diverged in,
/// null from it on; `diverged_at` exactly when it diverged, within the epochs trained (the
/// epoch after the last is the final evaluation).
fn epochs(cfg: &BenchConfig, r: &RunRecord, path: &str, c: &mut Checker) {
    let at = join(path, "loss_curve");
    if r.loss_curve.len() != cfg.epochs {
        let n = r.loss_curve.len();
        c.fail(&at, format!("{n} epoch losses, but config.epochs is {}: one loss per epoch", cfg.epochs));
        return;
    }
    match (&r.diverged_at, r.diverged) {
        (Some(_), false) => c.fail(&join(path, "diverged_at"), "set, though the run did not diverge"),
        (None, true) => c.fail(&join(path, "diverged_at"), "null, though the run diverged"),
        (Some(d), true) if d.epoch > cfg.epochs => c.fail(
            &join(path, "diverged_at.epoch"),
            format!("{}, but a run has {} epochs (epoch {} is the final evaluation)", d.epoch, cfg.epochs, cfg.epochs),
        ),
        _ => {}
    }
    let from = r.diverged_at.as_ref().map_or(cfg.epochs, |d| d.epoch);
    for (e, loss) in r.loss_curve.iter().enumerate() {
        match loss {
            Some(l) if e >= from => {
                c.fail(&format!("{at}[{e}]"), format!("{l}, though the run diverged in epoch {from}"))
            }
            None if e < from => c.fail(&format!("{at}[{e}]"), "null, though the run had not diverged"),
            Some(l) if !l.is_finite() || *l < 0.0 => {
                c.fail(&format!("{at}[{e}]"), format!("{l}: a mean loss is finite and not negative"))
            }
            _ => {}
        }
    }
}
