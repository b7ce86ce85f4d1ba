//! The GRU's fused kernels on the GPU (cubecl, for burn's `Cube` backend: WebGPU in the
//! browser, Vulkan natively). On a GPU every tensor op is a dispatch costing tens of
//! microseconds whatever its size, and a GRU time step is ~20 of them forward and ~45
//! backward; here a step is one kernel, its vector-Jacobian product (with the step's loss)
//! two, and a whole reversal (every fixed-point iteration, the state kept in workgroup
//! memory) one.
//!
//! WebGPU allows as few as 8 storage buffers per kernel (cubecl keeps one for its own
//! metadata), so no kernel binds more than 7 tensors: a backward pass packs the parameters
//! into one `[R, 1, P]` tensor first, and accumulates the gradient in that same packed
//! layout plus one value, the summed squared error (see [`PackedLayout`]), unpacked once
//! per pass.

use super::kernels::CellKernels;
use burn::backend::Cube;
use burn::backend::tensor::FloatTensor;
use burn::tensor::{DType, Tensor as BTensor};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_contiguous_dtype;
use burn_cubecl::tensor::CubeTensor;
use cubecl::prelude::*;
use cubecl::{CubeCount, CubeDim, calculate_cube_count_elemwise};

/// Where each GRU parameter sits in one run's packed row (w_ih, w_hh, b_ih, b_hh, w_o, b_o,
/// each row-major, one after the other).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedLayout {
    /// Input features F.
    pub f: usize,
    /// Hidden units H.
    pub h: usize,
    /// Predicted features O.
    pub o: usize,
}

impl PackedLayout {
    /// Offsets of w_ih, w_hh, b_ih, b_hh, w_o, b_o, and the row length P.
    pub fn offsets(&self) -> [usize; 7] {
        super::gru_params::GruParam::packed_offsets(self.f, self.h, self.o)
    }

    /// Values per run.
    pub fn n_params(&self) -> usize {
        self.offsets()[6]
    }

    /// Values per run of the packed gradient: the parameters' then the pass's summed
    /// squared error (the VJP computes p - y anyway, so the forward pass launches nothing
    /// for the loss).
    pub fn grad_len(&self) -> usize {
        self.n_params() + 1
    }
}

/// 1 / (1 + e^-x): saturates to 0 or 1 without a NaN.
#[cube]
pub(super) fn sigmoid(x: f32) -> f32 {
    1.0f32 / (1.0f32 + (-x).exp())
}

/// tanh in the CPU kernels' form: 2 sigmoid(2x) - 1 (no overflow to NaN for large |x|, which
/// some GPU tanh builtins produce), and the odd series near 0 where that form cancels.
#[cube]
pub(super) fn tanh_f(x: f32) -> f32 {
    let mut out = 2.0f32 / (1.0f32 + (-2.0f32 * x).exp()) - 1.0f32;
    if x.abs() < 0.3f32 {
        let x2 = x * x;
        // Horner from the x^2 term: a literal-only start would be a compile-time value.
        let mut p = x2 * (-1382.0f32 / 155_925.0f32) + 62.0f32 / 2835.0f32;
        p = p * x2 - 17.0f32 / 315.0f32;
        p = p * x2 + 2.0f32 / 15.0f32;
        p = p * x2 - 1.0f32 / 3.0f32;
        out = x + x * x2 * p;
    }
    out
}

/// The three gate pre-activations of unit `j` for one row: input part (r, z, n) and hidden
/// part (r, z, n) of W h + b, from weights at the given strides. Returns
/// (a_r, a_z, gi_n, gh_n): a_r and a_z are the summed pre-activations.
#[cube]
#[allow(clippy::too_many_arguments)]
fn gate_parts(
    w_ih: &Tensor<f32>,
    w_ih_at: usize,
    b_ih: &Tensor<f32>,
    b_ih_at: usize,
    w_hh: &Tensor<f32>,
    w_hh_at: usize,
    b_hh: &Tensor<f32>,
    b_hh_at: usize,
    x: &Tensor<f32>,
    x_at: usize,
    h: &Tensor<f32>,
    h_at: usize,
    j: usize,
    f: usize,
    hid: usize,
) -> (f32, f32, f32, f32) {
    let h3 = 3 * hid;
    let mut ar = b_ih[b_ih_at + j] + b_hh[b_hh_at + j];
    let mut az = b_ih[b_ih_at + hid + j] + b_hh[b_hh_at + hid + j];
    let mut gin = b_ih[b_ih_at + 2 * hid + j];
    let mut ghn = b_hh[b_hh_at + 2 * hid + j];
    for i in 0..f {
        let xv = x[x_at + i];
        let base = w_ih_at + i * h3;
        ar += xv * w_ih[base + j];
        az += xv * w_ih[base + hid + j];
        gin += xv * w_ih[base + 2 * hid + j];
    }
    for i in 0..hid {
        let hv = h[h_at + i];
        let base = w_hh_at + i * h3;
        ar += hv * w_hh[base + j];
        az += hv * w_hh[base + hid + j];
        ghn += hv * w_hh[base + 2 * hid + j];
    }
    (ar, az, gin, ghn)
}

