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

/// Run `f` compiled for the widest SIMD this CPU has (`f` and what it calls must be
/// `#[inline(always)]` to be compiled into that copy).
#[inline(always)]
pub fn widest<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if wide_allowed() {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has the features the copy is compiled for.
            return unsafe { avx512(f) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: as above.
            return unsafe { avx2(f) };
        }
    }
    f()
}

/// The SIMD level [`widest`] uses on this CPU, for the benchmark's header.
pub fn level() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if !wide_allowed() {
            return "SSE2 (4 f32 lanes, capped by RDBENCH_SIMD=baseline)";
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            return "AVX-512 (16 f32 lanes)";
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return "AVX2 (8 f32 lanes)";
        }
        "SSE2 (4 f32 lanes)"
    }
    #[cfg(target_arch = "wasm32")]
    return "wasm simd128 (4 f32 lanes)";
    #[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
    "the target's baseline"
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
