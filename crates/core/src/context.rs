//! The resolved bench: a config turned once into what a bench is made of — the track built
//! at the config's sequence length, its task, the train sequences and the model's entry. The
//! engine, the report, its validation, the study, the plan and the CLI read these from here;
//! nothing else builds a track from a config.

use crate::config::{BenchConfig, ConfigError};
use crate::models::ModelInfo;
use crate::track::{Reference, Task, Track, TrackEntry};

/// A validated config with its track and model resolved.
pub struct BenchContext {
    /// The config, as given (`seq_len` 0 and `train_size` 0 mean the track's defaults).
    pub cfg: BenchConfig,
    /// The track's registry entry.
    pub entry: &'static TrackEntry,
    /// The track, built at [`seq_len`](Self::seq_len).
    pub track: Box<dyn Track>,
    /// The sequence length T the bench runs at.
    pub seq_len: usize,
    /// What the model is asked to do.
    pub task: Task,
    /// Train sequences of the full runs (`train_size` resolved).
    pub train_sequences: usize,
    /// The model's registry entry.
    pub model: &'static ModelInfo,
}

impl std::fmt::Debug for BenchContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BenchContext")
            .field("track", &self.entry.name)
            .field("seq_len", &self.seq_len)
            .field("task", &self.task)
            .field("train_sequences", &self.train_sequences)
            .field("model", &self.model.name)
            .finish()
    }
}

impl BenchConfig {
    /// The sequence length this config asks of its track: `seq_len`, or the track's default
    /// when it is 0. None for an unknown track.
    pub fn resolved_seq_len(&self) -> Option<usize> {
        let entry = crate::track::entry(&self.track)?;
        Some(if self.seq_len == 0 { entry.seq_lens.default } else { self.seq_len })
    }

    /// The track the config check bounds the other knobs with: built at the configured
    /// length when the track takes it, else at its default (the length's own error is then
    /// reported by [`BenchConfig::problems`]). None for an unknown track.
    pub(crate) fn track_for_checks(&self) -> Option<(&'static TrackEntry, Box<dyn Track>)> {
        let entry = crate::track::entry(&self.track)?;
        let t = self.resolved_seq_len()?;
        let t = if (entry.seq_lens.min..=entry.seq_lens.max).contains(&t) { t } else { entry.seq_lens.default };
        Some((entry, (entry.build)(t)))
    }

    /// Check the config and resolve it: the one way from a config to its track.
    pub fn resolve(&self) -> Result<BenchContext, ConfigError> {
        self.validate()?;
        let (entry, track) = self.track_for_checks().expect("a validated config names a track");
        let model = crate::models::info(&self.model).expect("a validated config names a model");
        Ok(BenchContext {
            cfg: self.clone(),
            entry,
            seq_len: track.seq_len(),
            task: track.task(),
            train_sequences: crate::config::train_sequences(self.train_size, &*track),
            track,
            model,
        })
    }
}

impl BenchContext {
    /// What the track's trivial predictor scores on this bench's data (its train sequences,
    /// the whole test set): the report's `task.reference`.
    pub fn reference(&self) -> Reference {
        self.track.reference(&self.track.generate(self.cfg.data_seed, self.train_sequences))
    }

    /// The trivial predictor's score where it is in the training loss's units (a regression:
    /// the loss and the metric are both the MSE), for the live loss chart; None for a
    /// classification, whose loss (cross-entropy) is not its metric (accuracy).
    pub fn trivial_loss(&self) -> Option<Reference> {
        self.task.is_regression().then(|| self.reference())
    }
}
