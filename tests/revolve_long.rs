//! Sequences of thousands of steps: the schedules' costs grow as their formulas say, no
//! faster. Revolve's plan for T = 10,000 takes milliseconds (the binomial closed form, not the
//! O(T^2 s) cost recursion) and its forward steps are the binomial optimum, the
//! `checkpoint-schedules` package's at T = 1,000 and 10,000; and a probe's schedules, run on
//! a tiny GRU at T = 1,000 and 4,000, count (through `model::evals`) what dense BPTT,
//! fixed-interval checkpointing, revolve, reversal and the idea should.

mod common;
use common::*;
use rdbench_core::frontier::grid;
use rdbench_core::policy::Policy;
use rdbench_core::records::{FrontierPoint, ScheduleKind};
use rdbench_engine::idea::probe::{ProbeSettings, probe};
use rdbench_engine::model::Gru;
use rdbench_engine::schedule::plan::Action;
use rdbench_engine::schedule::revolve;
use rdbench_engine::train::init_population;
use std::time::Instant;

/// C(n, k), exactly.
fn binomial(n: u64, k: u64) -> u128 {
    let k = k.min(n - k);
    (0..k).fold(1u128, |acc, i| acc * (n - i) as u128 / (i + 1) as u128)
}

/// Griewank & Walther's minimum of forward steps (outside the VJPs' own) to reverse `t` steps
/// with `slots` snapshots: r T - C(s + r, s + 1), r the least with C(s + r, s) >= T, where
/// s = min(slots, T - 1).
fn binomial_optimum(t: usize, slots: usize) -> u64 {
    if t < 2 {
        return 0;
    }
    let (t, s) = (t as u64, slots.min(t - 1) as u64);
    let r = (0..).find(|&r| binomial(s + r, s) >= t as u128).unwrap();
    (r as u128 * t as u128 - binomial(s + r, s + 1)) as u64
}

/// Walk `plan` for `t` steps as the executor would, without a model: it must be a valid
/// schedule. Returns its forward steps and the most snapshots it held at once.
fn dry_run(t: usize, plan: &[Action]) -> (u64, usize) {
    let mut held = vec![false; t + 1];
    let (mut cur, mut next_vjp, mut advances, mut n_held, mut peak) = (0, t, 0u64, 0, 0);
    for &a in plan {
        match a {
            Action::Store => {
                assert!(!held[cur], "state {cur} stored twice");
                held[cur] = true;
                n_held += 1;
                peak = peak.max(n_held);
            }
            Action::Advance => {
                assert!(cur < t, "advance past T");
                cur += 1;
                advances += 1;
            }
            Action::Restore(s) => {
                assert!(held[s], "restore of {s}, not held");
                cur = s;
            }
            Action::Take(s) => {
                assert!(held[s], "take of {s}, not held");
                held[s] = false;
                n_held -= 1;
                cur = s;
            }
            Action::Vjp => {
                assert_eq!(cur + 1, next_vjp, "VJP out of order");
                next_vjp -= 1;
            }
        }
    }
    assert_eq!(next_vjp, 0, "VJPs missing");
    (advances, peak)
}

#[test]
fn revolve_takes_the_packages_optimum_at_a_thousand_and_ten_thousand_steps() {
    // The `checkpoint-schedules` package's Revolve at T = 1000 and its optimum at T = 10000
    // (tests/fixtures/revolve_schedules.json, `long_cases`).
    let fx = fixture("revolve_schedules.json");
    let cases = fx["long_cases"].as_array().unwrap();
    assert_eq!(cases.len(), 7, "T = 1000 at 2, 3, 5, 10 slots; T = 10000 at 2, 3, 5");
    for c in cases {
        let n = |k: &str| c[k].as_u64().unwrap();
        let (t, slots) = (n("t") as usize, n("slots") as usize);
        let (advances, peak) = dry_run(t, &revolve::plan(t, slots));
        assert_eq!(advances + t as u64, n("optimal_total"), "T {t}, {slots} slots");
        assert_eq!(advances, binomial_optimum(t, slots), "T {t}, {slots} slots: the closed form");
        if let Some(want) = c["advances"].as_u64() {
            assert_eq!(advances, want, "T {t}, {slots} slots");
        }
        assert!(peak <= slots, "T {t}: {peak} snapshots held with {slots} slots");
    }
}

