#!/usr/bin/env python3
"""Generate the reference fixtures the Rust tests compare against.

Run once (needs torch, scipy, numpy, mnist1d for its fixtures; revolve_schedules needs only
checkpoint-schedules):
python3 tools/make_fixtures.py [NAME ...]
Writes tests/fixtures/{gru_torch,adam_torch,stats_scipy,gru_reversal_torch,rev_ode_torch,revolve_schedules,
numpy_legacy,mnist1d,classify_torch,mnist1d_lengths,adding_torch,
rev_gru_torch}.json, or only
the named ones (e.g. `python3 tools/make_fixtures.py gru_reversal_torch`), so adding a
fixture does not rewrite the committed others. CI does not run this: the outputs are
committed. Versions used are recorded in each file.
"""
import argparse
import copy
import json
import os

import numpy as np

try:  # the model and statistics fixtures need these; revolve_schedules does not
    import scipy
    import scipy.stats as st
    import torch
except ImportError:
    scipy = st = torch = None

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures")


def dump(name, obj):
    obj["generated_by"] = "tools/make_fixtures.py"
    if "versions" not in obj:
        obj["versions"] = {"torch": torch.__version__, "scipy": scipy.__version__, "numpy": np.__version__}
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def tolist(t):
    return t.detach().cpu().numpy().tolist()


def gru_fixture():
    """nn.GRU + nn.Linear on fixed weights: states, predictions, MSE and every gradient."""
    torch.manual_seed(0)
    F, H, B, T = 2, 5, 3, 6
    gru = torch.nn.GRU(F, H, batch_first=True).double()
    lin = torch.nn.Linear(H, F).double()
    rng = np.random.default_rng(1)
    with torch.no_grad():
        for p in list(gru.parameters()) + list(lin.parameters()):
            p.copy_(torch.from_numpy(rng.uniform(-0.8, 0.8, size=tuple(p.shape))))
    x = torch.from_numpy(rng.uniform(-1, 1, size=(B, T, F)))
    y = torch.from_numpy(rng.uniform(-1, 1, size=(B, T, F)))
    h0 = torch.zeros(1, B, H, dtype=torch.float64)
    states, _ = gru(x, h0)
    pred = lin(states)
    loss = torch.mean((pred - y) ** 2)
    loss.backward()
    return {
        "F": F, "H": H, "B": B, "T": T,
        "weight_ih": tolist(gru.weight_ih_l0), "weight_hh": tolist(gru.weight_hh_l0),
        "bias_ih": tolist(gru.bias_ih_l0), "bias_hh": tolist(gru.bias_hh_l0),
        "out_weight": tolist(lin.weight), "out_bias": tolist(lin.bias),
        "x": tolist(x), "y": tolist(y),
        "states": tolist(states), "pred": tolist(pred), "loss": loss.item(),
        "grad_weight_ih": tolist(gru.weight_ih_l0.grad), "grad_weight_hh": tolist(gru.weight_hh_l0.grad),
        "grad_bias_ih": tolist(gru.bias_ih_l0.grad), "grad_bias_hh": tolist(gru.bias_hh_l0.grad),
        "grad_out_weight": tolist(lin.weight.grad), "grad_out_bias": tolist(lin.bias.grad),
    }


def adam_fixture():
    """Two runs (different lr) x two steps of clip_grad_norm_(1.0) + Adam on fixed gradients.

    Step 1's gradient has global norm > 1 (clipped), step 2's < 1 (not clipped)."""
    rng = np.random.default_rng(2)
    shapes = [(3, 4), (1, 4)]
    runs = []
    for lr in (0.01, 0.1):
        params = [torch.nn.Parameter(torch.from_numpy(rng.uniform(-1, 1, size=s))) for s in shapes]
        init = [tolist(p) for p in params]
        opt = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999), eps=1e-8)
        steps = []
        for scale in (3.0, 0.2):
            grads = [rng.normal(size=s) for s in shapes]
            norm = np.sqrt(sum((g ** 2).sum() for g in grads))
            grads = [g * scale / norm for g in grads]
            for p, g in zip(params, grads):
                p.grad = torch.from_numpy(g.copy())
            torch.nn.utils.clip_grad_norm_(params, max_norm=1.0)
            opt.step()
            steps.append({"grads": [g.tolist() for g in grads], "params_after": [tolist(p) for p in params]})
        runs.append({"lr": lr, "init": init, "steps": steps})
    return {"shapes": shapes, "runs": runs}


def sign_flip_exact(d):
    res = st.permutation_test((np.asarray(d),), np.mean, permutation_type="samples",
                              n_resamples=np.inf, alternative="two-sided")
    return float(res.pvalue)


