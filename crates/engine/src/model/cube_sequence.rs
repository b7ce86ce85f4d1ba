//! The GRU's whole-sequence kernels on the GPU: a training pass of the reversal schedule,
//! every run at its own checkpoint interval k (dense BPTT is k = 1), in a handful of
//! launches whatever T. The forward pass is one kernel (a cube per (run, row), the state in
//! workgroup memory through all T) writing each run's checkpoints to a store; the backward
//! pass is one kernel per chunk of time steps walking t = T..1 with the state and its
//! gradient in workgroup memory, h_{t-1} read from the store or rebuilt by the reversal's
//! fixed-point iterations inside the kernel, plus the per-step kernels' weight reduction
//! over the chunk's (step, row) pairs. Chunks keep the scratch under WebGPU's binding limit;
//! at the default config a pass has one.
//!
//! WGSL wants barriers in uniform control flow, and cubecl's scalar arguments are not
//! uniform there: loops that hold a barrier have compile-time bounds (T, the chunk's length,
//! the reversal's iterations), and the reversal runs at every step of a pass that has one,
//! its result taken only where the run has no checkpoint (k differs per run, so it cannot
//! decide a branch around a barrier).

use super::cube_kernels::{
    dims3, elementwise, empty, gru_vjp_weights_kernel, packed_offsets, per_row, row_units, scratch_len, scratch_row,
    sigmoid, tanh_f,
};
use burn::backend::Cube;
use burn::backend::tensor::FloatTensor;
use burn::tensor::{Tensor as BTensor, TensorData};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::tensor::CubeTensor;
use cubecl::CubeDim;
use cubecl::prelude::*;

/// The three gate pre-activations of unit `j` (as `cube_kernels::gate_parts`) from a packed
/// parameter row at `base`, the input at `x_at` and a state in workgroup memory at `g_at`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn gates_shared(
    pk: &Tensor<f32>,
    base: usize,
    x: &Tensor<f32>,
    x_at: usize,
    g: &Shared<[f32]>,
    g_at: usize,
    j: usize,
    f: usize,
    hid: usize,
    od: usize,
) -> (f32, f32, f32, f32) {
    let (p_w_hh, p_b_ih, p_b_hh, _w_o, _b_o, _plen) = packed_offsets(f, hid, od);
    let h3 = 3 * hid;
    let mut ar = pk[base + p_b_ih + j] + pk[base + p_b_hh + j];
    let mut az = pk[base + p_b_ih + hid + j] + pk[base + p_b_hh + hid + j];
    let mut gin = pk[base + p_b_ih + 2 * hid + j];
    let mut ghn = pk[base + p_b_hh + 2 * hid + j];
    for i in 0..f {
        let xv = x[x_at + i];
        let w = base + i * h3;
        ar += xv * pk[w + j];
        az += xv * pk[w + hid + j];
        gin += xv * pk[w + 2 * hid + j];
    }
    for i in 0..hid {
        let hv = g[g_at + i];
        let w = base + p_w_hh + i * h3;
        ar += hv * pk[w + j];
        az += hv * pk[w + hid + j];
        ghn += hv * pk[w + 2 * hid + j];
    }
    (ar, az, gin, ghn)
}

/// One fixed-point iteration of the reversal for unit `j` (spec §5, as `gru_reverse_kernel`):
/// the next iterate from the current one `g[g_at..]`, toward the state `h` that step made.
#[cube]
#[allow(clippy::too_many_arguments, clippy::manual_clamp, clippy::neg_cmp_op_on_partial_ord)]
fn reversal_iterate(
    pk: &Tensor<f32>,
    base: usize,
    x: &Tensor<f32>,
    x_at: usize,
    g: &Shared<[f32]>,
    g_at: usize,
    h: &Shared<[f32]>,
    j: usize,
    f: usize,
    hid: usize,
    od: usize,
) -> f32 {
    let (ar, az, gin, ghn) = gates_shared(pk, base, x, x_at, g, g_at, j, f, hid, od);
    let rg = sigmoid(ar);
    let z = sigmoid(az);
    let nn = tanh_f(gin + rg * ghn);
    let mut den = z;
    if !(z > 0.05f32) {
        den = 0.05f32;
    }
    let mut v = (h[j] - (1.0f32 - z) * nn) / den;
    if v < -1.0f32 {
        v = -1.0f32;
    }
    if v > 1.0f32 {
        v = 1.0f32;
    }
    v
}

/// Slot of checkpoint `s` of interval `k` in a run's store: ceil(s / k) (0, k, 2k, .. and T).
#[cube]
#[allow(clippy::manual_div_ceil)] // kernel code: cubecl has no div_ceil
fn slot_of(s: usize, k: usize) -> usize {
    (s + k - 1) / k
}

