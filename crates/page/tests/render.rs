//! Render every chart of real reports to SVG and check what was drawn.

use plotters::prelude::*;
use rdbench_core::report::Report;
use rdbench_core::study::ModelFrontier;
use rdbench_page::layout::{Drawn, Hover, Recorder};
use rdbench_page::style::Scale;
use rdbench_page::{CHARTS, card, draw_chart, frontier, live, load, mechanism, null, per_seed, sweep};

fn reference() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../www/examples/seed_bench_report.json")).unwrap()
}

fn quick() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/quick_report.json")).unwrap()
}

type Area<'a> = DrawingArea<Recorder<SVGBackend<'a>>, plotters::coord::Shift>;

/// Draw at `size` into SVG text, recording every label box.
fn svg_at(size: (u32, u32), draw: impl Fn(&Area) -> Result<Vec<Hover>, String>) -> (String, Drawn) {
    let mut out = String::new();
    let drawn;
    {
        let (rec, log) = Recorder::new(SVGBackend::with_string(&mut out, size));
        let area = rec.into_drawing_area();
        let points = draw(&area).unwrap();
        area.present().unwrap();
        drop(area);
        drawn = Drawn { points, ..log.borrow().clone() };
    }
    (out, drawn)
}

fn svg(draw: impl Fn(&Area) -> Result<Vec<Hover>, String>) -> String {
    svg_at((640, 400), draw).0
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
    // Its p (0.1697) is a Monte Carlo figure the report does not describe; the chart draws
    // the exact null, whose share as extreme is scipy's exact p (0.171875, tests/stats_scipy).
    let nl = svg(|a| null::draw(a, r, s));
    assert!(nl.contains("all 256 sign assignments; report p = 0.1697 (method not recorded)"), "{nl}");
    assert!(nl.contains("as extreme: 0.1719"), "{nl}");
    assert!(!nl.contains("exact, 256"));
}

#[test]
fn the_null_chart_says_how_p_was_computed_and_what_it_drew() {
    let seed = load(&reference()).unwrap().report;
    let diffs: Vec<f64> = seed.comparison.per_seed_diffs.iter().flatten().copied().collect();
    let obs = diffs.iter().sum::<f64>() / diffs.len() as f64;
    let (exact_null, _) = null::null_of(&diffs);
    assert_eq!(null::share_as_extreme(&exact_null, obs), 0.171875);
    // A report that records its method gets it in the title; an exact p is the share drawn.
    let quick = load(&quick()).unwrap().report;
    let q = svg(|a| null::draw(a, &quick, Scale(1.0)));
    assert!(q.contains("all 16 sign assignments; report p = 0.125 (exact, 16 sign assignments)"), "{q}");
    assert!(q.contains("as extreme: 0.125"), "{q}");
    // A Monte Carlo p says so, and the chart samples for many pairs.
    let mut mc = quick.clone();
    mc.comparison.per_seed_diffs = (0..24).map(|i| Some(i as f64 * 1e-4 - 5e-4)).collect();
    mc.statistics.as_mut().unwrap().p_value_method =
        Some(rdbench_core::stats::permutation::SignFlipMethod::MonteCarlo { permutations: 10_000, seed: 20240611 });
    let m = svg(|a| null::draw(a, &mc, Scale(1.0)));
    assert!(m.contains("(Monte Carlo, 10000 sign vectors,") && m.contains("seed 20240611)"), "{m}");
    assert!(m.contains(&format!("{} sampled sign vectors; report p", null::SAMPLED)), "{m}");
}

