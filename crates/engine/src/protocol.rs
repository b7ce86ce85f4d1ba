//! The bench protocol (spec §4): sweep each arm over the lr grid, pick its best lr, train
//! the paired full runs, reusing the runs of an interrupted bench where they are the same
//! computation. It returns runs; `report::build` turns them into the report.

use crate::backend::Backend;
use crate::batch::DeviceData;
use crate::error::EngineError;
use crate::host::{Event, Host};
use crate::idea::IdeaRule;
use crate::idea::probe::ProbeSettings;
use crate::model::{self, RecurrentModel};
use crate::train::dense::DenseRule;
use crate::train::{GradientRule, Population, Tally, TrainSettings, train_population};
use crate::work::BenchWork;
use indexmap::IndexMap;
use rdbench_core::config::BenchConfig;
use rdbench_core::context::BenchContext;
use rdbench_core::progress::Progress;
use rdbench_core::records::{Arm, Phase, RunRecord, RunSpec, Slice, full_runs, sweep_runs};
use rdbench_core::report::sweep::{best_lr, sweep_means};
use rdbench_core::report::{Environment, Report};
use rdbench_core::track;
use web_time::{Instant, SystemTime, UNIX_EPOCH};

pub use rdbench_core::report::build::STATS_SEED;

pub use rdbench_core::records::SWEEP_SEED0;

/// burn's version, as locked in Cargo.lock (checked by a test).
pub const BURN_VERSION: &str = "0.22.1";

pub use rdbench_core::records::ARMS;

/// A bench that stopped early, with every run it finished.
#[derive(Debug)]
pub struct Stopped {
    /// Why it stopped.
    pub reason: EngineError,
    /// Runs finished before it stopped.
    pub runs: Vec<RunRecord>,
    /// Seconds the bench had run, the stopped attempts it resumed included: what a resume
    /// carries forward (`Prior::elapsed_s`).
    pub elapsed_s: f64,
    /// Share of the bench's work in the runs it finished or took over (in a bench split over
    /// workers, this worker's part: the parts add up); the steps of runs in flight are lost.
    pub fraction_kept: f64,
}

/// The training rule of `arm` in `phase` under `cfg`: the one place an arm is chosen. The
/// idea's full runs also measure the frontier at every probe.
pub fn rule_for(arm: Arm, phase: Phase, cfg: &BenchConfig) -> Box<dyn GradientRule> {
    match arm {
        Arm::Baseline => Box::new(DenseRule),
        Arm::Idea => Box::new(IdeaRule::new(ProbeSettings::new(cfg, phase == Phase::Full))),
    }
}

/// Where a population trains and how its progress is counted: the protocol's scheduler.
struct Scheduler<'a> {
    /// The config and thread count, for splitting a phase over threads (native only).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    cfg: &'a BenchConfig,
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    threads: usize,
    model: &'a dyn RecurrentModel,
    settings: TrainSettings,
    device: &'a burn::tensor::Device,
    prior: Prior<'a>,
    /// This worker's share in a bench split over browser workers.
    split: Option<Slice>,
    /// Records other workers sent (split bench).
    received: Vec<RunRecord>,
    tally: Tally,
    reused: usize,
}

