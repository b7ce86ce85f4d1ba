//! The CLI rejects every invalid flag with a message naming it, and `validate` reports
//! problems with their JSON paths.

use std::process::Command;

fn rdbench(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rdbench")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn invalid_flags_are_rejected_by_name() {
    let cases: &[(&[&str], &str)] = &[
        (&["--seeds", "0"], "--seeds"),
        (&["--seeds", "100000"], "--seeds"),
        (&["--seeds", "-3"], "--seeds"),
        (&["--sweep-seeds", "0"], "--sweep-seeds"),
        (&["--lrs", "0"], "--lrs"),
        (&["--lrs", "-0.1"], "--lrs"),
        (&["--lrs", "NaN"], "--lrs"),
        (&["--lrs", "inf"], "--lrs"),
        (&["--lrs", ""], "--lrs"),
        (&["--lrs", "0.01,abc"], "--lrs"),
        (&["--lrs", "0.01,0.01"], "--lrs"),
        (&["--epochs", "0"], "--epochs"),
        (&["--batch", "0"], "--batch"),
        (&["--batch", "100000"], "--batch"),
        (&["--hidden", "1"], "--hidden"),
        (&["--hidden", "1000000"], "--hidden"),
        (&["--tau", "0"], "--tau"),
        (&["--tau", "-1"], "--tau"),
        (&["--tau", "nan"], "--tau"),
        (&["--k-max", "1"], "--k-max"),
        (&["--k-max", "81"], "--k-max"),
        (&["--policy", "greedy"], "--policy"),
        (&["--reversal-iters", "0"], "--reversal-iters"),
        (&["--data-seed", "-1"], "--data-seed"),
        (&["--alpha", "1.5"], "--alpha"),
        (&["--permutations", "5"], "--permutations"),
        (&["--model", "transformer"], "--model"),
        (&["--track", "mnist"], "--track"),
        (&["--backend", "tpu"], "--backend"),
    ];
    for (args, flag) in cases {
        let mut full = vec!["run", "--out", "/dev/null", "--quiet"];
        full.extend_from_slice(args);
        let (code, _, err) = rdbench(&full);
        assert_ne!(code, 0, "{args:?} was accepted");
        assert!(err.contains(flag), "{args:?}: error does not name {flag}: {err}");
    }
}

#[test]
fn validate_cli_accepts_the_reference_and_names_problems() {
    let reference = format!("{}/www/examples/seed_bench_report.json", env!("CARGO_MANIFEST_DIR"));
    let (code, out, _) = rdbench(&["validate", &reference]);
    assert_eq!(code, 0);
    assert!(out.contains("valid"));

    let broken = std::env::temp_dir().join("rdbench_cli_broken.json");
    let text = std::fs::read_to_string(&reference).unwrap().replace("\"idea_wins\": 6", "\"idea_wins\": 7");
    std::fs::write(&broken, text).unwrap();
    let (code, _, err) = rdbench(&["validate", broken.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("comparison.idea_wins: 7 but the diffs give 6"), "{err}");

    let (code, _, err) = rdbench(&["validate", "/nonexistent/report.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"));
}

#[test]
fn dataset_exports_a_track_and_refuses_bad_flags_by_name() {
    let dir = std::env::temp_dir().join(format!("rdbench-dataset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("m.json");
    let (code, stdout, stderr) =
        rdbench(&["dataset", "--track", "mnist1d", "--data-seed", "42", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("4000 train + 1000 test sequences of 40 steps"), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!((v["split"]["bench_train"].as_u64(), v["split"]["sweep_validation"].as_u64()), (Some(1000), Some(200)));
    assert_eq!(v["train"]["x"].as_array().unwrap().len(), 4000);
    assert_eq!(v["train"]["x"][0].as_array().unwrap().len(), 40);
    assert_eq!(v["test"]["labels"].as_array().unwrap().len(), 1000);
    assert_eq!(v["task"]["metric_direction"], "higher is better");
    // The package's published set (seed 42) starts with these labels (tests/fixtures/mnist1d.json).
    let fx: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{}/tests/fixtures/mnist1d.json", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    )
    .unwrap();
    assert_eq!(v["train"]["labels"], fx["seeds"]["42"]["y"]);
    // dynamics exports per-step targets.
    let (code, _, stderr) = rdbench(&["dataset", "--train-size", "100", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["train"]["y"][0].as_array().unwrap().len(), 80);
    assert_eq!(v["split"]["sweep_fit"], 80);
    for (args, flag) in [
        (&["dataset", "--track", "mnist1d", "--data-seed", "4294967296"][..], "--data-seed"),
        (&["dataset", "--track", "cifar"][..], "--track"),
        (&["dataset", "--train-size", "401"][..], "--train-size"),
        (&["run", "--track", "mnist1d", "--k-max", "41"][..], "--k-max"),
    ] {
        let (code, _, stderr) = rdbench(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(stderr.contains(&format!("invalid value for {flag}")), "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
