//! rev_gru on a device against the CPU: its exact reversal and its gradient through
//! reversal. On a GPU rev_gru runs in tensor ops whose division is not correctly rounded
//! (WGSL allows 2.5 ULP); the fixed-point step corrects every quotient by its remainder, so
//! the information buffer must still give h_0 back bit for bit. The page's worker
//! (`rev_gru_check`) and the browser tests read it.

use crate::batch::DeviceData;
use crate::error::EngineError;
use crate::model::rev_gru::STATE_ONE;
use crate::model::{self, ModelShape};
use crate::schedule::Schedule;
use crate::schedule::info_buffer::InfoBuffer;
use crate::train::{init_population, read_f32};
use burn::tensor::{Device, Tensor, TensorData};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rdbench_core::track::{self, Task, Track};
use serde::Serialize;

/// One forgetting cap's round trip on the device.
#[derive(Clone, Debug, Serialize)]
pub struct RoundTrip {
    /// The forgetting cap in bits.
    pub bits: u32,
    /// Units of h_0 (runs x rows x hidden).
    pub units: usize,
    /// Units of h_0 whose bits differ after T steps forward and T back (0: exact).
    pub h0_mismatched: usize,
    /// Units of h_{T-1} a reversal without the buffer gets wrong (the steps did forget).
    pub blind_mismatched: usize,
    /// Largest |h_T on the device - h_T on the CPU| (the same parameters and inputs).
    pub h_t_vs_cpu: f32,
}

/// The check's result.
#[derive(Clone, Debug, Serialize)]
pub struct RevGruCheck {
    /// Steps forward, then back.
    pub steps: usize,
    /// Per forgetting cap.
    pub round_trips: Vec<RoundTrip>,
    /// Integer quotients whose plain float division, floored on the device, is off by one
    /// (what the remainder corrections are for), of `divisions` drawn as rev_gru's are.
    pub raw_division_off: usize,
    /// Quotients tried.
    pub divisions: usize,
    /// Largest |device - CPU| of the gradients and losses through reversal (k = 4).
    pub reversal_vs_cpu: f32,
    /// The same for dense BPTT.
    pub dense_vs_cpu: f32,
    /// Largest |reversal - dense| of the gradients on the device.
    pub reversal_vs_dense: f32,
}

fn shape(input: usize, hidden: usize, output: usize, bits: usize) -> ModelShape {
    ModelShape { input, hidden, output, rank0: 1, rank_max: 1, task: Task::Regression, forget_bits: bits }
}

/// `[a, b, c]` values uniform in (-scale, scale) from `rng`, on `device`.
fn random(rng: &mut ChaCha8Rng, [a, b, c]: [usize; 3], scale: f32, device: &Device) -> Tensor<3> {
    let v: Vec<f32> = (0..a * b * c).map(|_| rng.random_range(-scale..scale)).collect();
    Tensor::from_data(TensorData::new(v, [a, b, c]), device)
}

/// Largest |a - b| over pairs of equal-length value lists (NaN counts as infinitely far).
fn max_abs(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, |m, d| if d.is_nan() { f32::INFINITY } else { m.max(d) })
}

/// Units whose bits differ.
fn mismatched(a: &[f32], b: &[f32]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x.to_bits() != y.to_bits()).count()
}

/// `steps` steps forward collecting the digits, then back through them, on `device`; h_T
/// also on the CPU.
async fn round_trip(device: &Device, bits: u32, steps: usize) -> Result<RoundTrip, EngineError> {
    let (r, b, h) = (2, 4, 8);
    let model = model::by_name("rev_gru", &shape(3, h, 3, bits as usize)).map_err(EngineError::Device)?;
    let cpu = Device::flex();
    // The same draws on both devices. Larger weights than the init's, so the gates forget
    // near the cap.
    let draw = |device: &Device| {
        let mut rng = ChaCha8Rng::seed_from_u64(bits as u64);
        let p: Vec<Tensor<3>> =
            model.param_shapes().iter().map(|&[p, q]| random(&mut rng, [r, p, q], 1.5, device)).collect();
        let xs: Vec<Tensor<3>> = (0..steps).map(|_| random(&mut rng, [r, b, 3], 1.0, device)).collect();
        // h_0 on the fixed-point grid.
        let h0 = random(&mut rng, [r, b, h], 0.9, device).mul_scalar(STATE_ONE).round().div_scalar(STATE_ONE);
        (p, xs, h0)
    };
    let (params, xs, h0) = draw(device);
    let mut buffer = InfoBuffer::new(bits);
    let mut prev = h0.clone();
    let mut last = h0.clone();
    for x in &xs {
        let (next, digits) = model.step_forgetting(&params, last.clone(), x.clone());
        buffer.push(digits);
        prev = last;
        last = next;
    }
    let h_t = read_f32(last.clone()).await?;
    let blind = read_f32(model.reverse(&params, last.clone(), xs[steps - 1].clone(), 1)).await?;
    let blind_mismatched = mismatched(&blind, &read_f32(prev).await?);
    let mut g = last;
    for x in xs.iter().rev() {
        g = model.reverse_with(&params, g, x.clone(), buffer.pop());
    }
    let (back, h0) = (read_f32(g).await?, read_f32(h0).await?);

    let (cpu_params, cpu_xs, cpu_h0) = draw(&cpu);
    let cpu_h_t = cpu_xs.iter().fold(cpu_h0, |h, x| model.step(&cpu_params, h, x.clone()));
    let h_t_vs_cpu = max_abs(&h_t, &read_f32(cpu_h_t).await?);
    Ok(RoundTrip { bits, units: h0.len(), h0_mismatched: mismatched(&back, &h0), blind_mismatched, h_t_vs_cpu })
}

