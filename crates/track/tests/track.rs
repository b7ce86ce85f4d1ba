//! Track `dynamics`: RK4 against hand-derived references, determinism, split sizes.

use rdbench_track::{Pendulum, Track};
use std::f64::consts::PI;

#[test]
fn rk4_conserves_energy_without_damping() {
    let p = Pendulum { gamma: 0.0, ..Pendulum::default() };
    let energy = |(th, om): (f64, f64)| 0.5 * om * om - p.w0_sq * th.cos();
    let traj = p.trajectory(2.0, 0.5);
    let e0 = energy(traj[0]);
    for s in &traj {
        assert!((energy(*s) - e0).abs() < 1e-8, "energy drift {}", energy(*s) - e0);
    }
}

#[test]
fn rk4_matches_the_small_angle_closed_form() {
    // theta'' = -w0^2 theta - gamma theta' for |theta| << 1:
    // theta(t) = th0 e^{-gamma t / 2} (cos wd t + gamma / (2 wd) sin wd t).
    let p = Pendulum::default();
    let th0 = 1e-3;
    let wd = (p.w0_sq - p.gamma * p.gamma / 4.0).sqrt();
    for (i, (th, _)) in p.trajectory(th0, 0.0).into_iter().enumerate() {
        let t = i as f64 * 0.1;
        let want = th0 * (-p.gamma * t / 2.0).exp() * ((wd * t).cos() + p.gamma / (2.0 * wd) * (wd * t).sin());
        assert!((th - want).abs() < 1e-9, "t = {t}: {th} vs {want}");
    }
}

#[test]
fn damping_loses_energy() {
    let p = Pendulum::default();
    let energy = |(th, om): (f64, f64)| 0.5 * om * om - p.w0_sq * th.cos();
    let traj = p.trajectory(2.0, 0.0);
    assert!(energy(traj[80]) < energy(traj[0]) - 0.1);
}

#[test]
fn dataset_is_deterministic_shaped_and_scaled() {
    let p = Pendulum::default();
    let a = p.generate_all(0);
    let b = p.generate_all(0);
    let c = p.generate_all(1);
    assert_eq!(a.train, b.train);
    assert_eq!(a.test, b.test);
    assert_ne!(a.train.x, c.train.x);
    assert_eq!((a.train.n, a.train.t, a.train.f_in, a.train.f_out), (400, 80, 2, 2));
    assert_eq!(a.train.x.len(), 400 * 80 * 2);
    assert_eq!(a.test.n, 200);
    // y_t = x_{t+1}: targets are the inputs shifted by one step.
    for n in [0, 123, 399] {
        let base = n * 80 * 2;
        for t in 0..79 {
            assert_eq!(a.train.y[base + t * 2], a.train.x[base + (t + 1) * 2]);
        }
    }
    // Initial states inside the spec's ranges (scaled by 1/pi).
    for n in 0..400 {
        let th = a.train.x[n * 160] as f64 * PI;
        let om = a.train.x[n * 160 + 1] as f64 * PI;
        assert!(th.abs() <= 0.75 * PI && om.abs() <= 1.0, "trajectory {n}: {th} {om}");
    }
    let sweep = a.sweep_split(rdbench_track::validation_size(p.n_train()));
    assert_eq!((sweep.train.n, sweep.eval.n), (320, 80));
    assert_eq!(sweep.eval.x[..], a.train.x[320 * 160..]);
    let full = a.full_split();
    assert_eq!((full.train.n, full.eval.n), (400, 200));
}

#[test]
fn the_pendulum_takes_its_length() {
    let d = Pendulum::new(300).generate_all(0);
    assert_eq!((d.train.t, d.train.x.len()), (300, 400 * 300 * 2));
    // The first 80 steps of a longer rollout are the default rollout's.
    let short = Pendulum::default().generate_all(0);
    for i in [0, 17, 399] {
        assert_eq!(&d.train.x[i * 600..i * 600 + 160], &short.train.x[i * 160..(i + 1) * 160]);
    }
}
