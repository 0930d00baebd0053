"""Predict a real run: from a base model's samples and a trainer config to per-prompt outcomes.

* :func:`read_samples` reads the base model's samples (per-sample rows, counts, or reward-level counts;
  CSV or JSONL), checking every row;
* :func:`predict` gives each prompt's stationary P(correct) (for graded rewards: the distribution over
  reward levels) with the uncertainty of ``p_ref`` carried through, pass@k before and after, the KL to the
  reference, flags (bistable, collapse, below a clamp's critical beta, slow) and, on a given or fitted
  clock, the finite-time flow ``p_x(t)``;
* :meth:`Prediction.write` writes a CSV, a JSON summary and the figures. ``grpo-theory predict`` does all three.

See docs/predict.md.
"""

from .clock import FlowTable, fit_clock, flow_table
from .core import Prediction, objective_for, predict, reward_kl_tradeoff
from .intervals import binomial_interval, pass_at_k, unbiased_pass_at_k
from .response import P_FLOOR, Response, binary_question
from .samples import PredictWarning, SampleTable, read_samples, samples_from_counts

__all__ = ["predict", "Prediction", "read_samples", "samples_from_counts", "SampleTable", "PredictWarning",
           "binomial_interval", "pass_at_k", "unbiased_pass_at_k", "FlowTable", "flow_table", "fit_clock",
           "Response", "binary_question", "P_FLOOR", "objective_for", "reward_kl_tradeoff"]
