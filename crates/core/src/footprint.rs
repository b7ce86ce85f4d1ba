//! The memory a bench will need, estimated from its config before any work: each arm's
//! peak, and the longest sequence length that fits a limit. At long T memory is real (dense
//! BPTT of a population at T = 10,000 stores gigabytes), so the CLI and the page show this
//! estimate and refuse a config that will not fit instead of failing halfway.
//!
//! The estimate adds up what the engine holds at once, in f32 (docs/SPEC.md, "Memory before
//! a run"): the datasets on the device; then, per population, the minibatch, the states a
//! backward pass stores, the evaluation batch, and for the idea arm its probe batch and the
//! dense reference pass its probes run. Copies the tensor ops make are counted by the
//! factors below, set from the measured peaks (`tests/footprint.rs` checks the estimate
//! against the counting allocator's peak).

use crate::context::BenchContext;
use crate::models::buffer_words;
use crate::policy::chained_ks;
use crate::records::{ARMS, Arm};
use serde::Serialize;

/// Sequences the idea arm probes per run (the engine's `PROBE_TRAJECTORIES`).
pub const PROBE_SEQUENCES: usize = 32;

/// Copies of a batch's inputs and targets alive at once (the gather, its time-major
/// layout, and the per-step slices).
const BATCH_COPIES: usize = 3;

/// Stored-state sets of the probe: the forward pass's states and the dense reference
/// pass's, alive together while the probe compares gradients.
const PROBE_STATE_SETS: usize = 2;

/// What the structural sum above misses (burn's intermediate tensors, the per-step slices'
/// own allocations, the data's host copies while it is generated and uploaded), as one
/// factor: the counting allocator's peaks were 1.1 to 2.2 times the sum on the adding
/// problem at T = 1000 and 4000 and the pendulum at T = 1000 (`tests/footprint.rs`).
const MEASURED_FACTOR: f64 = 2.5;

/// The peak bytes of one arm, and of which part it comes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArmFootprint {
    /// "baseline" or "idea".
    pub arm: &'static str,
    /// The peak of the arm's runs: the data plus its largest working set, times the factor
    /// measured against the counting allocator.
    pub peak_bytes: u64,
    /// The training step's working set at its largest population (the idea at k_max: the
    /// fewest states it may store; it stores T + 1 where its probes choose k = 1).
    pub step_bytes: u64,
    /// The evaluation's working set.
    pub eval_bytes: u64,
    /// The probes' working set (the idea arm; 0 for the baseline).
    pub probe_bytes: u64,
}

/// The estimate for a whole bench on `workers` parallel workers (threads natively, Web
/// Workers in the browser), each holding the data and its share of a population.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Footprint {
    /// The sequence length T.
    pub seq_len: usize,
    /// Workers the runs are split over.
    pub workers: usize,
    /// The datasets one worker holds on its device.
    pub data_bytes: u64,
    /// Each arm (baseline, idea), per worker.
    pub arms: Vec<ArmFootprint>,
    /// The largest of the arms' peaks, per worker.
    pub peak_bytes_per_worker: u64,
    /// What one process holding every worker needs (natively: the threads share the data).
    pub peak_bytes_total: u64,
}

