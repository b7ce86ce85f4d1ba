//! The GRU's whole-sequence kernels on the GPU: a training pass of the reversal schedule,
//! every run at its own checkpoint interval k (dense BPTT is k = 1), in three launches
//! whatever T. The forward pass is one kernel (a cube per (run, row), the state in workgroup
//! memory through all T) writing each run's checkpoints to a store; the backward pass is one
//! kernel walking t = T..1 with the state and its gradient in workgroup memory, h_{t-1} read
//! from the store or rebuilt by the reversal's fixed-point iterations inside the kernel, each
//! cube summing its steps' weight gradients in place (a fixed order, nothing kept per step);
//! a last kernel sums the cubes' rows per run. Recomputing schedules run their plans as data
//! the same way. Only the number of rows splits a pass (when the per-row sums would pass
//! WebGPU's binding limit); T never does.
//!
//! WGSL wants barriers in uniform control flow, and cubecl's scalar arguments and tensor
//! reads are not known uniform there: T, a run's k and a plan's length pass through
//! workgroup memory and `workgroupUniformLoad` ([`uniform`]) before they bound a loop or
//! decide a branch that holds a barrier (a cube is one run, so its k may skip the reversal
//! at checkpoints).

use super::cube_kernels::{dims3, elementwise, empty, packed_offsets, per_row, row_units, sigmoid, tanh_f};
use burn::backend::Cube;
use burn::backend::tensor::FloatTensor;
use burn::tensor::{Tensor as BTensor, TensorData};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::tensor::CubeTensor;
use cubecl::CubeDim;
use cubecl::prelude::*;
use rdbench_core::track::Task;

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
pub(super) fn slot_of(s: usize, k: usize) -> usize {
    (s + k - 1) / k
}

/// `v` as a value WGSL's uniformity analysis knows is the workgroup's own (unit 0's, through
/// workgroup memory and `workgroupUniformLoad`). Scalar arguments and tensor reads are not
/// known uniform there, and a loop or branch that holds a barrier needs a bound or condition
/// that is: this is how T, a run's k and a plan's length come as data.
#[cube]
pub(super) fn uniform(v: u32) -> u32 {
    let mut s = Shared::<[u32]>::new_slice(1usize);
    if UNIT_POS == 0 {
        s[0] = v;
    }
    sync_cube();
    workgroup_uniform_load(&s[0])
}

