//! `rdbench plan`: write the plan of a bench (or, with `--study`, of a study) for many
//! machines — its first stage, the sweep runs. `rdbench work` runs a share of a stage,
//! `rdbench merge` checks the records and plans the next stage or builds the report.

use super::Failure;
use super::args::PlanArgs;
use super::atomic::AtomicFile;
use crate::outln;
use rdbench_core::plan::{Plan, PlanKind};

pub fn plan(args: &PlanArgs) -> Result<(), Failure> {
    let run = &args.run;
    let (kind, benches) = if args.study {
        super::study::refuse_model_and_policy(run)?;
        (PlanKind::Study, super::study::configs(run)?)
    } else {
        (PlanKind::Bench, vec![run.config()?])
    };
    // The backend is named now so that a plan for a backend this build lacks is refused here.
    let backend = run.backend()?;
    let out = AtomicFile::create(&run.out)?;
    super::run::warn_unreachable_alpha(&benches[0]);
    let plan = Plan::new(kind, &run.backend, benches)?;
    out.commit((plan.to_json() + "\n").as_bytes())?;
    let n = plan.stage_runs().len();
    outln!(
        "plan written to {}: {} bench{}, {n} sweep runs on {} (the full runs are planned by the sweep's merge)",
        run.out.display(),
        plan.benches.len(),
        if plan.benches.len() == 1 { "" } else { "es" },
        backend.name
    );
    outln!("next: rdbench work --plan {} --index I --of N   (I = 0 .. N-1, on any machines)", run.out.display());
    Ok(())
}