#[test]
fn a_chart_with_nothing_to_draw_has_a_line_instead() {
    let seed = load(&reference()).unwrap().report;
    let quick = load(&quick()).unwrap().report;
    let note = rdbench_page::chart_note("mechanism", &seed).expect("the seed report has no probe traces");
    assert!(note.starts_with("No probe traces in this report (seed-era format). Final probe: mean defect"), "{note}");
    assert!(note.ends_with("mechanism not confirmed."), "{note}");
    // The same words are what the chart draws (its SVG export).
    assert!(
        svg(|a| mechanism::draw(a, &seed, Scale(1.0))).contains("No probe traces in this report (seed-era format)")
    );
    for c in CHARTS {
        assert_eq!(rdbench_page::chart_note(c.name, &quick), None, "{} draws for the quick report", c.name);
    }
    let mut no_traces = quick.clone();
    no_traces.mechanism.as_mut().unwrap().traces.clear();
    assert!(rdbench_page::chart_note("mechanism", &no_traces).unwrap().starts_with("No probe traces in this report."));
    let mut no_pairs = quick.clone();
    no_pairs.comparison.per_seed_diffs = vec![None; 4];
    assert_eq!(
        rdbench_page::chart_note("null", &no_pairs).as_deref(),
        Some("No complete pairs: no null distribution.")
    );
}

#[test]
fn an_exactly_equal_pair_is_a_tie_not_a_loss() {
    let mut r = load(&reference()).unwrap().report;
    r.idea.per_seed[0] = r.baseline.full.per_seed[0];
    let per = svg(|a| per_seed::draw(a, &r, Scale(1.0)));
    let split = [("idea better (5)", "baseline better (2)"), ("idea better (6)", "baseline better (1)")];
    assert!(per.contains("tie (1)"), "legend: a tie is its own kind");
    assert!(split.iter().any(|(w, l)| per.contains(w) && per.contains(l)), "the other 7 pairs keep their kind");
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
    // A seed-era report with one extension key is not read as the seed era: the current
    // format's missing keys are named.
    let text = reference().trim_end().strip_suffix('}').unwrap().to_string() + ", \"warnings\": []}";
    assert!(load(&text).unwrap_err().contains("config: missing key"), "{}", load(&text).unwrap_err());
    // Markup in free-text strings stays text.
    let text = quick().replacen("\"warnings\": [", "\"warnings\": [\"<script>alert(1)</script>\",", 1);
    let l = load(&text).unwrap();
    assert_eq!(card::card(&l.report).warnings[0], "<script>alert(1)</script>");
}

#[test]
fn live_chart_draws_runs() {
    let runs = vec![
        live::Series {
            label: "lr 0.01 seed 0".into(),
            arm: None,
            phase: None,
            points: vec![(0.0, 0.5), (1.0, 0.2), (2.0, 0.1)],
            reused: false,
        },
        live::Series {
            label: "lr 0.003 seed 0".into(),
            arm: None,
            phase: None,
            points: vec![(0.0, 0.5), (1.0, f64::NAN)],
            reused: false,
        },
    ];
    let out = svg(|a| live::draw(a, "baseline sweep", &runs, None, Scale(1.0)));
    assert!(out.contains("lr 0.01 seed 0") && out.contains("baseline sweep"));
}

/// Both arms and both phases stay on the live chart: one legend entry per arm and phase.
#[test]
fn live_chart_keeps_both_arms() {
    let run = |arm: &str, phase: &str, seed: u64, scale: f64| live::Series {
        label: format!("{arm} {phase} seed {seed}"),
        arm: Some(arm.into()),
        phase: Some(phase.into()),
        points: (0..200).map(|i| (i as f64, scale * (0.5 / (1.0 + i as f64)))).collect(),
        reused: false,
    };
    let runs: Vec<live::Series> = (0..3)
        .flat_map(|s| [run("baseline", "sweep", s, 1.0), run("idea", "sweep", s, 2.0), run("baseline", "full", s, 0.7)])
        .collect();
    for size in SIZES {
        let (out, drawn) = svg_at(size.0, |a| live::draw(a, "minibatch loss", &runs, None, size.1));
        for g in ["baseline sweep (3 runs)", "idea sweep (3 runs)", "baseline full (3 runs)"] {
            assert!(out.contains(g), "{g} missing at {size:?}");
        }
        assert_eq!(drawn.points.len(), runs.len(), "one read-out per run");
        let problems = drawn.label_problems();
        assert!(problems.is_empty(), "live chart at {size:?}: {problems:#?}");
    }
}