/// A packed row's offsets inside a kernel, as [`PackedLayout::offsets`] (`GruParam`'s order,
/// which a kernel cannot call): w_hh, b_ih, b_hh, w_o, b_o, and the row length P. The
/// packed layout's round trip (`tests/cube_kernels.rs`) checks the two agree.
#[cube]
pub(super) fn packed_offsets(f: usize, hd: usize, od: usize) -> (usize, usize, usize, usize, usize, usize) {
    let h3 = 3 * hd;
    let p_w_hh = f * h3;
    let p_b_ih = p_w_hh + hd * h3;
    let p_b_hh = p_b_ih + h3;
    let p_w_o = p_b_hh + h3;
    let p_b_o = p_w_o + hd * od;
    (p_w_hh, p_b_ih, p_b_hh, p_w_o, p_b_o, p_b_o + od)
}

/// Values per row of the VJP's scratch inside a kernel, as [`scratch_len`].
#[cube]
pub(super) fn scratch_row(hd: usize, f: usize, od: usize) -> usize {
    8 * hd + od + f + 2
}

/// One GRU step: a unit per (run, row, hidden unit).
#[cube(launch_unchecked)]
fn gru_step_kernel(
    w_ih: &Tensor<f32>,
    w_hh: &Tensor<f32>,
    b_ih: &Tensor<f32>,
    b_hh: &Tensor<f32>,
    h: &Tensor<f32>,
    x: &Tensor<f32>,
    out: &mut Tensor<f32>,
    rows: u32,
    f: u32,
    hid: u32,
) {
    let pos = ABSOLUTE_POS;
    let (n, f, hid) = (rows as usize, f as usize, hid as usize);
    if pos >= out.len() {
        terminate!();
    }
    let h3 = 3 * hid;
    let j = pos % hid;
    let rr = pos / hid;
    let r = rr / n;
    let (ar, az, gin, ghn) =
        gate_parts(w_ih, r * f * h3, b_ih, r * h3, w_hh, r * hid * h3, b_hh, r * h3, x, rr * f, h, rr * hid, j, f, hid);
    let rg = sigmoid(ar);
    let z = sigmoid(az);
    let nn = tanh_f(gin + rg * ghn);
    out[pos] = nn + z * (h[pos] - nn);
}

/// The whole reversal of one step (spec §5): a cube per (run, row), every iteration inside,
/// g in workgroup memory. `hid` and `iters` are compile-time so the barriers sit in uniform
/// control flow (WGSL requires it).
#[cube(launch_unchecked)]
// Comparisons spelled as the CPU kernel's `fast_math::{at_least, clamp}` (NaN included).
#[allow(clippy::manual_clamp, clippy::neg_cmp_op_on_partial_ord)]
fn gru_reverse_kernel(
    w_ih: &Tensor<f32>,
    w_hh: &Tensor<f32>,
    b_ih: &Tensor<f32>,
    b_hh: &Tensor<f32>,
    h: &Tensor<f32>,
    x: &Tensor<f32>,
    out: &mut Tensor<f32>,
    rows: u32,
    f: u32,
    #[comptime] hid: u32,
    #[comptime] iters: u32,
) {
    let (n, f) = (rows as usize, f as usize);
    let hid_u = hid as usize;
    let h3 = 3 * hid_u;
    // The (run, row) index: the grid's cubes in order, whatever its shape (`per_row`).
    let rr = CUBE_POS;
    let r = rr / n;
    let step = CUBE_DIM_X as usize;
    // Two halves, swapped every iteration (one barrier each): it reads g from one, writes the
    // next iterate to the other.
    let mut g = Shared::<[f32]>::new_slice(comptime!(2 * hid as usize));
    let mut j = UNIT_POS_X as usize;
    while j < hid_u {
        g[j] = h[rr * hid_u + j];
        j += step;
    }
    sync_cube();
    for it in 0..iters {
        let cur = (it % 2) as usize * hid_u;
        let next = hid_u - cur;
        let mut j = UNIT_POS_X as usize;
        while j < hid_u {
            let mut ar = b_ih[r * h3 + j] + b_hh[r * h3 + j];
            let mut az = b_ih[r * h3 + hid_u + j] + b_hh[r * h3 + hid_u + j];
            let mut gin = b_ih[r * h3 + 2 * hid_u + j];
            let mut ghn = b_hh[r * h3 + 2 * hid_u + j];
            for i in 0..f {
                let xv = x[rr * f + i];
                let base = r * f * h3 + i * h3;
                ar += xv * w_ih[base + j];
                az += xv * w_ih[base + hid_u + j];
                gin += xv * w_ih[base + 2 * hid_u + j];
            }
            for i in 0..hid_u {
                let gv = g[cur + i];
                let base = r * hid_u * h3 + i * h3;
                ar += gv * w_hh[base + j];
                az += gv * w_hh[base + hid_u + j];
                ghn += gv * w_hh[base + 2 * hid_u + j];
            }
            let rg = sigmoid(ar);
            let z = sigmoid(az);
            let nn = tanh_f(gin + rg * ghn);
            let mut den = z;
            if !(z > 0.05f32) {
                den = 0.05f32;
            }
            let mut v = (h[rr * hid_u + j] - (1.0f32 - z) * nn) / den;
            if v < -1.0f32 {
                v = -1.0f32;
            }
            if v > 1.0f32 {
                v = 1.0f32;
            }
            g[next + j] = v;
            j += step;
        }
        sync_cube();
    }
    let last = (iters % 2) as usize * hid_u;
    let mut j = UNIT_POS_X as usize;
    while j < hid_u {
        out[rr * hid_u + j] = g[last + j];
        j += step;
    }
}

