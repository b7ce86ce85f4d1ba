//! The checkpointed pass really holds fewer states: peak heap bytes of one idea gradient
//! step at k = 16 against k = 1, measured by a counting global allocator on a config where
//! hidden states dominate (hidden 256, batch 64, T 80). Figures are in the README.

mod common;
use common::*;
use rdbench::alloc_count::{Counting, peak_during};
use rdbench::idea::checkpointed::checkpointed_grads;
use rdbench::model::Gru;
use rdbench::track::{Pendulum, Track};
use rdbench::train::batch::DeviceData;
use rdbench::train::init_population;

#[global_allocator]
static ALLOC: Counting = Counting;

#[test]
fn k16_peak_is_below_k1_peak_by_the_states_it_does_not_keep() {
    let (h, b) = (256usize, 64usize);
    let data = Pendulum::default().generate(0);
    let model = Gru::new(2, h, 2);
    let (params, _) = init_population(&model, &[0], &device());
    let batch = DeviceData::new(&data.train, &device()).all(1, b);
    // Warm up any lazily allocated pools before measuring.
    drop(checkpointed_grads(&model, &params, &batch, &[1], 20));
    let (_, k1) = peak_during(|| checkpointed_grads(&model, &params, &batch, &[1], 20).out.grads);
    let (_, k16) = peak_during(|| checkpointed_grads(&model, &params, &batch, &[16], 20).out.grads);
    let state = b * h * 4;
    let saved_states = (81 - 6) * state;
    eprintln!("peak bytes: k=1 {k1}, k=16 {k16}, state bytes 81 -> 6 differ by {saved_states}");
    assert!(k16 < k1, "k=16 peak {k16} not below k=1 peak {k1}");
    assert!(k1 - k16 >= saved_states * 8 / 10, "saved {} of the {saved_states} state bytes", k1 - k16);
    // And k = 1 holds at least its 81 states.
    assert!(k1 >= 81 * state);
}