/// A regression's live chart draws the trivial predictor's MSE and the learning bar across,
/// inside the y range even when every run is below (or above) them, named in the legend and
/// read out on hover; without them (a classification) neither appears.
#[test]
fn live_chart_draws_the_plateau_and_the_learning_bar() {
    // The adding problem's shape: a plateau at the trivial MSE, then a drop far below it.
    let curve = |drop_at: usize| -> Vec<(f64, f64)> {
        (0..600)
            .map(|i| (i as f64, if i < drop_at { 0.16 } else { 0.16 * 0.99f64.powi((i - drop_at) as i32) }))
            .collect()
    };
    let runs = vec![
        live::Series {
            label: "baseline full seed 0".into(),
            arm: Some("baseline".into()),
            phase: Some("full".into()),
            points: curve(300),
            reused: false,
        },
        live::Series {
            label: "idea full seed 0".into(),
            arm: Some("idea".into()),
            phase: Some("full".into()),
            points: curve(400),
            reused: false,
        },
    ];
    let trivial =
        rdbench_core::messages::TrivialLoss { name: "always predicting 1".into(), value: 0.158, learned_below: 0.0158 };
    for size in SIZES {
        let (out, drawn) = svg_at(size.0, |a| live::draw(a, "minibatch loss", &runs, Some(&trivial), size.1));
        assert!(out.contains("trivial predictor (always predicting 1): 0.158"), "{:?}", drawn.labels);
        assert!(out.contains("learned below: 0.0158"), "{:?}", drawn.labels);
        assert_eq!(drawn.points.len(), runs.len() + 2, "a read-out per run and per line");
        let problems = drawn.label_problems();
        assert!(problems.is_empty(), "live chart at {size:?}: {problems:#?}");
    }
    // Runs that never left the plateau: the learning bar is still inside the chart.
    let flat: Vec<live::Series> = runs.iter().map(|r| live::Series { points: curve(10_000), ..r.clone() }).collect();
    let (_, drawn) = svg_at((640, 360), |a| live::draw(a, "minibatch loss", &flat, Some(&trivial), Scale(1.0)));
    let bar = drawn.points.iter().find(|p| p.text.starts_with("learned below")).expect("the bar's read-out");
    let plateau = drawn.points.iter().find(|p| p.text.starts_with("trivial predictor")).expect("the line's read-out");
    assert!(bar.y > plateau.y, "the bar is drawn below the plateau: {bar:?} vs {plateau:?}");
    let (out, drawn) = svg_at((640, 360), |a| live::draw(a, "minibatch loss", &runs, None, Scale(1.0)));
    assert!(!out.contains("trivial predictor") && !out.contains("learned below"));
    assert_eq!(drawn.points.len(), runs.len());
}

/// A resumed bench's reused runs are drawn (dashed) and counted in groups of their own; a run
/// with nothing to draw yet is not counted.
#[test]
fn live_chart_counts_reused_runs_apart() {
    let specs = [
        ("sweep", 0, true, 2),
        ("sweep", 1, true, 2),
        ("sweep", 2, false, 20),
        ("full", 0, true, 2),
        ("full", 1, false, 0),
    ];
    let runs = |dashed: bool| -> Vec<live::Series> {
        specs
            .iter()
            .map(|&(phase, seed, reused, n)| live::Series {
                label: format!("baseline {phase} seed {seed}"),
                arm: Some("baseline".into()),
                phase: Some(phase.into()),
                points: (0..n).map(|i| ((i + 1) as f64 * 10.0, 0.5 / (1.0 + i as f64))).collect(),
                reused: reused && dashed,
            })
            .collect()
    };
    let (out, drawn) = svg_at((640, 360), |a| live::draw(a, "minibatch loss", &runs(true), None, Scale(1.0)));
    for g in ["baseline sweep, reused (2 runs)", "baseline sweep (1 run)", "baseline full, reused (1 run)"] {
        assert!(out.contains(g), "{g} missing: {:?}", drawn.labels);
    }
    assert!(!out.contains("baseline full (1 run)"), "a run without a point is counted");
    assert_eq!(drawn.points.iter().filter(|p| p.text.contains("mean loss of its last epoch")).count(), 3);
    // Dashed: each reused line is drawn as many short segments.
    let (plain, _) = svg_at((640, 360), |a| live::draw(a, "minibatch loss", &runs(false), None, Scale(1.0)));
    let lines = |svg: &str| svg.matches("<polyline").count() + svg.matches("<line").count();
    assert!(lines(&out) > lines(&plain) + 3, "reused runs are not dashed");
}

