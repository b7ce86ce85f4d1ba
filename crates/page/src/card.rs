//! The verdict card: every number the page shows next to the charts, taken from the report.

use crate::format::{delta, num};
use rdbench_core::config::BenchConfig;
use rdbench_core::frontier::Frontier;
use rdbench_core::mechanism::MechanismCondition;
use rdbench_core::report::Report;
use rdbench_core::stats::Verdict;
use serde::Serialize;
use std::cmp::Ordering;

pub use rdbench_core::stats::permutation::{min_reachable_p, pairs_needed};

/// The card's reading of a verdict: its name (the page's style hook) and headline. The
/// report keeps the contract's three verdicts; a "no significant win" is read by which way
/// the idea's mean went (`lean`, in the metric's direction), so a loss is called a loss even
/// when it is not significant.
pub fn reading(verdict: Verdict, lean: Ordering) -> (&'static str, &'static str) {
    match (verdict, lean) {
        (Verdict::SignificantWin, _) => ("significant_win", "Significant win for the idea"),
        (Verdict::SignificantLoss, _) => ("significant_loss", "Significant loss for the idea"),
        (Verdict::NoSignificantWin, Ordering::Greater) => {
            ("better_not_significant", "Not significant: the idea was better on average")
        }
        (Verdict::NoSignificantWin, Ordering::Less) => {
            ("worse_not_significant", "Not significant: the idea was worse on average (a loss, not proven)")
        }
        (Verdict::NoSignificantWin, Ordering::Equal) => ("no_difference", "No difference measured"),
    }
}

/// One mechanism condition as shown.
#[derive(Debug, Serialize, PartialEq)]
pub struct CardCondition {
    /// "a".."d".
    pub letter: String,
    /// What must hold, in one line.
    pub describe: String,
    /// Whether it holds.
    pub holds: bool,
    /// Whether the probes could test it: (c) and (d) judge the probes of one regime, and a
    /// bench with none in it (every defect low, say) leaves that condition untested, not
    /// failed. It still keeps the mechanism from being confirmed.
    pub tested: bool,
    /// The measurement behind it.
    pub detail: String,
}

/// One arm against the trivial predictor (the report's `task.learnability.baseline` or
/// `.idea`).
#[derive(Debug, Serialize, PartialEq)]
pub struct CardLearned {
    /// Whether the arm's mean passes the rule; None when a diverged run left no mean.
    pub learned: Option<bool>,
    /// Full runs that pass.
    pub seeds_learned: usize,
    /// Full runs.
    pub n: usize,
    /// In words: "learned (4 of 4 seeds learned)", "did not learn (1 of 4 seeds learned)".
    pub text: String,
}

impl CardLearned {
    fn of(a: &rdbench_core::learnability::ArmLearned) -> CardLearned {
        let word = match a.learned {
            Some(true) => "learned",
            Some(false) => "did not learn",
            None => "no mean, a run diverged",
        };
        CardLearned {
            learned: a.learned,
            seeds_learned: a.seeds_learned,
            n: a.n,
            text: format!("{word} ({} of {} seeds learned)", a.seeds_learned, a.n),
        }
    }
}

