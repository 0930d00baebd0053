"""Random questions -> my full-space flow end vs grpo_theory.stationary_policy. One JSON line per case."""
import json, sys, time, warnings
import numpy as np
from field import Spec, Field
from flow import integrate
from lib import call_library

VARIANTS = [  # (placement, estimator, weight)
    ("loss", "k3", 14), ("loss", "k3_ratio", 10), ("loss", "k2", 5), ("loss", "k1", 5),
    ("reward", "k1", 10), ("reward", "k2", 10), ("reward", "k3", 12),
    ("advantage", "k1", 10), ("advantage", "k2", 6), ("advantage", "k3", 8)]
LEVELS = [0.0, 0.25, 0.4, 0.5, 0.75, 1.0]

import os
FOCUS = os.environ.get("FOCUS") == "kl-ties"   # KL in the reward/advantage, tied rewards, K >= 3

def make_case(seed, idx):
    rng = np.random.default_rng([seed, idx])
    if FOCUS:
        return make_focus_case(rng)
    K = int(rng.integers(2, 5))
    G = int(rng.choice([2, 3, 4, 6, 8]))
    pi_ref = rng.dirichlet(np.ones(K) * 1.5)
    pi_ref = np.maximum(pi_ref, 0.01); pi_ref = np.round(pi_ref / pi_ref.sum(), 6); pi_ref[-1] = round(1 - pi_ref[:-1].sum(), 6)
    if rng.random() < 0.75 and K >= 2:   # ties: fewer distinct levels than answers
        n_lev = int(rng.integers(1, K)) if K > 2 else 1
        if n_lev == 1 and K > 2 and rng.random() < 0.5: n_lev = 2
        levs = rng.choice(LEVELS, size=n_lev, replace=False)
        r = rng.choice(levs, size=K)
        r[:n_lev] = levs  # every level used
        rng.shuffle(r)
    else:
        r = rng.choice(LEVELS, size=K, replace=False)
    w = np.array([v[2] for v in VARIANTS], float)
    pl, est, _ = VARIANTS[int(rng.choice(len(VARIANTS), p=w / w.sum()))]
    lc = vc = None
    if est != "k3_ratio" and rng.random() < 0.15:
        lc, vc = [(20.0, 10.0), (None, 10.0), (20.0, 1.0)][int(rng.integers(3))]
    beta = float(np.round(np.exp(rng.uniform(np.log(1e-2), np.log(3))), 6))
    norm = str(rng.choice(["scale", "shift"]))
    ddof = int(rng.integers(0, 2))
    eps = float(rng.choice([0.0, 1e-6, 1e-4, 1e-2]))
    return Spec(tuple(float(x) for x in pi_ref), tuple(float(x) for x in r), G, beta, pl, est, norm, ddof, eps, lc, vc)

def make_focus_case(rng):
    K = int(rng.integers(3, 5))
    G = int(rng.choice([2, 3, 4, 6, 8]))
    pi_ref = rng.dirichlet(np.ones(K) * 1.5)
    pi_ref = np.maximum(pi_ref, 0.01); pi_ref = np.round(pi_ref / pi_ref.sum(), 6); pi_ref[-1] = round(1 - pi_ref[:-1].sum(), 6)
    n_lev = int(rng.integers(1, K))
    levs = rng.choice(LEVELS, size=n_lev, replace=False)
    r = rng.choice(levs, size=K); r[:n_lev] = levs; rng.shuffle(r)
    if len(set(r.tolist())) == K: r[1] = r[0]
    pl = str(rng.choice(["reward", "advantage"])); est = str(rng.choice(["k1", "k2", "k3"]))
    lc = vc = None
    if rng.random() < 0.15:
        lc, vc = [(20.0, 10.0), (None, 10.0), (20.0, 1.0)][int(rng.integers(3))]
    beta = float(np.round(np.exp(rng.uniform(np.log(1e-2), np.log(3))), 6))
    return Spec(tuple(float(x) for x in pi_ref), tuple(float(x) for x in r), G, beta, pl, est,
                str(rng.choice(["scale", "shift"])), int(rng.integers(0, 2)), float(rng.choice([1e-6, 1e-4, 1e-2, 0.0])), lc, vc)

