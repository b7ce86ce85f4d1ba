//! Vectorisable exp, sigmoid and tanh for the fused CPU kernels. libm's `tanhf` costs ~20 ns
//! and `expf` ~6 ns per call and neither vectorises; these are branch-free polynomials that
//! LLVM turns into SIMD loops (~2 ns per element here), accurate to about one ulp of f32
//! (exp: relative error <= 1.2e-7; tanh: absolute error <= 3e-7 and relative <= 6e-7,
//! checked below).

/// `x` limited to `[lo, hi]` by comparisons, NaN passing through like `f32::clamp`. The std
/// method lowers to a call of libm's `fmaxf`/`fminf` in wasm (whose `f32.max` instruction
/// treats NaN differently), which stops the loop around it from vectorising; for every
/// input the result is bit-identical.
#[inline(always)]
pub fn clamp(x: f32, lo: f32, hi: f32) -> f32 {
    let x = if x < lo { lo } else { x };
    if x > hi { hi } else { x }
}

/// `x.max(lo)` by a comparison (NaN gives `lo`, like `f32::max`); see [`clamp`].
#[inline(always)]
pub fn at_least(x: f32, lo: f32) -> f32 {
    if x > lo { x } else { lo }
}

/// e^x for f32 (Cephes' polynomial on a magic-number range reduction), saturating outside
/// [-87, 88] instead of producing 0/inf.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5 * 2^23: adding it rounds to an integer
    let x = clamp(x, -87.0, 88.0);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    // x - n ln 2 in two parts (Cody-Waite) so the reduction keeps f32 accuracy.
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let mut p = 1.987_569_1e-4f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 0.166_666_65;
    p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    // 2^n from the integer in t's low mantissa bits.
    let bits = (t.to_bits() as i32 - 0x4B40_0000 + 127) << 23;
    y * f32::from_bits(bits as u32)
}

/// 1 / (1 + e^-x).
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// tanh x: 2 sigmoid(2x) - 1 for |x| >= 0.3, where that form keeps a few ulps; below, its
/// cancellation would cost relative accuracy (what the reversal defect measures near 0), so
/// the odd Taylor series to x^11 (truncation < 1e-9 relative at 0.3). Branch-free: both
/// are computed and one selected, which vectorises.
#[inline(always)]
pub fn tanh(x: f32) -> f32 {
    let far = 2.0 / (1.0 + exp(-2.0 * x)) - 1.0;
    let x2 = x * x;
    let mut p = -1382.0f32 / 155_925.0;
    p = p * x2 + 62.0 / 2835.0;
    p = p * x2 - 17.0 / 315.0;
    p = p * x2 + 2.0 / 15.0;
    p = p * x2 - 1.0 / 3.0;
    let near = x + x * x2 * p;
    if x.abs() < 0.3 { near } else { far }
}

#[cfg(test)]
mod tests {
    /// The comparison forms equal the std methods bit for bit, NaN and signed zeros included.
    #[test]
    fn clamp_and_at_least_are_the_std_methods() {
        let xs = [f32::NAN, -0.0, 0.0, -1.5, -1.0, 0.04, 0.05, 0.5, 1.0, 2.0, f32::INFINITY, f32::NEG_INFINITY, 1e-40];
        for x in xs {
            assert_eq!(super::clamp(x, -1.0, 1.0).to_bits(), x.clamp(-1.0, 1.0).to_bits(), "clamp {x}");
            assert_eq!(super::at_least(x, 0.05).to_bits(), x.max(0.05).to_bits(), "at_least {x}");
        }
    }

    #[test]
    fn close_to_libm() {
        let (mut exp_rel, mut sig_abs, mut tanh_abs, mut tanh_rel) = (0f64, 0f64, 0f64, 0f64);
        for i in 0..=400_000 {
            let x = (i as f32 / 400_000.0 - 0.5) * 60.0;
            if x.abs() < 80.0 {
                let want = (x as f64).exp();
                exp_rel = exp_rel.max(((super::exp(x) as f64 - want) / want).abs());
            }
            sig_abs = sig_abs.max((super::sigmoid(x) as f64 - 1.0 / (1.0 + (-(x as f64)).exp())).abs());
            let (got, want) = (super::tanh(x) as f64, (x as f64).tanh());
            tanh_abs = tanh_abs.max((got - want).abs());
            if x != 0.0 {
                tanh_rel = tanh_rel.max(((got - want) / want).abs());
            }
        }
        assert!(exp_rel < 2e-7, "exp relative error {exp_rel:e}");
        assert!(sig_abs < 1.5e-7, "sigmoid absolute error {sig_abs:e}");
        assert!(tanh_abs < 3e-7, "tanh absolute error {tanh_abs:e}");
        // Relative accuracy near 0 too (the series), a few ulps at most elsewhere.
        assert!(tanh_rel < 6e-7, "tanh relative error {tanh_rel:e}");
        let tiny = super::tanh(1e-6);
        assert!((tiny as f64 - 1e-6).abs() < 1e-12, "tanh(1e-6) = {tiny:e}");
        assert_eq!(super::exp(-1000.0), super::exp(-87.0));
        assert!(super::tanh(50.0) == 1.0 && super::tanh(-50.0) == -1.0);
    }
}