/// The per-seed chart names every seed, even when one arm's seeds sit within 1% of each
/// other while the other arm's spread: seed numbers beside both arms, spread apart, none
/// overlapping; only more seeds than a column holds leave some unnamed, and the legend says so.
#[test]
fn per_seed_names_every_seed_when_one_arm_is_tight() {
    let mut r = load(&quick()).unwrap().report;
    let n = 8;
    r.baseline.full.per_seed = (0..n).map(|i| Some(0.01 * (1.0 + 0.001 * i as f64))).collect();
    r.idea.per_seed = (0..n).map(|i| Some(0.004 + 0.003 * ((i * 5) % n) as f64)).collect();
    r.comparison.per_seed_diffs =
        r.baseline.full.per_seed.iter().zip(&r.idea.per_seed).map(|(b, x)| Some(x.unwrap() - b.unwrap())).collect();
    r.comparison.n_pairs = n;
    let quick = load(&quick()).unwrap().report;
    for (report, n) in [(&r, n), (&quick, 4)] {
        for (size, s) in SIZES {
            let (svg, drawn) = svg_at(size, |a| per_seed::draw(a, report, s));
            // Seed numbers sit in the plot, right of the y axis' labels: the plot's left edge
            // is 0.6 of the baseline-to-idea distance left of the baseline points.
            let bx = drawn.points.iter().find(|p| p.text.starts_with("seed 0: baseline")).unwrap().x;
            let ix = drawn.points.iter().find(|p| p.text.starts_with("seed 0: idea")).unwrap().x;
            let plot_left = bx - (ix - bx) * 6 / 10;
            for seed in 0..n {
                let at = drawn.labels.iter().filter(|l| l.x0 > plot_left && l.text == seed.to_string()).count();
                assert_eq!(at, 2, "seed {seed} labelled {at} times at {size:?} x{}: {:?}", s.0, drawn.labels);
            }
            let problems = drawn.label_problems();
            assert!(problems.is_empty(), "per-seed at {size:?}: {problems:#?}");
            assert!(!svg.contains("unlabelled"), "{size:?}");
            // Each arm is named once, under its points.
            for (arm, x) in [("baseline", bx), ("idea", ix)] {
                let named: Vec<_> = drawn.labels.iter().filter(|l| l.text == arm).collect();
                assert!(named.len() == 1 && named[0].x0 < x && x < named[0].x1, "{arm} at {size:?}: {named:?}");
            }
        }
    }
    // More close seeds than a column holds on a phone: said in the legend.
    let many = &extreme_reports()[2].1;
    let (svg, _) = svg_at(SIZES[2].0, |a| per_seed::draw(a, many, SIZES[2].1));
    assert!(svg.contains("some seeds unlabelled (too close)"), "64 close seeds on a phone");
}

/// Desktop, phone, and a high-dpr phone (canvas pixels, scale).
const SIZES: [((u32, u32), Scale); 4] =
    [((640, 360), Scale(1.0)), ((900, 480), Scale(1.0)), ((340, 360), Scale(1.0)), ((680, 720), Scale(2.0))];

