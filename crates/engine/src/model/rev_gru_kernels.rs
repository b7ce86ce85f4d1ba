//! The reversible GRU's fused CPU kernels (burn-flex, native and wasm): its step, its exact
//! reversal and its cell's vector-Jacobian product, one backend operation per population
//! where the tensor ops of `rev_gru.rs` take ~40 small ones per half-step.
//!
//! They compute what the tensor ops compute, bit for bit: each product is the gemm call
//! burn-flex's matmul makes (same strides, no accumulation into the destination), each
//! elementwise operation is the same IEEE operation in the same order, sigmoid is
//! burn-flex's and tanh the standard library's (as burn-flex's). So the CPU's reports do not
//! change with the kernels (tested against the tensor ops), and the fixed-point integers are
//! exact f32 values either way.

use super::kernels::{Borrowed, Mat, run_of, run_of_mut, tensor, values};
use super::rev_gru::{GATE_ONE, STATE_ONE};
use super::simd;
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{Backend, ExtensionType, Flex, backend_extension};
use burn::tensor::Tensor;

/// The runtime-dispatched backend the tensor API runs on.
type D = burn::backend::Dispatch;

/// The cell's eight parameters (or their gradients), in the model's order: per half, input
/// weights `[R, F, 3g]`, the other half's weights for z and r `[R, g, 2g]`, the candidate's
/// `[R, g, g]` and biases `[R, 1, 3g]`; half a first.
#[derive(ExtensionType)]
pub struct RevGruCell<B: Backend> {
    pub wa_x: FloatTensor<B>,
    pub wa_h: FloatTensor<B>,
    pub ua: FloatTensor<B>,
    pub ca: FloatTensor<B>,
    pub wb_x: FloatTensor<B>,
    pub wb_h: FloatTensor<B>,
    pub ub: FloatTensor<B>,
    pub cb: FloatTensor<B>,
}

impl RevGruCell<D> {
    /// The first eight of the model's parameters (the readout's two are not the cell's).
    fn of(t: &[Tensor<3>]) -> Self {
        let d = |i: usize| t[i].clone().into_dispatch();
        RevGruCell { wa_x: d(0), wa_h: d(1), ua: d(2), ca: d(3), wb_x: d(4), wb_h: d(5), ub: d(6), cb: d(7) }
    }

    /// The eight tensors themselves (moved, not shared).
    fn owning(t: [Tensor<3>; 8]) -> Self {
        let [wa_x, wa_h, ua, ca, wb_x, wb_h, ub, cb] = t.map(Tensor::into_dispatch);
        RevGruCell { wa_x, wa_h, ua, ca, wb_x, wb_h, ub, cb }
    }

    fn into_tensors(self) -> [Tensor<3>; 8] {
        let RevGruCell { wa_x, wa_h, ua, ca, wb_x, wb_h, ub, cb } = self;
        [wa_x, wa_h, ua, ca, wb_x, wb_h, ub, cb].map(Tensor::from_dispatch)
    }
}

