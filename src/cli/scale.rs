//! `rdbench scale`: the bench at several sequence lengths for each track and model, projected
//! along T into `scale_report.json` and its charts; or the same from bench reports made
//! separately (`--from-reports`, e.g. a plan's `--seq-len` grid merged). It runs its
//! benches as the study does: outputs checked before any work, every finished run and bench
//! journaled, Ctrl-C kept, the same command resuming.

use super::Failure;
use super::args::{RunArgs, ScaleArgs};
use super::atomic::AtomicFile;
use super::study::{fits, from_reports, resolved, run_benches};
use crate::outln;
use rdbench_core::config::BenchConfig;
use rdbench_core::scale::{ScaleReport, bench_grid, build_scale, scale_bench_name};
use std::path::Path;

pub fn scale(args: &ScaleArgs) -> Result<(), Failure> {
    let run = &args.run;
    if !args.from_reports.is_empty() {
        if args.seq_lens_given {
            return Err("--seq-lens does not go with --from-reports: the reports carry their lengths"
                .to_string()
                .into());
        }
        let inputs: Vec<(String, &Path)> =
            args.from_reports.iter().map(|p| ("read by --from-reports".to_string(), p.as_path())).collect();
        let outputs = Outputs::check(args, &inputs)?;
        let texts = from_reports(run, &args.from_reports)?;
        return write(args, &build_scale(&texts)?, outputs, None);
    }
    let benches = resolved(&configs(args)?)?;
    let backend = run.backend()?;
    fits(&benches, &backend, scale_bench_name)?;
    let outputs = Outputs::check(args, &[])?;
    let (texts, runs, benches) = run_benches(&benches, run, &backend, scale_bench_name)?;
    write(args, &build_scale(&texts)?, outputs, Some((&runs, &benches)))
}

/// The comma-separated values of `key` in `texts`, each once (a repeat names `flag`).
fn list<'a>(texts: &'a [(String, String)], key: &str, flag: &str) -> Result<Vec<&'a str>, String> {
    let text = texts.iter().find(|(k, _)| k == key).map_or("", |(_, v)| v.as_str());
    let values: Vec<&str> = text.split(',').map(str::trim).collect();
    if let Some(v) = values.iter().enumerate().find_map(|(i, v)| values[..i].contains(v).then_some(v)) {
        return Err(format!("invalid value for {flag}: {v} is given twice in {text}"));
    }
    Ok(values)
}

/// The benches (`bench_grid`), each config parsed from the knob texts as `run` parses them,
/// the lengths named by `--seq-lens` in their errors.
fn configs(args: &ScaleArgs) -> Result<Vec<BenchConfig>, Failure> {
    if args.run.texts.iter().any(|(k, _)| k == "seq_len") {
        return Err("--seq-len is not a scale flag: a scale study sets T per bench (--seq-lens)".to_string().into());
    }
    let mut texts = args.texts();
    texts.push(("seq_len".into(), args.seq_lens.clone()));
    let (tracks, models) = (list(&texts, "track", "--track")?, list(&texts, "model", "--model")?);
    let lens = list(&texts, "seq_len", "--seq-lens")?;
    let cfgs = bench_grid(&tracks, &lens, &models, "--seq-lens", |track, len, model| {
        let at = |k: &str, v: &str| match k {
            "track" => track.to_string(),
            "model" => model.to_string(),
            "seq_len" => len.to_string(),
            _ => v.to_string(),
        };
        let point = texts.iter().map(|(k, v)| (k.clone(), at(k, v))).collect();
        RunArgs { texts: point, backend: String::new(), threads: None, out: Default::default(), quiet: true }
            .config()
            .map_err(|e| e.replace("--seq-len:", "--seq-lens:"))
    })?;
    Ok(cfgs)
}

/// The scale study's outputs, each checked writable before any work.
struct Outputs {
    report: AtomicFile,
    chart: AtomicFile,
}

impl Outputs {
    /// The outputs and the journals beside `--out`: refused if two name one file or one is
    /// among `inputs`, or if one cannot be written; all before any work.
    fn check(args: &ScaleArgs, inputs: &[(String, &Path)]) -> Result<Outputs, Failure> {
        let journals = ["runs", "benches"].map(|kind| crate::cli::journal::path_beside(&args.run.out, kind));
        let mut outputs: Vec<(String, &Path)> =
            vec![("--out".into(), args.run.out.as_path()), ("--chart".into(), args.chart.as_path())];
        outputs.extend(journals.iter().map(|j| ("the journal beside --out".to_string(), j.as_path())));
        super::atomic::refuse_clashes(&outputs, inputs)?;
        Ok(Outputs { report: AtomicFile::create(&args.run.out)?, chart: AtomicFile::create(&args.chart)? })
    }
}

/// Draw the charts, write both files whole, remove the journals once they are, and print
/// the summary.
fn write(
    args: &ScaleArgs,
    scale: &ScaleReport,
    outputs: Outputs,
    journals: Option<(&Path, &crate::cli::journal::Journal<rdbench_core::report::Report>)>,
) -> Result<(), Failure> {
    use plotters::prelude::*;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, rdbench_page::scale_chart::size(scale)).into_drawing_area();
        rdbench_page::scale_chart::draw(&root, scale, rdbench_page::style::Scale(1.0), false)?;
        root.present().map_err(|e| format!("cannot draw the scale charts: {e:?}"))?;
    }
    let files = [(outputs.chart, svg.into_bytes()), (outputs.report, (scale.to_json() + "\n").into_bytes())];
    super::study::commit(files, journals)?;
    crate::out!("{}", crate::summary::scale::render(scale));
    outln!("scale report written to {}, charts to {}", args.run.out.display(), args.chart.display());
    Ok(())
}
