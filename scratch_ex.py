import time, numpy as np
from grpo_theory import Question, Objective, stationary_policy, stationary_points
from grpo_theory.solvers.full_space import full_space_flow
EX = [
 (Question([0.048143, 0.681806, 0.270051], rewards=[0.4,1,1]), Objective(beta=1.30067, group_size=2, normalization="shift", std_eps=1e-6, kl_estimator="k3", kl_placement="reward")),
 (Question([0.048143, 0.681806, 0.270051], rewards=[0.4,1,1]), Objective(beta=1.30067, group_size=2, normalization="shift", std_eps=1e-6, kl_estimator="k2", kl_placement="reward")),
 (Question([0.201547, 0.460425, 0.338028], rewards=[1,0,0.25]), Objective(beta=0.0201367, group_size=3, normalization="shift", kl_estimator="k3", kl_placement="reward")),
 (Question([0.736668, 0.215437, 0.047895], rewards=[0.75,0.75,0.25]), Objective(beta=0.124719, group_size=2, normalization="shift", std_ddof=1, kl_estimator="k1", kl_placement="loss")),
 (Question([0.365354, 0.614997, 0.019649], rewards=[0,0,1]), Objective(beta=1.35781, group_size=5, normalization="scale", std_eps=1e-4, kl_estimator="k3", kl_placement="reward", kl_log_ratio_clamp=20, kl_value_clamp=1)),
]
for q, o in EX:
    t=time.time(); p = stationary_policy(q, o); dt=time.time()-t
    print(np.round(p.pi,6), p.converged, p.stable, p.boundary, f"{dt:.2f}s", p.method)
    print("   ", p.message[:300])
    for T in (1e4, 1e6):
        print("    flow", T, np.round(full_space_flow(q, o, t_max=T),6))