/// What the card shows. Numbers are raw report values; the page formats them with the rules of
/// `format` (through the charts wasm), as the prose here does.
#[derive(Debug, Serialize, PartialEq)]
pub struct Card {
    /// The verdict (serialised as the report spells it).
    pub verdict: Verdict,
    /// comparison.system_worked.
    pub system_worked: bool,
    /// Sign-flip p.
    pub p_value: Option<f64>,
    /// How p was computed, in words.
    pub p_method: String,
    /// mean(idea) - mean(baseline).
    pub delta_mean: Option<f64>,
    /// Bootstrap 95% CI of delta_mean.
    pub delta_ci95: Option<[f64; 2]>,
    /// Pairs the idea won.
    pub idea_wins: usize,
    /// Pairs tested.
    pub n_pairs: usize,
    /// Baseline full-run mean metric.
    pub baseline_mean: Option<f64>,
    /// Idea full-run mean metric.
    pub idea_mean: Option<f64>,
    /// What the means, diffs and per-seed values are: "test MSE", "test accuracy".
    pub metric: String,
    /// Its direction as the report spells it ("lower is better", "higher is better").
    pub metric_direction: String,
    /// The track's secondary figure (name, baseline mean, idea mean): the test
    /// cross-entropy of a classification; None for a regression.
    pub secondary: Option<(String, Option<f64>, Option<f64>)>,
    /// A trivial predictor's test metric (what it predicts, its score): the adding
    /// problem's "always predicting 1"; None for a track without one.
    pub reference: Option<(String, f64)>,
    /// The metric an arm must reach to have learned (`task.learnability.threshold`); None for
    /// a report without learnability.
    pub learnability_threshold: Option<f64>,
    /// The learnability rule with its bar, in words ("learned when the test MSE is at most
    /// 0.1 x the trivial predictor's: 0.01231").
    pub learnability_rule: Option<String>,
    /// The baseline against the trivial predictor.
    pub baseline_learned: Option<CardLearned>,
    /// The idea against the trivial predictor.
    pub idea_learned: Option<CardLearned>,
    /// Whether the comparison says nothing about the metric at this protocol: the baseline's
    /// mean did not learn. Then `headline` says so and `explanation` opens with why;
    /// `test_headline` and `outcome` keep the significance test's reading.
    pub comparison_void: bool,
    /// Wilcoxon p.
    pub wilcoxon_p: Option<f64>,
    /// d_z.
    pub effect_size_dz: Option<f64>,
    /// Mechanism confirmed.
    pub mechanism_confirmed: bool,
    /// Conditions (empty for seed-era reports).
    pub conditions: Vec<CardCondition>,
    /// Final-probe mean defect.
    pub observed_mean_defect: Option<f64>,
    /// Final-probe mean checkpoints.
    pub observed_mean_checkpoints: Option<f64>,
    /// Share of hidden-state memory saved against dense BPTT.
    pub memory_saved_fraction: Option<f64>,
    /// Mean stored states per minibatch.
    pub mean_stored_states: Option<f64>,
    /// Dense states (T + 1).
    pub dense_states: Option<usize>,
    /// Mean bytes of hidden states stored per minibatch.
    pub mean_stored_bytes: Option<f64>,
    /// Bytes dense BPTT stores per minibatch.
    pub dense_bytes: Option<u64>,
    /// Where the idea stands against exact checkpointing at its memory, in one sentence
    /// (null without a frontier in the report).
    pub frontier: Option<String>,
    /// The share of probes at which an exact schedule dominated the idea.
    pub frontier_dominated: Option<f64>,
    /// Whole-bench wall time, seconds.
    pub wall_time_s: Option<f64>,
    /// Backend name.
    pub backend: Option<String>,
    /// Adapter.
    pub adapter: Option<String>,
    /// Runs taken over from a stopped bench (resume, Continue on CPU).
    pub reused_runs: usize,
    /// Runs per backend that trained them (more than one: a mixed report).
    pub run_backends: Vec<(String, usize)>,
    /// Best lr of each arm.
    pub best_lr_baseline: f64,
    /// Best lr of the idea arm.
    pub best_lr_idea: f64,
    /// The report's warnings.
    pub warnings: Vec<String>,
    /// Significance level (the report's; the contract's default for seed-era reports).
    pub alpha: f64,
    /// Whether alpha came from the report (false: the contract's default was assumed).
    pub alpha_from_report: bool,
    /// The decision rule, in words.
    pub rule: String,
    /// The smallest p the sign-flip test can give with `n_pairs` pairs.
    pub min_p: f64,
    /// The verdict as the card reads it (`reading`): "significant_win", "significant_loss",
    /// "better_not_significant", "worse_not_significant" or "no_difference".
    pub outcome: &'static str,
    /// The card's headline: the test's reading (`test_headline`), or, when the comparison is
    /// void, that the baseline did not learn.
    pub headline: String,
    /// The significance test's reading in words (`reading`), whatever the learnability.
    pub test_headline: String,
    /// One paragraph explaining the outcome in words.
    pub explanation: String,
}

