//! `rev_ode_small`'s whole-sequence kernels on the GPU, as the GRU's (`cube_sequence`): a
//! training pass of the reversal schedule, every run at its own checkpoint interval k, in a
//! forward launch, a backward launch and a sum of the cubes' rows, whatever T; recomputing
//! schedules' plans run as data; every state of a forward pass and the chained defects for
//! the probe. A cube is one (run, row), its state in workgroup memory. The model's inverse is
//! algebraic (b = b' - G(a', x), a = a' - F(b, x)), so a state the schedule does not keep is
//! rebuilt by one inverse step inside the backward kernel.
//!
//! The packed row is the model's parameters in `param_names` order, each row-major (`u_f`,
//! `v_f`, `w_f`, `d_f`, then G's four, `w_o`, `b_o`, the rank mask): see [`offsets`]. The
//! mask is data: its gradient is 0, as the tensor ops make it.

use super::cube_kernels::{dims3, empty, per_row, row_units, tanh_f};
use super::cube_sequence::{
    accumulate, by_parts, dims4, intervals, loss_kind, part_rows, plan_tensor, readout_loss, slot_of, uniform,
};
use super::rev_ode::STEP;
use burn::backend::Cube;
use burn::backend::tensor::FloatTensor;
use burn::tensor::Tensor as BTensor;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::tensor::CubeTensor;
use cubecl::CubeDim;
use cubecl::prelude::*;
use rdbench_core::track::Task;

/// Where a packed row's parts start: (G's coupling, w_o, b_o, the mask, the row's length).
/// A coupling is u `[r_max, H/2]`, v `[H/2, r_max]`, w `[F, H/2]`, d `[1, H/2]`; F's at 0.
#[cube]
fn offsets(f: usize, hh: usize, rm: usize, od: usize) -> (usize, usize, usize, usize, usize) {
    let cb = 2 * rm * hh + f * hh + hh;
    let p_w_o = 2 * cb;
    let p_b_o = p_w_o + 2 * hh * od;
    let p_mask = p_b_o + od;
    (cb, p_w_o, p_b_o, p_mask, p_mask + rm)
}

/// The packed row's length (as [`offsets`]).
pub fn packed_len(f: usize, hid: usize, rm: usize, o: usize) -> usize {
    let hh = hid / 2;
    2 * (2 * rm * hh + f * hh + hh) + hid * o + o + rm
}

/// One coupling's tanh(((z V) (U * mask)) + x W + d) into `th` (`s` gets z V), for the
/// coupling at `c0` of the packed row at `base`, its input z in workgroup memory at `z_at`
/// (read only; `&mut` so a caller may pass the state it updates). Ends synced.
#[cube]
#[allow(clippy::too_many_arguments)]
fn coupling(
    pk: &Tensor<f32>,
    base: usize,
    c0: usize,
    p_mask: usize,
    x: &Tensor<f32>,
    x_at: usize,
    z: &mut Shared<[f32]>,
    z_at: usize,
    s: &mut Shared<[f32]>,
    th: &mut Shared<[f32]>,
    f: usize,
    hh: usize,
    rm: usize,
) {
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    let v0 = base + c0 + rm * hh;
    let mut i = u;
    while i < rm {
        let mut acc = 0.0f32;
        for j in 0..hh {
            acc += z[z_at + j] * pk[v0 + j * rm + i];
        }
        s[i] = acc;
        i += step;
    }
    sync_cube();
    let w0 = base + c0 + 2 * rm * hh;
    let d0 = w0 + f * hh;
    let mut j = u;
    while j < hh {
        let mut su = 0.0f32;
        for i in 0..rm {
            su += s[i] * (pk[base + c0 + i * hh + j] * pk[base + p_mask + i]);
        }
        let mut xw = 0.0f32;
        for q in 0..f {
            xw += x[x_at + q] * pk[w0 + q * hh + j];
        }
        th[j] = tanh_f(su + xw + pk[d0 + j]);
        j += step;
    }
    sync_cube();
}

/// Workgroup memory of a cube that steps and takes VJPs: h_{t-1} (`hp`), h_t (`hs`), dh, each
/// coupling's z V and tanh, the pre-activations' gradient and (dpre U^T), the readout's
/// losses and dp.
#[derive(CubeType)]
struct RevMemory {
    hp: Shared<[f32]>,
    hs: Shared<[f32]>,
    dh: Shared<[f32]>,
    s_f: Shared<[f32]>,
    th_f: Shared<[f32]>,
    s_g: Shared<[f32]>,
    th_g: Shared<[f32]>,
    dpre: Shared<[f32]>,
    ds: Shared<[f32]>,
    sqs: Shared<[f32]>,
    dps: Shared<[f32]>,
}