def stats_fixture():
    rng = np.random.default_rng(3)
    seed_diffs = [0.001602514530532062, -0.0009948171209543943, -0.000387895037420094,
                  -0.005260380101390183, -0.0011633855756372213, 9.510130614928632e-05,
                  -0.0005934509681537747, -0.0013861251063644886]
    cases = {
        "seed_report": seed_diffs,
        "normal8": rng.normal(0.3, 1.0, 8).tolist(),
        "all_negative6": (-np.abs(rng.normal(1.0, 0.5, 6))).tolist(),
        "ties10": [1.0, -2.0, 2.0, 3.0, -3.0, 3.0, 4.0, 5.0, -1.0, 6.0],
        "zeros9": [0.0, 1.5, -2.5, 3.5, 0.0, 4.5, 5.5, -6.5, 7.5],
        "ties15": [1.0, 1.0, 2.0, -2.0, 3.0, 3.0, 3.0, -4.0, 5.0, 6.0, 6.0, 7.0, -8.0, 9.0, 10.0],
        "normal20": rng.normal(0.2, 1.0, 20).tolist(),
        "normal30": rng.normal(0.4, 1.0, 30).tolist(),
        "normal60": rng.normal(0.1, 1.0, 60).tolist(),
    }
    out = {}
    for name, d in cases.items():
        w = st.wilcoxon(d)
        entry = {"diffs": d, "wilcoxon_p": float(w.pvalue), "wilcoxon_statistic": float(w.statistic)}
        if len(d) <= 20:
            entry["sign_flip_p"] = sign_flip_exact(d)
        out[name] = entry
    spear = []
    for n, ties in ((10, False), (25, True), (40, True)):
        a = rng.normal(size=n)
        b = a * 0.5 + rng.normal(size=n)
        if ties:
            a = np.round(a, 0)
            b = np.round(b * 2, 0)
        spear.append({"a": a.tolist(), "b": b.tolist(), "rho": float(st.spearmanr(a, b).statistic)})
    normal_sf = [{"z": z, "sf": float(st.norm.sf(z))} for z in (0.0, 0.5, 1.0, 1.96, 2.5, 3.7, 6.0)]
    return {"cases": out, "spearman": spear, "normal_sf": normal_sf}


def pendulum_batch(rng, n, steps):
    """Inputs s_0..s_{steps-1} and targets s_1..s_steps of `n` damped-pendulum trajectories as
    in spec §1 (w0^2 = 4, gamma = 0.1, RK4 at 0.01 s, observed every 0.1 s, s = (theta, omega) / pi)."""
    def deriv(s):
        return np.stack([s[:, 1], -4.0 * np.sin(s[:, 0]) - 0.1 * s[:, 1]], axis=1)

    s = np.stack([rng.uniform(-0.75 * np.pi, 0.75 * np.pi, n), rng.uniform(-1, 1, n)], axis=1)
    obs = [s]
    for _ in range(steps):
        for _ in range(10):
            k1 = deriv(s)
            k2 = deriv(s + 0.005 * k1)
            k3 = deriv(s + 0.005 * k2)
            k4 = deriv(s + 0.01 * k3)
            s = s + 0.01 / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        obs.append(s)
    traj = np.stack(obs, axis=1) / np.pi  # [n, steps + 1, 2]
    return traj[:, :-1], traj[:, 1:]


def f32_exact(a):
    """float64 values that float32 represents exactly: the engine (f32) then starts from the
    very numbers the reference used, and only arithmetic precision separates the two."""
    return torch.as_tensor(a, dtype=torch.float64).to(torch.float32).to(torch.float64)


def gru_gates(gru, x, g):
    """r, z, n of torch.nn.GRU's cell at hidden state g, from its weights (gate rows r | z | n)."""
    H = g.shape[-1]
    gi = x @ gru.weight_ih_l0.T + gru.bias_ih_l0
    gh = g @ gru.weight_hh_l0.T + gru.bias_hh_l0
    r = torch.sigmoid(gi[..., :H] + gh[..., :H])
    z = torch.sigmoid(gi[..., H:2 * H] + gh[..., H:2 * H])
    n = torch.tanh(gi[..., 2 * H:] + r * gh[..., 2 * H:])
    return r, z, n


def gru_reverse(gru, h, x, iters):
    """Spec §5: from g = h_t, `iters` times: r, z, n at g; g = clamp((h_t - (1 - z) n) / max(z, 0.05), -1, 1).
    Also counts, over all iterations, the elements where the floor and the clamp acted, so the
    fixture can show that both shape the result (a test against it then notices either one)."""
    g = h.clone()
    floored = clamped = 0
    for _ in range(iters):
        _, z, n = gru_gates(gru, x, g)
        floored += int((z < 0.05).sum())
        raw = (h - (1 - z) * n) / torch.clamp(z, min=0.05)
        clamped += int((raw.abs() > 1).sum())
        g = torch.clamp(raw, -1.0, 1.0)
    return g, floored, clamped


def relative_defect(g, truth):
    """Spec §5: ||g - h_{t-1}|| / (||h_{t-1}|| + 1e-6), L2 norms over the hidden dimension."""
    return torch.linalg.vector_norm(g - truth, dim=-1) / (torch.linalg.vector_norm(truth, dim=-1) + 1e-6)


def jacobian_norms(gru, truth, h_t, x_t):
    """At every data point (h_{t-1}, h_t, x_t): spectral norm of the forward step's Jacobian
    dh_t/dh_{t-1}, and spectral norm and spectral radius of the reversal's fixed-point map
    g -> clamp((h_t - (1 - z(g)) n(g)) / max(z(g), 0.05), -1, 1) at its true fixed point g = h_{t-1}.
    A radius > 1 there means the iteration is pushed away from h_{t-1}: it does not contract."""
    def step(hp, xt):
        _, z, n = gru_gates(gru, xt, hp)
        return (1 - z) * n + z * hp

    def fixed_point_map(g, ht, xt):
        _, z, n = gru_gates(gru, xt, g)
        return torch.clamp((ht - (1 - z) * n) / torch.clamp(z, min=0.05), -1, 1)

    fwd, fpm_norm, fpm_radius = [], [], []
    for hp, ht, xt in zip(truth.reshape(-1, truth.shape[-1]), h_t.reshape(-1, h_t.shape[-1]),
                          x_t.reshape(-1, x_t.shape[-1])):
        jf = torch.autograd.functional.jacobian(lambda v: step(v, xt), hp)
        jp = torch.autograd.functional.jacobian(lambda v: fixed_point_map(v, ht, xt), hp)
        fwd.append(torch.linalg.matrix_norm(jf, ord=2).item())
        fpm_norm.append(torch.linalg.matrix_norm(jp, ord=2).item())
        fpm_radius.append(torch.linalg.eigvals(jp).abs().max().item())
    return np.array(fwd), np.array(fpm_norm), np.array(fpm_radius)


