//! Fused kernels of the recurrent cells: one backend operation where the tensor code takes
//! hundreds (a GRU reversal is `reversal_iters` cell evaluations of ~20 tiny ops each, and at
//! these sizes every op costs more in dispatch than in arithmetic). They are burn backend
//! extensions, so each backend gets its own implementation: burn-flex (CPU, native and wasm)
//! here, burn's `Cube` (WebGPU, Vulkan) in `cube_kernels`; the tensor-op versions in the
//! model files stay as the reference and serve every other backend.

use super::fast_math as fm;
use super::gru_params::GruParam;
use super::simd;
use super::small_mm::{self, Start};
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, ExtensionType, Flex, backend_extension};
use burn::tensor::{Device, Tensor, TensorData};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// The runtime-dispatched backend the tensor API runs on.
type D = burn::backend::Dispatch;

/// One tensor per GRU parameter (or per gradient), in the model's order.
#[derive(ExtensionType)]
pub struct GruTensors<B: Backend> {
    /// `[R, F, 3H]`.
    pub w_ih: FloatTensor<B>,
    /// `[R, H, 3H]`.
    pub w_hh: FloatTensor<B>,
    /// `[R, 1, 3H]`.
    pub b_ih: FloatTensor<B>,
    /// `[R, 1, 3H]`.
    pub b_hh: FloatTensor<B>,
    /// `[R, H, O]`.
    pub w_o: FloatTensor<B>,
    /// `[R, 1, O]`.
    pub b_o: FloatTensor<B>,
}

impl GruTensors<D> {
    fn of(t: &[Tensor<3>]) -> Self {
        let d = |p: GruParam| t[p.index()].clone().into_dispatch();
        GruTensors {
            w_ih: d(GruParam::WIh),
            w_hh: d(GruParam::WHh),
            b_ih: d(GruParam::BIh),
            b_hh: d(GruParam::BHh),
            w_o: d(GruParam::WO),
            b_o: d(GruParam::BO),
        }
    }

    fn into_tensors(self) -> [Tensor<3>; 6] {
        let mut slots: [Option<FloatTensor<D>>; 6] = Default::default();
        for (p, t) in [
            (GruParam::WIh, self.w_ih),
            (GruParam::WHh, self.w_hh),
            (GruParam::BIh, self.b_ih),
            (GruParam::BHh, self.b_hh),
            (GruParam::WO, self.w_o),
            (GruParam::BO, self.b_o),
        ] {
            slots[p.index()] = Some(t);
        }
        slots.map(|t| Tensor::from_dispatch(t.expect("every parameter has a slot")))
    }
}

/// The cells' fused operations. Tensors are population-major `[R, ..]` like the model's;
/// GRU weights as in `Gru`: `w_ih [R, F, 3H]`, `w_hh [R, H, 3H]`, biases `[R, 1, 3H]`,
/// readout `w_o [R, H, O]`, `b_o [R, 1, O]`.
#[backend_extension(Flex, Cube: cfg(feature = "cube"))]
pub trait CellKernels: Backend {
    /// GRU reversal (spec §5): from h_t `[R, N, H]` and x_t `[R, N, F]`, `iters` damped
    /// fixed-point iterations g = clamp((h_t - (1 - z) n) / max(z, 0.05), -1, 1), from g = h_t.
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

    /// One GRU step h_t from h_{t-1} `[R, N, H]` and x_t `[R, N, F]`.
    fn gru_step(
        w_ih: FloatTensor<Self>,
        w_hh: FloatTensor<Self>,
        b_ih: FloatTensor<Self>,
        b_hh: FloatTensor<Self>,
        h: FloatTensor<Self>,
        x: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
}

/// Which loss term a fused VJP step differentiates at its readout (`StepLoss` without its
/// tensors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadoutLoss {
    /// None: the readout is not computed.
    None,
    /// `scale * sum((p - y)^2)`.
    Squared,
    /// `scale * sum over rows of -y . log softmax(p)`.
    CrossEntropy,
}

/// The GRU's vector-Jacobian product on the CPU, with one tensor per gradient (the GPU
/// packs them instead: `cube_kernels::GruCubeKernels`).
#[backend_extension(Flex)]
pub trait GruHostVjp: Backend {
    /// The GRU's one-step vector-Jacobian product with its readout (see
    /// `RecurrentModel::step_vjp`): re-run the step from `h_prev`, add to `grads` (w_ih, w_hh,
    /// b_ih, b_hh, w_o, b_o, like `params`) the gradient of `loss` at p = h' w_o + b_o against
    /// `y` (weighted by `scale`) `+ dh . h'`, return the gradient for `h_prev` and the updated
    /// gradients. With [`ReadoutLoss::None`] `y` is not read.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn gru_step_vjp(
        #[extension_type] params: GruTensors<Self>,
        h_prev: FloatTensor<Self>,
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        dh: FloatTensor<Self>,
        loss: ReadoutLoss,
        scale: f32,
        #[extension_type] grads: GruTensors<Self>,
    ) -> (FloatTensor<Self>, GruTensors<Self>);
}

/// Whether `device` runs the fused CPU kernels (burn-flex, without autodiff).
pub fn fused_on(device: &Device) -> bool {
    !device.is_autodiff() && matches!(device.as_dispatch(), burn::backend::DispatchDevice::Flex(_))
}

