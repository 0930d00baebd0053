"""Predict a real run: from a base model's samples and a trainer config to per-prompt outcomes.

* :func:`read_samples` reads the base model's samples (per-sample rows, counts, or reward-level counts;
  CSV or JSONL), checking every row;
* :func:`predict` gives each prompt's stationary P(correct) (for graded rewards: the distribution over
  reward levels) with the uncertainty of ``p_ref`` carried through, pass@k before and after, the KL to the
  reference, flags (bistable, collapse, below a clamp's critical beta, slow) and, on a given or fitted
  clock, the finite-time flow ``p_x(t)``;
* :func:`predict_finite` (and :func:`predict` with ``measured=``) predicts a *finite* run with shared weights:
  every prompt's logit moves by ``dz_i/dt = sum_j K_ij h_j(z_j)`` on one clock (:mod:`.coupled`), the clock
  and the kernel's ``rho`` fitted to counts measured on some prompts (:mod:`.calibrate`), with predictive
  intervals and held-out scores against the baselines (:mod:`.scoring`);
* :meth:`Prediction.write` writes a CSV, a JSON summary and the figures. ``grpo-theory predict`` does all three.

See docs/predict.md.
"""

from .calibrate import Fit, fit_flow, fit_flows, fit_shift, predictive_interval
from .clock import FlowTable, fit_clock, flow_table
from .coupled import CoupledTrajectory, solve_kernel, solve_rho
from .field import PromptField
from .finite import FinitePrediction, predict_finite
from .scoring import sampling_floor, score_table
from .core import Prediction, objective_for, predict, reward_kl_tradeoff
from .intervals import binomial_interval, pass_at_k, unbiased_pass_at_k
from .response import P_FLOOR, Response, binary_question, zero_limit
from .samples import PredictWarning, SampleTable, read_samples, samples_from_counts

__all__ = ["predict", "Prediction", "read_samples", "samples_from_counts", "SampleTable", "PredictWarning",
           "binomial_interval", "pass_at_k", "unbiased_pass_at_k", "FlowTable", "flow_table", "fit_clock",
           "Response", "binary_question", "zero_limit", "P_FLOOR", "objective_for", "reward_kl_tradeoff", "predict_finite",
           "FinitePrediction", "PromptField", "solve_rho", "solve_kernel", "CoupledTrajectory", "fit_flow", "fit_flows",
           "fit_shift", "Fit", "predictive_interval", "score_table", "sampling_floor"]
