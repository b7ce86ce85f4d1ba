//! The scaling study: the same bench at several sequence lengths T, for each track and model,
//! projected along T into `scale_report.json`. Every figure of a row is read from one bench
//! report: the comparison, the `memory` block and the `frontier` block (the frontier's own
//! means, at the idea's operating interval); nothing is measured or averaged again here.
//!
//! Non-engine, like the study: the CLI (`rdbench scale`, and `--from-reports` over the merged
//! reports of a plan's `--seq-len` grid) and `validate` build it with the same function.

use crate::config::BenchConfig;
use crate::frontier::{PointMean, budget_of_interval, slots_for_budget};
use crate::models::MODELS;
use crate::records::{ScheduleAt, ScheduleKind};
use crate::report::Report;
use crate::stats::mean;
use crate::study::{Outcome, differing, idea_full, parse_reports};
use crate::track::TRACKS;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Version of the `scale_report.json` schema.
pub const SCALE_VERSION: u32 = 1;

/// The idea's mean chosen interval at one probe epoch, over its full runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KAt {
    /// The probe's epoch (`ProbeRecord::epoch`).
    pub epoch: usize,
    /// Probes at that epoch (one per idea full run that reached it).
    pub n: usize,
    /// Their mean chosen k.
    pub mean_k: f64,
}

/// Memory of one bench, from its report's `memory` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowMemory {
    /// States dense BPTT stores: T + 1.
    pub dense_states: usize,
    /// The idea's mean stored states per minibatch over training, as counted.
    pub idea_mean_stored_states: Option<f64>,
    /// Mean measured peak heap bytes of dense BPTT on the probe batch.
    pub measured_peak_bytes_dense: Option<f64>,
    /// The same for the idea's checkpointed pass at the chosen k.
    pub measured_peak_bytes_idea: Option<f64>,
}

/// One bench of the scale study: one track, model and length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleRow {
    /// Track.
    pub track: String,
    /// Model.
    pub model: String,
    /// Sequence length T (the config's `seq_len` resolved: 0 is the track's default).
    pub seq_len: usize,
    /// The arms on the track's metric: each arm's mean, the paired p, the verdict.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The idea's mean chosen k at each probe epoch, in epoch order.
    pub k_over_training: Vec<KAt>,
    /// Mean chosen k over every probe of the idea's full runs.
    pub mean_k: Option<f64>,
    /// The report's memory figures.
    pub memory: RowMemory,
    /// The idea's operating interval on the frontier: its most frequent chosen k over the
    /// probes where it saved memory (k > 1; ties: the larger k), else its most frequent k;
    /// null without frontier probes.
    pub operating_k: Option<usize>,
    /// Frontier probes of the idea at `operating_k`, and in all.
    pub operating_probes: usize,
    pub frontier_probes: usize,
    /// The frontier's points at the idea's memory, in this order where measured: dense
    /// BPTT, the idea at `operating_k`, revolve with the slots of that memory
    /// (ceil(T / k) states besides the working one) and fixed-interval checkpointing at that
    /// k: each the frontier block's mean (states held, cell evaluations forward and
    /// reversal, gradient cosine against dense, measured peak bytes, seconds per gradient).
    pub schedules: Vec<PointMean>,
    /// Where the idea stands over every frontier probe (`Dominated::standing`); null
    /// without a frontier.
    pub standing: Option<String>,
    /// Frontier probes where an exact schedule held no more states and took no more cell
    /// evaluations than the idea.
    pub n_dominated: usize,
}

impl ScaleRow {
    /// The row's point of `schedule`, if measured.
    pub fn point(&self, schedule: ScheduleKind) -> Option<&PointMean> {
        self.schedules.iter().find(|p| p.at.schedule == schedule)
    }
}

/// `scale_report.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleReport {
    /// [`SCALE_VERSION`].
    pub scale_version: u32,
    /// The config every bench shares, with the track, model and length of the first row.
    pub config: BenchConfig,
    /// Tracks, models and lengths, in row order.
    pub tracks: Vec<String>,
    pub models: Vec<String>,
    pub seq_lens: Vec<usize>,
    /// One row per bench: tracks in registry order, then models in registry order, then T
    /// ascending.
    pub table: Vec<ScaleRow>,
    /// Each bench report, unchanged, in row order.
    pub reports: Vec<Value>,
}