#[cube]
fn rev_memory(#[comptime] hid: u32, #[comptime] rm: u32, #[comptime] o: u32) -> RevMemory {
    RevMemory {
        hp: Shared::<[f32]>::new_slice(comptime!(hid as usize)),
        hs: Shared::<[f32]>::new_slice(comptime!(hid as usize)),
        dh: Shared::<[f32]>::new_slice(comptime!(hid as usize)),
        s_f: Shared::<[f32]>::new_slice(comptime!(rm as usize)),
        th_f: Shared::<[f32]>::new_slice(comptime!(hid as usize / 2)),
        s_g: Shared::<[f32]>::new_slice(comptime!(rm as usize)),
        th_g: Shared::<[f32]>::new_slice(comptime!(hid as usize / 2)),
        dpre: Shared::<[f32]>::new_slice(comptime!(hid as usize / 2)),
        ds: Shared::<[f32]>::new_slice(comptime!(rm as usize)),
        sqs: Shared::<[f32]>::new_slice(comptime!(o as usize)),
        dps: Shared::<[f32]>::new_slice(comptime!(o as usize)),
    }
}

/// One step on the state `h` in workgroup memory, in place: forward (a' = a + c F(b, x),
/// b' = b + c G(a', x)) or, with `inverse`, back (b = b' - c G(a', x), a = a' - c F(b, x)).
/// `s` and `th` are scratch. Ends synced.
#[cube]
#[allow(clippy::too_many_arguments)]
fn advance(
    pk: &Tensor<f32>,
    base: usize,
    x: &Tensor<f32>,
    x_at: usize,
    h: &mut Shared<[f32]>,
    s: &mut Shared<[f32]>,
    th: &mut Shared<[f32]>,
    f: usize,
    hh: usize,
    rm: usize,
    od: usize,
    #[comptime] inverse: bool,
) {
    let (cb, _w_o, _b_o, p_mask, _plen) = offsets(f, hh, rm, od);
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    if inverse {
        coupling(pk, base, cb, p_mask, x, x_at, h, 0, s, th, f, hh, rm);
        let mut j = u;
        while j < hh {
            h[hh + j] -= th[j] * STEP;
            j += step;
        }
        sync_cube();
        coupling(pk, base, 0, p_mask, x, x_at, h, hh, s, th, f, hh, rm);
        let mut j = u;
        while j < hh {
            h[j] -= th[j] * STEP;
            j += step;
        }
    } else {
        coupling(pk, base, 0, p_mask, x, x_at, h, hh, s, th, f, hh, rm);
        let mut j = u;
        while j < hh {
            h[j] += th[j] * STEP;
            j += step;
        }
        sync_cube();
        coupling(pk, base, cb, p_mask, x, x_at, h, 0, s, th, f, hh, rm);
        let mut j = u;
        while j < hh {
            h[hh + j] += th[j] * STEP;
            j += step;
        }
    }
    sync_cube();
}

/// The step from h_{t-1} in `m.hp` (synced) to h_t in `m.hs`, and, if `vjp`, its VJP: `m.dh`
/// taken from dh_t to dh_{t-1}, the step's weight gradient and loss added to the cube's
/// packed sums in `acc` at `a` (`fresh`: written), as the GRU's `step_vjp` (the loss by
/// `readout_loss`, `residual` a regression's readout). Each sum has one owner unit at every
/// step: unit j the columns j of u, w and d and the rows j of v of both couplings, unit i
/// row i of w_o and mask entry i, unit q b_o's q, unit 0 the loss. Without `vjp` only h_t is
/// made (an advance); the barriers are the same either way.
#[cube]
#[allow(clippy::too_many_arguments)]
fn rev_step_vjp(
    pk: &Tensor<f32>,
    base: usize,
    x: &Tensor<f32>,
    x_at: usize,
    y: &Tensor<f32>,
    y_at: usize,
    acc: &mut Tensor<f32>,
    a: usize,
    m: &mut RevMemory,
    f: usize,
    hh: usize,
    rm: usize,
    od: usize,
    scale: f32,
    vjp: bool,
    loss: bool,
    fresh: bool,
    #[comptime] ce: bool,
    #[comptime] residual: bool,
) {
    let (cb, p_w_o, p_b_o, p_mask, plen) = offsets(f, hh, rm, od);
    let hd = 2 * hh;
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    // Forward from h_{t-1}, keeping each coupling's z V and tanh.
    let mut j = u;
    while j < hd {
        m.hs[j] = m.hp[j];
        j += step;
    }
    sync_cube();
    coupling(pk, base, 0, p_mask, x, x_at, &mut m.hs, hh, &mut m.s_f, &mut m.th_f, f, hh, rm);
    let mut j = u;
    while j < hh {
        m.hs[j] += m.th_f[j] * STEP;
        j += step;
    }
    sync_cube();
    coupling(pk, base, cb, p_mask, x, x_at, &mut m.hs, 0, &mut m.s_g, &mut m.th_g, f, hh, rm);
    let mut j = u;
    while j < hh {
        m.hs[hh + j] += m.th_g[j] * STEP;
        j += step;
    }
    sync_cube();
    readout_loss(
        pk,
        base,
        p_w_o,
        p_b_o,
        &m.hs,
        x,
        x_at,
        y,
        y_at,
        acc,
        a + plen,
        &mut m.sqs,
        &mut m.dps,
        hd,
        od,
        scale,
        vjp,
        loss,
        fresh,
        ce,
        residual,
    );
    // dh' = dh + dp W_o^T; w_o's rows and b_o.
    if vjp {
        let mut i = u;
        while i < hd {
            let mut d = m.dh[i];
            for q in 0..od {
                d += m.dps[q] * pk[base + p_w_o + i * od + q];
            }
            m.dh[i] = d;
            let hv = m.hs[i];
            for q in 0..od {
                accumulate(acc, a + p_w_o + i * od + q, hv * m.dps[q], fresh);
            }
            i += step;
        }
        let mut q = u;
        while q < od {
            accumulate(acc, a + p_b_o + q, m.dps[q], fresh);
            q += step;
        }
        let mut i = u;
        while i < rm {
            accumulate(acc, a + p_mask + i, 0.0f32, fresh);
            i += step;
        }
    }
    sync_cube();
    // G's VJP (b' = b + c G(a', x)): its output gradient db', input a'; then F's (a' = a +
    // c F(b, x)): da', input b.
    coupling_vjp(pk, base, cb, p_mask, x, x_at, acc, a, m, hh, 0, 0, f, hh, rm, vjp, fresh, true);
    coupling_vjp(pk, base, 0, p_mask, x, x_at, acc, a, m, 0, hh, hh, f, hh, rm, vjp, fresh, false);
}

