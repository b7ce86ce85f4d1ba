//! Runtime choice of the widest SIMD the CPU has for the fused kernels' elementwise loops.
//! The gate math is written as plain loops over disjoint slices, which LLVM vectorises at
//! whatever width the enclosing function is compiled for; natively the baseline is SSE2
//! (4 lanes), so [`widest`] runs the loop inside a copy compiled for AVX-512 or AVX2 when the
//! CPU has it. The results are bit-identical at every width: each lane computes the same
//! IEEE operations in the same order (Rust never contracts a * b + c into an FMA), so the
//! reports do not depend on the machine's SIMD. In wasm the crate is compiled with simd128.
//!
//! `RDBENCH_SIMD=baseline` holds the fused kernels to the target's baseline (SSE2 natively,
//! gemm instead of `small_mm`): what the wider vectors buy, measured, and a check that the
//! reports are the same either way (tested).

use std::sync::OnceLock;

/// The environment variable that caps the kernels' SIMD.
pub const ENV: &str = "RDBENCH_SIMD";

/// Whether `RDBENCH_SIMD` allows vectors wider than the baseline: unset, empty or `widest`
/// yes, `baseline` no; anything else is an error naming the variable.
pub fn from_env() -> Result<bool, String> {
    match std::env::var(ENV) {
        Err(std::env::VarError::NotPresent) => Ok(true),
        Ok(v) if v.is_empty() || v == "widest" => Ok(true),
        Ok(v) if v == "baseline" => Ok(false),
        Ok(v) => Err(format!("{ENV}={v:?} is not one of: widest, baseline")),
        Err(e) => Err(format!("{ENV}: {e}")),
    }
}

/// Whether the kernels may use wider vectors than the baseline (read once; an invalid value
/// counts as unset here, the CLI refuses it before any work).
pub fn wide_allowed() -> bool {
    static WIDE: OnceLock<bool> = OnceLock::new();
    *WIDE.get_or_init(|| from_env().unwrap_or(true))
}

/// A SIMD width the kernels can be compiled for: the one place that asks the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// AVX-512 (16 f32 lanes, with FMA).
    Avx512,
    /// AVX2 with FMA (8 lanes).
    Avx2,
    /// The target's baseline: SSE2 natively, simd128 in wasm (4 lanes, no FMA).
    Baseline,
}

impl Width {
    /// What this CPU has (AVX2 counts only with FMA), whatever `RDBENCH_SIMD` says.
    pub fn detected() -> Width {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Width::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                return Width::Avx2;
            }
        }
        Width::Baseline
    }

    /// What the kernels use: [`Width::detected`], or the baseline under
    /// `RDBENCH_SIMD=baseline`.
    pub fn used() -> Width {
        if wide_allowed() { Width::detected() } else { Width::Baseline }
    }

    /// In words, for the benchmark's header.
    pub fn describe(self) -> &'static str {
        match self {
            Width::Avx512 => "AVX-512 (16 f32 lanes)",
            Width::Avx2 => "AVX2 (8 f32 lanes)",
            Width::Baseline if cfg!(target_arch = "wasm32") => "wasm simd128 (4 f32 lanes)",
            Width::Baseline => "SSE2 (4 f32 lanes)",
        }
    }
}

/// Run `f` compiled for [`Width::used`] (`f` and what it calls must be `#[inline(always)]` to
/// be compiled into that copy).
#[inline(always)]
pub fn widest<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    match Width::used() {
        // SAFETY: the CPU has the features each copy is compiled for (`Width::detected`).
        Width::Avx512 => return unsafe { avx512(f) },
        Width::Avx2 => return unsafe { avx2(f) },
        Width::Baseline => {}
    }
    f()
}

/// The width [`widest`] uses here, in words (and whether `RDBENCH_SIMD` capped it).
pub fn level() -> String {
    let used = Width::used();
    if used != Width::detected() {
        return format!("{}, capped by {ENV}=baseline", used.describe());
    }
    used.describe().to_string()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")]
unsafe fn avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
