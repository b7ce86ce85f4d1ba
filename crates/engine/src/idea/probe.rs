//! The reversal probe (spec §5): how well the trained cell can rebuild h_{t-1} from h_t,
//! the interval it implies, and what checkpointing at that interval does to the gradient.

use super::frontier::{Measured, exact_passes, measure, peak_alone, point};
use crate::batch::{Batch, rows};
use crate::error::EngineError;
use crate::model::{PackedRows, RecurrentModel};
use crate::schedule::reversal::{chained_defect, checkpoint_count, relative_errors};
use crate::schedule::{Schedule, whole};
use crate::train::dense::hidden_states;
use crate::train::read_f32;
use burn::tensor::{Int, Tensor, TensorData};
use rdbench_core::models::buffer_words;
use rdbench_core::policy::{Policy, chained_ks, choose_k};
pub use rdbench_core::records::{ChainedDefect, ProbeRecord};

/// Trajectories in the probe batch (the first 32 training trajectories).
pub const PROBE_TRAJECTORIES: usize = 32;

/// What a probe needs from the config.
#[derive(Clone, Debug)]
pub struct ProbeSettings {
    /// Defect threshold.
    pub tau: f64,
    /// Largest interval.
    pub k_max: usize,
    /// Interval policy.
    pub policy: Policy,
    /// Fixed-point iterations per reversal.
    pub reversal_iters: usize,
    /// Training batch size (for the byte accounting).
    pub batch_size: usize,
    /// Also run every schedule of the frontier: the idea's full runs.
    pub frontier: bool,
}

impl ProbeSettings {
    /// The settings of `cfg`'s idea runs; `frontier` for its full runs.
    pub fn new(cfg: &rdbench_core::config::BenchConfig, frontier: bool) -> Self {
        ProbeSettings {
            tau: cfg.tau,
            k_max: cfg.k_max,
            policy: cfg.policy,
            reversal_iters: cfg.reversal_iters,
            batch_size: cfg.batch_size,
            frontier,
        }
    }
}

fn finite(v: f32) -> Option<f64> {
    v.is_finite().then_some(v as f64)
}

/// Per-run, per-parameter sums of a.b, a.a, b.b and (a - b)^2, `[R, 4 * P]` (P parameters):
/// each sums one parameter's elements, so f32 holds it well, and the host adds them in f64.
pub fn grad_dot_sums(a: &[Tensor<3>], b: &[Tensor<3>]) -> Tensor<2> {
    let sum = |t: Tensor<3>| t.sum_dim(2).sum_dim(1).squeeze_dim::<2>(2); // [R, 1]
    let mut cols = Vec::with_capacity(4 * a.len());
    for (x, y) in a.iter().zip(b) {
        cols.push(sum(x.clone() * y.clone()));
        cols.push(sum(x.clone().square()));
        cols.push(sum(y.clone().square()));
        cols.push(sum((x.clone() - y.clone()).square()));
    }
    Tensor::cat(cols, 1)
}

/// [`grad_dot_sums`] of two packed gradients `[R, 1, >= P]` (the GPU kernels' layout, the
/// parameters' values of `shapes` in order) in a few launches where the per-parameter
/// version takes ~50: the four products side by side, each parameter's values summed by one
/// product with a 0/1 matrix that picks them.
pub fn grad_dot_sums_packed(a: Tensor<3>, b: Tensor<3>, shapes: &[[usize; 2]]) -> Tensor<2> {
    let p: usize = shapes.iter().map(|[x, y]| x * y).sum();
    let n = shapes.len();
    let r = a.dims()[0];
    let (a, b) = (a.narrow(2, 0, p), b.narrow(2, 0, p));
    let d = a.clone() - b.clone();
    let products = Tensor::cat(vec![a.clone() * b.clone(), a.square(), b.square(), d.square()], 1); // [R, 4, P]
    let mut pick = vec![0f32; p * n];
    let mut at = 0;
    for (i, [x, y]) in shapes.iter().enumerate() {
        (at..at + x * y).for_each(|q| pick[q * n + i] = 1.0);
        at += x * y;
    }
    let pick = Tensor::<3>::from_data(burn::tensor::TensorData::new(pick, [1, p, n]), &products.device());
    // [R, 4, n] -> [R, n, 4]: each parameter's four sums together, as `grad_dot_sums`.
    products.matmul(pick).swap_dims(1, 2).reshape([r, 4 * n])
}

