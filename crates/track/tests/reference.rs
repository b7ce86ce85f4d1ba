//! Each track's trivial predictor against a hand computation on a tiny dataset, and against
//! its definition on the track's own data.

use rdbench_track::{Adding, Dataset, Mnist1d, Pendulum, TRACKS, Task, Track, TrackData};

fn data(train: Dataset, test: Dataset) -> TrackData {
    TrackData { train, test }
}

#[test]
fn the_adding_reference_is_the_mse_of_always_predicting_one() {
    let test = Dataset {
        n: 3,
        t: 2,
        f_in: 2,
        f_out: 1,
        x: vec![0.0; 12],
        y: vec![1.5, 0.5, 1.0],
        task: Task::LastStepRegression,
    };
    let r = Adding::new(2).reference(&data(test.clone(), test));
    // (0.25 + 0.25 + 0) / 3.
    assert!((r.metric - 1.0 / 6.0).abs() < 1e-12, "{}", r.metric);
    assert_eq!(r.name, "always predicting 1");
}

#[test]
fn the_pendulum_reference_is_the_training_mean_state_over_every_test_step_and_feature() {
    // Training targets (theta, omega): (0.1, -0.2), (0.3, 0.2), (0.2, 0.3): mean (0.2, 0.1).
    let train = Dataset {
        n: 1,
        t: 3,
        f_in: 2,
        f_out: 2,
        x: vec![0.0; 6],
        y: vec![0.1, -0.2, 0.3, 0.2, 0.2, 0.3],
        task: Task::Regression,
    };
    // Test targets (0.2, 0.5), (0.0, 0.1): errors 0, 0.4, -0.2, 0.
    let test =
        Dataset { n: 1, t: 2, f_in: 2, f_out: 2, x: vec![9.0; 4], y: vec![0.2, 0.5, 0.0, 0.1], task: Task::Regression };
    let r = Pendulum::new(2).reference(&data(train, test));
    // (0 + 0.16 + 0.04 + 0) / 4 = 0.05.
    assert!((r.metric - 0.05).abs() < 1e-7, "{}", r.metric);
    assert_eq!(r.name, "always predicting the training targets' mean state");
}

#[test]
fn the_pendulum_reference_on_its_data_is_the_constant_with_the_least_error() {
    let p = Pendulum { n_train: 4, n_test: 3, ..Pendulum::new(5) };
    let d = p.generate_all(7);
    let r = p.reference(&d);
    let mse =
        |c: [f64; 2]| d.test.y.iter().enumerate().map(|(i, &v)| (v as f64 - c[i % 2]).powi(2)).sum::<f64>() / 30.0;
    // The training mean, by hand over the 4 x 5 target states.
    let mut m = [0.0; 2];
    for (i, &v) in d.train.y.iter().enumerate() {
        m[i % 2] += v as f64 / 20.0;
    }
    assert!((r.metric - mse(m)).abs() < 1e-6, "{} vs {}", r.metric, mse(m));
    // Persistence, the naive forecast, scores far lower: the reference is no forecast.
    let persistence = rdbench_track::mean_squared_error(&d.test.x, &d.test.y);
    assert!(persistence < r.metric / 5.0, "{persistence} vs {}", r.metric);
}

fn one_hot(labels: &[usize], classes: usize) -> Dataset {
    Dataset {
        n: labels.len(),
        t: 1,
        f_in: 1,
        f_out: classes,
        x: vec![0.0; labels.len()],
        y: labels.iter().flat_map(|&c| (0..classes).map(move |k| if k == c { 1.0 } else { 0.0 })).collect(),
        task: Task::Classification { classes },
    }
}

#[test]
fn the_mnist1d_reference_predicts_the_training_majority_scored_on_the_test_set() {
    // Class 3 is the training majority (three of six); the test set has it twice in five.
    let d = data(one_hot(&[3, 1, 3, 7, 3, 1], 10), one_hot(&[3, 0, 3, 9, 1], 10));
    let r = Mnist1d::new(2).reference(&d);
    assert_eq!(r.metric, 0.4);
    assert!(r.name.contains("majority class (3)"), "{}", r.name);
    // A tie goes to the smaller class: 1 and 3 twice each.
    let d = data(one_hot(&[3, 1, 3, 1], 10), one_hot(&[1, 1, 3, 0], 10));
    assert_eq!(Mnist1d::new(2).reference(&d).metric, 0.5);
}

#[test]
fn the_mnist1d_reference_reads_the_benchs_train_sequences_only() {
    let t = Mnist1d::new(40);
    let full = t.generate_all(0);
    let small = full.clone().with_train(10);
    let mut counts = [0usize; 10];
    for c in small.train.labels().unwrap() {
        counts[c] += 1;
    }
    let best = *counts.iter().max().unwrap();
    let class = counts.iter().position(|&c| c == best).unwrap();
    let test = full.test.labels().unwrap();
    let want = test.iter().filter(|&&c| c == class).count() as f64 / test.len() as f64;
    assert_eq!(t.reference(&small).metric, want);
}

/// The references at each track's default length and data seed 0, with the bench's default
/// train size (what a default bench's report carries).
#[test]
fn every_track_has_a_reference_at_its_default() {
    for e in TRACKS {
        let track = (e.build)(e.seq_lens.default);
        let d = track.generate(0, track.default_train());
        let r = track.reference(&d);
        println!("{}: {} = {}", e.name, r.name, r.metric);
        assert!(r.metric.is_finite() && r.metric > 0.0, "{}: {}", e.name, r.metric);
        if !track.task().is_regression() {
            assert!(r.metric < 1.0, "{}: {}", e.name, r.metric);
        }
    }
}