def gru_reversal_fixture():
    """The GRU reversal of spec §5 on a trained nn.GRU whose reversal does not contract, for
    1, 3 and 20 fixed-point iterations, with the one-step defect (mean and max)."""
    torch.manual_seed(4)
    rng = np.random.default_rng(4)
    F, H, B, T = 2, 6, 4, 12
    train_steps, train_lr = 300, 0.02

    # Trained weights, the kind the bench's probe meets: nn.GRU + nn.Linear in float64, 300
    # full-batch Adam steps of one-step prediction on 64 pendulum trajectories of 30 steps.
    gru = torch.nn.GRU(F, H, batch_first=True).double()
    lin = torch.nn.Linear(H, F).double()
    xs, ys = (torch.from_numpy(a) for a in pendulum_batch(rng, 64, 30))
    opt = torch.optim.Adam(list(gru.parameters()) + list(lin.parameters()), lr=train_lr)
    losses = []
    for _ in range(train_steps):
        opt.zero_grad()
        loss = torch.mean((lin(gru(xs)[0]) - ys) ** 2)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    x, y = (f32_exact(torch.from_numpy(a)) for a in pendulum_batch(rng, B, T))  # unseen trajectories

    with torch.no_grad():
        for p in list(gru.parameters()) + list(lin.parameters()):
            p.copy_(f32_exact(p))
    # Non-contracting: the fixed-point map must have spectral radius > 1 at the data, so the
    # iteration does not settle and 1, 3, 19, 20 and 21 iterations all give different states
    # (a test then pins the count). Training alone gives that here (the trained cell contracts
    # forward, so its inverse iteration expands); should another torch train a tamer cell,
    # W_hh is multiplied by 1.25 (rounded to f32 again) until the median radius exceeds 1,
    # and the factor is recorded.
    w_hh_scale = 1.0
    while True:
        with torch.no_grad():
            states = f32_exact(gru(x)[0])  # h_1..h_T, [B, T, H]
        # Reverse every step t = 2..T at once, rows ordered (t, b) as the engine's probe does.
        h_t = states[:, 1:].transpose(0, 1)      # [T-1, B, H]: h_2..h_T
        x_t = x[:, 1:].transpose(0, 1)           # x_2..x_T
        truth = states[:, :-1].transpose(0, 1)   # h_1..h_{T-1}
        fwd, fpm_norm, fpm_radius = jacobian_norms(gru, truth, h_t, x_t)
        if np.median(fpm_radius) > 1.0:
            break
        with torch.no_grad():
            gru.weight_hh_l0.copy_(f32_exact(gru.weight_hh_l0 * 1.25))
        w_hh_scale *= 1.25

    with torch.no_grad():
        # The hand-written gates are torch's cell: they rebuild nn.GRU's states.
        h_prev = torch.cat([torch.zeros(B, 1, H, dtype=torch.float64), states[:, :-1]], 1)
        _, z, n = gru_gates(gru, x, h_prev)
        assert torch.max(torch.abs((1 - z) * n + z * h_prev - states)) < 1e-6
        reversals = {}
        for iters in (1, 3, 20):
            g, floored, clamped = gru_reverse(gru, h_t, x_t, iters)
            # The same reversal in float32, to size the tolerance of an f32 engine against it.
            g32, _, _ = gru_reverse(copy.deepcopy(gru).float(), h_t.float(), x_t.float(), iters)
            d = relative_defect(g, truth)
            reversals[str(iters)] = {
                "reversed": tolist(g),
                "defect_mean": d.mean().item(), "defect_max": d.max().item(),
                "floor_active": floored, "clamp_active": clamped,
                "float32_max_abs_gap": torch.max(torch.abs(g32.double() - g)).item(),
            }
        # Neighbouring counts land elsewhere: how far 19 and 21 iterations are from 20.
        g20 = gru_reverse(gru, h_t, x_t, 20)[0]
        count_gap = min(torch.max(torch.abs(gru_reverse(gru, h_t, x_t, i)[0] - g20)).item() for i in (19, 21))
    assert all(r["floor_active"] > 0 and r["clamp_active"] > 0 for k, r in reversals.items() if k != "1")
    assert reversals["1"]["floor_active"] > 0
    return {
        "F": F, "H": H, "B": B, "T": T,
        "about": "rnn_small's reversal (spec §5) from each true h_t, t = 2..T. reversals[iters].reversed[t-2][b] "
                 "is the rebuilt h_{t-1} of trajectory b; states[b][t-1] is the true h_t (torch float64, "
                 "rounded to float32 like the weights and x, so an f32 engine starts from the same numbers).",
        "training": {"task": "one-step prediction, damped pendulum of spec §1, 64 trajectories x 30 steps",
                     "optimizer": "Adam, full batch", "steps": train_steps, "lr": train_lr,
                     "loss_first": losses[0], "loss_last": losses[-1]},
        "non_contracting": {
            "w_hh_scale": w_hh_scale,
            "forward_jacobian_spectral_norm": {"min": fwd.min(), "median": float(np.median(fwd)), "max": fwd.max()},
            "fixed_point_map_spectral_norm": {"min": fpm_norm.min(), "median": float(np.median(fpm_norm)),
                                              "max": fpm_norm.max()},
            "fixed_point_map_spectral_radius": {"min": fpm_radius.min(), "median": float(np.median(fpm_radius)),
                                                "max": fpm_radius.max()},
            "max_abs_gap_20_vs_19_or_21_iters": count_gap,
        },
        "weight_ih": tolist(gru.weight_ih_l0), "weight_hh": tolist(gru.weight_hh_l0),
        "bias_ih": tolist(gru.bias_ih_l0), "bias_hh": tolist(gru.bias_hh_l0),
        "out_weight": tolist(lin.weight), "out_bias": tolist(lin.bias),
        "x": tolist(x), "y": tolist(y), "states": tolist(states),
        "reversals": reversals,
    }