impl ScaleReport {
    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a scale report serialises")
    }

    /// The rows of one track and model, T ascending.
    pub fn line(&self, track: &str, model: &str) -> Vec<&ScaleRow> {
        self.table.iter().filter(|r| r.track == track && r.model == model).collect()
    }
}

/// A bench of a scale study in words: "adding rnn_small T = 1000".
pub fn scale_bench_name(c: &BenchConfig) -> String {
    format!("{} {} T = {}", c.track, c.model, c.resolved_seq_len().unwrap_or(c.seq_len))
}

/// The benches of a scale study: every track, then every length, then every model (so that
/// an interrupted study has both models at its shorter lengths), each made by `make(track,
/// length, model)`; two lengths that resolve to the same T on a track are refused, the
/// error led by `lens_name` (the CLI's flag, the page's field).
pub fn bench_grid(
    tracks: &[&str],
    lens: &[&str],
    models: &[&str],
    lens_name: &str,
    mut make: impl FnMut(&str, &str, &str) -> Result<BenchConfig, String>,
) -> Result<Vec<BenchConfig>, String> {
    let mut cfgs = Vec::new();
    for track in tracks {
        let mut seen: Vec<(usize, &str)> = Vec::new();
        for len in lens {
            for model in models {
                let cfg = make(track, len, model)?;
                let t = cfg.resolved_seq_len().unwrap_or(cfg.seq_len);
                match seen.iter().find(|(s, l)| *s == t && l != len) {
                    Some((_, other)) => {
                        return Err(format!(
                            "invalid value for {lens_name}: {other} and {len} are both T = {t} on {track} (0 is \
                             the track's default)"
                        ));
                    }
                    None => seen.push((t, len)),
                }
                cfgs.push(cfg);
            }
        }
    }
    Ok(cfgs)
}

/// Track, model, length and training size blanked: what a scale study's benches share. The
/// training size may follow T (a new adding bench gets more sequences above T = 200, so
/// that it learns); each embedded report keeps its own.
fn scale_shared(c: BenchConfig) -> BenchConfig {
    BenchConfig { track: String::new(), model: String::new(), seq_len: 0, train_size: 0, ..c }
}

/// Where a bench sorts in a scale report: track and model in registry order, then T.
fn order(c: &BenchConfig) -> (usize, usize, usize) {
    let track = TRACKS.iter().position(|t| t.name == c.track).unwrap_or(usize::MAX);
    let model = MODELS.iter().position(|m| m.name == c.model).unwrap_or(usize::MAX);
    (track, model, c.resolved_seq_len().unwrap_or(c.seq_len))
}

/// The idea's operating interval over the frontier's probe verdicts: (k, probes at it).
fn operating_k(probes: &[crate::frontier::ProbeVerdict], t: usize) -> Option<(usize, usize)> {
    let saving: Vec<usize> = probes.iter().filter(|p| p.stored_states < t + 1).map(|p| p.k).collect();
    let ks = if saving.is_empty() { probes.iter().map(|p| p.k).collect() } else { saving };
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for k in ks {
        match counts.iter_mut().find(|(c, _)| *c == k) {
            Some((_, n)) => *n += 1,
            None => counts.push((k, 1)),
        }
    }
    counts.into_iter().max_by_key(|&(k, n)| (n, k))
}