/// Whether `device` runs the fused GPU kernels (burn's cubecl backend, without autodiff).
pub fn cube_on(device: &Device) -> bool {
    !device.is_autodiff() && crate::backend::cube_device(device)
}

/// The fused GRU reversal on tensors (see [`CellKernels::gru_reverse`]).
pub fn gru_reverse(p: [&Tensor<3>; 4], h: Tensor<3>, x: Tensor<3>, iters: usize) -> Tensor<3> {
    let [a, b, c, d] = p.map(|t| t.clone().into_dispatch());
    Tensor::from_dispatch(<D as CellKernels>::gru_reverse(a, b, c, d, h.into_dispatch(), x.into_dispatch(), iters))
}

/// The fused GRU step on tensors (see [`CellKernels::gru_step`]).
pub fn gru_step(p: [&Tensor<3>; 4], h: Tensor<3>, x: Tensor<3>) -> Tensor<3> {
    let [a, b, c, d] = p.map(|t| t.clone().into_dispatch());
    Tensor::from_dispatch(<D as CellKernels>::gru_step(a, b, c, d, h.into_dispatch(), x.into_dispatch()))
}

/// The fused GRU vector-Jacobian product (see [`GruHostVjp::gru_step_vjp`]); `p` and
/// `grads` in the model's order (w_ih, w_hh, b_ih, b_hh, w_o, b_o).
pub fn gru_step_vjp(p: &[Tensor<3>], s: super::VjpStep, grads: &mut [Tensor<3>]) -> Tensor<3> {
    use super::StepLoss;
    let (y, loss, scale) = match s.loss {
        // A one-value stand-in: the kernel reads no target at a step without a loss.
        StepLoss::None => (Tensor::<3>::zeros([1, 1, 1], &s.dh.device()), ReadoutLoss::None, 0.0),
        StepLoss::Squared { y, scale } => (y, ReadoutLoss::Squared, scale),
        StepLoss::CrossEntropy { y, scale } => (y, ReadoutLoss::CrossEntropy, scale),
    };
    let (dh_prev, out) = <D as GruHostVjp>::gru_step_vjp(
        GruTensors::of(p),
        s.h_prev.into_dispatch(),
        s.x.into_dispatch(),
        y.into_dispatch(),
        s.dh.into_dispatch(),
        loss,
        scale,
        GruTensors::of(grads),
    );
    for (slot, v) in grads.iter_mut().zip(out.into_tensors()) {
        *slot = v;
    }
    Tensor::from_dispatch(dh_prev)
}

/// A tensor's f32 values (contiguous) and its dims.
pub(super) fn values(t: FlexTensor) -> (Vec<f32>, [usize; 3]) {
    let t = if t.layout().contiguous_offsets().is_some() { t } else { t.to_contiguous() };
    let dims = t.layout().shape().dims::<3>();
    (t.as_slice::<f32>().expect("f32 tensor").to_vec(), dims)
}

/// A tensor's f32 values in one contiguous block, borrowed: no copy when the tensor already is
/// contiguous (weights, states and inputs are), where [`values`] copies.
pub(super) struct Borrowed {
    t: FlexTensor,
    pub(super) dims: [usize; 3],
}

impl Borrowed {
    pub(super) fn of(t: FlexTensor) -> Self {
        let t = if t.layout().contiguous_offsets().is_some() { t } else { t.to_contiguous() };
        let dims = t.layout().shape().dims::<3>();
        Borrowed { t, dims }
    }

    pub(super) fn v(&self) -> &[f32] {
        self.t.as_slice::<f32>().expect("f32 tensor")
    }
}

pub(super) fn tensor(v: Vec<f32>, dims: [usize; 3]) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(v, dims))
}

/// A matrix operand of [`mm`]: its values with row and column strides.
#[derive(Clone, Copy)]
pub(super) struct Mat<'a> {
    pub(super) v: &'a [f32],
    pub(super) rs: usize,
    pub(super) cs: usize,
}

impl<'a> Mat<'a> {
    /// Row-major `[rows, cols]` (the last `cols` is the row stride).
    pub(super) fn rows(v: &'a [f32], cols: usize) -> Self {
        Mat { v, rs: cols, cs: 1 }
    }
    /// The transpose of a row-major matrix with `cols` columns.
    pub(super) fn t(v: &'a [f32], cols: usize) -> Self {
        Mat { v, rs: 1, cs: cols }
    }
    /// This matrix transposed (the same values, strides swapped).
    pub(super) fn transposed(self) -> Self {
        Mat { v: self.v, rs: self.cs, cs: self.rs }
    }
    /// Row `i`'s first `len` values (a matrix whose columns are adjacent).
    #[inline(always)]
    pub(super) fn row(&self, i: usize, len: usize) -> &'a [f32] {
        debug_assert_eq!(self.cs, 1, "a row of adjacent values");
        &self.v[i * self.rs..][..len]
    }
}

/// Matmul FLOPs (2 m n k per product) the fused kernels have executed, process-wide: the
/// benchmark's measured FLOP count. Elementwise work is not counted.
static FLOPS: AtomicU64 = AtomicU64::new(0);

/// Matmul FLOPs executed by the fused kernels so far (see the benchmark).
pub fn flops() -> u64 {
    FLOPS.load(Ordering::Relaxed)
}

