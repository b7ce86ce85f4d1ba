//! Population training (spec §3): R independent runs stepped together, each with its own
//! init, minibatch order, lr, gradient clipping and Adam state.

pub mod adam;
pub mod batch;
pub mod checkpointed;
pub mod dense;

use crate::error::EngineError;
use crate::model::RecurrentModel;
use crate::probe::{PROBE_TRAJECTORIES, ProbeRecord, ProbeSettings, probe};
use crate::progress::{Arm, DivergedAt, Event, Host, Progress, RunRecord, RunSpec};
use adam::{Adam, clip, grad_norms, zero_run};
use batch::{DeviceData, epoch_order};
use burn::tensor::{Device, Tensor, TensorData};
use checkpointed::{checkpoint_count, checkpointed_grads};
use dense::{dense_grads, mse};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use web_time::Instant;

/// Training settings shared by every run of a population.
#[derive(Clone, Debug)]
pub struct TrainSettings {
    /// Epochs.
    pub epochs: usize,
    /// Minibatch size.
    pub batch_size: usize,
    /// Idea arm: probe settings (None trains the baseline with dense BPTT).
    pub probe: Option<ProbeSettings>,
}

/// Work units of one idea-arm run-step against one baseline run-step, for the progress
/// fraction and ETA: measured on the CPU (default config), the idea phases take about ten
/// times as long as the baseline's (reversals in the backward pass and in every probe).
pub const IDEA_STEP_WEIGHT: usize = 10;

/// Work units of one run-step under `settings`.
pub fn step_weight(settings: &TrainSettings) -> usize {
    if settings.probe.is_some() { IDEA_STEP_WEIGHT } else { 1 }
}

/// Bench-wide progress bookkeeping, shared by all populations.
pub struct Tally {
    /// When the bench started.
    pub start: Instant,
    /// Runs finished.
    pub runs_done: usize,
    /// Runs in the bench.
    pub runs_total: usize,
    /// Work units done (a run-step, weighted by [`step_weight`]).
    pub work_done: usize,
    /// Work units in the bench.
    pub work_total: usize,
}

/// Initial parameters of each run, drawn from its seed's PRNG, stacked to `[R, ..]`.
/// Returns the parameters and each run's PRNG, which then draws its minibatch order.
pub fn init_population(
    model: &dyn RecurrentModel,
    seeds: &[u64],
    device: &Device,
) -> (Vec<Tensor<3>>, Vec<ChaCha8Rng>) {
    let mut rngs: Vec<ChaCha8Rng> = seeds.iter().map(|&s| ChaCha8Rng::seed_from_u64(s)).collect();
    let per_run: Vec<Vec<Vec<f32>>> = rngs.iter_mut().map(|rng| model.init_run(rng)).collect();
    let params = model
        .param_shapes()
        .iter()
        .enumerate()
        .map(|(i, &[a, b])| {
            let flat: Vec<f32> = per_run.iter().flat_map(|run| run[i].iter().copied()).collect();
            Tensor::from_data(TensorData::new(flat, [seeds.len(), a, b]), device)
        })
        .collect();
    (params, rngs)
}

/// Read a small float tensor back to the host without blocking.
pub async fn read_f32<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, EngineError> {
    let data = t.into_data_async().await?;
    data.try_to_vec::<f32>().map_err(|e| EngineError::Device(format!("unexpected tensor data: {e:?}")))
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Train every run in `specs` together on `train`, score it on `eval`.
#[allow(clippy::too_many_arguments)]
pub async fn train_population(
    model: &dyn RecurrentModel,
    specs: &[RunSpec],
    train: &DeviceData,
    eval: &DeviceData,
    settings: &TrainSettings,
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
    let probe_batch = settings.probe.as_ref().map(|_| train.all(r, PROBE_TRAJECTORIES));

    let mut ks = vec![1usize; r];
    let mut diverged: Vec<Option<DivergedAt>> = vec![None; r];
    let mut curves: Vec<Vec<Option<f64>>> = vec![Vec::new(); r];
    let mut probes: Vec<Vec<ProbeRecord>> = vec![Vec::new(); r];
    let mut stored_states = vec![0usize; r];
    let mut minibatches = 0usize;
    let steps = train.n.div_ceil(settings.batch_size);

    for epoch in 0..=settings.epochs {
        if let (Some(ps), Some(pb)) = (&settings.probe, &probe_batch) {
            let recs = probe(model, &params, pb, ps, epoch).await?;
            for (run, rec) in recs.into_iter().enumerate() {
                ks[run] = rec.k;
                if diverged[run].is_none() {
                    probes[run].push(rec);
                }
            }
        }
        if epoch == settings.epochs {
            break; // the last probe comes after the last epoch
        }
        let order = epoch_order(&mut rngs, train.n, settings.batch_size);
        let mut sums = vec![Vec::with_capacity(steps); r];
        for (step, idx) in order.iter().enumerate() {
            if host.cancelled() {
                return Err(EngineError::Cancelled);
            }
            let batch = train.batch(idx);
            let out = match settings.probe {
                None => dense_grads(model, &params, &batch),
                Some(ref ps) => checkpointed_grads(model, &params, &batch, &ks, ps.reversal_iters).out,
            };
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
                    sums[run].push(losses[run] as f64);
                }
            }
            if settings.probe.is_some() {
                minibatches += 1;
                for run in 0..r {
                    stored_states[run] += checkpoint_count(batch.t(), ks[run]);
                }
            }
            tally.work_done += r * step_weight(settings);
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
            let ok = diverged[run].is_none() && !sums[run].is_empty();
            curves[run].push(ok.then(|| mean(&sums[run])));
        }
    }

    let metrics = read_f32(mse(model, &params, &eval.all(r, eval.n))).await?;
    let wall = started.elapsed().as_secs_f64();
    let mut records = Vec::with_capacity(r);
    for (run, spec) in specs.iter().enumerate() {
        let mut at = diverged[run].clone();
        if at.is_none() && !metrics[run].is_finite() {
            at = Some(DivergedAt { epoch: settings.epochs, step: 0 });
        }
        let is_idea = spec.arm == Arm::Idea;
        records.push(RunRecord {
            arm: spec.arm,
            phase: spec.phase,
            lr: spec.lr,
            seed: spec.seed,
            metric: at.is_none().then_some(metrics[run] as f64),
            diverged: at.is_some(),
            diverged_at: at,
            loss_curve: std::mem::take(&mut curves[run]),
            wall_time_s: wall,
            population: r,
            mean_stored_states: (is_idea && minibatches > 0).then(|| stored_states[run] as f64 / minibatches as f64),
            probes: std::mem::take(&mut probes[run]),
        });
    }
    tally.runs_done += r;
    for rec in &records {
        host.event(&Event::RunFinished(rec.clone()));
    }
    Ok(records)
}
