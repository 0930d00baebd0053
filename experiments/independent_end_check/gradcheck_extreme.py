import numpy as np, torch
torch.set_num_threads(1)
from field import Spec, Field, grad_torch
rng = np.random.default_rng(7); worst = 0
for i in range(120):
    K = int(rng.integers(2,5)); G = int(rng.choice([2,3,4,6]))
    pr = rng.dirichlet(np.ones(K)); pr = np.maximum(pr,.02); pr/=pr.sum()
    pl = rng.choice(["reward","advantage","loss"]); est = str(rng.choice(["k1","k2","k3"]))
    sp = Spec(tuple(pr), tuple(rng.choice([0,.5,1],K)), G, 0.7, pl, est, str(rng.choice(["scale","shift"])), int(rng.integers(2)), float(rng.choice([0,1e-4])))
    th = np.log(pr) + rng.normal(0, 0.5, K); th[rng.integers(K)] -= rng.uniform(20, 60)   # one vanishing answer, rho up to e^60
    g1 = Field(sp).grad(th); g2 = grad_torch(sp, th)
    e = np.abs(g1-g2).max()/max(1, np.abs(g2).max()); worst = max(worst, e)
    if e > 1e-9: print("MISMATCH", sp, g1, g2)
print("extreme theta: max rel |numpy-autograd| =", worst)
