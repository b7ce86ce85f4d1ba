//! A report that validates is a report that ran: a consistent forgery is caught by training
//! its runs again (`validate --rerun`); a run of another build is never taken by a resume or
//! a merge; a merge refuses a plan whose best lrs its sweep does not give; a study refuses a
//! bench report that does not validate. Every bench here is tiny (under a second).

mod common;

use common::{json, ok_with_err as ok, rdbench, s, tempdir};

use rdbench_core::plan::{Plan, record_key};
use rdbench_core::records::{Arm, Phase, RunSpec};
use rdbench_core::report::{Report, build};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tiny bench's flags (r_max 2 fits a study's rev_ode_small at hidden 4).
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
    "4",
    "--batch",
    "8",
    "--train-size",
    "10",
    "--r-max",
    "2",
];

fn tiny<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter().copied().chain(TINY).collect()
}

/// A tiny bench report, made once per test binary.
fn tiny_report() -> &'static Path {
    static REPORT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    REPORT.get_or_init(|| {
        let out = tempdir("trust", "tiny").join("tiny.json");
        ok(&tiny(&["run", "--quiet", "--out", s(&out)]));
        out
    })
}

/// The tiny report with `edit` applied to its runs, every derived figure rebuilt from them:
/// a forgery consistent in everything `validate` recomputes.
fn forged(edit: impl FnOnce(&mut Report)) -> Report {
    let mut r = Report::from_json(&std::fs::read_to_string(tiny_report()).unwrap()).unwrap();
    edit(&mut r);
    build(&r.config.as_ref().unwrap().resolve().unwrap(), r.runs.unwrap(), r.environment)
}

