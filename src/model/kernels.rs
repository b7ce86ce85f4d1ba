//! Fused kernels of the recurrent cells: one backend operation where the tensor code takes
//! hundreds (a GRU reversal is `reversal_iters` cell evaluations of ~20 tiny ops each, and at
//! these sizes every op costs more in dispatch than in arithmetic). They are burn backend
//! extensions, so each backend gets its own implementation: burn-flex (CPU, native and wasm)
//! here; the tensor-op versions in the model files stay as the reference and serve every
//! other backend.

use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, Flex, backend_extension};
use burn::tensor::{Device, Tensor, TensorData};

/// The cells' fused operations. Tensors are population-major `[R, ..]` like the model's.
#[backend_extension(Flex)]
pub trait CellKernels: Backend {
    /// GRU reversal (spec §5): from h_t `[R, N, H]` and x_t `[R, N, F]`, `iters` damped
    /// fixed-point iterations g = clamp((h_t - (1 - z) n) / max(z, 0.05), -1, 1), from g = h_t.
    /// Weights as in `Gru`: `w_ih [R, F, 3H]`, `w_hh [R, H, 3H]`, biases `[R, 1, 3H]`.
    #[allow(clippy::too_many_arguments)]
    fn gru_reverse(
        w_ih: FloatTensor<Self>,
        w_hh: FloatTensor<Self>,
        b_ih: FloatTensor<Self>,
        b_hh: FloatTensor<Self>,
        h: FloatTensor<Self>,
        x: FloatTensor<Self>,
        iters: usize,
    ) -> FloatTensor<Self>;
}

/// Whether `device` runs the fused kernels (burn-flex, without autodiff).
pub fn fused_on(device: &Device) -> bool {
    !device.is_autodiff() && matches!(device.as_dispatch(), burn::backend::DispatchDevice::Flex(_))
}

/// The fused GRU reversal on tensors (see [`CellKernels::gru_reverse`]).
pub fn gru_reverse(p: [&Tensor<3>; 4], h: Tensor<3>, x: Tensor<3>, iters: usize) -> Tensor<3> {
    let out = <burn::backend::Dispatch as CellKernels>::gru_reverse(
        p[0].clone().into_dispatch(),
        p[1].clone().into_dispatch(),
        p[2].clone().into_dispatch(),
        p[3].clone().into_dispatch(),
        h.into_dispatch(),
        x.into_dispatch(),
        iters,
    );
    Tensor::from_dispatch(out)
}

/// The tensor with a contiguous layout (copied only when it is not) and its dims.
fn contiguous(t: FlexTensor) -> (FlexTensor, [usize; 3]) {
    let t = if t.layout().contiguous_offsets().is_some() { t } else { t.to_contiguous() };
    let dims = t.layout().shape().dims::<3>();
    (t, dims)
}

fn sigmoid(v: f32) -> f32 {
    1.0 / (1.0 + (-v).exp())
}

