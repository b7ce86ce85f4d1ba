//! One population's training loop: minibatches, divergence, Adam, progress, evaluation.

use super::adam::{Adam, clip, grad_norms, zero_runs};
use super::arm::GradOut;
use super::arm::GradientRule;
use super::dense::evaluate;
use super::enrich::Ranks;
use super::{Tally, TrainSettings, init_population, read_f32, unless_cancelled};
use crate::batch::{DeviceData, epoch_order};
use crate::error::EngineError;
use crate::host::{Event, Host};
use crate::model::{RecurrentModel, packed_rows};
use burn::tensor::{Device, Tensor};
use rdbench_core::progress::Progress;
use rdbench_core::records::{DivergedAt, RunRecord, RunSpec};
use web_time::Instant;

/// What every population of a phase shares: the model, the phase's data (trained on and
/// scored on), the settings and the device.
#[derive(Clone, Copy)]
pub struct Population<'a> {
    /// The model every run trains.
    pub model: &'a dyn RecurrentModel,
    /// The training set.
    pub train: &'a DeviceData,
    /// The evaluation set (validation for the sweep, test for full runs).
    pub eval: &'a DeviceData,
    /// Epochs, batch size and what every record is stamped with.
    pub settings: &'a TrainSettings,
    /// Where the tensors live.
    pub device: &'a Device,
}

/// Train every run in `specs` together on `at.train` with `rule`'s gradients, score it on
/// `at.eval`.
pub async fn train_population(
    at: &Population<'_>,
    specs: &[RunSpec],
    rule: &mut dyn GradientRule,
    host: &mut dyn Host,
    tally: &mut Tally,
) -> Result<Vec<RunRecord>, EngineError> {
    let Population { model, train, eval, settings, device } = *at;
    let r = specs.len();
    let started = Instant::now();
    let seeds: Vec<u64> = specs.iter().map(|s| s.seed).collect();
    let lrs: Vec<f64> = specs.iter().map(|s| s.lr).collect();
    let (mut params, mut rngs) = init_population(model, &seeds, device);
    let mut adam = Adam::new(&params, &lrs, device);
    // Where the parameters are packed rows too (a GPU): the passes and probes take them.
    let mut packed = adam.take_start();
    // Ranked models (spec §7): each run's rank, grown between epochs by its own loss curve.
    let mut ranks = model.rank_limits().map(|limits| Ranks::new(settings.enrichment, limits, r));
    rule.start(train, r);

    let mut diverged: Vec<Option<DivergedAt>> = vec![None; r];
    let mut curves: Vec<Vec<Option<f64>>> = vec![Vec::new(); r];
    let steps = train.n.div_ceil(settings.batch_size);
    // The population's work units, its probes and evaluation included, counted as its steps
    // train, in proportion to the trajectories trained (the probes come once an epoch): the
    // last step's progress is the population's whole share.
    let cost = rule.cost(model, train.t, train.n);
    let (base, units) = (tally.work_done, r as u128 * cost.run_units(train.n, eval.n, settings.epochs) as u128);
    let rows_total = (settings.epochs * train.n).max(1) as u128;
    let mut rows_done = 0u128;

    for epoch in 0..=settings.epochs {
        let live: Vec<bool> = diverged.iter().map(Option::is_none).collect();
        {
            let _known = packed_rows::know_some(&params, packed.clone());
            rule.before_epoch(model, &params, epoch, &live).await?;
        }
        if epoch == settings.epochs {
            break; // the last hook call comes after the last epoch
        }
        let order = epoch_order(&mut rngs, train.n, settings.batch_size);
        // Loss summed over the trajectories seen, so the smaller last batch weighs less.
        let mut sums = vec![(0.0f64, 0usize); r];
        let mut unread: Vec<Unread> = Vec::new();
        let mut last_read = Instant::now();
        for (step, idx) in order.iter().enumerate() {
            if host.cancelled() {
                return Err(EngineError::Cancelled);
            }
            let batch = train.batch(idx);
            let stepped = train_step(params, packed.take(), &mut adam, |p| rule.grads(model, p, &batch));
            (params, packed) = (stepped.params, stepped.packed);
            unread.push(Unread { step, b: batch.b, loss: stepped.loss, norm: stepped.norm });
            // A read drains a GPU's queue: there, once per epoch (and every few seconds for the
            // progress display); on the CPU it is a copy, so every step.
            if step + 1 == order.len()
                || reads_are_free(device)
                || host.every_step()
                || last_read.elapsed().as_secs_f64() >= GPU_READ_EVERY_S
            {
                let cat = Tensor::cat(unread.iter().flat_map(|u| [u.loss.clone(), u.norm.clone()]).collect(), 0);
                let vals = unless_cancelled(read_f32(cat), host).await?;
                for (u, vals) in unread.drain(..).zip(vals.chunks(2 * r)) {
                    let (losses, gnorms) = vals.split_at(r);
                    let live: Vec<bool> = diverged.iter().map(Option::is_none).collect();
                    rule.settle(&live);
                    for run in 0..r {
                        // The device zeroed the run at this step (`optimizer_step`); here the
                        // host learns when.
                        if diverged[run].is_none() && !(losses[run].is_finite() && gnorms[run].is_finite()) {
                            diverged[run] = Some(DivergedAt { epoch, step: u.step });
                        }
                        if diverged[run].is_none() {
                            sums[run].0 += losses[run] as f64 * u.b as f64;
                            sums[run].1 += u.b;
                        }
                    }
                    rows_done += u.b as u128;
                    tally.work_done = base + (units * rows_done / rows_total) as u64;
                    host.event(&Event::Progress(Progress {
                        phase: specs[0].phase,
                        arm: specs[0].arm,
                        epoch: epoch + 1,
                        epochs: settings.epochs,
                        step: u.step + 1,
                        steps,
                        runs_done: tally.runs_done,
                        runs_total: tally.runs_total,
                        fraction: tally.share(tally.work_done),
                        lrs: lrs.clone(),
                        seeds: seeds.clone(),
                        losses: (0..r).map(|i| diverged[i].is_none().then_some(losses[i] as f64)).collect(),
                        elapsed_s: tally.elapsed_s(),
                    }));
                }
                last_read = Instant::now();
            }
            host.pause().await;
        }
        for run in 0..r {
            let (sum, n) = sums[run];
            curves[run].push((diverged[run].is_none() && n > 0).then(|| sum / n as f64));
        }
        // Enrich only where another epoch follows: a rank added after the last one trains nothing.
        if let Some(ranks) = ranks.as_mut().filter(|_| epoch + 1 < settings.epochs) {
            for (run, curve) in curves.iter().enumerate() {
                if let Some(rank) = ranks.after_epoch(run, curve, epoch + 1) {
                    model.set_rank(&mut params, run, rank);
                    packed = None; // the rows are the parameters before
                }
            }
        }
    }

    let scores = {
        let _known = packed_rows::know_some(&params, packed.take());
        evaluate(model, &params, &eval.all(r, eval.n)).await?
    };
    let wall = started.elapsed().as_secs_f64();
    let mut records = Vec::with_capacity(r);
    for (run, spec) in specs.iter().enumerate() {
        let mut at = diverged[run].clone();
        let score = scores[run];
        if at.is_none() && !(score.metric.is_finite() && score.secondary.is_none_or(f64::is_finite)) {
            at = Some(DivergedAt { epoch: settings.epochs, step: 0 });
        }
        let extras = rule.finish(run);
        records.push(RunRecord {
            arm: spec.arm,
            phase: spec.phase,
            lr: spec.lr,
            seed: spec.seed,
            metric: at.is_none().then_some(score.metric),
            secondary_metric: score.secondary.filter(|_| at.is_none()),
            diverged: at.is_some(),
            diverged_at: at,
            loss_curve: std::mem::take(&mut curves[run]),
            wall_time_s: wall,
            population: r,
            mean_stored_states: extras.mean_stored_states,
            probes: extras.probes,
            backend: settings.backend.clone(),
            run_hash: settings.run_hash.clone(),
            build: settings.build.clone(),
            rank_history: ranks.as_mut().map(|k| std::mem::take(&mut k.history[run])).unwrap_or_default(),
        });
    }
    tally.runs_done += r;
    for rec in &records {
        host.event(&Event::RunFinished(rec.clone()));
    }
    Ok(records)
}