#[test]
fn a_consistent_forgery_is_caught_by_rerun() {
    let dir = tempdir("trust", "forgery");
    let path = dir.join("forged.json");
    let mut at = 0;
    let report = forged(|r| {
        let runs = r.runs.as_mut().unwrap();
        at = runs.iter().position(|r| r.arm == Arm::Idea && r.phase == Phase::Full && r.seed == 1).unwrap();
        runs[at].metric = runs[at].metric.map(|m| m / 2.0); // the idea does twice as well
    });
    std::fs::write(&path, report.to_json()).unwrap();
    // It agrees with itself: validation alone passes it.
    ok(&["validate", s(&path)]);

    let (code, _, err) = rdbench(&["validate", s(&path), "--rerun", "all"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("idea/full/0.01/1 DIFFERS from the report") && err.contains("metric: "), "{err}");
    assert!(
        err.contains("1 of the 6 runs re-run") && err.contains("differ from the report: idea/full/0.01/1"),
        "{err}"
    );

    // A draw of one run catches it when it draws it, and says which seed drew what.
    let n = report.runs.as_ref().unwrap().len();
    let hit = (0u64..).find(|&seed| rdbench_core::rerun::draw(n, 1, seed) == [at]).unwrap().to_string();
    let (code, _, err) = rdbench(&["validate", s(&path), "--rerun", "1", "--rerun-seed", &hit]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(&format!("drawn with seed {hit}")) && err.contains("idea/full/0.01/1 DIFFERS"), "{err}");
    let miss = (0u64..).find(|&seed| rdbench_core::rerun::draw(n, 1, seed) != [at]).unwrap().to_string();
    let (out, _) = ok(&["validate", s(&path), "--rerun", "1", "--rerun-seed", &miss]);
    assert!(out.contains("bit for bit") && out.contains("re-ran 1 run"), "{out}");

    // Named, it is caught too.
    let (code, _, err) = rdbench(&["validate", s(&path), "--rerun", "idea/full/0.01/1"]);
    assert_eq!(code, 1, "{err}");
    // The untouched report re-runs bit for bit.
    let (out, _) = ok(&["validate", s(tiny_report()), "--rerun", "all"]);
    assert!(out.contains("re-ran 6 runs") && out.contains("each is the report's"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_forged_memory_figure_is_caught_by_rerun() {
    let dir = tempdir("trust", "forged-memory");
    let path = dir.join("forged.json");
    // The idea's measured peak halved in one run, the memory block recomputed from it.
    let report = forged(|r| {
        let runs = r.runs.as_mut().unwrap();
        let at = runs.iter().position(|r| r.arm == Arm::Idea && r.phase == Phase::Full && r.seed == 1).unwrap();
        for p in &mut runs[at].probes {
            p.peak_bytes_checkpointed = p.peak_bytes_checkpointed.map(|b| b / 2);
        }
    });
    std::fs::write(&path, report.to_json()).unwrap();
    ok(&["validate", s(&path)]);
    let (code, _, err) = rdbench(&["validate", s(&path), "--rerun", "idea/full/0.01/1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("idea/full/0.01/1 DIFFERS") && err.contains("peak_bytes_checkpointed"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rerun_states_its_draw_and_cost_and_warns_of_another_build() {
    let dir = tempdir("trust", "other-build");
    let path = dir.join("other.json");
    let other = "0.1.0+0000000000000000";
    let report = forged(|r| {
        r.environment.as_mut().unwrap().build = other.into();
        r.runs.as_mut().unwrap().iter_mut().for_each(|run| run.build = other.into());
    });
    std::fs::write(&path, report.to_json()).unwrap();
    let (out, _) = ok(&["validate", s(&path)]);
    assert!(out.contains(&format!("made by build {other} on cpu-flex")), "{out}");
    let (out, err) = ok(&["validate", s(&path), "--rerun", "2", "--rerun-seed", "5"]);
    assert!(err.contains("re-running 2 of the 6 runs: 2 drawn with seed 5 (--rerun 2 --rerun-seed 5"), "{err}");
    assert!(err.contains("estimated time ≈"), "the cost comes before the work: {err}");
    assert!(err.contains(&format!("were made by build {other}, this is build {}", rdbench_engine::BUILD)), "{err}");
    assert!(out.contains("re-ran 2 runs"), "{out}");
    // Bad selections are refused by name, before any work.
    for (sel, why) in [("0", "re-runs nothing"), ("idea/full/0.02/1", "is not a run of the report"), ("x", "ARM/PHASE")]
    {
        let (code, _, err) = rdbench(&["validate", s(&path), "--rerun", sel]);
        assert_eq!(code, 2, "{sel}: {err}");
        assert!(err.contains(why) && !err.contains("estimated"), "{sel}: {err}");
    }
    let seed = format!("{}/www/examples/seed_bench_report.json", env!("CARGO_MANIFEST_DIR"));
    let (code, _, err) = rdbench(&["validate", &seed, "--rerun", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a seed-era report has no runs"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_study_report_is_rerun_bench_by_bench() {
    let dir = tempdir("trust", "study-rerun");
    let (study, chart, frontier) = (dir.join("study.json"), dir.join("c.svg"), dir.join("f.svg"));
    let from = s(tiny_report());
    ok(&["study", "--from-reports", from, "--out", s(&study), "--chart", s(&chart), "--frontier-chart", s(&frontier)]);
    let (out, err) = ok(&["validate", s(&study), "--rerun", "1", "--rerun-seed", "0"]);
    assert!(err.contains("1 per bench drawn with seed 0"), "{err}");
    assert!(out.contains("dynamics/rnn_small/one_step/") && out.contains("re-ran 1 run"), "{out}");
    let (code, _, err) = rdbench(&["validate", s(&study), "--rerun", "idea/full/0.01/1"]);
    assert_eq!(code, 2);
    assert!(err.contains("in a study, name the bench too"), "{err}");
    ok(&["validate", s(&study), "--rerun", "dynamics/rnn_small/one_step/idea/full/0.01/1"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_record_from_another_build_is_set_aside_on_resume_and_merge() {
    let dir = tempdir("trust", "builds");
    // Resume: a journal of the tiny bench's six runs, one of them made by another build.
    let out = dir.join("r.json");
    let journal = dir.join("r.json.runs.jsonl");
    let mut runs: Vec<Value> = json(tiny_report())["runs"].as_array().unwrap().clone();
    runs[2]["build"] = "0.1.0+0000000000000000".into();
    let lines: Vec<String> = runs.iter().map(|r| r.to_string()).collect();
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let (_, err) = ok(&tiny(&["run", "--out", s(&out)]));
    assert!(err.contains("holds 1 run of another build (0.1.0+0000000000000000;"), "{err}");
    assert!(err.contains("set aside, not reused") && err.contains("resuming: 5 finished runs"), "{err}");
    let resumed = json(&out);
    assert_eq!(resumed["environment"]["reused_runs"], 5);
    assert!(resumed["runs"].as_array().unwrap().iter().all(|r| r["build"] == rdbench_engine::BUILD));
    let strip = |v: Value| common::unsplit_json(v);
    assert_eq!(strip(resumed), strip(json(tiny_report())), "the run set aside was trained again, the same");

    // Merge: a record whose build was edited is set aside and named; `work` trains it again.
    let (plan, full, records) = (dir.join("plan.json"), dir.join("plan_full.json"), dir.join("records"));
    ok(&tiny(&["plan", "--out", s(&plan)]));
    let work = |p: &Path| ok(&["work", "--plan", s(p), "--index", "0", "--of", "1", "--records", s(&records)]);
    work(&plan);
    let edited = records.join(format!(
        "{}.json",
        record_key(&RunSpec { arm: Arm::Idea, phase: Phase::Sweep, lr: 0.01, seed: 1000 }, &resumed_hash(&out))
    ));
    let mut rec = json(&edited);
    rec["build"] = "0.1.0+0000000000000000".into();
    std::fs::write(&edited, rec.to_string()).unwrap();
    let (code, _, err) = rdbench(&["merge", "--plan", s(&plan), "--out", s(&full), s(&records)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1 record(s) were made by another build, set aside"), "{err}");
    assert!(err.contains(&format!("{}: build 0.1.0+0000000000000000", s(&edited))), "{err}");
    assert!(err.contains("missing ") && !full.exists(), "{err}");
    let (_, err) = work(&plan);
    assert!(err.contains("1 record(s) there were made by another build, set aside: trained again"), "{err}");
    ok(&["merge", "--plan", s(&plan), "--out", s(&full), s(&records)]);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn resumed_hash(report: &Path) -> String {
    json(report)["runs"][0]["run_hash"].as_str().unwrap().to_string()
}

#[test]
fn merge_refuses_a_plan_whose_best_lrs_disagree_with_its_sweep() {
    let dir = tempdir("trust", "best-lrs");
    let (plan, full, records, report) =
        (dir.join("plan.json"), dir.join("plan_full.json"), dir.join("records"), dir.join("r.json"));
    let two_lrs: Vec<&str> =
        tiny(&["plan", "--out", s(&plan)]).into_iter().map(|a| if a == "0.01" { "0.003,0.01" } else { a }).collect();
    ok(&two_lrs);
    let work = |p: &Path| ok(&["work", "--plan", s(p), "--index", "0", "--of", "1", "--records", s(&records)]);
    work(&plan);
    ok(&["merge", "--plan", s(&plan), "--out", s(&full), s(&records)]);
    // The baseline's best lr moved to the other lr of the grid, its full runs with it: a plan
    // consistent in itself, so `work` trains it.
    let mut p: Plan = serde_json::from_value(json(&full)).unwrap();
    let [b, _] = p.best_lrs[0];
    let other = if b == 0.01 { 0.003 } else { 0.01 };
    p.best_lrs[0][0] = other;
    for r in p.runs.iter_mut().filter(|r| r.spec.arm == Arm::Baseline && r.spec.phase == Phase::Full) {
        r.spec.lr = other;
        r.key = record_key(&r.spec, &r.run_hash);
    }
    std::fs::write(&full, p.to_json()).unwrap();
    work(&full);
    let (code, _, err) = rdbench(&["merge", "--plan", s(&full), "--out", s(&report), s(&records)]);
    assert_eq!(code, 2, "{err}");
    let want = format!("the plan's best lr of the baseline arm is {other}, but its sweep records give {b}");
    assert!(err.contains(&want) && err.contains("nothing was written"), "{err}");
    assert!(!report.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn study_refuses_a_bench_report_that_does_not_validate() {
    let dir = tempdir("trust", "study-check");
    let (study, chart, frontier) = (dir.join("study.json"), dir.join("c.svg"), dir.join("f.svg"));
    let outs = ["--out", s(&study), "--chart", s(&chart), "--frontier-chart", s(&frontier)];
    let mut bad = json(tiny_report());
    bad["comparison"]["idea_wins"] = 2.into();
    let bad_path = dir.join("bad.json");
    std::fs::write(&bad_path, bad.to_string()).unwrap();
    // Given.
    let mut args = vec!["study", "--from-reports", s(&bad_path)];
    args.extend(outs);
    let (code, _, err) = rdbench(&args);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{} does not validate", s(&bad_path))) && err.contains("comparison.idea_wins"),
        "{err}"
    );
    assert!(!study.exists());
    // Reused: the same report as the finished first bench of a resumed study.
    std::fs::write(dir.join("study.json.benches.jsonl"), bad.to_string() + "\n").unwrap();
    let mut args = tiny(&["study", "--track", "dynamics", "--quiet"]);
    args.extend(outs);
    let (code, _, err) = rdbench(&args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bench report 1 of the journal") && err.contains("comparison.idea_wins"), "{err}");
    assert!(!study.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merge_rerun_catches_an_edited_record() {
    let dir = tempdir("trust", "merge-rerun");
    let (plan, full, records) = (dir.join("plan.json"), dir.join("plan_full.json"), dir.join("records"));
    ok(&tiny(&["plan", "--out", s(&plan)]));
    ok(&["work", "--plan", s(&plan), "--index", "0", "--of", "1", "--records", s(&records)]);
    // A sweep record with a better metric: the merge takes it as it is.
    let path =
        std::fs::read_dir(&records).unwrap().map(|e| e.unwrap().path()).find(|p| s(p).contains("-idea-")).unwrap();
    let mut rec = json(&path);
    rec["metric"] = (rec["metric"].as_f64().unwrap() / 2.0).into();
    std::fs::write(&path, rec.to_string()).unwrap();
    let (code, _, err) = rdbench(&["merge", "--plan", s(&plan), "--out", s(&full), s(&records), "--rerun", "all"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("idea/sweep/0.01/1000 DIFFERS") && err.contains("nothing was written"), "{err}");
    assert!(!full.exists());
    ok(&["merge", "--plan", s(&plan), "--out", s(&full), s(&records)]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_browser_report_is_rerun_within_the_tolerance() {
    let dir = tempdir("trust", "wasm");
    let path = dir.join("wasm.json");
    let report = forged(|r| r.environment.as_mut().unwrap().platform = "wasm".into());
    std::fs::write(&path, report.to_json()).unwrap();
    let (out, err) = ok(&["validate", s(&path), "--rerun", "1", "--rerun-seed", "0"]);
    assert!(err.contains("made in the browser (wasm), re-run on cpu-flex, are compared within 1e-4"), "{err}");
    assert!(out.contains("within 1e-4") && !out.contains("bit for bit"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The files of `dir`, by name, with their bytes: what a refused command must leave as it was.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap_or_default()))
        .collect();
    files.sort();
    files
}

/// A bench estimated at days: a command that trained or calibrated before refusing would
/// not end within [`refused`]'s limit.
const DAYS: [&str; 6] = ["--seeds", "64", "--epochs", "1000", "--sweep-seeds", "16"];

/// `rdbench args`, which must be refused (exit 2) before any work: within 30 s (a bench of
/// [`DAYS`] would take days) and before its time estimate. Returns its stderr.
fn refused(args: &[&str]) -> String {
    let (code, err) = common::rdbench_within(args, 30);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(!err.contains("estimated time"), "{args:?} measured its speed first: {err}");
    err
}

/// A bench of a few seconds whose idea full runs take most of them: long enough to be
/// interrupted once its baseline full runs are journaled.
const SLOWER: &str = "--seeds 2 --sweep-seeds 1 --lrs 0.01 --epochs 1 --hidden 8 --train-size 40 --threads 1";

#[test]
fn a_torn_journal_line_is_cut_and_a_later_interrupt_keeps_every_run() {
    let dir = tempdir("trust", "torn");
    let (reference, out, journal) = (dir.join("reference.json"), dir.join("r.json"), dir.join("r.json.runs.jsonl"));
    let args = |out: &Path| -> Vec<String> {
        ["run", "--out", s(out)].into_iter().chain(SLOWER.split(' ')).map(String::from).collect()
    };
    let (code, _, err) = rdbench(&args(&reference).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    // The journal of a bench killed while writing its third run: two whole lines, half a third.
    let runs: Vec<String> = json(&reference)["runs"].as_array().unwrap().iter().map(|r| r.to_string()).collect();
    std::fs::write(&journal, format!("{}\n{}\n{}", runs[0], runs[1], &runs[2][..runs[2].len() / 2])).unwrap();

    // Resumed, then interrupted once it has journaled two more runs.
    let (code, err) = common::interrupted_once_journaled(&args(&out), &journal, 4);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("ended in a line cut short") && err.contains("holds 2 records"), "{err}");
    assert!(err.contains("resuming: 2 finished runs"), "{err}");
    // Every line of the journal reads, and the message counts them.
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(text.ends_with('\n'), "the journal ends with a whole line");
    let journaled: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kept = journaled.len();
    assert!((4..6).contains(&kept), "{kept} runs journaled");
    assert!(err.contains(&format!("stopped: {kept} finished runs kept in {}", s(&journal))), "{err}");

    let (code, _, err) = rdbench(&args(&out).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("resuming: {kept} finished runs")) && !err.contains("cut short"), "{err}");
    assert_eq!(common::unsplit_json(json(&out)), common::unsplit_json(json(&reference)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_report_that_cannot_be_written_at_the_end_keeps_every_run_and_names_the_command() {
    let dir = tempdir("trust", "end");
    let out = dir.join("r.json");
    // Files of at most 32 KiB (bash's `ulimit -f` counts KiB), SIGXFSZ ignored so that a write
    // past it fails with EFBIG: the journal's six runs fit (about 18 kB), the report (about
    // 47 kB) does not, as on a disk that fills up during the bench.
    let bin = env!("CARGO_BIN_EXE_rdbench");
    let mut args = vec!["run", "--quiet", "--out", s(&out)];
    args.extend(TINY);
    let script = "ulimit -f 32; trap '' XFSZ; exec \"$0\" \"$@\"";
    let full = Command::new("bash").arg("-c").arg(script).arg(bin).args(&args).output().unwrap();
    let err = String::from_utf8_lossy(&full.stderr);
    assert_eq!(full.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("cannot write {}", s(&out))) && err.contains("is unchanged"), "{err}");
    let journal = dir.join("r.json.runs.jsonl");
    assert_eq!(common::lines(&journal), 6, "every run is in the journal");
    assert!(err.contains(&format!("6 finished runs kept in {}", s(&journal))), "{err}");
    assert!(err.contains("writes the report from them without training"), "{err}");
    // The command it gives finishes the report, from the journal.
    let given = err.lines().last().unwrap().trim();
    assert!(given.ends_with(&args.join(" ")), "{given}");
    let (code, _, err) = rdbench(&args);
    assert_eq!(code, 0, "{err}");
    assert!(!journal.exists() && json(&out)["environment"]["reused_runs"] == 6);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_output_path_that_is_a_symlink_is_refused_and_nothing_is_written_through_it() {
    let dir = tempdir("trust", "links");
    let target = dir.join("target");
    let link = |name: &str| {
        let p = dir.join(name);
        std::os::unix::fs::symlink(&target, &p).unwrap();
        p
    };
    // The report, the journal beside it, a study's chart.
    let report = link("r.json");
    let mut args = vec!["run", "--out", s(&report)];
    args.extend(DAYS);
    assert!(refused(&args).contains("symbolic link"));
    std::fs::remove_file(&report).unwrap();
    link("r.json.runs.jsonl");
    let err = refused(&args);
    assert!(err.contains("cannot open the journal") && err.contains("symbolic link"), "{err}");
    let chart = link("c.svg");
    let mut args = vec!["study", "--out", s(&report), "--chart", s(&chart)];
    args.extend(DAYS);
    assert!(refused(&args).contains(&format!("cannot write {}: it is a symbolic link", s(&chart))));
    // A run's record: `work` stops at it, its runs recorded so far kept.
    let (plan, records) = (dir.join("plan.json"), dir.join("records"));
    ok(&tiny(&["plan", "--out", s(&plan)]));
    std::fs::create_dir(&records).unwrap();
    let p: Plan = serde_json::from_value(json(&plan)).unwrap();
    std::os::unix::fs::symlink(&target, records.join(format!("{}.json", p.runs[0].key))).unwrap();
    let (code, _, err) = rdbench(&["work", "--plan", s(&plan), "--index", "0", "--of", "1", "--records", s(&records)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert!(!target.exists(), "nothing was written through a link");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_journal_of_another_bench_is_kept_and_the_new_bench_refused() {
    let dir = tempdir("trust", "another");
    let (out, journal) = (dir.join("r.json"), dir.join("r.json.runs.jsonl"));
    let runs: Vec<String> = json(tiny_report())["runs"].as_array().unwrap().iter().map(|r| r.to_string()).collect();
    std::fs::write(&journal, runs[..3].join("\n") + "\n").unwrap();
    let before = snapshot(&dir);
    // Another config (tau), and another lr grid, with the same --out.
    let other_tau = tiny(&["run", "--out", s(&out), "--tau", "0.3"]);
    let other_lrs: Vec<&str> =
        tiny(&["run", "--out", s(&out)]).into_iter().map(|a| if a == "0.01" { "0.003" } else { a }).collect();
    for args in [other_tau, other_lrs] {
        let err = refused(&args);
        assert!(err.contains("holds 3 finished runs that this bench would not reuse"), "{err}");
        assert!(err.contains("Name another --out"), "{err}");
        assert_eq!(snapshot(&dir), before, "the journal is kept as it was");
    }
    // The bench they belong to reuses them.
    let (_, err) = ok(&tiny(&["run", "--out", s(&out)]));
    assert!(err.contains("resuming: 3 finished runs"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_input_is_read_within_the_64_mib_cap() {
    let dir = tempdir("trust", "cap");
    // A sparse file one byte past the cap, and /dev/zero, which never ends.
    let big = dir.join("big.json");
    std::fs::File::create(&big).unwrap().set_len(rdbench_core::report::MAX_REPORT_BYTES as u64 + 1).unwrap();
    let plan = dir.join("plan.json");
    ok(&tiny(&["plan", "--out", s(&plan)]));
    let out = dir.join("o.json");
    for input in [s(&big), "/dev/zero"] {
        for args in [
            vec!["work", "--plan", input, "--index", "0", "--of", "1", "--records", s(&dir)],
            vec!["merge", "--plan", s(&plan), "--out", s(&out), input],
            vec!["merge", "--plan", input, "--out", s(&out), s(&plan)],
            vec!["study", "--from-reports", input, "--out", s(&out), "--chart", "/dev/null"],
            vec!["validate", input],
        ] {
            let (code, _, err) = rdbench(&args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(err.contains(&format!("{input} is larger than 67108864 bytes")), "{args:?}: {err}");
        }
    }
    // A journal past the cap: the bench is refused before it trains.
    std::fs::rename(&big, dir.join("r.json.runs.jsonl")).unwrap();
    let report = dir.join("r.json");
    let mut args = vec!["run", "--out", s(&report)];
    args.extend(DAYS);
    let err = refused(&args);
    assert!(err.contains("the journal") && err.contains("is larger than 67108864 bytes"), "{err}");
    assert!(!report.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn clashing_outputs_and_equal_grid_values_are_refused_before_any_work_naming_the_flags() {
    let dir = tempdir("trust", "clash");
    let (plan, records) = (dir.join("plan.json"), dir.join("records"));
    ok(&tiny(&["plan", "--out", s(&plan)]));
    ok(&["work", "--plan", s(&plan), "--index", "0", "--of", "1", "--records", s(&records)]);
    let record = std::fs::read_dir(&records).unwrap().next().unwrap().unwrap().path();
    let before = (snapshot(&dir), snapshot(&records));
    let x = dir.join("x.json");
    let x = s(&x);
    for (args, says) in [
        (
            vec!["run", "--lrs", "0.01,1e-2", "--out", x],
            "invalid value for --lrs: bad lr: 1e-2 is listed twice (both are 0.01)",
        ),
        (
            vec!["plan", "--tau", "0.08,0.080", "--out", x],
            "invalid value for --tau: 0.08 and 0.080 are one value (0.08)",
        ),
        (vec!["plan", "--policy", "chained,chained", "--out", x], "invalid value for --policy: chained is given twice"),
        (vec!["study", "--out", x, "--chart", x], "--out and --chart both name"),
        (vec!["study", "--chart", x, "--frontier-chart", x], "--chart and --frontier-chart both name"),
    ] {
        let args: Vec<&str> = args.into_iter().chain(DAYS).collect();
        let err = refused(&args);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let new = records.join("new.json");
    for (args, says) in [
        (vec!["merge", "--plan", s(&plan), "--out", s(&plan), s(&records)], "--out names"),
        (vec!["merge", "--plan", s(&plan), "--out", s(&record), s(&records)], "which is also a record (RECORDS)"),
        (vec!["merge", "--plan", s(&plan), "--out", s(&new), s(&records)], "in a records directory (RECORDS)"),
        (vec!["merge", "--plan", s(&plan), "--out", x, s(&records), s(&record)], "it would be read twice"),
        (vec!["validate", s(tiny_report()), "--rerun", "idea/full/0.01/1,idea/full/1e-2/1"], "name the same run"),
    ] {
        let (code, _, err) = rdbench(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!((snapshot(&dir), snapshot(&records)), before, "nothing was written");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_json_input_that_starts_with_a_byte_order_mark_is_read() {
    let dir = tempdir("trust", "bom");
    let with_bom = |from: &Path, to: &Path| {
        let mut bytes = "\u{feff}".as_bytes().to_vec();
        bytes.extend(std::fs::read(from).unwrap());
        std::fs::write(to, bytes).unwrap();
    };
    let report = dir.join("r.json");
    with_bom(tiny_report(), &report);
    let (out, _) = ok(&["validate", s(&report)]);
    assert!(out.contains("valid bench_report.json"), "{out}");
    let (study, chart, frontier) = (dir.join("s.json"), dir.join("c.svg"), dir.join("f.svg"));
    ok(&[
        "study",
        "--from-reports",
        s(&report),
        "--out",
        s(&study),
        "--chart",
        s(&chart),
        "--frontier-chart",
        s(&frontier),
    ]);
    // A plan and a record.
    let (plan, records) = (dir.join("plan.json"), dir.join("records"));
    ok(&tiny(&["plan", "--out", s(&plan)]));
    with_bom(&plan.clone(), &plan);
    ok(&["work", "--plan", s(&plan), "--index", "0", "--of", "1", "--records", s(&records)]);
    let record = std::fs::read_dir(&records).unwrap().next().unwrap().unwrap().path();
    with_bom(&record.clone(), &record);
    let (_, err) = ok(&["work", "--plan", s(&plan), "--index", "0", "--of", "1", "--records", s(&records)]);
    assert!(err.contains("2 already recorded"), "{err}");
    ok(&["merge", "--plan", s(&plan), "--out", s(&dir.join("full.json")), s(&records)]);
    std::fs::remove_dir_all(&dir).unwrap();
}