impl Scheduler<'_> {
    /// Work units of `runs` runs of `rule` on `data` (training and evaluated trajectories).
    fn work(&self, rule: &dyn GradientRule, runs: usize, (train, eval): (&DeviceData, &DeviceData)) -> u64 {
        runs as u64 * rule.cost(self.model, train.t, train.n).run_units(train.n, eval.n, self.settings.epochs)
    }

    /// The records of `specs`, in their order: each from `prior` where it is there (same
    /// arm, phase, lr, seed, backend and run hash), the rest trained together — split over
    /// threads natively, or over browser workers when this bench is one worker's share.
    /// A run's numbers do not depend on the population it trains in (every kernel works run
    /// by run; tested), so reusing some runs of a population changes none of the others.
    async fn train_or_reuse(
        &mut self,
        specs: &[RunSpec],
        rule: &mut dyn GradientRule,
        (train, eval): (&DeviceData, &DeviceData),
        host: &mut dyn Host,
    ) -> Result<Vec<RunRecord>, EngineError> {
        let (backend, hash) = (self.settings.backend.clone(), self.settings.run_hash.clone());
        let mut out: Vec<Option<RunRecord>> = specs
            .iter()
            .map(|s| self.prior.runs.iter().find(|r| self.prior.reuses(r, s, &backend, &hash)).cloned())
            .collect();
        // Their work was counted when the bench started (`count_reused`).
        self.reused += out.iter().flatten().count();
        let missing: Vec<usize> = (0..specs.len()).filter(|&i| out[i].is_none()).collect();
        if missing.is_empty() {
            return Ok(out.into_iter().flatten().collect());
        }
        // This worker's share of the missing runs (all of them unless split).
        let mine: Vec<usize> = match self.split {
            Some(s) if s.count > 1 => rdbench_core::records::slices(missing.len(), s.count)
                .get(s.index)
                .map(|r| missing[r.clone()].to_vec())
                .unwrap_or_default(),
            _ => missing.clone(),
        };
        if !mine.is_empty() {
            let todo: Vec<RunSpec> = mine.iter().map(|&i| specs[i].clone()).collect();
            for (i, rec) in mine.iter().zip(self.train(&todo, rule, (train, eval), host).await?) {
                out[*i] = Some(rec);
            }
            self.tally.work_kept += self.work(rule, mine.len(), (train, eval));
        }
        // The other workers' shares arrive as records relayed by the page.
        while out.iter().any(Option::is_none) {
            self.received.extend(host.take_runs());
            for (i, spec) in specs.iter().enumerate() {
                if out[i].is_none() {
                    out[i] = self.received.iter().find(|r| r.is_run(spec, &backend, &hash)).cloned();
                }
            }
            if out.iter().all(Option::is_some) {
                break;
            }
            if host.cancelled() {
                return Err(EngineError::Cancelled);
            }
            host.wait_for_runs().await;
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// Count the runs this bench takes over from `prior` before any step, so a resumed
    /// bench's progress starts where the stopped one kept it: every sweep run, and the full
    /// runs at any lr of the grid (a stopped bench's full runs are at the lr its sweep chose,
    /// and the resumed sweep is the same computation). `data`: the sweep's and the full runs'
    /// (training, evaluation) data. In a bench split over workers every worker reuses the
    /// same runs and worker 0 counts them, so the workers' figures add up.
    /// `rules[phase][arm]`: each phase's rule per arm (the idea's full runs also probe the frontier).
    fn count_reused(&mut self, rules: &[[Box<dyn GradientRule>; 2]; 2], data: [(&DeviceData, &DeviceData); 2]) {
        if self.split.is_some_and(|s| s.index != 0) {
            return;
        }
        let (backend, hash) = (&self.settings.backend, &self.settings.run_hash);
        for (i, arm) in ARMS.into_iter().enumerate() {
            let full_at_any_lr = self.cfg.lrs.iter().flat_map(|&lr| full_runs(arm, lr, self.cfg.n_seeds)).collect();
            let sweep = sweep_runs(arm, &self.cfg.lrs, self.cfg.n_sweep_seeds);
            for (phase, (specs, d)) in [(sweep, data[0]), (full_at_any_lr, data[1])].into_iter().enumerate() {
                let found = specs
                    .iter()
                    .filter(|s| self.prior.runs.iter().any(|r| self.prior.reuses(r, s, backend, hash)))
                    .count();
                let units = self.work(&*rules[phase][i], found, d);
                self.tally.runs_done += found;
                self.tally.work_done += units;
                self.tally.work_kept += units;
            }
        }
    }

    /// Where the bench stands before its first step (a resumed bench: at its reused runs).
    fn progress_at_start(&self, steps: usize) -> Progress {
        Progress {
            phase: Phase::Sweep,
            arm: ARMS[0],
            epoch: 0,
            epochs: self.settings.epochs,
            step: 0,
            steps,
            runs_done: self.tally.runs_done,
            runs_total: self.tally.runs_total,
            fraction: self.tally.share(self.tally.work_done),
            lrs: Vec::new(),
            seeds: Vec::new(),
            losses: Vec::new(),
            elapsed_s: self.tally.elapsed_s(),
        }
    }

    /// The bench stopped for `reason` with `runs` finished.
    fn stopped(&self, reason: EngineError, runs: &[RunRecord]) -> Stopped {
        Stopped {
            reason,
            runs: runs.to_vec(),
            elapsed_s: self.tally.elapsed_s(),
            fraction_kept: self.tally.share(self.tally.work_kept),
        }
    }

    /// Train `specs` here: split over threads natively, one population in the browser.
    async fn train(
        &mut self,
        specs: &[RunSpec],
        rule: &mut dyn GradientRule,
        (train, eval): (&DeviceData, &DeviceData),
        host: &mut dyn Host,
    ) -> Result<Vec<RunRecord>, EngineError> {
        // wasm has no threads (the page splits a bench over Web Workers instead), and leaving
        // the thread split out keeps it out of the worker's wasm.
        #[cfg(not(target_arch = "wasm32"))]
        if self.threads > 1 && specs.len() > 1 {
            let (cfg, arm, phase) = (self.cfg, specs[0].arm, specs[0].phase);
            let at = Population { model: self.model, train, eval, settings: &self.settings, device: self.device };
            return crate::train::parallel::train_split(
                &at,
                specs,
                &|| rule_for(arm, phase, cfg),
                host,
                &mut self.tally,
                self.threads,
            );
        }
        let at = Population { model: self.model, train, eval, settings: &self.settings, device: self.device };
        train_population(&at, specs, rule, host, &mut self.tally).await
    }
}

/// Finished runs a bench may reuse instead of training them again (from a cancelled or
/// failed bench). A run is reused when it is the same computation: same arm, phase, lr,
/// seed, `run_hash` and build, and — unless the user chose to continue on another backend (the
/// page's "Continue on CPU") — the same backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prior<'a> {
    /// The finished runs.
    pub runs: &'a [RunRecord],
    /// Reuse runs of another backend too (the report then lists both in `run_backends`).
    pub any_backend: bool,
    /// Seconds the stopped attempts ran (`Stopped::elapsed_s`): the resumed bench's elapsed
    /// time and `environment.wall_time_s` count them.
    pub elapsed_s: f64,
}