/// One coupling's VJP inside [`rev_step_vjp`]: its output gradient `m.dh[out_at..]`, its input
/// z at `z_at` of h (`m.hs` for G, whose input is a', `m.hp` for F's b: `on_new`), its
/// input's gradient added to `m.dh[in_at..]`; its u, v, w and d gradients to `acc`.
#[cube]
#[allow(clippy::too_many_arguments)]
fn coupling_vjp(
    pk: &Tensor<f32>,
    base: usize,
    c0: usize,
    p_mask: usize,
    x: &Tensor<f32>,
    x_at: usize,
    acc: &mut Tensor<f32>,
    a: usize,
    m: &mut RevMemory,
    out_at: usize,
    z_at: usize,
    in_at: usize,
    f: usize,
    hh: usize,
    rm: usize,
    vjp: bool,
    fresh: bool,
    #[comptime] on_new: bool,
) {
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    let v0 = c0 + rm * hh;
    let w0 = c0 + 2 * rm * hh;
    let d0 = w0 + f * hh;
    // d pre = dout c (1 - tanh^2).
    if vjp {
        let mut j = u;
        while j < hh {
            let th = if on_new { m.th_g[j] } else { m.th_f[j] };
            m.dpre[j] = m.dh[out_at + j] * ((1.0f32 - th * th) * STEP);
            j += step;
        }
    }
    sync_cube();
    // ds = dpre (U * mask)^T; unit j's columns of u, w and d.
    if vjp {
        let mut i = u;
        while i < rm {
            let mk = pk[base + p_mask + i];
            let mut d = 0.0f32;
            for j in 0..hh {
                d += m.dpre[j] * (pk[base + c0 + i * hh + j] * mk);
            }
            m.ds[i] = d;
            i += step;
        }
        let mut j = u;
        while j < hh {
            let dp = m.dpre[j];
            for i in 0..rm {
                let s = if on_new { m.s_g[i] } else { m.s_f[i] };
                accumulate(acc, a + c0 + i * hh + j, s * dp * pk[base + p_mask + i], fresh);
            }
            for q in 0..f {
                accumulate(acc, a + w0 + q * hh + j, x[x_at + q] * dp, fresh);
            }
            accumulate(acc, a + d0 + j, dp, fresh);
            j += step;
        }
    }
    sync_cube();
    // Unit j's row of v (z_j ds) and its input's gradient ds V^T.
    if vjp {
        let mut j = u;
        while j < hh {
            let zv = if on_new { m.hs[z_at + j] } else { m.hp[z_at + j] };
            let mut back = 0.0f32;
            for i in 0..rm {
                let ds = m.ds[i];
                accumulate(acc, a + v0 + j * rm + i, zv * ds, fresh);
                back += ds * pk[base + v0 + j * rm + i];
            }
            m.dh[in_at + j] += back;
            j += step;
        }
    }
    sync_cube();
}

