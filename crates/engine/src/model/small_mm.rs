//! The product the recurrent kernels repeat most: `[rows × H] · [H × 3H]` with the cell's
//! weights (20 times per rebuilt GRU state in a reversal). At these sizes gemm's packing and
//! dispatch cost as much as the arithmetic; this AVX-512 kernel keeps an 8-row × 32-column tile
//! of the result in registers (4 or 1 rows at the end) and streams the weights from L1.
//!
//! Its arithmetic is gemm's own: each result is one fused multiply-add chain over k in order
//! from zero, then added to `dst` — so it is bit-identical to the gemm call it replaces
//! (tested against gemm for the shapes it takes), and the reports do not move. Without
//! AVX-512 (in wasm, or under `RDBENCH_SIMD=baseline`) [`product`] declines and the caller
//! runs gemm.

/// What a product is added to.
#[derive(Clone, Copy)]
pub enum Start<'a> {
    /// `dst` itself: `dst += a · b`.
    Dst,
    /// The same row in every row (a bias `[n]`): `dst = row + a · b`, as gemm's `dst += a · b`
    /// after copying the row into each row of `dst`, without the copies.
    Row(&'a [f32]),
}

/// `dst [m, n] (row-major) = start + a · b` with `a [m, k]` at strides (`a_rs`, `a_cs`) and
/// `b [k, n]` row-major, if the CPU has AVX-512; `false` (nothing written) if not.
#[allow(clippy::too_many_arguments)]
pub fn product(
    dst: &mut [f32],
    start: Start,
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    a_rs: usize,
    a_cs: usize,
    b: &[f32],
) -> bool {
    assert!(dst.len() >= m * n && b.len() >= k * n);
    assert!(m == 0 || k == 0 || (m - 1) * a_rs + (k - 1) * a_cs < a.len());
    let row = match start {
        Start::Row(row) => {
            assert!(row.len() >= n);
            row.as_ptr()
        }
        _ => std::ptr::null(),
    };
    #[cfg(target_arch = "x86_64")]
    if super::simd::Width::used() == super::simd::Width::Avx512 {
        // SAFETY: the CPU has AVX-512F; the asserts bound every element read and written.
        let x = avx512::Operands { dst: dst.as_mut_ptr(), row, n, k, a: a.as_ptr(), a_rs, a_cs, b: b.as_ptr() };
        unsafe { avx512::product(&x, m) };
        return true;
    }
    let _ = row;
    false
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// Lanes of a vector.
    const L: usize = 16;

    /// See [`super::product`]: `m` rows of `x`; the caller bounds the pointers.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn product(x: &Operands, m: usize) {
        let mut i = 0;
        // 8 rows x 2 vectors: 16 independent FMA chains, enough to keep both FMA ports busy
        // through the FMA's latency (4 rows x 2 vectors, 8 chains, is just enough on paper
        // and stalls in practice).
        while i + 8 <= m {
            // SAFETY: rows i..i + 8 are inside the product.
            unsafe { x.rows::<8>(i) };
            i += 8;
        }
        while i + 4 <= m {
            // SAFETY: rows i..i + 4 are inside the product.
            unsafe { x.rows::<4>(i) };
            i += 4;
        }
        while i < m {
            // SAFETY: row i is inside the product.
            unsafe { x.rows::<1>(i) };
            i += 1;
        }
    }

    /// The operands of one product (`dst [m, n] = start + a [m, k] · b [k, n]`).
    pub struct Operands {
        pub dst: *mut f32,
        /// The start row `[n]` added in every row, or null: add to `dst`'s own values.
        pub row: *const f32,
        pub n: usize,
        pub k: usize,
        pub a: *const f32,
        pub a_rs: usize,
        pub a_cs: usize,
        pub b: *const f32,
    }

    /// Lanes `j..j + 16` that are inside a row of `n` columns.
    #[inline(always)]
    fn mask(j: usize, n: usize) -> __mmask16 {
        let left = n.saturating_sub(j).min(L);
        ((1u32 << left) - 1) as __mmask16
    }

    impl Operands {
        /// Rows `i..i + R`: tiles of 2 vectors, then of 1 (the last one masked).
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn rows<const R: usize>(&self, i: usize) {
            let mut j = 0;
            while j + 2 * L <= self.n {
                // SAFETY: as the caller's, columns inside the row.
                unsafe { self.tile::<R, 2>(i, j) };
                j += 2 * L;
            }
            while j < self.n {
                // SAFETY: as above; the mask keeps the last vector inside the row.
                unsafe { self.tile::<R, 1>(i, j) };
                j += L;
            }
        }

        /// The `R × 16V` tile at row `i`, column `j`: one FMA chain per result over k in
        /// order, in registers, then added to `dst`.
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn tile<const R: usize, const V: usize>(&self, i: usize, j: usize) {
            let masks: [__mmask16; V] = std::array::from_fn(|v| mask(j + v * L, self.n));
            // SAFETY: called from `product` (AVX-512F); every pointer is row p of b, a[i + r, p],
            // row i + r of dst or the start row, columns j.. under the masks: inside the caller's
            // bounds.
            unsafe {
                let mut acc = [[_mm512_setzero_ps(); V]; R];
                for p in 0..self.k {
                    let brow = self.b.add(p * self.n + j);
                    let bv: [__m512; V] = std::array::from_fn(|v| _mm512_maskz_loadu_ps(masks[v], brow.add(v * L)));
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let av = _mm512_set1_ps(*self.a.add((i + r) * self.a_rs + p * self.a_cs));
                        for v in 0..V {
                            acc[v] = _mm512_fmadd_ps(av, bv[v], acc[v]);
                        }
                    }
                }
                for (r, acc) in acc.iter().enumerate() {
                    for v in 0..V {
                        let d = self.dst.add((i + r) * self.n + j + v * L);
                        let from = if self.row.is_null() { d.cast_const() } else { self.row.add(j + v * L) };
                        let out = _mm512_add_ps(_mm512_maskz_loadu_ps(masks[v], from), acc[v]);
                        _mm512_mask_storeu_ps(d, masks[v], out);
                    }
                }
            }
        }
    }
}
