//! `rdbench dataset`: a track's data for one data seed, as the bench trains on it (float32
//! inputs, targets or class labels, the train/test split and the bench's sweep split), in one
//! JSON file a user can inspect or load elsewhere (`json.load` then `numpy.array`).

use rdbench_core::config::{BenchConfig, parse_texts};
use rdbench_core::track::{self, Dataset, Task};
use serde_json::{Value, json};
use std::path::PathBuf;

/// Flags of `dataset`.
#[derive(clap::Args, Debug)]
pub struct DatasetArgs {
    /// The track (a name of the track registry: dynamics, mnist1d, adding).
    #[arg(long, default_value = "dynamics")]
    track: String,
    /// Time steps per sequence (as `run --seq-len`; 0 = the track's default).
    #[arg(long = "seq-len", default_value = "0")]
    seq_len: String,
    /// Seed of the track's generator (as `run --data-seed`; mnist1d: the package's seed).
    #[arg(long = "data-seed", default_value = "0")]
    data_seed: String,
    /// Train sequences a bench uses (as `run --train-size`; 0 = the track's default): the
    /// file holds them and marks the sweep's split of them.
    #[arg(long = "train-size", default_value = "0")]
    train_size: String,
    /// Where to write the JSON.
    #[arg(long, default_value = "dataset.json")]
    out: PathBuf,
}

/// One split's arrays: `x [n][t][f_in]`, and `y [n][t][f_out]` (regression) or `labels [n]`.
fn arrays(d: &Dataset) -> Value {
    let rows = |v: &[f32], width: usize, steps: usize| -> Value {
        v.chunks(width * steps).map(|seq| seq.chunks(width).map(|step| step.to_vec()).collect::<Vec<_>>()).collect()
    };
    let mut out = json!({"n": d.n, "x": rows(&d.x, d.f_in, d.t)});
    match d.labels() {
        Some(labels) => out["labels"] = json!(labels),
        None => out["y"] = rows(&d.y, d.f_out, d.target_steps()),
    }
    out
}

/// The export of `cfg`'s track, data seed and train size.
pub fn export(cfg: &BenchConfig) -> Value {
    let ctx = cfg.resolve().expect("a validated config");
    let (track, task) = (&ctx.track, ctx.task);
    // The train sequences the bench trains on (the adding problem makes as many as asked).
    let n = ctx.train_sequences;
    let data = track.generate(cfg.data_seed, n);
    let val = track::validation_size(n);
    json!({
        "track": cfg.track,
        "data_seed": cfg.data_seed,
        "seq_len": track.seq_len(),
        "input_dim": track.input_dim(),
        "task": {
            "loss": task.loss(),
            "readout": task.readout(),
            "metric": task.test_metric(),
            "metric_direction": task.direction().as_str(),
            "classes": task.classes(),
            "targets": match task {
                Task::Regression => "y[n][t][f]: the target of every step",
                Task::LastStepRegression => "y[n][1][f]: one target per sequence, read out at the last step",
                Task::Classification { .. } => "labels[n]: the class of each sequence, read out at the last step",
            },
        },
        "split": {
            "train": data.train.n,
            "test": data.test.n,
            "bench_train": n,
            "sweep_fit": n - val,
            "sweep_validation": val,
            "about": "full runs train on train[..bench_train] and are scored on all of test; sweep runs \
                      train on train[..sweep_fit] and are scored on train[sweep_fit..bench_train]",
        },
        "train": arrays(&data.train),
        "test": arrays(&data.test),
    })
}

pub fn dataset(args: &DatasetArgs) -> Result<(), String> {
    let texts = [
        ("track", &args.track),
        ("seq_len", &args.seq_len),
        ("data_seed", &args.data_seed),
        ("train_size", &args.train_size),
    ];
    let cfg = parse_texts(texts.iter().map(|(k, v)| (*k, v.as_str()))).map_err(|errors| {
        errors.iter().map(|e| format!("invalid value for {}: {}", e.flag(), e.message)).collect::<Vec<_>>().join("\n")
    })?;
    // Checked before the data is made, written whole, never through a link (as every output).
    let out = super::atomic::AtomicFile::create(&args.out)?;
    let v = export(&cfg);
    let text = serde_json::to_string(&v).expect("the export serialises");
    out.commit((text + "\n").as_bytes())?;
    let s = &v["split"];
    println!(
        "{} (data seed {}): {} train + {} test sequences of {} steps; a bench trains on the first {} \
         (sweep: {} + {} validation); written to {}",
        cfg.track,
        cfg.data_seed,
        s["train"],
        s["test"],
        v["seq_len"],
        s["bench_train"],
        s["sweep_fit"],
        s["sweep_validation"],
        args.out.display()
    );
    Ok(())
}
