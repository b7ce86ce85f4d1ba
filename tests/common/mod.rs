//! Helpers shared by the integration tests.
#![allow(dead_code)]

use burn::tensor::{Device, Tensor, TensorData};
use rdbench_core::track::Dataset;
use rdbench_engine::batch::{Batch, DeviceData};
use serde_json::Value;

pub mod torch_pinned;

/// The CPU device the tests run on (the default native backend).
pub fn device() -> Device {
    rdbench_engine::backend::cpu("flex").unwrap().device
}

/// A fixture file from tests/fixtures.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Flatten nested JSON number arrays.
pub fn flat(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(flat).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap()],
        _ => panic!("not numeric: {v}"),
    }
}

/// Row-major `[rows, cols]` matrix transposed.
pub fn transpose(m: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut out = vec![0.0; m.len()];
    for i in 0..rows {
        for j in 0..cols {
            out[j * rows + i] = m[i * cols + j];
        }
    }
    out
}

/// A `[1, a, b]` tensor from f64 values.
pub fn t3(v: &[f64], a: usize, b: usize) -> Tensor<3> {
    let f: Vec<f32> = v.iter().map(|&x| x as f32).collect();
    Tensor::from_data(TensorData::new(f, [1, a, b]), &device())
}

/// Stack `[1, a, b]` tensors into `[R, a, b]`.
pub fn stack(ts: Vec<Tensor<3>>) -> Tensor<3> {
    Tensor::cat(ts, 0)
}

/// Read a tensor as f64.
pub fn read<const D: usize>(t: Tensor<D>) -> Vec<f64> {
    t.into_data().convert::<f32>().try_to_vec::<f32>().unwrap().into_iter().map(|x| x as f64).collect()
}

/// A batch holding `x`, `y` (`[B, T, F]` flattened) for `runs` runs.
pub fn batch_of(x: Vec<f64>, y: Vec<f64>, b: usize, t: usize, f: usize, runs: usize) -> Batch {
    let ds = Dataset {
        n: b,
        t,
        f_in: f,
        f_out: f,
        x: x.iter().map(|&v| v as f32).collect(),
        y: y.iter().map(|&v| v as f32).collect(),
        task: rdbench_core::track::Task::Regression,
    };
    DeviceData::new(&ds, &device()).all(runs, b)
}

/// Largest absolute difference.
pub fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "length mismatch");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// Cosine similarity of two flattened vectors.
pub fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// The GRU fixture's parameters in our layout, as a population of one.
pub struct GruFixture {
    pub f: usize,
    pub h: usize,
    pub b: usize,
    pub t: usize,
    pub params: Vec<Tensor<3>>,
    pub batch: Batch,
    pub v: Value,
}

pub fn gru_fixture() -> GruFixture {
    let v = fixture("gru_torch.json");
    let n = |k: &str| v[k].as_u64().unwrap() as usize;
    let (f, h, b, t) = (n("F"), n("H"), n("B"), n("T"));
    let params = torch_to_ours(&v, "", f, h);
    let batch = batch_of(flat(&v["x"]), flat(&v["y"]), b, t, f, 1);
    GruFixture { f, h, b, t, params, batch, v }
}

/// torch-layout tensors (named `{prefix}weight_ih` ...) to our `[1, ..]` parameters (the
/// readout's width is `out_bias`'s length).
pub fn torch_to_ours(v: &Value, prefix: &str, f: usize, h: usize) -> Vec<Tensor<3>> {
    let g = |k: &str| flat(&v[format!("{prefix}{k}")]);
    let o = g("out_bias").len();
    vec![
        t3(&transpose(&g("weight_ih"), 3 * h, f), f, 3 * h),
        t3(&transpose(&g("weight_hh"), 3 * h, h), h, 3 * h),
        t3(&g("bias_ih"), 1, 3 * h),
        t3(&g("bias_hh"), 1, 3 * h),
        t3(&transpose(&g("out_weight"), o, h), h, o),
        t3(&g("out_bias"), 1, o),
    ]
}

/// Our parameter gradients flattened back to torch layout, in torch's parameter order.
pub fn ours_to_torch(grads: &[Tensor<3>], f: usize, h: usize) -> Vec<Vec<f64>> {
    let o = grads[5].dims()[2];
    vec![
        transpose(&read(grads[0].clone()), f, 3 * h),
        transpose(&read(grads[1].clone()), h, 3 * h),
        read(grads[2].clone()),
        read(grads[3].clone()),
        transpose(&read(grads[4].clone()), h, o),
        read(grads[5].clone()),
    ]
}

pub const TORCH_GRAD_KEYS: [&str; 6] =
    ["grad_weight_ih", "grad_weight_hh", "grad_bias_ih", "grad_bias_hh", "grad_out_weight", "grad_out_bias"];