/// The reversible GRU's fused operations. States `[R, N, H]`, inputs `[R, N, F]`; `bits` is
/// the forgetting cap.
#[backend_extension(Flex)]
pub trait RevGruKernels: Backend {
    /// h_t and the digits the step forgot, from h_{t-1} and x_t (`RevGru::step_forgetting`).
    fn rev_gru_step(
        #[extension_type] cell: RevGruCell<Self>,
        h: FloatTensor<Self>,
        x: FloatTensor<Self>,
        bits: u32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// h_{t-1} from h_t, x_t and the digits step t forgot (`RevGru::reverse_with`).
    fn rev_gru_reverse(
        #[extension_type] cell: RevGruCell<Self>,
        h: FloatTensor<Self>,
        x: FloatTensor<Self>,
        digits: FloatTensor<Self>,
        bits: u32,
    ) -> FloatTensor<Self>;

    /// h_t and what the step's vector-Jacobian product reads back (`[R, N, 11g]`: each half's
    /// gates, then a'), from h_{t-1} and x_t.
    fn rev_gru_step_cached(
        #[extension_type] cell: RevGruCell<Self>,
        h: FloatTensor<Self>,
        x: FloatTensor<Self>,
        bits: u32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// The cell's vector-Jacobian product from the step's cache: add to `grads` the parameter
    /// gradient of `dh_new . h_t`, return its gradient with respect to `h_prev`.
    #[allow(clippy::too_many_arguments)]
    fn rev_gru_cell_vjp(
        #[extension_type] cell: RevGruCell<Self>,
        h_prev: FloatTensor<Self>,
        x: FloatTensor<Self>,
        cache: FloatTensor<Self>,
        dh_new: FloatTensor<Self>,
        bits: u32,
        #[extension_type] grads: RevGruCell<Self>,
    ) -> (FloatTensor<Self>, RevGruCell<Self>);
}

/// The fused step on tensors: h_t and the digits (see [`RevGruKernels::rev_gru_step`]).
pub fn step(p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, bits: u32) -> (Tensor<3>, Tensor<3>) {
    let (h, d) = <D as RevGruKernels>::rev_gru_step(RevGruCell::of(p), h.into_dispatch(), x.into_dispatch(), bits);
    (Tensor::from_dispatch(h), Tensor::from_dispatch(d))
}

/// The fused step on tensors with its VJP's cache (see [`RevGruKernels::rev_gru_step_cached`]).
pub fn step_cached(p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, bits: u32) -> (Tensor<3>, Tensor<3>) {
    let cell = RevGruCell::of(p);
    let (h, c) = <D as RevGruKernels>::rev_gru_step_cached(cell, h.into_dispatch(), x.into_dispatch(), bits);
    (Tensor::from_dispatch(h), Tensor::from_dispatch(c))
}

/// The fused exact reversal on tensors (see [`RevGruKernels::rev_gru_reverse`]).
pub fn reverse(p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, digits: Tensor<3>, bits: u32) -> Tensor<3> {
    let cell = RevGruCell::of(p);
    Tensor::from_dispatch(<D as RevGruKernels>::rev_gru_reverse(
        cell,
        h.into_dispatch(),
        x.into_dispatch(),
        digits.into_dispatch(),
        bits,
    ))
}

/// The fused cell VJP on tensors, from h_{t-1}, x_t and the cache
/// [`step_cached`] made; `grads` holds the model's ten gradients, of which the cell's eight
/// are updated (see [`RevGruKernels::rev_gru_cell_vjp`]).
pub fn cell_vjp(
    p: &[Tensor<3>],
    (h_prev, x, cache): (Tensor<3>, Tensor<3>, Tensor<3>),
    dh_new: Tensor<3>,
    bits: u32,
    grads: &mut [Tensor<3>],
) -> Tensor<3> {
    // The accumulators moved in (a one-value stand-in left behind), so that the kernel owns
    // them and adds into them without a copy.
    let stand_in = Tensor::<3>::zeros([1, 1, 1], &h_prev.device());
    let acc: [Tensor<3>; 8] = std::array::from_fn(|i| std::mem::replace(&mut grads[i], stand_in.clone()));
    let (dh, out) = <D as RevGruKernels>::rev_gru_cell_vjp(
        RevGruCell::of(p),
        h_prev.into_dispatch(),
        x.into_dispatch(),
        cache.into_dispatch(),
        dh_new.into_dispatch(),
        bits,
        RevGruCell::owning(acc),
    );
    for (slot, v) in grads.iter_mut().zip(out.into_tensors()) {
        *slot = v;
    }
    Tensor::from_dispatch(dh)
}

/// `a [m, k] · b [k, n]` as burn-flex's matmul computes it: one gemm call with the operands'
/// strides, not reading the destination.
fn product(m: usize, n: usize, k: usize, a: Mat, b: Mat) -> Vec<f32> {
    let mut dst = vec![0f32; m * n];
    product_into(&mut dst, m, n, k, a, b);
    dst
}

/// [`product`] into `dst` (its first `m * n` values overwritten).
fn product_into(dst: &mut [f32], m: usize, n: usize, k: usize, a: Mat, b: Mat) {
    assert!(dst.len() >= m * n);
    let last = |x: Mat, r: usize, c: usize| (r.max(1) - 1) * x.rs + (c.max(1) - 1) * x.cs;
    assert!(last(a, m, k) < a.v.len().max(1) && last(b, k, n) < b.v.len().max(1));
    if m == 0 || n == 0 {
        return;
    }
    // SAFETY: the asserts bound every element gemm reads through these strides, and `dst`
    // holds the `m * n` values it writes row-major.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.v.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.v.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// burn-flex's sigmoid (the form that cannot overflow on either side).
#[inline(always)]
fn sigmoid(x: f32) -> f32 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// floor(a zq / 1024) for integers (`rev_gru::mul_floor`).
#[inline(always)]
fn mul_floor(a: f32, zq: f32) -> f32 {
    let hi = (a / GATE_ONE).floor();
    let lo = a - hi * GATE_ONE;
    hi * zq + (lo * zq / GATE_ONE).floor()
}

/// floor(num / den) for integers, corrected by its remainder (`rev_gru::div_floor`).
#[inline(always)]
fn div_floor(num: f32, den: f32) -> f32 {
    let q = (num / den).floor();
    let rem = num - q * den;
    q + if rem >= den { 1.0 } else { 0.0 } - if rem < 0.0 { 1.0 } else { 0.0 }
}

/// ceil(s 1024 / zq) (`rev_gru::first_preimage`).
#[inline(always)]
fn first_preimage(s: f32, zq: f32) -> f32 {
    let q = div_floor(s, zq);
    let rem = s - q * zq;
    let c = div_floor(rem * GATE_ONE + (zq - 1.0), zq);
    q * GATE_ONE + c
}

/// Sizes of one call: rows, input features, half width; and the cap m = 1 - 2^-bits.
#[derive(Clone, Copy)]
struct Dims {
    n: usize,
    f: usize,
    g: usize,
    m: f32,
}

/// One run's weights of one half.
struct HalfW<'a> {
    wx: &'a [f32],
    wh: &'a [f32],
    u: &'a [f32],
    c: &'a [f32],
}

/// The cell's weights (or gradients) of a population, as host values.
struct Weights {
    t: [Borrowed; 8],
}

impl Weights {
    fn load(c: RevGruCell<Flex>) -> Self {
        Weights { t: [c.wa_x, c.wa_h, c.ua, c.ca, c.wb_x, c.wb_h, c.ub, c.cb].map(Borrowed::of) }
    }

    /// Runs, input features and half width.
    fn sizes(&self) -> (usize, usize, usize) {
        let [r, f, _] = self.t[0].dims;
        (r, f, self.t[2].dims[1])
    }

    /// Run `run`'s weights of the half starting at parameter `base` (0 or 4).
    fn half(&self, run: usize, base: usize) -> HalfW<'_> {
        let w = |i: usize| {
            let t = &self.t[base + i];
            let [_, a, b] = t.dims;
            run_of(t.v(), run, a * b)
        };
        HalfW { wx: w(0), wh: w(1), u: w(2), c: w(3) }
    }
}

/// Values per row and unit of one half's gates in a block: s (two), zq, n and rb.
const GATE_VALUES: usize = 5;

/// One half-update's gates for one run's rows (`rev_gru.rs`'s `Half`) with its update,
/// borrowed from a block of `GATE_VALUES` N g values that [`gates`] wrote (a step's scratch,
/// or the cache a VJP reads back) and the update beside it (which a VJP does not read).
struct Gates<'a> {
    /// sigmoid of the z~ and r pre-activations, `[N, 2g]`.
    s: &'a [f32],
    /// The rounded gate as an integer over 1024, `[N, g]`.
    zq: &'a [f32],
    /// The candidate, `[N, g]`.
    nn: &'a [f32],
    /// r * (the other half), `[N, g]`.
    rb: &'a [f32],
    /// round((1 - z) n 2^23).
    upd: &'a [f32],
}