/// Copy the six parameter tensors into one packed row per run ([`PackedLayout`]).
#[cube(launch_unchecked)]
fn gru_pack_kernel(
    w_ih: &Tensor<f32>,
    w_hh: &Tensor<f32>,
    b_ih: &Tensor<f32>,
    b_hh: &Tensor<f32>,
    w_o: &Tensor<f32>,
    b_o: &Tensor<f32>,
    out: &mut Tensor<f32>,
    o1: u32,
    o2: u32,
    o3: u32,
    o4: u32,
    o5: u32,
    plen: u32,
) {
    let pos = ABSOLUTE_POS;
    if pos >= out.len() {
        terminate!();
    }
    let p = plen as usize;
    let (o1, o2, o3, o4, o5) = (o1 as usize, o2 as usize, o3 as usize, o4 as usize, o5 as usize);
    let r = pos / p;
    let q = pos % p;
    if q < o1 {
        out[pos] = w_ih[r * o1 + q];
    } else if q < o2 {
        out[pos] = w_hh[r * (o2 - o1) + q - o1];
    } else if q < o3 {
        out[pos] = b_ih[r * (o3 - o2) + q - o2];
    } else if q < o4 {
        out[pos] = b_hh[r * (o4 - o3) + q - o3];
    } else if q < o5 {
        out[pos] = w_o[r * (o5 - o4) + q - o4];
    } else {
        out[pos] = b_o[r * (p - o5) + q - o5];
    }
}

/// Split packed rows `[R, 1, P]` into up to six tensors `[R, 1, len]` (`gru_pack_kernel`
/// undone), values `at[0]..at[6]` of each row: a unit per value, written to the output its
/// offset falls in. An output past the last real one is a one-value placeholder nothing
/// writes to (its range is empty).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn split_packed_kernel(
    p: &Tensor<f32>,
    a: &mut Tensor<f32>,
    b: &mut Tensor<f32>,
    c: &mut Tensor<f32>,
    d: &mut Tensor<f32>,
    e: &mut Tensor<f32>,
    g: &mut Tensor<f32>,
    at0: u32,
    at1: u32,
    at2: u32,
    at3: u32,
    at4: u32,
    at5: u32,
    at6: u32,
    plen: u32,
    runs: u32,
) {
    let (o0, o1, o2, o3, o4, o5, o6) =
        (at0 as usize, at1 as usize, at2 as usize, at3 as usize, at4 as usize, at5 as usize, at6 as usize);
    let width = o6 - o0;
    let pos = ABSOLUTE_POS;
    if pos >= runs as usize * width {
        terminate!();
    }
    let r = pos / width;
    let q = o0 + pos % width;
    let v = p[r * plen as usize + q];
    if q < o1 {
        a[r * (o1 - o0) + q - o0] = v;
    } else if q < o2 {
        b[r * (o2 - o1) + q - o1] = v;
    } else if q < o3 {
        c[r * (o3 - o2) + q - o2] = v;
    } else if q < o4 {
        d[r * (o4 - o3) + q - o3] = v;
    } else if q < o5 {
        e[r * (o5 - o4) + q - o4] = v;
    } else {
        g[r * (o6 - o5) + q - o5] = v;
    }
}

