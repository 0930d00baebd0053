"""Training side (needs torch): a small GPT, tasks, a GRPO trainer, measurement of pi_theta.

Importing :mod:`grpo_theory` never imports this package.
"""

from .loss import group_advantages, grpo_objective
from .model import GPTConfig, TinyGPT
from .policy import answer_logprobs, answer_token_logprobs, generate
from .reference import pretrain_reference
from .tasks import QATask, sample_corpus, synthetic_binary_task
from .trainer import GRPOConfig, GRPOTrainer, TrainerConfig, TrainResult, answer_probabilities

__all__ = ["GPTConfig", "TinyGPT", "QATask", "synthetic_binary_task", "sample_corpus", "pretrain_reference",
           "answer_logprobs", "answer_token_logprobs", "generate", "group_advantages", "grpo_objective",
           "TrainerConfig", "GRPOConfig", "GRPOTrainer", "TrainResult", "answer_probabilities"]