/// A finished run as the protocol records it, with `metric` (None: diverged).
pub fn run_record(
    arm: rdbench_core::records::Arm,
    phase: rdbench_core::records::Phase,
    lr: f64,
    seed: u64,
    metric: Option<f64>,
) -> rdbench_core::records::RunRecord {
    rdbench_core::records::RunRecord {
        arm,
        phase,
        lr,
        seed,
        metric,
        diverged: metric.is_none(),
        diverged_at: metric.is_none().then_some(rdbench_core::records::DivergedAt { epoch: 1, step: 3 }),
        loss_curve: vec![Some(0.5), metric],
        wall_time_s: 1.0,
        population: 1,
        mean_stored_states: None,
        probes: Vec::new(),
        backend: "cpu-flex".into(),
        run_hash: "0123456789abcdef".into(),
        rank_history: Vec::new(),
        secondary_metric: None,
        build: String::new(),
    }
}

/// A probe record with `defect`, the checkpoints of interval `k` (T = 80) and two cosines.
pub fn probe_record(
    epoch: usize,
    defect: Option<f64>,
    k: usize,
    cos_chosen: Option<f64>,
    cos_kmax: Option<f64>,
) -> rdbench_core::records::ProbeRecord {
    rdbench_core::records::ProbeRecord {
        epoch,
        defect_mean: defect,
        defect_max: defect.map(|d| 2.0 * d),
        chained: Vec::new(),
        k,
        checkpoints: 80usize.div_ceil(k) + 1,
        stored_bytes: ((80usize.div_ceil(k) + 1) * 32 * 32 * 4) as u64,
        dense_bytes: 81 * 32 * 32 * 4,
        grad_cos_chosen: cos_chosen,
        grad_cos_kmax: cos_kmax,
        peak_bytes_checkpointed: None,
        peak_bytes_dense: None,
        frontier: Vec::new(),
    }
}

/// Sweep runs of both arms (one seed, every lr of `lrs` with the given means) and full
/// runs with the given per-seed metrics (None: diverged), at lr `full_lr`.
pub fn bench_runs(
    lrs_and_means: &[(f64, f64, f64)],
    full_lr: f64,
    base: &[Option<f64>],
    idea: &[Option<f64>],
) -> Vec<rdbench_core::records::RunRecord> {
    use rdbench_core::records::{Arm, Phase};
    let mut runs = Vec::new();
    for &(lr, b, x) in lrs_and_means {
        runs.push(run_record(Arm::Baseline, Phase::Sweep, lr, 1000, Some(b)));
        runs.push(run_record(Arm::Idea, Phase::Sweep, lr, 1000, Some(x)));
    }
    for (s, m) in base.iter().enumerate() {
        runs.push(run_record(Arm::Baseline, Phase::Full, full_lr, s as u64, *m));
    }
    for (s, m) in idea.iter().enumerate() {
        runs.push(run_record(Arm::Idea, Phase::Full, full_lr, s as u64, *m));
    }
    runs
}

/// `runs` (from [`bench_runs`]: two epochs, a diverged run in its second) made what a bench
/// of `cfg` records: its run hash, and each idea run probed before each epoch it trained and
/// after the last (defect 0.01 everywhere, so the policy's interval), with the states those
/// intervals store. `cfg.epochs` must be 2.
pub fn consistent(
    cfg: &rdbench_core::config::BenchConfig,
    mut runs: Vec<rdbench_core::records::RunRecord>,
) -> Vec<rdbench_core::records::RunRecord> {
    use rdbench_core::records::{Arm, ChainedDefect, ProbeRecord};
    assert_eq!(cfg.epochs, 2, "bench_runs records two epochs");
    let t = cfg.resolved_seq_len().unwrap();
    let state = (cfg.batch_size * cfg.hidden_size * 4) as u64;
    let ks = rdbench_core::policy::chained_ks(cfg.k_max);
    let chained: Vec<(usize, f64)> = ks.iter().map(|&k| (k, 0.01)).collect();
    let k = rdbench_core::policy::choose_k(cfg.policy, 0.01, &chained, cfg.tau, cfg.k_max);
    let checkpoints = t.div_ceil(k) + 1;
    for r in &mut runs {
        r.run_hash = cfg.run_hash();
        if r.arm == Arm::Idea {
            let last = r.diverged_at.as_ref().map_or(cfg.epochs, |d| d.epoch.min(cfg.epochs));
            r.probes = (0..=last)
                .map(|epoch| ProbeRecord {
                    epoch,
                    defect_mean: Some(0.01),
                    defect_max: Some(0.02),
                    chained: ks.iter().map(|&k| ChainedDefect { k, defect: Some(0.01) }).collect(),
                    k,
                    checkpoints,
                    stored_bytes: checkpoints as u64 * state,
                    dense_bytes: (t + 1) as u64 * state,
                    grad_cos_chosen: Some(0.99),
                    grad_cos_kmax: Some(0.98),
                    peak_bytes_checkpointed: None,
                    peak_bytes_dense: None,
                    frontier: Vec::new(),
                })
                .collect();
            r.mean_stored_states = Some(checkpoints as f64);
        }
    }
    runs
}

