//! The reversal probe (spec §5): how well the trained cell can rebuild h_{t-1} from h_t,
//! the interval it implies, and what checkpointing at that interval does to the gradient.

use super::checkpointed::{checkpoint_count, checkpointed_grads};
use crate::error::EngineError;
use crate::model::RecurrentModel;
use crate::train::batch::Batch;
use crate::train::dense::{dense_grads, hidden_states};
use crate::train::read_f32;
use burn::tensor::Tensor;
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
}

/// `[R, N, H]` pairs -> per-run mean and max of ||g - h|| / (||h|| + 1e-6), each `[R, 1]`.
fn relative_errors(g: Tensor<3>, h: Tensor<3>) -> (Tensor<2>, Tensor<2>) {
    let err = (g - h.clone()).square().sum_dim(2).sqrt();
    let norm = h.square().sum_dim(2).sqrt().add_scalar(1e-6);
    let rel = (err / norm).squeeze_dim::<2>(2); // [R, N]
    (rel.clone().mean_dim(1), rel.max_dim(1))
}

fn finite(v: f32) -> Option<f64> {
    v.is_finite().then_some(v as f64)
}

/// Per-run, per-parameter sums of a.b, a.a and b.b, `[R, 3 * P]` (P parameters): each
/// sums one parameter's elements, so f32 holds it well, and the host adds them in f64.
pub fn grad_dot_sums(a: &[Tensor<3>], b: &[Tensor<3>]) -> Tensor<2> {
    let sum = |t: Tensor<3>| t.sum_dim(2).sum_dim(1).squeeze_dim::<2>(2); // [R, 1]
    let mut cols = Vec::with_capacity(3 * a.len());
    for (x, y) in a.iter().zip(b) {
        cols.push(sum(x.clone() * y.clone()));
        cols.push(sum(x.clone().square()));
        cols.push(sum(y.clone().square()));
    }
    Tensor::cat(cols, 1)
}

/// Cosines from one run's row of [`grad_dot_sums`], combined in f64.
pub fn cosine_of_sums(row: &[f32]) -> f64 {
    let (mut dot, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for c in row.chunks(3) {
        dot += c[0] as f64;
        aa += c[1] as f64;
        bb += c[2] as f64;
    }
    dot / (aa.sqrt() * bb.sqrt() + 1e-30)
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
    let hs = hidden_states(model, params, batch);

    // One-step defects for t = 2..T, all steps at once: rebuild h_{t-1} from (h_t, x_t).
    let h_t = Tensor::cat(hs[2..=t_len].to_vec(), 1);
    let x_t = Tensor::cat(batch.xs[1..t_len].to_vec(), 1);
    let truth = Tensor::cat(hs[1..t_len].to_vec(), 1);
    let (mean, max) = relative_errors(model.reverse(params, h_t, x_t, s.reversal_iters), truth);
    let mut cols = vec![mean, max];

    // Chained defects: from each true h_c (c = k, 2k, ..) reverse k - 1 times to h_{c-k+1}.
    let ks = chained_ks(s.k_max);
    for &k in &ks {
        let starts: Vec<usize> = (1..=t_len / k).map(|j| j * k).collect();
        let mut g = Tensor::cat(starts.iter().map(|&c| hs[c].clone()).collect(), 1);
        for j in 0..k - 1 {
            // Reversing step c - j needs x_{c-j}, stored at xs[c - j - 1].
            let x = Tensor::cat(starts.iter().map(|&c| batch.xs[c - j - 1].clone()).collect(), 1);
            g = model.reverse(params, g, x, s.reversal_iters);
        }
        let truth = Tensor::cat(starts.iter().map(|&c| hs[c - k + 1].clone()).collect(), 1);
        cols.push(relative_errors(g, truth).0);
    }
    let stats = read_f32(Tensor::cat(cols, 1)).await?;
    let width = 2 + ks.len();

    let mut records = Vec::with_capacity(r);
    let mut chosen = Vec::with_capacity(r);
    for run in 0..r {
        let row = &stats[run * width..(run + 1) * width];
        let chained: Vec<(usize, f64)> = ks.iter().zip(&row[2..]).map(|(&k, &d)| (k, d as f64)).collect();
        let k = choose_k(s.policy, row[0] as f64, &chained, s.tau, s.k_max);
        chosen.push(k);
        let bytes = |states: usize| (states * s.batch_size * model.hidden() * 4) as u64;
        records.push(ProbeRecord {
            epoch,
            defect_mean: finite(row[0]),
            defect_max: finite(row[1]),
            chained: chained.iter().map(|&(k, d)| ChainedDefect { k, defect: finite(d as f32) }).collect(),
            k,
            checkpoints: checkpoint_count(t_len, k),
            stored_bytes: bytes(checkpoint_count(t_len, k)),
            dense_bytes: bytes(t_len + 1),
            grad_cos_chosen: None,
            grad_cos_kmax: None,
            peak_bytes_checkpointed: None,
            peak_bytes_dense: None,
        });
    }

    // Gradient fidelity on the probe batch: checkpointed (chosen k, and k_max) vs dense BPTT.
    // Measured memory (spec §5 counts it; issue 9 measures it): each pass's peak heap bytes
    // on this thread, natively on the CPU. For a population the peak is the whole
    // population's pass, so it is split evenly over its runs (every run holds the same
    // tensors but its own checkpoint rows; the per-run figure is exact for a population of 1).
    let (dense, dense_peak) =
        crate::memory::thread_peak_during(&params[0].device(), || dense_grads(model, params, batch).grads);
    let (at_chosen, ck_peak) = crate::memory::thread_peak_during(&params[0].device(), || {
        checkpointed_grads(model, params, batch, &chosen, s.reversal_iters).out.grads
    });
    for rec in records.iter_mut() {
        rec.peak_bytes_dense = dense_peak.map(|b| (b / r) as u64);
        rec.peak_bytes_checkpointed = ck_peak.map(|b| (b / r) as u64);
    }
    let at_kmax = checkpointed_grads(model, params, batch, &vec![s.k_max; r], s.reversal_iters).out.grads;
    let sums =
        read_f32(Tensor::cat(vec![grad_dot_sums(&at_chosen, &dense), grad_dot_sums(&at_kmax, &dense)], 1)).await?;
    let width = sums.len() / r;
    for (run, rec) in records.iter_mut().enumerate() {
        let (chosen, kmax) = sums[run * width..(run + 1) * width].split_at(width / 2);
        rec.grad_cos_chosen = Some(cosine_of_sums(chosen)).filter(|c| c.is_finite());
        rec.grad_cos_kmax = Some(cosine_of_sums(kmax)).filter(|c| c.is_finite());
    }
    Ok(records)
}