/// `dst [m, n]` (row-major) = `start + a [m, k] · b [k, n]`: through `small_mm` where it sums
/// as gemm does, else through `gemm` (the matmul burn-flex itself uses, with its runtime SIMD
/// dispatch), a start row first copied into each row.
fn mm(dst: &mut [f32], start: Start, m: usize, n: usize, k: usize, a: Mat, b: Mat) {
    FLOPS.fetch_add((2 * m * n * k) as u64, Ordering::Relaxed);
    let last = |x: Mat, r: usize, c: usize| (r.max(1) - 1) * x.rs + (c.max(1) - 1) * x.cs;
    assert!(dst.len() >= m * n && last(a, m, k) < a.v.len().max(1) && last(b, k, n) < b.v.len().max(1));
    if m == 0 || n == 0 {
        return;
    }
    if b.cs == 1 && uses_small_mm(m, n, k) && small_mm::product(dst, start, m, n, k, a.v, a.rs, a.cs, b.v) {
        return;
    }
    if let Start::Row(row) = start {
        for r in dst[..m * n].chunks_exact_mut(n) {
            r.copy_from_slice(&row[..n]);
        }
    }
    if k > 0 {
        gemm_mm(dst, m, n, k, a, b);
    }
}

/// Whether [`mm`] takes `small_mm` (when the CPU has AVX-512 and `b` is row-major): not for
/// k <= 2, a single row or a single column, where gemm sums in another order (its
/// outer-product and matrix-vector paths), so that the product stays bit-identical to gemm's.
fn uses_small_mm(m: usize, n: usize, k: usize) -> bool {
    k >= 3 && m >= 2 && n >= 2
}

/// Whether gemm computes `[m, k] · [k, n]` with `a` row-major and `b` column-major as dot
/// products (its "horizontal" kernels, up to 16 × 16 results), which sum in another order than
/// its other kernels and `small_mm`.
fn gemm_dots(m: usize, n: usize) -> bool {
    m * n <= 16 * 16
}

/// `dst += a · b` through gemm. Its packing scratch is not metered (`memory::unmetered`).
fn gemm_mm(dst: &mut [f32], m: usize, n: usize, k: usize, a: Mat, b: Mat) {
    // SAFETY: the assert bounds every element gemm reads or writes through these strides.
    crate::memory::unmetered(|| unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            true,
            a.v.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.v.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    })
}

/// The cell's hidden product alone, `out [rows, 3H] = h [rows, H] · W_hh [H, 3H] + b_hh`, as
/// the fused kernels run it (`small_mm` where the CPU has AVX-512, else gemm): the benchmark's
/// measure of the product against the core's peak, without the gate math around it.
pub fn hidden_product(out: &mut [f32], h: &[f32], w_hh: &[f32], b_hh: &[f32], rows: usize, hid: usize) {
    affine(out, h, w_hh, b_hh, rows, hid, 3 * hid);
}

/// `out[n, :] = a[n, :] · w + b` (row-major `a [N, K]`, `w [K, M]`, `b [M]`).
fn affine(out: &mut [f32], a: &[f32], w: &[f32], b: &[f32], n: usize, k: usize, m: usize) {
    mm(out, Start::Row(b), n, m, k, Mat::rows(a, k), Mat::rows(w, m));
}

/// Add the column sums of `g [N, M]` to `acc [M]`.
fn add_col_sums(acc: &mut [f32], g: &[f32], m: usize) {
    for row in g.chunks_exact(m) {
        for (a, v) in acc.iter_mut().zip(row) {
            *a += v;
        }
    }
}

/// Run `r`'s slice of a population tensor of `len` values per run.
pub(super) fn run_of(v: &[f32], r: usize, len: usize) -> &[f32] {
    &v[r * len..(r + 1) * len]
}

pub(super) fn run_of_mut(v: &mut [f32], r: usize, len: usize) -> &mut [f32] {
    &mut v[r * len..(r + 1) * len]
}

/// A `[3H]` gate row's three blocks (r | z | n).
#[inline(always)]
fn thirds(v: &[f32], hid: usize) -> [&[f32]; 3] {
    let (a, rest) = v[..3 * hid].split_at(hid);
    let (b, c) = rest.split_at(hid);
    [a, b, c]
}

/// [`thirds`] of a row being written.
#[inline(always)]
fn thirds_mut(v: &mut [f32], hid: usize) -> [&mut [f32]; 3] {
    let (a, rest) = v[..3 * hid].split_at_mut(hid);
    let (b, c) = rest.split_at_mut(hid);
    [a, b, c]
}

// The elementwise loops below run over disjoint slices in spans of `LANES` values (see
// `by_lanes`); `simd::widest` compiles them for the CPU's widest SIMD, bit-identical at every
// width.

/// Values per span: one AVX-512 vector, two AVX2 ones, four of SSE2 or wasm simd128.
const LANES: usize = 16;

/// Call `f` on `0..len` in spans of [`LANES`] and then on the rest. A span's fixed length
/// is what lets LLVM vectorise a loop of only `hid` (32) values: given the whole row it picks
/// a vector width times an unroll factor above 32 and runs the scalar remainder instead.
#[inline(always)]
fn by_lanes(len: usize, mut f: impl FnMut(Range<usize>)) {
    let whole = len - len % LANES;
    let mut start = 0;
    while start < whole {
        f(start..start + LANES);
        start += LANES;
    }
    if whole < len {
        f(whole..len);
    }
}

