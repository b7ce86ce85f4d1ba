//! The mechanism study: the same bench on every track, model and interval policy,
//! the idea arms' probes pooled, and the mechanism conditions (a)–(d) of spec §5 judged over
//! the pooled probes, per model and per track, with the shared chart of gradient cosine
//! against reversal defect ([`chart`]).
//!
//! Non-engine: it reads bench reports, so the CLI (`rdbench study`) and the page's Study mode
//! (through the charts wasm) build the same `study_report.json` from the same function. The
//! conditions are judged by [`crate::mechanism::judge`], the bench's own rules.

use crate::config::{BenchConfig, Policy};
use crate::frontier::Frontier;
use crate::mechanism::{Condition, judge};
use crate::models::MODELS;
use crate::records::{Arm, Phase, ProbeRecord, RunRecord};
use crate::report::Report;
use crate::stats::mean;
use crate::stats::verdict::Verdict;
use crate::track::TRACKS;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Version of the `study_report.json` schema (2: tracks are a dimension).
pub const STUDY_VERSION: u32 = 2;

/// Every track of the registry: a study's default tracks.
pub fn all_tracks() -> Vec<String> {
    TRACKS.iter().map(|t| t.name.to_string()).collect()
}

/// The benches of a study of `base` on `tracks`: every track, then every model of the
/// registry, then every policy (tracks outer, policies inner), all else as in `base`. Each
/// must be a valid config (a limit may depend on the track: k_max <= T); the first that is
/// not is named.
pub fn bench_configs(base: &BenchConfig, tracks: &[String]) -> Result<Vec<BenchConfig>, String> {
    let cfgs: Vec<BenchConfig> = tracks
        .iter()
        .flat_map(|track| {
            MODELS.iter().flat_map(move |m| {
                Policy::ALL.iter().map(move |&policy| {
                    BenchConfig { track: track.clone(), model: m.name.to_string(), policy, ..base.clone() }
                        .for_new_bench()
                })
            })
        })
        .collect();
    for c in &cfgs {
        c.validate().map_err(|e| format!("the study's bench {}: {e}", bench_name(c)))?;
    }
    Ok(cfgs)
}

/// One bench of the study in the table: what the issue asks per model and policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyRow {
    /// Track.
    pub track: String,
    /// Model.
    pub model: String,
    /// Interval policy.
    pub policy: String,
    /// Probes of the idea's full runs.
    pub n_probes: usize,
    /// Mean one-step defect over those probes (finite ones).
    pub mean_defect: Option<f64>,
    /// Probes whose defect was not finite.
    pub null_defects: usize,
    /// Mean checkpoint count over those probes.
    pub mean_checkpoints: Option<f64>,
    /// Mean gradient cosine at the chosen k (finite ones).
    pub mean_grad_cos_chosen: Option<f64>,
    /// Mean gradient cosine at k_max (finite ones).
    pub mean_grad_cos_kmax: Option<f64>,
    /// The report's `memory.saved_fraction`: 1 - stored / dense states, as counted.
    pub memory_saved_counted: Option<f64>,
    /// The report's `memory.measured_saved_fraction`: 1 - mean measured peak of the
    /// checkpointed pass / that of dense BPTT on the probe batch (null where the report has no
    /// measured peaks, e.g. from the browser).
    pub memory_saved_measured: Option<f64>,
    /// Mean measured peak bytes of the checkpointed pass (chosen k) on the probe batch.
    pub mean_peak_bytes_checkpointed: Option<f64>,
    /// Mean measured peak bytes of dense BPTT on the probe batch.
    pub mean_peak_bytes_dense: Option<f64>,
    /// The arms on the track's metric.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The bench's own mechanism verdict (its probes alone).
    pub mechanism_confirmed: bool,
    /// Letters of the conditions that failed in the bench alone.
    pub mechanism_failed: Vec<String>,
    /// Each arm whose best lr is an end of the lr grid: "baseline 0.03 (largest)" (the
    /// bench report warns of it).
    #[serde(default)]
    pub lr_at_grid_edge: Vec<String>,
}