/// The forward pass over all T: a cube per (run, row). Writes h_0 and each state the run
/// checkpoints (t a multiple of its k, and T) to `store` `[R, slots, N, H]`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments, clippy::manual_is_multiple_of)] // kernel code: `%` is what cubecl has
fn gru_seq_forward_kernel(
    pk: &Tensor<f32>,
    x: &Tensor<f32>,
    ks: &Tensor<f32>,
    store: &mut Tensor<f32>,
    runs: u32,
    rows: u32,
    f: u32,
    slots: u32,
    #[comptime] t_len: u32,
    #[comptime] hid: u32,
    #[comptime] o: u32,
) {
    let (n, f, slots) = (rows as usize, f as usize, slots as usize);
    let nr = runs as usize * n;
    let (hd, od) = (hid as usize, o as usize);
    let t_end = t_len as usize;
    let rr = CUBE_POS;
    let r = rr / n;
    let row = rr % n;
    let step = CUBE_DIM_X as usize;
    let (_w_hh, _b_ih, _b_hh, _w_o, _b_o, plen) = packed_offsets(f, hd, od);
    let base = r * plen;
    let k = u32::cast_from(ks[r]) as usize;
    let mut g = Shared::<[f32]>::new_slice(comptime!(2 * hid as usize));
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        g[j] = 0.0f32;
        store[(r * slots * n + row) * hd + j] = 0.0f32;
        j += step;
    }
    sync_cube();
    for t in 0..t_len {
        let cur = (t % 2) as usize * hd;
        let next = hd - cur;
        let s = t as usize + 1;
        let x_at = (t as usize * nr + rr) * f;
        let keep = s % k == 0 || s == t_end;
        let at = ((r * slots + slot_of(s, k)) * n + row) * hd;
        let mut j = UNIT_POS_X as usize;
        while j < hd {
            let (ar, az, gin, ghn) = gates_shared(pk, base, x, x_at, &g, cur, j, f, hd, od);
            let rg = sigmoid(ar);
            let z = sigmoid(az);
            let nn = tanh_f(gin + rg * ghn);
            let hn = nn + z * (g[cur + j] - nn);
            g[next + j] = hn;
            if keep {
                store[at + j] = hn;
            }
            j += step;
        }
        sync_cube();
    }
}

/// The step from h_{t-1} in `hp` (workgroup memory, synced) to h_t in `hs`, and, if `vjp`,
/// that step's VJP as `gru_vjp_rows_kernel`: its squared-error loss against `y` at `y_at`,
/// its per-row factors in `scratch` at `s` for `gru_vjp_weights_kernel`, and `dh` taken from
/// dh_t to dh_{t-1}. Without `vjp` only h_t is made (an advance). The barriers are the same
/// either way, so a kernel may decide `vjp` per run.
#[cube]
#[allow(clippy::too_many_arguments)]
fn step_vjp(
    pk: &Tensor<f32>,
    base: usize,
    x: &Tensor<f32>,
    x_at: usize,
    y: &Tensor<f32>,
    y_at: usize,
    scratch: &mut Tensor<f32>,
    s: usize,
    hp: &Shared<[f32]>,
    hs: &mut Shared<[f32]>,
    dh: &mut Shared<[f32]>,
    sqs: &mut Shared<[f32]>,
    dps: &mut Shared<[f32]>,
    dghs: &mut Shared<[f32]>,
    f: usize,
    hd: usize,
    od: usize,
    scale: f32,
    vjp: bool,
) {
    let (p_w_hh, _b_ih, _b_hh, p_w_o, p_b_o, _plen) = packed_offsets(f, hd, od);
    let h3 = 3 * hd;
    let s_len = scratch_row(hd, f, od);
    let step = CUBE_DIM_X as usize;
    // The step from h_{t-1}: h' and the gates (kept in this unit's dgi slots for below).
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        let (ar, az, gin, ghn) = gates_shared(pk, base, x, x_at, hp, 0, j, f, hd, od);
        let rg = sigmoid(ar);
        let z = sigmoid(az);
        let nn = tanh_f(gin + rg * ghn);
        let hn = nn + z * (hp[j] - nn);
        hs[j] = hn;
        if vjp {
            scratch[s + 7 * hd + od + f + j] = hp[j];
            scratch[s + 6 * hd + j] = hn;
            scratch[s + j] = rg;
            scratch[s + hd + j] = z;
            scratch[s + 2 * hd + j] = nn;
            scratch[s + 3 * hd + j] = ghn;
        }
        j += step;
    }
    if vjp {
        let mut q = UNIT_POS_X as usize;
        while q < f {
            scratch[s + 7 * hd + od + q] = x[x_at + q];
            q += step;
        }
        if UNIT_POS_X == 0 {
            scratch[s + s_len - 2] = 1.0f32;
        }
    }
    sync_cube();
    // Readout and dp = 2 scale (p - y).
    if vjp {
        let mut q = UNIT_POS_X as usize;
        while q < od {
            let mut p = pk[base + p_b_o + q];
            for a in 0..hd {
                p += hs[a] * pk[base + p_w_o + a * od + q];
            }
            let e = p - y[y_at + q];
            let d = 2.0f32 * scale * e;
            sqs[q] = e * e;
            dps[q] = d;
            scratch[s + 7 * hd + q] = d;
            q += step;
        }
    }
    sync_cube();
    if vjp {
        if UNIT_POS_X == 0 {
            let mut sq = 0.0f32;
            for q in 0..od {
                sq += sqs[q];
            }
            scratch[s + s_len - 1] = sq;
        }
        // Through h' = n + z (h - n) and the gates.
        let mut j = UNIT_POS_X as usize;
        while j < hd {
            let mut d = dh[j];
            for q in 0..od {
                d += dps[q] * pk[base + p_w_o + j * od + q];
            }
            let rg = scratch[s + j];
            let z = scratch[s + hd + j];
            let nn = scratch[s + 2 * hd + j];
            let ghn = scratch[s + 3 * hd + j];
            let dz = d * (hp[j] - nn);
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
            dh[j] = d * z;
            j += step;
        }
    }
    sync_cube();
    // dh_{t-1} = d z + dgh W_hh^T.
    if vjp {
        let mut j = UNIT_POS_X as usize;
        while j < hd {
            let mut acc = dh[j];
            let w = base + p_w_hh + j * h3;
            for q in 0..h3 {
                acc += dghs[q] * pk[w + q];
            }
            dh[j] = acc;
            j += step;
        }
    }
    sync_cube();
}

