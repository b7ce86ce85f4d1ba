//! The idea arm as a training rule: probe before each epoch (and after the last), set each
//! run's interval from its probe, and take every minibatch's gradient with the
//! checkpointed backward pass at that interval.

use super::probe::{PROBE_TRAJECTORIES, ProbeSettings, probe};
use crate::batch::{Batch, DeviceData};
use crate::error::EngineError;
use crate::model::RecurrentModel;
use crate::schedule::reversal::checkpointed_grads;
use crate::schedule::units::RunCost;
use crate::train::{GradOut, GradientRule, LocalFuture, RunExtras};
use burn::tensor::Tensor;
use rdbench_core::records::ProbeRecord;
use std::collections::VecDeque;

/// The idea arm's state while it trains one population.
pub struct IdeaRule {
    settings: ProbeSettings,
    probe_batch: Option<Batch>,
    /// Interval of each run, from its latest probe.
    ks: Vec<usize>,
    probes: Vec<Vec<ProbeRecord>>,
    /// States the checkpointed pass stored, summed over the run's live minibatches.
    stored: Vec<usize>,
    /// Live minibatches of each run.
    steps: Vec<usize>,
    /// States stored per run by the steps not yet settled (their liveness not yet read).
    unsettled: VecDeque<Vec<usize>>,
}

impl IdeaRule {
    /// A rule probing and checkpointing with `settings`.
    pub fn new(settings: ProbeSettings) -> Self {
        IdeaRule {
            settings,
            probe_batch: None,
            ks: Vec::new(),
            probes: Vec::new(),
            stored: Vec::new(),
            steps: Vec::new(),
            unsettled: VecDeque::new(),
        }
    }
}

impl GradientRule for IdeaRule {
    fn cost(&self, model: &dyn RecurrentModel, t: usize, n_train: usize) -> RunCost {
        super::cost::run_cost(model, &self.settings, t, n_train, super::cost::IdeaK::Mean)
    }

    fn start(&mut self, train: &DeviceData, runs: usize) {
        self.probe_batch = Some(train.all(runs, PROBE_TRAJECTORIES));
        self.ks = vec![1; runs];
        self.probes = vec![Vec::new(); runs];
        self.stored = vec![0; runs];
        self.steps = vec![0; runs];
        self.unsettled.clear();
    }

    fn before_epoch<'a>(
        &'a mut self,
        model: &'a dyn RecurrentModel,
        params: &'a [Tensor<3>],
        epoch: usize,
        live: &'a [bool],
    ) -> LocalFuture<'a, Result<(), EngineError>> {
        Box::pin(async move {
            let batch = self.probe_batch.as_ref().expect("start before the first epoch");
            let recs = probe(model, params, batch, &self.settings, epoch).await?;
            for (run, rec) in recs.into_iter().enumerate() {
                self.ks[run] = rec.k;
                if live[run] {
                    self.probes[run].push(rec);
                }
            }
            Ok(())
        })
    }

    fn grads(&mut self, model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> GradOut {
        let pass = checkpointed_grads(model, params, batch, &self.ks, self.settings.reversal_iters);
        self.unsettled.push_back(pass.stored_states());
        pass.into_grad_out()
    }

    fn settle(&mut self, live: &[bool]) {
        let stored = self.unsettled.pop_front().expect("settle follows grads");
        for (run, n) in stored.into_iter().enumerate() {
            if live[run] {
                self.stored[run] += n;
                self.steps[run] += 1;
            }
        }
    }

    fn finish(&mut self, run: usize) -> RunExtras {
        let steps = self.steps[run];
        RunExtras {
            mean_stored_states: (steps > 0).then(|| self.stored[run] as f64 / steps as f64),
            probes: std::mem::take(&mut self.probes[run]),
        }
    }
}
