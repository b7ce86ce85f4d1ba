//! A plan: every run of a bench or a study, listed so that a scheduler (Slurm, Kubernetes,
//! `xargs -P`) can run them on many machines. The protocol has two stages: the
//! sweep runs first; the full runs need each arm's best lr, so they are planned from the
//! merged sweep (`Plan::next`). A run is found again by its record's key (arm, phase, lr,
//! seed and run hash), and the merge checks that every planned run is there exactly once.

use crate::config::BenchConfig;
use crate::records::{ARMS, Arm, Phase, RunRecord, RunSpec, full_runs, slices, sweep_runs};
use crate::report::sweep::{best_lr, sweep_means};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Version of the plan file's schema.
pub const PLAN_VERSION: u32 = 1;

/// What a plan's merge builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanKind {
    /// One bench report (`rdbench run`).
    Bench,
    /// A study report of its benches (`rdbench study`).
    Study,
}

/// One run to do, with what identifies its computation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedRun {
    /// Index of its bench in `Plan::benches`.
    pub bench: usize,
    /// Its bench's track, model and policy (also in the bench's config; here for reading).
    pub track: String,
    pub model: String,
    pub policy: String,
    /// Arm, phase, lr and seed.
    #[serde(flatten)]
    pub spec: RunSpec,
    /// Its bench's run hash.
    pub run_hash: String,
    /// Its record file's name, less `.json` ([`record_key`]).
    pub key: String,
}

/// The runs of a bench or study, up to the current stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub plan_version: u32,
    pub kind: PlanKind,
    /// The `--backend` the runs train on (records name its resolved backend).
    pub backend: String,
    /// The stage `rdbench work` does: `sweep`, then `full`.
    pub stage: Phase,
    /// The knobs a grid varies (`rdbench plan --tau 0.02,0.08`); empty without a grid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grid: Vec<String>,
    /// Every bench's config: one bench, or a study's (tracks × models × policies), per
    /// point of the grid (grid outer).
    pub benches: Vec<BenchConfig>,
    /// Per bench, the best lr of each arm (baseline, idea) chosen by the sweep's merge;
    /// empty in the sweep stage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub best_lrs: Vec<[f64; 2]>,
    /// Every run the plan has so far: the sweep's, then (stage `full`) the full runs.
    pub runs: Vec<PlannedRun>,
}

/// A record file's name, less `.json`: the run hash, arm, phase, lr and seed, which together
/// name one computation on one backend.
pub fn record_key(spec: &RunSpec, run_hash: &str) -> String {
    format!("{run_hash}-{}-{}-lr{}-seed{}", spec.arm.as_str(), spec.phase.as_str(), spec.lr, spec.seed)
}

fn planned(bench: usize, cfg: &BenchConfig, specs: Vec<RunSpec>) -> impl Iterator<Item = PlannedRun> + '_ {
    let hash = cfg.run_hash();
    specs.into_iter().map(move |spec| PlannedRun {
        bench,
        track: cfg.track.clone(),
        model: cfg.model.clone(),
        policy: cfg.policy.as_str().to_string(),
        key: record_key(&spec, &hash),
        run_hash: hash.clone(),
        spec,
    })
}

/// The sweep runs of every bench, bench by bench, each arm's in the protocol's order.
fn sweep_stage(benches: &[BenchConfig]) -> impl Iterator<Item = PlannedRun> + '_ {
    benches.iter().enumerate().flat_map(|(b, cfg)| {
        ARMS.into_iter().flat_map(move |arm| planned(b, cfg, sweep_runs(arm, &cfg.lrs, cfg.n_sweep_seeds)))
    })
}

/// The full runs of every bench at its arms' best lrs (none without best lrs).
fn full_stage<'a>(benches: &'a [BenchConfig], best: &'a [[f64; 2]]) -> impl Iterator<Item = PlannedRun> + 'a {
    benches.iter().zip(best).enumerate().flat_map(|(b, (cfg, lrs))| {
        ARMS.into_iter().zip(lrs).flat_map(move |(arm, &lr)| planned(b, cfg, full_runs(arm, lr, cfg.n_seeds)))
    })
}

/// A plan file's version, read before the rest (every other key is skipped unread).
#[derive(Deserialize)]
struct Version {
    plan_version: Option<serde_json::Value>,
}