/// The forward pass over all T (`t_len`): a cube per (run, row), writing h_0 and each state
/// the run checkpoints (t a multiple of its k, and T) to `store` `[R', slots, part, H]`, for
/// `part` rows from `row0` (run i of the R' takes run i mod R's parameters and data).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments, clippy::manual_is_multiple_of)] // kernel code: `%` is what cubecl has
fn rev_ode_forward_kernel(
    pk: &Tensor<f32>,
    x: &Tensor<f32>,
    ks: &Tensor<f32>,
    store: &mut Tensor<f32>,
    runs: u32,
    rows: u32,
    part: u32,
    row0: u32,
    f: u32,
    slots: u32,
    t_len: u32,
    #[comptime] hid: u32,
    #[comptime] rm: u32,
    #[comptime] o: u32,
) {
    let (n, part, f, slots) = (rows as usize, part as usize, f as usize, slots as usize);
    let nr = runs as usize * n;
    let (hd, hh, rmu, od) = (hid as usize, hid as usize / 2, rm as usize, o as usize);
    let r = CUBE_POS / part;
    let lrow = CUBE_POS % part;
    let row = row0 as usize + lrow;
    // The parameters' and the data's run: a pass may run each run's several times.
    let rr = (r % runs as usize) * n + row;
    let step = CUBE_DIM_X as usize;
    let (_cb, _w_o, _b_o, _mask, plen) = offsets(f, hh, rmu, od);
    let base = (r % runs as usize) * plen;
    let t_end = uniform(t_len) as usize;
    let k = u32::cast_from(ks[r]) as usize;
    let mut m = rev_memory(hid, rm, o);
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        m.hp[j] = 0.0f32;
        store[(r * slots * part + lrow) * hd + j] = 0.0f32;
        j += step;
    }
    sync_cube();
    for t in 0..t_end {
        let s = t + 1;
        let x_at = (t * nr + rr) * f;
        advance(pk, base, x, x_at, &mut m.hp, &mut m.s_f, &mut m.th_f, f, hh, rmu, od, false);
        if s % k == 0 || s == t_end {
            let at = ((r * slots + slot_of(s, k)) * part + lrow) * hd;
            let mut j = UNIT_POS_X as usize;
            while j < hd {
                store[at + j] = m.hp[j];
                j += step;
            }
        }
    }
}

/// The backward pass over t = T..1 (`t_len`) for `part` rows from `row0`, as the GRU's
/// `gru_seq_vjp_rows_kernel`: h_{t-1} is the run's checkpoint if it keeps one there, else
/// one inverse step from h_t; the step's VJP sums into the cube's packed row of `acc`
/// `[R, part, P + 1]`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments, clippy::manual_is_multiple_of)] // kernel code: `%` is what cubecl has
fn rev_ode_vjp_rows_kernel(
    pk: &Tensor<f32>,
    store: &Tensor<f32>,
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    ks: &Tensor<f32>,
    acc: &mut Tensor<f32>,
    runs: u32,
    rows: u32,
    part: u32,
    row0: u32,
    f: u32,
    slots: u32,
    t_len: u32,
    scale: f32,
    #[comptime] hid: u32,
    #[comptime] rm: u32,
    #[comptime] o: u32,
    #[comptime] last: bool,
    #[comptime] ce: bool,
) {
    let (n, part, f, slots) = (rows as usize, part as usize, f as usize, slots as usize);
    let nr = runs as usize * n;
    let (hd, hh, rmu, od) = (hid as usize, hid as usize / 2, rm as usize, o as usize);
    let cube = CUBE_POS;
    let r = cube / part;
    let lrow = cube % part;
    let row = row0 as usize + lrow;
    let rr = (r % runs as usize) * n + row;
    let step = CUBE_DIM_X as usize;
    let (_cb, _w_o, _b_o, _mask, plen) = offsets(f, hh, rmu, od);
    let base = (r % runs as usize) * plen;
    let a = cube * (plen + 1);
    let t_end = uniform(t_len) as usize;
    // A cube is one run: its k decides the branch around the inverse's barriers.
    let k = uniform(u32::cast_from(ks[r])) as usize;
    let mut m = rev_memory(hid, rm, o);
    let mut s = Shared::<[f32]>::new_slice(comptime!(rm as usize));
    let mut th = Shared::<[f32]>::new_slice(comptime!(hid as usize / 2));

    let top = ((r * slots + slot_of(t_end, k)) * part + lrow) * hd;
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        m.hp[j] = store[top + j];
        m.dh[j] = 0.0f32;
        j += step;
    }
    sync_cube();
    for i in 0..t_end {
        let tt = t_end - 1 - i; // step tt + 1 reads h_tt, x_tt and y_tt
        let x_at = (tt * nr + rr) * f;
        if tt % k == 0 {
            let at = ((r * slots + slot_of(tt, k)) * part + lrow) * hd;
            let mut j = UNIT_POS_X as usize;
            while j < hd {
                m.hp[j] = store[at + j];
                j += step;
            }
        } else {
            // h_tt by the inverse of step tt + 1 from h_{tt+1} (`m.hp` holds it).
            advance(pk, base, x, x_at, &mut m.hp, &mut s, &mut th, f, hh, rmu, od, true);
        }
        sync_cube();
        // A last-step task's one target step is y's first; its loss is at step T alone.
        let mut y_at = (tt * nr + rr) * od;
        if last {
            y_at = rr * od;
        }
        let loss = !last || i == 0;
        rev_step_vjp(
            pk,
            base,
            x,
            x_at,
            y,
            y_at,
            acc,
            a,
            &mut m,
            f,
            hh,
            rmu,
            od,
            scale,
            true,
            loss,
            i == 0,
            ce,
            comptime!(!last),
        );
    }
}