REV_ODE_PARAMS = ["u_f", "v_f", "w_f", "d_f", "u_g", "v_g", "w_g", "d_g", "w_o", "b_o"]


def rev_ode_forward(p, mask, x, c=0.25):
    """Spec §7 in the engine's row layout: u_* is U^T [r_max, H/2], v_* is V [H/2, r_max],
    w_* [F, H/2], d_* [1, H/2], w_o [H, F], b_o [1, F]; `mask` [r_max, 1] marks the live rank.
    Returns the states h_1..h_T [B, T, H] and the predictions p_t = x_t + h_t W_o + b_o."""
    B, T, _ = x.shape
    H2 = p["v_f"].shape[0]

    def coupling(k, z, xt):
        return c * torch.tanh((z @ p["v_" + k]) @ (p["u_" + k] * mask) + xt @ p["w_" + k] + p["d_" + k])

    a = torch.zeros(B, H2, dtype=x.dtype)
    b = torch.zeros(B, H2, dtype=x.dtype)
    states = []
    for t in range(T):
        a = a + coupling("f", b, x[:, t])
        b = b + coupling("g", a, x[:, t])
        states.append(torch.cat([a, b], 1))
    states = torch.stack(states, 1)
    return states, x + states @ p["w_o"] + p["b_o"]


def rev_ode_inverse(p, mask, h, xt, c=0.25):
    """The algebraic inverse: b = b' - G(a', x), a = a' - F(b, x)."""
    H2 = p["v_f"].shape[0]
    a2, b2 = h[..., :H2], h[..., H2:]
    b = b2 - c * torch.tanh((a2 @ p["v_g"]) @ (p["u_g"] * mask) + xt @ p["w_g"] + p["d_g"])
    a = a2 - c * torch.tanh((b @ p["v_f"]) @ (p["u_f"] * mask) + xt @ p["w_f"] + p["d_f"])
    return torch.cat([a, b], -1)


def rev_ode_fixture():
    """rev_ode_small (spec §7) in float64 autograd: states, loss, every parameter gradient
    and the inverse, at rank 2 of r_max 3 (so masked U columns are exercised); plus the same
    cell trained on pendulum data, whose states and inverse the engine must also match."""
    rng = np.random.default_rng(9)
    F, H, B, T, R_MAX, RANK = 2, 8, 3, 6, 3, 2
    H2 = H // 2
    shapes = {"u_f": (R_MAX, H2), "v_f": (H2, R_MAX), "w_f": (F, H2), "d_f": (1, H2),
              "u_g": (R_MAX, H2), "v_g": (H2, R_MAX), "w_g": (F, H2), "d_g": (1, H2),
              "w_o": (H, F), "b_o": (1, F)}
    mask = torch.tensor([[1.0]] * RANK + [[0.0]] * (R_MAX - RANK), dtype=torch.float64)

    def fresh(scale):
        p = {k: f32_exact(rng.uniform(-scale, scale, size=shapes[k])) for k in REV_ODE_PARAMS}
        for k in ("u_f", "u_g"):
            p[k][RANK:] = 0.0  # unused U columns are 0 (spec §7)
        return {k: v.requires_grad_(True) for k, v in p.items()}

    p = fresh(0.8)
    x = f32_exact(rng.uniform(-1, 1, size=(B, T, F)))
    y = f32_exact(rng.uniform(-1, 1, size=(B, T, F)))
    states, pred = rev_ode_forward(p, mask, x)
    loss = torch.mean((pred - y) ** 2)
    loss.backward()
    with torch.no_grad():
        prev = torch.cat([torch.zeros(B, 1, H, dtype=torch.float64), states[:, :-1]], 1)
        inverse = rev_ode_inverse(p, mask, states, x)  # h_{t-1} from h_t, [B, T, H]
        assert torch.max(torch.abs(inverse - prev)) < 1e-12

    # Trained: 300 full-batch Adam steps of one-step prediction on 64 pendulum trajectories.
    q = fresh(1.0 / np.sqrt(H))
    xs, ys = (torch.from_numpy(a) for a in pendulum_batch(rng, 64, 30))
    opt = torch.optim.Adam(list(q.values()), lr=0.02)
    losses = []
    for _ in range(300):
        opt.zero_grad()
        tl = torch.mean((rev_ode_forward(q, mask, xs)[1] - ys) ** 2)
        tl.backward()
        opt.step()
        losses.append(tl.item())
    with torch.no_grad():
        for v in q.values():
            v.copy_(f32_exact(v))
        tx = f32_exact(torch.from_numpy(pendulum_batch(rng, B, 20)[0]))
        t_states, _ = rev_ode_forward(q, mask, tx)

    out = {
        "F": F, "H": H, "B": B, "T": T, "r_max": R_MAX, "rank": RANK, "c": 0.25,
        "about": "rev_ode_small (spec §7) in the engine's row layout (u_* = U^T [r_max, H/2], v_* = V "
                 "[H/2, r_max]); mask [r_max, 1] = live rank. states[b][t-1] = h_t; inverse[b][t-1] = h_{t-1} "
                 "rebuilt from h_t by the algebraic inverse. trained.* is the cell after 300 Adam steps on "
                 "pendulum data (params rounded to float32) with its states on unseen trajectories.",
        "mask": tolist(mask),
        "params": {k: tolist(v) for k, v in p.items()},
        "grads": {k: tolist(v.grad) for k, v in p.items()},
        "x": tolist(x), "y": tolist(y),
        "states": tolist(states), "pred": tolist(pred), "loss": loss.item(), "inverse": tolist(inverse),
        "trained": {"loss_first": losses[0], "loss_last": losses[-1],
                    "params": {k: tolist(v) for k, v in q.items()}, "x": tolist(tx), "states": tolist(t_states)},
    }
    return out


