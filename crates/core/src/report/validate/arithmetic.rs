//! What a report lets one recompute without its runs (a seed-era report has none): the
//! arms' means from `per_seed`, the diffs, wins and pairs, the p-value (never below the
//! smallest p its pairs can reach; recomputed from the diffs with its recorded method, or,
//! where no method is recorded, within a Monte Carlo estimate's error of the diffs' p), the
//! other statistics from the diffs and their recorded seeds, the verdict from p and α, the
//! best lrs from the sweep, the config against the report's own fields, the mechanism
//! rejudged from its probe traces, whether each arm learned from its metrics and the trivial
//! predictor's, and the memory fractions from their means.

use super::diff::{differences, json, shown};
use super::{Checker, join};
use crate::config::BenchConfig;
use crate::mechanism::judge;
use crate::records::RunRecord;
use crate::report::build::{Pairs, STATS_SEED};
use crate::report::sweep::best_lr;
use crate::report::{Memory, Report, Statistics};
use crate::stats::permutation::{EXACT_MAX_PAIRS, SignFlipMethod, min_reachable_p, sign_flip_p};
use crate::stats::{Verdict, bootstrap, wilcoxon};

/// Relative tolerance for numbers a report carries beside their inputs: mean, std, diffs.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-12
}

/// The arithmetic that ties the report's numbers together.
pub(super) fn check(r: &Report, c: &mut Checker) {
    if r.bench_version != crate::report::BENCH_VERSION {
        c.fail("bench_version", format!("expected {}, found {}", crate::report::BENCH_VERSION, r.bench_version));
    }
    direction(r, c);
    arms(r, c);
    comparison(r, c);
    config(r, c);
    match &r.statistics {
        Some(st) => statistics(r, st, c),
        None => unrecorded_p(r, c),
    }
    mechanism(r, c);
    learnability(r, c);
    if let Some(m) = &r.memory {
        memory(r, m, c);
    }
}

/// `metric_direction`: a direction, and the one of the report's track (a report without a
/// config names its track in `track`; the dynamics track's is "lower is better").
fn direction(r: &Report, c: &mut Checker) {
    let track = r.config.as_ref().map_or(r.track.as_str(), |c| c.track.as_str());
    let task = crate::track::task_of(track);
    match (crate::track::Direction::parse(&r.metric_direction), task) {
        (None, _) => c.fail(
            "metric_direction",
            format!("expected \"lower is better\" or \"higher is better\", found {:?}", r.metric_direction),
        ),
        (Some(d), Some(task)) if d != task.direction() => c.fail(
            "metric_direction",
            format!("{:?}, but the {track} track's {} is {:?}", d.as_str(), task.metric(), task.direction().as_str()),
        ),
        _ => {}
    }
}

/// Each arm's n, means and std from its `per_seed`.
fn arms(r: &Report, c: &mut Checker) {
    let track = r.config.as_ref().map_or(r.track.as_str(), |c| c.track.as_str());
    let classification = crate::track::task_of(track).is_some_and(|t| !t.is_regression());
    let base = &r.baseline.full;
    let idea = &r.idea;
    for (path, per_seed, n, mean, std) in [
        ("baseline.full", &base.per_seed, base.n, base.mean, base.std),
        ("idea", &idea.per_seed, idea.n, idea.mean, idea.std),
    ] {
        if per_seed.len() != n {
            c.fail(&join(path, "n"), format!("n = {n} but per_seed has {} values", per_seed.len()));
        }
        if n != r.n_seeds {
            c.fail(&join(path, "n"), format!("n = {n} but n_seeds = {}", r.n_seeds));
        }
        for (i, v) in per_seed.iter().enumerate() {
            let Some(v) = v else { continue };
            if classification && !(0.0..=1.0).contains(v) {
                c.fail(&format!("{path}.per_seed[{i}]"), format!("an accuracy must be in [0, 1], found {v}"));
            } else if !v.is_finite() || *v < 0.0 {
                c.fail(&format!("{path}.per_seed[{i}]"), format!("an MSE must be finite and >= 0, found {v}"));
            }
        }
        let all: Option<Vec<f64>> = per_seed.iter().copied().collect();
        match (all, mean) {
            (Some(vals), Some(m)) if !vals.is_empty() => {
                let want = crate::stats::mean(&vals);
                if !close(m, want) {
                    c.fail(&join(path, "mean"), format!("{m} is not the mean of per_seed ({want})"));
                }
                if let Some(s) = std {
                    let want = crate::stats::std(&vals, 0);
                    if !close(s, want) {
                        c.fail(&join(path, "std"), format!("{s} is not the population std of per_seed ({want})"));
                    }
                }
            }
            (None, Some(_)) => c.fail(&join(path, "mean"), "a number, though a per_seed value is null (diverged)"),
            _ => {}
        }
    }
}