/// Reports at the edges of what a bench can produce: many seeds with nearly equal values,
/// a wide lr grid, values over many decades, diverged runs, many probe traces.
fn extreme_reports() -> Vec<(&'static str, Report)> {
    let q = load(&quick()).unwrap().report;
    let mut out = vec![("seed report", load(&reference()).unwrap().report), ("quick report", q.clone())];

    let mut many = q.clone();
    let n = 64;
    many.baseline.full.per_seed = (0..n).map(|i| Some(0.01 + 1e-6 * i as f64)).collect();
    many.idea.per_seed = (0..n).map(|i| Some(if i == 5 { 0.0194 } else { 0.01 + 1.3e-6 * i as f64 })).collect();
    many.comparison.per_seed_diffs = many
        .baseline
        .full
        .per_seed
        .iter()
        .zip(&many.idea.per_seed)
        .map(|(b, x)| Some(x.unwrap() - b.unwrap()))
        .collect();
    many.comparison.n_pairs = n;
    many.baseline.full.mean = Some(0.01003);
    many.idea.mean = Some(0.0194);
    if let Some(m) = many.mechanism.as_mut() {
        let t = m.traces[0].clone();
        m.traces = (0..16).map(|s| rdbench_core::mechanism::ProbeTrace { seed: s, ..t.clone() }).collect();
    }
    out.push(("64 close seeds", many));

    let mut wide = q.clone();
    let lrs: Vec<f64> = (0..12).map(|i| 1e-5 * 10f64.powf(i as f64 * 5.0 / 11.0)).collect();
    let lrs: Vec<f64> = lrs.iter().map(|v| format!("{v:.1e}").parse().unwrap()).collect();
    wide.baseline.sweep = lrs
        .iter()
        .enumerate()
        .map(|(i, &lr)| rdbench_core::report::SweepEntry {
            cfg: rdbench_core::report::Cfg { lr },
            mean: if i == 11 { None } else { Some(10f64.powi(-(i as i32) % 9 - 1)) },
        })
        .collect();
    wide.idea_sweep = lrs
        .iter()
        .enumerate()
        .map(|(i, lr)| {
            (format!("{lr}"), rdbench_core::report::SweepMean { mean: Some(3.0 * 10f64.powi(-(i as i32) % 7)) })
        })
        .collect();
    wide.baseline.full.per_seed = vec![Some(1e-8), None, Some(10.0), Some(2e-3)];
    wide.idea.per_seed = vec![Some(5.0), Some(1e-3), None, Some(2.1e-3)];
    wide.comparison.per_seed_diffs = vec![Some(5.0), None, None, Some(1e-4)];
    wide.comparison.n_pairs = 2;
    wide.baseline.full.mean = None;
    out.push(("wide ranges, diverged runs", wide));
    out
}

/// Every chart, every report, every size: no drawn label overlaps another or leaves the canvas.
#[test]
fn labels_neither_overlap_nor_clip() {
    for (name, r) in extreme_reports() {
        for chart in CHARTS.map(|c| c.name) {
            for (size, s) in SIZES {
                let (_, drawn) = svg_at(size, |a| draw_chart(chart, a, &r, s));
                let problems = drawn.label_problems();
                assert!(problems.is_empty(), "{chart} of {name} at {size:?} x{}: {problems:#?}", s.0);
                assert!(!drawn.labels.is_empty(), "{chart} of {name}: nothing recorded");
            }
        }
    }
}

/// The recorder sees overlaps: two labels drawn at the same place are reported.
#[test]
fn the_label_check_can_fail() {
    let (_, drawn) = svg_at((200, 100), |a| {
        let f = ("sans-serif", 14).into_font();
        a.draw(&Text::new("overlap", (10, 10), f.clone())).unwrap();
        a.draw(&Text::new("overlap", (14, 12), f.clone())).unwrap();
        a.draw(&Text::new("clipped at the right edge", (150, 60), f)).unwrap();
        Ok(Vec::new())
    });
    let p = drawn.label_problems();
    assert!(p.iter().any(|p| p.contains("overlaps")), "{p:?}");
    assert!(p.iter().any(|p| p.contains("leaves")), "{p:?}");
}