/// Per-row part of the VJP: a cube per (run, row). Recomputes the step from h_prev, the
/// readout and its loss gradient dp = 2 scale (p - y), then back through the gates: writes
/// dh_prev and, to `scratch`, what the weight gradients need (per row, see [`scratch_len`]:
/// dgi 3H | dgh 3H | h' H | dp O | x F | h_prev H | 1 | sum (p - y)^2), so that every
/// gradient value, and the loss, is a sum over rows of one scratch product.
#[cube(launch_unchecked)]
fn gru_vjp_rows_kernel(
    pk: &Tensor<f32>,
    h_prev: &Tensor<f32>,
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    dh: &Tensor<f32>,
    dh_prev: &mut Tensor<f32>,
    scratch: &mut Tensor<f32>,
    rows: u32,
    f: u32,
    scale: f32,
    #[comptime] hid: u32,
    #[comptime] o: u32,
) {
    let (n, f) = (rows as usize, f as usize);
    let (hd, od) = (hid as usize, o as usize);
    let h3 = 3 * hd;
    // The (run, row) index: the grid's cubes in order, whatever its shape (`per_row`).
    let rr = CUBE_POS;
    let r = rr / n;
    let step = CUBE_DIM_X as usize;
    // The packed row's offsets (PackedLayout::offsets).
    let (p_w_hh, p_b_ih, p_b_hh, p_w_o, p_b_o, plen) = packed_offsets(f, hd, od);
    let base = r * plen;
    let s_len = scratch_row(hd, f, od);
    let s = rr * s_len;
    let mut sqs = Shared::<[f32]>::new_slice(comptime!(o as usize));
    let mut hs = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut dps = Shared::<[f32]>::new_slice(comptime!(o as usize));
    let mut dghs = Shared::<[f32]>::new_slice(comptime!(3 * hid as usize));

    // 0. The factors the weight gradients multiply dgi, dgh and dp by.
    let mut i = UNIT_POS_X as usize;
    while i < f {
        scratch[s + 7 * hd + od + i] = x[rr * f + i];
        i += step;
    }
    let mut i = UNIT_POS_X as usize;
    while i < hd {
        scratch[s + 7 * hd + od + f + i] = h_prev[rr * hd + i];
        i += step;
    }
    if UNIT_POS_X == 0 {
        scratch[s + s_len - 2] = 1.0f32;
    }
    // 1. The step: h' (shared) and the gates, kept for phase 3 in this unit's own scratch
    // slots (dgi's, overwritten there by the same unit).
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        let (ar, az, gin, ghn) = gate_parts(
            pk,
            base,
            pk,
            base + p_b_ih,
            pk,
            base + p_w_hh,
            pk,
            base + p_b_hh,
            x,
            rr * f,
            h_prev,
            rr * hd,
            j,
            f,
            hd,
        );
        let rg = sigmoid(ar);
        let z = sigmoid(az);
        let nn = tanh_f(gin + rg * ghn);
        let hn = nn + z * (h_prev[rr * hd + j] - nn);
        hs[j] = hn;
        scratch[s + 6 * hd + j] = hn;
        scratch[s + j] = rg;
        scratch[s + hd + j] = z;
        scratch[s + 2 * hd + j] = nn;
        scratch[s + 3 * hd + j] = ghn;
        j += step;
    }
    sync_cube();
    // 2. Readout and dp.
    let mut k = UNIT_POS_X as usize;
    while k < od {
        let mut p = pk[base + p_b_o + k];
        for i in 0..hd {
            p += hs[i] * pk[base + p_w_o + i * od + k];
        }
        let e = p - y[rr * od + k];
        let d = 2.0f32 * scale * e;
        sqs[k] = e * e;
        dps[k] = d;
        scratch[s + 7 * hd + k] = d;
        k += step;
    }
    sync_cube();
    // The row's squared error, summed in o's order.
    if UNIT_POS_X == 0 {
        let mut sq = 0.0f32;
        for k in 0..od {
            sq += sqs[k];
        }
        scratch[s + s_len - 1] = sq;
    }
    // 3. Through h' = n + z (h - n) and the gates.
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        let mut d = dh[rr * hd + j];
        for k in 0..od {
            d += dps[k] * pk[base + p_w_o + j * od + k];
        }
        let rg = scratch[s + j];
        let z = scratch[s + hd + j];
        let nn = scratch[s + 2 * hd + j];
        let ghn = scratch[s + 3 * hd + j];
        let dz = d * (h_prev[rr * hd + j] - nn);
        let dn = d * (1.0f32 - z);
        let dan = dn * (1.0f32 - nn * nn);
        let dar = dan * ghn * rg * (1.0f32 - rg);
        let daz = dz * z * (1.0f32 - z);
        scratch[s + j] = dar;
        scratch[s + hd + j] = daz;
        scratch[s + 2 * hd + j] = dan;
        scratch[s + h3 + j] = dar;
        scratch[s + h3 + hd + j] = daz;
        scratch[s + h3 + 2 * hd + j] = dan * rg;
        dghs[j] = dar;
        dghs[hd + j] = daz;
        dghs[2 * hd + j] = dan * rg;
        dh_prev[rr * hd + j] = d * z;
        j += step;
    }
    sync_cube();
    // 4. dh_prev += dgh W_hh^T.
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        let mut acc = dh_prev[rr * hd + j];
        let w = base + p_w_hh + j * h3;
        for k in 0..h3 {
            acc += dghs[k] * pk[w + k];
        }
        dh_prev[rr * hd + j] = acc;
        j += step;
    }
}

/// Weight-gradient part of the VJP: a unit per packed gradient value (the last of a run's is
/// its squared error), `g_out = g_in + sum over rows of scratch[a] * scratch[b]` (without
/// `g_in`, not read, unless `add`), its two scratch slots found once (no branch or division
/// in the row loop).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
pub(super) fn gru_vjp_weights_kernel(
    g_in: &Tensor<f32>,
    scratch: &Tensor<f32>,
    g_out: &mut Tensor<f32>,
    rows: u32,
    f: u32,
    hid: u32,
    o: u32,
    add: u32,
) {
    let pos = ABSOLUTE_POS;
    if pos >= g_out.len() {
        terminate!();
    }
    let (n, f, hd, od) = (rows as usize, f as usize, hid as usize, o as usize);
    let h3 = 3 * hd;
    let (p_w_hh, p_b_ih, p_b_hh, p_w_o, p_b_o, params) = packed_offsets(f, hd, od);
    let plen = params + 1;
    let s_len = scratch_row(hd, f, od);
    let (s_x, s_hp, s_one) = (7 * hd + od, 7 * hd + od + f, s_len - 2);
    let r = pos / plen;
    let q = pos % plen;
    // (a, b): w_ih = x^T dgi, w_hh = h_prev^T dgh, biases = 1 . dg, w_o = h'^T dp, and
    // the squared error 1 . sq.
    let mut a = s_one;
    let mut b = 7 * hd + q - p_b_o;
    if q == plen - 1 {
        b = s_len - 1;
    } else if q < p_w_hh {
        a = s_x + q / h3;
        b = q % h3;
    } else if q < p_b_ih {
        a = s_hp + (q - p_w_hh) / h3;
        b = h3 + (q - p_w_hh) % h3;
    } else if q < p_b_hh {
        b = q - p_b_ih;
    } else if q < p_w_o {
        b = h3 + q - p_b_hh;
    } else if q < p_b_o {
        a = 6 * hd + (q - p_w_o) / od;
        b = 7 * hd + (q - p_w_o) % od;
    }
    let mut acc = 0.0f32;
    let mut s = r * n * s_len;
    for _ in 0..n {
        acc += scratch[s + a] * scratch[s + b];
        s += s_len;
    }
    if add == 1 {
        acc += g_in[pos];
    }
    g_out[pos] = acc;
}