/// The α the verdict is judged at: the config's, else the statistics', else the default.
fn alpha(r: &Report) -> f64 {
    r.config
        .as_ref()
        .map(|c| c.alpha)
        .or(r.statistics.as_ref().map(|s| s.alpha))
        .unwrap_or_else(|| BenchConfig::default().alpha)
}

/// Diffs, wins, pairs, delta_mean, dropped pairs, p's range, verdict and best lrs.
fn comparison(r: &Report, c: &mut Checker) {
    let (base, idea, cmp) = (&r.baseline.full, &r.idea, &r.comparison);
    let direction = r.direction();
    if cmp.per_seed_diffs.len() != base.per_seed.len().min(idea.per_seed.len()) {
        c.fail("comparison.per_seed_diffs", "must have one value per seed");
    }
    let mut wins = 0;
    let mut pairs = 0;
    for (i, d) in cmp.per_seed_diffs.iter().enumerate() {
        let (b, x) = (base.per_seed.get(i).copied().flatten(), idea.per_seed.get(i).copied().flatten());
        let path = format!("comparison.per_seed_diffs[{i}]");
        match (d, b, x) {
            (Some(d), Some(b), Some(x)) => {
                pairs += 1;
                wins += (direction.gain(*d) > 0.0) as usize;
                if !close(*d, x - b) {
                    c.fail(&path, format!("{d} is not idea - baseline ({})", x - b));
                }
            }
            // A pair with a diverged run has no difference and is never a win.
            (None, None, _) | (None, _, None) => {}
            (Some(_), _, _) => c.fail(&path, "a number, though a run is null"),
            (None, Some(_), Some(_)) => c.fail(&path, "null, though both runs have a metric"),
        }
    }
    if cmp.idea_wins != wins {
        c.fail("comparison.idea_wins", format!("{} but the diffs give {wins}", cmp.idea_wins));
    }
    if cmp.n_pairs != pairs {
        c.fail("comparison.n_pairs", format!("{} but {pairs} pairs have both metrics", cmp.n_pairs));
    }
    let expected = Pairs::new(&base.per_seed, &idea.per_seed, direction);
    match (cmp.delta_mean, expected.delta_mean) {
        (Some(d), Some(want)) if !close(d, want) => c.fail(
            "comparison.delta_mean",
            format!("{d} is not mean(idea) - mean(baseline) over the complete pairs ({want})"),
        ),
        (Some(_), None) => c.fail("comparison.delta_mean", "a number, though no pair has both metrics"),
        (None, Some(want)) => c.fail("comparison.delta_mean", format!("null, though the complete pairs give {want}")),
        _ => {}
    }
    if let Some(st) = &r.statistics
        && st.dropped_pairs != expected.dropped
        // Reports written before dropped_pairs (and run_backends) existed list none.
        && !(st.dropped_pairs.is_empty() && r.environment.as_ref().is_none_or(|e| e.run_backends.is_empty()))
    {
        c.fail(
            "statistics.dropped_pairs",
            "must list exactly the pairs whose diff is null, with the run that diverged",
        );
    }
    match cmp.p_value {
        Some(p) if !(0.0..=1.0).contains(&p) => c.fail("comparison.p_value", format!("{p} is not a probability")),
        Some(p) if pairs <= EXACT_MAX_PAIRS && p < min_reachable_p(pairs) => c.fail(
            "comparison.p_value",
            format!(
                "{p} is below {}, the smallest p that {pairs} pairs can give (2 / 2^{pairs}: the observed signs \
                 and their mirror always count)",
                min_reachable_p(pairs)
            ),
        ),
        Some(p) if pairs == 0 => c.fail("comparison.p_value", format!("{p}, though no pair was tested")),
        None if pairs > 0 => c.fail("comparison.p_value", format!("null, though {pairs} pairs were tested")),
        _ => {}
    }
    let alpha = alpha(r);
    let want = Verdict::decide(cmp.p_value, cmp.delta_mean, alpha, direction);
    if cmp.verdict != want {
        c.fail(
            "comparison.verdict",
            format!("{:?} but p, delta_mean and alpha {alpha} give {:?}", cmp.verdict.as_str(), want.as_str()),
        );
    }
    if cmp.system_worked != cmp.verdict.system_worked() {
        c.fail("comparison.system_worked", "must be true exactly when the verdict is \"significant win\"");
    }
    // best_cfg: the protocol's rule.
    let base_sweep: Vec<(f64, Option<f64>)> = r.baseline.sweep.iter().map(|e| (e.cfg.lr, e.mean)).collect();
    if let Some(b) = best_lr(&base_sweep, direction)
        && b != r.baseline.best_cfg.lr
    {
        c.fail("baseline.best_cfg.lr", format!("{} but the best sweep mean is at lr {b}", r.baseline.best_cfg.lr));
    }
    let mut idea_sweep = Vec::new();
    for (k, v) in &r.idea_sweep {
        match k.parse::<f64>() {
            Ok(lr) if lr > 0.0 => idea_sweep.push((lr, v.mean)),
            _ => c.fail(&format!("idea_sweep.{k}"), "the key must be a positive learning rate"),
        }
    }
    if let Some(b) = best_lr(&idea_sweep, direction)
        && b != r.idea.best_cfg.lr
    {
        c.fail("idea.best_cfg.lr", format!("{} but the best idea_sweep mean is at lr {b}", r.idea.best_cfg.lr));
    }
}