fn row(r: &Report, cfg: &BenchConfig) -> ScaleRow {
    let t = cfg.resolved_seq_len().unwrap_or(cfg.seq_len);
    let runs = idea_full(r);
    let mut epochs: Vec<(usize, Vec<f64>)> = Vec::new();
    for p in runs.iter().flat_map(|r| &r.probes) {
        match epochs.iter_mut().find(|(e, _)| *e == p.epoch) {
            Some((_, ks)) => ks.push(p.k as f64),
            None => epochs.push((p.epoch, vec![p.k as f64])),
        }
    }
    epochs.sort_by_key(|(e, _)| *e);
    let all_k: Vec<f64> = epochs.iter().flat_map(|(_, ks)| ks.iter().copied()).collect();
    let mem = r.memory.as_ref();
    let frontier = r.frontier.as_ref();
    let probes = frontier.map(|f| f.dominated.probes.as_slice()).unwrap_or_default();
    let operating = operating_k(probes, t);
    let schedules = match (frontier, operating) {
        (Some(f), Some((k, _))) => {
            let slots = slots_for_budget(budget_of_interval(t, k));
            let at = |schedule, k, slots| ScheduleAt { schedule, k, slots };
            [
                at(ScheduleKind::Dense, None, None),
                at(ScheduleKind::Idea, Some(k), None),
                at(ScheduleKind::Revolve, None, Some(slots)),
                at(ScheduleKind::FixedInterval, Some(k), None),
            ]
            .iter()
            .filter_map(|want| f.points.iter().find(|p| p.at == *want).cloned())
            .collect()
        }
        _ => Vec::new(),
    };
    ScaleRow {
        track: cfg.track.clone(),
        model: cfg.model.clone(),
        seq_len: t,
        outcome: Outcome::of(r, cfg),
        k_over_training: epochs
            .iter()
            .map(|(epoch, ks)| KAt { epoch: *epoch, n: ks.len(), mean_k: mean(ks) })
            .collect(),
        mean_k: (!all_k.is_empty()).then(|| mean(&all_k)),
        memory: RowMemory {
            dense_states: mem.map_or(t + 1, |m| m.dense_states),
            idea_mean_stored_states: mem.and_then(|m| m.mean_stored_states),
            measured_peak_bytes_dense: mem.and_then(|m| m.measured_peak_bytes_dense),
            measured_peak_bytes_idea: mem.and_then(|m| m.measured_peak_bytes_checkpointed),
        },
        operating_k: operating.map(|o| o.0),
        operating_probes: operating.map_or(0, |o| o.1),
        frontier_probes: probes.len(),
        schedules,
        standing: frontier.map(|f| f.dominated.standing()),
        n_dominated: frontier.map_or(0, |f| f.dominated.n_dominated),
    }
}

/// Build the scale study from bench report texts: every report must carry its config and
/// runs, share one config apart from track, model and sequence length, and no (track, model,
/// T) may repeat. The rows (and the embedded reports, unchanged) are put in the report's
/// order, so the same benches give the same report in any order.
pub fn build_scale(texts: &[String]) -> Result<ScaleReport, String> {
    let (reports, values) = parse_reports(texts, "scale study")?;
    let cfgs: Vec<&BenchConfig> = reports.iter().map(|r| r.config.as_ref().expect("checked")).collect();
    for (i, c) in cfgs.iter().enumerate() {
        if i > 0 {
            let diff = differing(cfgs[0], c, scale_shared);
            if !diff.is_empty() {
                return Err(format!(
                    "report {} ({}) differs from report 1 in {}: a scale study compares tracks, models and \
                     lengths under one config",
                    i + 1,
                    scale_bench_name(c),
                    diff.join(", ")
                ));
            }
        }
        if let Some(j) = cfgs[..i].iter().position(|d| order(d) == order(c)) {
            return Err(format!("reports {} and {} are both {}", j + 1, i + 1, scale_bench_name(c)));
        }
    }
    let mut at: Vec<usize> = (0..cfgs.len()).collect();
    at.sort_by_key(|&i| order(cfgs[i]));
    let (mut tracks, mut models, mut seq_lens): (Vec<String>, Vec<String>, Vec<usize>) = Default::default();
    for &i in &at {
        let c = cfgs[i];
        if !tracks.contains(&c.track) {
            tracks.push(c.track.clone());
        }
        if !models.contains(&c.model) {
            models.push(c.model.clone());
        }
        let t = order(c).2;
        if !seq_lens.contains(&t) {
            seq_lens.push(t);
        }
    }
    seq_lens.sort_unstable();
    Ok(ScaleReport {
        scale_version: SCALE_VERSION,
        config: cfgs[at[0]].clone(),
        tracks,
        models,
        seq_lens,
        table: at.iter().map(|&i| row(&reports[i], cfgs[i])).collect(),
        reports: at.iter().map(|&i| values[i].clone()).collect(),
    })
}
/// Validate scale report text; on success return the parsed scale study.
pub fn validate_scale_json(text: &str) -> Result<ScaleReport, Vec<crate::report::Problem>> {
    crate::report::validate_merged(
        text,
        ("scale_version", SCALE_VERSION, "a scale report"),
        build_scale,
        |s: &ScaleReport| (s.scale_version, &s.reports),
    )
}
