//! The sequence length as a knob: each track's default T gives the runs the previous build
//! gave (the committed study's runs, bit for bit but for what measures time and bytes), a
//! tiny bench on the adding problem at T = 2,000 runs, validates and is rejected after a
//! change of its `seq_len`, and the CLI refuses a config that will not fit in memory with the
//! longest T that does.

use rdbench_core::config::BenchConfig;
use rdbench_core::records::{Arm, Phase, RunRecord, RunSpec};
use rdbench_engine::host::Quiet;
use serde_json::Value;
use std::process::Command;

/// A run's JSON without what measures time and bytes (the study measured with a counting
/// allocator this test does not install), the population it trained in, or the build that
/// made it (the study's predates builds): what `validate --rerun` compares.
fn untimed(r: &RunRecord) -> Value {
    rdbench_core::rerun::computed_part(serde_json::to_value(r).unwrap())
}

/// Baseline and idea full runs of seed 0 of the study's first bench on `track`, retrained at
/// the track's default length spelled as 0 and as the number: the study's runs.
#[test]
fn each_tracks_default_length_reproduces_the_committed_runs() {
    let study: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/study/study_report.json")).unwrap(),
    )
    .unwrap();
    let backend = rdbench_engine::backend::cpu("flex").unwrap();
    for (track, len) in [("dynamics", 80), ("mnist1d", 40)] {
        let report = study["reports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["config"]["track"] == track && r["config"]["model"] == "rnn_small")
            .unwrap();
        let cfg: BenchConfig = serde_json::from_value(report["config"].clone()).unwrap();
        assert_eq!(cfg.seq_len, 0, "the study ran before the length was a knob");
        let committed: Vec<RunRecord> = serde_json::from_value(report["runs"].clone()).unwrap();
        let want: Vec<&RunRecord> = [Arm::Baseline, Arm::Idea]
            .iter()
            .map(|&a| committed.iter().find(|r| r.arm == a && r.phase == Phase::Full && r.seed == 0).unwrap())
            .collect();
        for spelled in [0, len] {
            let cfg = BenchConfig { seq_len: spelled, ..cfg.clone() };
            let specs: Vec<RunSpec> = want.iter().map(|r| r.spec()).collect();
            let got = futures::executor::block_on(rdbench_engine::protocol::train_runs(
                &cfg.resolve().unwrap(),
                &backend,
                &specs,
                &mut Quiet,
            ))
            .unwrap();
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(untimed(g), untimed(w), "{track} seq_len {spelled}: {:?} run differs", g.arm);
            }
        }
    }
}

fn rdbench(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rdbench")).args(args).envs(env.iter().copied()).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

const TINY: &[&str] = &[
    "--seeds",
    "2",
    "--sweep-seeds",
    "1",
    "--lrs",
    "0.01",
    "--epochs",
    "1",
    "--hidden",
    "4",
    "--batch",
    "8",
    "--train-size",
    "10",
];

#[test]
fn a_tiny_adding_bench_at_two_thousand_steps_runs_validates_and_pins_its_length() {
    let dir = std::env::temp_dir().join(format!("rdbench-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("adding.json");
    let mut args = vec!["run", "--quiet", "--track", "adding", "--seq-len", "2000", "--out", out.to_str().unwrap()];
    args.extend_from_slice(TINY);
    let (code, stdout, err) = rdbench(&args, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("trivial predictor (always predicting 1): test MSE"), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!((v["task"]["seq_len"].as_u64(), v["task"]["readout"].as_str()), (Some(2000), Some("last_step")));
    assert_eq!(v["memory"]["dense_states"].as_u64(), Some(2001));
    let reference = v["task"]["reference"]["value"].as_f64().unwrap();
    assert!((reference - 1.0 / 6.0).abs() < 0.05, "trivial MSE {reference}");
    let (code, _, err) = rdbench(&["validate", out.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{err}");
    // The same report claiming another length: its runs, memory and hashes give it away.
    let mut forged = v.clone();
    forged["config"]["seq_len"] = 1000.into();
    let forged_path = dir.join("forged.json");
    std::fs::write(&forged_path, serde_json::to_string(&forged).unwrap()).unwrap();
    let (code, out_text, err) = rdbench(&["validate", forged_path.to_str().unwrap()], &[]);
    assert_ne!(code, 0, "a changed seq_len validated:\n{out_text}");
    assert!(format!("{out_text}{err}").contains("seq_len"), "{out_text}{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_config_that_will_not_fit_is_refused_before_any_work_with_the_largest_length_that_fits() {
    let dir = std::env::temp_dir().join(format!("rdbench-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("big.json");
    let mut args = vec!["run", "--track", "adding", "--seq-len", "10000", "--out", out.to_str().unwrap()];
    args.extend_from_slice(TINY);
    let started = std::time::Instant::now();
    let (code, _, err) = rdbench(&args, &[("RDBENCH_MEMORY_LIMIT", "64M")]);
    assert_ne!(code, 0);
    assert!(started.elapsed().as_secs() < 10, "refused only after work");
    assert!(err.contains("refused before any work") && err.contains("more than 67 MB"), "{err}");
    let largest: usize = err
        .split("the largest T that fits is ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no largest T in: {err}"));
    assert!((2..10_000).contains(&largest), "{largest}");
    assert!(!out.exists(), "nothing is written");
    // That length runs under the same limit; one step more is refused.
    let t = largest.to_string();
    let fits: Vec<&str> = args.iter().map(|a| if *a == "10000" { t.as_str() } else { a }).chain(["--quiet"]).collect();
    let (code, _, err) = rdbench(&fits, &[("RDBENCH_MEMORY_LIMIT", "64M")]);
    assert_eq!(code, 0, "T = {largest} was said to fit: {err}");
    let one_more = (largest + 1).to_string();
    let over: Vec<&str> = args.iter().map(|a| if *a == "10000" { one_more.as_str() } else { a }).collect();
    let (code, _, err) = rdbench(&over, &[("RDBENCH_MEMORY_LIMIT", "64M")]);
    assert_ne!(code, 0, "T = {} fits too: {err}", largest + 1);
    let (code, _, err) = rdbench(&args, &[("RDBENCH_MEMORY_LIMIT", "lots")]);
    assert_ne!(code, 0);
    assert!(err.contains("RDBENCH_MEMORY_LIMIT"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