/// The config's own limits, and the report's fields that repeat it. A report without a
/// config gets the limits its own fields allow (seeds, lr grid, model, track).
fn config(r: &Report, c: &mut Checker) {
    let grid: Vec<f64> = r.baseline.sweep.iter().map(|e| e.cfg.lr).collect();
    let Some(cfg) = &r.config else {
        let implied = BenchConfig {
            n_seeds: r.n_seeds,
            lrs: grid,
            model: r.model.clone(),
            track: r.track.clone(),
            ..BenchConfig::default()
        };
        for e in implied.problems() {
            let path = match e.field.as_str() {
                "n_seeds" => "n_seeds",
                "lrs" => "baseline.sweep",
                "model" => "model",
                "track" => "track",
                _ => continue,
            };
            c.fail(path, e.message);
        }
        return;
    };
    for e in cfg.problems() {
        c.fail(&join("config", &e.field), e.message);
    }
    let same = |c: &mut Checker, path: &str, file: String, config: String| {
        if file != config {
            c.fail(path, format!("{file} but config says {config}"));
        }
    };
    same(c, "n_seeds", r.n_seeds.to_string(), cfg.n_seeds.to_string());
    same(c, "model", r.model.clone(), cfg.model.clone());
    same(c, "track", r.track.clone(), cfg.track.clone());
    same(c, "baseline.sweep", format!("lrs {grid:?}"), format!("lrs {:?}", cfg.lrs));
    let keys: Vec<String> = cfg.lrs.iter().map(|&lr| BenchConfig::lr_key(lr)).collect();
    same(c, "idea_sweep", format!("lrs {:?}", r.idea_sweep.keys().collect::<Vec<_>>()), format!("lrs {keys:?}"));
    if let Some(st) = &r.statistics {
        if st.alpha != cfg.alpha {
            c.fail("statistics.alpha", format!("{} but config.alpha is {}", st.alpha, cfg.alpha));
        }
        if st.bootstrap_resamples != cfg.bootstrap_resamples {
            let msg =
                format!("{} but config.bootstrap_resamples is {}", st.bootstrap_resamples, cfg.bootstrap_resamples);
            c.fail("statistics.bootstrap_resamples", msg);
        }
        if let Some(SignFlipMethod::MonteCarlo { permutations, .. }) = st.p_value_method
            && permutations != cfg.permutations
        {
            let msg = format!("{permutations} but config.permutations is {}", cfg.permutations);
            c.fail("statistics.p_value_method.permutations", msg);
        }
    }
}