impl<'a> Gates<'a> {
    /// The gates in `block` with their update, `len` = N g values per gate.
    fn of(block: &'a [f32], upd: &'a [f32], len: usize) -> Self {
        let (s, rest) = block.split_at(2 * len);
        let (zq, rest) = rest.split_at(len);
        let (nn, rb) = rest.split_at(len);
        Gates { s, zq, nn, rb: &rb[..len], upd }
    }
}

/// Write the gates of a half from `other` (the other half, `[N, g]`) and x `[N, F]` into
/// `block` and its update into `upd` (see [`Gates`]), with `xw` (`[N, 3g]`) as scratch.
fn gates(w: &HalfW, (other, x): (Mat, &[f32]), d: Dims, (block, upd): (&mut [f32], &mut [f32]), xw: &mut [f32]) {
    let Dims { n, f, g, m } = d;
    let (g2, g3, len) = (2 * g, 3 * g, n * g);
    let (s, rest) = block.split_at_mut(2 * len);
    let (zq, rest) = rest.split_at_mut(len);
    let (nn, rest) = rest.split_at_mut(len);
    let rb = &mut rest[..len];
    product_into(xw, n, g3, f, Mat::rows(x, f), Mat::rows(w.wx, g3));
    product_into(s, n, g2, g, other, Mat::rows(w.wh, g2));
    // The elementwise passes run at the CPU's widest SIMD (bit-identical at every width);
    // sigmoid and tanh are calls that do not vectorise, so they have passes of their own.
    simd::widest(
        #[inline(always)]
        || {
            for (srow, xrow) in s.chunks_exact_mut(g2).zip(xw.chunks_exact(g3)) {
                for ((v, xv), c) in srow.iter_mut().zip(xrow).zip(w.c) {
                    *v = xv + *v + c;
                }
            }
        },
    );
    for v in s.iter_mut() {
        *v = sigmoid(*v);
    }
    let lowest = GATE_ONE * (1.0 - m);
    simd::widest(
        #[inline(always)]
        || {
            let rows = zq.chunks_exact_mut(g).zip(rb.chunks_exact_mut(g)).zip(s.chunks_exact(g2));
            for (i, ((zrow, rrow), srow)) in rows.enumerate() {
                let (sz, sr, o) = (&srow[..g], &srow[g..], other.row(i, g));
                for j in 0..g {
                    zrow[j] = ((sz[j] * m + (1.0 - m)) * GATE_ONE).round_ties_even().clamp(lowest, GATE_ONE);
                    rrow[j] = sr[j] * o[j];
                }
            }
        },
    );
    product_into(nn, n, g, g, Mat::rows(rb, g), Mat::rows(w.u, g));
    simd::widest(
        #[inline(always)]
        || {
            for (nrow, xrow) in nn.chunks_exact_mut(g).zip(xw.chunks_exact(g3)) {
                for ((v, xv), c) in nrow.iter_mut().zip(&xrow[g2..]).zip(&w.c[g2..]) {
                    *v = xv + *v + c;
                }
            }
        },
    );
    for v in nn.iter_mut() {
        *v = v.tanh();
    }
    simd::widest(
        #[inline(always)]
        || {
            for ((u, z), v) in upd[..len].iter_mut().zip(&*zq).zip(&*nn) {
                *u = ((1.0 - z / GATE_ONE) * v * STATE_ONE).round_ties_even();
            }
        },
    );
}