/// `out[n, :] = a[n, :] @ w + b` for one run: `a [N, K]`, `w [K, M]`, `b [M]`, all
/// row-major. The product goes through `gemm` (the kernel burn-flex's matmul uses, with its
/// runtime SIMD dispatch).
fn affine(a: &[f32], w: &[f32], b: &[f32], n: usize, k: usize, m: usize, out: &mut [f32]) {
    assert!(a.len() >= n * k && w.len() >= k * m && b.len() == m && out.len() >= n * m);
    for row in out[..n * m].chunks_exact_mut(m) {
        row.copy_from_slice(b);
    }
    // SAFETY: the asserts above bound every index gemm touches (row-major strides: column
    // stride 1, row stride = row length).
    unsafe {
        gemm::gemm(
            n,
            m,
            k,
            out.as_mut_ptr(),
            1,
            m as isize,
            true,
            a.as_ptr(),
            1,
            k as isize,
            w.as_ptr(),
            1,
            m as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

impl CellKernels for Flex {
    fn gru_reverse(
        w_ih: FlexTensor,
        w_hh: FlexTensor,
        b_ih: FlexTensor,
        b_hh: FlexTensor,
        h: FlexTensor,
        x: FlexTensor,
        iters: usize,
    ) -> FlexTensor {
        let (w_ih, [r, f, h3]) = contiguous(w_ih);
        let (w_hh, [_, hid, _]) = contiguous(w_hh);
        let (b_ih, _) = contiguous(b_ih);
        let (b_hh, _) = contiguous(b_hh);
        let (h, [_, n, _]) = contiguous(h);
        let (x, _) = contiguous(x);
        let s = |t: &FlexTensor| -> Vec<f32> { t.as_slice::<f32>().expect("f32 contiguous").to_vec() };
        let (w_ih, w_hh, b_ih, b_hh, h, x) = (s(&w_ih), s(&w_hh), s(&b_ih), s(&b_hh), s(&h), s(&x));
        let mut out = h.clone();
        let mut gi = vec![0f32; n * h3];
        let mut gh = vec![0f32; n * h3];
        for run in 0..r {
            let wi = &w_ih[run * f * h3..(run + 1) * f * h3];
            let wh = &w_hh[run * hid * h3..(run + 1) * hid * h3];
            let (bi, bh) = (&b_ih[run * h3..(run + 1) * h3], &b_hh[run * h3..(run + 1) * h3]);
            let ht = &h[run * n * hid..(run + 1) * n * hid];
            // The input projection does not change between iterations: once per call.
            affine(&x[run * n * f..(run + 1) * n * f], wi, bi, n, f, h3, &mut gi);
            let g = &mut out[run * n * hid..(run + 1) * n * hid];
            for _ in 0..iters {
                affine(g, wh, bh, n, hid, h3, &mut gh);
                for row in 0..n {
                    let (gir, ghr) = (&gi[row * h3..(row + 1) * h3], &gh[row * h3..(row + 1) * h3]);
                    let (gr, htr) = (&mut g[row * hid..(row + 1) * hid], &ht[row * hid..(row + 1) * hid]);
                    for j in 0..hid {
                        let rg = sigmoid(gir[j] + ghr[j]);
                        let z = sigmoid(gir[hid + j] + ghr[hid + j]);
                        let nn = (gir[2 * hid + j] + rg * ghr[2 * hid + j]).tanh();
                        gr[j] = ((htr[j] - (1.0 - z) * nn) / z.max(0.05)).clamp(-1.0, 1.0);
                    }
                }
            }
        }
        FlexTensor::from_data(TensorData::new(out, [r, n, hid]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Gru;
    use burn::tensor::Distribution;

    #[test]
    fn fused_gru_reversal_equals_the_tensor_ops() {
        let device = Device::flex();
        assert!(fused_on(&device));
        assert!(!fused_on(&device.clone().autodiff()));
        let (r, n, f, h) = (3, 7, 2, 5);
        let u = |shape: [usize; 3]| Tensor::<3>::random(shape, Distribution::Uniform(-0.8, 0.8), &device);
        let p = vec![u([r, f, 3 * h]), u([r, h, 3 * h]), u([r, 1, 3 * h]), u([r, 1, 3 * h])];
        let (ht, x) = (u([r, n, h]), u([r, n, f]));
        let gru = Gru::new(f, h, f);
        for iters in [1, 3, 20] {
            let want = gru.reverse_unfused(&p, ht.clone(), x.clone(), iters).into_data().try_to_vec::<f32>().unwrap();
            let got = gru_reverse([&p[0], &p[1], &p[2], &p[3]], ht.clone(), x.clone(), iters)
                .into_data()
                .try_to_vec::<f32>()
                .unwrap();
            let worst = want.iter().zip(&got).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
            assert!(worst < 1e-5, "{iters} iterations: max |fused - tensor ops| = {worst}");
        }
    }
}