/// Recomputing schedules' plans for `part` rows from `row0`, `per_plan` consecutive runs to a
/// plan, as the GRU's `gru_plan_kernel` (its step layout, padding and snapshots).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn rev_ode_plan_kernel(
    pk: &Tensor<f32>,
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    plan: &Tensor<f32>,
    snaps: &mut Tensor<f32>,
    acc: &mut Tensor<f32>,
    runs: u32,
    rows: u32,
    part: u32,
    row0: u32,
    f: u32,
    slots: u32,
    per_plan: u32,
    len: u32,
    t_len: u32,
    scale: f32,
    #[comptime] hid: u32,
    #[comptime] rm: u32,
    #[comptime] o: u32,
    #[comptime] last: bool,
    #[comptime] ce: bool,
) {
    let (n, part, f, slots) = (rows as usize, part as usize, f as usize, slots as usize);
    let nr = runs as usize * n;
    let (hd, hh, rmu, od) = (hid as usize, hid as usize / 2, rm as usize, o as usize);
    let cube = CUBE_POS;
    let r = cube / part;
    let lrow = cube % part;
    let row = row0 as usize + lrow;
    let rr = (r % runs as usize) * n + row;
    let step = CUBE_DIM_X as usize;
    let (_cb, _w_o, _b_o, _mask, plen) = offsets(f, hh, rmu, od);
    let base = (r % runs as usize) * plen;
    let a = cube * (plen + 1);
    let len = uniform(len) as usize;
    let at = (r / per_plan as usize) * len;
    let mut m = rev_memory(hid, rm, o);

    let mut j = UNIT_POS_X as usize;
    while j < hd {
        m.hp[j] = 0.0f32;
        m.dh[j] = 0.0f32;
        j += step;
    }
    sync_cube();
    let mut fresh = true;
    for i in 0..len {
        let p = (at + i) * 4;
        let op = u32::cast_from(plan[p]);
        let load = u32::cast_from(plan[p + 1]) as usize;
        let store = u32::cast_from(plan[p + 2]) as usize;
        let t = u32::cast_from(plan[p + 3]) as usize;
        let mut j = UNIT_POS_X as usize;
        while j < hd {
            if load > 0 {
                m.hp[j] = snaps[((r * slots + load - 1) * part + lrow) * hd + j];
            }
            if store > 0 {
                snaps[((r * slots + store - 1) * part + lrow) * hd + j] = m.hp[j];
            }
            j += step;
        }
        sync_cube();
        // Step t + 1 reads h_t, x_t and y_t.
        let vjp = op == 2;
        let x_at = (t * nr + rr) * f;
        let mut y_at = (t * nr + rr) * od;
        if last {
            y_at = rr * od;
        }
        let loss = !last || t + 1 == t_len as usize;
        rev_step_vjp(
            pk,
            base,
            x,
            x_at,
            y,
            y_at,
            acc,
            a,
            &mut m,
            f,
            hh,
            rmu,
            od,
            scale,
            vjp,
            loss,
            fresh,
            ce,
            comptime!(!last),
        );
        if vjp {
            fresh = false;
        }
        if op == 1 {
            let mut j = UNIT_POS_X as usize;
            while j < hd {
                m.hp[j] = m.hs[j];
                j += step;
            }
        }
        sync_cube();
    }
}