/// The forward pass over all T (`t_len`): a cube per (run, row). Writes h_0 and each state
/// the run checkpoints (t a multiple of its k, and T) to `store` `[R', slots, part, H]`, for
/// `part` rows from `row0` (run i of the R' takes run i mod R's parameters and data).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments, clippy::manual_is_multiple_of)] // kernel code: `%` is what cubecl has
fn gru_seq_forward_kernel(
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
    #[comptime] o: u32,
) {
    let (n, part, f, slots) = (rows as usize, part as usize, f as usize, slots as usize);
    let nr = runs as usize * n;
    let (hd, od) = (hid as usize, o as usize);
    let r = CUBE_POS / part;
    let lrow = CUBE_POS % part;
    let row = row0 as usize + lrow;
    // The parameters' and the data's run: a pass may run each run's several times.
    let rr = (r % runs as usize) * n + row;
    let step = CUBE_DIM_X as usize;
    let (_w_hh, _b_ih, _b_hh, _w_o, _b_o, plen) = packed_offsets(f, hd, od);
    let base = (r % runs as usize) * plen;
    let t_end = uniform(t_len) as usize;
    let k = u32::cast_from(ks[r]) as usize;
    let mut g = Shared::<[f32]>::new_slice(comptime!(2 * hid as usize));
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        g[j] = 0.0f32;
        store[(r * slots * part + lrow) * hd + j] = 0.0f32;
        j += step;
    }
    sync_cube();
    for t in 0..t_end {
        let cur = (t % 2) * hd;
        let next = hd - cur;
        let s = t + 1;
        let x_at = (t * nr + rr) * f;
        let keep = s % k == 0 || s == t_end;
        let at = ((r * slots + slot_of(s, k)) * part + lrow) * hd;
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

/// `acc[i] = v` on a cube's first VJP, `acc[i] += v` after it.
#[cube]
pub(super) fn accumulate(acc: &mut Tensor<f32>, i: usize, v: f32, fresh: bool) {
    if fresh {
        acc[i] = v;
    } else {
        acc[i] += v;
    }
}

/// Workgroup memory of a cube that steps and takes VJPs: h_{t-1} (`hp`, read by the step),
/// h_t, dh, the gates (r, z, n, W_hn h per unit), the readout's squared errors and dp, the
/// gate gradients (dgh, then dan for dgi's third part).
#[derive(CubeType)]
struct StepMemory {
    hp: Shared<[f32]>,
    hs: Shared<[f32]>,
    dh: Shared<[f32]>,
    gates: Shared<[f32]>,
    sqs: Shared<[f32]>,
    dps: Shared<[f32]>,
    dgh: Shared<[f32]>,
    dan: Shared<[f32]>,
}

#[cube]
fn step_memory(#[comptime] hid: u32, #[comptime] o: u32) -> StepMemory {
    StepMemory {
        hp: Shared::<[f32]>::new_slice(comptime!(hid as usize)),
        hs: Shared::<[f32]>::new_slice(comptime!(hid as usize)),
        dh: Shared::<[f32]>::new_slice(comptime!(hid as usize)),
        gates: Shared::<[f32]>::new_slice(comptime!(4 * hid as usize)),
        sqs: Shared::<[f32]>::new_slice(comptime!(o as usize)),
        dps: Shared::<[f32]>::new_slice(comptime!(o as usize)),
        dgh: Shared::<[f32]>::new_slice(comptime!(3 * hid as usize)),
        dan: Shared::<[f32]>::new_slice(comptime!(hid as usize)),
    }
}

/// The readout of h' (`hs`, workgroup memory, synced) p = b_o + h' W_o, with `residual` plus
/// x (then x + h' W_o + b_o, the tensor ops' order), its loss against `y` at `y_at` and dp in
/// `dps` (synced on return); unit 0 adds the loss to `acc[at]` (`fresh`: written). Where
/// `loss`: the squared error (dp = 2 scale (p - y)), or with `ce` the cross-entropy of its
/// softmax against a one-hot row (dp = scale (softmax(p) - y)); elsewhere dp and the loss
/// are 0. Without `vjp` nothing is read or written; the barriers are the same either way.
#[cube]
#[allow(clippy::too_many_arguments)]
pub(super) fn readout_loss(
    pk: &Tensor<f32>,
    base: usize,
    p_w_o: usize,
    p_b_o: usize,
    hs: &Shared<[f32]>,
    x: &Tensor<f32>,
    x_at: usize,
    y: &Tensor<f32>,
    y_at: usize,
    acc: &mut Tensor<f32>,
    at: usize,
    sqs: &mut Shared<[f32]>,
    dps: &mut Shared<[f32]>,
    hd: usize,
    od: usize,
    scale: f32,
    vjp: bool,
    loss: bool,
    fresh: bool,
    #[comptime] ce: bool,
    #[comptime] residual: bool,
) {
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    // The squared errors and dp = 2 scale (p - y), or the logits; dp = 0 where the step has
    // no loss.
    if vjp {
        let mut q = u;
        while q < od {
            let b = pk[base + p_b_o + q];
            let mut p = b;
            if residual {
                let mut hw = 0.0f32;
                for i in 0..hd {
                    hw += hs[i] * pk[base + p_w_o + i * od + q];
                }
                p = x[x_at + q] + hw + b;
            } else {
                for i in 0..hd {
                    p += hs[i] * pk[base + p_w_o + i * od + q];
                }
            }
            let e = p - y[y_at + q];
            if ce {
                sqs[q] = p;
            } else {
                sqs[q] = e * e;
            }
            dps[q] = 2.0f32 * scale * e;
            if !loss {
                dps[q] = 0.0f32;
            }
            q += step;
        }
    }
    sync_cube();
    if ce {
        // The softmax's cross-entropy lse - p . y (y one-hot) and dp = scale (softmax - y),
        // by unit 0 over the logits in order.
        if vjp && loss && u == 0 {
            let mut mx = sqs[0];
            for q in 1..od {
                if sqs[q] > mx {
                    mx = sqs[q];
                }
            }
            let mut se = 0.0f32;
            for q in 0..od {
                se += (sqs[q] - mx).exp();
            }
            let lse = mx + se.ln();
            let mut l = 0.0f32;
            for q in 0..od {
                let yq = y[y_at + q];
                l += yq * (lse - sqs[q]);
                dps[q] = scale * ((sqs[q] - mx).exp() / se - yq);
            }
            sqs[0] = l;
        }
        sync_cube();
    }
    if vjp && u == 0 {
        let mut sq = 0.0f32;
        if ce {
            sq = sqs[0];
        } else {
            for q in 0..od {
                sq += sqs[q];
            }
        }
        if !loss {
            sq = 0.0f32;
        }
        accumulate(acc, at, sq, fresh);
    }
}

/// The step from h_{t-1} in `m.hp` (workgroup memory, synced) to h_t in `m.hs`, and, if
/// `vjp`, that step's VJP: `m.dh` taken from dh_t to dh_{t-1}, and the step's weight
/// gradient and loss added to the cube's packed sums in `acc` at `a` (`fresh`: written, the
/// cube's first VJP). Where `loss`, the step's readout has a loss against `y` at `y_at`: the
/// squared error (gradient 2 scale (p - y)), or with `ce` the cross-entropy of its softmax
/// against a one-hot row (gradient scale (softmax(p) - y)); elsewhere its gradient is 0. Each
/// sum has one owner unit, the same at every step (unit j the columns of gate unit j and row j
/// of w_o, unit q b_o's q, unit 0 the loss), so a sum is a fixed-order sum over t that no
/// other unit touches. Without `vjp` only h_t is made (an advance). The barriers are the same
/// either way, so a kernel may decide `vjp` and `loss` per step.
#[cube]
#[allow(clippy::too_many_arguments)]
fn step_vjp(
    pk: &Tensor<f32>,
    base: usize,
    x: &Tensor<f32>,
    x_at: usize,
    y: &Tensor<f32>,
    y_at: usize,
    acc: &mut Tensor<f32>,
    a: usize,
    m: &mut StepMemory,
    f: usize,
    hd: usize,
    od: usize,
    scale: f32,
    vjp: bool,
    loss: bool,
    fresh: bool,
    #[comptime] ce: bool,
) {
    let (p_w_hh, p_b_ih, p_b_hh, p_w_o, p_b_o, plen) = packed_offsets(f, hd, od);
    let h3 = 3 * hd;
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    // The step from h_{t-1}: h' and the gates.
    let mut j = u;
    while j < hd {
        let (ar, az, gin, ghn) = gates_shared(pk, base, x, x_at, &m.hp, 0, j, f, hd, od);
        let rg = sigmoid(ar);
        let z = sigmoid(az);
        let nn = tanh_f(gin + rg * ghn);
        m.hs[j] = nn + z * (m.hp[j] - nn);
        m.gates[j] = rg;
        m.gates[hd + j] = z;
        m.gates[2 * hd + j] = nn;
        m.gates[h3 + j] = ghn;
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
        false,
    );
    if vjp {
        // Through h' = n + z (h - n) and the gates.
        let mut j = u;
        while j < hd {
            let mut d = m.dh[j];
            for q in 0..od {
                d += m.dps[q] * pk[base + p_w_o + j * od + q];
            }
            let rg = m.gates[j];
            let z = m.gates[hd + j];
            let nn = m.gates[2 * hd + j];
            let ghn = m.gates[h3 + j];
            let dan = d * (1.0f32 - z) * (1.0f32 - nn * nn);
            m.dgh[j] = dan * ghn * rg * (1.0f32 - rg);
            m.dgh[hd + j] = d * (m.hp[j] - nn) * z * (1.0f32 - z);
            m.dgh[2 * hd + j] = dan * rg;
            m.dan[j] = dan;
            m.dh[j] = d * z;
            j += step;
        }
    }
    sync_cube();
    if vjp {
        let mut j = u;
        while j < hd {
            // dh_{t-1} = d z + dgh W_hh^T.
            let mut back = m.dh[j];
            let w = base + p_w_hh + j * h3;
            for q in 0..h3 {
                back += m.dgh[q] * pk[w + q];
            }
            m.dh[j] = back;
            // Unit j's columns: w_ih += x^T dgi, w_hh += h_prev^T dgh, the biases += dg.
            let (dar, daz, dhn, dan) = (m.dgh[j], m.dgh[hd + j], m.dgh[2 * hd + j], m.dan[j]);
            for i in 0..f {
                let xv = x[x_at + i];
                let w = a + i * h3 + j;
                accumulate(acc, w, xv * dar, fresh);
                accumulate(acc, w + hd, xv * daz, fresh);
                accumulate(acc, w + 2 * hd, xv * dan, fresh);
            }
            for i in 0..hd {
                let hv = m.hp[i];
                let w = a + p_w_hh + i * h3 + j;
                accumulate(acc, w, hv * dar, fresh);
                accumulate(acc, w + hd, hv * daz, fresh);
                accumulate(acc, w + 2 * hd, hv * dhn, fresh);
            }
            accumulate(acc, a + p_b_ih + j, dar, fresh);
            accumulate(acc, a + p_b_ih + hd + j, daz, fresh);
            accumulate(acc, a + p_b_ih + 2 * hd + j, dan, fresh);
            accumulate(acc, a + p_b_hh + j, dar, fresh);
            accumulate(acc, a + p_b_hh + hd + j, daz, fresh);
            accumulate(acc, a + p_b_hh + 2 * hd + j, dhn, fresh);
            // Row j of w_o += h'^T dp.
            let hv = m.hs[j];
            for q in 0..od {
                accumulate(acc, a + p_w_o + j * od + q, hv * m.dps[q], fresh);
            }
            j += step;
        }
        let mut q = u;
        while q < od {
            accumulate(acc, a + p_b_o + q, m.dps[q], fresh);
            q += step;
        }
    }
    sync_cube();
}

/// The backward pass over t = T..1 (`t_len`) for `part` rows from `row0`: a cube per (run,
/// row). At each step h_{t-1} is the run's checkpoint if it has one there, else the reversal
/// of h_t (`iters` fixed-point iterations in workgroup memory, as `gru_reverse_kernel`);
/// then the step's VJP with its squared-error loss, summed into the cube's packed row of
/// `acc` `[R, part, P + 1]` (see `step_vjp`) for `sum_rows_kernel`. Nothing in it grows
/// with T.
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments, clippy::manual_is_multiple_of)] // kernel code: `%` is what cubecl has
fn gru_seq_vjp_rows_kernel(
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
    #[comptime] o: u32,
    #[comptime] iters: u32,
    #[comptime] last: bool,
    #[comptime] ce: bool,
) {
    let (n, part, f, slots) = (rows as usize, part as usize, f as usize, slots as usize);
    let nr = runs as usize * n;
    let (hd, od) = (hid as usize, o as usize);
    let cube = CUBE_POS;
    let r = cube / part;
    let lrow = cube % part;
    let row = row0 as usize + lrow;
    let rr = (r % runs as usize) * n + row;
    let step = CUBE_DIM_X as usize;
    let (_w_hh, _b_ih, _b_hh, _w_o, _b_o, plen) = packed_offsets(f, hd, od);
    let base = (r % runs as usize) * plen;
    let a = cube * (plen + 1);
    let t_end = uniform(t_len) as usize;
    // A cube is one run: its k decides the branch around the reversal's barriers.
    let k = uniform(u32::cast_from(ks[r])) as usize;
    let mut hc = Shared::<[f32]>::new_slice(comptime!(hid as usize));
    let mut g = Shared::<[f32]>::new_slice(comptime!(2 * hid as usize));
    let mut m = step_memory(hid, o);

    let top = ((r * slots + slot_of(t_end, k)) * part + lrow) * hd;
    let mut j = UNIT_POS_X as usize;
    while j < hd {
        hc[j] = store[top + j];
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
            // h_tt by reversal from h_{tt+1}.
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
            let mut j = UNIT_POS_X as usize;
            while j < hd {
                m.hp[j] = g[last + j];
                j += step;
            }
        }
        sync_cube();
        // A last-step task's one target step is y's first; its loss is at step T alone.
        let mut y_at = (tt * nr + rr) * od;
        if last {
            y_at = rr * od;
        }
        let loss = !last || i == 0;
        step_vjp(pk, base, x, x_at, y, y_at, acc, a, &mut m, f, hd, od, scale, true, loss, i == 0, ce);
        // h_tt becomes the state the next step reverses from.
        let mut j = UNIT_POS_X as usize;
        while j < hd {
            hc[j] = m.hp[j];
            j += step;
        }
    }
}