/// One optimizer step per cube (a cube per run) on a run's packed values: its gradient's
/// global norm, summed in a fixed order (each unit's strided share, then unit 0 over the
/// shares), the divergence mask (a loss or norm not finite zeroes the run's parameters,
/// moments and lr), the clip and Adam, as `optimizer_step`'s tensor ops do them. p, m, v and
/// lr are updated in place; the raw norm goes to `norms`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn adam_packed_kernel(
    p: &mut Tensor<f32>,
    g: &Tensor<f32>,
    m: &mut Tensor<f32>,
    v: &mut Tensor<f32>,
    loss: &Tensor<f32>,
    lr: &mut Tensor<f32>,
    norms: &mut Tensor<f32>,
    plen: u32,
    gstride: u32,
    b1: f32,
    one_minus_b1: f32,
    b2: f32,
    one_minus_b2: f32,
    bc1: f32,
    sqrt_bc2: f32,
    eps: f32,
    clip: f32,
    #[comptime] units: u32,
) {
    let run = CUBE_POS;
    let n = plen as usize;
    let base = run * n;
    let gbase = run * gstride as usize;
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    let mut shares = Shared::<[f32]>::new_slice(comptime!(units as usize));
    let mut total = Shared::<[f32]>::new_slice(1usize);
    let mut acc = 0.0f32;
    let mut i = u;
    while i < n {
        let gv = g[gbase + i];
        acc += gv * gv;
        i += step;
    }
    shares[u] = acc;
    sync_cube();
    if u == 0 {
        let mut sum = 0.0f32;
        for k in 0..comptime!(units as usize) {
            sum += shares[k];
        }
        total[0] = sum;
    }
    sync_cube();
    let norm = total[0].sqrt();
    let l = loss[run];
    let bad = l.is_nan() || l.is_inf() || norm.is_nan() || norm.is_inf();
    // clamp_max(1): a NaN coefficient stays NaN, but a bad run never reads it.
    let mut coef = (1.0f32 / (norm + 1e-6f32)) * clip;
    if coef > 1.0f32 {
        coef = 1.0f32;
    }
    let rate = lr[run];
    let mut i = u;
    while i < n {
        if bad {
            p[base + i] = 0.0f32;
            m[base + i] = 0.0f32;
            v[base + i] = 0.0f32;
        } else {
            let gv = g[gbase + i] * coef;
            let mv = m[base + i] * b1 + gv * one_minus_b1;
            let vv = v[base + i] * b2 + gv * gv * one_minus_b2;
            let denom = vv.sqrt() / sqrt_bc2 + eps;
            p[base + i] -= (mv / denom) / bc1 * rate;
            m[base + i] = mv;
            v[base + i] = vv;
        }
        i += step;
    }
    if u == 0 {
        norms[run] = norm;
        if bad {
            lr[run] = 0.0f32;
        }
    }
}

/// Values per row of the VJP's scratch: dgi 3H | dgh 3H | h' H | dp O | x F | h_prev H | 1 |
/// sum (p - y)^2.
pub(super) fn scratch_len(hid: usize, f: usize, o: usize) -> usize {
    8 * hid + o + f + 2
}

/// Units per cube for the per-(run, row) kernels: a power of two covering H, at most 256
/// (WebGPU's guaranteed workgroup size); larger H loops.
pub(super) fn row_units(hid: usize) -> u32 {
    (hid.next_power_of_two().clamp(32, 256)) as u32
}

pub(super) fn dims3(t: &CubeTensor) -> [usize; 3] {
    t.meta.shape().dims::<3>()
}

pub(super) fn empty(like: &CubeTensor, shape: [usize; 3]) -> CubeTensor {
    empty_device_contiguous_dtype(like.client.clone(), like.device.clone(), shape.into(), DType::F32)
}

pub(super) fn elementwise(like: &CubeTensor, n: usize) -> (CubeCount, CubeDim) {
    let dim = CubeDim::new_1d(256);
    (calculate_cube_count_elemwise(&like.client, n, dim), dim)
}

/// WebGPU's guaranteed workgroups per grid dimension.
const MAX_CUBES: usize = 65_535;

/// The cube count of a kernel with one cube per (run, row): `runs * rows` cubes, the kernel
/// reading its index as `CUBE_POS` (the cubes in order). WebGPU caps each grid dimension at
/// 65535, and these kernels have barriers, so a cube past the end could not simply return
/// (WGSL wants barriers in uniform control flow): the grid is an exact factorisation, rows ×
/// runs, or, for more than 65535 rows per run, the rows split once more.
pub(super) fn per_row(runs: usize, rows: usize) -> CubeCount {
    let (x, y) = if rows <= MAX_CUBES { (rows, 1) } else { split(rows) };
    assert!(
        runs <= MAX_CUBES && y <= MAX_CUBES,
        "{runs} runs x {rows} rows have no grid of at most 65535 workgroups per dimension"
    );
    CubeCount::Static(x as u32, y as u32, runs as u32)
}

/// `n` as `x * y` with `x` the largest divisor of `n` not above 65535 (then `y` as small as a
/// divisor allows).
fn split(n: usize) -> (usize, usize) {
    let x = (1..=MAX_CUBES.min(n)).rev().find(|&d| n.is_multiple_of(d)).unwrap_or(1);
    (x, n / x)
}