/// The backward pass over steps t = hi, hi - 1, .., hi - len + 1 (a chunk): a cube per
/// (run, row). At each step h_{t-1} is the run's checkpoint if it has one there, else the
/// reversal of h_t (`iters` fixed-point iterations in workgroup memory, as
/// `gru_reverse_kernel`); then the step's VJP with its squared-error loss as
/// `gru_vjp_rows_kernel`, its per-row factors written to `scratch` `[R, len * N, S]` for
/// `gru_vjp_weights_kernel`. `carry` `[R, N, 2H]` holds h_t and dh_t between chunks (the
/// first chunk starts from the store's h_T and a zero gradient).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments, clippy::manual_is_multiple_of)] // kernel code: `%` is what cubecl has
fn gru_seq_vjp_rows_kernel(
    pk: &Tensor<f32>,
    store: &Tensor<f32>,
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    ks: &Tensor<f32>,
    carry: &mut Tensor<f32>,
    scratch: &mut Tensor<f32>,
    runs: u32,
    rows: u32,
    f: u32,
    slots: u32,
    hi: u32,
    first: u32,
    scale: f32,
    #[comptime] len: u32,
    #[comptime] hid: u32,
    #[comptime] o: u32,
    #[comptime] iters: u32,
) {
    let (n, f, slots, hi) = (rows as usize, f as usize, slots as usize, hi as usize);
    let nr = runs as usize * n;
    let (hd, od) = (hid as usize, o as usize);
    let rr = CUBE_POS;
    let r = rr / n;
    let row = rr % n;
    let step = CUBE_DIM_X as usize;
    let (_w_hh, _b_ih, _b_hh, _w_o, _b_o, plen) = packed_offsets(f, hd, od);
    let base = r * plen;
    let s_len = scratch_row(hd, f, od);
    let k = u32::cast_from(ks[r]) as usize;
    let mut hc = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut g = Shared::<[f32]>::new_slice(comptime!(2 * hid as usize));
    let mut hp = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut hs = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut dh = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut sqs = Shared::<[f32]>::new_slice(comptime!(o as usize));
    let mut dps = Shared::<[f32]>::new_slice(comptime!(o as usize));
    let mut dghs = Shared::<[f32]>::new_slice(comptime!(3 * hid as usize));

    let c_at = rr * 2 * hd;
    let top = ((r * slots + slot_of(hi, k)) * n + row) * hd;
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        if first == 1 {
            hc[j] = store[top + j];
            dh[j] = 0.0f32;
        } else {
            hc[j] = carry[c_at + j];
            dh[j] = carry[c_at + hd + j];
        }
        j += step;
    }
    sync_cube();
    for i in 0..len {
        let tt = hi - 1 - i as usize; // step tt + 1 reads h_tt, x_tt and y_tt
        let x_at = (tt * nr + rr) * f;
        let y_at = (tt * nr + rr) * od;
        let s = ((r * len as usize + i as usize) * n + row) * s_len;
        // h_tt by reversal from h_{tt+1} (taken only where the run has no checkpoint).
        let mut j = UNIT_POS_X as usize;
        while j < hd {
            g[j] = hc[j];
            j += step;
        }
        sync_cube();
        for it in 0..iters {
            let cur = (it % 2) as usize * hd;
            let next = hd - cur;
            let mut j = UNIT_POS_X as usize;
            while j < hd {
                g[next + j] = reversal_iterate(pk, base, x, x_at, &g, cur, &hc, j, f, hd, od);
                j += step;
            }
            sync_cube();
        }
        let last = (iters % 2) as usize * hd;
        let checkpoint = tt % k == 0;
        let at = ((r * slots + slot_of(tt, k)) * n + row) * hd;
        let mut j = UNIT_POS_X as usize;
        while j < hd {
            if checkpoint {
                hp[j] = store[at + j];
            } else {
                hp[j] = g[last + j];
            }
            j += step;
        }
        sync_cube();
        step_vjp(
            pk, base, x, x_at, y, y_at, scratch, s, &hp, &mut hs, &mut dh, &mut sqs, &mut dps, &mut dghs, f, hd, od,
            scale, true,
        );
        // h_tt becomes the state the next step reverses from.
        let mut j = UNIT_POS_X as usize;
        while j < hd {
            hc[j] = hp[j];
            j += step;
        }
    }
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        carry[c_at + j] = hc[j];
        carry[c_at + hd + j] = dh[j];
        j += step;
    }
}

