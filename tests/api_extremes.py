"""Every covered public callable at EXTREME valid values (tests/api_contract.py gives the calls): each count-like
integer argument of the valid call at 0, 1, 10**6 and 10**12; each positive real at 5e-324, 1e-300, 1e300 and
1.7e308; each ``(lo, hi)`` pair (two arguments ``lo``/``hi``, ``x_lo``/``x_hi``, ..., or a 2-tuple of increasing
numbers) reversed. A call passes when it returns a result or raises InvalidInputError, ExactEvaluationTooLarge or
NoStationaryPolicy; a MemoryError (under a 3 GiB address-space cap), more than :data:`CPU_S` seconds of CPU, a NumPy
RuntimeWarning reaching the caller or any other exception is a finding (a misleading message is judged as in
api_contract: the message must name the argument or show the value).

Run: ``python tests/api_extremes.py [--csv PATH] [--keys FILE] [--only SUBSTRING] [--cpu-s 60]``.
"""

from __future__ import annotations

import inspect
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import api_contract as ac  # noqa: E402

#: CPU seconds a call may take before it counts as a hang.
CPU_S = 60.0
COUNTS = (("0", 0), ("1", 1), ("10**6", 10**6), ("10**12", 10**12))
REALS = (("5e-324", 5e-324), ("1e-300", 1e-300), ("1e300", 1e300), ("1.7e308", 1.7e308))
PAIRS = (("lo", "hi"), ("low", "high"), ("t_lo", "t_hi"), ("x_lo", "x_hi"), ("z_lo", "z_hi"), ("a", "b"),
         ("t_min", "t_max"))


def variants(kwargs: dict, fn) -> list:
    """``(arg, label, new_kwargs)`` for each extreme valid value of the call ``kwargs``."""
    sig = inspect.signature(fn)
    given = {n: kwargs.get(n, p.default) for n, p in sig.parameters.items()
             if n not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    out = []
    for name, v in given.items():
        if isinstance(v, (bool, np.bool_)) or v is inspect.Parameter.empty:
            continue
        if isinstance(v, (int, np.integer)) and v >= 0:
            out += [(name, lab, {**kwargs, name: x}) for lab, x in COUNTS if x != v]
        elif isinstance(v, (float, np.floating)) and math.isfinite(v) and v > 0:
            out += [(name, lab, {**kwargs, name: x}) for lab, x in REALS]
        elif isinstance(v, tuple) and len(v) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                          for x in v) and v[0] < v[1]:
            out.append((name, "reversed", {**kwargs, name: (v[1], v[0])}))
    for lo, hi in PAIRS:
        a, b = given.get(lo), given.get(hi)
        try:
            ok = a is not None and b is not None and np.all(np.asarray(a, dtype=float) < np.asarray(b, dtype=float))
        except (TypeError, ValueError):
            ok = False
        if ok:
            out.append((f"{lo},{hi}", "reversed", {**kwargs, lo: b, hi: a}))
    return out


def main(argv=None) -> int:
    import argparse
    import collections
    import csv
    import os
    import tempfile
    import time

    import api_contract_calls as calls

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--keys", default=None)
    ap.add_argument("--cpu-s", type=float, default=CPU_S)
    a = ap.parse_args(argv)
    fns = ac.public_callables()
    keys = set(Path(a.keys).read_text().split()) if a.keys else None
    os.chdir(tempfile.mkdtemp(prefix="api_extremes_"))
    rows, counts, t0 = [], collections.Counter(), time.time()
    for key in sorted(calls.VALID):
        if (keys is not None and key not in keys) or (a.only and a.only not in key):
            continue
        for arg, label, kwargs in variants(calls.VALID[key](), fns[key]):
            t = time.process_time()
            res = ac.run_call(key, fns[key], kwargs, arg=arg.split(",")[0], label=label, valid_nan=True,
                              aliases=(*calls.ALIASES.get((key, arg), ()), *arg.split(",")), cpu_s=a.cpu_s)
            counts[res["cls"]] += 1
            rows.append(dict(key=key, arg=arg, value=label, cls=res["cls"], cpu_s=round(time.process_time() - t, 3),
                             detail=res["detail"]))
            if res["cls"] != "ok":
                print(f"{res['cls']:10s} {key} {arg}={label}: {res['detail'][:160]}", flush=True)
    print(f"{len(rows)} calls, {time.time() - t0:.0f} s: {dict(counts)}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