impl CellKernels for Cube {
    fn gru_reverse(
        w_ih: CubeTensor,
        w_hh: CubeTensor,
        b_ih: CubeTensor,
        b_hh: CubeTensor,
        h: CubeTensor,
        x: CubeTensor,
        iters: usize,
    ) -> CubeTensor {
        let [w_ih, w_hh, b_ih, b_hh, h, x] = [w_ih, w_hh, b_ih, b_hh, h, x].map(into_contiguous);
        let [r, n, hid] = dims3(&h);
        let f = dims3(&x)[2];
        let out = empty(&h, [r, n, hid]);
        let client = h.client.clone();
        // The kernel runs `iters` iterations for every run; the host cannot count inside a GPU
        // kernel, so the launch counts what it asks for.
        crate::model::evals::reversal(r * iters);
        // SAFETY: every index the kernel reads or writes is within the tensors it is given
        // (their shapes are checked above or built here); cubecl\'s per-access bounds checks
        // are what made these kernels slow on software adapters.
        unsafe {
            gru_reverse_kernel::launch_unchecked(
                &client,
                per_row(r, n),
                CubeDim::new_1d(row_units(hid)),
                w_ih.into_tensor_arg(),
                w_hh.into_tensor_arg(),
                b_ih.into_tensor_arg(),
                b_hh.into_tensor_arg(),
                h.into_tensor_arg(),
                x.into_tensor_arg(),
                out.clone().into_tensor_arg(),
                n as u32,
                f as u32,
                hid as u32,
                iters as u32,
            )
        };
        out
    }

    fn gru_step(
        w_ih: CubeTensor,
        w_hh: CubeTensor,
        b_ih: CubeTensor,
        b_hh: CubeTensor,
        h: CubeTensor,
        x: CubeTensor,
    ) -> CubeTensor {
        let [w_ih, w_hh, b_ih, b_hh, h, x] = [w_ih, w_hh, b_ih, b_hh, h, x].map(into_contiguous);
        let [r, n, hid] = dims3(&h);
        let f = dims3(&x)[2];
        let out = empty(&h, [r, n, hid]);
        let (count, dim) = elementwise(&h, r * n * hid);
        let client = h.client.clone();
        crate::model::evals::forward(r);
        // SAFETY: every index the kernel reads or writes is within the tensors it is given
        // (their shapes are checked above or built here); cubecl\'s per-access bounds checks
        // are what made these kernels slow on software adapters.
        unsafe {
            gru_step_kernel::launch_unchecked(
                &client,
                count,
                dim,
                w_ih.into_tensor_arg(),
                w_hh.into_tensor_arg(),
                b_ih.into_tensor_arg(),
                b_hh.into_tensor_arg(),
                h.into_tensor_arg(),
                x.into_tensor_arg(),
                out.clone().into_tensor_arg(),
                n as u32,
                f as u32,
                hid as u32,
            )
        };
        out
    }
}

/// The GRU operations only the GPU path has: packing, and the VJP on packed parameters and
/// gradients.
#[burn::backend::backend_extension(Cube)]
pub trait GruCubeKernels: burn::backend::Backend {
    /// The six parameters in one `[R, 1, P]` tensor ([`PackedLayout`]).
    #[allow(clippy::too_many_arguments)]
    fn gru_pack(
        w_ih: FloatTensor<Self>,
        w_hh: FloatTensor<Self>,
        b_ih: FloatTensor<Self>,
        b_hh: FloatTensor<Self>,
        w_o: FloatTensor<Self>,
        b_o: FloatTensor<Self>,
    ) -> FloatTensor<Self>;

    /// Packed rows `p` `[R, 1, P]` split at `at` (ascending offsets, at most seven: up to six
    /// parts) into `[R, 1, len]` tensors, in one launch; parts past the last are
    /// placeholders `[1, 1, 1]`.
    #[allow(clippy::type_complexity)]
    fn split_packed(
        p: FloatTensor<Self>,
        at: [usize; 7],
        parts: usize,
    ) -> (
        FloatTensor<Self>,
        FloatTensor<Self>,
        FloatTensor<Self>,
        FloatTensor<Self>,
        FloatTensor<Self>,
        FloatTensor<Self>,
    );

    /// The CPU's [`gru_step_vjp`](super::kernels::GruHostVjp::gru_step_vjp) on packed
    /// parameters `pk` `[R, 1, P]` and a packed gradient `g` `[R, 1, P + 1]` whose last
    /// value per run sums the squared error `sum((h' w_o + b_o - y)^2)`: returns the
    /// gradient for h_prev and the updated `g`.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn gru_step_vjp_packed(
        pk: FloatTensor<Self>,
        h_prev: FloatTensor<Self>,
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        dh: FloatTensor<Self>,
        scale: f32,
        g: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// One optimizer step on packed `[R, 1, P]` parameters `p`, gradient `g` (`[R, 1, P]`, or
    /// `[R, 1, P + 1]` as the VJP leaves it, its last value per run ignored) and Adam moments
    /// `m`, `v`, with per-run losses and lrs `[R, 1, 1]` (see `adam_packed_kernel`): returns
    /// the new p, m, v, lr and the per-run gradient norms `[R, 1, 1]`. `bc1` = 1 - beta1^t,
    /// `sqrt_bc2` = sqrt(1 - beta2^t).
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn adam_packed(
        p: FloatTensor<Self>,
        g: FloatTensor<Self>,
        m: FloatTensor<Self>,
        v: FloatTensor<Self>,
        loss: FloatTensor<Self>,
        lr: FloatTensor<Self>,
        bc1: f32,
        sqrt_bc2: f32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);
}

