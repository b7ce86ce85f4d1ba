//! Render every chart of real reports to SVG and check what was drawn.

use plotters::prelude::*;
use rdbench_charts::style::Scale;
use rdbench_charts::{card, live, load, mechanism, null, per_seed, sweep};

fn reference() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../www/examples/seed_bench_report.json")).unwrap()
}

fn svg(draw: impl Fn(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<(), String>) -> String {
    let mut out = String::new();
    {
        let area = SVGBackend::with_string(&mut out, (640, 400)).into_drawing_area();
        draw(&area).unwrap();
        area.present().unwrap();
    }
    out
}

#[test]
fn reference_report_draws_all_charts() {
    let l = load(&reference()).unwrap();
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    let r = &l.report;
    let s = Scale(1.0);
    let per = svg(|a| per_seed::draw(a, r, s));
    assert!(per.contains("Per-seed test MSE"));
    assert!(per.contains("idea better (6)") && per.contains("baseline better (2)"), "legend counts wins");
    assert!(per.contains("idea wins 6/8"));
    let sw = svg(|a| sweep::draw(a, r, s));
    assert!(sw.contains("best lr 0.01"));
    let mech = svg(|a| mechanism::draw(a, r, s));
    assert!(mech.contains("No probe traces"), "seed-era report has no traces");
    let nl = svg(|a| null::draw(a, r, s));
    assert!(nl.contains("exact, 256 values"));
    assert!(nl.contains("p = 0.1697"));
}

#[test]
fn null_sample_is_exact_for_small_n_and_symmetric() {
    let d = [0.1, -0.2, 0.3];
    let (n, exact) = null::null_of(&d);
    assert!(exact);
    assert_eq!(n.len(), 8);
    let big: Vec<f64> = (0..20).map(|i| i as f64 * 0.01 - 0.05).collect();
    let (n, exact) = null::null_of(&big);
    assert!(!exact);
    assert_eq!(n.len(), null::SAMPLED);
    let mean = n.iter().sum::<f64>() / n.len() as f64;
    assert!(mean.abs() < 0.01, "sign flips centre the null at 0: {mean}");
}

#[test]
fn card_takes_its_numbers_from_the_report() {
    let r = load(&reference()).unwrap().report;
    let c = card::card(&r);
    assert_eq!(c.verdict.as_str(), "no significant win");
    assert_eq!(c.p_value, Some(0.1697));
    assert_eq!(c.idea_wins, 6);
    assert_eq!(c.n_pairs, 8);
    assert_eq!(c.delta_mean, r.comparison.delta_mean);
    assert!(c.conditions.is_empty());
    assert_eq!(c.wall_time_s, None);
}

#[test]
fn bad_files_get_clear_errors() {
    assert!(load("{oops").unwrap_err().contains("not valid JSON"));
    assert!(load("[1, 2]").unwrap_err().contains("expected an object"));
    let text = reference().replace("\"n_seeds\": 8,\n", "");
    assert!(load(&text).unwrap_err().contains("n_seeds: missing key"));
    let text = reference().replace("\"idea_wins\": 6", "\"idea_wins\": \"six\"");
    assert!(load(&text).unwrap_err().contains("comparison.idea_wins"), "{}", load(&text).unwrap_err());
    // Inconsistent numbers still draw, with the problem listed.
    let text = reference().replace("\"idea_wins\": 6", "\"idea_wins\": 5");
    let l = load(&text).unwrap();
    assert!(l.problems[0].contains("comparison.idea_wins"));
    // The verdict is typed: a spelling outside the spec's three is a schema error.
    let text = reference().replace("no significant win\"", "no significant win<script>alert(1)</script>\"");
    assert!(load(&text).unwrap_err().contains("comparison.verdict"), "{}", load(&text).unwrap_err());
    // Markup in free-text strings stays text.
    let text = reference().trim_end().strip_suffix('}').unwrap().to_string()
        + ", \"warnings\": [\"<script>alert(1)</script>\"]}";
    let l = load(&text).unwrap();
    assert_eq!(card::card(&l.report).warnings, ["<script>alert(1)</script>"]);
}

#[test]
fn live_chart_draws_runs() {
    let runs = vec![
        live::Series { label: "lr 0.01 seed 0".into(), points: vec![(0.0, 0.5), (1.0, 0.2), (2.0, 0.1)] },
        live::Series { label: "lr 0.003 seed 0".into(), points: vec![(0.0, 0.5), (1.0, f64::NAN)] },
    ];
    let out = svg(|a| live::draw(a, "baseline sweep", &runs, Scale(1.0)));
    assert!(out.contains("lr 0.01 seed 0") && out.contains("baseline sweep"));
}
