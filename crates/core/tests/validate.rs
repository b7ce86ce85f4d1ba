//! Forged reports are rejected, each naming the JSON path that was forged: a real report
//! with its runs (rebuilt from its config and runs and compared), the seed-era report (no
//! runs: every check its fields allow) and a study report (its benches and its pooled
//! judgement rebuilt).

use rdbench_core::report::{ProblemKind, validate_json, validate_study_json};
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
        ("pooled confirmed", |v| v["pooled"]["confirmed"] = json!(true), "pooled.confirmed"),
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