/// Seconds between two reads of a GPU's losses within an epoch (progress display only: what
/// is computed does not depend on it).
const GPU_READ_EVERY_S: f64 = 2.0;

/// A step's per-run loss and gradient norm `[R]`, still on the device.
struct Unread {
    step: usize,
    /// Trajectories in the step's minibatch.
    b: usize,
    loss: Tensor<1>,
    norm: Tensor<1>,
}

/// Whether reading the device's values costs only a copy (a CPU backend).
fn reads_are_free(device: &Device) -> bool {
    !crate::backend::cube_device(device)
}

/// What a population step leaves: the new parameters, the same as packed rows where the
/// optimizer made them (a GPU's fused step), and the step's per-run loss and gradient norm
/// `[R]`, still on the device.
pub struct Stepped {
    /// The new parameters.
    pub params: Vec<Tensor<3>>,
    /// `params` packed (`model::packed_rows`), where the optimizer packed them.
    pub packed: Option<Tensor<3>>,
    /// Per-run loss.
    pub loss: Tensor<1>,
    /// Per-run gradient norm.
    pub norm: Tensor<1>,
}

/// One population step: `grads` of the parameters (their packed rows known to the passes,
/// where the last step left them: on a GPU, no pass packs them again), then
/// [`optimizer_step`].
pub fn train_step(
    params: Vec<Tensor<3>>,
    packed: Option<Tensor<3>>,
    adam: &mut Adam,
    grads: impl FnOnce(&[Tensor<3>]) -> GradOut,
) -> Stepped {
    let out = {
        let _known = packed_rows::know_some(&params, packed);
        grads(&params)
    };
    optimizer_step(params, adam, out)
}

/// One optimizer step on the device, nothing read: a run whose loss or gradient norm is not
/// finite diverges here, its weights, gradient and Adam state zeroed (lr included, so it
/// stays at zero) while the rest of the population continues untouched; then per-run
/// clipping and Adam. The host reads the loss and norms later to learn which run diverged
/// when.
pub fn optimizer_step(params: Vec<Tensor<3>>, adam: &mut Adam, out: GradOut) -> Stepped {
    #[cfg(feature = "cube")]
    if adam.is_fused() {
        let (params, packed, norm) = adam.fused_step(params, out.grads, out.loss.clone());
        return Stepped { params, packed: Some(packed), loss: out.loss, norm };
    }
    let r = out.loss.dims()[0];
    let grads = out.grads.into_vec();
    let norms = grad_norms(&grads);
    let bad =
        out.loss.clone().is_finite().bool_and(norms.clone().reshape([r]).is_finite()).bool_not().reshape([r, 1, 1]);
    let params: Vec<Tensor<3>> = params.into_iter().map(|p| zero_runs(p, &bad)).collect();
    let grads: Vec<Tensor<3>> = grads.into_iter().map(|g| zero_runs(g, &bad)).collect();
    adam.zero_runs(&bad);
    let kept = zero_runs(norms.clone(), &bad);
    Stepped { params: adam.step(params, clip(grads, kept)), packed: None, loss: out.loss, norm: norms.reshape([r]) }
}