/// The small bench config the population tests train under (epochs, batch and idea settings).
pub fn population_cfg() -> rdbench_core::config::BenchConfig {
    rdbench_core::config::BenchConfig {
        epochs: 2,
        batch_size: 16,
        hidden_size: 16,
        k_max: 8,
        reversal_iters: 10,
        policy: rdbench_core::config::Policy::OneStep,
        ..rdbench_core::config::BenchConfig::default()
    }
}

/// A report's JSON without what measures time (environment's started_at, wall_time_s and
/// phase_wall_time_s, each run's wall_time_s, the frontier's seconds) and the count of reused
/// runs: what an interrupted and resumed bench may change. Measured bytes stay: each is one
/// run's pass alone, the same however runs are grouped or resumed.
pub fn untimed_json(mut v: Value) -> Value {
    let env = v["environment"].as_object_mut().unwrap();
    for k in ["started_at", "wall_time_s", "phase_wall_time_s", "reused_runs"] {
        assert!(env.remove(k).is_some(), "environment.{k}");
    }
    for run in v["runs"].as_array_mut().unwrap() {
        run.as_object_mut().unwrap().remove("wall_time_s").unwrap();
    }
    strip_frontier(&mut v, false);
    v
}

/// Remove what the frontier measures of time, and of bytes when `bytes`.
pub fn strip_frontier(v: &mut Value, bytes: bool) {
    let mut keys = vec!["seconds"];
    if bytes {
        keys.push("peak_bytes");
    }
    let strip = |p: &mut Value| {
        for k in &keys {
            p.as_object_mut().unwrap().remove(*k);
        }
    };
    if let Some(points) = v["frontier"]["points"].as_array_mut() {
        points.iter_mut().for_each(strip);
    }
    for run in v["runs"].as_array_mut().unwrap() {
        for p in run["probes"].as_array_mut().unwrap() {
            if let Some(points) = p["frontier"].as_array_mut() {
                points.iter_mut().for_each(strip);
            }
        }
    }
}

/// [`untimed_json`] without what a split over threads or workers changes: the slice sizes
/// (`population`) and `environment.threads`.
pub fn unsplit_json(v: Value) -> Value {
    let mut v = untimed_json(v);
    v["environment"].as_object_mut().unwrap().remove("threads");
    for run in v["runs"].as_array_mut().unwrap() {
        run.as_object_mut().unwrap().remove("population");
    }
    v
}

/// `rdbench args` started, its stdout dropped and its stderr piped.
fn spawn<A: AsRef<std::ffi::OsStr>>(args: &[A]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_rdbench"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Spawn `rdbench args`, failing the test if it runs longer than `limit_s`.
pub fn rdbench_within(args: &[&str], limit_s: u64) -> (i32, String) {
    use std::io::Read;
    let mut child = spawn(args);
    let t0 = std::time::Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code().unwrap_or(-1);
        }
        if t0.elapsed().as_secs() > limit_s {
            child.kill().unwrap();
            panic!("{args:?} still running after {limit_s} s: it trains before checking its output");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (code, err)
}

/// Complete lines of a file (0 when it is not there): the runs a journal holds.
pub fn lines(path: &std::path::Path) -> usize {
    std::fs::read(path).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
}

/// Run `rdbench args` and interrupt it (SIGINT) once `journal` holds `at_least` lines, failing
/// the test if it ends first. Returns its exit code and stderr.
pub fn interrupted_once_journaled(
    args: &[String],
    journal: &std::path::Path,
    at_least: usize,
) -> (Option<i32>, String) {
    let mut child = spawn(args);
    let t0 = std::time::Instant::now();
    while lines(journal) < at_least {
        assert!(t0.elapsed().as_secs() < 300, "no run was journaled");
        assert!(child.try_wait().unwrap().is_none(), "the bench ended before it could be interrupted");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let stopped = child.wait_with_output().unwrap();
    (stopped.status.code(), String::from_utf8_lossy(&stopped.stderr).into_owned())
}

/// `rdbench args` run to the end: exit code, stdout, stderr.
pub fn rdbench(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rdbench")).args(args).output().unwrap();
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), s(&out.stdout), s(&out.stderr))
}

/// `rdbench args`, which must succeed: its stdout and stderr.
pub fn ok_with_err(args: &[&str]) -> (String, String) {
    let (code, out, err) = rdbench(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    (out, err)
}

/// `rdbench args`, which must succeed: its stdout.
pub fn ok(args: &[&str]) -> String {
    ok_with_err(args).0
}

/// A fresh, empty directory for one test (`suite` and `name` in its name).
pub fn tempdir(suite: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("rdbench-{suite}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A path as the `&str` a command line takes.
pub fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// A JSON file, parsed.
pub fn json(p: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}