/// The sweep chart labels every grid lr and shows each sweep seed's point.
#[test]
fn sweep_labels_every_lr_and_shows_the_seeds() {
    let r = load(&quick()).unwrap().report;
    let (_, drawn) = svg_at((640, 360), |a| sweep::draw(a, &r, Scale(1.0)));
    for lr in ["0.003", "0.01", "0.03"] {
        assert!(drawn.labels.iter().any(|l| l.text == lr), "no label at lr {lr}: {:?}", drawn.labels);
    }
    let seeds = drawn.points.iter().filter(|p| p.text.contains("sweep seed")).count();
    assert_eq!(seeds, 2 * 3 * 2, "2 arms x 3 lrs x 2 sweep seeds");
    let y_labels = drawn.labels.iter().filter(|l| l.x1 < 80 && l.text.parse::<f64>().is_ok()).count();
    assert!(y_labels >= 3, "log y axis has {y_labels} labels");
}

/// Arms whose sweep means coincide (an exactly reversible model's) both stay visible: the
/// idea's line dashed over the baseline's, and the legend says so; otherwise neither.
#[test]
fn sweep_shows_both_arms_when_they_coincide() {
    let mut r = load(&quick()).unwrap().report;
    let (plain, _) = svg_at((640, 360), |a| sweep::draw(a, &r, Scale(1.0)));
    assert!(!plain.contains("coincide"));
    for (lr, entry) in r.idea_sweep.iter_mut() {
        let lr: f64 = lr.parse().unwrap();
        entry.mean = r.baseline.sweep.iter().find(|b| b.cfg.lr == lr).unwrap().mean;
    }
    for (size, s) in SIZES {
        let (out, drawn) = svg_at(size, |a| sweep::draw(a, &r, s));
        let note = drawn.labels.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" ");
        assert!(note.contains("coincide at every lr") && note.contains("dashed"), "{:?}", drawn.labels);
        assert!(out.contains("coincide"));
        let problems = drawn.label_problems();
        assert!(problems.is_empty(), "sweep chart at {size:?}: {problems:#?}");
    }
    let (same, _) = svg_at((640, 360), |a| sweep::draw(a, &r, Scale(1.0)));
    let lines = |svg: &str| svg.matches("<polyline").count() + svg.matches("<line").count();
    assert!(lines(&same) > lines(&plain) + 3, "the idea's line is not dashed");
}

/// The frontier chart draws a point for every schedule and parameter of the report, each
/// read out under the pointer, and the study draws both models' frontiers side by side (and
/// stacked on a phone) without a label overlapping another or leaving the canvas.
#[test]
fn frontier_chart_shows_every_schedule_and_both_models() {
    let r = load(&quick()).unwrap().report;
    let f = r.frontier.clone().expect("the quick report measures the frontier");
    for (size, s) in SIZES {
        let (svg, drawn) = svg_at(size, |a| frontier::draw(a, &r, s));
        assert_eq!(drawn.points.len(), f.points.len(), "one read-out per point at {size:?}");
        for p in &f.points {
            assert!(drawn.points.iter().any(|h| h.text.starts_with(p.at.schedule.label())), "{:?}", p.at.schedule);
        }
        for family in ["fixed interval", "revolve", "reversal at fixed k", "operating points"] {
            assert!(svg.contains(family), "{family} missing at {size:?}");
        }
    }
    let mut other = f.clone();
    other.points.retain(|p| p.at.schedule != rdbench_core::records::ScheduleKind::Reversal);
    let models = vec![
        ModelFrontier { track: "dynamics".into(), model: "rnn_small".into(), frontier: f },
        ModelFrontier { track: "dynamics".into(), model: "rev_ode_small".into(), frontier: other },
    ];
    for (size, stacked) in [((1200, 560), false), ((390, 900), true), ((780, 1800), true)] {
        let s = Scale(size.0 as f64 / if stacked { 390.0 } else { 1200.0 });
        let (svg, drawn) = svg_at(size, |a| frontier::draw_frontiers(a, &models, stacked, s));
        assert!(svg.contains("rnn_small: Frontier") && svg.contains("rev_ode_small: Frontier"));
        let problems = drawn.label_problems();
        assert!(problems.is_empty(), "study frontiers at {size:?}: {problems:#?}");
    }
    // A report without a frontier says so instead of drawing an empty chart.
    let seed = load(&reference()).unwrap().report;
    assert!(svg(|a| frontier::draw(a, &seed, Scale(1.0))).contains("No frontier in this report"));
}