#[test]
fn revolve_plans_ten_thousand_steps_quickly() {
    let t = 10_000;
    for slots in [2, 3, 5, 10, 100, 5_000, 9_999] {
        let start = Instant::now();
        let plan = revolve::plan(t, slots);
        let took = start.elapsed();
        let (advances, peak) = dry_run(t, &plan);
        eprintln!(
            "revolve::plan({t}, {slots}): {:.2} ms, {} actions, {advances} forward steps",
            took.as_secs_f64() * 1e3,
            plan.len()
        );
        assert_eq!(advances, binomial_optimum(t, slots), "{slots} slots");
        assert!(peak <= slots, "{peak} snapshots held with {slots} slots");
    }
}

/// What a point of the frontier should have counted, from its schedule's formula for `t`
/// steps (`iters` fixed-point iterations per rebuilt GRU state): states held (for revolve, the
/// most it may hold), forward and reversal cell evaluations.
fn formula(p: &FrontierPoint, t: usize, iters: u64) -> (usize, u64, u64) {
    let t64 = t as u64;
    match p.at.schedule {
        ScheduleKind::Dense => (t + 1, t64, 0),
        ScheduleKind::FixedInterval => {
            // m segments: (m - 1) k steps to the last one's start, then every segment's
            // states but its last again. Held at the peak: the earlier segments' starts and
            // a segment's states, the working one included.
            let k = p.at.k.unwrap();
            let m = t.div_ceil(k);
            let last = t - (m - 1) * k;
            let held = if m == 1 { t } else { (m - 1 + last).max(m + k - 2) };
            (held, ((m - 1) * k + t - m) as u64, 0)
        }
        ScheduleKind::Revolve => {
            let slots = p.at.slots.unwrap();
            (slots + 1, binomial_optimum(t, slots), 0)
        }
        ScheduleKind::Reversal | ScheduleKind::Idea => {
            // Checkpoints at 0, k, 2k, .., T; every state 1..T-1 between them rebuilt once.
            let k = p.at.k.unwrap();
            let rebuilt = (t - 1 - (t - 1) / k) as u64;
            (t.div_ceil(k) + 1, t64, rebuilt * iters)
        }
    }
}

#[test]
fn a_probes_schedules_count_what_their_formulas_say_at_long_lengths() {
    let (hidden, batch_size, iters, k_max) = (4, 2, 3, 16);
    let model = Gru::new(2, hidden, 2);
    let (params, _) = init_population(&model, &[0, 1], &device());
    // A huge tau: the idea takes k_max, so its reversal is counted too.
    let s =
        ProbeSettings { tau: 1e6, k_max, policy: Policy::OneStep, reversal_iters: iters, batch_size, frontier: true };
    for t in [1_000, 4_000] {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for n in 0..batch_size {
            for i in 0..t {
                let a = 0.05 * i as f64 + n as f64;
                x.extend([a.sin(), a.cos()]);
                y.extend([(a + 0.05).sin(), (a + 0.05).cos()]);
            }
        }
        let batch = batch_of(x, y, batch_size, t, 2, 2);
        let start = Instant::now();
        let recs = futures::executor::block_on(probe(&model, &params, &batch, &s, 0)).unwrap();
        let took = start.elapsed().as_secs_f64();
        let g = grid(t, k_max);
        let mut cells = 0;
        for rec in &recs {
            assert!(rec.k > 1, "the idea reverses");
            let of = |kind: ScheduleKind| rec.frontier.iter().filter(move |p| p.at.schedule == kind).count();
            assert_eq!(of(ScheduleKind::Dense), 1);
            assert_eq!(of(ScheduleKind::Idea), 1);
            assert_eq!(of(ScheduleKind::FixedInterval), g.fixed_interval_ks.len());
            assert_eq!(of(ScheduleKind::Reversal), g.reversal_ks.len());
            assert!(of(ScheduleKind::Revolve) >= g.revolve_slots.len());
            for p in &rec.frontier {
                let (held, forward, reversal) = formula(p, t, iters as u64);
                let at = format!("T {t}, {:?} k {:?} slots {:?}", p.at.schedule, p.at.k, p.at.slots);
                assert_eq!((p.forward_evals, p.reversal_evals, p.vjp_steps), (forward, reversal, t as u64), "{at}");
                if p.at.schedule == ScheduleKind::Revolve {
                    assert!(p.stored_states <= held, "{at}: {} states held", p.stored_states);
                } else {
                    assert_eq!(p.stored_states, held, "{at}");
                }
                cells += p.cell_evals() + p.vjp_steps;
            }
        }
        eprintln!(
            "T {t}: a probe of 2 runs, {} points, {cells} cell evaluations and VJPs counted, {took:.2} s",
            recs.iter().map(|r| r.frontier.len()).sum::<usize>()
        );
    }
}
