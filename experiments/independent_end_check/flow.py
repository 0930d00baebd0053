"""Full-space on-policy flow d theta/dt = grad J (field.Field) from theta = log pi_ref (mean removed),
integrated with LSODA, on [0, 1] in t and then in log-time s = ln t up to t = 1e8 and t = 1e10."""
from __future__ import annotations

import time

import numpy as np
from scipy.integrate import solve_ivp

from field import Field, Spec


class Budget(Exception):
    pass


def softmax(theta):
    z = theta - theta.max()
    e = np.exp(z)
    return e / e.sum()


def integrate(spec: Spec, *, max_nfev: int = 150_000, max_wall: float = 40.0, method: str = "LSODA",
              rtol: float = 1e-9, atol: float = 1e-11):
    f = Field(spec)
    t_start = time.process_time()

    def guard():
        if f.nfev > max_nfev or time.process_time() - t_start > max_wall:
            raise Budget(f"nfev={f.nfev} cpu={time.process_time() - t_start:.1f}s")

    def rhs_t(t, th):
        guard()
        return f.grad(th)

    def rhs_s(s, th):
        guard()
        return np.exp(s) * f.grad(th)

    th0 = np.log(np.asarray(spec.pi_ref, float))
    th0 = th0 - th0.mean()
    out = {"checkpoints": {}}
    try:
        sol = solve_ivp(rhs_t, (0.0, 1.0), th0, method=method, rtol=rtol, atol=atol)
        if not sol.success:
            raise Budget("t-phase: " + sol.message)
        th = sol.y[:, -1]
        marks = [2.0, 4.0, 6.0, 8.0, 10.0]
        s_prev = 0.0
        for m in marks:
            sol = solve_ivp(rhs_s, (s_prev, m * np.log(10)), th, method=method, rtol=rtol, atol=atol)
            if not sol.success:
                raise Budget(f"s-phase to 1e{m:g}: " + sol.message)
            th = sol.y[:, -1]
            s_prev = m * np.log(10)
            out["checkpoints"][f"1e{m:g}"] = softmax(th).tolist()
            out["theta_1e%g" % m] = th.tolist()
        out["status"] = "ok"
    except Budget as e:
        out["status"] = "budget"
        out["why"] = str(e)
    out["nfev"] = f.nfev
    out["cpu"] = time.process_time() - t_start
    if out["status"] == "ok":
        out.update(classify(out, f))
    return out


def classify(out, f):
    p8 = np.array(out["checkpoints"]["1e8"])
    p10 = np.array(out["checkpoints"]["1e10"])
    move = float(np.abs(p10 - p8).max())
    th10 = np.array(out["theta_1e10"])
    g10 = f.grad(th10)
    # drift in pi at the end (per unit log-time): d pi/d ln t = t * J_softmax grad
    pi = p10
    dpi = 1e10 * pi * (g10 - (pi * g10).sum())
    small = [int(i) for i in np.where(p10 < 1e-6)[0]]
    falling = [i for i in small if p10[i] <= p8[i]]
    if move < 1e-6:
        kind = "face" if small else "point"
    elif move < 1e-4:
        kind = "slow"
    else:
        kind = "moving"
    return {"end": p10.tolist(), "move_1e8_1e10": move, "kind": kind, "small": small, "falling": falling,
            "dpi_dlnt_end": float(np.abs(dpi).max())}