/// Recomputing schedules' plans (`schedule::plan::Compiled`) on the GPU, `per_plan`
/// consecutive runs to a plan: a cube per (run, row) runs chunk `chunk` of its run's plan
/// (`plan` `[plans, chunks, len, 4]`), each step 4 values (op, load slot + 1,
/// store slot + 1, time): load the working state from a snapshot slot, store it to one, then
/// advance it one step or take the VJP of the step from it (op 1, 2; 0 nothing). The working
/// state and its gradient live in workgroup memory and pass between launches in `carry`
/// `[R, N, 2H]`, the snapshots in `snaps` `[R, slots * N, H]`; the VJPs write their factors
/// to `scratch` `[R, steps * N, S]` at row hi - 1 - t for `gru_vjp_weights_kernel`. Every
/// step passes the same barriers (the op only decides what is written), and `len` is a
/// compile-time bound: the plan comes as data without breaking WGSL's uniformity rule.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn gru_plan_kernel(
    pk: &Tensor<f32>,
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    plan: &Tensor<f32>,
    snaps: &mut Tensor<f32>,
    carry: &mut Tensor<f32>,
    scratch: &mut Tensor<f32>,
    runs: u32,
    rows: u32,
    f: u32,
    slots: u32,
    per_plan: u32,
    chunks: u32,
    chunk: u32,
    hi: u32,
    steps: u32,
    scale: f32,
    #[comptime] len: u32,
    #[comptime] hid: u32,
    #[comptime] o: u32,
) {
    let (n, f, slots, hi, steps) = (rows as usize, f as usize, slots as usize, hi as usize, steps as usize);
    let first = chunk == 0;
    let nr = runs as usize * n;
    let (hd, od) = (hid as usize, o as usize);
    let rr = CUBE_POS;
    let r = rr / n;
    let row = rr % n;
    let step = CUBE_DIM_X as usize;
    let (_w_hh, _b_ih, _b_hh, _w_o, _b_o, plen) = packed_offsets(f, hd, od);
    let base = r * plen;
    let s_len = scratch_row(hd, f, od);
    let at = ((r / per_plan as usize) * chunks as usize + chunk as usize) * len as usize;
    let mut hp = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut hs = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut dh = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut sqs = Shared::<[f32]>::new_slice(comptime!(o as usize));
    let mut dps = Shared::<[f32]>::new_slice(comptime!(o as usize));
    let mut dghs = Shared::<[f32]>::new_slice(comptime!(3 * hid as usize));

    let c_at = rr * 2 * hd;
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        if first {
            hp[j] = 0.0f32;
            dh[j] = 0.0f32;
        } else {
            hp[j] = carry[c_at + j];
            dh[j] = carry[c_at + hd + j];
        }
        j += step;
    }
    sync_cube();
    for i in 0..len {
        let a = (at + i as usize) * 4;
        let op = u32::cast_from(plan[a]);
        let load = u32::cast_from(plan[a + 1]) as usize;
        let store = u32::cast_from(plan[a + 2]) as usize;
        let t = u32::cast_from(plan[a + 3]) as usize;
        let mut j = UNIT_POS_X as usize;
        while j < hd {
            if load > 0 {
                hp[j] = snaps[((r * slots + load - 1) * n + row) * hd + j];
            }
            if store > 0 {
                snaps[((r * slots + store - 1) * n + row) * hd + j] = hp[j];
            }
            j += step;
        }
        sync_cube();
        // Step t + 1 reads h_t, x_t and y_t; a VJP's factors go to row hi - 1 - t.
        let vjp = op == 2;
        let mut srow = 0usize;
        if vjp {
            srow = hi - 1 - t;
        }
        let s = ((r * steps + srow) * n + row) * s_len;
        step_vjp(
            pk,
            base,
            x,
            (t * nr + rr) * f,
            y,
            (t * nr + rr) * od,
            scratch,
            s,
            &hp,
            &mut hs,
            &mut dh,
            &mut sqs,
            &mut dps,
            &mut dghs,
            f,
            hd,
            od,
            scale,
            vjp,
        );
        if op == 1 {
            let mut j = UNIT_POS_X as usize;
            while j < hd {
                hp[j] = hs[j];
                j += step;
            }
        }
        sync_cube();
    }
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        carry[c_at + j] = hp[j];
        carry[c_at + hd + j] = dh[j];
        j += step;
    }
}