/// A bench's arms on its track's metric, as a study's or a scale study's row shows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The track's metric ("test MSE", "test accuracy").
    pub metric: String,
    /// Its direction, as the bench report spells it.
    pub metric_direction: String,
    /// Baseline's mean test metric (`baseline.full.mean`).
    pub baseline_metric: Option<f64>,
    /// Idea's mean test metric (`idea.mean`).
    pub idea_metric: Option<f64>,
    /// mean(idea) - mean(baseline) over the complete pairs.
    pub delta_mean: Option<f64>,
    /// Sign-flip p of the paired comparison.
    pub p_value: Option<f64>,
    /// The bench's verdict.
    pub verdict: Verdict,
}

impl Outcome {
    /// The outcome of the bench report `r` of `cfg`.
    pub fn of(r: &Report, cfg: &BenchConfig) -> Outcome {
        Outcome {
            metric: cfg.task().map(|t| t.test_metric()).unwrap_or_default(),
            metric_direction: r.metric_direction.clone(),
            baseline_metric: r.baseline.full.mean,
            idea_metric: r.idea.mean,
            delta_mean: r.comparison.delta_mean,
            p_value: r.comparison.p_value,
            verdict: r.comparison.verdict,
        }
    }
}

/// The conditions judged over a set of pooled probes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PooledMechanism {
    /// What was pooled: "all", a model name or a track name.
    pub scope: String,
    /// The (track, model, policy) benches pooled.
    pub benches: Vec<String>,
    /// Probes judged.
    pub n_probes: usize,
    /// Each condition under its report key (`a_both_regimes`, ..), judged by the bench's rules.
    pub conditions: IndexMap<String, Condition>,
    /// Letters of the failed conditions.
    pub failed: Vec<String>,
    /// All four hold.
    pub confirmed: bool,
    /// Mean checkpoints in each regime, in words.
    pub low_defect_checkpoint_relation: String,
}

/// One model's frontier on one track, pooled over its benches (both policies).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelFrontier {
    /// The track (studies before the second track had one: dynamics).
    #[serde(default = "crate::study::dynamics")]
    pub track: String,
    /// The model.
    pub model: String,
    /// Its frontier over the probes of every bench of it.
    pub frontier: Frontier,
}

/// The track of a study report written before `ModelFrontier::track`.
fn dynamics() -> String {
    "dynamics".into()
}

/// `study_report.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StudyReport {
    /// [`STUDY_VERSION`].
    pub study_version: u32,
    /// Defect threshold of every bench.
    pub tau: f64,
    /// The config every bench shares, with the track, model and policy of the first bench.
    pub config: BenchConfig,
    /// Tracks, in bench order.
    pub tracks: Vec<String>,
    /// Models, in bench order.
    pub models: Vec<String>,
    /// Policies, in bench order.
    pub policies: Vec<String>,
    /// One row per bench, in bench order.
    pub table: Vec<StudyRow>,
    /// Conditions over every bench's idea full-run probes.
    pub pooled: PooledMechanism,
    /// Conditions over each model's probes (every policy and track).
    pub per_model: Vec<PooledMechanism>,
    /// Conditions over each track's probes (every model and policy).
    pub per_track: Vec<PooledMechanism>,
    /// Each model's frontier, its benches' probes pooled; empty when the reports
    /// have none.
    #[serde(default)]
    pub frontier: Vec<ModelFrontier>,
    /// Each bench report, unchanged (parsed JSON, key order kept), in bench order.
    pub reports: Vec<Value>,
}

impl StudyReport {
    /// The embedded bench reports, typed.
    pub fn bench_reports(&self) -> Result<Vec<Report>, String> {
        self.reports
            .iter()
            .enumerate()
            .map(|(i, v)| serde_json::from_value(v.clone()).map_err(|e| format!("embedded report {}: {e}", i + 1)))
            .collect()
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a study report serialises")
    }
}

pub(crate) fn idea_full(r: &Report) -> Vec<RunRecord> {
    let runs = r.runs.as_deref().unwrap_or_default();
    runs.iter().filter(|r| r.arm == Arm::Idea && r.phase == Phase::Full).cloned().collect()
}

fn mean_of(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = v.flatten().filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| mean(&v))
}

