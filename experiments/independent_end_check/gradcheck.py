import numpy as np, torch, sys, time
torch.set_num_threads(1)
from field import Spec, Field, grad_torch, fd_torch
rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv)>1 else 0)
n = int(sys.argv[2]) if len(sys.argv)>2 else 60
worst_ad = worst_fd = 0
t0=time.time()
for i in range(n):
    K = rng.integers(2,5); G = int(rng.choice([2,3,4,6,8] if K<4 else [2,3,4,6]))
    pi_ref = rng.dirichlet(np.ones(K)); pi_ref = np.maximum(pi_ref, 0.02); pi_ref/=pi_ref.sum()
    levels = rng.choice([0,0.25,0.5,0.75,1.0], size=K); 
    pl = rng.choice(["loss","reward","advantage"]); est = rng.choice(["k1","k2","k3"] + (["k3_ratio"] if pl=="loss" else []))
    lc = vc = None
    if rng.random()<0.3 and est!="k3_ratio": lc, vc = 1.0, 0.5   # small clamps so they are active
    sp = Spec(tuple(pi_ref), tuple(levels), G, float(np.exp(rng.uniform(np.log(1e-2), np.log(3)))), pl, est,
              str(rng.choice(["scale","shift"])), int(rng.integers(0,2)), float(rng.choice([0,1e-6,1e-4,1e-2])), lc, vc)
    theta = np.log(pi_ref) + rng.normal(0, 1.0, K)
    g1 = Field(sp).grad(theta); g2 = grad_torch(sp, theta); g3 = fd_torch(sp, theta)
    ea = np.abs(g1-g2).max(); ef = np.abs(g2-g3).max()
    worst_ad = max(worst_ad, ea); worst_fd = max(worst_fd, ef)
    if ea > 1e-12 or ef > 1e-6: print("MISMATCH", sp, theta, g1, g2, g3)
print(f"n={n} max|numpy-autograd|={worst_ad:.2e} max|autograd-FD|={worst_fd:.2e} time={time.time()-t0:.1f}s")
