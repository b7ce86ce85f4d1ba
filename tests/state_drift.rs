//! Why the reversible ODE model fails at long T: its state drifts. rev_ode_small's step is two
//! additive couplings (a' = a + c tanh(..), b' = b + c tanh(..)): volume-preserving, with no
//! decay, so nothing pulls the state back, and each step adds up to c = 0.25 per unit. When
//! a coupling's output has a mean (its bias, the inputs' mean), the state walks away linearly
//! in t. The GRU's state is a convex combination of the last state and a tanh, so it stays
//! in [-1, 1] at any T; rev_gru forgets (its update gate) and stays bounded too. Measured at
//! initialisation (seed 0, H = 32, 32 sequences), the RMS of h_t over sequences and units;
//! `--nocapture` prints the table docs/STUDY.md quotes.

mod common;
use common::*;
use rdbench_core::track::{Adding, Pendulum, Task, Track};
use rdbench_engine::batch::DeviceData;
use rdbench_engine::model::{self, ModelShape};
use rdbench_engine::train::dense::hidden_states;
use rdbench_engine::train::init_population;

const T: usize = 3000;
const AT: [usize; 4] = [10, 100, 1000, 3000];

/// RMS and largest |h| of h_t at each t of `AT`, for `name` on `track`'s first 32 sequences.
fn drift(name: &str, track: &dyn Track) -> Vec<(f64, f64)> {
    let data = track.generate(0, 32);
    let shape = ModelShape {
        input: track.input_dim(),
        hidden: 32,
        output: track.output_dim(),
        rank0: 2,
        rank_max: 8,
        task: track.task(),
        forget_bits: 3,
    };
    let model = model::by_name(name, &shape).unwrap();
    let (params, _) = init_population(&*model, &[0], &device());
    let batch = DeviceData::new(&data.train, &device()).all(1, 32);
    let hs = hidden_states(&*model, &params, &batch);
    AT.iter()
        .map(|&t| {
            let h = read(hs[t].clone());
            let rms = (h.iter().map(|v| v * v).sum::<f64>() / h.len() as f64).sqrt();
            (rms, h.iter().fold(0.0f64, |m, v| m.max(v.abs())))
        })
        .collect()
}

#[test]
fn the_reversible_odes_state_drifts_with_t_and_the_grus_stays_bounded() {
    let tracks: [(&str, Box<dyn Track>); 2] =
        [("adding", Box::new(Adding::new(T))), ("dynamics", Box::new(Pendulum::new(T)))];
    for (tname, track) in &tracks {
        assert!(matches!(track.task(), Task::LastStepRegression | Task::Regression));
        let mut rows = Vec::new();
        for m in ["rnn_small", "rev_ode_small", "rev_gru"] {
            let d = drift(m, &**track);
            let cells: Vec<String> = d.iter().map(|(rms, max)| format!("{rms:.3} ({max:.2})")).collect();
            println!("{tname:>8} {m:>13}: RMS (max |h|) at t = {AT:?}: {}", cells.join("  "));
            rows.push((m, d));
        }
        for (m, d) in &rows {
            let (first, last) = (d[1].0, d[3].0);
            match *m {
                // A convex combination of the previous state and a tanh: |h| <= 1 always.
                "rnn_small" | "rev_gru" => {
                    assert!(d.iter().all(|&(_, max)| max <= 1.0 + 1e-6), "{tname} {m}: {d:?}");
                }
                // Drift: from t = 100 to 3000 the RMS grows at least tenfold (linear drift
                // gives 30x; a random walk of independent steps would give 5.5x).
                _ => assert!(last > 10.0 * first && last > 10.0, "{tname} {m}: {d:?}"),
            }
        }
    }
}
