//! The scaling study, tiny (two lengths, both models, the adding problem): every row's
//! states are what its schedules executed (dense T + 1 at every length), measured dense
//! memory grows with T and revolve's no faster than its slots; the study equals its benches
//! run one by one and through plan / work / merge, resumes from its journal, validates, and
//! a changed number does not; bad lengths are refused by flag before any work.

mod common;

use common::{json, ok, rdbench, s, tempdir, unsplit_json};
use rdbench_core::frontier::{budget_of_interval, slots_for_budget};
use rdbench_core::records::ScheduleKind;
use rdbench_core::scale::ScaleReport;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The tiny protocol's flags.
const TINY: [&str; 16] = [
    "--seeds",
    "2",
    "--sweep-seeds",
    "1",
    "--lrs",
    "0.01",
    "--epochs",
    "1",
    "--hidden",
    "8",
    "--r-max",
    "4",
    "--train-size",
    "100",
    "--threads",
    "2",
];

const LENS: [usize; 2] = [20, 40];

/// `rdbench scale` of the tiny protocol at 20 and 40 steps, writing into `dir`.
fn scale_args(dir: &Path) -> Vec<String> {
    let mut a: Vec<String> =
        ["scale", "--quiet", "--seq-lens", "20,40", "--track", "adding"].map(String::from).to_vec();
    a.extend(["--out", s(&dir.join("scale.json")), "--chart", s(&dir.join("scale.svg"))].map(String::from));
    a.extend(TINY.map(String::from));
    a
}

/// The tiny scale study, run once for every test: its directory and report.
fn study() -> &'static (PathBuf, Value) {
    static S: OnceLock<(PathBuf, Value)> = OnceLock::new();
    S.get_or_init(|| {
        let dir = tempdir("scale", "study");
        let args = scale_args(&dir);
        ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let report = json(&dir.join("scale.json"));
        (dir, report)
    })
}

/// A scale report without what measures time: its embedded reports as `unsplit_json` leaves
/// them, and each schedule's seconds.
fn untimed(mut v: Value) -> Value {
    for r in v["reports"].as_array_mut().unwrap() {
        *r = unsplit_json(r.take());
    }
    for row in v["table"].as_array_mut().unwrap() {
        for p in row["schedules"].as_array_mut().unwrap() {
            p.as_object_mut().unwrap().remove("seconds");
        }
    }
    v
}

/// States fixed-interval checkpointing holds at interval k over t steps: the earlier
/// segments' starts and one segment's states, the working state included.
fn fixed_interval_held(t: usize, k: usize) -> usize {
    let m = t.div_ceil(k);
    let last = t - (m - 1) * k;
    if m == 1 { t } else { (m - 1 + last).max(m + k - 2) }
}