/// Recomputing schedules' plans (`schedule::plan::Compiled`) on the GPU for `part` rows from
/// `row0`, `per_plan` consecutive runs to a plan: a cube per (run, row) runs its run's plan
/// (`plan` `[plans, len, 4]`, `len` the longest, shorter ones padded with steps that do
/// nothing), each step 4 values (op, load slot + 1, store slot + 1, time): load the working
/// state from a snapshot slot, store it to one, then advance it one step or take the VJP of
/// the step from it (op 1, 2; 0 nothing). The working state and its gradient live in
/// workgroup memory, the snapshots in `snaps` `[R', slots * part, H]`; the VJPs sum into `acc`
/// as `gru_seq_vjp_rows_kernel`'s. Every step passes the same barriers (the op only decides
/// what is written).
#[cube(launch_unchecked)]
#[allow(clippy::too_many_arguments)]
fn gru_plan_kernel(
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
    #[comptime] o: u32,
    #[comptime] last: bool,
    #[comptime] ce: bool,
) {
    let (n, part, f, slots) = (rows as usize, part as usize, f as usize, slots as usize);
    let nr = runs as usize * n;
    let (hd, od) = (hid as usize, o as usize);
    let cube = CUBE_POS;
    let r = cube / part;
    let lrow = cube % part;
    let row = row0 as usize + lrow;
    let rr = (r % runs as usize) * n + row;
    let step = CUBE_DIM_X as usize;
    let (_w_hh, _b_ih, _b_hh, _w_o, _b_o, plen) = packed_offsets(f, hd, od);
    let base = (r % runs as usize) * plen;
    let a = cube * (plen + 1);
    let len = uniform(len) as usize;
    let at = (r / per_plan as usize) * len;
    let mut m = step_memory(hid, o);

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
        step_vjp(pk, base, x, x_at, y, y_at, acc, a, &mut m, f, hd, od, scale, vjp, loss, fresh, ce);
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

/// A pass's packed gradient from its cubes' sums: `g_out[r] = g_in[r] + sum over the part's
/// rows i of acc[r, i]` (without `g_in`, not read, unless `add`), the rows in order.
#[cube(launch_unchecked)]
fn sum_rows_kernel(g_in: &Tensor<f32>, acc: &Tensor<f32>, g_out: &mut Tensor<f32>, part: u32, plen: u32, add: u32) {
    let pos = ABSOLUTE_POS;
    if pos >= g_out.len() {
        terminate!();
    }
    let (part, plen) = (part as usize, plen as usize);
    let r = pos / plen;
    let mut s = r * part * plen + pos % plen;
    let mut sum = 0.0f32;
    for _ in 0..part {
        sum += acc[s];
        s += plen;
    }
    if add == 1 {
        sum += g_in[pos];
    }
    g_out[pos] = sum;
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
    let rr = (r % runs as usize) * n + row;
    let step = CUBE_DIM_X as usize;
    let u = UNIT_POS_X as usize;
    let (_w_hh, _b_ih, _b_hh, _w_o, _b_o, plen) = packed_offsets(f, hd, od);
    let base = (r % runs as usize) * plen;
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

/// Bytes one binding of a pass may take: under WebGPU's default storage-binding limit (128
/// MiB, a limit per binding). A pass's per-(run, row) sums do not grow with T, its stored
/// states (the checkpoints, a plan's snapshots) do; past this the rows split into parts, a
/// forward and a backward launch each.
const BINDING_BYTES: usize = 112 << 20;

/// Rows per launch of a pass: all `rows` when each binding fits [`BINDING_BYTES`], at `values`
/// per (run, row) in the largest (its sums, or its stored states).
pub fn part_rows(runs: usize, rows: usize, values: usize) -> usize {
    (BINDING_BYTES / (4 * runs * values).max(1)).clamp(1, rows.max(1))
}

pub(super) fn dims4(t: &CubeTensor) -> [usize; 4] {
    t.meta.shape().dims::<4>()
}

/// The whole-sequence pass on the GPU (see the module).
#[burn::backend::backend_extension(Cube)]
pub trait GruSequenceKernels: burn::backend::Backend {
    /// The forward pass of packed parameters `pk` `[R, 1, P]` over inputs `x` `[T, R, N, F]`
    /// for `part` rows from `row0`, run i checkpointing every `ks[i]`-th state (`ks` `[R']`,
    /// integers, R' a multiple of R: run i is run i mod R): the store `[R', slots * part, H]`.
    #[allow(clippy::too_many_arguments)]
    fn gru_seq_forward(
        pk: FloatTensor<Self>,
        x: FloatTensor<Self>,
        ks: FloatTensor<Self>,
        hid: usize,
        o: usize,
        slots: usize,
        rows: std::ops::Range<usize>,
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

    /// The whole pass, `part` rows at a time (a forward launch into that part's store of
    /// `slots` states per (run, row), then the backward launch from it): targets `y`
    /// `[S, R, N, O]` and `task`'s loss weighted by `scale` (a regression's squared error at
    /// every step, S = T; a last-step regression's squared error or a classification's
    /// cross-entropy at step T, S = 1), `iters` reversal iterations (0: every state is a
    /// checkpoint). Returns the packed gradient `[R', 1, P + 1]`, its last value per run
    /// the summed loss (unweighted).
    #[allow(clippy::too_many_arguments)]
    fn gru_seq_pass(
        pk: FloatTensor<Self>,
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        ks: FloatTensor<Self>,
        hid: usize,
        slots: usize,
        loss: (Task, f32),
        iters: usize,
        part: usize,
    ) -> FloatTensor<Self>;

    /// Recomputing schedules' plans (see `gru_plan_kernel`) from packed parameters `pk`
    /// `[R, 1, P]` over inputs `x` `[T, R, N, F]` and targets `y` `[S, R, N, O]`: `plan`
    /// `[plans, len, 4]` the plans' steps, every run through each (run i R + q: plan i, run
    /// q), `slots` snapshot slots, `part` rows per launch. Returns the packed gradient as
    /// [`gru_seq_pass`](Self::gru_seq_pass).
    #[allow(clippy::too_many_arguments)]
    fn gru_plan(
        pk: FloatTensor<Self>,
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        plan: FloatTensor<Self>,
        slots: usize,
        hid: usize,
        loss: (Task, f32),
        part: usize,
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
        rows: std::ops::Range<usize>,
    ) -> CubeTensor {
        let [pk, x, ks] = [pk, x, ks].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        // Every run of `ks` (a multiple of x's runs): run i takes run i mod R's parameters and data.
        let all = ks.meta.shape().dims::<1>()[0];
        let store = empty(&x, [all, slots * rows.len(), hid]);
        let client = x.client.clone();
        // SAFETY: every index the kernel reads or writes is within the tensors it is given:
        // x is [T, R, N, F], the store is sized here for `slots` checkpoints per run (the
        // caller's count of the most any run keeps), pk holds R packed rows of this shape.
        unsafe {
            gru_seq_forward_kernel::launch_unchecked(
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

    fn gru_seq_pass(
        pk: CubeTensor,
        x: CubeTensor,
        y: CubeTensor,
        ks: CubeTensor,
        hid: usize,
        slots: usize,
        loss: (Task, f32),
        iters: usize,
        part: usize,
    ) -> CubeTensor {
        let ((last, ce), scale) = (loss_kind(loss.0), loss.1);
        let [pk, x, y, ks] = [pk, x, y, ks].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        let o = dims4(&y)[3];
        let all = ks.meta.shape().dims::<1>()[0];
        let plen = dims3(&pk)[2] + 1;
        let client = x.client.clone();
        by_parts(&pk, all, n, part, plen, |row0, this| {
            let store = Self::gru_seq_forward(pk.clone(), x.clone(), ks.clone(), hid, o, slots, row0..row0 + this);
            let acc = empty(&x, [all, this, plen]);
            // SAFETY: as the forward pass; the cubes are this part's (run, row) pairs, rows
            // row0 .. row0 + this < N, each reading its own states of this part's store and
            // summing into its own row of `acc`, sized here.
            unsafe {
                gru_seq_vjp_rows_kernel::launch_unchecked(
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
                    o as u32,
                    iters as u32,
                    last,
                    ce,
                )
            };
            acc
        })
    }

    fn gru_plan(
        pk: CubeTensor,
        x: CubeTensor,
        y: CubeTensor,
        plan: CubeTensor,
        slots: usize,
        hid: usize,
        loss: (Task, f32),
        part: usize,
    ) -> CubeTensor {
        let ((last, ce), scale) = (loss_kind(loss.0), loss.1);
        let [pk, x, y, plan] = [pk, x, y, plan].map(into_contiguous);
        let [t, r, n, f] = dims4(&x);
        let o = dims4(&y)[3];
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
                gru_plan_kernel::launch_unchecked(
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
                    o as u32,
                    last,
                    ce,
                )
            };
            acc
        })
    }
}

/// Whether `task`'s loss is at the last step alone, and whether it is the cross-entropy.
pub(super) fn loss_kind(task: Task) -> (bool, bool) {
    match task {
        Task::Regression => (false, false),
        Task::LastStepRegression => (true, false),
        Task::Classification { .. } => (true, true),
    }
}

/// A pass of `runs` runs over `n` rows in parts of `part` (one launch of `pass(row0, rows)`
/// each, returning its sums `[runs, rows, plen]`), each part's sums added to the gradient so
/// far by `sum_rows_kernel`: the packed gradient `[runs, 1, plen]`.
pub(super) fn by_parts(
    pk: &CubeTensor,
    runs: usize,
    n: usize,
    part: usize,
    plen: usize,
    mut pass: impl FnMut(usize, usize) -> CubeTensor,
) -> CubeTensor {
    let r = runs;
    let part = part.clamp(1, n.max(1));
    let mut g: Option<CubeTensor> = None;
    for row0 in (0..n).step_by(part) {
        let this = part.min(n - row0);
        let acc = pass(row0, this);
        let g_out = empty(pk, [r, 1, plen]);
        let (count, dim) = elementwise(pk, r * plen);
        let add = u32::from(g.is_some());
        // SAFETY: `acc` holds `this` rows of `plen` sums per run and `g_out` R rows of
        // `plen`; the first part's `g_in` (pk, one value shorter per run) is not read (`add`
        // 0).
        unsafe {
            sum_rows_kernel::launch_unchecked(
                &pk.client,
                count,
                dim,
                g.unwrap_or_else(|| pk.clone()).into_tensor_arg(),
                acc.into_tensor_arg(),
                g_out.clone().into_tensor_arg(),
                this as u32,
                plen as u32,
                add,
            )
        };
        g = Some(g_out);
    }
    g.expect("one row at least")
}

/// The runtime-dispatched backend the tensor API runs on.
type D = burn::backend::Dispatch;

/// The whole pass on tensors: packed parameters `pk` `[R, 1, P]`, inputs `x` `[T, R, N, F]`,
/// targets `y` `[S, R, N, O]` and the loss (`task`'s, weighted: see
/// [`GruSequenceKernels::gru_seq_pass`]), run r checkpointing every `ks[r]`-th state (`slots`: the most
/// checkpoints any run keeps) and rebuilding the others by `iters` reversal iterations.
/// `part` rows per launch (None: as many as [`BINDING_BYTES`] allows). Returns the
/// pass's packed gradient and summed squared error (the layout of
/// [`GruCubeKernels::gru_step_vjp_packed`](super::cube_kernels::GruCubeKernels::gru_step_vjp_packed)).
#[allow(clippy::too_many_arguments)]
pub fn gru_sequence_pass(
    pk: BTensor<3>,
    (x, y): (BTensor<4>, BTensor<4>),
    ks: &[usize],
    slots: usize,
    hid: usize,
    loss: (Task, f32),
    iters: usize,
    part: Option<usize>,
) -> BTensor<3> {
    let [_, _, n, _] = x.dims();
    let part = part.unwrap_or_else(|| part_rows(ks.len(), n, (pk.dims()[2] + 1).max(slots * hid)));
    let ks = intervals(ks, &x.device());
    BTensor::from_dispatch(<D as GruSequenceKernels>::gru_seq_pass(
        pk.into_dispatch(),
        x.into_dispatch(),
        y.into_dispatch(),
        ks,
        hid,
        slots,
        loss,
        iters,
        part,
    ))
}

/// Every state h_0..h_T of a forward pass, `[R, (T + 1) * N, H]` (time-major per run), in one
/// launch (the store at every k = 1).
pub fn gru_states(pk: BTensor<3>, x: BTensor<4>, hid: usize, o: usize) -> BTensor<3> {
    let [t, r, n, _] = x.dims();
    let ones = intervals(&vec![1; r], &x.device());
    BTensor::from_dispatch(<D as GruSequenceKernels>::gru_seq_forward(
        pk.into_dispatch(),
        x.into_dispatch(),
        ones,
        hid,
        o,
        t + 1,
        0..n,
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

/// Recomputing schedules' whole passes on tensors (see `gru_plan_kernel`): packed
/// parameters `pk` `[R, 1, P]`, inputs `x` `[T, R, N, F]`, targets `y` `[S, R, N, O]` and
/// the loss (as [`gru_sequence_pass`]), the plans' `steps` (op, load slot + 1, store slot + 1, time), every run through
/// each, with `slots` snapshot slots, `part` rows per launch (None: as many as
/// [`BINDING_BYTES`] allows). Returns the packed gradient and summed squared error, as
/// [`gru_sequence_pass`].
#[allow(clippy::too_many_arguments)]
pub fn gru_plan_pass(
    pk: BTensor<3>,
    (x, y): (BTensor<4>, BTensor<4>),
    plans: &[Vec<[u32; 4]>],
    slots: usize,
    hid: usize,
    loss: (Task, f32),
    part: Option<usize>,
) -> BTensor<3> {
    let [_, r, n, _] = x.dims();
    let part = part.unwrap_or_else(|| part_rows(plans.len() * r, n, (pk.dims()[2] + 1).max(slots.max(1) * hid)));
    let plan = plan_tensor(plans, &x.device());
    BTensor::from_dispatch(<D as GruSequenceKernels>::gru_plan(
        pk.into_dispatch(),
        x.into_dispatch(),
        y.into_dispatch(),
        plan,
        slots,
        hid,
        loss,
        part,
    ))
}

/// Each run's interval as the kernels read it, `[runs]`.
pub(super) fn intervals(ks: &[usize], device: &burn::tensor::Device) -> FloatTensor<D> {
    let ks: Vec<f32> = ks.iter().map(|&k| k as f32).collect();
    BTensor::<1>::from_data(TensorData::new(ks.clone(), [ks.len()]), device).into_dispatch()
}

/// The plans' steps as the plan kernels read them, `[plans, len, 4]`, `len` the longest
/// plan's: shorter plans are padded with steps that do nothing (op 0).
pub(super) fn plan_tensor(plans: &[Vec<[u32; 4]>], device: &burn::tensor::Device) -> FloatTensor<D> {
    let len = plans.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut data = vec![0.0f32; plans.len() * len * 4];
    for (p, steps) in plans.iter().enumerate() {
        for (i, s) in steps.iter().enumerate() {
            for (q, &v) in s.iter().enumerate() {
                data[(p * len + i) * 4 + q] = v as f32;
            }
        }
    }
    BTensor::<3>::from_data(TensorData::new(data, [plans.len(), len, 4]), device).into_dispatch()
}