impl GruCubeKernels for Cube {
    fn gru_pack(
        w_ih: CubeTensor,
        w_hh: CubeTensor,
        b_ih: CubeTensor,
        b_hh: CubeTensor,
        w_o: CubeTensor,
        b_o: CubeTensor,
    ) -> CubeTensor {
        let [w_ih, w_hh, b_ih, b_hh, w_o, b_o] = [w_ih, w_hh, b_ih, b_hh, w_o, b_o].map(into_contiguous);
        let [r, f, h3] = dims3(&w_ih);
        let o = dims3(&w_o)[2];
        let layout = PackedLayout { f, h: h3 / 3, o };
        let off = layout.offsets();
        let out = empty(&w_ih, [r, 1, layout.n_params()]);
        let (count, dim) = elementwise(&w_ih, r * layout.n_params());
        let client = w_ih.client.clone();
        // SAFETY: every index the kernel reads or writes is within the tensors it is given
        // (their shapes are checked above or built here); cubecl\'s per-access bounds checks
        // are what made these kernels slow on software adapters.
        unsafe {
            gru_pack_kernel::launch_unchecked(
                &client,
                count,
                dim,
                w_ih.into_tensor_arg(),
                w_hh.into_tensor_arg(),
                b_ih.into_tensor_arg(),
                b_hh.into_tensor_arg(),
                w_o.into_tensor_arg(),
                b_o.into_tensor_arg(),
                out.clone().into_tensor_arg(),
                off[1] as u32,
                off[2] as u32,
                off[3] as u32,
                off[4] as u32,
                off[5] as u32,
                off[6] as u32,
            )
        };
        out
    }

    fn split_packed(
        p: CubeTensor,
        at: [usize; 7],
        parts: usize,
    ) -> (CubeTensor, CubeTensor, CubeTensor, CubeTensor, CubeTensor, CubeTensor) {
        let p = into_contiguous(p);
        let [r, _, plen] = dims3(&p);
        assert!(parts <= 6 && at[parts] <= plen, "a split of {parts} parts past the packed row");
        // Placeholder parts have empty ranges at the end.
        let mut at = at;
        for i in parts + 1..7 {
            at[i] = at[parts];
        }
        let outs: [CubeTensor; 6] =
            std::array::from_fn(
                |i| if i < parts { empty(&p, [r, 1, at[i + 1] - at[i]]) } else { empty(&p, [1, 1, 1]) },
            );
        let width = at[6] - at[0];
        let (count, dim) = elementwise(&p, r * width);
        let client = p.client.clone();
        // SAFETY: a unit reads value at[0] + i of its run's row (within P, checked above) and
        // writes it to the part whose range holds it, each sized here for its range.
        unsafe {
            split_packed_kernel::launch_unchecked(
                &client,
                count,
                dim,
                p.into_tensor_arg(),
                outs[0].clone().into_tensor_arg(),
                outs[1].clone().into_tensor_arg(),
                outs[2].clone().into_tensor_arg(),
                outs[3].clone().into_tensor_arg(),
                outs[4].clone().into_tensor_arg(),
                outs[5].clone().into_tensor_arg(),
                at[0] as u32,
                at[1] as u32,
                at[2] as u32,
                at[3] as u32,
                at[4] as u32,
                at[5] as u32,
                at[6] as u32,
                plen as u32,
                r as u32,
            )
        };
        let [a, b, c, d, e, g] = outs;
        (a, b, c, d, e, g)
    }

    fn gru_step_vjp_packed(
        pk: CubeTensor,
        h_prev: CubeTensor,
        x: CubeTensor,
        y: CubeTensor,
        dh: CubeTensor,
        scale: f32,
        g: CubeTensor,
    ) -> (CubeTensor, CubeTensor) {
        let [pk, h_prev, x, y, dh, g] = [pk, h_prev, x, y, dh, g].map(into_contiguous);
        let [r, n, hid] = dims3(&h_prev);
        let (f, o) = (dims3(&x)[2], dims3(&y)[2]);
        let layout = PackedLayout { f, h: hid, o };
        assert_eq!(dims3(&pk)[2], layout.n_params(), "packed GRU parameters of another shape");
        let plen = layout.grad_len();
        assert_eq!(dims3(&g)[2], plen, "a packed GRU gradient of another shape");
        let dh_prev = empty(&h_prev, [r, n, hid]);
        let scratch = empty(&h_prev, [r, n, scratch_len(hid, f, o)]);
        let client = h_prev.client.clone();
        crate::model::evals::vjp(r);
        // SAFETY: every index the kernel reads or writes is within the tensors it is given
        // (their shapes are checked above or built here); cubecl\'s per-access bounds checks
        // are what made these kernels slow on software adapters.
        unsafe {
            gru_vjp_rows_kernel::launch_unchecked(
                &client,
                per_row(r, n),
                CubeDim::new_1d(row_units(hid)),
                pk.into_tensor_arg(),
                h_prev.into_tensor_arg(),
                x.into_tensor_arg(),
                y.into_tensor_arg(),
                dh.into_tensor_arg(),
                dh_prev.clone().into_tensor_arg(),
                scratch.clone().into_tensor_arg(),
                n as u32,
                f as u32,
                scale,
                hid as u32,
                o as u32,
            )
        };
        let g_out = empty(&g, [r, 1, plen]);
        let (count, dim) = elementwise(&g, r * plen);
        // SAFETY: every index the kernel reads or writes is within the tensors it is given
        // (their shapes are checked above or built here); cubecl\'s per-access bounds checks
        // are what made these kernels slow on software adapters.
        unsafe {
            gru_vjp_weights_kernel::launch_unchecked(
                &client,
                count,
                dim,
                g.into_tensor_arg(),
                scratch.into_tensor_arg(),
                g_out.clone().into_tensor_arg(),
                n as u32,
                f as u32,
                hid as u32,
                o as u32,
                1u32,
            )
        };
        (dh_prev, g_out)
    }