/// A half's new value `[N, g]` from its old one into `new`, and the digits it forgot into
/// `digit` (`RevGru::forget`).
fn forget(gt: &Gates, old: Mat, g: usize, new: &mut [f32], digit: &mut [f32]) {
    simd::widest(
        #[inline(always)]
        || {
            let outs = new.chunks_exact_mut(g).zip(digit.chunks_exact_mut(g));
            let ins = gt.zq.chunks_exact(g).zip(gt.upd.chunks_exact(g));
            for (i, ((new, digit), (zq, upd))) in outs.zip(ins).enumerate() {
                let old = old.row(i, g);
                for j in 0..g {
                    let a = old[j] * STATE_ONE;
                    let kept = mul_floor(a, zq[j]);
                    digit[j] = a - first_preimage(kept, zq[j]);
                    new[j] = (kept + upd[j]) / STATE_ONE;
                }
            }
        },
    );
}

/// A half's old value `[N, g]` from its new one and its digits into `old`
/// (`RevGru::remember`).
fn remember(gt: &Gates, (new, digits): (Mat, Mat), g: usize, old: &mut [f32]) {
    simd::widest(
        #[inline(always)]
        || {
            let rows = old.chunks_exact_mut(g).zip(gt.zq.chunks_exact(g)).zip(gt.upd.chunks_exact(g));
            for (i, ((old, zq), upd)) in rows.enumerate() {
                let (new, digits) = (new.row(i, g), digits.row(i, g));
                for j in 0..g {
                    old[j] = (first_preimage(new[j] * STATE_ONE - upd[j], zq[j]) + digits[j]) / STATE_ONE;
                }
            }
        },
    );
}

/// Columns `from..from + g` of a row-major `[N, H]` block, as a matrix view.
fn cols(v: &[f32], h: usize, from: usize) -> Mat<'_> {
    Mat { v: &v[from..], rs: h, cs: 1 }
}

/// Write `left` and `right` (`[N, g]` each) side by side into `out [N, 2g]`.
fn join(out: &mut [f32], left: &[f32], right: &[f32], g: usize) {
    for ((o, l), r) in out.chunks_exact_mut(2 * g).zip(left.chunks_exact(g)).zip(right.chunks_exact(g)) {
        o[..g].copy_from_slice(l);
        o[g..].copy_from_slice(r);
    }
}

/// One run's gradients of one half, being accumulated.
struct HalfGrads<'a> {
    wx: &'a mut [f32],
    wh: &'a mut [f32],
    u: &'a mut [f32],
    c: &'a mut [f32],
}

/// `acc += delta`, elementwise.
fn add(acc: &mut [f32], delta: &[f32]) {
    simd::widest(
        #[inline(always)]
        || {
            for (a, d) in acc.iter_mut().zip(delta) {
                *a += d;
            }
        },
    )
}