impl Prior<'_> {
    /// Whether `r` is the run `spec` on `backend` under `run_hash`, computed by this build
    /// (another build's numbers may differ, so its runs are never taken).
    fn reuses(&self, r: &RunRecord, spec: &RunSpec, backend: &str, run_hash: &str) -> bool {
        r.build == crate::BUILD && r.is_run(spec, if self.any_backend { &r.backend } else { backend }, run_hash)
    }
}

impl<'a> From<&'a [RunRecord]> for Prior<'a> {
    fn from(runs: &'a [RunRecord]) -> Self {
        Prior { runs, ..Prior::default() }
    }
}

impl<'a> From<&'a Vec<RunRecord>> for Prior<'a> {
    fn from(runs: &'a Vec<RunRecord>) -> Self {
        Prior { runs, ..Prior::default() }
    }
}

impl<'a, const N: usize> From<&'a [RunRecord; N]> for Prior<'a> {
    fn from(runs: &'a [RunRecord; N]) -> Self {
        Prior { runs, ..Prior::default() }
    }
}

/// What the phases produced: every run, and where and when they ran.
#[derive(Debug)]
pub struct Ran {
    /// Every run of the bench, sweep then full, baseline before idea.
    pub runs: Vec<RunRecord>,
    /// The environment (its `run_backends` is filled by `report::build`).
    pub environment: Environment,
}

/// Work units of one run of `arm` in `phase` of the bench `ctx` (`crate::work`; a resumed
/// bench's estimate leaves out those of the runs it reuses).
pub fn run_work(ctx: &BenchContext, arm: Arm, phase: Phase) -> u64 {
    BenchWork::of(ctx).run(arm, phase).mid
}

/// Work units of the whole bench `ctx`: the progress bar's total, and the estimate before
/// Run is `work_total x Calibration::ms_per_work_unit / workers`.
pub fn work_total(ctx: &BenchContext) -> u64 {
    BenchWork::of(ctx).total().mid
}

/// Run the whole bench on `backend` and build its report.
pub async fn run_bench(
    ctx: &BenchContext,
    backend: &Backend,
    prior: impl Into<Prior<'_>>,
    host: &mut dyn Host,
) -> Result<Report, Stopped> {
    let ran = run_phases(ctx, backend, prior, host).await?;
    Ok(rdbench_core::report::build(ctx, ran.runs, Some(ran.environment)))
}

