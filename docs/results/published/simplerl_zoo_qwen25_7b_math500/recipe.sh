#!/bin/bash
# SimpleRL-Zoo, Qwen-2.5-7B (hkust-nlp/simpleRL-reason README and train_grpo_math_tune_ray.sh):
# the overrides that set the objective, restated for `grpo-theory predict --framework verl`.
python3 -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo \
  data.train_batch_size=1024 \
  actor_rollout_ref.actor.optim.lr=5e-7 \
  actor_rollout_ref.actor.ppo_mini_batch_size=256 \
  actor_rollout_ref.actor.use_kl_loss=True \
  actor_rollout_ref.actor.kl_loss_coef=0.0001 \
  actor_rollout_ref.actor.kl_loss_type=low_var_kl \
  actor_rollout_ref.actor.entropy_coeff=0.001 \
  actor_rollout_ref.actor.clip_ratio=0.2 \
  actor_rollout_ref.rollout.temperature=1.0 \
  actor_rollout_ref.rollout.n=8 \
  algorithm.kl_ctrl.kl_coef=0.001