/// Back through one half-update (`RevGru::half_vjp`): add its parameter gradients for
/// `d_new` (the gradient at its new value) to `grads`; return the gradients with respect to
/// its old value and to the other half.
fn half_vjp(
    w: &HalfW,
    (old, other, x): (Mat, Mat, &[f32]),
    gt: Gates,
    d_new: Mat,
    d: Dims,
    grads: HalfGrads,
) -> (Vec<f32>, Vec<f32>) {
    let Dims { n, f, g, m } = d;
    let (g2, g3, len) = (2 * g, 3 * g, n * g);
    let (mut d_old, mut dz, mut dpn) = (vec![0f32; len], vec![0f32; len], vec![0f32; len]);
    simd::widest(
        #[inline(always)]
        || {
            let outs = d_old.chunks_exact_mut(g).zip(dz.chunks_exact_mut(g)).zip(dpn.chunks_exact_mut(g));
            for (i, ((d_old, dz), dpn)) in outs.enumerate() {
                let (dn, old) = (d_new.row(i, g), old.row(i, g));
                let (zq, nn) = (&gt.zq[i * g..][..g], &gt.nn[i * g..][..g]);
                for j in 0..g {
                    let z = zq[j] / GATE_ONE;
                    d_old[j] = dn[j] * z;
                    dz[j] = dn[j] * (old[j] - nn[j]);
                    dpn[j] = dn[j] * (1.0 - z) * (1.0 - nn[j] * nn[j]);
                }
            }
        },
    );
    add(grads.u, &product(g, g, n, Mat::rows(gt.rb, g).transposed(), Mat::rows(&dpn, g)));
    let drb = product(n, g, g, Mat::rows(&dpn, g), Mat::t(w.u, g));
    let (mut d_other, mut ds) = (vec![0f32; len], vec![0f32; n * g2]);
    simd::widest(
        #[inline(always)]
        || {
            for (i, (d_other, ds)) in d_other.chunks_exact_mut(g).zip(ds.chunks_exact_mut(g2)).enumerate() {
                let (s, o) = (&gt.s[i * g2..][..g2], other.row(i, g));
                let (drb, dz) = (&drb[i * g..][..g], &dz[i * g..][..g]);
                let (ds_z, ds_r) = ds.split_at_mut(g);
                for j in 0..g {
                    let (sz, sr) = (s[j], s[g + j]);
                    d_other[j] = drb[j] * sr;
                    ds_z[j] = dz[j] * m * (sz * (1.0 - sz));
                    ds_r[j] = drb[j] * o[j] * (sr * (1.0 - sr));
                }
            }
        },
    );
    add(grads.wh, &product(g, g2, n, other.transposed(), Mat::rows(&ds, g2)));
    add(&mut d_other, &product(n, g, g2, Mat::rows(&ds, g2), Mat::t(w.wh, g2)));
    let mut dpre = vec![0f32; n * g3];
    for ((row, s), p) in dpre.chunks_exact_mut(g3).zip(ds.chunks_exact(g2)).zip(dpn.chunks_exact(g)) {
        row[..g2].copy_from_slice(s);
        row[g2..].copy_from_slice(p);
    }
    add(grads.wx, &product(f, g3, n, Mat::t(x, f), Mat::rows(&dpre, g3)));
    // burn-flex's sum over rows: from zero, row by row.
    let mut col_sums = vec![0f32; g3];
    add_rows(&mut col_sums, &dpre);
    add(grads.c, &col_sums);
    (d_old, d_other)
}

/// Add each row of `rows` (row-major, `acc.len()` columns) to `acc`, in row order.
fn add_rows(acc: &mut [f32], rows: &[f32]) {
    for row in rows.chunks_exact(acc.len()) {
        add(acc, row);
    }
}

/// A population's gradients being accumulated, one tensor per cell parameter.
type Acc = [FlexTensor; 8];

/// A gradient to add into in place: the tensor itself when it owns its whole contiguous
/// storage, else a copy that does (a VJP's accumulator is the former, so it is not copied).
fn owned(t: FlexTensor) -> FlexTensor {
    let numel = t.layout().shape().num_elements();
    let whole = t.layout().contiguous_offsets() == Some((0, numel)) && t.bytes().len() == 4 * numel;
    if whole {
        return t;
    }
    let (v, dims) = values(t);
    tensor(v, dims)
}

/// Run `run`'s gradients of the half starting at parameter `base` (0 or 4).
fn half_grads(acc: &mut Acc, base: usize, run: usize) -> HalfGrads<'_> {
    fn of(t: &mut FlexTensor, run: usize) -> &mut [f32] {
        let [_, p, q] = t.layout().shape().dims::<3>();
        // Copy-on-write: in place when this is the only reference.
        run_of_mut(t.storage_mut::<f32>(), run, p * q)
    }
    let [wx, wh, u, c] = &mut acc[base..base + 4] else { unreachable!("four parameters per half") };
    HalfGrads { wx: of(wx, run), wh: of(wh, run), u: of(u, run), c: of(c, run) }
}

/// What each kernel unpacks first: the weights, the sizes and one run's state and input.
struct Call {
    w: Weights,
    r: usize,
    hid: usize,
    d: Dims,
    h: Borrowed,
    x: Borrowed,
}

impl Call {
    fn load(cell: RevGruCell<Flex>, h: FlexTensor, x: FlexTensor, bits: u32) -> Self {
        let w = Weights::load(cell);
        let (r, f, g) = w.sizes();
        let (h, x) = (Borrowed::of(h), Borrowed::of(x));
        let n = h.dims[1];
        let m = 1.0 - (-(bits as f32)).exp2();
        Call { w, r, hid: 2 * g, d: Dims { n, f, g, m }, h, x }
    }

    /// Run `run`'s state `[N, H]` and input `[N, F]`.
    fn run(&self, run: usize) -> (&[f32], &[f32]) {
        let Dims { n, f, .. } = self.d;
        (run_of(self.h.v(), run, n * self.hid), run_of(self.x.v(), run, n * f))
    }
}

/// A step's scratch for one run: the gates of both halves and a' (the cache), one half's
/// update and the input product.
struct Scratch {
    /// Half a's gates, then half b's (`GATE_VALUES` N g values each), then a' (N g).
    cache: Vec<f32>,
    upd: Vec<f32>,
    xw: Vec<f32>,
}

impl Call {
    /// Values per run of a step's cache: both halves' gates and a'.
    fn cache_len(&self) -> usize {
        (2 * GATE_VALUES + 1) * self.d.n * self.d.g
    }