/// The card's frontier sentence takes its numbers from the report's `frontier.dominated`.
#[test]
fn card_says_where_the_idea_stands_against_exact_checkpointing() {
    let r = load(&quick()).unwrap().report;
    let d = &r.frontier.as_ref().unwrap().dominated;
    let c = card::card(&r);
    let text = c.frontier.expect("a frontier sentence");
    assert_eq!(c.frontier_dominated, d.fraction);
    assert!(text.starts_with("The idea is "), "{text}");
    if d.n_saving > 0 {
        for v in [d.mean_idea_cell_evals, d.mean_exact_cell_evals] {
            assert!(text.contains(&rdbench_page::format::num(v)), "{text}");
        }
    }
    assert_eq!(card::card(&load(&reference()).unwrap().report).frontier, None);
}

/// The scale charts of the committed scale study, a column per model on a wide screen and one
/// panel per row on a phone (as the page sizes them): a point per schedule, model, track and
/// length, and no label overlapping another or leaving the canvas.
#[test]
fn scale_charts_draw_every_length_at_both_widths() {
    use rdbench_core::scale::ScaleReport;
    use rdbench_page::scale_chart;
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scale/scale_report.json")).unwrap();
    let scale: ScaleReport = serde_json::from_str(&text).unwrap();
    // Per track, model and length: 4 schedules on each of three charts, and on the metric's
    // each arm that has a mean (a diverged run leaves none, and the legend says where).
    let means = |r: &rdbench_core::scale::ScaleRow| {
        [r.outcome.baseline_metric, r.outcome.idea_metric].iter().filter(|m| m.is_some()).count()
    };
    let want: usize = scale.table.iter().map(|r| 3 * r.schedules.len() + means(r)).sum();
    let gaps = scale.table.iter().any(|r| r.outcome.idea_metric.is_none() || r.outcome.baseline_metric.is_none());
    for (width, stacked, dpr) in [(1200.0, false, 1.0), (390.0, true, 1.0), (390.0, true, 3.0)] {
        let rows = scale_chart::panel_rows(&scale, stacked) as f64;
        let per_row = if stacked { width * 0.72 } else { width / scale.models.len() as f64 * 0.6 };
        let size = ((width * dpr) as u32, (rows * per_row.round() * dpr) as u32);
        let (svg, drawn) = svg_at(size, |a| scale_chart::draw(a, &scale, Scale(dpr), stacked));
        assert_eq!(drawn.points.len(), want, "points at {size:?}");
        for t in &scale.seq_lens {
            assert!(drawn.points.iter().any(|p| p.text.contains(&format!("T = {t},"))), "T = {t} at {size:?}");
        }
        for what in ["hidden states held against T", "cell evaluations against T", "gradient cosine to dense BPTT"] {
            assert_eq!(svg.matches(what).count(), scale.tracks.len() * scale.models.len(), "{what} at {size:?}");
        }
        assert_eq!(gaps, svg.contains("no mean at T = "), "the legend names the lengths without a mean at {size:?}");
        let problems = drawn.label_problems();
        assert!(problems.is_empty(), "scale charts at {size:?}: {problems:#?}");
    }
}