/// The chained defects at interval `k` (spec §5), as the GRU's `gru_chain_kernel`: a cube
/// per (run, chain, row) from the true h_c, c = (i + 1) k, taking k - 1 inverse steps, its
/// relative error against the true h_{c-k+1} to `out` `[R, chains * N]`.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn rev_ode_chain_kernel(
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
    #[comptime] rm: u32,
    #[comptime] o: u32,
    #[comptime] units: u32,
) {
    let (n, f, cn, t_states) = (rows as usize, f as usize, chains as usize * rows as usize, t_states as usize);
    let nr = runs as usize * n;
    let (hd, hh, rmu, od, ku) = (hid as usize, hid as usize / 2, rm as usize, o as usize, k as usize);
    let idx = CUBE_POS;
    let r = idx / cn;
    let ci = (idx % cn) / n;
    let row = idx % n;
    let rr = (r % runs as usize) * n + row;
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    let (_cb, _w_o, _b_o, _mask, plen) = offsets(f, hh, rmu, od);
    let base = (r % runs as usize) * plen;
    let c = (ci + 1) * ku;
    let mut m = rev_memory(hid, rm, o);
    let mut se = Shared::<[f32]>::new_slice(comptime!(units as usize));
    let mut sh = Shared::<[f32]>::new_slice(comptime!(units as usize));
    let mut j = u;
    while j < hd {
        m.hp[j] = states[((r * t_states + c) * n + row) * hd + j];
        j += step;
    }
    sync_cube();
    for back in 0..comptime!(k - 1) {
        // Step t = c - back made h_t from h_{t-1} and x_{t-1}.
        let x_at = ((c - back as usize - 1) * nr + rr) * f;
        advance(pk, base, x, x_at, &mut m.hp, &mut m.s_f, &mut m.th_f, f, hh, rmu, od, true);
    }
    // ||g - h||^2 and ||h||^2: each unit's strided share, then unit 0 over the shares in order.
    let truth = ((r * t_states + c + 1 - ku) * n + row) * hd;
    let mut e = 0.0f32;
    let mut hh2 = 0.0f32;
    let mut j = u;
    while j < hd {
        let h = states[truth + j];
        let d = m.hp[j] - h;
        e += d * d;
        hh2 += h * h;
        j += step;
    }
    se[u] = e;
    sh[u] = hh2;
    sync_cube();
    if u == 0 {
        let mut e = 0.0f32;
        let mut hs = 0.0f32;
        for q in 0..comptime!(units as usize) {
            e += se[q];
            hs += sh[q];
        }
        out[idx] = e.sqrt() / (hs.sqrt() + 1e-6f32);
    }
}

/// `rev_ode_small`'s whole-sequence kernels (see the module).
#[burn::backend::backend_extension(Cube)]
pub trait RevOdeSequenceKernels: burn::backend::Backend {
    /// The forward pass of packed parameters `pk` `[R, 1, P]` over inputs `x` `[T, R, N, F]`
    /// for `rows`, run i checkpointing every `ks[i]`-th state (as the GRU's
    /// `gru_seq_forward`): the store `[R', slots * rows, H]`.
    #[allow(clippy::too_many_arguments)]
    fn rev_ode_forward(
        pk: FloatTensor<Self>,
        x: FloatTensor<Self>,
        ks: FloatTensor<Self>,
        hid: usize,
        rm: usize,
        o: usize,
        slots: usize,
        rows: std::ops::Range<usize>,
    ) -> FloatTensor<Self>;

    /// The whole pass, `part` rows at a time (a forward launch into that part's store, then
    /// the backward launch from it), with targets `y` `[S, R, N, O]` and `task`'s loss
    /// weighted by `scale` (as the GRU's `gru_seq_pass`): the packed gradient
    /// `[R', 1, P + 1]`, its last value per run the summed loss (unweighted).
    #[allow(clippy::too_many_arguments)]
    fn rev_ode_pass(
        pk: FloatTensor<Self>,
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        ks: FloatTensor<Self>,
        shape: RevShape,
        slots: usize,
        loss: (Task, f32),
        part: usize,
    ) -> FloatTensor<Self>;

    /// Recomputing schedules' plans (as the GRU's `gru_plan`).
    #[allow(clippy::too_many_arguments)]
    fn rev_ode_plan(
        pk: FloatTensor<Self>,
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        plan: FloatTensor<Self>,
        slots: usize,
        hid: usize,
        rm: usize,
        loss: (Task, f32),
        part: usize,
    ) -> FloatTensor<Self>;

    /// The chained defects at interval `k` (k >= 2) from `states` `[R, (T + 1) * N, H]`:
    /// `[R, 1, chains * N]` relative errors, chains = floor(T / k).
    fn rev_ode_chains(
        pk: FloatTensor<Self>,
        states: FloatTensor<Self>,
        x: FloatTensor<Self>,
        k: usize,
        rm: usize,
        o: usize,
    ) -> FloatTensor<Self>;
}

