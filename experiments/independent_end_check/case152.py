import numpy as np
from scipy.optimize import brentq
from field import Spec, Field
sp = Spec((0.041315, 0.176775, 0.78191),(0.0,0.75,0.5),3,0.77256,"advantage","k3","shift",1,1e-4)
f = Field(sp)
def rel_drift(x, drop_pull=False):
    th = np.array([-1e4, np.log(x), np.log(1-x)])
    g = f.grad(th)
    if drop_pull:  # remove the vanished answer's persistent pull  -beta*pi_ref0*(e0 - pi)
        pi = np.array([0, x, 1-x]); g = g + sp.beta*sp.pi_ref[0]*(np.array([1,0,0]) - pi)
    return g[1] - g[2]
for dp in (False, True):
    xs = np.linspace(0.05, 0.95, 181); v = [rel_drift(x, dp) for x in xs]
    roots = [brentq(rel_drift, xs[i], xs[i+1], args=(dp,)) for i in range(len(xs)-1) if np.sign(v[i]) != np.sign(v[i+1])]
    print("drop persistent pull" if dp else "exact field", "face roots pi1 =", np.round(roots, 6))
th = np.array([-1e4, np.log(0.395104), np.log(0.604896)]); print("my grad at lib point", f.grad(th))