/// Run the protocol's phases on `backend`: each arm's sweep, its best lr, the full runs.
/// Runs in `prior` (from an interrupted bench) are reused instead of retrained, population
/// by population, where they are the same computation (see `RunRecord::is_run`).
pub async fn run_phases(
    ctx: &BenchContext,
    backend: &Backend,
    prior: impl Into<Prior<'_>>,
    host: &mut dyn Host,
) -> Result<Ran, Stopped> {
    let prior = prior.into();
    let cfg = &ctx.cfg;
    // Before the scheduler exists nothing has run: nothing is kept beyond the prior runs.
    let stop =
        |reason: EngineError| Stopped { reason, runs: Vec::new(), elapsed_s: prior.elapsed_s, fraction_kept: 0.0 };
    let started_at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let start = Instant::now();
    let bench = Prepared::new(ctx, backend).map_err(stop)?;
    let model = &*bench.model;
    let device = &backend.device;
    let sweep_data = (&bench.sweep.0, &bench.sweep.1);
    let full_data = (&bench.full.0, &bench.full.1);

    let mut rules = [Phase::Sweep, Phase::Full].map(|phase| ARMS.map(|arm| rule_for(arm, phase, cfg)));
    let settings = TrainSettings::new(cfg, &backend.name);
    let n_sweep = cfg.lrs.len() * cfg.n_sweep_seeds;
    let mut scheduler = Scheduler {
        cfg,
        threads: backend.threads,
        model,
        settings,
        device,
        prior,
        split: backend.split,
        received: Vec::new(),
        tally: Tally { start, before_s: prior.elapsed_s, ..Tally::new(2 * (n_sweep + cfg.n_seeds), 0) },
        reused: 0,
    };
    scheduler.tally.work_total = (0..ARMS.len())
        .map(|i| {
            scheduler.work(&*rules[0][i], n_sweep, sweep_data) + scheduler.work(&*rules[1][i], cfg.n_seeds, full_data)
        })
        .sum();
    debug_assert_eq!(scheduler.tally.work_total, work_total(ctx));
    scheduler.count_reused(&rules, [sweep_data, full_data]);
    host.event(&Event::Progress(scheduler.progress_at_start(sweep_data.0.n.div_ceil(cfg.batch_size))));

    let mut runs: Vec<RunRecord> = Vec::new();
    let mut phase_time: IndexMap<String, f64> = IndexMap::new();
    let mut best = [0.0f64; 2];
    for (i, arm) in ARMS.into_iter().enumerate() {
        let specs = sweep_runs(arm, &cfg.lrs, cfg.n_sweep_seeds);
        let t0 = Instant::now();
        let recs = scheduler
            .train_or_reuse(&specs, &mut *rules[0][i], sweep_data, host)
            .await
            .map_err(|e| scheduler.stopped(e, &runs))?;
        phase_time.insert(format!("{}_sweep", arm.as_str()), t0.elapsed().as_secs_f64());
        best[i] = best_lr(&sweep_means(&cfg.lrs, &recs, arm), ctx.task.direction())
            .expect("validated: the lr grid is not empty");
        runs.extend(recs);
    }
    for (i, arm) in ARMS.into_iter().enumerate() {
        let specs = full_runs(arm, best[i], cfg.n_seeds);
        let t0 = Instant::now();
        let recs = scheduler
            .train_or_reuse(&specs, &mut *rules[1][i], full_data, host)
            .await
            .map_err(|e| scheduler.stopped(e, &runs))?;
        phase_time.insert(format!("{}_full", arm.as_str()), t0.elapsed().as_secs_f64());
        runs.extend(recs);
    }

    let environment = environment(backend, started_at, scheduler.tally.elapsed_s(), phase_time, scheduler.reused);
    Ok(Ran { runs, environment })
}