    /// Run `run`'s step: its gates and a' into `cache` (see [`Scratch`]), b' and the digits
    /// `[N, g]` each into `b_new`, `da` and `db`.
    fn forward(
        &self,
        run: usize,
        (cache, upd, xw): (&mut [f32], &mut [f32], &mut [f32]),
        b_new: &mut [f32],
        [da, db]: [&mut [f32]; 2],
    ) {
        let (d, hid, g) = (self.d, self.hid, self.d.g);
        let len = d.n * g;
        let (h, x) = self.run(run);
        let (block_a, rest) = cache.split_at_mut(GATE_VALUES * len);
        let (block_b, a_new) = rest.split_at_mut(GATE_VALUES * len);
        gates(&self.w.half(run, 0), (cols(h, hid, g), x), d, (block_a, upd), xw);
        forget(&Gates::of(block_a, upd, len), cols(h, hid, 0), g, a_new, da);
        gates(&self.w.half(run, 4), (Mat::rows(a_new, g), x), d, (block_b, upd), xw);
        forget(&Gates::of(block_b, upd, len), cols(h, hid, g), g, b_new, db);
    }

    fn scratch(&self) -> Scratch {
        let len = self.d.n * self.d.g;
        Scratch { cache: vec![0f32; self.cache_len()], upd: vec![0f32; len], xw: vec![0f32; 3 * len] }
    }
}

impl RevGruKernels for Flex {
    fn rev_gru_step(cell: RevGruCell<Self>, h: FlexTensor, x: FlexTensor, bits: u32) -> (FlexTensor, FlexTensor) {
        let c = Call::load(cell, h, x, bits);
        let (d, hid, g) = (c.d, c.hid, c.d.g);
        let (len, total) = (d.n * g, c.r * d.n * hid);
        let (mut out, mut digits) = (vec![0f32; total], vec![0f32; total]);
        let Scratch { mut cache, mut upd, mut xw } = c.scratch();
        let (mut b_new, mut da, mut db) = (vec![0f32; len], vec![0f32; len], vec![0f32; len]);
        for run in 0..c.r {
            c.forward(run, (&mut cache, &mut upd, &mut xw), &mut b_new, [&mut da, &mut db]);
            join(run_of_mut(&mut out, run, d.n * hid), &cache[2 * GATE_VALUES * len..], &b_new, g);
            join(run_of_mut(&mut digits, run, d.n * hid), &da, &db, g);
        }
        let dims = [c.r, d.n, hid];
        (tensor(out, dims), tensor(digits, dims))
    }

    fn rev_gru_step_cached(
        cell: RevGruCell<Self>,
        h: FlexTensor,
        x: FlexTensor,
        bits: u32,
    ) -> (FlexTensor, FlexTensor) {
        let c = Call::load(cell, h, x, bits);
        let (d, hid, g) = (c.d, c.hid, c.d.g);
        let (len, per_run) = (d.n * g, c.cache_len());
        let (mut out, mut cache) = (vec![0f32; c.r * d.n * hid], vec![0f32; c.r * per_run]);
        let (mut upd, mut xw) = (vec![0f32; len], vec![0f32; 3 * len]);
        let (mut b_new, mut da, mut db) = (vec![0f32; len], vec![0f32; len], vec![0f32; len]);
        for run in 0..c.r {
            let cache = run_of_mut(&mut cache, run, per_run);
            c.forward(run, (cache, &mut upd, &mut xw), &mut b_new, [&mut da, &mut db]);
            join(run_of_mut(&mut out, run, d.n * hid), &cache[2 * GATE_VALUES * len..], &b_new, g);
        }
        // The cache as `[R, N, (2 GATE_VALUES + 1) g]`: per run, one block of the values above.
        (tensor(out, [c.r, d.n, hid]), tensor(cache, [c.r, d.n, per_run / d.n]))
    }

    fn rev_gru_reverse(
        cell: RevGruCell<Self>,
        h: FlexTensor,
        x: FlexTensor,
        digits: FlexTensor,
        bits: u32,
    ) -> FlexTensor {
        let c = Call::load(cell, h, x, bits);
        let (d, hid, g) = (c.d, c.hid, c.d.g);
        let len = d.n * g;
        let digits = Borrowed::of(digits);
        let mut out = vec![0f32; c.r * d.n * hid];
        let (mut block, mut upd, mut xw) = (vec![0f32; GATE_VALUES * len], vec![0f32; len], vec![0f32; 3 * len]);
        let (mut a, mut b) = (vec![0f32; len], vec![0f32; len]);
        for run in 0..c.r {
            let (h, x) = c.run(run);
            let dg = run_of(digits.v(), run, d.n * hid);
            // b was updated last, from a' (which it leaves as it is): undo it first.
            gates(&c.w.half(run, 4), (cols(h, hid, 0), x), d, (&mut block, &mut upd), &mut xw);
            remember(&Gates::of(&block, &upd, len), (cols(h, hid, g), cols(dg, hid, g)), g, &mut b);
            gates(&c.w.half(run, 0), (Mat::rows(&b, g), x), d, (&mut block, &mut upd), &mut xw);
            remember(&Gates::of(&block, &upd, len), (cols(h, hid, 0), cols(dg, hid, 0)), g, &mut a);
            join(run_of_mut(&mut out, run, d.n * hid), &a, &b, g);
        }
        tensor(out, [c.r, d.n, hid])
    }

