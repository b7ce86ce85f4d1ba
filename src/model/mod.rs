//! Models: recurrent cells evaluated for a whole population of runs at once.
//!
//! Every parameter tensor has a leading run dimension `R`; hidden states are
//! `[R, B, H]`, inputs and targets of one step `[R, B, F]`. A model is a small
//! trait so that adding one (spec §7) touches one file plus a line in [`MODELS`]. The
//! registry itself is burn-free, so the config check and the page's schema can list it.

#[cfg(feature = "engine")]
mod gru;

#[cfg(feature = "engine")]
pub use gru::Gru;

#[cfg(feature = "engine")]
use burn::tensor::Tensor;
#[cfg(feature = "engine")]
use rand_chacha::ChaCha8Rng;

/// One model a config can name: the registry entry the config check, the CLI help and the
/// page's choices all read.
pub struct ModelEntry {
    /// Config name.
    pub name: &'static str,
    /// What a user sees in a choice list.
    pub label: &'static str,
    /// Build it for `input` features, `hidden` units and `output` predicted features.
    #[cfg(feature = "engine")]
    pub build: fn(usize, usize, usize) -> Box<dyn RecurrentModel>,
}

/// Every model this build knows.
pub const MODELS: &[ModelEntry] = &[ModelEntry {
    name: "rnn_small",
    label: "rnn_small (GRU)",
    #[cfg(feature = "engine")]
    build: |i, h, o| Box::new(Gru::new(i, h, o)),
}];

/// Parameters of a population: one `[R, rows, cols]` tensor per parameter.
#[cfg(feature = "engine")]
pub type Params = Vec<Tensor<3>>;

/// A recurrent cell with a readout, its reversal and its one-step vector-Jacobian product.
#[cfg(feature = "engine")]
pub trait RecurrentModel: Send + Sync {
    /// The name used in configs and reports (`"rnn_small"`).
    fn name(&self) -> &'static str;
    /// Hidden size H.
    fn hidden(&self) -> usize;
    /// Parameter names, in the order of [`Params`].
    fn param_names(&self) -> &'static [&'static str];
    /// Per-run shape `[rows, cols]` of each parameter.
    fn param_shapes(&self) -> Vec<[usize; 2]>;
    /// Draw one run's initial parameters (row-major, in `param_shapes` order).
    fn init_run(&self, rng: &mut ChaCha8Rng) -> Vec<Vec<f32>>;
    /// h_t from h_{t-1} `[R, B, H]` and x_t `[R, B, F]`.
    fn step(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3>;
    /// Prediction p_t `[R, B, F_out]` from h_t and x_t.
    fn readout(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3>;
    /// Reconstruct h_{t-1} from h_t and x_t without using h_{t-1} (spec §5).
    fn reverse(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, iters: usize) -> Tensor<3>;
    /// Re-run the step from `h_prev` to h_t', add to `grads` the parameter gradient of
    /// `scale * sum((p_t - y)^2) + dh . h_t'`, and return its gradient with respect to `h_prev`.
    #[allow(clippy::too_many_arguments)]
    fn step_vjp(
        &self,
        p: &[Tensor<3>],
        h_prev: Tensor<3>,
        x: Tensor<3>,
        y: Tensor<3>,
        dh: Tensor<3>,
        scale: f32,
        grads: &mut [Tensor<3>],
    ) -> Tensor<3>;
}

/// Look a model up by its config name.
#[cfg(feature = "engine")]
pub fn by_name(name: &str, input: usize, hidden: usize, output: usize) -> Option<Box<dyn RecurrentModel>> {
    MODELS.iter().find(|m| m.name == name).map(|m| (m.build)(input, hidden, output))
}