/// Packed gradients' rows one after another in one tensor: parts of one pass that follow
/// each other are read as one range of it (a range narrowed out of a GPU tensor is a copy).
fn side_by_side(parts: Vec<PackedRows>) -> Tensor<3> {
    let mut merged: Vec<PackedRows> = Vec::new();
    for p in parts {
        match merged.last_mut() {
            Some(last) if last.key.is_some() && last.key == p.key && last.rows.end == p.rows.start => {
                last.rows.end = p.rows.end;
            }
            _ => merged.push(p),
        }
    }
    let tensors: Vec<Tensor<3>> = merged
        .into_iter()
        .map(|p| match p.rows.len() == p.grad.dims()[0] {
            true => p.grad,
            false => p.grad.narrow(0, p.rows.start, p.rows.len()),
        })
        .collect();
    Tensor::cat(tensors, 0)
}

/// The cosine of a and b from one run's row of [`grad_dot_sums`], combined in f64.
pub fn cosine_of_sums(row: &[f32]) -> f64 {
    let (mut dot, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for c in row.chunks(4) {
        dot += c[0] as f64;
        aa += c[1] as f64;
        bb += c[2] as f64;
    }
    dot / (aa.sqrt() * bb.sqrt() + 1e-30)
}

/// ||a - b|| / ||b|| from one run's row of [`grad_dot_sums`], combined in f64.
pub fn rel_err_of_sums(row: &[f32]) -> f64 {
    let (mut diff, mut bb) = (0.0f64, 0.0f64);
    for c in row.chunks(4) {
        bb += c[2] as f64;
        diff += c[3] as f64;
    }
    diff.sqrt() / (bb.sqrt() + 1e-30)
}

/// Probe every run of the population on `batch` (the probe batch).
pub async fn probe(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    s: &ProbeSettings,
    epoch: usize,
) -> Result<Vec<ProbeRecord>, EngineError> {
    let [r, _, _] = params[0].dims();
    let t_len = batch.t();
    let device = params[0].device();
    let all: Vec<usize> = (0..r).collect();
    // Every state in one tensor where the model's kernels make them so (a GPU), each step's
    // a view of it; else stepped.
    let x_all = batch.sequence().x;
    let whole = model.whole_states(params, &x_all);
    let b = batch.b;
    let hs = match &whole {
        Some(st) => (0..=t_len).map(|t| st.clone().narrow(1, t * b, b)).collect(),
        None => hidden_states(model, params, batch),
    };

    // One-step defects for t = 2..T, all steps at once: rebuild h_{t-1} from (h_t, x_t).
    let (h_t, truth) = match &whole {
        Some(st) => (st.clone().narrow(1, 2 * b, (t_len - 1) * b), st.clone().narrow(1, b, (t_len - 1) * b)),
        None => (Tensor::cat(hs[2..=t_len].to_vec(), 1), Tensor::cat(hs[1..t_len].to_vec(), 1)),
    };
    let x_t = batch.xs_between(1, t_len);
    let rebuilt = match model.buffer_bits() {
        // With the digits each step forgot (what its buffer would hold).
        Some(_) => {
            let digits = model.step_forgetting(params, truth.clone(), x_t.clone()).1;
            model.reverse_with(params, h_t, x_t, digits)
        }
        None => model.reverse(params, h_t, x_t, s.reversal_iters),
    };
    let (mean, max) = relative_errors(rebuilt, truth);
    let mut cols = vec![mean, max];

    // Reversal at each probed interval: its chains (from each true h_c, c = k, 2k, .., k - 1
    // reversals) give the chained defects; at k_max, and at every k when the frontier is
    // measured, the pass takes its gradient too.
    let ks = chained_ks(s.k_max);
    let mut passes: Vec<Measured> = Vec::new();
    let mut by_kernel = Vec::new(); // the intervals whose reversal pass the whole kernels run
    for &k in &ks {
        let gradient = s.frontier || k == s.k_max;
        // The model's chain kernel, where it has one: the defect in a few launches, and the
        // reversal pass at k (whose gradient the frontier and the k_max cosine read) apart.
        let chained = whole.as_ref().and_then(|st| model.whole_chained_defect(params, st, &x_all, k, s.reversal_iters));
        if let Some(defect) = chained {
            cols.push(defect);
            if gradient {
                by_kernel.push(k);
            }
            continue;
        }
        if !gradient {
            cols.push(chained_defect(model, params, batch, (k, s.reversal_iters), &hs, false).1);
            continue;
        }
        let mut defect = None;
        let alone = |run: usize| {
            let truth: Vec<Tensor<3>> = hs.iter().map(|h| rows(h, &[run])).collect();
            peak_alone(params, batch, run, |p, b| {
                chained_defect(model, p, b, (k, s.reversal_iters), &truth, true).0.expect("a pass with its gradient")
            })
        };
        let f = || {
            let (pass, d) = chained_defect(model, params, batch, (k, s.reversal_iters), &hs, true);
            defect = Some(d);
            pass.expect("a pass with its gradient")
        };
        passes.push(measure(Schedule::Reversal { k }, all.clone(), &device, f, alone));
        cols.push(defect.expect("measured"));
    }
    // Those passes, every interval at once (one pass of the population repeated per interval),
    // else one by one.
    let together = whole::reversal_at_each(model, params, batch, &by_kernel, s.reversal_iters);
    let mut together = together.map(Vec::into_iter);
    for &k in &by_kernel {
        let at_k = Schedule::Reversal { k };
        let alone = |run: usize| peak_alone(params, batch, run, |p, b| at_k.run(model, p, b, s.reversal_iters));
        let pass = together.as_mut().and_then(Iterator::next);
        let f = || pass.unwrap_or_else(|| at_k.run(model, params, batch, s.reversal_iters));
        passes.push(measure(at_k.clone(), all.clone(), &device, f, alone));
    }
    drop(hs);
    let stats = read_f32(Tensor::cat(cols, 1)).await?;
    let width = 2 + ks.len();

    let mut records = Vec::with_capacity(r);
    let mut chosen = Vec::with_capacity(r);
    for run in 0..r {
        let row = &stats[run * width..(run + 1) * width];
        let chained: Vec<(usize, f64)> = ks.iter().zip(&row[2..]).map(|(&k, &d)| (k, d as f64)).collect();
        let k = choose_k(s.policy, row[0] as f64, &chained, s.tau, s.k_max);
        chosen.push(k);
        let buffer_words = model.buffer_bits().map_or(0, |b| buffer_words(t_len, b as usize));
        let bytes = |states: usize| (states * s.batch_size * model.hidden() * 4) as u64;
        records.push(ProbeRecord {
            epoch,
            defect_mean: finite(row[0]),
            defect_max: finite(row[1]),
            chained: chained.iter().map(|&(k, d)| ChainedDefect { k, defect: finite(d as f32) }).collect(),
            k,
            checkpoints: checkpoint_count(t_len, k),
            // The buffer's words (rev_gru) are held with the checkpoints.
            stored_bytes: bytes(checkpoint_count(t_len, k) + buffer_words),
            dense_bytes: bytes(t_len + 1),
            grad_cos_chosen: None,
            grad_cos_kmax: None,
            peak_bytes_checkpointed: None,
            peak_bytes_dense: None,
            frontier: Vec::new(),
        });
    }

    // Gradient fidelity on the probe batch: the idea's pass at the chosen k (and reversal at
    // k_max, above) against dense BPTT. Measured memory (spec §5 counts it and measures it):
    // each run's pass alone, its peak heap bytes on this thread, natively on the CPU.
    let iters = s.reversal_iters;
    let dense = measure(
        Schedule::Dense,
        all.clone(),
        &device,
        || Schedule::Dense.run(model, params, batch, iters),
        |run| peak_alone(params, batch, run, |p, b| Schedule::Dense.run(model, p, b, iters)),
    );
    let idea = Schedule::Idea { ks: chosen.clone() };
    let idea = measure(
        idea.clone(),
        all.clone(),
        &device,
        || idea.run(model, params, batch, iters),
        |run| {
            let one = Schedule::Idea { ks: vec![chosen[run]] };
            peak_alone(params, batch, run, |p, b| one.run(model, p, b, iters))
        },
    );
    for (run, rec) in records.iter_mut().enumerate() {
        rec.peak_bytes_dense = dense.peak_bytes[run];
        rec.peak_bytes_checkpointed = idea.peak_bytes[run];
    }
    passes.insert(0, idea);
    if s.frontier {
        passes.extend(exact_passes(model, params, batch, (s.k_max, iters), &chosen));
    }
    passes.insert(0, dense);

    // Every pass's gradient against dense BPTT's, in one read. Where every pass kept the GPU
    // kernels' packed layout, all of them side by side in one comparison (a few launches
    // whatever the number of passes).
    let dense_grads = &passes[0].pass.grads;
    let packed: Option<Vec<PackedRows>> = passes.iter().map(|m| m.pass.grads.packed_rows()).collect();
    let sums = match (dense_grads.as_packed(), packed) {
        (Some(d), Some(parts)) => {
            let idx: Vec<i64> = passes.iter().flat_map(|m| m.runs.iter().map(|&i| i as i64)).collect();
            let idx = Tensor::<1, Int>::from_data(TensorData::new(idx.clone(), [idx.len()]), &device);
            grad_dot_sums_packed(side_by_side(parts), d.grad.clone().select(0, idx), &d.shapes)
        }
        _ => {
            let sums: Vec<Tensor<2>> = passes
                .iter()
                .map(|m| {
                    let reference: Vec<Tensor<3>> = dense_grads.iter().map(|g| rows(g, &m.runs)).collect();
                    grad_dot_sums(&m.pass.grads, &reference)
                })
                .collect();
            Tensor::cat(sums, 0)
        }
    };
    let sums = read_f32(sums).await?;
    let width = 4 * model.param_shapes().len();
    let mut offset = 0;
    for m in &passes {
        for (row, &run) in m.runs.iter().enumerate() {
            let cells = &sums[(offset + row) * width..(offset + row + 1) * width];
            let cos = Some(cosine_of_sums(cells)).filter(|c| c.is_finite());
            let rel = Some(rel_err_of_sums(cells)).filter(|c| c.is_finite());
            let rec = &mut records[run];
            match &m.schedule {
                Schedule::Idea { .. } => rec.grad_cos_chosen = cos,
                Schedule::Reversal { k } if *k == s.k_max => rec.grad_cos_kmax = cos,
                _ => {}
            }
            if s.frontier {
                rec.frontier.extend(point(m, run, cos, rel));
            }
        }
        offset += m.runs.len();
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Device, Distribution};

    /// The packed sums equal the per-parameter ones: same values, other layout (the packed
    /// gradient's extra last value, its loss, is left out).
    #[test]
    fn packed_sums_equal_the_per_parameter_sums() {
        let device = Device::flex();
        let shapes = [[3, 6], [1, 6], [4, 2], [1, 1]];
        let r = 3;
        let u = Distribution::Uniform(-1.0, 1.0);
        let split = |_: ()| -> Vec<Tensor<3>> {
            shapes.iter().map(|&[a, b]| Tensor::<3>::random([r, a, b], u, &device)).collect()
        };
        let (a, b) = (split(()), split(()));
        let pack = |g: &[Tensor<3>]| {
            let mut flat: Vec<Tensor<3>> =
                g.iter().map(|t| t.clone().reshape([r, 1, t.dims()[1] * t.dims()[2]])).collect();
            flat.push(Tensor::<3>::random([r, 1, 1], u, &device));
            Tensor::cat(flat, 2)
        };
        let read = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().unwrap();
        let want = read(grad_dot_sums(&a, &b));
        let got = read(grad_dot_sums_packed(pack(&a), pack(&b), &shapes));
        assert_eq!(want.len(), got.len());
        for (i, (w, g)) in want.iter().zip(&got).enumerate() {
            assert!((w - g).abs() <= 1e-5 * w.abs().max(1.0), "value {i}: {g} against {w}");
        }
    }
}
