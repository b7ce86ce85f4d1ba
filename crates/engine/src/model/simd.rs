//! Runtime choice of the widest SIMD the CPU has for the fused kernels' elementwise loops.
//! The gate math is written as plain loops over disjoint slices, which LLVM vectorises at
//! whatever width the enclosing function is compiled for; natively the baseline is SSE2
//! (4 lanes), so [`widest`] runs the loop inside a copy compiled for AVX-512 or AVX2 when the
//! CPU has it. The results are bit-identical at every width: each lane computes the same
//! IEEE operations in the same order (Rust never contracts a * b + c into an FMA), so the
//! reports do not depend on the machine's SIMD. In wasm the crate is compiled with simd128.

/// Run `f` compiled for the widest SIMD this CPU has (`f` and what it calls must be
/// `#[inline(always)]` to be compiled into that copy).
#[inline(always)]
pub fn widest<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
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