/// The knob table's range of the resampling counts: outside it the recomputation is skipped
/// (a forged count of 10^15 must not hang the check).
fn resample_count_ok(n: usize) -> bool {
    (100..=10_000_000).contains(&n)
}

/// p, Wilcoxon, bootstrap CI and d_z recomputed from the complete pairs' diffs with the
/// recorded method and seeds, which must be the bench's; the CI's bounds in order.
fn statistics(r: &Report, st: &Statistics, c: &mut Checker) {
    // Whatever the pairs and the resample count, an interval's bounds are in order.
    if let Some([lo, hi]) = st.delta_mean_ci95
        && lo > hi
    {
        c.fail("statistics.delta_mean_ci95", format!("its lower bound {lo} is above its upper bound {hi}"));
    }
    let diffs: Vec<f64> = r.comparison.per_seed_diffs.iter().flatten().copied().collect();
    let n = diffs.len();
    if n != r.comparison.n_pairs {
        return; // already named: the statistics of which pairs?
    }
    let m = "statistics.p_value_method";
    match (&st.p_value_method, n) {
        (None, 0) => {}
        (None, _) => c.fail(m, format!("null, though {n} pairs were tested")),
        (Some(_), 0) => c.fail(m, "a method, though no pair was tested"),
        (Some(SignFlipMethod::Exact { assignments }), n) => {
            if n > EXACT_MAX_PAIRS {
                c.fail(m, format!("exact, but {n} pairs (more than {EXACT_MAX_PAIRS}) are tested by Monte Carlo"));
            } else if *assignments != 1u64 << n {
                c.fail(
                    &join(m, "assignments"),
                    format!("{assignments}, but {n} pairs have 2^{n} = {} sign assignments", 1u64 << n),
                );
            } else {
                recomputed_p(r, sign_flip_p(&diffs, 0, 0).0, &format!("its {assignments} sign assignments"), c);
            }
        }
        (Some(SignFlipMethod::MonteCarlo { permutations, seed }), n) => {
            if n <= EXACT_MAX_PAIRS {
                c.fail(m, format!("Monte Carlo, but {n} pairs (at most {EXACT_MAX_PAIRS}) are enumerated exactly"));
            } else if *seed != STATS_SEED {
                c.fail(&join(m, "seed"), format!("{seed}, but the bench's seed is {STATS_SEED}"));
            } else if resample_count_ok(*permutations) {
                let how = format!("{permutations} sign vectors from seed {seed}");
                recomputed_p(r, sign_flip_p(&diffs, *permutations, *seed).0, &how, c);
            }
        }
    }
    let want = (n > 0).then(|| wilcoxon::wilcoxon(&diffs));
    if st.wilcoxon != want {
        let mut out = Vec::new();
        differences(&json(&st.wilcoxon), &json(&want), "statistics.wilcoxon", &mut out);
        for (path, what) in out {
            c.fail(&path, format!("{what} from the Wilcoxon signed-rank test of the diffs"));
        }
    }
    if st.bootstrap_seed != STATS_SEED {
        c.fail("statistics.bootstrap_seed", format!("{}, but the bench's seed is {STATS_SEED}", st.bootstrap_seed));
    } else if resample_count_ok(st.bootstrap_resamples) {
        let want = (n >= 2).then(|| {
            let (lo, hi) = bootstrap::mean_ci95(&diffs, st.bootstrap_resamples, st.bootstrap_seed);
            [lo, hi]
        });
        if st.delta_mean_ci95 != want {
            c.fail_once(
                "statistics.delta_mean_ci95",
                format!(
                    "{} but {} bootstrap resamples of the diffs from seed {} give {}",
                    shown(&st.delta_mean_ci95),
                    st.bootstrap_resamples,
                    st.bootstrap_seed,
                    shown(&want)
                ),
            );
        }
    }
    let want = Some(crate::stats::cohens_dz(&diffs)).filter(|d| d.is_finite());
    if st.effect_size_dz != want {
        c.fail(
            "statistics.effect_size_dz",
            format!("{} but mean / sd (ddof 1) of the diffs is {}", shown(&st.effect_size_dz), shown(&want)),
        );
    }
}