fn row(r: &Report, cfg: &BenchConfig) -> StudyRow {
    let runs = idea_full(r);
    let probes: Vec<&ProbeRecord> = runs.iter().flat_map(|r| &r.probes).collect();
    let mem = r.memory.as_ref();
    // From the probes, as the report's `memory` does: reports older than its measured fields
    // carry the probes' peaks without them.
    let live: Vec<RunRecord> = runs.iter().filter(|r| !r.diverged).cloned().collect();
    let measured = crate::report::Memory::measured(&live);
    StudyRow {
        track: cfg.track.clone(),
        model: cfg.model.clone(),
        policy: cfg.policy.as_str().to_string(),
        n_probes: probes.len(),
        mean_defect: mean_of(probes.iter().map(|p| p.defect_mean)),
        null_defects: probes.iter().filter(|p| p.defect_mean.is_none()).count(),
        mean_checkpoints: mean_of(probes.iter().map(|p| Some(p.checkpoints as f64))),
        mean_grad_cos_chosen: mean_of(probes.iter().map(|p| p.grad_cos_chosen)),
        mean_grad_cos_kmax: mean_of(probes.iter().map(|p| p.grad_cos_kmax)),
        memory_saved_counted: mem.and_then(|m| m.saved_fraction),
        memory_saved_measured: measured.2,
        mean_peak_bytes_checkpointed: measured.0,
        mean_peak_bytes_dense: measured.1,
        outcome: Outcome::of(r, cfg),
        mechanism_confirmed: r.mechanism_signature.confirmed,
        mechanism_failed: r.mechanism.as_ref().map(|m| m.failed.clone()).unwrap_or_default(),
        lr_at_grid_edge: lr_edges(r, cfg),
    }
}

/// The arms whose best lr is an end of the grid, as the bench report's warnings find them.
fn lr_edges(r: &Report, cfg: &BenchConfig) -> Vec<String> {
    use crate::report::sweep::{GridEdge, lr_at_edge, sweep_means};
    let runs = r.runs.as_deref().unwrap_or_default();
    [(Arm::Baseline, r.baseline.best_cfg.lr), (Arm::Idea, r.idea.best_cfg.lr)]
        .into_iter()
        .filter_map(|(arm, best)| {
            let edge = lr_at_edge(&sweep_means(&cfg.lrs, runs, arm), best)?;
            let end = match edge {
                GridEdge::Smallest => "smallest",
                GridEdge::Largest => "largest",
            };
            Some(format!("{} {best} ({end})", arm.as_str()))
        })
        .collect()
}

fn pooled(scope: &str, benches: &[(&Report, &BenchConfig)], tau: f64) -> PooledMechanism {
    let runs: Vec<RunRecord> = benches.iter().flat_map(|(r, _)| idea_full(r)).collect();
    let (sig, detail) = judge(&runs, tau, &format!("pooled {scope}"));
    PooledMechanism {
        scope: scope.to_string(),
        benches: benches.iter().map(|(_, c)| bench_name(c)).collect(),
        n_probes: detail.n_probes,
        conditions: detail.conditions().map(|(c, v)| (c.key().to_string(), v.clone())).collect(),
        failed: detail.failed.clone(),
        confirmed: sig.confirmed,
        low_defect_checkpoint_relation: sig.low_defect_checkpoint_relation,
    }
}

/// A bench of a study in words: "mnist1d rnn_small chained".
pub fn bench_name(c: &BenchConfig) -> String {
    format!("{} {} {}", c.track, c.model, c.policy.as_str())
}

/// The config keys in which `b` differs from `a`, the keys `varies` blanks aside.
pub(crate) fn differing(a: &BenchConfig, b: &BenchConfig, varies: fn(BenchConfig) -> BenchConfig) -> Vec<String> {
    let same = |c: &BenchConfig| serde_json::to_value(varies(c.clone())).unwrap();
    let (va, vb) = (same(a), same(b));
    va.as_object().unwrap().keys().filter(|k| va[k.as_str()] != vb[k.as_str()]).cloned().collect()
}

/// Track, model and policy blanked: what a study's benches share.
fn study_shared(c: BenchConfig) -> BenchConfig {
    BenchConfig { track: String::new(), model: String::new(), policy: Policy::OneStep, ..c }
}