/// The reading of `r`'s verdict (`reading`) and the sentence that explains it.
fn explain(r: &Report, alpha: f64, min_p: f64, ci: Option<[f64; 2]>) -> ((&'static str, &'static str), String) {
    let c = &r.comparison;
    let n = c.n_pairs;
    let dir = r.direction();
    let losses = r.comparison.per_seed_diffs.iter().flatten().filter(|d| dir.gain(**d) < 0.0).count();
    let wins = c.idea_wins;
    let lean = c.delta_mean.map_or(Ordering::Equal, |d| dir.gain(d).partial_cmp(&0.0).unwrap_or(Ordering::Equal));
    let read = reading(c.verdict, lean);
    let metric = r.test_metric();
    let (better, worse) = better_worse(dir);
    if n == 0 {
        return (read, "No seed has both runs finished, so nothing could be compared.".into());
    }
    let seeds = |k: usize| if k == n { format!("all {n} seeds") } else { format!("{k} of {n} seeds") };
    let p = num(c.p_value);
    let delta = delta(c.delta_mean);
    let not_significant = c.verdict == Verdict::NoSignificantWin && lean != Ordering::Equal;
    let mut text = match c.verdict {
        Verdict::SignificantWin => format!(
            "The idea had the {better} {metric} on {} (Δ = {delta}) and p = {p} < α = {}.",
            seeds(wins),
            num(alpha)
        ),
        Verdict::SignificantLoss => format!(
            "The idea had the {worse} {metric} on {} (Δ = {delta}) and p = {p} < α = {}: dense BPTT trains better.",
            seeds(losses),
            num(alpha)
        ),
        Verdict::NoSignificantWin if !not_significant => {
            format!("The mean difference over {n} pairs is {delta}: no direction to test.")
        }
        Verdict::NoSignificantWin => {
            let (how, k) = if lean == Ordering::Greater { ("won", wins) } else { ("lost", losses) };
            let why = if min_p >= alpha {
                format!(
                    "{n} pair{} cannot reach p < {}: the smallest p a sign-flip test over {n} pairs can give is {}.",
                    if n == 1 { "" } else { "s" },
                    num(alpha),
                    num(min_p)
                )
            } else {
                format!("p = {p} is not below α = {}: a difference this size could be chance.", num(alpha))
            };
            format!("The idea {how} on {} (Δ = {delta}), but {why}", seeds(k))
        }
    };
    if let (true, Some(need)) = (min_p >= alpha, pairs_needed(alpha)) {
        text.push_str(&format!(" Use at least {need} paired seeds to be able to reach α = {}.", num(alpha)));
    }
    if let (true, Some([lo, hi])) = (not_significant, ci)
        && (lo > 0.0 || hi < 0.0)
    {
        text.push_str(
            " The bootstrap 95% CI of Δ excludes 0, but it is descriptive (with few pairs it is too narrow); \
             the verdict follows the sign-flip p alone.",
        );
    }
    if r.statistics.as_ref().is_some_and(|s| !s.dropped_pairs.is_empty()) {
        text.push_str(" Pairs with a diverged run are left out (see the warnings).");
    }
    (read, text)
}

/// How the report's p was computed, in words ("exact, 256 sign assignments"; "method not
/// recorded" for a report that does not say, as seed-era reports do not).
pub fn p_method(r: &Report) -> String {
    let method = r.statistics.as_ref().and_then(|s| s.p_value_method.as_ref());
    method.map_or_else(|| "method not recorded".into(), |m| m.describe())
}

/// Where the idea stands against exact checkpointing at its memory, in one sentence.
fn frontier_sentence(f: &Frontier) -> String {
    let d = &f.dominated;
    let n = d.n_probes;
    if n == 0 {
        return "No probe measured the frontier.".to_string();
    }
    let standing = d.standing();
    if d.n_saving == 0 {
        return format!("The idea is {standing}: it kept every state (k = 1), as dense BPTT does.");
    }
    let at = if d.n_saving == n {
        "At every probe".to_string()
    } else {
        format!("Where it saved memory ({} of {n} probes)", d.n_saving)
    };
    format!(
        "The idea is {standing}. {at} it held {} of {} states and took {} cell evaluations (gradient cosine {}); \
         the cheapest exact schedule within that memory ({}) took {}, with the dense gradient.",
        num(d.mean_idea_states),
        f.t + 1,
        num(d.mean_idea_cell_evals),
        num(d.mean_idea_grad_cos),
        d.exact_schedule.map_or("none", |k| k.label()),
        num(d.mean_exact_cell_evals)
    )
}

