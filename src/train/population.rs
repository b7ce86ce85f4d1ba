//! One population's training loop: minibatches, divergence, Adam, progress, evaluation.

use super::adam::{Adam, clip, grad_norms, zero_run};
use super::arm::GradientRule;
use super::batch::{DeviceData, epoch_order};
use super::dense::eval_mse;
use super::enrich::Ranks;
use super::{Tally, TrainSettings, init_population, read_f32};
use crate::error::EngineError;
use crate::model::RecurrentModel;
use crate::progress::{DivergedAt, Event, Host, Progress, RunRecord, RunSpec};
use burn::tensor::{Device, Tensor};
use web_time::Instant;

/// Train every run in `specs` together on `train` with `rule`'s gradients, score it on
/// `eval`.
#[allow(clippy::too_many_arguments)]
pub async fn train_population(
    model: &dyn RecurrentModel,
    specs: &[RunSpec],
    train: &DeviceData,
    eval: &DeviceData,
    settings: &TrainSettings,
    rule: &mut dyn GradientRule,
    device: &Device,
    host: &mut dyn Host,
    tally: &mut Tally,
) -> Result<Vec<RunRecord>, EngineError> {
    let r = specs.len();
    let started = Instant::now();
    let seeds: Vec<u64> = specs.iter().map(|s| s.seed).collect();
    let lrs: Vec<f64> = specs.iter().map(|s| s.lr).collect();
    let (mut params, mut rngs) = init_population(model, &seeds, device);
    let mut adam = Adam::new(&params, &lrs, device);
    // Ranked models (spec §7): each run's rank, grown between epochs by its own loss curve.
    let mut ranks = model.rank_limits().map(|limits| Ranks::new(settings.enrichment, limits, r));
    rule.start(train, r);

    let mut diverged: Vec<Option<DivergedAt>> = vec![None; r];
    let mut curves: Vec<Vec<Option<f64>>> = vec![Vec::new(); r];
    let steps = train.n.div_ceil(settings.batch_size);
    let weight = rule.step_weight();

    for epoch in 0..=settings.epochs {
        let live: Vec<bool> = diverged.iter().map(Option::is_none).collect();
        rule.before_epoch(model, &params, epoch, &live).await?;
        if epoch == settings.epochs {
            break; // the last hook call comes after the last epoch
        }
        let order = epoch_order(&mut rngs, train.n, settings.batch_size);
        // Loss summed over the trajectories seen, so the smaller last batch weighs less.
        let mut sums = vec![(0.0f64, 0usize); r];
        for (step, idx) in order.iter().enumerate() {
            if host.cancelled() {
                return Err(EngineError::Cancelled);
            }
            let batch = train.batch(idx);
            let live: Vec<bool> = diverged.iter().map(Option::is_none).collect();
            let out = rule.grads(model, &params, &batch, &live);
            let mut grads = out.grads;
            let mut norms = grad_norms(&grads);
            let read = read_f32(Tensor::cat(vec![out.loss, norms.clone().reshape([r])], 0)).await?;
            let (losses, gnorms) = read.split_at(r);
            let mut newly = false;
            for run in 0..r {
                if diverged[run].is_none() && !(losses[run].is_finite() && gnorms[run].is_finite()) {
                    // Stop the run: zero its weights, gradient and optimizer state so the
                    // rest of the population continues untouched.
                    diverged[run] = Some(DivergedAt { epoch, step });
                    adam.reset_run(run);
                    params = params.into_iter().map(|p| zero_run(p, run)).collect();
                    grads = grads.into_iter().map(|g| zero_run(g, run)).collect();
                    newly = true;
                }
            }
            if newly {
                norms = grad_norms(&grads);
            }
            params = adam.step(params, clip(grads, norms));
            for run in 0..r {
                if diverged[run].is_none() {
                    sums[run].0 += losses[run] as f64 * batch.b as f64;
                    sums[run].1 += batch.b;
                }
            }
            tally.work_done += r * weight;
            host.event(&Event::Progress(Progress {
                phase: specs[0].phase,
                arm: specs[0].arm,
                epoch: epoch + 1,
                epochs: settings.epochs,
                step: step + 1,
                steps,
                runs_done: tally.runs_done,
                runs_total: tally.runs_total,
                fraction: tally.work_done as f64 / tally.work_total.max(1) as f64,
                lrs: lrs.clone(),
                seeds: seeds.clone(),
                losses: (0..r).map(|i| diverged[i].is_none().then_some(losses[i] as f64)).collect(),
                elapsed_s: tally.start.elapsed().as_secs_f64(),
            }));
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
                }
            }
        }
    }

    let metrics = eval_mse(model, &params, &eval.all(r, eval.n)).await?;
    let wall = started.elapsed().as_secs_f64();
    let mut records = Vec::with_capacity(r);
    for (run, spec) in specs.iter().enumerate() {
        let mut at = diverged[run].clone();
        if at.is_none() && !metrics[run].is_finite() {
            at = Some(DivergedAt { epoch: settings.epochs, step: 0 });
        }
        let extras = rule.finish(run);
        records.push(RunRecord {
            arm: spec.arm,
            phase: spec.phase,
            lr: spec.lr,
            seed: spec.seed,
            metric: if at.is_none() { Some(metrics[run]) } else { None },
            diverged: at.is_some(),
            diverged_at: at,
            loss_curve: std::mem::take(&mut curves[run]),
            wall_time_s: wall,
            population: r,
            mean_stored_states: extras.mean_stored_states,
            probes: extras.probes,
            backend: settings.backend.clone(),
            run_hash: settings.run_hash.clone(),
            rank_history: ranks.as_mut().map(|k| std::mem::take(&mut k.history[run])).unwrap_or_default(),
        });
    }
    tally.runs_done += r;
    for rec in &records {
        host.event(&Event::RunFinished(rec.clone()));
    }
    Ok(records)
}