/// The chained defects at interval `k` (spec §5): a cube per (run, chain, row). Chain i
/// starts from the true h_c, c = (i + 1) k, reverses k - 1 steps (`iters` iterations each,
/// in workgroup memory) and writes the relative error ||g - h|| / (||h|| + 1e-6) of the
/// state it reaches against the true h_{c-k+1} to `out` `[R, chains * N]`. `states` holds
/// every state of a forward pass, `[R, (T + 1) * N, H]`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn gru_chain_kernel(
    pk: &Tensor<f32>,
    states: &Tensor<f32>,
    x: &Tensor<f32>,
    out: &mut Tensor<f32>,
    runs: u32,
    rows: u32,
    f: u32,
    chains: u32,
    t_states: u32,
    #[comptime] k: u32,
    #[comptime] hid: u32,
    #[comptime] o: u32,
    #[comptime] iters: u32,
    #[comptime] units: u32,
) {
    let (n, f, cn, t_states) = (rows as usize, f as usize, chains as usize * rows as usize, t_states as usize);
    let nr = runs as usize * n;
    let (hd, od, ku) = (hid as usize, o as usize, k as usize);
    let idx = CUBE_POS;
    let r = idx / cn;
    let ci = (idx % cn) / n;
    let row = idx % n;
    let rr = r * n + row;
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    let (_w_hh, _b_ih, _b_hh, _w_o, _b_o, plen) = packed_offsets(f, hd, od);
    let base = r * plen;
    let c = (ci + 1) * ku;
    let mut g = Shared::<[f32]>::new_slice(comptime!(2 * hid as usize));
    let mut hc = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut se = Shared::<[f32]>::new_slice(comptime!(units as usize));
    let mut sh = Shared::<[f32]>::new_slice(comptime!(units as usize));
    let mut j = u;
    while j < hd {
        hc[j] = states[((r * t_states + c) * n + row) * hd + j];
        j += step;
    }
    sync_cube();
    for back in 0..comptime!(k - 1) {
        // Step t = c - back made h_t from h_{t-1} and x_{t-1}.
        let x_at = ((c - back as usize - 1) * nr + rr) * f;
        let mut j = u;
        while j < hd {
            g[j] = hc[j];
            j += step;
        }
        sync_cube();
        for it in 0..iters {
            let cur = (it % 2) as usize * hd;
            let next = hd - cur;
            let mut j = u;
            while j < hd {
                g[next + j] = reversal_iterate(pk, base, x, x_at, &g, cur, &hc, j, f, hd, od);
                j += step;
            }
            sync_cube();
        }
        let last = (iters % 2) as usize * hd;
        let mut j = u;
        while j < hd {
            hc[j] = g[last + j];
            j += step;
        }
        sync_cube();
    }
    // ||g - h||^2 and ||h||^2: each unit's strided share, then unit 0 over the shares in order.
    let truth = ((r * t_states + c + 1 - ku) * n + row) * hd;
    let mut e = 0.0f32;
    let mut hh = 0.0f32;
    let mut j = u;
    while j < hd {
        let h = states[truth + j];
        let d = hc[j] - h;
        e += d * d;
        hh += h * h;
        j += step;
    }
    se[u] = e;
    sh[u] = hh;
    sync_cube();
    if u == 0 {
        let mut e = 0.0f32;
        let mut hh = 0.0f32;
        for q in 0..comptime!(units as usize) {
            e += se[q];
            hh += sh[q];
        }
        out[idx] = e.sqrt() / (hh.sqrt() + 1e-6f32);
    }
}

/// Bytes one chunk's scratch may take: under WebGPU's default storage-binding limit
/// (128 MiB, a limit per binding; the store is a binding of its own). At 112 MiB a pass of
/// 40 runs × 32 rows × 80 steps of the default GRU (107 MB) is one chunk.
const SCRATCH_BYTES: usize = 112 << 20;

/// Time steps per backward chunk: all T when the scratch (`s_len` values per row, see
/// `scratch_len`) fits [`SCRATCH_BYTES`].
pub fn chunk_len(t: usize, runs: usize, rows: usize, s_len: usize) -> usize {
    (SCRATCH_BYTES / (4 * runs * rows * s_len).max(1)).clamp(1, t.max(1))
}

fn dims4(t: &CubeTensor) -> [usize; 4] {
    t.meta.shape().dims::<4>()
}

/// The whole-sequence pass on the GPU (see the module).
#[burn::backend::backend_extension(Cube)]
pub trait GruSequenceKernels: burn::backend::Backend {
    /// The forward pass of packed parameters `pk` `[R, 1, P]` over inputs `x` `[T, R, N, F]`,
    /// run r checkpointing every `ks[r]`-th state (`ks` `[R]`, integers): the store
    /// `[R, slots * N, H]`.
    fn gru_seq_forward(
        pk: FloatTensor<Self>,
        x: FloatTensor<Self>,
        ks: FloatTensor<Self>,
        hid: usize,
        o: usize,
        slots: usize,
    ) -> FloatTensor<Self>;

    /// The chained defects at interval `k` from `states` `[R, (T + 1) * N, H]` (every
    /// state of a forward pass: the store at every k = 1), inputs `x` `[T, R, N, F]`:
    /// `[R, chains * N]` relative errors, chains = floor(T / k) (k >= 2).
    fn gru_chains(
        pk: FloatTensor<Self>,
        states: FloatTensor<Self>,
        x: FloatTensor<Self>,
        k: usize,
        iters: usize,
        o: usize,
    ) -> FloatTensor<Self>;

    /// The backward pass from that store with targets `y` `[T, R, N, O]`, the loss
    /// `scale * sum (p - y)^2` at every step and `iters` reversal iterations (0: every state
    /// is a checkpoint), `chunk` time steps per backward launch: the packed gradient
    /// `[R, 1, P + 1]`, its last value per run the summed squared error.
    #[allow(clippy::too_many_arguments)]
    fn gru_seq_vjp(
        pk: FloatTensor<Self>,
        store: FloatTensor<Self>,
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        ks: FloatTensor<Self>,
        scale: f32,
        iters: usize,
        chunk: usize,
    ) -> FloatTensor<Self>;