impl Footprint {
    /// The estimate of `bench` split over `workers` workers.
    pub fn of(bench: &BenchContext, workers: usize) -> Footprint {
        let cfg = &bench.cfg;
        let workers = workers.max(1);
        let t = bench.seq_len as u64;
        let track = &*bench.track;
        let task = bench.task;
        let f_in = track.input_dim() as u64;
        let f_out = track.output_dim() as u64;
        let s = task.target_steps(bench.seq_len) as u64;
        let seq_bytes = 4 * (t * f_in + s * f_out);
        let n_train = bench.train_sequences as u64;
        let n_val = crate::track::validation_size(bench.train_sequences) as u64;
        let n_test = track.n_test() as u64;
        // The sweep's train and validation splits and the full runs' train and test sets.
        let data_bytes = seq_bytes * (2 * n_train + n_test);
        let h = cfg.hidden_size as u64;
        let b = cfg.batch_size as u64;
        let state_bytes = |rows: u64| 4 * rows * h;
        let share = |runs: usize| runs.div_ceil(workers) as u64;
        let phases = [(cfg.lrs.len() * cfg.n_sweep_seeds, n_val), (cfg.n_seeds, n_test)];
        // A model with an information buffer (rev_gru) holds one word, a state's size, per
        // `steps_per_word` steps of every pass that reverses: the idea's steps and its probes.
        let buffer = if bench.model.info_buffer { buffer_words(bench.seq_len, cfg.forget_bits) as u64 } else { 0 };
        let arms = ARMS
            .iter()
            .map(|&arm| {
                let (mut step, mut eval, mut probe) = (0u64, 0u64, 0u64);
                for (runs, n_eval) in phases {
                    let r = share(runs);
                    let stored = match arm {
                        Arm::Baseline => t + 1,
                        Arm::Idea => t.div_ceil(cfg.k_max as u64) + 1 + buffer,
                    };
                    step = step.max(r * (BATCH_COPIES as u64 * b * seq_bytes + stored * state_bytes(b)));
                    // Evaluation: the whole evaluation set per run, its readouts, one state.
                    let readouts = 4 * n_eval * s * f_out;
                    eval = eval.max(r * (BATCH_COPIES as u64 * n_eval * seq_bytes + 2 * readouts));
                    if arm == Arm::Idea {
                        let p = PROBE_SEQUENCES.min(bench.train_sequences) as u64;
                        // The chained probes' reversals keep one state per probed k besides.
                        let chained = chained_ks(cfg.k_max).len() as u64;
                        probe = probe.max(
                            r * (BATCH_COPIES as u64 * p * seq_bytes
                                + (PROBE_STATE_SETS as u64 * (t + 1) + chained + buffer) * state_bytes(p)),
                        );
                    }
                }
                // The idea arm holds its probe batch through its training steps.
                let held = if arm == Arm::Idea { probe / PROBE_STATE_SETS as u64 } else { 0 };
                let sum = data_bytes + step.max(eval).max(probe) + held.min(step);
                let peak = (sum as f64 * MEASURED_FACTOR) as u64;
                ArmFootprint {
                    arm: arm.as_str(),
                    peak_bytes: peak,
                    step_bytes: step,
                    eval_bytes: eval,
                    probe_bytes: probe,
                }
            })
            .collect::<Vec<_>>();
        let per_worker = arms.iter().map(|a| a.peak_bytes).max().unwrap_or(0);
        Footprint {
            seq_len: bench.seq_len,
            workers,
            data_bytes,
            arms,
            peak_bytes_per_worker: per_worker,
            peak_bytes_total: data_bytes + (per_worker - data_bytes) * workers as u64,
        }
    }
}

impl Footprint {
    /// The estimate's figure alone, for a status line: "peak memory ≈ 15 MB per worker".
    pub fn short(&self, per_worker: bool) -> String {
        let (peak, whose) = if per_worker {
            (self.peak_bytes_per_worker, if self.workers > 1 { " per worker" } else { "" })
        } else {
            (self.peak_bytes_total, "")
        };
        format!("peak memory ≈ {}{whose}", bytes_text(peak))
    }

    /// The estimate in one line: the peak of one process holding every worker (`per_worker`
    /// false: natively) or of one worker (the browser's wasm instances).
    pub fn line(&self, per_worker: bool) -> String {
        let arm = |i: usize| bytes_text(self.arms[i].peak_bytes - self.data_bytes);
        let (peak, whose) = if per_worker {
            (self.peak_bytes_per_worker, if self.workers > 1 { " per worker" } else { "" })
        } else {
            (self.peak_bytes_total, "")
        };
        let split = match (self.workers, per_worker) {
            (1, _) => String::new(),
            (w, true) => format!(", a share of each population on each of {w} workers"),
            (w, false) => format!(", over {w} threads"),
        };
        format!(
            "Estimated peak memory ≈ {}{whose} at T = {} (data {}; baseline {} and idea {} above it{split}).",
            bytes_text(peak),
            self.seq_len,
            bytes_text(self.data_bytes),
            arm(0),
            arm(1),
        )
    }
}

/// Why a config does not fit a memory limit, with what would.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TooBig {
    /// The estimate's figure that is over the limit.
    pub needed_bytes: u64,
    /// The limit.
    pub limit_bytes: u64,
    /// The longest T of this track and config that fits (None: not even the shortest).
    pub largest_seq_len: Option<usize>,
    /// The idea's checkpointed training steps fit, but its probes' dense reference does not.
    pub only_checkpointed_steps_fit: bool,
    /// The whole message.
    pub message: String,
}

/// Bytes in words: "1.2 GB".
pub fn bytes_text(b: u64) -> String {
    let b = b as f64;
    match b {
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.0} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.0} kB", b / 1e3),
        b => format!("{b:.0} B"),
    }
}

