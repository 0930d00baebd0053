"""Fingerprints of short training runs, a hash of the final parameters each: 6 steps of GRPOTrainer (the small
GPT) for seven objectives (KL placements, sequence and token level, the GRPO family), and 6 steps of the free
study's GRPO step (``studies.free``, the loss on sampled answers) on a tabular stub policy for both penalties.
Run it under two checkouts to check a refactoring leaves training bit-identical:

    PYTHONPATH=/path/to/other/checkout python benchmarks/trainer_fingerprint.py
    PYTHONPATH=. python benchmarks/trainer_fingerprint.py
"""

from __future__ import annotations

import copy
import hashlib
import sys
from types import SimpleNamespace

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


class _TabularLM:
    """The free study's backend interface on a (P, 3) table of logits: the right answer and two wrong ones."""

    def __init__(self, p):
        p = torch.tensor(p)
        self.ref = torch.log(torch.stack([p, (1 - p) / 2, (1 - p) / 2], 1))
        self.theta = torch.nn.Parameter(self.ref.clone())

    def sample(self, q, n, generator):
        with torch.no_grad():
            idx = torch.multinomial(torch.softmax(self.theta[q], -1), n, replacement=True, generator=generator)
        return SimpleNamespace(tokens=idx[:, None], q=q, text=[["7", "wrong", "8"][i] for i in idx.tolist()])

    def logp(self, comps, reference=False):
        logits = self.ref if reference else self.theta
        lp = torch.stack([torch.log_softmax(logits[c.q], -1)[c.tokens] for c in comps])
        return lp, torch.ones_like(lp)


from grpo_theory.studies import free  # noqa: E402

for i, penalty in enumerate(("reverse", "direct"), start=len(objs)):
    lm = _TabularLM([0.1, 0.4, 0.8])
    spec = free.JobSpec(beta=0.5, seed=i, group_size=4, penalty=penalty)
    opt = torch.optim.Adam([lm.theta], lr=0.05)
    gen = torch.Generator().manual_seed(i)
    for _ in range(6):
        free._grpo_step(lm, opt, spec, ["7"] * 3, ["7"] * 3, gen)
    print(i, hashlib.sha256(lm.theta.detach().numpy().tobytes()).hexdigest()[:16])