    /// Recomputing schedules' plans (see `gru_plan_kernel`) from packed parameters `pk`
    /// `[R, 1, P]` over inputs `x` `[T, R, N, F]` and targets `y` `[T, R, N, O]`: `plan`
    /// `[plans, chunks, len, 4]` the plans' steps, R / plans consecutive runs to each, chunk
    /// c run by one launch with `chunks[c] = (hi, steps)` (its VJPs are of steps
    /// hi..hi - steps + 1 in every plan), `slots` snapshot slots. Returns the packed gradient
    /// as [`gru_seq_vjp`](Self::gru_seq_vjp).
    #[allow(clippy::too_many_arguments)]
    fn gru_plan(
        pk: FloatTensor<Self>,
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        plan: FloatTensor<Self>,
        chunks: &[(usize, usize)],
        slots: usize,
        hid: usize,
        scale: f32,
    ) -> FloatTensor<Self>;
}

impl GruSequenceKernels for Cube {
    fn gru_seq_forward(
        pk: CubeTensor,
        x: CubeTensor,
        ks: CubeTensor,
        hid: usize,
        o: usize,
        slots: usize,
    ) -> CubeTensor {
        let [pk, x, ks] = [pk, x, ks].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        let store = empty(&x, [r, slots * n, hid]);
        let client = x.client.clone();
        // SAFETY: every index the kernel reads or writes is within the tensors it is given:
        // x is [T, R, N, F], the store is sized here for `slots` checkpoints per run (the
        // caller's count of the most any run keeps), pk holds R packed rows of this shape.
        unsafe {
            gru_seq_forward_kernel::launch_unchecked(
                &client,
                per_row(r, n),
                CubeDim::new_1d(row_units(hid)),
                pk.into_tensor_arg(),
                x.into_tensor_arg(),
                ks.into_tensor_arg(),
                store.clone().into_tensor_arg(),
                r as u32,
                n as u32,
                f as u32,
                slots as u32,
                t as u32,
                hid as u32,
                o as u32,
            )
        };
        store
    }

    fn gru_chains(pk: CubeTensor, states: CubeTensor, x: CubeTensor, k: usize, iters: usize, o: usize) -> CubeTensor {
        let [pk, states, x] = [pk, states, x].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        let [_, _, hid] = dims3(&states);
        let chains = t / k;
        assert!(k >= 2 && chains >= 1, "chains of interval {k} over {t} steps");
        let out = empty(&x, [r, 1, chains * n]);
        let units = row_units(hid);
        let client = x.client.clone();
        // SAFETY: a cube reads states c and c - k + 1 (c <= T) of its run and row, the inputs
        // of steps within T, and writes its own value of `out`, sized here.
        unsafe {
            gru_chain_kernel::launch_unchecked(
                &client,
                per_row(r, chains * n),
                CubeDim::new_1d(units),
                pk.into_tensor_arg(),
                states.into_tensor_arg(),
                x.into_tensor_arg(),
                out.clone().into_tensor_arg(),
                r as u32,
                n as u32,
                f as u32,
                chains as u32,
                (t + 1) as u32,
                k as u32,
                hid as u32,
                o as u32,
                iters as u32,
                units,
            )
        };
        out
    }

    fn gru_seq_vjp(
        pk: CubeTensor,
        store: CubeTensor,
        x: CubeTensor,
        y: CubeTensor,
        ks: CubeTensor,
        scale: f32,
        iters: usize,
        chunk: usize,
    ) -> CubeTensor {
        let [pk, store, x, y, ks] = [pk, store, x, y, ks].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        let o = dims4(&y)[3];
        let [_, sn, hid] = dims3(&store);
        let slots = sn / n;
        let plen = dims3(&pk)[2] + 1;
        let s_len = scratch_len(hid, f, o);
        let len = chunk.clamp(1, t.max(1));
        let carry = empty(&x, [r, n, 2 * hid]);
        let client = x.client.clone();
        // The first chunk's reduction starts the gradient (its `g_in`, pk, is not read).
        let mut g: Option<CubeTensor> = None;
        let mut hi = t;
        while hi > 0 {
            let this = len.min(hi);
            let scratch = empty(&x, [r, this * n, s_len]);
            // SAFETY: as the forward pass; the chunk's steps hi - this .. hi - 1 are within T,
            // its scratch is sized here for `this` steps, and `carry` for every (run, row).
            unsafe {
                gru_seq_vjp_rows_kernel::launch_unchecked(
                    &client,
                    per_row(r, n),
                    CubeDim::new_1d(row_units(hid)),
                    pk.clone().into_tensor_arg(),
                    store.clone().into_tensor_arg(),
                    x.clone().into_tensor_arg(),
                    y.clone().into_tensor_arg(),
                    ks.clone().into_tensor_arg(),
                    carry.clone().into_tensor_arg(),
                    scratch.clone().into_tensor_arg(),
                    r as u32,
                    n as u32,
                    f as u32,
                    slots as u32,
                    hi as u32,
                    u32::from(hi == t),
                    scale,
                    this as u32,
                    hid as u32,
                    o as u32,
                    iters as u32,
                )
            };
            g = Some(reduce_weights(&pk, g, scratch, this * n, (f, hid, o, plen)));
            hi -= this;
        }
        g.expect("T >= 1: one chunk at least")
    }