def revolve_fixture():
    """Binomial checkpointing, "revolve" (Griewank & Walther 2000, ACM TOMS 26(1)), as the
    `checkpoint_schedules` package schedules it (its `Revolve`, H-Revolve's sequences): for T
    steps and s snapshot slots, the forward steps it advances outside the adjoint's own
    recording step (`Forward` actions without `write_adj_deps`: the engine's VJP re-runs the
    step it differentiates, so these are the schedule's forward cell evaluations), the
    recording steps (T), the most snapshots it holds at once, and the package's optimum
    `optimal_steps_binomial` (advances + recording steps) for the same slots. `long_cases`:
    the same at T = 1000 for a few slot counts, and the optimum alone at T = 10000 (the
    package's Revolve and optimum run its O(T^2 s) recursion in Python: minutes at 5 slots,
    hours at 10, so 10000 stops at 5)."""
    from importlib.metadata import version

    import checkpoint_schedules as cs

    def case(t, slots):
        advances = recording = peak = 0
        held = set()
        for a in cs.Revolve(t, slots):
            if isinstance(a, cs.Forward):
                if a.write_ics and a.storage != cs.StorageType.WORK:
                    held.add(a.n0)
                    peak = max(peak, len(held))
                if a.write_adj_deps:
                    recording += a.n1 - a.n0
                else:
                    advances += a.n1 - a.n0
            elif isinstance(a, cs.Move):
                held.discard(a.n)
            elif isinstance(a, cs.EndReverse):
                break
        optimum = cs.optimal_steps_binomial(t, min(slots, t - 1)) if t > 1 else 1
        assert advances + recording == optimum, (t, slots)
        return {"t": t, "slots": slots, "advances": advances, "recording": recording,
                "peak_snapshots": peak, "optimal_total": optimum}

    cases = [case(t, slots) for t in (1, 2, 5, 17, 80) for slots in range(1, t + 1)]
    long_cases = [case(1000, slots) for slots in (2, 3, 5, 10)]
    long_cases += [{"t": 10000, "slots": slots, "optimal_total": cs.optimal_steps_binomial(10000, slots)}
                   for slots in (2, 3, 5)]
    return {"cases": cases, "long_cases": long_cases,
            "versions": {"checkpoint_schedules": version("checkpoint-schedules"), "numpy": np.__version__}}


