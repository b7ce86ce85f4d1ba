//! Track `mnist1d` against the PyPI package and its numpy/scipy building blocks
//! (`tools/make_fixtures.py numpy_legacy mnist1d mnist1d_lengths`).

use rdbench_track::legacy_random::LegacyRandom;
use rdbench_track::mnist1d::{Mnist1dArgs, Mnist1dData, make_dataset, templates};
use rdbench_track::signal::{gaussian_filter1d, interp, linspace, mean, std};
use rdbench_track::{Mnist1d, Task, Track};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = format!("{}/../../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn ints(v: &Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "{what}[{i}]: {g} vs numpy {w}");
    }
}

#[test]
fn legacy_random_state_draws_as_numpy() {
    let f = fixture("numpy_legacy.json");
    let mut rng = LegacyRandom::new(42);
    for step in f["script"].as_array().unwrap() {
        let (op, arg, want) = (step[0].as_str().unwrap(), step[1].as_u64().unwrap(), &step[2]);
        let what = format!("{op}({arg})");
        match op {
            "uint32" => {
                let got: Vec<u64> = (0..arg).map(|_| rng.next_u32() as u64).collect();
                assert_eq!(got, ints(want), "{what}");
            }
            // Bit-exact: the same doubles from the same 32-bit draws.
            "random_sample" => assert_eq!((0..arg).map(|_| rng.random_sample()).collect::<Vec<_>>(), floats(want)),
            "standard_normal" => {
                let got: Vec<f64> = (0..arg).map(|_| rng.standard_normal()).collect();
                assert_close(&got, &floats(want), 1e-15, &what);
            }
            "choice" | "randint" => {
                let got: Vec<u64> = (0..ints(want).len()).map(|_| rng.randint(arg)).collect();
                assert_eq!(got, ints(want), "{what}");
            }
            "permutation" => {
                let got: Vec<u64> = rng.permutation(arg as usize).into_iter().map(|v| v as u64).collect();
                assert_eq!(got, ints(want), "{what}");
            }
            other => panic!("unknown op {other}"),
        }
    }
    for (seed, want) in f["seeds"].as_object().unwrap() {
        let mut rng = LegacyRandom::new(seed.parse().unwrap());
        assert_eq!((0..3).map(|_| rng.next_u32() as u64).collect::<Vec<_>>(), ints(want), "seed {seed}");
    }
}

#[test]
fn signal_operations_match_numpy_and_scipy() {
    let f = fixture("numpy_legacy.json");
    let l = &f["linspace"];
    assert_eq!(linspace(0.0, 1.0, 72), floats(&l["0_1_72"]));
    assert_eq!(linspace(-0.5, 0.5, 72), floats(&l["m05_05_72"]));
    assert_eq!(linspace(0.0, 1.0, 40), floats(&l["0_1_40"]));
    let i = &f["interp"];
    assert_eq!(interp(&floats(&i["x"]), &floats(&i["xp"]), &floats(&i["fp"])), floats(&i["out"]));
    let g = &f["gaussian_filter"];
    let x = floats(&g["x"]);
    assert_close(&gaussian_filter1d(&x, 2.0), &floats(&g["sigma2"]), 1e-15, "gaussian_filter sigma 2");
    assert_close(&gaussian_filter1d(&x, 1.0), &floats(&g["sigma1"]), 1e-15, "gaussian_filter1d sigma 1");
    let short = floats(&g["short"]);
    assert_close(&gaussian_filter1d(&short, 2.0), &floats(&g["short_sigma2"]), 1e-15, "5 values, radius 8");
    let m = &f["moments"];
    let big = floats(&m["x"]);
    assert!((mean(&big) - m["mean"].as_f64().unwrap()).abs() < 1e-15);
    assert!((std(&big) - m["std"].as_f64().unwrap()).abs() < 1e-15);
}

/// `d` against one entry of a make_dataset fixture (labels, whole rows, sums per split);
/// `what` names the case in failures.
fn assert_matches_package(d: &Mnist1dData, want: &Value, what: &str) {
    let labels = |v: &[u8]| v.iter().map(|&c| c as u64).collect::<Vec<_>>();
    assert_eq!(labels(&d.y), ints(&want["y"]), "{what}: train labels");
    assert_eq!(labels(&d.y_test), ints(&want["y_test"]), "{what}: test labels");
    for (rows, x, key) in [("x_rows", &d.x, "train"), ("x_test_rows", &d.x_test, "test")] {
        for (i, row) in want[rows].as_object().unwrap() {
            let i: usize = i.parse().unwrap();
            assert_close(&x[i * d.len..(i + 1) * d.len], &floats(row), 1e-9, &format!("{what} {key} {i}"));
        }
        let n = x.len() / d.len;
        let weighted: f64 = (0..n)
            .flat_map(|r| (0..d.len).map(move |c| (r, c)))
            .map(|(r, c)| x[r * d.len + c] * ((r + 1) * (c + 1)) as f64 / 1e4)
            .sum();
        let sums = &want[key];
        let sq: f64 = x.iter().map(|v| v * v).sum();
        for (got, name) in [(x.iter().sum::<f64>(), "sum"), (sq, "sum_sq"), (weighted, "weighted")] {
            let w = sums[name].as_f64().unwrap();
            assert!((got - w).abs() < 1e-9 * w.abs().max(1.0) * 1e3, "{what} {key} {name}: {got} vs {w}");
        }
    }
}

#[test]
fn the_dataset_is_the_packages_for_each_seed() {
    let f = fixture("mnist1d.json");
    for (t, want) in templates().iter().zip(f["templates"].as_array().unwrap()) {
        assert_close(t, &floats(want), 1e-15, "template");
    }
    let args = Mnist1dArgs::default();
    for (seed, want) in f["seeds"].as_object().unwrap() {
        assert_matches_package(&make_dataset(&args, seed.parse().unwrap()), want, &format!("seed {seed}"));
    }
}

#[test]
fn make_dataset_matches_the_package_at_other_lengths() {
    let f = fixture("mnist1d_lengths.json");
    let seed = f["seed"].as_u64().unwrap() as u32;
    for (len, want) in f["lengths"].as_object().unwrap() {
        let final_seq_length: usize = len.parse().unwrap();
        let d = make_dataset(&Mnist1dArgs { final_seq_length, ..Default::default() }, seed);
        assert_eq!(d.len, final_seq_length, "length {len}: steps per example");
        assert_matches_package(&d, want, &format!("length {len}"));
    }
}

#[test]
fn the_track_serves_one_hot_classes_of_the_generated_set() {
    let track = Mnist1d::default();
    assert_eq!((track.input_dim(), track.output_dim(), track.seq_len(), track.n_train()), (1, 10, 40, 4000));
    assert_eq!(track.task(), Task::Classification { classes: 10 });
    let data = track.generate_all(42);
    assert_eq!((data.train.n, data.test.n), (4000, 1000));
    let raw = make_dataset(&Mnist1dArgs::default(), 42);
    let labels: Vec<usize> = raw.y.iter().map(|&c| c as usize).collect();
    assert_eq!(data.train.labels().unwrap(), labels);
    assert_eq!(data.train.y.len(), 4000 * 10);
    assert_eq!(data.train.x[..40], raw.x[..40].iter().map(|&v| v as f32).collect::<Vec<_>>()[..]);
    let sub = data.with_train(1000);
    assert_eq!((sub.train.n, sub.test.n), (1000, 1000));
    assert_eq!(sub.train.labels().unwrap(), labels[..1000]);
}