/// Check a plan's benches: at least one, one without a grid for a bench plan, each valid.
fn check_benches(kind: PlanKind, benches: &[BenchConfig], grid: &[String]) -> Result<(), String> {
    if benches.is_empty() {
        return Err("a plan needs at least one bench".into());
    }
    if kind == PlanKind::Bench && grid.is_empty() && benches.len() != 1 {
        return Err(format!("a bench plan without a grid has one bench, not {}", benches.len()));
    }
    for (i, c) in benches.iter().enumerate() {
        c.validate().map_err(|e| format!("bench {}: {e}", i + 1))?;
    }
    Ok(())
}

/// What the merge found wrong: every run missing, every record not of the plan, every run
/// recorded twice. Nothing is built from a merge with any.
#[derive(Debug, Default, PartialEq)]
pub struct MergeProblems {
    /// Keys of planned runs with no record.
    pub missing: Vec<String>,
    /// Records that no stage of this plan could plan: `(where, why)`.
    pub foreign: Vec<(String, String)>,
    /// Runs recorded more than once: `(key, the places)`.
    pub repeated: Vec<(String, Vec<String>)>,
    /// Records another build made, set aside (its numbers may differ): `(where, its build)`.
    pub other_build: Vec<(String, String)>,
    /// The merging build, which the set-aside records are not.
    pub build: String,
}

impl std::fmt::Display for MergeProblems {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut lines = Vec::new();
        if !self.missing.is_empty() {
            lines.push(format!("{} planned run(s) have no record:", self.missing.len()));
            lines.extend(self.missing.iter().map(|k| format!("  missing {k}")));
        }
        if !self.foreign.is_empty() {
            lines.push(format!("{} record(s) are not runs of this plan:", self.foreign.len()));
            lines.extend(self.foreign.iter().map(|(w, why)| format!("  {w}: {why}")));
        }
        for (k, places) in &self.repeated {
            lines.push(format!("{k} is recorded {} times: {}", places.len(), places.join(", ")));
        }
        if !self.other_build.is_empty() {
            lines.push(format!(
                "{} record(s) were made by another build, set aside (this is build {}; work with this build does \
                 them again):",
                self.other_build.len(),
                self.build
            ));
            lines.extend(
                self.other_build
                    .iter()
                    .map(|(w, b)| format!("  {w}: build {}", if b.is_empty() { "none recorded" } else { b.as_str() })),
            );
        }
        write!(f, "{}", lines.join("\n"))
    }
}

impl Plan {
    /// The sweep stage of `benches` on `backend` (each config valid), varying the knobs
    /// `grid` between its points.
    pub fn new(kind: PlanKind, backend: &str, benches: Vec<BenchConfig>, grid: Vec<String>) -> Result<Plan, String> {
        check_benches(kind, &benches, &grid)?;
        let runs = sweep_stage(&benches).collect();
        Ok(Plan {
            plan_version: PLAN_VERSION,
            kind,
            backend: backend.into(),
            stage: Phase::Sweep,
            grid,
            benches,
            best_lrs: Vec::new(),
            runs,
        })
    }

    /// Read a plan file's text, checking that it is what this version plans: its version,
    /// valid configs, and runs equal to those its benches (and best lrs) give.
    pub fn from_json(text: &str) -> Result<Plan, String> {
        let text = crate::report::without_bom(text);
        let version = match serde_json::from_str::<Version>(text) {
            Ok(v) => v.plan_version,
            Err(e) if e.is_syntax() || e.is_eof() => return Err(format!("not JSON: {e}")),
            Err(_) => None,
        };
        match version.as_ref().and_then(|v| v.as_u64()) {
            Some(n) if n == PLAN_VERSION as u64 => {}
            Some(n) => return Err(format!("plan_version {n}: this rdbench reads version {PLAN_VERSION}")),
            None => return Err("no plan_version: not a plan (made by `rdbench plan`)".into()),
        }
        let plan: Plan = serde_json::from_str(text).map_err(|e| format!("not a plan: {e}"))?;
        check_benches(plan.kind, &plan.benches, &plan.grid)?;
        if plan.stage == Phase::Full {
            if plan.best_lrs.len() != plan.benches.len() {
                return Err(format!("{} benches but best lrs for {}", plan.benches.len(), plan.best_lrs.len()));
            }
            for (i, (cfg, best)) in plan.benches.iter().zip(&plan.best_lrs).enumerate() {
                if let Some(lr) = best.iter().find(|lr| !cfg.lrs.contains(lr)) {
                    return Err(format!("bench {}: best lr {lr} is not in its lr grid", i + 1));
                }
            }
        }
        // The runs its benches plan, compared one by one as they are made (never all held).
        let best: &[[f64; 2]] = if plan.stage == Phase::Full { &plan.best_lrs } else { &[] };
        let mut expect = sweep_stage(&plan.benches).chain(full_stage(&plan.benches, best));
        let listed = plan.runs.len();
        for (i, got) in plan.runs.iter().enumerate() {
            match expect.next() {
                Some(want) if *got == want => {}
                Some(want) => {
                    return Err(format!("run {} is {}, but its bench plans {} there", i + 1, got.key, want.key));
                }
                None => return Err(format!("{listed} runs listed, but its benches plan {i}")),
            }
        }
        match expect.count() {
            0 => Ok(plan),
            more => Err(format!("{listed} runs listed, but its benches plan {}", listed + more)),
        }
    }