def classify_torch_fixture():
    """Both models trained on a classification: nn.GRU and rev_ode_small read out at the last
    step, F.cross_entropy (mean over the batch) on real MNIST-1D sequences; loss, logits and
    every parameter gradient in float64 (weights and inputs rounded to float32 first)."""
    import torch.nn.functional as fn
    from mnist1d.data import get_dataset_args, make_dataset

    d = make_dataset(get_dataset_args())
    B, C = 4, 10
    x = f32_exact(d["x"][:B, :, None])  # [B, 40, 1]
    labels = torch.from_numpy(d["y"][:B].astype(np.int64))
    _, T, F = x.shape
    rng = np.random.default_rng(18)

    H = 6
    gru = torch.nn.GRU(F, H, batch_first=True).double()
    lin = torch.nn.Linear(H, C).double()
    with torch.no_grad():
        for p in list(gru.parameters()) + list(lin.parameters()):
            p.copy_(f32_exact(rng.uniform(-0.8, 0.8, size=tuple(p.shape))))
    states, _ = gru(x, torch.zeros(1, B, H, dtype=torch.float64))
    logits = lin(states[:, -1])
    loss = fn.cross_entropy(logits, labels)
    loss.backward()
    gru_out = {
        "H": H,
        "weight_ih": tolist(gru.weight_ih_l0), "weight_hh": tolist(gru.weight_hh_l0),
        "bias_ih": tolist(gru.bias_ih_l0), "bias_hh": tolist(gru.bias_hh_l0),
        "out_weight": tolist(lin.weight), "out_bias": tolist(lin.bias),
        "logits": tolist(logits), "loss": loss.item(),
        "grad_weight_ih": tolist(gru.weight_ih_l0.grad), "grad_weight_hh": tolist(gru.weight_hh_l0.grad),
        "grad_bias_ih": tolist(gru.bias_ih_l0.grad), "grad_bias_hh": tolist(gru.bias_hh_l0.grad),
        "grad_out_weight": tolist(lin.weight.grad), "grad_out_bias": tolist(lin.bias.grad),
    }

    H, R_MAX, RANK = 8, 3, 2
    H2 = H // 2
    shapes = {"u_f": (R_MAX, H2), "v_f": (H2, R_MAX), "w_f": (F, H2), "d_f": (1, H2),
              "u_g": (R_MAX, H2), "v_g": (H2, R_MAX), "w_g": (F, H2), "d_g": (1, H2),
              "w_o": (H, C), "b_o": (1, C)}
    mask = torch.tensor([[1.0]] * RANK + [[0.0]] * (R_MAX - RANK), dtype=torch.float64)
    p = {k: f32_exact(rng.uniform(-0.8, 0.8, size=shapes[k])) for k in REV_ODE_PARAMS}
    for k in ("u_f", "u_g"):
        p[k][RANK:] = 0.0
    p = {k: v.requires_grad_(True) for k, v in p.items()}
    states, _ = rev_ode_forward(p, mask, x)
    logits = states[:, -1] @ p["w_o"] + p["b_o"]  # a classification's readout is not residual
    loss = fn.cross_entropy(logits, labels)
    loss.backward()
    rev_out = {"H": H, "r_max": R_MAX, "rank": RANK, "mask": tolist(mask),
               "params": {k: tolist(v) for k, v in p.items()},
               "grads": {k: tolist(v.grad) for k, v in p.items()},
               "logits": tolist(logits), "loss": loss.item()}
    return {
        "about": "Cross-entropy of the last step's readout, mean over B MNIST-1D sequences (mnist1d "
                 "make_dataset(get_dataset_args()) train[:B]). gru: torch layout (nn.GRU + nn.Linear); "
                 "rev_ode: the engine's row layout as in rev_ode_torch, readout h_T w_o + b_o.",
        "F": F, "T": T, "B": B, "C": C,
        "x": tolist(x), "labels": labels.tolist(),
        "gru": gru_out, "rev_ode": rev_out,
    }


def numpy_legacy_fixture():
    """numpy's legacy RandomState draws and the numpy/scipy signal operations MNIST-1D uses."""
    import scipy.ndimage as ndi

    rs = np.random.RandomState(42)
    script = []  # (op, arg, result) in one stream, so a misaligned draw fails every later value
    script.append(["uint32", 10, rs.randint(0, 2**32, size=10, dtype=np.uint64).tolist()])
    script.append(["random_sample", 5, [rs.random_sample() for _ in range(5)]])
    script.append(["standard_normal", 7, [rs.standard_normal() for _ in range(7)]])
    script.append(["random_sample", 1, [rs.rand()]])  # the Gaussian cache survives a uniform
    script.append(["standard_normal", 3, [rs.randn() for _ in range(3)]])
    script.append(["choice", 48, [int(rs.choice(48)) for _ in range(30)]])
    script.append(["randint", 1, [int(rs.randint(0, 1)) for _ in range(3)]])
    script.append(["randint", 5000, [int(rs.randint(0, 5000)) for _ in range(5)]])
    script.append(["permutation", 10, rs.permutation(10).tolist()])
    script.append(["permutation", 1000, rs.permutation(1000).tolist()])
    script.append(["uint32", 3, rs.randint(0, 2**32, size=3, dtype=np.uint64).tolist()])
    seeds = {s: np.random.RandomState(s).randint(0, 2**32, size=3, dtype=np.uint64).tolist()
             for s in (0, 1, 12345, 4294967295)}

    rng = np.random.default_rng(5)
    noise = rng.standard_normal(72)
    short = rng.standard_normal(5)
    xp = np.linspace(0, 1, 50)
    fp = np.concatenate([rng.standard_normal(12), np.zeros(38)])
    big = rng.standard_normal(1000) * 3 + 1
    return {
        "about": "np.random.RandomState(42): one stream of draws in `script` order; `seeds`: the first three "
                 "32-bit draws of other seeds. Then np.linspace, np.interp (what interp1d linear calls for 1-D "
                 "float64), scipy.ndimage.gaussian_filter1d (defaults) and numpy's mean/std.",
        "script": script,
        "seeds": {str(k): v for k, v in seeds.items()},
        "linspace": {"0_1_72": np.linspace(0, 1, 72).tolist(), "m05_05_72": np.linspace(-0.5, 0.5, 72).tolist(),
                     "0_1_40": np.linspace(0, 1, 40).tolist()},
        "interp": {"xp": xp.tolist(), "fp": fp.tolist(), "x": np.linspace(0, 1, 72).tolist(),
                   "out": np.interp(np.linspace(0, 1, 72), xp, fp).tolist()},
        "gaussian_filter": {"x": noise.tolist(), "sigma2": ndi.gaussian_filter(noise, 2).tolist(),
                            "sigma1": ndi.gaussian_filter1d(noise, 1).tolist(),
                            "short": short.tolist(), "short_sigma2": ndi.gaussian_filter1d(short, 2).tolist()},
        "moments": {"x": big.tolist(), "mean": float(big.mean()), "std": float(big.std())},
    }


