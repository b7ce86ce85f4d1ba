//! The optimizer the spec fixes (§3): Adam's hyper-parameters and the clip of each run's
//! gradient. The engine's Adam (CPU tensor ops) and its fused GPU update read them here.

/// First-moment decay.
pub const BETA1: f64 = 0.9;
/// Second-moment decay.
pub const BETA2: f64 = 0.999;
/// Denominator epsilon.
pub const EPS: f64 = 1e-8;
/// Maximum global L2 norm of one run's gradient.
pub const CLIP_NORM: f64 = 1.0;