    /// The plan file's text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a plan serialises")
    }

    /// The points of the grid, each with its label (`tau0.02-k_max16`; empty without a
    /// grid) and its benches: a bench plan's point is one bench, a study's the consecutive
    /// benches that differ in track, model and policy only.
    pub fn points(&self) -> Vec<(String, Vec<usize>)> {
        let label = |cfg: &BenchConfig| {
            let v = serde_json::to_value(cfg).expect("a config serialises");
            let text = |k: &str| v[k].as_str().map_or_else(|| v[k].to_string(), String::from);
            self.grid.iter().map(|k| format!("{k}{}", text(k))).collect::<Vec<_>>().join("-")
        };
        let mut out: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, cfg) in self.benches.iter().enumerate() {
            let point = label(cfg);
            match out.last_mut() {
                Some((last, benches)) if self.kind == PlanKind::Study && *last == point => benches.push(i),
                _ => out.push((point, vec![i])),
            }
        }
        out
    }

    /// The runs `rdbench work` does in this stage, each once: grid points that differ only
    /// in knobs that change no run (`alpha`, say) share their runs.
    pub fn stage_runs(&self) -> Vec<&PlannedRun> {
        let mut seen: HashSet<&str> = HashSet::with_capacity(self.runs.len());
        self.runs.iter().filter(|r| r.spec.phase == self.stage && seen.insert(r.key.as_str())).collect()
    }

    /// Task `index` of `of`'s share of this stage's runs: contiguous, as even as possible,
    /// so a task's runs are mostly of one bench, arm and phase and train as populations.
    /// Empty when there are fewer runs than tasks.
    pub fn share(&self, index: usize, of: usize) -> Result<Vec<&PlannedRun>, String> {
        if of == 0 {
            return Err("a stage needs at least one task".into());
        }
        if index >= of {
            return Err(format!("task {index} of {of}: the index is 0 to {}", of - 1));
        }
        let runs = self.stage_runs();
        let parts = slices(runs.len(), of);
        Ok(parts.get(index).map(|r| runs[r.clone()].to_vec()).unwrap_or_default())
    }

    /// Match `records` (`(where it came from, record)`) to the plan's runs on `backend` (the
    /// resolved name) made by `build`. Returns each bench's records in plan order — the
    /// protocol's order: sweep then full, baseline before idea — or every problem found. A
    /// record of a run a later stage may plan (a full run at any lr of the grid) is left
    /// aside, not foreign; a record of another build is set aside and named.
    pub fn check(
        &self,
        records: Vec<(String, RunRecord)>,
        backend: &str,
        build: &str,
    ) -> Result<Vec<Vec<RunRecord>>, MergeProblems> {
        let mut found: Vec<Vec<(String, RunRecord)>> = vec![Vec::new(); self.runs.len()];
        let mut problems = MergeProblems::default();
        // Each planned run by its key (grid points that share runs share keys): a record is
        // found by its own key, so the check is linear in the runs and the records.
        let mut by_key: HashMap<&str, Vec<usize>> = HashMap::with_capacity(self.runs.len());
        for (i, r) in self.runs.iter().enumerate() {
            by_key.entry(r.key.as_str()).or_default().push(i);
        }
        let hashes = self.benches_by_hash();
        for (place, rec) in records {
            if rec.build != build {
                problems.other_build.push((place, rec.build));
                continue;
            }
            let spec = rec.spec();
            let at: Vec<usize> = by_key
                .get(record_key(&spec, &rec.run_hash).as_str())
                .into_iter()
                .flatten()
                .copied()
                .filter(|&i| rec.is_run(&self.runs[i].spec, backend, &self.runs[i].run_hash))
                .collect();
            if !at.is_empty() {
                for i in at {
                    found[i].push((place.clone(), rec.clone()));
                }
            } else if !self.could_plan(&hashes, &spec, &rec.run_hash) || rec.backend != backend {
                problems.foreign.push((place, self.why_foreign(&hashes, &rec, backend)));
            }
        }
        // A key shared by grid points is named once.
        let mut named: HashSet<&str> = HashSet::new();
        for (run, places) in self.runs.iter().zip(&found) {
            if places.len() == 1 || !named.insert(run.key.as_str()) {
                continue;
            }
            match places.len() {
                0 => problems.missing.push(run.key.clone()),
                _ => problems.repeated.push((run.key.clone(), places.iter().map(|(p, _)| p.clone()).collect())),
            }
        }
        if problems != MergeProblems::default() {
            problems.build = build.to_string();
            return Err(problems);
        }
        let mut out: Vec<Vec<RunRecord>> = vec![Vec::new(); self.benches.len()];
        for (run, mut recs) in self.runs.iter().zip(found) {
            out[run.bench].push(recs.remove(0).1);
        }
        Ok(out)
    }

    /// The benches of each run hash.
    fn benches_by_hash(&self) -> HashMap<String, Vec<usize>> {
        let mut out: HashMap<String, Vec<usize>> = HashMap::new();
        for (b, cfg) in self.benches.iter().enumerate() {
            out.entry(cfg.run_hash()).or_default().push(b);
        }
        out
    }

    /// Whether some stage of this plan could plan a run of `spec` with `run_hash`
    /// (`hashes`: [`Plan::benches_by_hash`]).
    fn could_plan(&self, hashes: &HashMap<String, Vec<usize>>, spec: &RunSpec, run_hash: &str) -> bool {
        hashes.get(run_hash).into_iter().flatten().map(|&b| &self.benches[b]).any(|cfg| {
            cfg.lrs.contains(&spec.lr)
                && match spec.phase {
                    Phase::Sweep => sweep_runs(spec.arm, &cfg.lrs, cfg.n_sweep_seeds).contains(spec),
                    Phase::Full => full_runs(spec.arm, spec.lr, cfg.n_seeds).contains(spec),
                }
        })
    }

    /// Why `rec` is not a run of this plan, in words.
    fn why_foreign(&self, hashes: &HashMap<String, Vec<usize>>, rec: &RunRecord, backend: &str) -> String {
        if rec.backend != backend {
            return format!("ran on {}, the plan on {backend}", rec.backend);
        }
        if !hashes.contains_key(&rec.run_hash) {
            return format!("its run hash {} is no bench's of the plan (another config)", rec.run_hash);
        }
        let spec = rec.spec();
        format!("{} is not a run its bench plans", record_key(&spec, &rec.run_hash))
    }

    /// Each bench's best lr per arm from its checked sweep records, by the protocol's rule
    /// (`best_lr` in the track's direction).
    fn best_lrs_of(&self, checked: &[Vec<RunRecord>]) -> Vec<[f64; 2]> {
        self.benches
            .iter()
            .zip(checked)
            .map(|(cfg, recs)| {
                let direction = cfg.resolve().expect("validated").task.direction();
                ARMS.map(|arm: Arm| best_lr(&sweep_means(&cfg.lrs, recs, arm), direction).expect("validated: lrs"))
            })
            .collect()
    }

    /// The full stage's best lrs against those its checked sweep records give: a plan whose
    /// best lrs were edited is refused, naming the bench and the arm.
    pub fn check_best_lrs(&self, checked: &[Vec<RunRecord>]) -> Result<(), String> {
        let want = self.best_lrs_of(checked);
        for (b, (have, want)) in self.best_lrs.iter().zip(&want).enumerate() {
            if let Some((i, arm)) = ARMS.into_iter().enumerate().find(|(i, _)| have[*i] != want[*i]) {
                return Err(format!(
                    "bench {} ({}): the plan's best lr of the {} arm is {}, but its sweep records give {}: the plan \
                     is not the one its sweep's merge wrote",
                    b + 1,
                    crate::study::bench_name(&self.benches[b]),
                    arm.as_str(),
                    have[i],
                    want[i]
                ));
            }
        }
        Ok(())
    }

    /// The full stage, planned from the sweep stage's checked records (`Plan::check`): each
    /// arm's best lr by the protocol's rule (`best_lr` in the track's direction).
    pub fn next(&self, checked: &[Vec<RunRecord>]) -> Result<Plan, String> {
        if self.stage != Phase::Sweep {
            return Err("this plan is at its last stage: its merge builds the report".into());
        }
        let best = self.best_lrs_of(checked);
        let mut runs = self.runs.clone();
        runs.extend(full_stage(&self.benches, &best));
        Ok(Plan { stage: Phase::Full, best_lrs: best, runs, ..self.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> BenchConfig {
        BenchConfig { n_seeds: 2, n_sweep_seeds: 2, lrs: vec![0.003, 0.01], ..BenchConfig::default() }
    }

    fn rec(run: &PlannedRun, backend: &str, metric: f64) -> RunRecord {
        let mut r: RunRecord = serde_json::from_value(serde_json::json!({
            "arm": run.spec.arm, "phase": run.spec.phase, "lr": run.spec.lr, "seed": run.spec.seed,
            "metric": metric, "diverged": false, "diverged_at": null, "loss_curve": [metric],
            "wall_time_s": 1.0, "population": 1, "mean_stored_states": null, "probes": []
        }))
        .unwrap();
        r.backend = backend.into();
        r.run_hash = run.run_hash.clone();
        r
    }

    #[test]
    fn the_sweep_stage_is_the_protocols_sweep_and_the_shares_cover_it_once() {
        let plan = Plan::new(PlanKind::Bench, "flex", vec![cfg()], vec![]).unwrap();
        let specs: Vec<RunSpec> = plan.runs.iter().map(|r| r.spec.clone()).collect();
        let want: Vec<RunSpec> = ARMS.iter().flat_map(|&a| sweep_runs(a, &[0.003, 0.01], 2)).collect();
        assert_eq!(specs, want);
        assert_eq!(plan.runs[0].key, format!("{}-baseline-sweep-lr0.003-seed1000", cfg().run_hash()));
        for of in [1, 3, 8, 9, 20] {
            let mut keys: Vec<&str> =
                (0..of).flat_map(|i| plan.share(i, of).unwrap()).map(|r| r.key.as_str()).collect();
            assert_eq!(keys.len(), 8, "{of} tasks");
            keys.dedup();
            assert_eq!(keys.len(), 8, "{of} tasks");
        }
        assert!(plan.share(3, 3).unwrap_err().contains("0 to 2"));
        // A plan file round-trips, and one edited by hand is refused, naming the run.
        assert_eq!(Plan::from_json(&plan.to_json()).unwrap(), plan);
        let edited = plan.to_json().replace("\"seed\": 1001", "\"seed\": 7");
        assert!(
            Plan::from_json(&edited).unwrap_err().contains("run 2 is"),
            "{}",
            Plan::from_json(&edited).unwrap_err()
        );
        assert!(Plan::from_json("{}").unwrap_err().contains("no plan_version"));
    }

    /// The full stage takes each arm's best lr from the sweep (lower loss wins on the
    /// pendulum), and the merge names what is missing, foreign or repeated.
    #[test]
    fn the_merge_picks_the_best_lrs_and_names_every_problem() {
        let plan = Plan::new(PlanKind::Bench, "flex", vec![cfg()], vec![]).unwrap();
        // Baseline best at 0.01, idea at 0.003 (hand-chosen metrics).
        let metric = |r: &PlannedRun| match (r.spec.arm, r.spec.lr == 0.01) {
            (Arm::Baseline, true) | (Arm::Idea, false) => 0.1,
            _ => 0.5,
        };
        let records: Vec<(String, RunRecord)> =
            plan.runs.iter().map(|r| (r.key.clone(), rec(r, "cpu-flex", metric(r)))).collect();
        let checked = plan.check(records.clone(), "cpu-flex", "").unwrap();
        let next = plan.next(&checked).unwrap();
        assert_eq!(next.best_lrs, vec![[0.01, 0.003]]);
        assert_eq!(next.stage_runs().len(), 4);
        assert!(next.stage_runs().iter().all(|r| r.spec.lr == if r.spec.arm == Arm::Baseline { 0.01 } else { 0.003 }));
        assert_eq!(Plan::from_json(&next.to_json()).unwrap(), next);
        assert!(next.next(&checked).is_err());
        // A full plan whose best lr was edited (to another lr of the grid) is refused.
        next.check_best_lrs(&checked).unwrap();
        let edited = Plan { best_lrs: vec![[0.003, 0.003]], ..next.clone() };
        let e = edited.check_best_lrs(&checked).unwrap_err();
        assert!(e.contains("best lr of the baseline arm is 0.003, but its sweep records give 0.01"), "{e}");
        // Records of another build are set aside and named.
        let p = plan.check(records.clone(), "cpu-flex", "0.1.0+other").unwrap_err();
        assert_eq!(p.other_build.len(), records.len());
        assert!(p.to_string().contains("were made by another build, set aside (this is build 0.1.0+other"), "{p}");

        // The full stage without its full runs: each is named; a foreign and a repeated one too.
        let mut with_problems = records.clone();
        with_problems.push(("dup.json".into(), records[0].1.clone()));
        let mut other = records[1].1.clone();
        other.run_hash = "0000".into();
        with_problems.push(("other.json".into(), other));
        let mut gpu = records[2].1.clone();
        gpu.backend = "webgpu".into();
        with_problems.push(("gpu.json".into(), gpu));
        let p = next.check(with_problems, "cpu-flex", "").unwrap_err();
        let full_keys: Vec<String> = next.stage_runs().iter().map(|r| r.key.clone()).collect();
        assert_eq!(p.missing, full_keys);
        assert_eq!(p.foreign.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["other.json", "gpu.json"]);
        assert_eq!(p.repeated, vec![(records[0].0.clone(), vec![records[0].0.clone(), "dup.json".into()])]);
        assert!(p.to_string().contains("4 planned run(s) have no record"), "{p}");

        // A full run at a lr of the grid that this plan did not choose is left aside.
        let mut aside = records.clone();
        let stray = PlannedRun {
            spec: RunSpec { arm: Arm::Baseline, phase: Phase::Full, lr: 0.003, seed: 0 },
            ..plan.runs[0].clone()
        };
        aside.push(("stray.json".into(), rec(&stray, "cpu-flex", 0.2)));
        assert_eq!(plan.check(aside, "cpu-flex", "").unwrap(), checked);
    }

    /// A study plan holds one bench per (track, model, policy) and each run names its bench.
    #[test]
    fn a_study_plan_lists_every_bench() {
        let benches = crate::study::bench_configs(&cfg(), &crate::study::all_tracks()).unwrap();
        let n = benches.len();
        let plan = Plan::new(PlanKind::Study, "flex", benches.clone(), vec![]).unwrap();
        assert_eq!(plan.runs.len(), n * 8);
        for r in &plan.runs {
            let b = &benches[r.bench];
            assert_eq!(
                (&r.track, &r.model, r.policy.as_str(), &r.run_hash),
                (&b.track, &b.model, b.policy.as_str(), &b.run_hash())
            );
        }
        assert!(Plan::new(PlanKind::Bench, "flex", benches.clone(), vec![]).is_err());
        assert_eq!(plan.points(), vec![(String::new(), (0..n).collect())]);

        // A grid over tau: one study per point, labelled by its value.
        let tau = |t: f64| benches.iter().map(move |b| BenchConfig { tau: t, ..b.clone() });
        let grid: Vec<BenchConfig> = tau(0.02).chain(tau(0.3)).collect();
        let plan = Plan::new(PlanKind::Study, "flex", grid.clone(), vec!["tau".into()]).unwrap();
        assert_eq!(plan.points(), vec![("tau0.02".into(), (0..n).collect()), ("tau0.3".into(), (n..2 * n).collect())]);
        assert_eq!(Plan::from_json(&plan.to_json()).unwrap(), plan);
        let bench_grid = Plan::new(PlanKind::Bench, "flex", vec![grid[0].clone(), grid[n].clone()], vec!["tau".into()]);
        assert_eq!(bench_grid.unwrap().points(), vec![("tau0.02".into(), vec![0]), ("tau0.3".into(), vec![1])]);
    }

    /// Grid points that differ only in a knob that changes no run (alpha) share their runs:
    /// each is trained once, and its record serves both benches.
    #[test]
    fn grid_points_that_share_runs_train_them_once() {
        let alpha = |a: f64| BenchConfig { alpha: a, ..cfg() };
        let plan = Plan::new(PlanKind::Bench, "flex", vec![alpha(0.05), alpha(0.01)], vec!["alpha".into()]).unwrap();
        assert_eq!((plan.runs.len(), plan.stage_runs().len()), (16, 8));
        let records: Vec<(String, RunRecord)> =
            plan.stage_runs().iter().map(|r| (r.key.clone(), rec(r, "cpu-flex", 0.1))).collect();
        let checked = plan.check(records, "cpu-flex", "").unwrap();
        assert_eq!((checked[0].len(), checked[1].len()), (8, 8));
        assert_eq!(plan.points().iter().map(|p| p.0.as_str()).collect::<Vec<_>>(), ["alpha0.05", "alpha0.01"]);
    }
}