    fn rev_gru_cell_vjp(
        cell: RevGruCell<Self>,
        h_prev: FlexTensor,
        x: FlexTensor,
        cache: FlexTensor,
        dh_new: FlexTensor,
        bits: u32,
        grads: RevGruCell<Self>,
    ) -> (FlexTensor, RevGruCell<Self>) {
        let c = Call::load(cell, h_prev, x, bits);
        let (d, hid, g) = (c.d, c.hid, c.d.g);
        let (dh_new, cache) = (Borrowed::of(dh_new), Borrowed::of(cache));
        let per_run = c.cache_len();
        let RevGruCell { wa_x, wa_h, ua, ca, wb_x, wb_h, ub, cb } = grads;
        let mut acc: Acc = [wa_x, wa_h, ua, ca, wb_x, wb_h, ub, cb].map(owned);
        let mut dh_prev = vec![0f32; c.r * d.n * hid];
        for run in 0..c.r {
            let (h, x) = c.run(run);
            let (wa, wb) = (c.w.half(run, 0), c.w.half(run, 4));
            let (a, b) = (cols(h, hid, 0), cols(h, hid, g));
            let cache = run_of(cache.v(), run, per_run);
            let len = d.n * g;
            // The update is not part of the cache: the VJP does not read it.
            let (ga, gb) = (Gates::of(cache, &[], len), Gates::of(&cache[GATE_VALUES * len..], &[], len));
            let a_new = &cache[2 * GATE_VALUES * len..];
            let dn = run_of(dh_new.v(), run, d.n * hid);
            // b' = f(b; a'): b gets its own path, a' the gate's.
            let (db, da_from_b) =
                half_vjp(&wb, (b, Mat::rows(a_new, g), x), gb, cols(dn, hid, g), d, half_grads(&mut acc, 4, run));
            let mut da_new = da_from_b;
            for (i, v) in da_new.chunks_exact_mut(g).enumerate() {
                for (v, dn) in v.iter_mut().zip(&dn[i * hid..][..g]) {
                    *v += dn;
                }
            }
            // a' = f(a; b).
            let (da, db_from_a) = half_vjp(&wa, (a, b, x), ga, Mat::rows(&da_new, g), d, half_grads(&mut acc, 0, run));
            let mut db = db;
            add(&mut db, &db_from_a);
            join(run_of_mut(&mut dh_prev, run, d.n * hid), &da, &db, g);
        }
        let [wa_x, wa_h, ua, ca, wb_x, wb_h, ub, cb] = acc;
        (tensor(dh_prev, [c.r, d.n, hid]), RevGruCell { wa_x, wa_h, ua, ca, wb_x, wb_h, ub, cb })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Grads, ModelShape, RecurrentModel, RevGru, StepLoss, VjpStep};
    use burn::tensor::{Device, TensorData};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use rdbench_core::track::Task;

    fn bits_of(t: Tensor<3>) -> Vec<u32> {
        t.into_data().try_to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect()
    }

    fn same(want: Tensor<3>, got: Tensor<3>, what: &str) {
        let (want, got) = (bits_of(want), bits_of(got));
        assert_eq!(want.len(), got.len(), "{what}: sizes");
        let differ = want.iter().zip(&got).filter(|(a, b)| a != b).count();
        assert_eq!(differ, 0, "{what}: {differ} of {} values differ from the tensor ops", want.len());
    }

    struct Case {
        model: RevGru,
        p: Vec<Tensor<3>>,
        h: Tensor<3>,
        xs: Vec<Tensor<3>>,
        rng: ChaCha8Rng,
    }

    /// `r` runs of a rev_gru (`f` inputs, `hid` units, `bits` cap) with weights 1.5 times the
    /// init's scale (so gates forget near the cap), a state on the 2^-23 grid and `t` inputs.
    fn case(r: usize, n: usize, f: usize, hid: usize, bits: usize, t: usize, seed: u64) -> Case {
        let shape = ModelShape {
            input: f,
            hidden: hid,
            output: 3,
            rank0: 1,
            rank_max: 1,
            task: Task::Regression,
            forget_bits: bits,
        };
        let model = RevGru::new(&shape).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let device = Device::flex();
        let mut u = |[a, b, c]: [usize; 3], scale: f32| {
            let v: Vec<f32> = (0..a * b * c).map(|_| rng.random_range(-scale..scale)).collect();
            Tensor::<3>::from_data(TensorData::new(v, [a, b, c]), &device)
        };
        let p = model.param_shapes().iter().map(|&[a, b]| u([r, a, b], 1.5)).collect();
        let h = u([r, n, hid], 0.9).mul_scalar(STATE_ONE).round().div_scalar(STATE_ONE);
        let xs = (0..t).map(|_| u([r, n, f], 1.0)).collect();
        Case { model, p, h, xs, rng }
    }