#[test]
fn every_row_holds_what_its_schedules_executed_and_dense_memory_grows_with_t() {
    let (dir, v) = study();
    let scale: ScaleReport = serde_json::from_value(v.clone()).unwrap();
    assert_eq!((scale.tracks.as_slice(), scale.seq_lens.as_slice()), (&["adding".to_string()][..], &LENS[..]));
    assert_eq!(scale.models, ["rnn_small", "rev_ode_small"]);
    assert_eq!(scale.table.len(), 4);
    for (r, report) in scale.table.iter().zip(&scale.reports) {
        let t = r.seq_len;
        let k = r.operating_k.expect("an operating interval");
        assert_eq!(
            (r.memory.dense_states, r.point(ScheduleKind::Dense).unwrap().stored_states),
            (t + 1, (t + 1) as f64)
        );
        let slots = slots_for_budget(budget_of_interval(t, k));
        let want = [
            (ScheduleKind::Dense, (t + 1) as f64),
            (ScheduleKind::Idea, budget_of_interval(t, k) as f64),
            (ScheduleKind::FixedInterval, fixed_interval_held(t, k) as f64),
        ];
        for (kind, held) in want {
            assert_eq!(r.point(kind).map(|p| p.stored_states), Some(held), "{kind:?} at T = {t}");
        }
        let revolve = r.point(ScheduleKind::Revolve).unwrap();
        assert!(revolve.stored_states <= (slots + 1) as f64 && revolve.at.slots == Some(slots), "{revolve:?}");
        // Each figure is the executed count of every probe that ran the schedule (a count,
        // not an estimate: every probe held the same).
        for p in &r.schedules {
            let mut ran = 0;
            for run in report["runs"].as_array().unwrap() {
                for probe in run["probes"].as_array().unwrap() {
                    for q in probe["frontier"].as_array().into_iter().flatten() {
                        let same: rdbench_core::records::ScheduleAt = serde_json::from_value(q.clone()).unwrap();
                        if same == p.at {
                            ran += 1;
                            assert_eq!(q["stored_states"].as_f64(), Some(p.stored_states), "{:?} at T = {t}", p.at);
                        }
                    }
                }
            }
            assert_eq!(ran, p.n, "{:?} at T = {t}", p.at);
        }
        // The chosen k over training covers every idea full-run probe.
        let probes: usize = r.k_over_training.iter().map(|k| k.n).sum();
        assert_eq!(probes, r.frontier_probes, "T = {t}");
        assert!(r.standing.is_some() && r.memory.measured_peak_bytes_dense.is_some());
    }
    // Measured: dense BPTT's peak grows with T; revolve's (at the idea's memory) by no more
    // than its slots do, and by fewer bytes than dense BPTT's.
    for m in &scale.models {
        let rows = scale.line("adding", m);
        let peak = |i: usize, kind| rows[i].point(kind).and_then(|p| p.peak_bytes).unwrap();
        let slots = |i: usize| rows[i].point(ScheduleKind::Revolve).unwrap().at.slots.unwrap() as f64;
        let (d0, d1) = (peak(0, ScheduleKind::Dense), peak(1, ScheduleKind::Dense));
        let (r0, r1) = (peak(0, ScheduleKind::Revolve), peak(1, ScheduleKind::Revolve));
        assert!(d1 > d0, "{m}: dense {d0} then {d1}");
        assert!(
            r1 / r0 <= slots(1) / slots(0),
            "{m}: revolve {r0} then {r1} with slots {} then {}",
            slots(0),
            slots(1)
        );
        assert!(r1 - r0 < d1 - d0, "{m}: revolve grew by {}, dense by {}", r1 - r0, d1 - d0);
    }
    // validate accepts it and names a changed number.
    let path = dir.join("scale.json");
    let out = ok(&["validate", s(&path)]);
    assert!(out.contains("valid scale_report.json (4 bench reports)"), "{out}");
    let mut bad = v.clone();
    let f = &mut bad["table"][1]["schedules"][2]["forward_evals"];
    *f = (f.as_f64().unwrap() + 1.0).into();
    let tampered = dir.join("tampered.json");
    std::fs::write(&tampered, bad.to_string()).unwrap();
    let (code, _, err) = rdbench(&["validate", s(&tampered)]);
    assert_eq!(code, 1);
    assert!(err.contains("table[1].schedules[2].forward_evals") && err.contains("rebuilt from the embedded"), "{err}");
    let svg = std::fs::read_to_string(dir.join("scale.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("cell evaluations against T"), "the charts");
}

#[test]
fn a_scale_study_equals_its_benches_run_one_by_one_and_through_plan_work_merge() {
    let (_, v) = study();
    let dir = tempdir("scale", "split");
    // One by one with `rdbench run`, given to --from-reports longest first: the same report.
    let mut singles = Vec::new();
    for t in LENS.iter().rev() {
        for m in ["rev_ode_small", "rnn_small"] {
            let out = dir.join(format!("{m}-{t}.json"));
            let t = t.to_string();
            let mut args = vec!["run", "--quiet", "--track", "adding", "--model", m, "--seq-len", &t, "--out", s(&out)];
            args.extend(TINY);
            ok(&args);
            singles.push(out);
        }
    }
    let merged = |reports: &[PathBuf], name: &str| {
        let out = dir.join(format!("{name}.json"));
        let chart = dir.join(format!("{name}.svg"));
        let mut args = vec!["scale", "--out", s(&out), "--chart", s(&chart), "--from-reports"];
        args.extend(reports.iter().map(|p| s(p)));
        ok(&args);
        json(&out)
    };
    assert_eq!(untimed(merged(&singles, "singles")), untimed(v.clone()));

    // Planned as a grid over model and length, worked in one task, merged stage by stage.
    let (plan, full, records) = (dir.join("plan.json"), dir.join("plan_full.json"), dir.join("records"));
    let mut args = vec!["plan", "--track", "adding", "--model", "rnn_small,rev_ode_small", "--seq-len", "20,40"];
    args.extend(["--out", s(&plan)]);
    args.extend(&TINY[..14]);
    let out = ok(&args);
    assert!(out.contains("4 grid points: model × seq_len"), "{out}");
    let work = |plan: &Path| ok(&["work", "--plan", s(plan), "--index", "0", "--of", "1", "--records", s(&records)]);
    work(&plan);
    ok(&["merge", "--plan", s(&plan), "--out", s(&full), s(&records)]);
    work(&full);
    let benches = dir.join("merged");
    std::fs::create_dir_all(&benches).unwrap();
    ok(&["merge", "--plan", s(&full), "--out", s(&benches.join("bench_report.json")), s(&records)]);
    let mut reports: Vec<PathBuf> = std::fs::read_dir(&benches).unwrap().map(|e| e.unwrap().path()).collect();
    reports.sort();
    assert_eq!(reports.len(), 4, "{reports:?}");
    assert_eq!(untimed(merged(&reports, "planned")), untimed(v.clone()));
}

#[test]
fn a_killed_scale_study_resumes_from_its_journal() {
    let (_, v) = study();
    let dir = tempdir("scale", "resume");
    let args = scale_args(&dir);
    let benches = dir.join("scale.json.benches.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdbench"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    loop {
        assert!(child.try_wait().unwrap().is_none(), "the scale study ended before it could be killed");
        if std::fs::read_to_string(&benches).is_ok_and(|t| t.ends_with('\n')) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!dir.join("scale.json").exists());
    let (code, _, err) = rdbench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("bench 1/4 adding rnn_small T = 20: reused from"), "{err}");
    assert!(!benches.exists(), "the journal is removed once the report is written");
    assert_eq!(untimed(json(&dir.join("scale.json"))), untimed(v.clone()));
}

#[test]
fn bad_lengths_and_flags_are_refused_by_name_before_any_work() {
    let dir = tempdir("scale", "bad");
    let out = dir.join("scale.json");
    let refused = |extra: &[&str], want: &str| {
        let mut args = vec!["scale", "--quiet", "--track", "adding", "--out", s(&out)];
        args.extend(extra);
        args.extend(TINY);
        let (code, _, err) = rdbench(&args);
        assert_eq!(code, 2, "{extra:?}");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!out.exists() && !dir.join("scale.json.runs.jsonl").exists(), "{extra:?}: no work");
    };
    refused(&["--seq-lens", "20,40,20"], "invalid value for --seq-lens: 20 is given twice");
    refused(&["--seq-lens", "0,200"], "invalid value for --seq-lens: 0 and 200 are both T = 200 on adding");
    refused(&["--seq-lens", "20,30000"], "invalid value for --seq-lens:");
    refused(&["--seq-len", "20"], "--seq-len is not a scale flag");
    refused(
        &["--model", "rnn_small,rnn_small", "--seq-lens", "20"],
        "invalid value for --model: rnn_small is given twice",
    );
    let (code, _, err) = rdbench(&["scale", "--seq-lens", "20", "--out", s(&out), "--from-reports", s(&out)]);
    assert_eq!(code, 2);
    assert!(err.contains("--seq-lens does not go with --from-reports"), "{err}");
    let missing = dir.join("no/such/dir/scale.json");
    let mut args = vec!["scale", "--quiet", "--seq-lens", "20", "--out", s(&missing)];
    args.extend(TINY);
    let (code, _, err) = rdbench(&args);
    assert_eq!(code, 2);
    assert!(err.contains(s(&missing)), "{err}");
}

/// Benches may differ in their training size (the adding default grows with T) but in no
/// other knob but track, model and length.
#[test]
fn the_training_size_may_follow_t_and_another_knob_may_not() {
    let (_, v) = study();
    let texts = |edit: &dyn Fn(&mut Value)| -> Vec<String> {
        let mut reports = v["reports"].as_array().unwrap().clone();
        edit(&mut reports[1]);
        reports.iter().map(|r| r.to_string()).collect()
    };
    let built = rdbench_core::scale::build_scale(&texts(&|r| r["config"]["train_size"] = 50.into())).unwrap();
    assert_eq!(built.table.len(), v["table"].as_array().unwrap().len());
    let err = rdbench_core::scale::build_scale(&texts(&|r| r["config"]["epochs"] = 2.into())).unwrap_err();
    assert!(err.contains("differs from report 1 in epochs"), "{err}");
}
