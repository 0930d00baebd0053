"""Fingerprints of short training runs: 6 steps of GRPOTrainer for seven objectives (KL placements, token level,
the GRPO family), a hash of the final parameters each. Run it under two checkouts to check a refactoring leaves
training bit-identical:

    PYTHONPATH=/path/to/other/checkout python benchmarks/trainer_fingerprint.py
    PYTHONPATH=. python benchmarks/trainer_fingerprint.py
"""

from __future__ import annotations

import copy
import hashlib
import sys

import torch

import grpo_theory
from grpo_theory import Objective
from grpo_theory.training import GRPOConfig, GRPOTrainer
from grpo_theory.training.reference import pretrain_reference
from grpo_theory.training.tasks import synthetic_binary_task, synthetic_tree_task

torch.set_num_threads(1)
print(grpo_theory.__file__, file=sys.stderr)
task, freqs = synthetic_binary_task(4, 2, seed=2)
ref = pretrain_reference(task, freqs, steps=30, progress=False, seed=2)
tree, tfreqs = synthetic_tree_task("long", 3, seed=0)
tref = pretrain_reference(tree, tfreqs, steps=30, progress=False, seed=0)
objs = [Objective(group_size=4, beta=0.5),
        Objective(group_size=4, beta=0.5, penalty="direct", level="token", loss_type="dapo", groups_per_batch=2),
        Objective(group_size=4, beta=0.3, kl_estimator="k3", kl_placement="reward", kl_log_ratio_clamp=20, kl_value_clamp=10),
        Objective(group_size=4, beta=0.3, kl_estimator="k1", kl_placement="advantage", normalization="shift", level="token", loss_type="grpo"),
        Objective(group_size=4, beta=0.2, advantage="rloo", filter_ties=True, entropy_coef=0.05, level="token"),
        Objective(group_size=4, beta=0.2, advantage="reinforce_pp", importance_level="sequence", kl_estimator="k3_ratio", level="token", loss_type="bnpo"),
        Objective(group_size=4, beta=0.2, advantage="pass_at_k", pass_k=2, kl_estimator="k3_plus")]
for i, obj in enumerate(objs):
    t, r = (tree, tref) if i == 1 else (task, ref)
    cfg = GRPOConfig(objective=obj, steps=6, groups_per_question=4, seed=i, inner_updates=2 if i == 5 else 1)
    m = copy.deepcopy(r)
    GRPOTrainer(m, t, cfg, reference=r, progress=False).train()
    h = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in m.parameters())).hexdigest()[:16]
    print(i, h)