def mnist1d_fixture():
    """The PyPI package mnist1d's make_dataset(get_dataset_args()) for the default seed and another."""
    import importlib.metadata

    from mnist1d.data import get_dataset_args, get_templates, make_dataset

    out = {"about": "mnist1d.data.make_dataset(get_dataset_args()) with args.seed = SEED: every label, a few "
                    "whole examples (float64), and sums over the whole set: sum x, sum x^2 and sum x * "
                    "(row index + 1) * (step + 1) / 1e4, per split.",
           "mnist1d_version": importlib.metadata.version("mnist1d"),
           "templates": get_templates()["x"].tolist(),
           "seeds": {}}
    for seed in (42, 7):
        args = get_dataset_args()
        args.seed = seed
        d = make_dataset(args)

        def sums(x):
            w = np.outer(np.arange(1, x.shape[0] + 1), np.arange(1, x.shape[1] + 1)) / 1e4
            return {"sum": float(x.sum()), "sum_sq": float((x ** 2).sum()), "weighted": float((x * w).sum())}

        out["seeds"][str(seed)] = {
            "y": d["y"].tolist(), "y_test": d["y_test"].tolist(),
            "x_rows": {str(i): d["x"][i].tolist() for i in (0, 1, 2, 1234, 3999)},
            "x_test_rows": {str(i): d["x_test"][i].tolist() for i in (0, 500, 999)},
            "train": sums(d["x"]), "test": sums(d["x_test"]),
        }
    return out


def mnist1d_lengths_fixture():
    """The PyPI package mnist1d's make_dataset(get_dataset_args()) at other final_seq_length
    values than the default 40 (seed 42): the resampling to the final length is then exercised."""
    import importlib.metadata

    from mnist1d.data import get_dataset_args, make_dataset

    out = {"about": "mnist1d.data.make_dataset(get_dataset_args()) with args.final_seq_length = LENGTH and "
                    "args.seed = 42: every label, a few whole examples (float64), and sums over the whole set: "
                    "sum x, sum x^2 and sum x * (row index + 1) * (step + 1) / 1e4, per split.",
           "mnist1d_version": importlib.metadata.version("mnist1d"),
           "seed": 42,
           "lengths": {}}
    for length in (60, 120):
        args = get_dataset_args()
        args.seed = 42
        args.final_seq_length = length
        d = make_dataset(args)
        assert d["x"].shape[1] == length

        def sums(x):
            w = np.outer(np.arange(1, x.shape[0] + 1), np.arange(1, x.shape[1] + 1)) / 1e4
            return {"sum": float(x.sum()), "sum_sq": float((x ** 2).sum()), "weighted": float((x * w).sum())}

        out["lengths"][str(length)] = {
            "y": d["y"].tolist(), "y_test": d["y_test"].tolist(),
            "x_rows": {str(i): d["x"][i].tolist() for i in (0, 1, 3999)},
            "x_test_rows": {str(i): d["x_test"][i].tolist() for i in (0, 999)},
            "train": sums(d["x"]), "test": sums(d["x_test"]),
        }
    return out


