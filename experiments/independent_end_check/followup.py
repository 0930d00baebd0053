"""Flow-budget cases. (a) LSODA gave up mid-way: rerun the same objective with BDF.
(b) discontinuous fields (KL in the reward, std scaling, eps = 0): follow the regularised objective's flow
(eps = 1e-4, 1e-6, 1e-8) with BDF and see whether its end converges as eps -> 0."""
import json, glob, sys, warnings
import numpy as np
from dataclasses import replace
from field import Spec
from flow import integrate
warnings.simplefilter("ignore")
pattern = sys.argv[1]; out_path = sys.argv[2]
recs = [json.loads(l) for f in sorted(glob.glob(pattern)) for l in open(f)]
with open(out_path, "a") as fh:
    for r in recs:
        if r["outcome"] not in ("flow-budget", "lib-timeout"): continue
        if len(sys.argv) > 3 and r["idx"] < int(sys.argv[3]): continue
        sp = Spec(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in r["spec"].items()})
        out = {"idx": r["idx"], "seed": r["seed"], "lib_pi": r["lib"].get("pi"), "lib_converged": r["lib"].get("converged")}
        runs = [("same-BDF", sp)] if sp.eps > 0 else [(f"eps={e:g}-BDF", replace(sp, eps=e)) for e in (1e-4, 1e-6, 1e-8)]
        for name, s2 in runs:
            try:
                fl = integrate(s2, method="BDF", max_nfev=200_000, max_wall=15.0)
            except Exception as e:
                fl = {"status": "error", "why": repr(e)[:200], "checkpoints": {}, "nfev": -1}
            out[name] = {"status": fl["status"], "why": fl.get("why"), "end": fl.get("end"), "kind": fl.get("kind"),
                         "move": fl.get("move_1e8_1e10"), "ck": fl.get("checkpoints"), "nfev": fl["nfev"]}
            lib = r["lib"].get("pi")
            last = list(fl["checkpoints"].values())[-1] if fl["checkpoints"] else None
            d = float(np.abs(np.array(last) - np.array(lib)).max()) if (last and lib) else None
            out[name]["dist_last_to_lib"] = d
            print(r["seed"], r["idx"], name, fl["status"], list(fl["checkpoints"])[-1:] , np.round(last, 5).tolist() if last else None, fl.get("kind"), "dist-to-lib", d, flush=True)
        fh.write(json.dumps(out) + "\n"); fh.flush()