fn recomputed_p(r: &Report, p: f64, how: &str, c: &mut Checker) {
    if r.comparison.p_value != Some(p) {
        let file = r.comparison.p_value.map_or("null".into(), |p| p.to_string());
        c.fail_once("comparison.p_value", format!("{file} but the sign-flip test of the diffs over {how} gives {p}"));
    }
}

/// How many binomial standard errors a p whose method is not recorded may lie from the p
/// its diffs give: a Monte Carlo estimate strays past 4 once in about 16,000 reports.
const UNRECORDED_P_SE: f64 = 4.0;

/// Sign vectors of the check's own estimate past `EXACT_MAX_PAIRS`: ten times the default
/// count, so its own error adds a tenth to the variance of the difference.
const FRESH_PERMUTATIONS: usize = 100_000;

/// The binomial standard error of a share `p` of `n` draws, `p` kept one draw away from 0
/// and 1: a true p near 0 gives an estimate of a hit or two, not a standard error of 0.
fn binomial_se(p: f64, n: usize) -> f64 {
    let q = p.clamp(1.0 / n as f64, 1.0 - 1.0 / n as f64);
    (q * (1.0 - q) / n as f64).sqrt()
}

/// The p of a report that records no method (no `statistics`: the seed era). Its diffs fix
/// the p: exactly for at most `EXACT_MAX_PAIRS` pairs, and past that up to the error of a
/// fresh Monte Carlo estimate (`FRESH_PERMUTATIONS` sign vectors from `STATS_SEED`). The
/// report's p may be a Monte Carlo estimate even with few pairs (the seed's is: 0.1697 for 8
/// pairs, no multiple of 1/256; the exact p is 0.171875), of a count it does not record: it
/// must lie within `UNRECORDED_P_SE` binomial standard errors, at the spec's default
/// `permutations`, of the diffs' p (the fresh estimate's own error added in quadrature). A p
/// outside is forged, and so is a verdict the diffs' p does not give.
fn unrecorded_p(r: &Report, c: &mut Checker) {
    let cmp = &r.comparison;
    let diffs: Vec<f64> = cmp.per_seed_diffs.iter().flatten().copied().collect();
    let n = diffs.len();
    // No p, no pair, or pairs that disagree with n_pairs: already named.
    let Some(p) = cmp.p_value.filter(|_| n > 0 && n == cmp.n_pairs) else { return };
    let (want, method, own_se) = if n <= EXACT_MAX_PAIRS {
        let (want, method) = sign_flip_p(&diffs, 0, 0);
        (want, method, 0.0)
    } else {
        let (want, method) = sign_flip_p(&diffs, FRESH_PERMUTATIONS, STATS_SEED);
        (want, method, binomial_se(want, FRESH_PERMUTATIONS))
    };
    let draws = BenchConfig::default().permutations;
    let tolerance = UNRECORDED_P_SE * binomial_se(want, draws).hypot(own_se);
    if (p - want).abs() <= tolerance {
        return;
    }
    c.fail_once(
        "comparison.p_value",
        format!(
            "{p} but the sign-flip test of the {n} diffs gives {want} ({}); the report records no method, so a \
             Monte Carlo p of {draws} sign vectors (the default count) must lie within {UNRECORDED_P_SE} standard \
             errors of it (±{tolerance:.3e})",
            method.describe()
        ),
    );
    let alpha = alpha(r);
    let verdict = Verdict::decide(Some(want), cmp.delta_mean, alpha, r.direction());
    if cmp.verdict != verdict {
        c.fail_once(
            "comparison.verdict",
            format!(
                "{:?} but the diffs' p {want}, delta_mean and alpha {alpha} give {:?}",
                cmp.verdict.as_str(),
                verdict.as_str()
            ),
        );
    }
}