/// Check `bench` on `workers` workers against `limit_bytes` per worker (`per_worker`: each
/// worker has its own limit, a wasm32 instance's 4 GiB) or for all of them together (one
/// process natively). `where_` names the limit ("this machine's available memory").
pub fn check(
    bench: &BenchContext,
    workers: usize,
    limit_bytes: u64,
    per_worker: bool,
    where_: &str,
) -> Result<Footprint, TooBig> {
    let need = |f: &Footprint| if per_worker { f.peak_bytes_per_worker } else { f.peak_bytes_total };
    let fp = Footprint::of(bench, workers);
    if need(&fp) <= limit_bytes {
        return Ok(fp);
    }
    let lens = bench.entry.seq_lens;
    let at = |t: usize| -> Option<Footprint> {
        let cfg = crate::config::BenchConfig { seq_len: t, ..bench.cfg.clone() };
        // A shorter T may bring k_max out of range: bound it by T as the config check would.
        let cfg = crate::config::BenchConfig { k_max: cfg.k_max.min(t).max(2), ..cfg };
        cfg.resolve().ok().map(|b| Footprint::of(&b, workers))
    };
    // The estimate grows with T: the longest that fits, by bisection.
    let (mut lo, mut hi) = (lens.min.max(2), bench.seq_len);
    let largest = if at(lo).is_none_or(|f| need(&f) > limit_bytes) {
        None
    } else {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if at(mid).is_some_and(|f| need(&f) <= limit_bytes) { lo = mid } else { hi = mid }
        }
        Some(lo)
    };
    let idea = &fp.arms[1];
    let base = &fp.arms[0];
    let scale = if per_worker { 1 } else { fp.workers as u64 };
    // On the estimate's scale: the structural sum times the measured factor.
    let idea_steps = ((fp.data_bytes + idea.step_bytes.max(idea.eval_bytes) * scale) as f64 * MEASURED_FACTOR) as u64;
    let only_steps =
        idea_steps <= limit_bytes && fp.data_bytes + (base.peak_bytes - fp.data_bytes) * scale > limit_bytes;
    // Natively the runs are split over threads of one process, in the page over workers.
    let unit = if per_worker { "worker" } else { "thread" };
    let split = match fp.workers {
        1 => format!("one {unit}"),
        n => format!("{} in each of {n} {unit}s", bytes_text(fp.peak_bytes_per_worker)),
    };
    let mut message = format!(
        "the bench needs about {} at T = {} ({split}; baseline {}, idea {}), more than {}, {}",
        bytes_text(need(&fp)),
        bench.seq_len,
        bytes_text(base.peak_bytes),
        bytes_text(idea.peak_bytes),
        bytes_text(limit_bytes),
        where_,
    );
    // The door adds how to ask for that length (a flag, a field).
    match largest {
        Some(t) => message.push_str(&format!("; the largest T that fits is {t}")),
        None => message.push_str("; no sequence length fits: lower the seeds, lrs, batch or hidden size"),
    }
    if only_steps {
        message.push_str(&format!(
            ". Only the idea's checkpointed training steps would fit ({}): that is the idea's case, but \
             dense BPTT (the baseline, and the reference gradient the idea's probes compare with) does not",
            bytes_text(idea_steps)
        ));
    }
    Err(TooBig {
        needed_bytes: need(&fp),
        limit_bytes,
        largest_seq_len: largest,
        only_checkpointed_steps_fit: only_steps,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::BenchConfig;

    /// rev_gru's idea arm holds its information buffer on top of the checkpoints (one word of
    /// B H f32 per 24 / bits steps: at T 1000 and 3 bits, 125 words), in its training steps
    /// and its probes; its baseline holds none. Hand-derived against a GRU of the same config.
    #[test]
    fn the_information_buffer_is_counted_in_the_idea_arm() {
        let cfg = |model: &str| {
            let mut c = BenchConfig { seq_len: 1000, model: model.into(), ..BenchConfig::default() };
            c.forget_bits = 3;
            c
        };
        let of = |model: &str| Footprint::of(&cfg(model).resolve().unwrap(), 1);
        let (gru, rev) = (of("rnn_small"), of("rev_gru"));
        let c = cfg("rev_gru");
        let word = 4 * (c.batch_size * c.hidden_size) as u64;
        let runs = (c.lrs.len() * c.n_sweep_seeds).max(c.n_seeds) as u64;
        assert_eq!(rev.arms[1].step_bytes - gru.arms[1].step_bytes, runs * 125 * word);
        let probe_word = 4 * (PROBE_SEQUENCES * c.hidden_size) as u64;
        assert_eq!(rev.arms[1].probe_bytes - gru.arms[1].probe_bytes, runs * 125 * probe_word);
        assert_eq!(rev.arms[0], gru.arms[0], "the baseline reverses nothing");
    }
}