def adding_torch_fixture():
    """Both models on a last-step regression shaped like the adding problem: nn.GRU and
    rev_ode_small read out at the last step only, the MSE of that readout against the sum of
    the two marked values; loss, prediction and every parameter gradient in float64 (weights,
    inputs and targets rounded to float32 first)."""
    B, T, F, O = 3, 7, 2, 1
    rng = np.random.default_rng(19)
    values = rng.uniform(0.0, 1.0, size=(B, T))
    marks = np.zeros((B, T))
    for b in range(B):  # one marker in each half, so the two never coincide
        marks[b, rng.integers(0, T // 2)] = 1.0
        marks[b, rng.integers(T // 2, T)] = 1.0
    x = f32_exact(np.stack([values, marks], axis=2))  # [B, T, 2]
    y = f32_exact((x[:, :, 0] * x[:, :, 1]).sum(1, keepdim=True))  # [B, 1]
    assert torch.equal(x[:, :, 1].sum(1), torch.full((B,), 2.0, dtype=torch.float64))

    H = 5
    gru = torch.nn.GRU(F, H, batch_first=True).double()
    lin = torch.nn.Linear(H, O).double()
    with torch.no_grad():
        for p in list(gru.parameters()) + list(lin.parameters()):
            p.copy_(f32_exact(rng.uniform(-0.8, 0.8, size=tuple(p.shape))))
    states, _ = gru(x, torch.zeros(1, B, H, dtype=torch.float64))
    pred = lin(states[:, -1])
    loss = torch.mean((pred - y) ** 2)
    loss.backward()
    gru_out = {
        "H": H,
        "weight_ih": tolist(gru.weight_ih_l0), "weight_hh": tolist(gru.weight_hh_l0),
        "bias_ih": tolist(gru.bias_ih_l0), "bias_hh": tolist(gru.bias_hh_l0),
        "out_weight": tolist(lin.weight), "out_bias": tolist(lin.bias),
        "pred": tolist(pred), "loss": loss.item(),
        "grad_weight_ih": tolist(gru.weight_ih_l0.grad), "grad_weight_hh": tolist(gru.weight_hh_l0.grad),
        "grad_bias_ih": tolist(gru.bias_ih_l0.grad), "grad_bias_hh": tolist(gru.bias_hh_l0.grad),
        "grad_out_weight": tolist(lin.weight.grad), "grad_out_bias": tolist(lin.bias.grad),
    }

    H, R_MAX, RANK = 8, 3, 2
    H2 = H // 2
    shapes = {"u_f": (R_MAX, H2), "v_f": (H2, R_MAX), "w_f": (F, H2), "d_f": (1, H2),
              "u_g": (R_MAX, H2), "v_g": (H2, R_MAX), "w_g": (F, H2), "d_g": (1, H2),
              "w_o": (H, O), "b_o": (1, O)}
    mask = torch.tensor([[1.0]] * RANK + [[0.0]] * (R_MAX - RANK), dtype=torch.float64)
    p = {k: f32_exact(rng.uniform(-0.8, 0.8, size=shapes[k])) for k in REV_ODE_PARAMS}
    for k in ("u_f", "u_g"):
        p[k][RANK:] = 0.0
    p = {k: v.requires_grad_(True) for k, v in p.items()}
    states, _ = rev_ode_forward(p, mask, x)
    pred = states[:, -1] @ p["w_o"] + p["b_o"]  # one target from two inputs: the readout is not residual
    loss = torch.mean((pred - y) ** 2)
    loss.backward()
    rev_out = {"H": H, "r_max": R_MAX, "rank": RANK, "mask": tolist(mask),
               "params": {k: tolist(v) for k, v in p.items()},
               "grads": {k: tolist(v.grad) for k, v in p.items()},
               "pred": tolist(pred), "loss": loss.item()}
    return {
        "about": "MSE of the last step's readout only, mean over B and the O = 1 output, on adding-problem "
                 "sequences: x[b][t] = (value in [0, 1), marker), the marker 1 at one step of the first half "
                 "(t < T/2) and one of the second; y[b] = the sum of the two marked values. gru: torch layout "
                 "(nn.GRU + nn.Linear); rev_ode: the engine's row layout as in rev_ode_torch, readout h_T w_o + b_o.",
        "F": F, "T": T, "B": B, "O": O,
        "x": tolist(x), "y": tolist(y),
        "gru": gru_out, "rev_ode": rev_out,
    }


def rev_gru_fixture():
    """rev_gru's equations (MacKay et al. 2018's RevGRU: two halves, each updated from the other
    with GRU gates, the update gate capped at 2^-bits and rounded to 1/1024) in float64 torch:
    the states of a forward pass. The Rust fixed-point forward (states rounded to 2^-23) must
    match within its resolution."""
    F, H, B, T, bits = 3, 8, 2, 20, 3
    g = H // 2
    rng = np.random.default_rng(11)
    shapes = {"wa_x": (F, 3 * g), "wa_h": (g, 2 * g), "ua": (g, g), "ca": (1, 3 * g),
              "wb_x": (F, 3 * g), "wb_h": (g, 2 * g), "ub": (g, g), "cb": (1, 3 * g),
              "w_o": (H, F), "b_o": (1, F)}
    bound = 1 / np.sqrt(H)
    params = {k: torch.from_numpy(rng.uniform(-bound, bound, size=s)) for k, s in shapes.items()}
    x = torch.from_numpy(rng.uniform(-1, 1, size=(T, B, F)))
    m = 1 - 2.0 ** -bits

    def half(a, other, xt, w_x, w_h, u, c):
        xw = xt @ w_x
        s = torch.sigmoid(xw[:, :2 * g] + other @ w_h + c[:, :2 * g])
        z = torch.clamp(torch.round((m * s[:, :g] + 1 - m) * 1024), 1024 * (1 - m), 1024) / 1024
        n = torch.tanh(xw[:, 2 * g:] + (s[:, g:] * other) @ u + c[:, 2 * g:])
        return z * a + (1 - z) * n

    h = torch.zeros(B, H, dtype=torch.float64)
    states = [h]
    for t in range(T):
        a, b = h[:, :g], h[:, g:]
        a = half(a, b, x[t], params["wa_x"], params["wa_h"], params["ua"], params["ca"])
        b = half(b, a, x[t], params["wb_x"], params["wb_h"], params["ub"], params["cb"])
        h = torch.cat([a, b], 1)
        states.append(h)
    return {
        "F": F, "H": H, "B": B, "T": T, "bits": bits,
        "params": {k: tolist(v) for k, v in params.items()},
        "x": tolist(x),
        "h": tolist(torch.stack(states)),
    }


FIXTURES = {
    "gru_torch": gru_fixture,
    "adam_torch": adam_fixture,
    "stats_scipy": stats_fixture,
    "gru_reversal_torch": gru_reversal_fixture,
    "rev_ode_torch": rev_ode_fixture,
    "revolve_schedules": revolve_fixture,
    "numpy_legacy": numpy_legacy_fixture,
    "mnist1d": mnist1d_fixture,
    "classify_torch": classify_torch_fixture,
    "mnist1d_lengths": mnist1d_lengths_fixture,
    "adding_torch": adding_torch_fixture,
    "rev_gru_torch": rev_gru_fixture,
}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", metavar="NAME",
                    help="fixtures to write (default: all): " + ", ".join(FIXTURES))
    names = ap.parse_args().names or list(FIXTURES)
    unknown = [n for n in names if n not in FIXTURES]
    if unknown:
        ap.error(f"unknown fixture(s) {unknown}; known: {', '.join(FIXTURES)}")
    os.makedirs(OUT, exist_ok=True)
    for name in names:
        dump(name + ".json", FIXTURES[name]())
    print("wrote", [n + ".json" for n in names])