/// The mechanism judged again from its probe traces (they carry every value the judge
/// reads), and its tau and policy against the config.
fn mechanism(r: &Report, c: &mut Checker) {
    let Some(d) = &r.mechanism else { return };
    if let Some(cfg) = &r.config {
        if d.tau != cfg.tau {
            c.fail("mechanism.tau", format!("{} but config.tau is {}", d.tau, cfg.tau));
        }
        if d.policy != cfg.policy.as_str() {
            c.fail("mechanism.policy", format!("{:?} but config.policy is {:?}", d.policy, cfg.policy.as_str()));
        }
    }
    let mut runs = Vec::with_capacity(d.traces.len());
    for (i, t) in d.traces.iter().enumerate() {
        let Some(probes) = t.probes() else {
            c.fail(&format!("mechanism.traces[{i}]"), "its lists must have one value per probe");
            return;
        };
        runs.push(RunRecord::of_probes(t.seed, probes));
    }
    let (sig, detail) = judge(&runs, d.tau, &d.policy);
    let mut out = Vec::new();
    differences(&json(d), &json(&detail), "mechanism", &mut out);
    differences(&json(&r.mechanism_signature), &json(&sig), "mechanism_signature", &mut out);
    for (path, what) in out {
        c.fail(&path, format!("{what} by the mechanism's rules from its probe traces"));
    }
}

/// `task.learnability` judged again by the rule from the arms' test metrics and the trivial
/// predictor's score (`task.reference`), which it needs.
fn learnability(r: &Report, c: &mut Checker) {
    let Some(task) = &r.task else { return };
    let Some(l) = &task.learnability else { return };
    let Some(reference) = &task.reference else {
        c.fail("task.learnability", "it judges the arms against the trivial predictor, but task.reference is missing");
        return;
    };
    let Some(direction) = crate::track::Direction::parse(&r.metric_direction) else { return };
    let want = crate::learnability::Learnability::judge(
        direction,
        &task.metric,
        reference.value,
        (r.baseline.full.mean, &r.baseline.full.per_seed),
        (r.idea.mean, &r.idea.per_seed),
    );
    let mut out = Vec::new();
    differences(&json(l), &json(&want), "task.learnability", &mut out);
    for (path, what) in out {
        c.fail(&path, format!("{what} by the rule from the arms' test metrics and task.reference.value"));
    }
}

/// The memory fractions from their means, and the byte figures from the config.
fn memory(r: &Report, m: &Memory, c: &mut Checker) {
    let want = m.mean_stored_states.map(|s| 1.0 - s / m.dense_states as f64);
    if m.saved_fraction != want {
        c.fail(
            "memory.saved_fraction",
            format!("{} but 1 - stored / dense states is {}", shown(&m.saved_fraction), shown(&want)),
        );
    }
    let want = m
        .measured_peak_bytes_checkpointed
        .zip(m.measured_peak_bytes_dense)
        .filter(|&(_, d)| d > 0.0)
        .map(|(ck, d)| 1.0 - ck / d);
    if m.measured_saved_fraction != want {
        c.fail(
            "memory.measured_saved_fraction",
            format!(
                "{} but 1 - measured checkpointed / dense peak is {}",
                shown(&m.measured_saved_fraction),
                shown(&want)
            ),
        );
    }
    let Some(cfg) = &r.config else { return };
    let Some(t) = cfg.resolved_seq_len() else { return };
    let state_bytes = (cfg.batch_size * cfg.hidden_size * 4) as f64;
    if m.dense_states != t + 1 {
        c.fail("memory.dense_states", format!("{} but T + 1 = {}", m.dense_states, t + 1));
    }
    if m.dense_bytes != ((t + 1) as f64 * state_bytes) as u64 {
        c.fail(
            "memory.dense_bytes",
            format!("{} but (T + 1) x batch x hidden x 4 = {}", m.dense_bytes, (t + 1) as f64 * state_bytes),
        );
    }
    let want = m.mean_stored_states.map(|s| s * state_bytes);
    if m.mean_stored_bytes != want {
        c.fail(
            "memory.mean_stored_bytes",
            format!("{} but stored states x batch x hidden x 4 is {}", shown(&m.mean_stored_bytes), shown(&want)),
        );
    }
}