def my_kkt_at(sp, pi_lib):
    """My fitness at the library's point: drift on its support and the largest outward-violation off it."""
    f = Field(sp)
    pi = np.asarray(pi_lib, float)
    logpi = np.where(pi > 0, np.log(np.maximum(pi, 1e-320)), -800.0)
    logpi = logpi - np.logaddexp.reduce(logpi)
    h = f.fitness(logpi)
    supp = pi > 1e-12
    Eh = float((pi * h).sum())
    drift = float(np.abs(pi * (h - Eh)).max())
    rel = np.where(supp, 0.0, h - Eh)
    return {"my_drift_at_lib": drift, "my_outward_violation": float(rel.max()) if (~supp).any() else None,
            "my_h_minus_Eh": (h - Eh).tolist()}

def projected(ck):
    """Drop masses that keep falling (p10 < 0.5 p8, and < 1e-3), renormalise: the face limit."""
    p6, p8, p10 = (np.array(ck[k]) for k in ("1e6", "1e8", "1e10"))
    fall = (p10 < 1e-3) & (p10 < 0.5 * p8) & (p8 <= p6)
    q8 = np.where(fall, 0, p8); q10 = np.where(fall, 0, p10)
    return q8 / q8.sum(), q10 / q10.sum(), fall

def run_case(seed, idx):
    sp = make_case(seed, idx)
    rec = {"seed": seed, "idx": idx, "spec": sp.__dict__}
    fl = integrate(sp)
    rec["flow"] = {k: v for k, v in fl.items() if not k.startswith("theta")}
    if fl["status"] == "ok":
        q8, q10, fall = projected(fl["checkpoints"])
        rec["flow"]["proj_end"] = q10.tolist()
        rec["flow"]["proj_move"] = float(np.abs(q10 - q8).max())
        rec["flow"]["falling_proj"] = [int(i) for i in np.where(fall)[0]]
    lib = call_library(sp)
    rec["lib"] = lib
    if lib["status"] == "ok":
        rec["kkt"] = my_kkt_at(sp, lib["pi"])
    rec["outcome"] = outcome(rec)
    return rec

def outcome(rec):
    fl, lib = rec["flow"], rec["lib"]
    if lib["status"] == "crash": return "crash"
    if lib["status"] == "timeout": return "lib-timeout"
    if fl["status"] != "ok": return "flow-budget"
    end = np.array(fl["end"]); pend = np.array(fl["proj_end"])
    pl = np.array(lib["pi"])
    d = float(min(np.abs(pl - end).max(), np.abs(pl - pend).max()))
    rec["dist"] = d
    settled = fl["kind"] in ("point", "face") or fl["proj_move"] < 1e-6
    if lib["converged"]:
        if d > 1e-3:
            return "WRONG END" if settled else "WRONG END (flow still moving)"
        return "agree" if settled else "agree (flow still moving)"
    else:
        return "flagged (flow clean point)" if settled else "flagged (flow moving)"

if __name__ == "__main__":
    warnings.simplefilter("ignore")
    seed, a, b, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(out, "a") as fh:
        for i in range(a, b):
            t = time.time()
            try:
                rec = run_case(seed, i)
            except Exception as e:
                import traceback
                rec = {"seed": seed, "idx": i, "outcome": "checker-error", "error": traceback.format_exc()[-1500:]}
            rec["wall"] = time.time() - t
            fh.write(json.dumps(rec) + "\n"); fh.flush()
            print(i, rec["outcome"], round(rec.get("dist", -1), 4), round(rec["wall"], 1), flush=True)