/// Where and when a bench ran: `backend`, from `started_at` (since the Unix epoch) for
/// `wall_time_s`, its phases' times and the runs it reused.
pub fn environment(
    backend: &Backend,
    started_at: std::time::Duration,
    wall_time_s: f64,
    phase_wall_time_s: impl IntoIterator<Item = (String, f64)>,
    reused_runs: usize,
) -> Environment {
    Environment {
        backend: backend.name.clone(),
        adapter: backend.adapter.clone(),
        platform: rdbench_core::rerun::this_platform().into(),
        rdbench_version: env!("CARGO_PKG_VERSION").into(),
        burn_version: BURN_VERSION.into(),
        started_at: humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + started_at).to_string(),
        wall_time_s,
        phase_wall_time_s: phase_wall_time_s.into_iter().collect(),
        run_backends: IndexMap::new(), // filled from the runs by `build`
        reused_runs,
        threads: backend.split.map_or(backend.threads, |s| s.count),
        backend_note: backend.note.clone(),
        calibration: backend.calibration.clone(),
        build: crate::BUILD.into(),
    }
}

/// A bench's model and data on the backend's device: the sweep's train/validation split and
/// the full runs' train/test split.
struct Prepared {
    model: Box<dyn RecurrentModel>,
    sweep: (DeviceData, DeviceData),
    full: (DeviceData, DeviceData),
}

impl Prepared {
    fn new(bench: &BenchContext, backend: &Backend) -> Result<Prepared, EngineError> {
        let model = model::build(bench)?;
        let n_train = bench.train_sequences;
        let data = bench.track.generate(bench.cfg.data_seed, n_train);
        let sweep = data.sweep_split(track::validation_size(n_train));
        let full = data.full_split();
        let device = &backend.device;
        Ok(Prepared {
            model,
            sweep: (DeviceData::new(&sweep.train, device), DeviceData::new(&sweep.eval, device)),
            full: (DeviceData::new(&full.train, device), DeviceData::new(&full.eval, device)),
        })
    }
}

/// Train the runs `specs` of the bench `ctx` on `backend`, whatever their phases and lrs: one share of
/// a plan. The runs of each (phase, arm) train as one population, split over
/// threads; a run's numbers do not depend on its population (tested), so they are those
/// `run_phases` gives it. Every finished run is sent to `host` as it finishes.
pub async fn train_runs(
    ctx: &BenchContext,
    backend: &Backend,
    specs: &[RunSpec],
    host: &mut dyn Host,
) -> Result<Vec<RunRecord>, Stopped> {
    let cfg = &ctx.cfg;
    let stop = |reason: EngineError| Stopped { reason, runs: Vec::new(), elapsed_s: 0.0, fraction_kept: 0.0 };
    let bench = Prepared::new(ctx, backend).map_err(stop)?;
    let mut groups: Vec<((Phase, Arm), Vec<RunSpec>)> = Vec::new();
    for s in specs {
        match groups.iter_mut().find(|(k, _)| *k == (s.phase, s.arm)) {
            Some((_, g)) => g.push(s.clone()),
            None => groups.push(((s.phase, s.arm), vec![s.clone()])),
        }
    }
    let data = |phase| match phase {
        Phase::Sweep => (&bench.sweep.0, &bench.sweep.1),
        Phase::Full => (&bench.full.0, &bench.full.1),
    };
    let mut scheduler = Scheduler {
        cfg,
        threads: backend.threads,
        model: &*bench.model,
        settings: TrainSettings::new(cfg, &backend.name),
        device: &backend.device,
        prior: Prior::default(),
        split: None,
        received: Vec::new(),
        tally: Tally::new(specs.len(), 0),
        reused: 0,
    };
    let work = BenchWork::of(ctx);
    scheduler.tally.work_total = groups.iter().map(|((p, a), g)| g.len() as u64 * work.run(*a, *p).mid).sum();
    let mut runs = Vec::with_capacity(specs.len());
    for ((phase, arm), group) in &groups {
        let mut rule = rule_for(*arm, *phase, cfg);
        let recs = scheduler
            .train_or_reuse(group, &mut *rule, data(*phase), host)
            .await
            .map_err(|e| scheduler.stopped(e, &runs))?;
        runs.extend(recs);
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    /// The version the report records is the one Cargo.lock resolves.
    #[test]
    fn burn_version_is_the_locked_one() {
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock")).unwrap();
        let locked = lock
            .split("[[package]]")
            .find(|p| p.contains("\nname = \"burn\"\n"))
            .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
            .map(|v| v.trim_end_matches('"').to_string());
        assert_eq!(locked.as_deref(), Some(super::BURN_VERSION));
    }
}
