//! Past one machine: `plan` → `work` in 3 tasks (one run twice, one killed
//! midway and run again) → `merge` gives the report `rdbench run` gives on one machine, and
//! the study `rdbench study` gives, measured memory included, except timing; so does the local
//! driver (`xargs -P`) at each point of a grid. A merge with a missing or foreign record names it and writes
//! nothing. The Kubernetes manifest parses.

mod common;

use common::{json, ok, rdbench, s, tempdir, unsplit_json};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The tiny config's flags.
const TINY: [&str; 14] = [
    "--seeds",
    "2",
    "--sweep-seeds",
    "2",
    "--lrs",
    "0.003,0.01",
    "--epochs",
    "2",
    "--hidden",
    "8",
    "--r-max",
    "4",
    "--train-size",
    "100",
];

fn with_tiny<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter().copied().chain(TINY).collect()
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

/// `work` task `index` of 3 of `plan`.
fn work(plan: &Path, records: &Path, index: usize) {
    let i = index.to_string();
    ok(&["work", "--plan", s(plan), "--index", &i, "--of", "3", "--records", s(records), "--threads", "2"]);
}

/// Task `index` of 3 killed (SIGKILL: a node lost) once it has recorded its first run and
/// before it ends. Returns how many records it had left.
fn work_killed(plan: &Path, records: &Path, index: usize) -> usize {
    let before = json_files(records).len();
    let i = index.to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdbench"))
        .args(["work", "--plan", s(plan), "--index", &i, "--of", "3", "--records", s(records), "--threads", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    loop {
        assert!(child.try_wait().unwrap().is_none(), "task {index} ended before it could be killed");
        if json_files(records).len() > before {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    json_files(records).len() - before
}

/// Run the plan's two stages in 3 tasks: in the sweep, task 1 is killed midway and run
/// again, and task 2 runs twice; then the full runs. Returns the full stage's plan.
fn run_stages(dir: &Path, records: &Path) -> PathBuf {
    let (plan, full) = (dir.join("plan.json"), dir.join("plan_full.json"));
    work(&plan, records, 0);
    let kept = work_killed(&plan, records, 1);
    assert!(kept >= 1);
    // The interrupted task's rerun does only the rest.
    work(&plan, records, 1);
    work(&plan, records, 2);
    let n = json_files(records).len();
    work(&plan, records, 2); // a duplicated task changes nothing
    assert_eq!(json_files(records).len(), n);
    // Before the full runs exist, their plan is the sweep's merge.
    let out = ok(&["merge", "--plan", s(&plan), "--out", s(&full), s(records)]);
    assert!(out.contains("full stage planned"), "{out}");
    for i in 0..3 {
        work(&full, records, i);
    }
    full
}

#[test]
fn plan_work_merge_equals_run_for_a_bench() {
    let dir = tempdir("dist", "bench");
    let (single, merged, records) = (dir.join("single.json"), dir.join("merged.json"), dir.join("records"));
    ok(&with_tiny(&["run", "--quiet", "--out", s(&single)]));
    let planned = ok(&with_tiny(&["plan", "--out", s(&dir.join("plan.json"))]));
    // What the plan costs, from a speed measured at planning time (a calibration that ran).
    let hours = planned.lines().find(|l| l.starts_with("estimated work ≈ ")).unwrap_or_else(|| panic!("{planned}"));
    let figure: f64 = hours.split(" core-hours").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
    assert!(figure >= 0.0 && hours.contains("of one cpu-flex core"), "{hours}");
    let full = run_stages(&dir, &records);
    // The records are 8 sweep runs and 4 full runs, one file each, no temporary file left.
    assert_eq!(json_files(&records).len(), 12);

    // A missing record is named, and nothing is written.
    let gone = json_files(&records).into_iter().find(|p| s(p).contains("-idea-full-")).unwrap();
    let kept = dir.join("kept.json");
    std::fs::rename(&gone, &kept).unwrap();
    let (code, _, err) = rdbench(&["merge", "--plan", s(&full), "--out", s(&merged), s(&records)]);
    assert_eq!(code, 2);
    let key = gone.file_stem().unwrap().to_str().unwrap();
    assert!(err.contains(&format!("missing {key}")), "{err}");
    assert!(!merged.exists());
    std::fs::rename(&kept, &gone).unwrap();

    // A foreign record (another config's) is named too.
    let mut foreign = json(&gone);
    foreign["run_hash"] = "0123456789abcdef".into();
    let stray = dir.join("stray.json");
    std::fs::write(&stray, foreign.to_string()).unwrap();
    let (code, _, err) = rdbench(&["merge", "--plan", s(&full), "--out", s(&merged), s(&records), s(&stray)]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{}: its run hash 0123456789abcdef", s(&stray))), "{err}");
    assert!(!merged.exists());
    // And one run recorded twice (a copy elsewhere; the same file given twice is refused as such).
    let copy = dir.join("copy.json");
    std::fs::copy(&gone, &copy).unwrap();
    let (code, _, err) = rdbench(&["merge", "--plan", s(&full), "--out", s(&merged), s(&records), s(&copy)]);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{key} is recorded 2 times")), "{err}");
    let (code, _, err) = rdbench(&["merge", "--plan", s(&full), "--out", s(&merged), s(&records), s(&gone)]);
    assert_eq!(code, 2);
    assert!(err.contains("it would be read twice"), "{err}");

    let out = ok(&["merge", "--plan", s(&full), "--out", s(&merged), s(&records)]);
    assert!(out.contains("report written to"), "{out}");
    assert_eq!(unsplit_json(json(&merged)), unsplit_json(json(&single)));
    ok(&["validate", s(&merged)]);
}

/// A study report (and its embedded reports) without what measures time; measured bytes stay.
fn untimed_study(mut v: Value) -> Value {
    for r in v["reports"].as_array_mut().unwrap() {
        *r = unsplit_json(r.take());
    }
    for f in v["frontier"].as_array_mut().unwrap() {
        for p in f["frontier"]["points"].as_array_mut().unwrap() {
            p.as_object_mut().unwrap().remove("seconds");
        }
    }
    v
}

#[test]
fn plan_work_merge_equals_study_for_a_study() {
    let dir = tempdir("dist", "study");
    let (single, merged, records) = (dir.join("single.json"), dir.join("merged.json"), dir.join("records"));
    let svg = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let (c1, f1, c2, f2) = (svg("c1.svg"), svg("f1.svg"), svg("c2.svg"), svg("f2.svg"));
    let track = ["--track", "dynamics"];
    let mut args = with_tiny(&["study", "--quiet", "--out", s(&single), "--chart", &c1, "--frontier-chart", &f1]);
    args.extend(track);
    ok(&args);
    let plan = dir.join("plan.json");
    let mut args = with_tiny(&["plan", "--study", "--out", s(&plan)]);
    args.extend(track);
    ok(&args);
    let full = run_stages(&dir, &records);
    let out =
        ok(&["merge", "--plan", s(&full), "--out", s(&merged), "--chart", &c2, "--frontier-chart", &f2, s(&records)]);
    assert!(out.contains("study report written to"), "{out}");
    assert_eq!(untimed_study(json(&merged)), untimed_study(json(&single)));
    assert!(std::fs::read_to_string(&c2).unwrap().starts_with("<svg"));
}

/// The local driver (`scripts/dist/local.sh`: 3 tasks, 2 at a time with `xargs -P`) on a
/// grid over tau gives, at each point, the report `rdbench run` gives there.
#[test]
fn the_local_driver_on_a_grid_gives_the_reports_run_gives() {
    let dir = tempdir("dist", "local");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/dist/local.sh");
    let out = Command::new("bash")
        .args([script, s(&dir.join("d")), "3", "2", "--tau", "0.02,0.3"])
        .args(TINY)
        .env("RDBENCH", env!("CARGO_BIN_EXE_rdbench"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("(2 grid points: tau)"), "{text}");
    for tau in ["0.02", "0.3"] {
        let single = dir.join(format!("single{tau}.json"));
        ok(&with_tiny(&["run", "--quiet", "--tau", tau, "--out", s(&single)]));
        let merged = dir.join(format!("d/bench_report.tau{tau}.json"));
        assert!(text.contains(&format!("report written to {}", s(&merged))), "{text}");
        assert_eq!(unsplit_json(json(&merged)), unsplit_json(json(&single)), "tau {tau}");
    }
}

#[test]
fn plan_and_work_refuse_bad_input_by_name() {
    let dir = tempdir("dist", "bad");
    let plan = dir.join("plan.json");
    let (code, _, err) = rdbench(&["plan", "--study", "--model", "gru", "--out", s(&plan)]);
    assert_eq!(code, 2);
    assert!(err.contains("--model is not a study flag"), "{err}");
    let (code, _, err) = rdbench(&["plan", "--seeds", "0", "--out", s(&plan)]);
    assert_eq!(code, 2);
    assert!(err.contains("--seeds"), "{err}");
    ok(&with_tiny(&["plan", "--out", s(&plan)]));
    let (code, _, err) = rdbench(&["work", "--plan", s(&plan), "--index", "3", "--of", "3"]);
    assert_eq!(code, 2);
    assert!(err.contains("the index is 0 to 2"), "{err}");
    let (code, _, err) = rdbench(&["work", "--plan", s(&plan), "--index", "0", "--of", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--of"), "{err}");
    let (code, _, err) = rdbench(&["plan", "--tau", "0.1,0.2,0.1", "--out", s(&plan)]);
    assert_eq!(code, 2);
    assert!(err.contains("--tau: 0.1 is given twice"), "{err}");
    std::fs::write(dir.join("bad.json"), "{\"plan_version\": 1}").unwrap();
    let (code, _, err) = rdbench(&["work", "--plan", s(&dir.join("bad.json")), "--index", "0", "--of", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.json: not a plan"), "{err}");
    // A file that is not a record is named (the output goes elsewhere: one in a records
    // directory is refused).
    let elsewhere = tempdir("dist", "bad-out");
    let (code, _, err) = rdbench(&["merge", "--plan", s(&plan), "--out", s(&elsewhere.join("n.json")), s(&dir)]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.json is not a run record"), "{err}");
    // The sweep's merge needs every sweep run.
    let empty = dir.join("records");
    std::fs::create_dir_all(&empty).unwrap();
    let (code, _, err) = rdbench(&["merge", "--plan", s(&plan), "--out", s(&dir.join("n.json")), s(&empty)]);
    assert_eq!(code, 2);
    assert!(err.contains("8 planned run(s) have no record"), "{err}");
    assert!(!dir.join("n.json").exists());
}

/// A plan of 1,500 grid points whose runs are shared (an alpha grid: alpha changes no run):
/// once its runs are recorded, a work over the whole plan finds every one and does nothing.
/// (What it costs is measured in docs/DISTRIBUTED.md, not here.)
#[test]
fn a_work_with_nothing_left_to_do_on_a_large_plan_does_nothing() {
    let dir = tempdir("dist", "noop");
    let (plan, records) = (dir.join("plan.json"), dir.join("records"));
    let alphas: Vec<String> = (1..=1500).map(|i| format!("{}", i as f64 / 2000.0)).collect();
    let out = ok(&with_tiny(&["plan", "--alpha", &alphas.join(","), "--out", s(&plan)]));
    assert!(out.contains("1500 benches (1500 grid points: alpha), 8 sweep runs"), "{out}");
    let task = ["work", "--plan", s(&plan), "--index", "0", "--of", "1", "--records", s(&records)];
    let (code, _, err) = rdbench(&task);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("8 of the 8 sweep runs; 0 already recorded"), "{err}");
    let stamp = |p: PathBuf| (p.clone(), std::fs::metadata(&p).unwrap().modified().unwrap());
    let before: Vec<_> = json_files(&records).into_iter().map(stamp).collect();
    let (code, out, err) = rdbench(&task);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("8 of the 8 sweep runs; 8 already recorded") && !err.contains("training"), "{err}");
    assert!(out.contains("done, 0 runs trained"), "{out}");
    assert_eq!(json_files(&records).into_iter().map(stamp).collect::<Vec<_>>(), before, "no record written");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Kubernetes manifest is YAML with the Indexed Job and its follow-up merge job
/// (python3's yaml module parses it; the test says so and passes where python3 lacks it).
#[test]
fn the_kubernetes_manifest_is_an_indexed_job_and_a_merge() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/dist/k8s.yaml");
    let script = "import sys, yaml, json; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))";
    let out = match Command::new("python3").args(["-c", script, path]).output() {
        Ok(o) if o.status.success() => o,
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named 'yaml'") => {
            eprintln!("python3 has no yaml module: the manifest was not parsed");
            return;
        }
        Ok(o) => panic!("{path} does not parse: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            eprintln!("no python3 ({e}): the manifest was not parsed");
            return;
        }
    };
    let docs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let jobs: Vec<&Value> = docs.iter().filter(|d| d["kind"] == "Job").collect();
    assert!(jobs.len() >= 2, "{docs:?}");
    let indexed = jobs.iter().find(|j| j["spec"]["completionMode"] == "Indexed").expect("an Indexed Job");
    assert!(indexed["spec"]["completions"].is_u64(), "{indexed}");
    let cmd = indexed["spec"]["template"]["spec"]["containers"][0].to_string();
    assert!(cmd.contains("JOB_COMPLETION_INDEX") && cmd.contains("work"), "{cmd}");
    assert!(jobs.iter().any(|j| j["spec"]["template"]["spec"]["containers"][0].to_string().contains("merge")));
}

/// Run by `scripts/dist/slurm-local-test.sh` after real Slurm job arrays made
/// `$RDBENCH_SLURM_DIR/{bench,study}`: the merged reports equal the single-machine ones.
#[test]
#[ignore = "needs the Slurm run of scripts/dist/slurm-local-test.sh"]
fn slurm_merges_equal_single_machine() {
    let dir = PathBuf::from(std::env::var("RDBENCH_SLURM_DIR").expect("RDBENCH_SLURM_DIR"));
    let (bench, study) = (dir.join("bench"), dir.join("study"));
    assert_eq!(unsplit_json(json(&bench.join("bench_report.json"))), unsplit_json(json(&bench.join("single.json"))));
    assert_eq!(untimed_study(json(&study.join("study_report.json"))), untimed_study(json(&study.join("single.json"))));
}

/// Every measured byte count of a report: its memory block and each run's probes' peaks
/// (the idea's, dense BPTT's and each frontier point's), in order.
fn measured_bytes(v: &Value) -> Value {
    let probes: Vec<Value> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["probes"].as_array().unwrap().iter())
        .map(|p| {
            let points: Vec<Value> = p["frontier"]
                .as_array()
                .map(|f| f.iter().map(|q| q["peak_bytes"].clone()).collect())
                .unwrap_or_default();
            serde_json::json!([p["peak_bytes_checkpointed"], p["peak_bytes_dense"], points])
        })
        .collect();
    serde_json::json!({"memory": v["memory"], "probes": probes})
}

#[test]
fn measured_memory_is_the_same_for_populations_of_1_2_and_8() {
    let dir = tempdir("dist", "grouping");
    let flags = "--seeds 8 --sweep-seeds 1 --lrs 0.003 --epochs 1 --hidden 8 --r-max 4 --train-size 100";
    // 8 seeds on 1, 4 and 8 threads: the full phase's populations are of 8, 2 and 1 runs.
    let reports: Vec<Value> = ["1", "4", "8"]
        .iter()
        .map(|threads| {
            let out = dir.join(format!("threads{threads}.json"));
            let mut args = vec!["run", "--quiet", "--threads", threads, "--out", s(&out)];
            args.extend(flags.split(' '));
            ok(&args);
            json(&out)
        })
        .collect();
    let populations = |v: &Value| {
        let mut p: Vec<u64> = v["runs"].as_array().unwrap().iter().map(|r| r["population"].as_u64().unwrap()).collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    assert_eq!(populations(&reports[0]), [1, 8]);
    assert_eq!(populations(&reports[1]), [1, 2]);
    assert_eq!(populations(&reports[2]), [1]);
    let m = measured_bytes(&reports[0]);
    assert!(m["memory"]["measured_peak_bytes_dense"].as_f64().unwrap() > 0.0, "{m}");
    assert!(m["probes"][0][0].as_u64().unwrap() > 0, "{m}");
    for r in &reports[1..] {
        assert_eq!(measured_bytes(r), m);
    }
}