/// How often floor(num / den) in plain float division misses the integer quotient on
/// `device`, for num and den as rev_gru's preimage divides them: |num| < 2^23, den a gate's
/// integer 1..=1024. Each num is a multiple of den or one off, where a quotient one ULP low
/// floors to the integer below.
async fn raw_division(device: &Device) -> Result<(usize, usize), EngineError> {
    let n = 1 << 16;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let dens: Vec<i32> = (0..n).map(|_| rng.random_range(1..=1024)).collect();
    let nums: Vec<i32> = dens
        .iter()
        .map(|&d| {
            let q = rng.random_range(-(1 << 23) / d + 1..(1 << 23) / d);
            (q * d + rng.random_range(-1..=1)).clamp(-(1 << 23) + 1, (1 << 23) - 1)
        })
        .collect();
    let to_device = |v: &[i32]| {
        Tensor::<3>::from_data(TensorData::new(v.iter().map(|&a| a as f32).collect::<Vec<_>>(), [1, 1, n]), device)
    };
    let q = read_f32((to_device(&nums) / to_device(&dens)).floor()).await?;
    let off = nums.iter().zip(&dens).zip(&q).filter(|((a, d), q)| a.div_euclid(**d) as f32 != **q).count();
    Ok((off, n))
}

/// Gradients and losses of a pass, flattened.
async fn flat(pass: crate::schedule::Pass) -> Result<Vec<f32>, EngineError> {
    let mut v = Vec::new();
    for g in pass.grads {
        v.extend(read_f32(g).await?);
    }
    v.extend(read_f32(pass.loss.expect("dense and reversal passes evaluate the loss")).await?);
    Ok(v)
}

/// Run the check on `device` (compared with the CPU, burn-flex): round trips of `steps`
/// steps at caps 3 and 10 (10: gates down to 1/1024, the largest quotients), and the
/// gradient through reversal of a small rev_gru (hidden 16, 2 runs of 8 pendulum
/// sequences) against dense BPTT on both devices.
pub async fn rev_gru_check(device: &Device, steps: usize) -> Result<RevGruCheck, EngineError> {
    let steps = steps.max(1);
    let mut round_trips = Vec::new();
    for bits in [3, 10] {
        round_trips.push(round_trip(device, bits, steps).await?);
    }
    let (raw_division_off, divisions) = raw_division(device).await?;

    let model = model::by_name("rev_gru", &shape(2, 16, 2, 3)).map_err(EngineError::Device)?;
    let data = track::Pendulum::default().generate_all(0);
    let cpu = Device::flex();
    let passes = |device: &Device| {
        let (params, _) = init_population(&*model, &[0, 1], device);
        let batch = DeviceData::new(&data.train, device).all(2, 8);
        (Schedule::Dense.run(&*model, &params, &batch, 1), Schedule::Reversal { k: 4 }.run(&*model, &params, &batch, 1))
    };
    let (dense, reversal) = passes(device);
    let (dense, reversal) = (flat(dense).await?, flat(reversal).await?);
    let (cpu_dense, cpu_reversal) = passes(&cpu);
    let (cpu_dense, cpu_reversal) = (flat(cpu_dense).await?, flat(cpu_reversal).await?);
    Ok(RevGruCheck {
        steps,
        round_trips,
        raw_division_off,
        divisions,
        reversal_vs_cpu: max_abs(&reversal, &cpu_reversal),
        dense_vs_cpu: max_abs(&dense, &cpu_dense),
        reversal_vs_dense: max_abs(&reversal, &dense),
    })
}
