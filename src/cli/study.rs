//! `rdbench study`: the bench on every track, model and policy (one track with `--track`),
//! pooled into `study_report.json` and its chart.

use super::args::StudyArgs;
use super::run::bench_with_bar;

pub fn study(args: &StudyArgs) -> Result<(), String> {
    use rdbench_core::study::{all_tracks, bench_configs, bench_name, build_study};
    let run = &args.run;
    if let Some((k, _)) = run.texts.iter().find(|(k, _)| k == "model" || k == "policy") {
        let flag = rdbench_core::config::knob(k).map_or("", |k| k.flag);
        return Err(format!("{flag} is not a study flag: the study runs every model under every policy"));
    }
    if !args.from_reports.is_empty() {
        if let Some((k, _)) = run.texts.first() {
            let flag = rdbench_core::config::knob(k).map_or("", |k| k.flag);
            return Err(format!("{flag} does not go with --from-reports: the reports carry their configs"));
        }
        let texts = args
            .from_reports
            .iter()
            .map(|p| std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display())))
            .collect::<Result<Vec<_>, _>>()?;
        return write(args, &build_study(&texts)?);
    }
    let base = run.config()?;
    // Every track, unless --track names one.
    let tracks = if run.texts.iter().any(|(k, _)| k == "track") { vec![base.track.clone()] } else { all_tracks() };
    let cfgs = bench_configs(&base, &tracks)?;
    let mut texts = Vec::with_capacity(cfgs.len());
    for (i, cfg) in cfgs.iter().enumerate() {
        let label = bench_name(cfg);
        let report = bench_with_bar(cfg, run, format!("bench {}/{} {label} | ", i + 1, cfgs.len()))?;
        let r = &report.comparison;
        println!(
            "bench {}/{} {label}: {} (p = {}), mechanism {}",
            i + 1,
            cfgs.len(),
            r.verdict.as_str(),
            r.p_value.map_or("n/a".into(), |p| format!("{p:.4}")),
            if report.mechanism_signature.confirmed { "confirmed" } else { "not confirmed" }
        );
        texts.push(report.to_json());
    }
    write(args, &build_study(&texts)?)
}

/// Write the study report and its chart, and print its summary.
fn write(args: &StudyArgs, study: &rdbench_core::study::StudyReport) -> Result<(), String> {
    let run = &args.run;
    std::fs::write(&run.out, study.to_json() + "\n").map_err(|e| format!("cannot write {}: {e}", run.out.display()))?;
    {
        use plotters::prelude::*;
        let root = SVGBackend::new(&args.chart, (1200, 560)).into_drawing_area();
        rdbench_page::study_chart::draw(&root, study, 1.0)?;
        root.present().map_err(|e| format!("cannot write {}: {e:?}", args.chart.display()))?;
    }
    print!("{}", crate::summary::study::render(study));
    println!("study report written to {}, chart to {}", run.out.display(), args.chart.display());
    Ok(())
}
