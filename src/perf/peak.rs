//! This core's f32 peak: a register-only loop of independent fused multiply-adds at the
//! widest vector width the CPU has, the ceiling the kernels' GFLOP/s are read against.

use web_time::Instant;

/// One core's measured f32 FMA throughput.
pub struct Peak {
    /// GFLOP/s (a fused multiply-add counts 2).
    pub gflops: f64,
    /// The instructions it ran.
    pub unit: &'static str,
}

/// Independent accumulators: more than FMA latency × FMA ports, so the loop is bound by
/// throughput, not by one chain's latency.
const CHAINS: usize = 16;

/// Measure this core's peak: the best of five ~0.1 s runs. `None` where no FMA unit is known
/// (outside x86_64, or without AVX2 + FMA).
pub fn measure() -> Option<Peak> {
    #[cfg(target_arch = "x86_64")]
    {
        type Kernel = unsafe fn(u64) -> f32;
        let (kernel, lanes, unit): (Kernel, usize, _) = if std::arch::is_x86_feature_detected!("avx512f") {
            (x86::fma512, 16, "AVX-512 FMA")
        } else if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            (x86::fma256, 8, "AVX2 FMA")
        } else {
            return None;
        };
        let iters = 2_000_000u64;
        let best = (0..5)
            .map(|_| {
                let t0 = Instant::now();
                // SAFETY: the CPU has the features the kernel is compiled for (checked above).
                std::hint::black_box(unsafe { kernel(std::hint::black_box(iters)) });
                t0.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min);
        let flop = iters as f64 * (CHAINS * lanes * 2) as f64;
        Some(Peak { gflops: flop / best / 1e9, unit })
    }
    #[cfg(not(target_arch = "x86_64"))]
    None
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::CHAINS;
    use std::arch::x86_64::*;

    /// `iters` rounds of one FMA on each of the 16 accumulators of 16 lanes.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma512(iters: u64) -> f32 {
        let (a, b) = (_mm512_set1_ps(0.999_999), _mm512_set1_ps(1e-7));
        let mut acc = [_mm512_setzero_ps(); CHAINS];
        for _ in 0..iters {
            for r in acc.iter_mut() {
                *r = _mm512_fmadd_ps(*r, a, b);
            }
        }
        _mm512_reduce_add_ps(acc.into_iter().fold(_mm512_setzero_ps(), |s, r| _mm512_add_ps(s, r)))
    }

    /// As [`fma512`] with 8 lanes.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn fma256(iters: u64) -> f32 {
        let (a, b) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
        let mut acc = [_mm256_setzero_ps(); CHAINS];
        for _ in 0..iters {
            for r in acc.iter_mut() {
                *r = _mm256_fmadd_ps(*r, a, b);
            }
        }
        let s = acc.into_iter().fold(_mm256_setzero_ps(), |s, r| _mm256_add_ps(s, r));
        let mut out = [0f32; 8];
        // SAFETY: `out` holds the 8 values stored.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), s) };
        out.iter().sum()
    }
}
