//! Models: recurrent cells evaluated for a whole population of runs at once.
//!
//! Every parameter tensor has a leading run dimension `R`; hidden states are
//! `[R, B, H]`, inputs and targets of one step `[R, B, F]`. A model is a small
//! trait so that adding one (spec §7) touches one file plus a line in [`MODELS`]. The
//! registry itself is burn-free, so the config check and the page's schema can list it.

#[cfg(feature = "cube")]
pub mod cube_kernels;
#[cfg(feature = "engine")]
mod fast_math;
#[cfg(feature = "engine")]
mod gru;
#[cfg(feature = "engine")]
pub mod kernels;
#[cfg(feature = "engine")]
mod rev_ode;

#[cfg(feature = "engine")]
pub use gru::Gru;
#[cfg(feature = "engine")]
pub use rev_ode::RevOde;

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
    /// Whether the hidden size must be even (two halves).
    pub even_hidden: bool,
    /// Whether the rank knobs (r0, r_max, enrichment) change it.
    pub ranked: bool,
    /// Build it for a shape, or say why that shape does not fit the model.
    #[cfg(feature = "engine")]
    pub build: fn(&ModelShape) -> Result<Box<dyn RecurrentModel>, String>,
}

/// Sizes a model is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelShape {
    /// Input features.
    pub input: usize,
    /// Hidden units H.
    pub hidden: usize,
    /// Predicted features.
    pub output: usize,
    /// Starting rank r0 (models with a rank, spec §7).
    pub rank0: usize,
    /// Largest rank r_max.
    pub rank_max: usize,
}

/// Every model this build knows.
pub const MODELS: &[ModelEntry] = &[
    ModelEntry {
        name: "rnn_small",
        label: "rnn_small (GRU)",
        even_hidden: false,
        ranked: false,
        #[cfg(feature = "engine")]
        build: |s| Ok(Box::new(Gru::new(s.input, s.hidden, s.output))),
    },
    ModelEntry {
        name: "rev_ode_small",
        label: "rev_ode_small (exactly reversible low-rank ODE)",
        even_hidden: true,
        ranked: true,
        #[cfg(feature = "engine")]
        build: |s| Ok(Box::new(RevOde::new(s)?)),
    },
];

/// The registry entry of a model name.
pub fn entry(name: &str) -> Option<&'static ModelEntry> {
    MODELS.iter().find(|m| m.name == name)
}

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
    /// `loss + sum((p_t - y)^2)` per run (`loss [R, 1, 1]`, the sum over rows and features):
    /// one step's term of the training loss, from h_t.
    fn add_loss(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, y: Tensor<3>, loss: Tensor<3>) -> Tensor<3> {
        loss + squared_error(self.readout(p, h, x), y)
    }
    /// What a backward pass carries through [`step_vjp`](Self::step_vjp), starting at a zero
    /// gradient: one zero tensor per parameter, unless the model keeps another layout on this
    /// device (the GRU on a GPU: its gradient and its parameters, each packed in one tensor).
    fn grad_zeros(&self, p: &[Tensor<3>]) -> Vec<Tensor<3>> {
        zeros_like_each(p)
    }
    /// The parameter gradients (in [`Params`] order) a pass's accumulator from
    /// [`grad_zeros`](Self::grad_zeros) holds at its end, and the pass's summed squared
    /// error `[R, 1, 1]`: `loss`, what [`add_loss`](Self::add_loss) summed in the forward
    /// pass, unless the backward pass summed it itself (the GRU on a GPU).
    fn grads_of(&self, acc: Vec<Tensor<3>>, loss: Tensor<3>) -> (Vec<Tensor<3>>, Tensor<3>) {
        (acc, loss)
    }
    /// Re-run the step from `h_prev` to h_t', add to `grads` the parameter gradient of
    /// `scale * sum((p_t - y)^2) + dh . h_t'`, and return its gradient with respect to `h_prev`.
    /// `grads` is an accumulator from [`grad_zeros`](Self::grad_zeros).
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
    /// `(r0, r_max)` for a model whose low-rank maps grow by enrichment (spec §7); None for
    /// a model without a rank (the rank knobs then change nothing).
    fn rank_limits(&self) -> Option<(usize, usize)> {
        None
    }
    /// Give run `run` rank `rank` (only called when `rank_limits` is Some). The function
    /// must not change at that moment: the new columns enter at zero.
    fn set_rank(&self, _p: &mut [Tensor<3>], _run: usize, _rank: usize) {}
}

/// Per-run sum of squared errors `[R, 1, 1]` of predictions `pred` against `y` (`[R, N, O]`).
#[cfg(feature = "engine")]
pub fn squared_error(pred: Tensor<3>, y: Tensor<3>) -> Tensor<3> {
    (pred - y).square().sum_dim(2).sum_dim(1)
}

/// One zero tensor shaped like each of `p` (a gradient in the parameters' own layout).
#[cfg(feature = "engine")]
pub fn zeros_like_each(p: &[Tensor<3>]) -> Vec<Tensor<3>> {
    p.iter().map(|t| t.zeros_like()).collect()
}

/// Build a model by its config name; an unknown name or a shape it cannot take is an error.
#[cfg(feature = "engine")]
pub fn by_name(name: &str, shape: &ModelShape) -> Result<Box<dyn RecurrentModel>, String> {
    let known = || MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ");
    let m = entry(name).ok_or_else(|| format!("unknown model {name:?} (known: {})", known()))?;
    (m.build)(shape)
}