/// GRU gates of one run for `n` rows: r, z, n and hn = W_hn h + b_hn, from the input part
/// `gi [N, 3H]` and the hidden part `gh [N, 3H]` (overwritten with r | z | n).
#[inline(always)]
fn gates(gi: &[f32], gh: &mut [f32], hn: &mut [f32], n: usize, hid: usize) {
    let h3 = 3 * hid;
    simd::widest(
        #[inline(always)]
        || {
            let rows = gi.chunks_exact(h3).zip(gh.chunks_exact_mut(h3)).zip(hn.chunks_exact_mut(hid)).take(n);
            for ((gir, ghr), hnr) in rows {
                let [ir, iz, inn] = thirds(gir, hid);
                let [r, z, nn] = thirds_mut(ghr, hid);
                hnr.copy_from_slice(nn);
                by_lanes(
                    hid,
                    #[inline(always)]
                    |s| {
                        let ([ir, iz, inn], hn) = ([ir, iz, inn].map(|v| &v[s.clone()]), &hnr[s.clone()]);
                        let (r, z, nn) = (&mut r[s.clone()], &mut z[s.clone()], &mut nn[s]);
                        for j in 0..r.len() {
                            r[j] = fm::sigmoid(ir[j] + r[j]);
                            z[j] = fm::sigmoid(iz[j] + z[j]);
                            nn[j] = fm::tanh(inn[j] + r[j] * hn[j]);
                        }
                    },
                );
            }
        },
    )
}

/// `out [N, H] = n + z (h - n)`: the new state from the gates `g [N, 3H]` (r | z | n) and the
/// previous state `h [N, H]`.
#[inline(always)]
fn blend(out: &mut [f32], g: &[f32], h: &[f32], hid: usize) {
    simd::widest(
        #[inline(always)]
        || {
            for ((o, g), h) in out.chunks_exact_mut(hid).zip(g.chunks_exact(3 * hid)).zip(h.chunks_exact(hid)) {
                let [_, z, nn] = thirds(g, hid);
                by_lanes(
                    hid,
                    #[inline(always)]
                    |s| {
                        let ([z, nn, h], o) = ([z, nn, h].map(|v| &v[s.clone()]), &mut o[s]);
                        for j in 0..o.len() {
                            o[j] = nn[j] + z[j] * (h[j] - nn[j]);
                        }
                    },
                );
            }
        },
    )
}

/// One reversal iteration for `n` rows (spec §5): `g = clamp((h_t - (1 - z) n) / max(z,
/// 0.05), -1, 1)` with the gates of the current guess, from the input part `gi [N, 3H]` and
/// the hidden part `gh [N, 3H]` of `g`.
#[inline(always)]
fn reversal_update(g: &mut [f32], gi: &[f32], gh: &[f32], ht: &[f32], hid: usize) {
    let h3 = 3 * hid;
    simd::widest(
        #[inline(always)]
        || {
            let rows =
                g.chunks_exact_mut(hid).zip(gi.chunks_exact(h3)).zip(gh.chunks_exact(h3)).zip(ht.chunks_exact(hid));
            for (((gr, gir), ghr), htr) in rows {
                let ([ir, iz, inn], [hr, hz, hnn]) = (thirds(gir, hid), thirds(ghr, hid));
                by_lanes(
                    hid,
                    #[inline(always)]
                    |s| {
                        let [ir, iz, inn, hr, hz, hnn, ht] = [ir, iz, inn, hr, hz, hnn, htr].map(|v| &v[s.clone()]);
                        let g = &mut gr[s];
                        for j in 0..g.len() {
                            let rg = fm::sigmoid(ir[j] + hr[j]);
                            let z = fm::sigmoid(iz[j] + hz[j]);
                            let nn = fm::tanh(inn[j] + rg * hnn[j]);
                            g[j] = fm::clamp((ht[j] - (1.0 - z) * nn) / fm::at_least(z, 0.05), -1.0, 1.0);
                        }
                    },
                );
            }
        },
    )
}

