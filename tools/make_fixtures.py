#!/usr/bin/env python3
"""Generate the reference fixtures the Rust tests compare against.

Run once (needs torch, scipy, numpy):  python3 tools/make_fixtures.py
Writes tests/fixtures/{gru_torch,adam_torch,stats_scipy}.json. CI does not run this: the
outputs are committed. Versions used are recorded in each file.
"""
import json
import os

import numpy as np
import scipy
import scipy.stats as st
import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures")


def dump(name, obj):
    obj["generated_by"] = "tools/make_fixtures.py"
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


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    dump("gru_torch.json", gru_fixture())
    dump("adam_torch.json", adam_fixture())
    dump("stats_scipy.json", stats_fixture())
    print("wrote", sorted(os.listdir(OUT)))