    fn adam_packed(
        p: CubeTensor,
        g: CubeTensor,
        m: CubeTensor,
        v: CubeTensor,
        loss: CubeTensor,
        lr: CubeTensor,
        bc1: f32,
        sqrt_bc2: f32,
    ) -> (CubeTensor, CubeTensor, CubeTensor, CubeTensor, CubeTensor) {
        use rdbench_core::optimizer::{BETA1, BETA2, CLIP_NORM, EPS};
        // Written in place: a buffer shared with another tensor is copied first.
        let own = |t: CubeTensor| if t.can_mut() { t } else { t.copy() };
        let [p, g, m, v, loss, lr] = [p, g, m, v, loss, lr].map(into_contiguous);
        let [p, m, v, lr] = [p, m, v, lr].map(own);
        let [r, _, plen] = dims3(&p);
        for t in [&m, &v] {
            assert_eq!(dims3(t), [r, 1, plen], "packed optimizer tensors of another shape");
        }
        // The gradient may carry its pass's loss after the P values (the VJP's layout).
        let gstride = dims3(&g)[2];
        assert!(
            dims3(&g)[..2] == [r, 1] && (gstride == plen || gstride == plen + 1),
            "a packed gradient of another shape"
        );
        let norms = empty(&p, [r, 1, 1]);
        let client = p.client.clone();
        let units = 256u32;
        // SAFETY: every index the kernel reads or writes is within the tensors it is given
        // (their shapes are checked above or built here); p, m, v and lr are written in
        // place, and the optimizer owns them (packed here, or its own state).
        unsafe {
            adam_packed_kernel::launch_unchecked(
                &client,
                per_row(r, 1),
                CubeDim::new_1d(units),
                p.clone().into_tensor_arg(),
                g.into_tensor_arg(),
                m.clone().into_tensor_arg(),
                v.clone().into_tensor_arg(),
                loss.into_tensor_arg(),
                lr.clone().into_tensor_arg(),
                norms.clone().into_tensor_arg(),
                plen as u32,
                gstride as u32,
                BETA1 as f32,
                (1.0 - BETA1) as f32,
                BETA2 as f32,
                (1.0 - BETA2) as f32,
                bc1,
                sqrt_bc2,
                EPS as f32,
                CLIP_NORM as f32,
                units,
            )
        };
        (p, m, v, lr, norms)
    }
}

/// The packed optimizer step on tensors (see [`GruCubeKernels::adam_packed`]).
#[allow(clippy::too_many_arguments)]
pub fn adam_packed(
    p: BTensor<3>,
    g: BTensor<3>,
    m: BTensor<3>,
    v: BTensor<3>,
    loss: BTensor<3>,
    lr: BTensor<3>,
    bc1: f32,
    sqrt_bc2: f32,
) -> [BTensor<3>; 5] {
    let (p, m, v, lr, norms) = <D as GruCubeKernels>::adam_packed(
        p.into_dispatch(),
        g.into_dispatch(),
        m.into_dispatch(),
        v.into_dispatch(),
        loss.into_dispatch(),
        lr.into_dispatch(),
        bc1,
        sqrt_bc2,
    );
    [p, m, v, lr, norms].map(BTensor::from_dispatch)
}

/// The runtime-dispatched backend the tensor API runs on.
type D = burn::backend::Dispatch;

/// Packed rows `[R, 1, P]` as tensors of `shapes` (`[R, a, b]`, their values in order), six
/// per launch.
pub fn split_packed(p: BTensor<3>, shapes: &[[usize; 3]]) -> Vec<BTensor<3>> {
    let mut out = Vec::with_capacity(shapes.len());
    let mut start = 0;
    for group in shapes.chunks(6) {
        let mut at = [start; 7];
        for (i, &[_, a, b]) in group.iter().enumerate() {
            at[i + 1] = at[i] + a * b;
        }
        let (a, b, c, d, e, g) = <D as GruCubeKernels>::split_packed(p.clone().into_dispatch(), at, group.len());
        for (part, &[r, a, b]) in [a, b, c, d, e, g].into_iter().zip(group) {
            out.push(BTensor::<3>::from_dispatch(part).reshape([r, a, b]));
        }
        start = at[group.len()];
    }
    out
}

/// The GRU's six parameters packed into `[R, 1, P]` (see [`PackedLayout`]): the rows the
/// optimizer left where they are known (`packed_rows`), else one launch.
pub fn gru_pack(p: &[BTensor<3>]) -> BTensor<3> {
    if let Some(known) = super::packed_rows::of(p) {
        return known;
    }
    let d = |i: usize| p[i].clone().into_dispatch();
    BTensor::from_dispatch(<D as GruCubeKernels>::gru_pack(d(0), d(1), d(2), d(3), d(4), d(5)))
}

/// The packed VJP on tensors (see [`GruCubeKernels::gru_step_vjp_packed`]).
pub fn gru_step_vjp_packed(
    pk: BTensor<3>,
    h_prev: BTensor<3>,
    x: BTensor<3>,
    y: BTensor<3>,
    dh: BTensor<3>,
    scale: f32,
    g: BTensor<3>,
) -> (BTensor<3>, BTensor<3>) {
    let (dh_prev, g) = <D as GruCubeKernels>::gru_step_vjp_packed(
        pk.into_dispatch(),
        h_prev.into_dispatch(),
        x.into_dispatch(),
        y.into_dispatch(),
        dh.into_dispatch(),
        scale,
        g.into_dispatch(),
    );
    (BTensor::from_dispatch(dh_prev), BTensor::from_dispatch(g))
}