/// Back through h' = n + z (h - n) and the gates for `n` rows: from `dh [N, H]` (the gradient
/// at h'), the gates `g [N, 3H]`, `hn [N, H]` and the previous state `h [N, H]`, write the
/// pre-activation gradients of the input part `dgi` and the hidden part `dgh` (`[N, 3H]`)
/// and `dh_prev = dh z` (the direct path; the product through W_hh is added after).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn gates_vjp(
    dgi: &mut [f32],
    dgh: &mut [f32],
    dh_prev: &mut [f32],
    dh: &[f32],
    g: &[f32],
    hn: &[f32],
    h: &[f32],
    hid: usize,
) {
    let h3 = 3 * hid;
    simd::widest(
        #[inline(always)]
        || {
            let outs = dgi.chunks_exact_mut(h3).zip(dgh.chunks_exact_mut(h3)).zip(dh_prev.chunks_exact_mut(hid));
            let ins = dh.chunks_exact(hid).zip(g.chunks_exact(h3)).zip(hn.chunks_exact(hid)).zip(h.chunks_exact(hid));
            for (((dgir, dghr), dhp), (((d, g), hnr), hr)) in outs.zip(ins) {
                let ([di_r, di_z, di_n], [dh_r, dh_z, dh_n]) = (thirds_mut(dgir, hid), thirds_mut(dghr, hid));
                let [rg, z, nn] = thirds(g, hid);
                by_lanes(
                    hid,
                    #[inline(always)]
                    |s| {
                        let [d, rg, z, nn, hn, h] = [d, rg, z, nn, hnr, hr].map(|v| &v[s.clone()]);
                        let [di_r, di_z, di_n, dh_r, dh_z, dh_n, dhp] = [
                            &mut di_r[s.clone()],
                            &mut di_z[s.clone()],
                            &mut di_n[s.clone()],
                            &mut dh_r[s.clone()],
                            &mut dh_z[s.clone()],
                            &mut dh_n[s.clone()],
                            &mut dhp[s],
                        ];
                        for j in 0..dhp.len() {
                            let dz = d[j] * (h[j] - nn[j]);
                            let dn = d[j] * (1.0 - z[j]);
                            dhp[j] = d[j] * z[j];
                            let dan = dn * (1.0 - nn[j] * nn[j]);
                            let dar = dan * hn[j] * rg[j] * (1.0 - rg[j]);
                            let daz = dz * z[j] * (1.0 - z[j]);
                            di_r[j] = dar;
                            di_z[j] = daz;
                            di_n[j] = dan;
                            dh_r[j] = dar;
                            dh_z[j] = daz;
                            dh_n[j] = dan * rg[j];
                        }
                    },
                );
            }
        },
    )
}

/// Replace the readout `p [N, O]` (row-major) by its loss term's gradient against `y`:
/// `2 scale (p - y)`, or `scale (softmax(p) - y)` per row (the max subtracted first).
fn readout_grad(p: &mut [f32], y: &[f32], o: usize, loss: ReadoutLoss, scale: f32) {
    match loss {
        ReadoutLoss::None => p.fill(0.0),
        ReadoutLoss::Squared => {
            for (d, t) in p.iter_mut().zip(y) {
                *d = 2.0 * scale * (*d - t);
            }
        }
        ReadoutLoss::CrossEntropy => {
            for (row, t) in p.chunks_exact_mut(o).zip(y.chunks_exact(o)) {
                let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let mut sum = 0.0f32;
                for v in row.iter_mut() {
                    *v = fm::exp(*v - max);
                    sum += *v;
                }
                for (v, t) in row.iter_mut().zip(t) {
                    *v = scale * (*v / sum - t);
                }
            }
        }
    }
}

/// A population's GRU cell weights as host values, with its sizes: what every GRU kernel
/// unpacks first.
struct Cell {
    w_ih: Borrowed,
    w_hh: Borrowed,
    b_ih: Borrowed,
    b_hh: Borrowed,
    /// Runs, input features, hidden units, 3 x hidden.
    r: usize,
    f: usize,
    hid: usize,
    h3: usize,
}

impl Cell {
    fn load(w_ih: FlexTensor, w_hh: FlexTensor, b_ih: FlexTensor, b_hh: FlexTensor) -> Self {
        let (w_ih, w_hh) = (Borrowed::of(w_ih), Borrowed::of(w_hh));
        let ([r, f, h3], [_, hid, _]) = (w_ih.dims, w_hh.dims);
        Cell { w_ih, w_hh, b_ih: Borrowed::of(b_ih), b_hh: Borrowed::of(b_hh), r, f, hid, h3 }
    }

    /// Run `run`'s W_hh.
    fn w_hh(&self, run: usize) -> &[f32] {
        run_of(self.w_hh.v(), run, self.hid * self.h3)
    }

    /// `out [N, 3H] = x W_ih + b_ih` for run `run` (`x`: that run's `[N, F]`).
    fn input_part(&self, out: &mut [f32], x: &[f32], run: usize, n: usize) {
        let (f, h3) = (self.f, self.h3);
        affine(out, x, run_of(self.w_ih.v(), run, f * h3), run_of(self.b_ih.v(), run, h3), n, f, h3);
    }

    /// `out [N, 3H] = h W_hh + b_hh` for run `run` (`h`: that run's `[N, H]`).
    fn hidden_part(&self, out: &mut [f32], h: &[f32], run: usize, n: usize) {
        affine(out, h, self.w_hh(run), run_of(self.b_hh.v(), run, self.h3), n, self.hid, self.h3);
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
        let cell = Cell::load(w_ih, w_hh, b_ih, b_hh);
        let (r, f, hid, h3) = (cell.r, cell.f, cell.hid, cell.h3);
        let (h, [_, n, _]) = values(h);
        let x = Borrowed::of(x);
        let x = x.v();
        let mut out = h.clone();
        let (mut gi, mut gh) = (vec![0f32; n * h3], vec![0f32; n * h3]);
        for run in 0..r {
            let ht = run_of(&h, run, n * hid);
            // The input projection does not change between iterations: once per call.
            cell.input_part(&mut gi, run_of(x, run, n * f), run, n);
            let g = run_of_mut(&mut out, run, n * hid);
            for _ in 0..iters {
                super::evals::reversal(1);
                cell.hidden_part(&mut gh, g, run, n);
                reversal_update(g, &gi, &gh, ht, hid);
            }
        }
        tensor(out, [r, n, hid])
    }