/// The trivial predictor on the per-seed chart: where the baseline learned (the adding
/// problem at T = 200, docs/long) its 0.158 lies far above the seeds' 1e-4..1e-3, so the
/// legend names it "off the chart" and the seeds keep the chart's height; where the baseline
/// did not learn it is a dashed line among the seeds, and the legend says why it matters.
#[test]
fn per_seed_shows_the_trivial_predictor_and_draws_it_where_the_baseline_did_not_learn() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/long/adding_T200_report.json"))
        .unwrap();
    let learned = load(&text).unwrap().report;
    let trivial = learned.task.as_ref().unwrap().reference.as_ref().unwrap().value;
    let mut void = learned.clone();
    void.baseline.full.per_seed = (0..8).map(|i| Some(trivial + 0.002 * (i + 1) as f64)).collect();
    void.idea.per_seed = (0..8).map(|i| Some(trivial + 0.0015 * i as f64 + 0.001)).collect();
    void.baseline.full.mean = Some(trivial + 0.007);
    void.idea.mean = Some(trivial + 0.006);
    void.task.as_mut().unwrap().learnability.as_mut().unwrap().comparison_void = true;
    for (size, s) in SIZES {
        // The legend's words, wrapped lines joined (a phone wraps the legend).
        let words =
            |d: &rdbench_page::layout::Drawn| d.labels.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" ");
        let (_, drawn) = svg_at(size, |a| per_seed::draw(a, &learned, s));
        let legend = words(&drawn);
        assert!(
            legend.contains("trivial predictor (always predicting 1)") && legend.contains("off the chart"),
            "{size:?}: {legend}"
        );
        assert!(!drawn.points.iter().any(|p| p.text.starts_with("trivial predictor")), "drawn off the chart");
        assert!(drawn.label_problems().is_empty(), "{size:?}: {:#?}", drawn.label_problems());

        let (_, drawn) = svg_at(size, |a| per_seed::draw(a, &void, s));
        let legend = words(&drawn);
        assert!(
            legend.contains("the baseline did not learn") && !legend.contains("off the chart"),
            "{size:?}: {legend}"
        );
        let line = drawn.points.iter().find(|p| p.text.starts_with("trivial predictor")).expect("the line is drawn");
        // Below every seed (a larger MSE is higher up, a smaller y in pixels).
        let lowest = drawn.points.iter().filter(|p| p.text.starts_with("seed ")).map(|p| p.y).max().unwrap();
        assert!(line.y > lowest, "the trivial line at {} sits below the seeds (lowest at {lowest})", line.y);
        assert!(drawn.label_problems().is_empty(), "{size:?}: {:#?}", drawn.label_problems());
    }
}

/// The study chart of the committed study fits a phone: at 340 px (and at dpr 2) its title
/// and legend wrap, its two panels stack, and no text overlaps another or leaves the canvas;
/// on a desktop the panels sit side by side.
#[test]
fn the_study_chart_fits_a_phone_and_a_desktop() {
    use rdbench_core::study::StudyReport;
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/study/study_report.json")).unwrap();
    let study: StudyReport = serde_json::from_str(&text).unwrap();
    for (size, dpr, stacked) in [((1200, 552), 1.0, false), ((340, 544), 1.0, true), ((680, 1088), 2.0, true)] {
        let (_, drawn) =
            svg_at(size, |a| rdbench_page::study_chart::draw(a, &study, dpr, stacked).map(|()| Vec::new()));
        let problems = drawn.label_problems();
        assert!(problems.is_empty(), "study chart at {size:?}: {problems:#?}");
        let words = drawn.labels.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join(" ");
        for what in
            ["Gradient cosine", "cosine at the chosen k vs dense BPTT", "cosine at k_max vs dense BPTT", "rev_gru"]
        {
            assert!(words.contains(what), "{what} at {size:?}: {words}");
        }
        // Ticks in the page's format: a zero is never "-0.0".
        assert!(
            !drawn
                .labels
                .iter()
                .any(|l| l.text.starts_with("-0") && l.text.trim_start_matches(['-', '0', '.']).is_empty()),
            "{words}"
        );
        // Stacked: the second panel's caption is below the first's.
        let caption = |c: &str| drawn.labels.iter().find(|l| l.text.starts_with(c)).map(|l| (l.x0, l.y0)).unwrap();
        let (a, b) = (caption("cosine at the chosen k"), caption("cosine at k_max"));
        assert_eq!(b.1 > a.1 + 50, stacked, "panels at {size:?}: {a:?} {b:?}");
    }
}
