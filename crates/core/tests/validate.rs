//! Forged reports are rejected, each naming the JSON path that was forged: a real report
//! with its runs (rebuilt from its config and runs and compared), the seed-era report (no
//! runs: every check its fields allow) and a study report (its benches and its pooled
//! judgement rebuilt).

use rdbench_core::report::{ProblemKind, validate_json};
use rdbench_core::study::validate_study_json;
use serde_json::{Value, json};

fn read(path: &str) -> Value {
    let text = std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A real 4-pair report of the CLI, with its config and runs (the page's test fixture).
fn quick() -> Value {
    read("crates/page/tests/fixtures/quick_report.json")
}

fn seed_era() -> Value {
    read("www/examples/seed_bench_report.json")
}

type Edit = fn(&mut Value);

/// Each case: what was forged, the edit, and the path the problem must name.
fn check(base: Value, cases: &[(&str, Edit, &str)]) {
    validate_json(&base.to_string()).unwrap_or_else(|p| panic!("the untouched report fails: {p:?}"));
    for (what, edit, path) in cases {
        let mut v = base.clone();
        edit(&mut v);
        let problems = validate_json(&v.to_string()).err().unwrap_or_else(|| panic!("{what}: accepted"));
        assert!(
            problems.iter().any(|p| p.path == *path && p.kind == ProblemKind::Arithmetic),
            "{what}: no problem at {path}: {problems:#?}"
        );
    }
}

/// Swap the arms' per-seed results and claim the idea won.
fn swap_arms(v: &mut Value) {
    for k in ["mean", "std", "per_seed"] {
        let b = v["baseline"]["full"][k].clone();
        v["baseline"]["full"][k] = v["idea"][k].clone();
        v["idea"][k] = b;
    }
    let diffs: Vec<f64> =
        v["comparison"]["per_seed_diffs"].as_array().unwrap().iter().map(|d| -d.as_f64().unwrap()).collect();
    v["comparison"]["idea_wins"] = json!(diffs.iter().filter(|d| **d < 0.0).count());
    v["comparison"]["per_seed_diffs"] = json!(diffs);
    v["comparison"]["delta_mean"] = json!(-v["comparison"]["delta_mean"].as_f64().unwrap());
    v["comparison"]["verdict"] = json!("significant win");
    v["comparison"]["system_worked"] = json!(true);
}

#[test]
fn every_forged_field_of_a_full_report_is_named() {
    check(
        quick(),
        &[
            ("p below the smallest reachable p", |v| v["comparison"]["p_value"] = json!(0.001), "comparison.p_value"),
            ("arms swapped with a fabricated win", swap_arms, "baseline.full.per_seed[0]"),
            ("arms swapped: the verdict", swap_arms, "comparison.verdict"),
            ("Wilcoxon p", |v| v["statistics"]["wilcoxon"]["p_value"] = json!(0.01), "statistics.wilcoxon.p_value"),
            (
                "bootstrap CI",
                |v| v["statistics"]["delta_mean_ci95"] = json!([-0.002, -0.001]),
                "statistics.delta_mean_ci95",
            ),
            ("d_z", |v| v["statistics"]["effect_size_dz"] = json!(-3.0), "statistics.effect_size_dz"),
            (
                "sign assignments",
                |v| v["statistics"]["p_value_method"]["assignments"] = json!(3),
                "statistics.p_value_method.assignments",
            ),
            ("a full run's metric", |v| v["runs"][12]["metric"] = json!(0.0001), "baseline.full.per_seed[0]"),
            ("a sweep run's metric", |v| v["runs"][0]["metric"] = json!(0.0001), "baseline.sweep[0].mean"),
            (
                "mechanism confirmed",
                |v| v["mechanism_signature"]["confirmed"] = json!(true),
                "mechanism_signature.confirmed",
            ),
            (
                "a condition holds",
                |v| v["mechanism"]["c_low_defect_cosine"]["holds"] = json!(true),
                "mechanism.c_low_defect_cosine.holds",
            ),
            ("config.alpha raised", |v| v["config"]["alpha"] = json!(0.9), "statistics.alpha"),
            ("config.n_seeds", |v| v["config"]["n_seeds"] = json!(3), "n_seeds"),
            ("config.lrs", |v| v["config"]["lrs"] = json!([0.003, 0.03]), "baseline.sweep"),
            ("zero seeds", |v| v["config"]["n_seeds"] = json!(0), "config.n_seeds"),
            ("memory saved", |v| v["memory"]["saved_fraction"] = json!(0.9), "memory.saved_fraction"),
            ("a probe's interval", |v| v["runs"][16]["probes"][0]["k"] = json!(3), "runs[16].probes[0].k"),
            (
                "a run left out",
                |v| {
                    v["runs"].as_array_mut().unwrap().remove(19);
                },
                "runs",
            ),
            ("warnings", |v| v["warnings"] = json!(["all fine"]), "warnings"),
            (
                "run backends",
                |v| v["environment"]["run_backends"] = json!({"webgpu": 20}),
                "environment.run_backends.webgpu",
            ),
        ],
    );
}

#[test]
fn a_report_without_runs_gets_every_check_its_fields_allow() {
    check(
        seed_era(),
        &[
            // 8 pairs: the exact test never goes below 2 / 2^8.
            ("p below the smallest reachable p", |v| v["comparison"]["p_value"] = json!(0.001), "comparison.p_value"),
            ("zero seeds", |v| v["n_seeds"] = json!(0), "n_seeds"),
            ("a diff", |v| v["comparison"]["per_seed_diffs"][2] = json!(0.5), "comparison.per_seed_diffs[2]"),
            ("wins", |v| v["comparison"]["idea_wins"] = json!(8), "comparison.idea_wins"),
        ],
    );
}

#[test]
fn a_study_report_is_validated_as_one() {
    let study = read("docs/study/study_report.json");
    validate_study_json(&study.to_string()).unwrap_or_else(|p| panic!("{p:#?}"));
    let cases: &[(&str, Edit, &str)] = &[
        (
            "pooled verdict flipped",
            |v| v["pooled"]["confirmed"] = json!(v["pooled"]["confirmed"] != true),
            "pooled.confirmed",
        ),
        ("a table row", |v| v["table"][1]["p_value"] = json!(0.001), "table[1].p_value"),
        (
            "an embedded report",
            |v| v["reports"][0]["comparison"]["idea_wins"] = json!(8),
            "reports[0].comparison.idea_wins",
        ),
    ];
    for (what, edit, path) in cases {
        let mut v = study.clone();
        edit(&mut v);
        let p = validate_study_json(&v.to_string()).err().unwrap_or_else(|| panic!("{what}: accepted"));
        assert!(p.iter().any(|p| p.path == *path), "{what}: no problem at {path}: {p:#?}");
    }
    // As a bench report it is named for what it is, not as 25 missing keys.
    let p = validate_json(&study.to_string()).unwrap_err();
    assert_eq!(p.len(), 1);
    assert!(p[0].message.starts_with("this is a study report"), "{p:?}");
}

#[test]
fn a_file_past_the_size_cap_is_refused_before_parsing() {
    let big = " ".repeat(rdbench_core::report::MAX_REPORT_BYTES + 1);
    let p = validate_json(&big).unwrap_err();
    assert_eq!(p[0].kind, ProblemKind::NotJson);
    assert!(p[0].message.contains("a report is at most 67108864 bytes"), "{p:?}");
}

/// The quick report as this version writes it: its runs hashed from its whole config and
/// stamped with a build, rebuilt (a current report, with every key).
fn current() -> Value {
    use rdbench_core::report::{Report, build};
    let r = Report::from_json(&quick().to_string()).unwrap();
    let cfg = r.config.unwrap();
    let runs = r.runs.unwrap().into_iter().map(|mut run| {
        run.run_hash = cfg.run_hash();
        run.build = "0.1.0+test".into();
        run
    });
    let env = rdbench_core::report::Environment { build: "0.1.0+test".into(), ..r.environment.unwrap() };
    serde_json::to_value(build(&cfg.resolve().unwrap(), runs.collect(), Some(env))).unwrap()
}

/// The problems of `v`, which must have some.
fn problems(v: &Value) -> Vec<rdbench_core::report::Problem> {
    validate_json(&v.to_string()).err().unwrap_or_else(|| panic!("accepted"))
}

fn paths(p: &[rdbench_core::report::Problem]) -> Vec<&str> {
    p.iter().map(|p| p.path.as_str()).collect()
}

#[test]
fn a_zeroed_run_hash_is_named() {
    let mut v = current();
    validate_json(&v.to_string()).unwrap_or_else(|p| panic!("{p:#?}"));
    v["runs"][3]["run_hash"] = json!("0000000000000000");
    let p = problems(&v);
    assert_eq!(paths(&p), ["runs[3].run_hash"], "{p:#?}");
    assert!(p[0].message.contains("trained under another config"), "{p:#?}");
    // An emptied one too: only a report from before run hashes were recorded has none.
    v["runs"][3]["run_hash"] = json!("");
    assert_eq!(paths(&problems(&v)), ["runs[3].run_hash"]);
}

#[test]
fn changed_config_epochs_names_the_loss_curves() {
    let mut v = current();
    v["config"]["epochs"] = json!(15);
    let p = problems(&v);
    let n = v["runs"].as_array().unwrap().len();
    for i in 0..n {
        let curve = format!("runs[{i}].loss_curve");
        let hit = p.iter().find(|p| p.path == curve).unwrap_or_else(|| panic!("{curve} not named: {p:#?}"));
        assert!(hit.message.contains("3 epoch losses, but config.epochs is 15"), "{hit}");
        assert!(paths(&p).contains(&format!("runs[{i}].run_hash").as_str()), "{i}");
    }
    // The idea runs' probes: one before each epoch and one after the last.
    assert!(paths(&p).contains(&"runs[16].probes"), "{p:#?}");
}

#[test]
fn another_data_seed_or_reversal_iters_names_every_run_hash() {
    for (key, value) in [("data_seed", json!(7)), ("reversal_iters", json!(5))] {
        let mut v = current();
        v["config"][key] = value;
        let p = problems(&v);
        let n = v["runs"].as_array().unwrap().len();
        let hashes = p.iter().filter(|p| p.path.ends_with(".run_hash")).count();
        assert_eq!(hashes, n, "{key}: {p:#?}");
    }
}

#[test]
fn per_run_figures_the_config_fixes_are_checked() {
    let cases: &[(&str, Edit, &str)] = &[
        ("a loss after divergence", |v| v["runs"][0]["loss_curve"][1] = json!(null), "runs[0].loss_curve[1]"),
        ("a probe dropped", |v| drop(v["runs"][16]["probes"].as_array_mut().unwrap().pop()), "runs[16].probes"),
        (
            "diverged without where",
            |v| v["runs"][0]["diverged_at"] = json!({"epoch": 1, "step": 0}),
            "runs[0].diverged_at",
        ),
        ("stored states", |v| v["runs"][16]["mean_stored_states"] = json!(1.0), "runs[16].mean_stored_states"),
        ("a negative loss", |v| v["runs"][0]["loss_curve"][0] = json!(-1.0), "runs[0].loss_curve[0]"),
    ];
    for (what, edit, path) in cases {
        let mut v = current();
        edit(&mut v);
        let p = problems(&v);
        assert!(paths(&p).contains(path), "{what}: {path} not named: {p:#?}");
    }
}

#[test]
fn a_stripped_current_report_is_refused_naming_the_missing_paths() {
    let strip = |edit: fn(&mut Value)| {
        let mut v = current();
        edit(&mut v);
        problems(&v)
    };
    let p = strip(|v| drop(v.as_object_mut().unwrap().remove("statistics")));
    assert_eq!(paths(&p), ["statistics"], "{p:#?}");
    assert_eq!(p[0].kind, ProblemKind::Structure);
    let p = strip(|v| drop(v["runs"][3].as_object_mut().unwrap().remove("run_hash")));
    assert_eq!(paths(&p), ["runs[3].run_hash"], "{p:#?}");
    let p = strip(|v| drop(v["runs"][16]["probes"][1].as_object_mut().unwrap().remove("grad_cos_kmax")));
    assert!(paths(&p).contains(&"runs[16].probes[1].grad_cos_kmax"), "{p:#?}");
    let p = strip(|v| drop(v.as_object_mut().unwrap().remove("task")));
    assert_eq!(paths(&p), ["task"], "{p:#?}");
    // Without its build it reads as an earlier report, whose runs name none.
    let p = strip(|v| drop(v["environment"].as_object_mut().unwrap().remove("build")));
    assert!(paths(&p).contains(&"runs[0].build"), "{p:#?}");
    // A report with every extension removed is the seed-era format only if it is the seed's
    // track and model.
    let mut v = current();
    v["track"] = json!("mnist1d");
    for k in ["config", "environment", "statistics", "mechanism", "memory", "warnings", "runs", "frontier", "task"] {
        v.as_object_mut().unwrap().remove(k);
    }
    let p = problems(&v);
    assert_eq!(paths(&p), ["(format)"], "{p:#?}");
    assert!(p[0].message.contains("extension keys"), "{p:#?}");
}

#[test]
fn an_earlier_report_lacks_a_later_key_everywhere_or_nowhere() {
    // The quick report is from before task, seq_len and builds: it validates as it is.
    let mut v = quick();
    validate_json(&v.to_string()).unwrap_or_else(|p| panic!("{p:#?}"));
    v["runs"][2].as_object_mut().unwrap().remove("rank_history");
    assert_eq!(paths(&problems(&v)), ["runs[2].rank_history"]);
    let mut v = quick();
    v.as_object_mut().unwrap().remove("mechanism");
    assert_eq!(paths(&problems(&v)), ["mechanism"]);
}

#[test]
fn the_environment_block_is_checked() {
    let cases: &[(&str, Edit, &str)] = &[
        ("another backend", |v| v["environment"]["backend"] = json!("webgpu"), "environment.backend"),
        ("no time", |v| v["environment"]["started_at"] = json!("yesterday"), "environment.started_at"),
        ("a negative wall time", |v| v["environment"]["wall_time_s"] = json!(-1.0), "environment.wall_time_s"),
        (
            "a negative phase time",
            |v| v["environment"]["phase_wall_time_s"]["idea_full"] = json!(-0.5),
            "environment.phase_wall_time_s.idea_full",
        ),
        ("a run's wall time", |v| v["runs"][4]["wall_time_s"] = json!(-2.0), "runs[4].wall_time_s"),
        ("a run of another build", |v| v["runs"][4]["build"] = json!("0.1.0+other"), "runs[4].build"),
    ];
    for (what, edit, path) in cases {
        let mut v = current();
        edit(&mut v);
        let p = problems(&v);
        assert!(paths(&p).contains(path), "{what}: {path} not named: {p:#?}");
    }
}

#[test]
fn the_seed_reports_are_read_as_the_seed_era() {
    use rdbench_core::report::Era;
    // The file as shipped, byte for byte (its own spacing and float spellings).
    let text =
        std::fs::read_to_string(format!("{}/../../www/examples/seed_bench_report.json", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(Era::of(&v), Era::Seed);
    validate_json(&text).unwrap_or_else(|p| panic!("{p:#?}"));
    // One extension key makes it a report of this project, which then lacks the others.
    let mut with = v.clone();
    with["warnings"] = json!([]);
    let p = problems(&with);
    assert!(paths(&p).contains(&"config") && paths(&p).contains(&"runs"), "{p:#?}");
}

/// `v` with every extension key removed: the seed report's keys only.
fn stripped(mut v: Value) -> Value {
    for k in ["config", "environment", "statistics", "mechanism", "memory", "warnings", "runs", "frontier", "task"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

/// The seed reference with its full runs replaced by `base` and `idea` (seeds 0..n), every
/// figure the seed schema derives from them recomputed, and `p` as its p-value.
fn seed_era_of(base: &[f64], idea: &[f64], p: f64) -> Value {
    use rdbench_core::stats::{mean, std, verdict::Verdict};
    let mut v = seed_era();
    let diffs: Vec<f64> = idea.iter().zip(base).map(|(x, b)| x - b).collect();
    let delta = mean(idea) - mean(base);
    let verdict = Verdict::decide(Some(p), Some(delta), 0.05, rdbench_core::track::Direction::LowerIsBetter);
    v["n_seeds"] = json!(base.len());
    for (arm, vals) in [("/baseline/full", base), ("/idea", idea)] {
        let arm = v.pointer_mut(arm).unwrap();
        arm["mean"] = json!(mean(vals));
        arm["std"] = json!(std(vals, 0));
        arm["per_seed"] = json!(vals);
        arm["n"] = json!(vals.len());
    }
    v["comparison"] = json!({
        "delta_mean": delta,
        "idea_wins": diffs.iter().filter(|d| **d < 0.0).count(),
        "n_pairs": diffs.len(),
        "per_seed_diffs": diffs,
        "p_value": p,
        "verdict": verdict.as_str(),
        "system_worked": verdict.system_worked(),
    });
    v
}

/// The problem `validate` names at `path`, which there must be.
fn named<'a>(p: &'a [rdbench_core::report::Problem], path: &str) -> &'a rdbench_core::report::Problem {
    p.iter().find(|p| p.path == path).unwrap_or_else(|| panic!("{path} not named: {p:#?}"))
}

#[test]
fn a_stripped_current_report_with_a_forged_p_is_refused() {
    // As stripped, it is a seed-era report whose p is the exact p of its 4 diffs.
    let mut v = stripped(current());
    assert_eq!(rdbench_core::report::Era::of(&v), rdbench_core::report::Era::Seed);
    validate_json(&v.to_string()).unwrap_or_else(|p| panic!("{p:#?}"));
    v["comparison"]["p_value"] = json!(0.5);
    v["comparison"]["verdict"] = json!("no significant win");
    let p = problems(&v);
    assert_eq!(paths(&p), ["comparison.p_value"], "{p:#?}");
    println!("{}", p[0]);
    assert!(p[0].message.starts_with("0.5 but the sign-flip test of the 4 diffs gives 0.125"), "{}", p[0]);
}

#[test]
fn a_seed_era_report_with_a_forged_p_and_verdict_is_refused() {
    // Six pairs of a real report, all the idea's losses: the exact p is 2 / 2^6 = 0.03125.
    let real = read("docs/study/study_report.json")["reports"][0].clone();
    let first = |arm: &Value| -> Vec<f64> {
        arm["per_seed"].as_array().unwrap()[..6].iter().map(|x| x.as_f64().unwrap()).collect()
    };
    let (base, idea) = (first(&real["baseline"]["full"]), first(&real["idea"]));
    let honest = seed_era_of(&base, &idea, 0.03125);
    validate_json(&honest.to_string()).unwrap_or_else(|p| panic!("{p:#?}"));
    assert_eq!(honest["comparison"]["verdict"], "significant loss");
    let mut v = honest;
    v["comparison"]["p_value"] = json!(0.5);
    v["comparison"]["verdict"] = json!("no significant win");
    let p = problems(&v);
    assert_eq!(paths(&p), ["comparison.p_value", "comparison.verdict"], "{p:#?}");
    for p in &p {
        println!("{p}");
    }
    assert!(p[0].message.contains("gives 0.03125 (exact, 64 sign assignments)"), "{}", p[0]);
    assert!(p[1].message.contains("\"significant loss\""), "{}", p[1]);
}

#[test]
fn every_forged_comparison_field_of_a_seed_era_report_is_named() {
    check(
        seed_era(),
        &[
            // The seed's p (0.1697) is a Monte Carlo estimate of the exact 0.171875; one standard
            // error of 10,000 sign vectors is 0.00377, and 4.5 of them is past the 4 allowed.
            ("p far from the diffs' p", |v| v["comparison"]["p_value"] = json!(0.5), "comparison.p_value"),
            ("p just out of reach", |v| v["comparison"]["p_value"] = json!(0.155), "comparison.p_value"),
            ("verdict", |v| v["comparison"]["verdict"] = json!("significant win"), "comparison.verdict"),
            ("wins", |v| v["comparison"]["idea_wins"] = json!(7), "comparison.idea_wins"),
            ("pairs", |v| v["comparison"]["n_pairs"] = json!(7), "comparison.n_pairs"),
            ("delta_mean", |v| v["comparison"]["delta_mean"] = json!(-0.002), "comparison.delta_mean"),
            ("system_worked", |v| v["comparison"]["system_worked"] = json!(true), "comparison.system_worked"),
        ],
    );
    // Within 4 standard errors of 10,000 sign vectors (±0.0151) a p is a Monte Carlo estimate.
    for p in [0.171875, 0.1697, 0.16, 0.185] {
        let mut v = seed_era();
        v["comparison"]["p_value"] = json!(p);
        validate_json(&v.to_string()).unwrap_or_else(|e| panic!("{p}: {e:#?}"));
    }
}

#[test]
fn a_seed_era_monte_carlo_p_of_many_pairs_is_checked_against_a_fresh_estimate() {
    use rdbench_core::stats::permutation::sign_flip_p;
    let base: Vec<f64> = (0..24).map(|i| 0.002 + 0.0001 * i as f64).collect();
    let idea: Vec<f64> = base.iter().enumerate().map(|(i, b)| b + 0.0001 * ((i * 7 % 11) as f64 - 4.0)).collect();
    let diffs: Vec<f64> = idea.iter().zip(&base).map(|(x, b)| x - b).collect();
    // Monte Carlo p's of other streams than the validator's (the seed's program had its own).
    for seed in 1..=5 {
        let (p, _) = sign_flip_p(&diffs, 10_000, seed);
        assert!(p > 0.05 && p < 0.5, "{p}");
        validate_json(&seed_era_of(&base, &idea, p).to_string()).unwrap_or_else(|e| panic!("seed {seed}: {e:#?}"));
        let forged = seed_era_of(&base, &idea, p + 0.1);
        let problems = problems(&forged);
        let hit = named(&problems, "comparison.p_value");
        assert!(hit.message.contains("Monte Carlo, 100000 sign vectors"), "{hit}");
    }
}

#[test]
fn a_bootstrap_interval_must_be_in_order() {
    let mut v = current();
    let ci = v["statistics"]["delta_mean_ci95"].clone();
    v["statistics"]["delta_mean_ci95"] = json!([ci[1], ci[0]]);
    let p = problems(&v);
    assert!(named(&p, "statistics.delta_mean_ci95").message.contains("above its upper bound"), "{p:#?}");
    // Even where its resample count is out of the range that is recomputed.
    v["statistics"]["bootstrap_resamples"] = json!(10_u64.pow(12));
    v["config"]["bootstrap_resamples"] = json!(10_u64.pow(12));
    let p = problems(&v);
    assert!(named(&p, "statistics.delta_mean_ci95").message.contains("above its upper bound"), "{p:#?}");
}

#[test]
fn an_edited_learnability_is_refused_naming_the_field() {
    let v = current();
    let l = &v["task"]["learnability"];
    // The quick dynamics report's GRU learned: far below a tenth of the constant's MSE.
    assert_eq!(l["baseline"]["learned"], json!(true), "{l:#}");
    assert_eq!(l["comparison_void"], json!(false));
    check(
        v,
        &[
            (
                "baseline learned",
                |v| v["task"]["learnability"]["baseline"]["learned"] = json!(false),
                "task.learnability.baseline.learned",
            ),
            (
                "idea seeds",
                |v| v["task"]["learnability"]["idea"]["seeds_learned"] = json!(0),
                "task.learnability.idea.seeds_learned",
            ),
            (
                "void",
                |v| v["task"]["learnability"]["comparison_void"] = json!(true),
                "task.learnability.comparison_void",
            ),
            ("threshold", |v| v["task"]["learnability"]["threshold"] = json!(1.0), "task.learnability.threshold"),
        ],
    );
    // The arithmetic names it before the rebuild, from the metrics and the reference alone.
    let mut v = current();
    v["task"]["learnability"]["idea"]["n"] = json!(9);
    let p = problems(&v);
    assert!(
        named(&p, "task.learnability.idea.n").message.contains("by the rule from the arms' test metrics"),
        "{p:#?}"
    );
    // A reference moved to where the arms did not learn is refused by the rebuild.
    let mut v = current();
    v["task"]["reference"]["value"] = json!(1e-9);
    assert!(paths(&problems(&v)).contains(&"task.reference.value"));
}

#[test]
fn a_report_without_the_reference_or_learnability_still_validates() {
    let mut v = current();
    let task = v["task"].as_object_mut().unwrap();
    task.remove("learnability");
    validate_json(&v.to_string()).unwrap_or_else(|p| panic!("{p:#?}"));
    v["task"].as_object_mut().unwrap().remove("reference");
    validate_json(&v.to_string()).unwrap_or_else(|p| panic!("{p:#?}"));
    // A learnability without the reference it is judged against is named.
    let mut v = current();
    v["task"].as_object_mut().unwrap().remove("reference");
    assert!(paths(&problems(&v)).contains(&"task.learnability"));
}