    fn gru_step(
        w_ih: FlexTensor,
        w_hh: FlexTensor,
        b_ih: FlexTensor,
        b_hh: FlexTensor,
        h: FlexTensor,
        x: FlexTensor,
    ) -> FlexTensor {
        let cell = Cell::load(w_ih, w_hh, b_ih, b_hh);
        let (r, f, hid, h3) = (cell.r, cell.f, cell.hid, cell.h3);
        let (h, x) = (Borrowed::of(h), Borrowed::of(x));
        let ([_, n, _], h, x) = (h.dims, h.v(), x.v());
        let mut out = vec![0f32; r * n * hid];
        let (mut gi, mut gh, mut hn) = (vec![0f32; n * h3], vec![0f32; n * h3], vec![0f32; n * hid]);
        for run in 0..r {
            super::evals::forward(1);
            let hp = run_of(h, run, n * hid);
            cell.input_part(&mut gi, run_of(x, run, n * f), run, n);
            cell.hidden_part(&mut gh, hp, run, n);
            gates(&gi, &mut gh, &mut hn, n, hid);
            blend(run_of_mut(&mut out, run, n * hid), &gh, hp, hid);
        }
        tensor(out, [r, n, hid])
    }
}

impl GruHostVjp for Flex {
    fn gru_step_vjp(
        params: GruTensors<Self>,
        h_prev: FlexTensor,
        x: FlexTensor,
        y: FlexTensor,
        dh: FlexTensor,
        loss: ReadoutLoss,
        scale: f32,
        grads: GruTensors<Self>,
    ) -> (FlexTensor, GruTensors<Self>) {
        let cell = Cell::load(params.w_ih, params.w_hh, params.b_ih, params.b_hh);
        let (r, f, hid, h3) = (cell.r, cell.f, cell.hid, cell.h3);
        let (w_o, b_o, h_prev) = (Borrowed::of(params.w_o), Borrowed::of(params.b_o), Borrowed::of(h_prev));
        let ([_, _, o], [_, n, _]) = (w_o.dims, h_prev.dims);
        let (x, dh) = (Borrowed::of(x), Borrowed::of(dh));
        let y = (loss != ReadoutLoss::None).then(|| Borrowed::of(y));
        let (w_o, b_o, h_prev, x, dh) = (w_o.v(), b_o.v(), h_prev.v(), x.v(), dh.v());
        let y = y.as_ref().map(Borrowed::v);
        let (mut g_w_ih, d0) = values(grads.w_ih);
        let (mut g_w_hh, d1) = values(grads.w_hh);
        let (mut g_b_ih, d2) = values(grads.b_ih);
        let (mut g_b_hh, d3) = values(grads.b_hh);
        let (mut g_w_o, d4) = values(grads.w_o);
        let (mut g_b_o, d5) = values(grads.b_o);
        let mut dh_prev = vec![0f32; r * n * hid];
        let (mut gi, mut gh, mut hn) = (vec![0f32; n * h3], vec![0f32; n * h3], vec![0f32; n * hid]);
        let (mut h_new, mut dp, mut dh_new) = (vec![0f32; n * hid], vec![0f32; n * o], vec![0f32; n * hid]);
        let (mut dgi, mut dgh) = (vec![0f32; n * h3], vec![0f32; n * h3]);
        let mut wh_t = vec![0f32; h3 * hid];
        for run in 0..r {
            super::evals::vjp(1);
            let hp = run_of(h_prev, run, n * hid);
            let xr = run_of(x, run, n * f);
            let (wh, wo) = (cell.w_hh(run), run_of(w_o, run, hid * o));
            cell.input_part(&mut gi, xr, run, n);
            cell.hidden_part(&mut gh, hp, run, n);
            gates(&gi, &mut gh, &mut hn, n, hid);
            blend(&mut h_new, &gh, hp, hid);
            dh_new.copy_from_slice(run_of(dh, run, n * hid));
            if let Some(y) = &y {
                // Readout p = h' w_o + b_o and its loss term's gradient dp.
                affine(&mut dp, &h_new, wo, run_of(b_o, run, o), n, hid, o);
                readout_grad(&mut dp, run_of(y, run, n * o), o, loss, scale);
                mm(run_of_mut(&mut g_w_o, run, hid * o), Start::Dst, hid, o, n, Mat::t(&h_new, hid), Mat::rows(&dp, o));
                add_col_sums(run_of_mut(&mut g_b_o, run, o), &dp, o);
                mm(&mut dh_new, Start::Dst, n, hid, o, Mat::rows(&dp, o), Mat::t(wo, o));
            }
            // Through h' = n + z (h - n) and the gates.
            let dhp = run_of_mut(&mut dh_prev, run, n * hid);
            gates_vjp(&mut dgi, &mut dgh, dhp, &dh_new, &gh, &hn, hp, hid);
            mm(run_of_mut(&mut g_w_ih, run, f * h3), Start::Dst, f, h3, n, Mat::t(xr, f), Mat::rows(&dgi, h3));
            add_col_sums(run_of_mut(&mut g_b_ih, run, h3), &dgi, h3);
            mm(run_of_mut(&mut g_w_hh, run, hid * h3), Start::Dst, hid, h3, n, Mat::t(hp, hid), Mat::rows(&dgh, h3));
            add_col_sums(run_of_mut(&mut g_b_hh, run, h3), &dgh, h3);
            if gemm_dots(n, hid) {
                // A batch this small gemm sums as dot products: keep its order.
                mm(dhp, Start::Dst, n, hid, h3, Mat::rows(&dgh, h3), Mat::t(wh, h3));
            } else {
                // W_hh^T row-major, so that the product takes `small_mm` (the same sums as gemm's
                // on the transposed view at this size).
                for (r, row) in wh.chunks_exact(h3).enumerate() {
                    for (c, w) in row.iter().enumerate() {
                        wh_t[c * hid + r] = *w;
                    }
                }
                mm(dhp, Start::Dst, n, hid, h3, Mat::rows(&dgh, h3), Mat::rows(&wh_t, hid));
            }
        }
        let grads = GruTensors {
            w_ih: tensor(g_w_ih, d0),
            w_hh: tensor(g_w_hh, d1),
            b_ih: tensor(g_b_ih, d2),
            b_hh: tensor(g_b_hh, d3),
            w_o: tensor(g_w_o, d4),
            b_o: tensor(g_b_o, d5),
        };
        (tensor(dh_prev, [r, n, hid]), grads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Grads, Gru, RecurrentModel, StepLoss, VjpStep};

    fn vals(t: Tensor<3>) -> Vec<f32> {
        t.into_data().try_to_vec::<f32>().unwrap()
    }

    fn assert_close(want: Tensor<3>, got: Tensor<3>, tol: f32, what: &str) {
        let (want, got) = (vals(want), vals(got));
        assert_eq!(want.len(), got.len(), "{what}: sizes");
        let worst = want.iter().zip(&got).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(worst < tol, "{what}: max |fused - tensor ops| = {worst}");
    }

    /// Random GRU parameters, state and data for `r` runs.
    /// Seeded, so that a failure reproduces.
    fn setup(r: usize) -> (Gru, Vec<Tensor<3>>, [Tensor<3>; 4]) {
        setup_seeded(r, 11)
    }

    fn setup_seeded(r: usize, seed: u64) -> (Gru, Vec<Tensor<3>>, [Tensor<3>; 4]) {
        use rand::{Rng, SeedableRng};
        let device = Device::flex();
        let (n, f, h, o) = (7, 2, 5, 3);
        let rng = std::cell::RefCell::new(rand_chacha::ChaCha8Rng::seed_from_u64(seed));
        let u = |shape: [usize; 3]| {
            let v: Vec<f32> = (0..shape.iter().product()).map(|_| rng.borrow_mut().random_range(-0.8..0.8)).collect();
            Tensor::<3>::from_data(TensorData::new(v, shape), &device)
        };
        let gru = Gru::new(f, h, o);
        let p = gru.param_shapes().iter().map(|&[a, b]| u([r, a, b])).collect();
        (gru, p, [u([r, n, h]), u([r, n, f]), u([r, n, o]), u([r, n, h])])
    }

    /// `small_mm` is gemm bit for bit on every shape `mm` gives it: `a` row-major (the hidden
    /// and readout products) and transposed (the weight gradients), from 2 to 40 rows (whole
    /// and partial tiles, gemm's dot-product sizes included), columns from 2 to 96, k from 3
    /// to 96, added to `dst` and to a bias row. And the VJP's transposed product:
    /// above gemm's dot-product sizes, gemm on W_hh^T copied row-major is gemm on the view.
    #[test]
    fn small_mm_is_gemm_bit_for_bit() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut vals = |len: usize| -> Vec<f32> { (0..len).map(|_| rng.random_range(-1.0..1.0)).collect() };
        let (mut taken, mut cases) = (0, 0);
        for m in 2..41 {
            for n in [2, 3, 10, 15, 32, 96] {
                for k in [3, 5, 10, 32, 96] {
                    for transposed in [false, true] {
                        let (a, b, start, row) = (vals(m * k), vals(k * n), vals(m * n), vals(n));
                        let am = if transposed { Mat::t(&a, m) } else { Mat::rows(&a, k) };
                        let bias_rows: Vec<f32> = row.iter().copied().cycle().take(m * n).collect();
                        for (what, from, start_as) in [
                            ("added to dst", &start, Start::Dst),
                            ("added to a bias row", &bias_rows, Start::Row(&row)),
                        ] {
                            cases += 1;
                            let (mut want, mut got) = (from.clone(), start.clone());
                            gemm_mm(&mut want, m, n, k, am, Mat::rows(&b, n));
                            if small_mm::product(&mut got, start_as, m, n, k, &a, am.rs, am.cs, &b) {
                                taken += 1;
                                let same = want.iter().zip(&got).all(|(w, g)| w.to_bits() == g.to_bits());
                                assert!(
                                    same,
                                    "{m}x{n}x{k}, a transposed {transposed}, {what}: small_mm differs from gemm"
                                );
                            }
                        }
                    }
                }
            }
        }
        // On a CPU with AVX-512 every case ran (this machine and CI have it).
        if simd::Width::used() == simd::Width::Avx512 {
            assert_eq!(taken, cases);
        }
        // dh_prev's product: [rows, 3H] . W_hh^T for the batch sizes the tracks train with.
        let (hid, h3) = (32, 96);
        for rows in [9, 16, 19, 32] {
            assert!(!gemm_dots(rows, hid));
            let (dgh, wh, start) = (vals(rows * h3), vals(hid * h3), vals(rows * hid));
            let wh_t: Vec<f32> = (0..h3 * hid).map(|i| wh[(i % hid) * h3 + i / hid]).collect();
            let (mut view, mut copy) = (start.clone(), start);
            gemm_mm(&mut view, rows, hid, h3, Mat::rows(&dgh, h3), Mat::t(&wh, h3));
            gemm_mm(&mut copy, rows, hid, h3, Mat::rows(&dgh, h3), Mat::rows(&wh_t, hid));
            assert!(view.iter().zip(&copy).all(|(a, b)| a.to_bits() == b.to_bits()), "{rows} rows: W_hh^T copied");
        }
    }