    fn gru_plan(
        pk: CubeTensor,
        x: CubeTensor,
        y: CubeTensor,
        plan: CubeTensor,
        chunks: &[(usize, usize)],
        slots: usize,
        hid: usize,
        scale: f32,
    ) -> CubeTensor {
        let [pk, x, y, plan] = [pk, x, y, plan].map(into_contiguous);
        let [_, r, n, f] = dims4(&x);
        let o = dims4(&y)[3];
        let plen = dims3(&pk)[2] + 1;
        let s_len = scratch_len(hid, f, o);
        let [plans, _, len, _] = dims4(&plan);
        assert_eq!(r % plans, 0, "the runs divide among the plans");
        let snaps = empty(&x, [r, slots.max(1) * n, hid]);
        let carry = empty(&x, [r, n, 2 * hid]);
        let client = x.client.clone();
        let mut g: Option<CubeTensor> = None;
        for (c, &(hi, steps)) in chunks.iter().enumerate() {
            let scratch = empty(&x, [r, steps * n, s_len]);
            // SAFETY: the plan's steps (checked by `schedule::plan::compile`) load and store
            // slots below `slots`, read x and y at times below T, and write scratch rows
            // hi - 1 - t < steps for this chunk's VJPs; `carry` holds every (run, row).
            unsafe {
                gru_plan_kernel::launch_unchecked(
                    &client,
                    per_row(r, n),
                    CubeDim::new_1d(row_units(hid)),
                    pk.clone().into_tensor_arg(),
                    x.clone().into_tensor_arg(),
                    y.clone().into_tensor_arg(),
                    plan.clone().into_tensor_arg(),
                    snaps.clone().into_tensor_arg(),
                    carry.clone().into_tensor_arg(),
                    scratch.clone().into_tensor_arg(),
                    r as u32,
                    n as u32,
                    f as u32,
                    slots.max(1) as u32,
                    (r / plans) as u32,
                    chunks.len() as u32,
                    c as u32,
                    hi as u32,
                    steps as u32,
                    scale,
                    len as u32,
                    hid as u32,
                    o as u32,
                )
            };
            g = Some(reduce_weights(&pk, g, scratch, steps * n, (f, hid, o, plen)));
        }
        g.expect("a plan has one VJP at least")
    }
}

/// The chunk's weight gradient added to the gradient so far (`gru_vjp_weights_kernel` over
/// the scratch's `rows` (step, row) pairs per run); the first chunk starts it.
fn reduce_weights(
    pk: &CubeTensor,
    g: Option<CubeTensor>,
    scratch: CubeTensor,
    rows: usize,
    (f, hid, o, plen): (usize, usize, usize, usize),
) -> CubeTensor {
    let r = dims3(pk)[0];
    let g_out = empty(pk, [r, 1, plen]);
    let (count, dim) = elementwise(pk, r * plen);
    let add = u32::from(g.is_some());
    // SAFETY: as `gru_step_vjp_packed`'s weight kernel: its scratch has `rows` (step, row)
    // pairs per run; the first chunk's `g_in` (pk, one value shorter per run) is not read
    // (`add` 0).
    unsafe {
        gru_vjp_weights_kernel::launch_unchecked(
            &pk.client,
            count,
            dim,
            g.unwrap_or_else(|| pk.clone()).into_tensor_arg(),
            scratch.into_tensor_arg(),
            g_out.clone().into_tensor_arg(),
            rows as u32,
            f as u32,
            hid as u32,
            o as u32,
            add,
        )
    };
    g_out
}

/// The runtime-dispatched backend the tensor API runs on.
type D = burn::backend::Dispatch;

/// The whole pass on tensors: packed parameters `pk` `[R, 1, P]`, inputs `x` `[T, R, N, F]`,
/// targets `y` `[T, R, N, O]`, run r checkpointing every `ks[r]`-th state (`slots`: the most
/// checkpoints any run keeps) and rebuilding the others by `iters` reversal iterations.
/// `chunk` time steps per backward launch (None: as many as [`SCRATCH_BYTES`] allows).
/// Returns the pass's packed gradient and summed squared error (the layout of
/// [`GruCubeKernels::gru_step_vjp_packed`](super::cube_kernels::GruCubeKernels::gru_step_vjp_packed)).
#[allow(clippy::too_many_arguments)]
pub fn gru_sequence_pass(
    pk: BTensor<3>,
    (x, y): (BTensor<4>, BTensor<4>),
    ks: &[usize],
    slots: usize,
    hid: usize,
    scale: f32,
    iters: usize,
    chunk: Option<usize>,
) -> BTensor<3> {
    let [t, r, n, f] = x.dims();
    let o = y.dims()[3];
    let chunk = chunk.unwrap_or_else(|| chunk_len(t, r, n, scratch_len(hid, f, o)));
    let ks: Vec<f32> = ks.iter().map(|&k| k as f32).collect();
    let ks = BTensor::<1>::from_data(TensorData::new(ks.clone(), [ks.len()]), &x.device()).into_dispatch();
    let store = <D as GruSequenceKernels>::gru_seq_forward(
        pk.clone().into_dispatch(),
        x.clone().into_dispatch(),
        ks.clone(),
        hid,
        o,
        slots,
    );
    BTensor::from_dispatch(<D as GruSequenceKernels>::gru_seq_vjp(
        pk.into_dispatch(),
        store,
        x.into_dispatch(),
        y.into_dispatch(),
        ks,
        scale,
        iters,
        chunk,
    ))
}