impl RevOdeSequenceKernels for Cube {
    fn rev_ode_forward(
        pk: CubeTensor,
        x: CubeTensor,
        ks: CubeTensor,
        hid: usize,
        rm: usize,
        o: usize,
        slots: usize,
        rows: std::ops::Range<usize>,
    ) -> CubeTensor {
        let [pk, x, ks] = [pk, x, ks].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        assert_eq!(dims3(&pk)[2], packed_len(f, hid, rm, o), "rev_ode_small's packed row");
        // Every run of `ks` (a multiple of x's runs): run i takes run i mod R's parameters and data.
        let all = ks.meta.shape().dims::<1>()[0];
        let store = empty(&x, [all, slots * rows.len(), hid]);
        let client = x.client.clone();
        // SAFETY: every index the kernel reads or writes is within the tensors it is given:
        // x is [T, R, N, F], the store is sized here for `slots` checkpoints per run (the
        // caller's count of the most any run keeps), pk holds R packed rows of this shape
        // (asserted above).
        unsafe {
            rev_ode_forward_kernel::launch_unchecked(
                &client,
                per_row(all, rows.len()),
                CubeDim::new_1d(row_units(hid)),
                pk.into_tensor_arg(),
                x.into_tensor_arg(),
                ks.into_tensor_arg(),
                store.clone().into_tensor_arg(),
                r as u32,
                n as u32,
                rows.len() as u32,
                rows.start as u32,
                f as u32,
                slots as u32,
                t as u32,
                hid as u32,
                rm as u32,
                o as u32,
            )
        };
        store
    }

    fn rev_ode_pass(
        pk: CubeTensor,
        x: CubeTensor,
        y: CubeTensor,
        ks: CubeTensor,
        shape: RevShape,
        slots: usize,
        loss: (Task, f32),
        part: usize,
    ) -> CubeTensor {
        let ((last, ce), scale) = (loss_kind(loss.0), loss.1);
        let [pk, x, y, ks] = [pk, x, y, ks].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        let o = dims4(&y)[3];
        let RevShape { hid, rm } = shape;
        assert_eq!(dims3(&pk)[2], packed_len(f, hid, rm, o), "rev_ode_small's packed row");
        let all = ks.meta.shape().dims::<1>()[0];
        let plen = dims3(&pk)[2] + 1;
        let client = x.client.clone();
        by_parts(&pk, all, n, part, plen, |row0, this| {
            let store = Self::rev_ode_forward(pk.clone(), x.clone(), ks.clone(), hid, rm, o, slots, row0..row0 + this);
            let acc = empty(&x, [all, this, plen]);
            // SAFETY: as the forward pass; the cubes are this part's (run, row) pairs, rows
            // row0 .. row0 + this < N, each reading its own states of this part's store and
            // summing into its own row of `acc`, sized here.
            unsafe {
                rev_ode_vjp_rows_kernel::launch_unchecked(
                    &client,
                    per_row(all, this),
                    CubeDim::new_1d(row_units(hid)),
                    pk.clone().into_tensor_arg(),
                    store.clone().into_tensor_arg(),
                    x.clone().into_tensor_arg(),
                    y.clone().into_tensor_arg(),
                    ks.clone().into_tensor_arg(),
                    acc.clone().into_tensor_arg(),
                    r as u32,
                    n as u32,
                    this as u32,
                    row0 as u32,
                    f as u32,
                    slots as u32,
                    t as u32,
                    scale,
                    hid as u32,
                    rm as u32,
                    o as u32,
                    last,
                    ce,
                )
            };
            acc
        })
    }

    fn rev_ode_plan(
        pk: CubeTensor,
        x: CubeTensor,
        y: CubeTensor,
        plan: CubeTensor,
        slots: usize,
        hid: usize,
        rm: usize,
        loss: (Task, f32),
        part: usize,
    ) -> CubeTensor {
        let ((last, ce), scale) = (loss_kind(loss.0), loss.1);
        let [pk, x, y, plan] = [pk, x, y, plan].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        let o = dims4(&y)[3];
        assert_eq!(dims3(&pk)[2], packed_len(f, hid, rm, o), "rev_ode_small's packed row");
        let plen = dims3(&pk)[2] + 1;
        let [plans, len, _] = dims3(&plan);
        // Every plan over every run: run i * R + q follows plan i with run q's parameters and data.
        let all = plans * r;
        let client = x.client.clone();
        by_parts(&pk, all, n, part, plen, |row0, this| {
            let snaps = empty(&x, [all, slots.max(1) * this, hid]);
            let acc = empty(&x, [all, this, plen]);
            // SAFETY: the plan's steps (checked by `schedule::plan::compile`) load and store
            // slots below `slots` and read x and y at times below T; the cubes are this
            // part's (run, row) pairs, each summing into its own row of `acc`, sized here.
            unsafe {
                rev_ode_plan_kernel::launch_unchecked(
                    &client,
                    per_row(all, this),
                    CubeDim::new_1d(row_units(hid)),
                    pk.clone().into_tensor_arg(),
                    x.clone().into_tensor_arg(),
                    y.clone().into_tensor_arg(),
                    plan.clone().into_tensor_arg(),
                    snaps.clone().into_tensor_arg(),
                    acc.clone().into_tensor_arg(),
                    r as u32,
                    n as u32,
                    this as u32,
                    row0 as u32,
                    f as u32,
                    slots.max(1) as u32,
                    r as u32,
                    len as u32,
                    t as u32,
                    scale,
                    hid as u32,
                    rm as u32,
                    o as u32,
                    last,
                    ce,
                )
            };
            acc
        })
    }