    #[test]
    fn fused_kernels_run_on_flex_only() {
        let device = Device::flex();
        assert!(fused_on(&device));
        assert!(!fused_on(&device.clone().autodiff()));
    }

    #[test]
    fn fused_gru_reversal_equals_the_tensor_ops() {
        // One and three iterations on 200 random cells: the fused iteration is the tensor ops'
        // to 1e-5. Twenty iterations amplify the last-bit differences of the two paths (FMA,
        // summation order) by the fixed-point map's gain: on 2 of those 200 cells they reach
        // 2e-5 and 4e-5, so the 20-iteration comparison is on fixed cells, reproducibly.
        for seed in 0..200 {
            let (gru, p, [h, x, _, _]) = setup_seeded(3, seed);
            for iters in [1, 3] {
                let want = gru.reverse_unfused(&p, h.clone(), x.clone(), iters);
                let got = gru_reverse([&p[0], &p[1], &p[2], &p[3]], h.clone(), x.clone(), iters);
                assert_close(want, got, 1e-5, &format!("cell {seed}: reverse, {iters} iterations"));
            }
        }
        for seed in [11, 12, 13] {
            let (gru, p, [h, x, _, _]) = setup_seeded(3, seed);
            let want = gru.reverse_unfused(&p, h.clone(), x.clone(), 20);
            let got = gru_reverse([&p[0], &p[1], &p[2], &p[3]], h.clone(), x.clone(), 20);
            assert_close(want, got, 1e-5, &format!("cell {seed}: reverse, 20 iterations"));
        }
    }