/// Every state h_0..h_T of a forward pass, `[R, (T + 1) * N, H]` (time-major per run), in one
/// launch (the store at every k = 1).
pub fn gru_states(pk: BTensor<3>, x: BTensor<4>, hid: usize, o: usize) -> BTensor<3> {
    let [t, r, _, _] = x.dims();
    let ones = BTensor::<1>::from_data(TensorData::new(vec![1.0f32; r], [r]), &x.device()).into_dispatch();
    BTensor::from_dispatch(<D as GruSequenceKernels>::gru_seq_forward(
        pk.into_dispatch(),
        x.into_dispatch(),
        ones,
        hid,
        o,
        t + 1,
    ))
}

/// The chained defects at interval `k` (see [`GruSequenceKernels::gru_chains`]): each run's
/// mean over its chains and rows, `[R, 1]`.
pub fn gru_chained_defect(
    pk: BTensor<3>,
    states: BTensor<3>,
    x: BTensor<4>,
    (k, iters): (usize, usize),
    o: usize,
) -> BTensor<2> {
    let r = x.dims()[1];
    let rel: BTensor<3> = BTensor::from_dispatch(<D as GruSequenceKernels>::gru_chains(
        pk.into_dispatch(),
        states.into_dispatch(),
        x.into_dispatch(),
        k,
        iters,
        o,
    ));
    rel.mean_dim(2).reshape([r, 1])
}

/// Plan steps per launch are padded to a multiple of this, so that plans of about the same
/// length share one compiled kernel (the length is a compile-time bound).
const PLAN_PAD: usize = 64;

/// Recomputing schedules' whole passes on tensors (see `gru_plan_kernel`): packed
/// parameters `pk` `[R, 1, P]`, inputs `x` `[T, R, N, F]`, targets `y` `[T, R, N, O]`, the
/// plans' `steps` (op, load slot + 1, store slot + 1, time), R / plans consecutive runs to
/// each, with `slots` snapshot slots, at most `chunk` VJPs per launch (None: as many as
/// [`SCRATCH_BYTES`] allows). Returns the packed gradient and summed squared error, as
/// [`gru_sequence_pass`].
#[allow(clippy::too_many_arguments)]
pub fn gru_plan_pass(
    pk: BTensor<3>,
    (x, y): (BTensor<4>, BTensor<4>),
    plans: &[Vec<[u32; 4]>],
    slots: usize,
    hid: usize,
    scale: f32,
    chunk: Option<usize>,
) -> BTensor<3> {
    let [t, r, n, f] = x.dims();
    let o = y.dims()[3];
    let per = chunk.unwrap_or_else(|| chunk_len(t, r, n, scratch_len(hid, f, o))).max(1);
    // Every plan takes the VJPs of steps T..1 in order: a launch takes the next `per` of
    // them in each plan, with the moves before them.
    let chunks: Vec<(usize, usize)> = (0..t.div_ceil(per)).map(|c| (t - c * per, per.min(t - c * per))).collect();
    let cut = |steps: &[[u32; 4]]| -> Vec<usize> {
        let vjps = steps.iter().enumerate().filter(|(_, s)| s[0] == 2).map(|(i, _)| i);
        let mut at: Vec<usize> = vjps.step_by(per).skip(1).collect();
        at.insert(0, 0);
        at.push(steps.len());
        at
    };
    let cuts: Vec<Vec<usize>> = plans.iter().map(|p| cut(p)).collect();
    let longest = cuts.iter().flat_map(|c| c.windows(2).map(|w| w[1] - w[0])).max().unwrap_or(1);
    let len = longest.div_ceil(PLAN_PAD) * PLAN_PAD;
    let mut data = vec![0.0f32; plans.len() * chunks.len() * len * 4];
    for (p, (steps, cut)) in plans.iter().zip(&cuts).enumerate() {
        assert_eq!(cut.len(), chunks.len() + 1, "every plan has T VJPs");
        for (c, w) in cut.windows(2).enumerate() {
            for (i, s) in steps[w[0]..w[1]].iter().enumerate() {
                for (q, &v) in s.iter().enumerate() {
                    data[((p * chunks.len() + c) * len + i) * 4 + q] = v as f32;
                }
            }
        }
    }
    let shape = [plans.len(), chunks.len(), len, 4];
    let plan = BTensor::<4>::from_data(TensorData::new(data, shape), &x.device()).into_dispatch();
    BTensor::from_dispatch(<D as GruSequenceKernels>::gru_plan(
        pk.into_dispatch(),
        x.into_dispatch(),
        y.into_dispatch(),
        plan,
        &chunks,
        slots,
        hid,
        scale,
    ))
}