    fn rev_ode_chains(pk: CubeTensor, states: CubeTensor, x: CubeTensor, k: usize, rm: usize, o: usize) -> CubeTensor {
        let [pk, states, x] = [pk, states, x].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        let [_, _, hid] = dims3(&states);
        assert_eq!(dims3(&pk)[2], packed_len(f, hid, rm, o), "rev_ode_small's packed row");
        let chains = t / k;
        assert!(k >= 2 && chains >= 1, "chains of interval {k} over {t} steps");
        let out = empty(&x, [r, 1, chains * n]);
        let units = row_units(hid);
        let client = x.client.clone();
        // SAFETY: a cube reads states c and c - k + 1 (c <= T) of its run and row, the inputs
        // of steps within T, and writes its own value of `out`, sized here.
        unsafe {
            rev_ode_chain_kernel::launch_unchecked(
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
                rm as u32,
                o as u32,
                units,
            )
        };
        out
    }
}

/// The runtime-dispatched backend the tensor API runs on.
type D = burn::backend::Dispatch;

/// The shape the kernels take besides the tensors: hidden H, r_max.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RevShape {
    /// Hidden units H (even).
    pub hid: usize,
    /// Largest rank r_max.
    pub rm: usize,
}

/// The whole pass on tensors, as the GRU's `gru_sequence_pass`: packed parameters `pk`
/// `[R, 1, P]`, inputs `x` `[T, R, N, F]`, targets `y` `[S, R, N, O]`, the loss, run r
/// checkpointing every `ks[r]`-th state (`slots`: the most any run keeps), `part` rows per
/// launch (None: as many as the bindings' budget allows). Returns the packed gradient and
/// summed loss `[R', 1, P + 1]`.
pub fn rev_ode_sequence_pass(
    pk: BTensor<3>,
    (x, y): (BTensor<4>, BTensor<4>),
    ks: &[usize],
    slots: usize,
    shape: RevShape,
    loss: (Task, f32),
    part: Option<usize>,
) -> BTensor<3> {
    let [_, _, n, _] = x.dims();
    let part = part.unwrap_or_else(|| part_rows(ks.len(), n, (pk.dims()[2] + 1).max(slots * shape.hid)));
    let ks = intervals(ks, &x.device());
    BTensor::from_dispatch(<D as RevOdeSequenceKernels>::rev_ode_pass(
        pk.into_dispatch(),
        x.into_dispatch(),
        y.into_dispatch(),
        ks,
        shape,
        slots,
        loss,
        part,
    ))
}

/// Every state h_0..h_T of a forward pass, `[R, (T + 1) * N, H]`, in one launch.
pub fn rev_ode_states(pk: BTensor<3>, x: BTensor<4>, shape: RevShape, o: usize) -> BTensor<3> {
    let [t, r, n, _] = x.dims();
    let ones = intervals(&vec![1; r], &x.device());
    BTensor::from_dispatch(<D as RevOdeSequenceKernels>::rev_ode_forward(
        pk.into_dispatch(),
        x.into_dispatch(),
        ones,
        shape.hid,
        shape.rm,
        o,
        t + 1,
        0..n,
    ))
}

/// The chained defects at interval `k`: each run's mean over its chains and rows, `[R, 1]`.
pub fn rev_ode_chained_defect(
    pk: BTensor<3>,
    states: BTensor<3>,
    x: BTensor<4>,
    k: usize,
    rm: usize,
    o: usize,
) -> BTensor<2> {
    let r = x.dims()[1];
    let rel: BTensor<3> = BTensor::from_dispatch(<D as RevOdeSequenceKernels>::rev_ode_chains(
        pk.into_dispatch(),
        states.into_dispatch(),
        x.into_dispatch(),
        k,
        rm,
        o,
    ));
    rel.mean_dim(2).reshape([r, 1])
}

/// Recomputing schedules' whole passes on tensors, as the GRU's `gru_plan_pass`.
pub fn rev_ode_plan_pass(
    pk: BTensor<3>,
    (x, y): (BTensor<4>, BTensor<4>),
    plans: &[Vec<[u32; 4]>],
    slots: usize,
    shape: RevShape,
    loss: (Task, f32),
    part: Option<usize>,
) -> BTensor<3> {
    let [_, r, n, _] = x.dims();
    let part = part.unwrap_or_else(|| part_rows(plans.len() * r, n, (pk.dims()[2] + 1).max(slots.max(1) * shape.hid)));
    let plan = plan_tensor(plans, &x.device());
    BTensor::from_dispatch(<D as RevOdeSequenceKernels>::rev_ode_plan(
        pk.into_dispatch(),
        x.into_dispatch(),
        y.into_dispatch(),
        plan,
        slots,
        shape.hid,
        shape.rm,
        loss,
        part,
    ))
}
