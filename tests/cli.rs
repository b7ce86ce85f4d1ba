//! The CLI rejects every invalid flag with a message naming it, and `validate` reports
//! problems with their JSON paths.

mod common;

use common::{interrupted_once_journaled, lines, rdbench, rdbench_within, tempdir, unsplit_json};
use std::process::Command;

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
        (&["--lrs", "0.01,1e-2"], "--lrs"),
        (&["--lrs", "3.4028236e38"], "--lrs"),
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
fn flags_share_one_rule_for_threads_and_steps_and_negative_values_are_values() {
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--out", "/dev/null", "--quiet"];
        a.extend_from_slice(extra);
        rdbench(&a)
    };
    // A negative value is the flag's value, named by the knob's own check.
    let (code, _, err) = run(&["--tau", "-inf"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--tau") && err.contains("(got -inf)") && !err.contains("unexpected argument"), "{err}");
    let (_, _, err) = run(&["--lrs", "1e-320"]);
    assert!(
        err.contains("--lrs") && err.contains("float32's normal range") && err.contains("bad lr: 1e-320 "),
        "{err}"
    );
    let (_, _, err) = run(&["--model", "rev_ode_small", "--hidden", "8", "--r-max", "64"]);
    assert!(err.contains("--r-max") && err.contains("at most 4 (got 64)"), "{err}");
    // A study checks the config of each of its benches before the first trains.
    let (code, _, err) = rdbench(&["study", "--hidden", "8", "--out", "/dev/null", "--chart", "/dev/null"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("bench dynamics rev_ode_small one_step: rank_max (--r-max)") && !err.contains("estimated"),
        "{err}"
    );
    for (args, flag) in [
        (&["run", "--threads", "0"][..], "--threads"),
        (&["run", "--threads", "1000"], "--threads"),
        (&["perf", "--threads", "0"], "--threads"),
        (&["perf", "--threads", "1000"], "--threads"),
        (&["perf", "--steps", "0"], "--steps"),
    ] {
        let (code, out, err) = rdbench(args);
        assert_eq!(code, 2, "{args:?} accepted: {out}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn an_output_that_cannot_be_written_is_refused_before_any_training() {
    let dir = tempdir("cli", "unwritable");
    let missing = dir.join("no-such-dir/r.json");
    let missing_folder = format!("{}/", dir.join("no-such-dir").display());
    let as_dir = dir.to_str().unwrap();
    // A bench estimated at days: if it trained first, the limit would catch it.
    let days = ["--seeds", "64", "--epochs", "1000", "--sweep-seeds", "16"];
    for (cmd, out_flag, out) in [
        ("run", "--out", missing.to_str().unwrap()),
        ("run", "--out", as_dir),
        ("run", "--out", &missing_folder),
        ("run", "--out", "/dev/full"),
        ("study", "--out", missing.to_str().unwrap()),
        ("study", "--chart", missing.to_str().unwrap()),
        ("study", "--frontier-chart", "/dev/full"),
        ("plan", "--out", &missing_folder),
    ] {
        let mut args = vec![cmd, out_flag, out];
        args.extend_from_slice(&days);
        let (code, err) = rdbench_within(&args, 30);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(&format!("cannot write {out}")), "{args:?}: {err}");
        assert!(!err.contains("estimated time"), "{args:?} measured its speed first: {err}");
    }
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing left behind");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_interrupted_run_keeps_its_journal_and_the_same_command_resumes_into_the_same_report() {
    let dir = tempdir("cli", "resume");
    let out = dir.join("r.json");
    let journal = dir.join("r.json.runs.jsonl");
    let tiny = ["--seeds", "2", "--sweep-seeds", "1", "--lrs", "0.003,0.01", "--epochs", "2", "--threads", "1"];
    let args = |out: &std::path::Path| {
        let mut a = vec!["run".to_string(), "--out".into(), out.to_str().unwrap().into()];
        a.extend(tiny.iter().map(|s| s.to_string()));
        a
    };
    // Ctrl-C once the first population has finished and is journaled.
    let (code, err) = interrupted_once_journaled(&args(&out), &journal, 1);
    assert_eq!(code, Some(130), "{err}");
    let kept = lines(&journal);
    assert!((1..8).contains(&kept), "{kept} runs journaled");
    assert!(err.contains(&format!("{kept} finished run")) && err.contains("r.json.runs.jsonl"), "{err}");
    assert!(err.contains("run the same command again to resume"), "{err}");
    // Without a terminal, progress is a line per phase and per finished run.
    assert!(err.contains("baseline sweep: training") && err.contains("run 1/8 finished: baseline sweep"), "{err}");
    assert!(!out.exists(), "no report from an interrupted bench");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "only the journal is left");

    let (code, _, err) = rdbench(&args(&out).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("resuming: {kept} finished run")), "{err}");
    assert!(!journal.exists(), "the journal is removed once the report is written");
    let resumed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(resumed["environment"]["reused_runs"], kept);

    let reference = dir.join("reference.json");
    let (code, _, err) = rdbench(&args(&reference).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    let read = |p: &std::path::Path| unsplit_json(serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap());
    assert_eq!(read(&out), read(&reference), "the resumed report is the uninterrupted one");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validate_caps_what_it_reads_and_knows_a_study_report() {
    let (code, _, err) = rdbench(&["validate", "/dev/zero"]);
    assert_eq!(code, 2);
    assert!(err.contains("the report /dev/zero is larger than 67108864 bytes"), "{err}");
    let study = format!("{}/docs/study/study_report.json", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = rdbench(&["validate", &study]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("valid study_report.json (12 bench reports)"), "{out}");
}

#[test]
fn a_closed_stdout_ends_the_output_not_the_command() {
    let reference = format!("{}/www/examples/seed_bench_report.json", env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdbench"))
        .args(["validate", &reference])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // as `| head -0` would
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn dataset_exports_a_track_and_refuses_bad_flags_by_name() {
    let dir = std::env::temp_dir().join(format!("rdbench-dataset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("m.json");
    let (code, stdout, stderr) = rdbench(&[
        "dataset",
        "--track",
        "mnist1d",
        "--data-seed",
        "42",
        "--train-size",
        "4000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("4000 train + 1000 test sequences of 40 steps"), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!((v["split"]["bench_train"].as_u64(), v["split"]["sweep_validation"].as_u64()), (Some(4000), Some(800)));
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
    assert_eq!((v["split"]["train"].as_u64(), v["split"]["sweep_fit"].as_u64()), (Some(100), Some(80)));
    assert_eq!(v["train"]["y"].as_array().unwrap().len(), 100);
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

/// The fused kernels' vector width does not show in a report: the same bench with the SIMD
/// capped at the baseline (`RDBENCH_SIMD=baseline`: SSE2, gemm for every product) and at the
/// CPU's widest (AVX-512 and `small_mm` here) gives the same report, bit for bit, on both
/// tracks; an unknown value is refused by name before any work.
#[test]
fn reports_do_not_depend_on_the_simd_width() {
    let dir = tempdir("cli", "simd");
    let tiny = ["--seeds", "2", "--sweep-seeds", "1", "--lrs", "0.01", "--epochs", "2", "--threads", "1"];
    for track in ["dynamics", "mnist1d"] {
        let report = |simd: &str| {
            let out = dir.join(format!("{track}-{simd}.json"));
            let status = Command::new(env!("CARGO_BIN_EXE_rdbench"))
                .args(["run", "--track", track, "--train-size", "64", "--out", out.to_str().unwrap()])
                .args(tiny)
                .env("RDBENCH_SIMD", simd)
                .stdout(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "{track} with RDBENCH_SIMD={simd}");
            unsplit_json(serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap())
        };
        assert_eq!(report("baseline"), report("widest"), "{track}: the reports differ by SIMD width");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_rdbench")).args(["run"]).env("RDBENCH_SIMD", "avx9").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("RDBENCH_SIMD=\"avx9\" is not one of: widest, baseline"), "{err}");
}