    /// 200 steps forward and back, fused and in tensor ops, at two caps and sizes (a single
    /// input feature, a single row): every state and digit the same bits.
    #[test]
    fn fused_step_and_reversal_are_the_tensor_ops_bit_for_bit() {
        for (r, n, f, hid, bits, seed) in [(3, 7, 2, 8, 3, 1), (2, 1, 1, 32, 1, 2), (1, 9, 3, 6, 10, 3)] {
            let Case { model, p, h, xs, .. } = case(r, n, f, hid, bits, 200, seed);
            let mut states = vec![h];
            for (t, x) in xs.iter().enumerate() {
                let prev = states.last().unwrap().clone();
                let (want, want_d) = model.step_parts_unfused(&p, prev.clone(), x.clone());
                let (got, got_d) = step(&p, prev, x.clone(), bits as u32);
                same(want.clone(), got.clone(), &format!("seed {seed}, step {t}: h"));
                same(want_d.clone(), got_d, &format!("seed {seed}, step {t}: digits"));
                let back = reverse(&p, got.clone(), x.clone(), want_d.clone(), bits as u32);
                same(
                    model.reverse_with_unfused(&p, want, x.clone(), want_d),
                    back.clone(),
                    &format!("seed {seed}, step {t}: reversal"),
                );
                same(states.last().unwrap().clone(), back, &format!("seed {seed}, step {t}: exact"));
                states.push(got);
            }
        }
    }

    /// The VJP with each kind of step loss: h_{t-1}'s gradient and all ten parameter gradients
    /// the same bits as the tensor ops', into a gradient that is not zero.
    #[test]
    fn fused_vjp_is_the_tensor_ops_bit_for_bit() {
        for (r, n, f, hid, seed) in [(3, 7, 2, 8, 4), (2, 16, 1, 32, 5)] {
            let Case { model, p, h, xs, mut rng } = case(r, n, f, hid, 3, 1, seed);
            let device = h.device();
            let y: Vec<f32> = (0..r * n * 3).map(|_| rng.random_range(-1.0..1.0)).collect();
            let y = Tensor::<3>::from_data(TensorData::new(y, [r, n, 3]), &device);
            let onehot: Vec<f32> = (0..r * n * 3).map(|i| if (i / 3) % 3 == i % 3 { 1.0 } else { 0.0 }).collect();
            let onehot = Tensor::<3>::from_data(TensorData::new(onehot, [r, n, 3]), &device);
            let dh = Tensor::<3>::from_data(
                TensorData::new(
                    (0..r * n * hid).map(|_| rng.random_range(-1.0..1.0)).collect::<Vec<f32>>(),
                    [r, n, hid],
                ),
                &device,
            );
            for (what, loss) in [
                ("squared", StepLoss::Squared { y: y.clone(), scale: 0.37 }),
                ("cross-entropy", StepLoss::CrossEntropy { y: onehot.clone(), scale: 0.2 }),
                ("no loss", StepLoss::None),
            ] {
                let start: Vec<Tensor<3>> = p.iter().map(|t| t.clone().mul_scalar(0.1)).collect();
                let (mut want_g, mut got_g) = (Grads::PerParam(start.clone()), Grads::PerParam(start));
                let s = || VjpStep { h_prev: h.clone(), x: xs[0].clone(), loss: loss.clone(), dh: dh.clone() };
                let want = model.step_vjp_unfused(&p, s(), &mut want_g);
                let got = model.step_vjp(&p, s(), &mut got_g);
                same(want, got, &format!("seed {seed}, {what}: dh_prev"));
                let (Grads::PerParam(want_g), Grads::PerParam(got_g)) = (want_g, got_g) else {
                    unreachable!("CPU layout")
                };
                for (i, (w, g)) in want_g.into_iter().zip(got_g).enumerate() {
                    same(w, g, &format!("seed {seed}, {what}: {}", model.param_names()[i]));
                }
            }
        }
    }

    /// Exact integer helpers against i64 arithmetic, at the edges of their ranges.
    #[test]
    fn integer_helpers_are_exact() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..100_000 {
            let a = rng.random_range(-(1i64 << 23)..(1i64 << 23));
            let zq = rng.random_range(1i64..=1024);
            let kept = (a * zq).div_euclid(1024);
            assert_eq!(mul_floor(a as f32, zq as f32), kept as f32, "floor({a} * {zq} / 1024)");
            let first = -((-kept * 1024).div_euclid(zq));
            assert_eq!(first_preimage(kept as f32, zq as f32), first as f32, "ceil({kept} * 1024 / {zq})");
            assert!(first <= a && (first * zq).div_euclid(1024) == kept);
        }
    }
}