/// The words for a better and a worse metric value: ("lower", "higher") for an error.
fn better_worse(dir: rdbench_core::track::Direction) -> (&'static str, &'static str) {
    match dir {
        rdbench_core::track::Direction::LowerIsBetter => ("lower", "higher"),
        rdbench_core::track::Direction::HigherIsBetter => ("higher", "lower"),
    }
}

/// The card of `r`.
pub fn card(r: &Report) -> Card {
    let st = r.statistics.as_ref();
    let p_method = p_method(r);
    let conditions = r
        .mechanism
        .as_ref()
        .map(|m| {
            m.conditions()
                .map(|(c, judged)| CardCondition {
                    letter: c.letter().into(),
                    describe: c.describe().into(),
                    holds: judged.holds,
                    tested: match c {
                        MechanismCondition::LowDefectCosine | MechanismCondition::HighDefectNeedsDense => {
                            judged.value.is_some() || judged.non_finite > 0
                        }
                        MechanismCondition::BothRegimes | MechanismCondition::SpearmanPositive => true,
                    },
                    detail: judged.detail.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    let env = r.environment.as_ref();
    let alpha = st.map(|s| s.alpha).or(r.config.as_ref().map(|c| c.alpha));
    let alpha_from_report = alpha.is_some();
    let alpha = alpha.unwrap_or(BenchConfig::default().alpha);
    let min_p = min_reachable_p(r.comparison.n_pairs);
    let ci = st.and_then(|s| s.delta_mean_ci95);
    let ((outcome, test_headline), mut explanation) = explain(r, alpha, min_p, ci);
    let learnability = r.task.as_ref().and_then(|t| t.learnability.as_ref());
    let comparison_void = learnability.is_some_and(|l| l.comparison_void);
    let mut headline = test_headline.to_string();
    if let Some(l) = learnability.filter(|l| l.comparison_void) {
        headline = "Comparison void at this protocol: the baseline did not learn".into();
        let metric = r.test_metric();
        let trivial = r.task.as_ref().and_then(|t| t.reference.as_ref()).map_or_else(String::new, |f| {
            format!(" (the trivial predictor, {}, scores {})", f.name, num(Some(f.value)))
        });
        explanation = format!(
            "The baseline's mean {metric} {} did not reach {}{trivial}: {} of {} baseline seeds learned. \
             The baseline did not learn the task at this protocol, so both arms may sit near the trivial \
             predictor and their difference says nothing about the {metric}; the significance test is shown \
             for the record only. {explanation}",
            num(r.baseline.full.mean),
            num(Some(l.threshold)),
            l.baseline.seeds_learned,
            l.baseline.n
        );
    }
    let (better, worse) = better_worse(r.direction());
    let rule = format!(
        "significant when the two-sided sign-flip p < α = {}; a win if the idea's mean {} is {better}, \
         a loss if it is {worse}",
        num(alpha),
        r.test_metric()
    );
    Card {
        verdict: r.comparison.verdict,
        system_worked: r.comparison.system_worked,
        p_value: r.comparison.p_value,
        p_method,
        delta_mean: r.comparison.delta_mean,
        delta_ci95: st.and_then(|s| s.delta_mean_ci95),
        idea_wins: r.comparison.idea_wins,
        n_pairs: r.comparison.n_pairs,
        baseline_mean: r.baseline.full.mean,
        idea_mean: r.idea.mean,
        metric: r.test_metric(),
        metric_direction: r.direction().as_str().into(),
        secondary: r
            .task
            .as_ref()
            .and_then(|t| t.secondary.as_ref())
            .map(|s| (s.name.clone(), s.baseline_mean, s.idea_mean)),
        reference: r.task.as_ref().and_then(|t| t.reference.as_ref()).map(|f| (f.name.clone(), f.value)),
        learnability_threshold: learnability.map(|l| l.threshold),
        learnability_rule: learnability.map(|l| format!("{}: {}", l.rule, num(Some(l.threshold)))),
        baseline_learned: learnability.map(|l| CardLearned::of(&l.baseline)),
        idea_learned: learnability.map(|l| CardLearned::of(&l.idea)),
        comparison_void,
        wilcoxon_p: st.and_then(|s| s.wilcoxon.as_ref()).and_then(|w| w.p_value),
        effect_size_dz: st.and_then(|s| s.effect_size_dz),
        mechanism_confirmed: r.mechanism_signature.confirmed,
        conditions,
        observed_mean_defect: r.mechanism_signature.observed_mean_defect,
        observed_mean_checkpoints: r.mechanism_signature.observed_mean_checkpoints,
        memory_saved_fraction: r.memory.as_ref().and_then(|m| m.saved_fraction),
        mean_stored_states: r.memory.as_ref().and_then(|m| m.mean_stored_states),
        dense_states: r.memory.as_ref().map(|m| m.dense_states),
        mean_stored_bytes: r.memory.as_ref().and_then(|m| m.mean_stored_bytes),
        dense_bytes: r.memory.as_ref().map(|m| m.dense_bytes),
        frontier: r.frontier.as_ref().map(frontier_sentence),
        frontier_dominated: r.frontier.as_ref().and_then(|f| f.dominated.fraction),
        wall_time_s: env.map(|e| e.wall_time_s),
        backend: env.map(|e| e.backend.clone()),
        adapter: env.map(|e| e.adapter.clone()),
        reused_runs: env.map_or(0, |e| e.reused_runs),
        run_backends: env.map(|e| e.run_backends.iter().map(|(k, v)| (k.clone(), *v)).collect()).unwrap_or_default(),
        best_lr_baseline: r.baseline.best_cfg.lr,
        best_lr_idea: r.idea.best_cfg.lr,
        warnings: r.warnings.clone().unwrap_or_default(),
        alpha,
        alpha_from_report,
        rule,
        min_p,
        outcome,
        headline,
        test_headline: test_headline.into(),
        explanation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdbench_core::mechanism::judge;

    fn seed_report() -> Report {
        Report::from_json(include_str!("../../../www/examples/seed_bench_report.json")).unwrap()
    }

    /// Four pairs, all lost, CI excluding 0: the card says why it is not significant.
    #[test]
    fn four_lost_pairs_are_explained() {
        let mut r = seed_report();
        r.comparison.n_pairs = 4;
        r.comparison.idea_wins = 0;
        r.comparison.per_seed_diffs = vec![Some(0.01), Some(0.02), Some(0.03), Some(0.02)];
        r.comparison.delta_mean = Some(0.02);
        r.comparison.p_value = Some(0.125);
        r.comparison.verdict = Verdict::NoSignificantWin;
        let c = card(&r);
        assert_eq!(c.outcome, "worse_not_significant");
        assert!(c.headline.contains("worse"), "{}", c.headline);
        assert_eq!(c.min_p, 0.125);
        assert!(!c.alpha_from_report, "the seed report has no statistics: the default alpha is assumed");
        assert_eq!(c.alpha, 0.05);
        for want in ["lost on all 4 seeds", "4 pairs cannot reach p < 0.05", "0.125", "at least 6 paired seeds"] {
            assert!(c.explanation.contains(want), "{want:?} not in {:?}", c.explanation);
        }
        // The seed report's own outcome: better on 6 of 8, p = 0.1697.
        let c = card(&seed_report());
        assert_eq!(c.outcome, "better_not_significant");
        assert!(
            c.explanation.contains("won on 6 of 8 seeds") && c.explanation.contains("p = 0.1697"),
            "{}",
            c.explanation
        );
        assert!(!c.explanation.contains("cannot reach"), "8 pairs can reach 0.05");
    }

    #[test]
    fn significant_outcomes_are_named() {
        let mut r = seed_report();
        r.comparison.verdict = Verdict::SignificantLoss;
        r.comparison.delta_mean = Some(0.3);
        assert_eq!(card(&r).outcome, "significant_loss");
        assert!(card(&r).headline.contains("loss"));
        r.comparison.verdict = Verdict::SignificantWin;
        r.comparison.delta_mean = Some(-0.3);
        assert_eq!(card(&r).outcome, "significant_win");
    }

    #[test]
    fn conditions_come_from_the_mechanism_table() {
        let mut r = seed_report();
        // No probes: every condition fails, in the table's order.
        r.mechanism = Some(judge(&[], 0.08, "one_step").1);
        let c = card(&r);
        let letters: Vec<&str> = c.conditions.iter().map(|c| c.letter.as_str()).collect();
        assert_eq!(letters, ["a", "b", "c", "d"]);
        assert!(c.conditions.iter().all(|c| !c.holds));
        // (a) and (b) fail; (c) and (d) had no probe of their regime to judge.
        let tested: Vec<bool> = c.conditions.iter().map(|c| c.tested).collect();
        assert_eq!(tested, [true, true, false, false]);
        assert_eq!(c.conditions[2].describe, MechanismCondition::LowDefectCosine.describe());
        assert_eq!(c.verdict, Verdict::NoSignificantWin);
        assert_eq!(serde_json::to_value(&c).unwrap()["verdict"], "no significant win");
    }

    /// On an accuracy track a higher idea mean is the better one: the outcome, the words and
    /// the rule follow the report's direction, and the secondary figure is carried.
    #[test]
    fn an_accuracy_track_reads_higher_as_better() {
        use rdbench_core::report::{SecondaryFigure, TaskInfo};
        let mut r = seed_report();
        r.metric_direction = "higher is better".into();
        r.task = Some(TaskInfo {
            metric: "test accuracy".into(),
            loss: "cross_entropy".into(),
            readout: "last_step".into(),
            classes: Some(10),
            seq_len: 40,
            train_sequences: 1000,
            validation_sequences: 200,
            test_sequences: 1000,
            secondary: Some(SecondaryFigure {
                name: "test cross-entropy".into(),
                baseline_mean: Some(1.2),
                idea_mean: Some(1.1),
                baseline_per_seed: vec![],
                idea_per_seed: vec![],
            }),
            reference: None,
            learnability: None,
        });
        r.comparison.per_seed_diffs = vec![Some(0.02), Some(0.01), Some(0.03), Some(0.02)];
        r.comparison.n_pairs = 4;
        r.comparison.idea_wins = 4;
        r.comparison.delta_mean = Some(0.02);
        r.comparison.p_value = Some(0.125);
        r.comparison.verdict = Verdict::NoSignificantWin;
        let c = card(&r);
        assert_eq!(c.outcome, "better_not_significant");
        assert!(c.explanation.contains("won on all 4 seeds"), "{}", c.explanation);
        assert_eq!((c.metric.as_str(), c.metric_direction.as_str()), ("test accuracy", "higher is better"));
        assert!(c.rule.contains("mean test accuracy is higher, a loss if it is lower"), "{}", c.rule);
        assert_eq!(c.secondary, Some(("test cross-entropy".into(), Some(1.2), Some(1.1))));
        r.comparison.p_value = Some(0.01);
        r.comparison.verdict = Verdict::SignificantWin;
        assert!(card(&r).explanation.contains("The idea had the higher test accuracy"), "{}", card(&r).explanation);
        // A negative Δ in accuracy is a loss.
        r.comparison.delta_mean = Some(-0.02);
        r.comparison.per_seed_diffs = vec![Some(-0.02); 4];
        r.comparison.verdict = Verdict::NoSignificantWin;
        r.comparison.p_value = Some(0.125);
        assert_eq!(card(&r).outcome, "worse_not_significant");
        assert!(card(&r).explanation.contains("lost on all 4 seeds"), "{}", card(&r).explanation);
    }

    /// The seed report (a pendulum bench, baseline mean 0.002776, idea mean 0.001765) with a
    /// trivial predictor scoring `trivial` and the learnability judged against it.
    fn with_trivial(trivial: f64) -> Report {
        use rdbench_core::learnability::Learnability;
        use rdbench_core::report::{ReferenceFigure, TaskInfo};
        use rdbench_core::track::Direction;
        let mut r = seed_report();
        let learnability = Learnability::judge(
            Direction::LowerIsBetter,
            "test MSE",
            trivial,
            (r.baseline.full.mean, &r.baseline.full.per_seed),
            (r.idea.mean, &r.idea.per_seed),
        );
        r.task = Some(TaskInfo {
            metric: "test MSE".into(),
            loss: "mse".into(),
            readout: "every_step".into(),
            classes: None,
            seq_len: 80,
            train_sequences: 400,
            validation_sequences: 80,
            test_sequences: 100,
            secondary: None,
            reference: Some(ReferenceFigure {
                name: "always predicting the training targets' mean state".into(),
                metric: "test MSE".into(),
                value: trivial,
            }),
            learnability: Some(learnability),
        });
        r
    }

    /// A baseline that learned (every seed far below a tenth of the pendulum's 0.1231): the
    /// card shows both arms learned and keeps the test's reading as its headline.
    #[test]
    fn a_learned_baseline_keeps_the_tests_verdict() {
        let c = card(&with_trivial(0.1231));
        assert!(!c.comparison_void);
        assert_eq!(c.outcome, "better_not_significant");
        assert_eq!(c.headline, c.test_headline);
        assert_eq!(c.headline, "Not significant: the idea was better on average");
        assert_eq!(c.learnability_threshold, Some(0.1 * 0.1231));
        assert_eq!(
            c.learnability_rule.as_deref(),
            Some("learned when the test MSE is at most 0.1 x the trivial predictor's: 0.01231")
        );
        let arm = |c: &Option<CardLearned>| c.as_ref().map(|a| (a.learned, a.seeds_learned, a.n, a.text.clone()));
        assert_eq!(arm(&c.baseline_learned), Some((Some(true), 8, 8, "learned (8 of 8 seeds learned)".into())));
        assert_eq!(arm(&c.idea_learned), Some((Some(true), 8, 8, "learned (8 of 8 seeds learned)".into())));
        assert!(c.explanation.starts_with("The idea won on 6 of 8 seeds"), "{}", c.explanation);
        // The card's JSON carries each arm as the report spells it, and the void flag.
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["baseline_learned"]["seeds_learned"], 8);
        assert_eq!(v["comparison_void"], false);
        // A report without learnability (the seed era) shows none.
        let c = card(&seed_report());
        assert_eq!((c.baseline_learned, c.idea_learned, c.learnability_rule), (None, None, None));
        assert!(!c.comparison_void);
    }

    /// A baseline whose mean misses the bar (0.002776 against a tenth of 0.02): the headline
    /// says the comparison is void, the explanation says why, and the test's reading stays
    /// as secondary text (`test_headline`, `outcome`, `verdict`).
    #[test]
    fn a_baseline_that_did_not_learn_voids_the_comparison() {
        let c = card(&with_trivial(0.02));
        assert!(c.comparison_void);
        assert_eq!(c.headline, "Comparison void at this protocol: the baseline did not learn");
        assert_eq!(c.test_headline, "Not significant: the idea was better on average");
        assert_eq!(c.outcome, "better_not_significant");
        assert_eq!(c.verdict, Verdict::NoSignificantWin);
        let arm = |c: &Option<CardLearned>| c.as_ref().map(|a| (a.learned, a.seeds_learned, a.n, a.text.clone()));
        assert_eq!(arm(&c.baseline_learned), Some((Some(false), 3, 8, "did not learn (3 of 8 seeds learned)".into())));
        assert_eq!(arm(&c.idea_learned), Some((Some(true), 5, 8, "learned (5 of 8 seeds learned)".into())));
        for want in [
            "The baseline's mean test MSE 0.002776 did not reach 0.002",
            "scores 0.02): 3 of 8 baseline seeds learned",
            "says nothing about the test MSE",
            // The test's own explanation follows.
            "The idea won on 6 of 8 seeds",
        ] {
            assert!(c.explanation.contains(want), "{want:?} not in {:?}", c.explanation);
        }
    }
}