/// Bench report texts parsed (typed, and as JSON to embed unchanged); each must carry its
/// config and runs to join a `what` ("study").
pub(crate) fn parse_reports(texts: &[String], what: &str) -> Result<(Vec<Report>, Vec<Value>), String> {
    if texts.is_empty() {
        return Err(format!("a {what} needs at least one bench report"));
    }
    let mut reports = Vec::with_capacity(texts.len());
    let mut values = Vec::with_capacity(texts.len());
    for (i, t) in texts.iter().enumerate() {
        let t = crate::report::without_bom(t);
        let v: Value = serde_json::from_str(t).map_err(|e| format!("report {}: not JSON: {e}", i + 1))?;
        let r = Report::from_json(t).map_err(|e| format!("report {}: not a bench report: {e}", i + 1))?;
        if r.config.is_none() || r.runs.is_none() {
            return Err(format!("report {}: a seed-era report (no config or runs) cannot join a {what}", i + 1));
        }
        reports.push(r);
        values.push(v);
    }
    Ok((reports, values))
}

/// Build the study from bench report texts: every report must carry its config and runs,
/// share one config apart from track, model and policy, and no (track, model, policy) may
/// repeat. Each report is embedded unchanged.
pub fn build_study(texts: &[String]) -> Result<StudyReport, String> {
    let (reports, values) = parse_reports(texts, "study")?;
    let cfgs: Vec<&BenchConfig> = reports.iter().map(|r| r.config.as_ref().expect("checked")).collect();
    for (i, c) in cfgs.iter().enumerate().skip(1) {
        let diff = differing(cfgs[0], c, study_shared);
        if !diff.is_empty() {
            return Err(format!(
                "report {} ({}) differs from report 1 in {}: a study compares tracks, models and policies under \
                 one config",
                i + 1,
                bench_name(c),
                diff.join(", ")
            ));
        }
        if let Some(j) = cfgs[..i].iter().position(|d| bench_name(d) == bench_name(c)) {
            return Err(format!("reports {} and {} are both {}", j + 1, i + 1, bench_name(c)));
        }
    }
    let tau = cfgs[0].tau;
    let pairs: Vec<(&Report, &BenchConfig)> = reports.iter().zip(cfgs.iter().copied()).collect();
    let (mut tracks, mut models, mut policies): (Vec<String>, Vec<String>, Vec<String>) = Default::default();
    for c in &cfgs {
        if !tracks.contains(&c.track) {
            tracks.push(c.track.clone());
        }
        if !models.contains(&c.model) {
            models.push(c.model.clone());
        }
        if !policies.iter().any(|p| p == c.policy.as_str()) {
            policies.push(c.policy.as_str().to_string());
        }
    }
    let pool_by = |scopes: &[String], of: fn(&BenchConfig) -> &String| -> Vec<PooledMechanism> {
        scopes
            .iter()
            .map(|s| {
                let benches: Vec<(&Report, &BenchConfig)> = pairs.iter().copied().filter(|(_, c)| of(c) == s).collect();
                pooled(s, &benches, tau)
            })
            .collect()
    };
    let per_model = pool_by(&models, |c| &c.model);
    let per_track = pool_by(&tracks, |c| &c.track);
    // One frontier per track and model: the tracks' sequences differ in length (a study's
    // benches share the config's `seq_len`, so one track's benches share one T).
    let frontier = tracks
        .iter()
        .flat_map(|t| models.iter().map(move |m| (t, m)))
        .filter_map(|(t, m)| {
            let of = |c: &BenchConfig| &c.track == t && &c.model == m;
            let runs: Vec<RunRecord> = pairs.iter().filter(|(_, c)| of(c)).flat_map(|(r, _)| idea_full(r)).collect();
            let len = pairs.iter().find(|(_, c)| of(c)).and_then(|(_, c)| c.resolved_seq_len()).unwrap_or(0);
            crate::frontier::build(len, &runs).map(|frontier| ModelFrontier {
                track: t.clone(),
                model: m.clone(),
                frontier,
            })
        })
        .collect();
    Ok(StudyReport {
        study_version: STUDY_VERSION,
        tau,
        config: cfgs[0].clone(),
        table: pairs.iter().map(|(r, c)| row(r, c)).collect(),
        pooled: pooled("all", &pairs, tau),
        per_model,
        frontier,
        per_track,
        tracks,
        models,
        policies,
        reports: values,
    })
}
/// Validate study report text; on success return the parsed study.
pub fn validate_study_json(text: &str) -> Result<StudyReport, Vec<crate::report::Problem>> {
    crate::report::validate_merged(
        text,
        ("study_version", STUDY_VERSION, "a study report"),
        build_study,
        |s: &StudyReport| (s.study_version, &s.reports),
    )
}