    #[test]
    fn fused_gru_step_and_vjp_equal_the_tensor_ops() {
        let (gru, p, [h, x, y, dh]) = setup(3);
        assert_close(gru.step_unfused(&p, h.clone(), x.clone()), gru.step(&p, h.clone(), x.clone()), 1e-5, "step");
        let start: Vec<Tensor<3>> = p.iter().map(|t| t.clone().mul_scalar(0.1)).collect();
        let (mut want_g, mut got_g) = (Grads::PerParam(start.clone()), Grads::PerParam(start));
        let step = || VjpStep { h_prev: h.clone(), x: x.clone(), loss: squared(y.clone()), dh: dh.clone() };
        let want = gru.step_vjp_unfused(&p, step(), &mut want_g);
        let got = gru.step_vjp(&p, step(), &mut got_g);
        assert_close(want, got, 1e-5, "dh_prev");
        let (Grads::PerParam(want_g), Grads::PerParam(got_g)) = (want_g, got_g) else { unreachable!("CPU layout") };
        for (i, (w, g)) in want_g.into_iter().zip(got_g).enumerate() {
            assert_close(w, g, 1e-5, gru.param_names()[i]);
        }
    }

    fn squared(y: Tensor<3>) -> StepLoss {
        StepLoss::Squared { y, scale: 0.37 }
    }

    /// The classification's two kinds of step: the cross-entropy at the last one, and no loss
    /// before it; the fused VJP equals the tensor ops for both.
    #[test]
    fn fused_gru_vjp_takes_the_cross_entropy_and_no_loss() {
        let (gru, p, [h, x, y, dh]) = setup(3);
        // One-hot rows of 3 classes (row i is class i mod 3), logits from the setup's readout.
        let [r, n, o] = y.dims();
        let onehot: Vec<f32> = (0..r * n * o).map(|i| if (i / o) % o == i % o { 1.0 } else { 0.0 }).collect();
        let y1 = Tensor::<3>::from_data(TensorData::new(onehot, [r, n, o]), &y.device());
        for (what, loss) in
            [("cross-entropy", StepLoss::CrossEntropy { y: y1, scale: 0.2 }), ("no loss", StepLoss::None)]
        {
            let start: Vec<Tensor<3>> = p.iter().map(|t| t.clone().mul_scalar(0.1)).collect();
            let (mut want_g, mut got_g) = (Grads::PerParam(start.clone()), Grads::PerParam(start));
            let step = || VjpStep { h_prev: h.clone(), x: x.clone(), loss: loss.clone(), dh: dh.clone() };
            assert_close(
                gru.step_vjp_unfused(&p, step(), &mut want_g),
                gru.step_vjp(&p, step(), &mut got_g),
                1e-5,
                "dh",
            );
            let (Grads::PerParam(want_g), Grads::PerParam(got_g)) = (want_g, got_g) else { unreachable!("CPU layout") };
            for (i, (w, g)) in want_g.into_iter().zip(got_g).enumerate() {
                assert_close(w, g, 1e-5, &format!("{what}: {}", gru.param_names()[i]));
            }
        }
    }
}
