"""Valid calls of the public API for :mod:`api_contract`, and what it skips and why.

``VALID[key]()`` returns the keyword arguments of one valid call of the callable ``key`` (``module:qualname``;
a method's instance under ``self``), a fresh object each time. Most are the callable's docstring example (the
arguments the example passes, recorded by running the doctest); the others are small calls written here.
``SKIPPED`` gives every public callable that has no entry its reason.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from grpo_theory import Objective, Question

inf = float("inf")


def _q2(p=0.3):
    return Question(pi_ref=[p, 1 - p], rewards=[1.0, 0.0])


def _q3():
    return Question(pi_ref=[0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])


def _tree_q():
    return Question(pi_ref=[0.25, 0.25, 0.5], rewards=[1.0, 0.0, 0.0], answers=[("A", "B"), ("A", "C"), ("D",)])


def _samples():
    from grpo_theory.predict import samples_from_counts

    return samples_from_counts([10, 4], [3, 0])


def _prediction():
    from grpo_theory.predict import predict, samples_from_counts

    return predict(samples_from_counts([20], [5]), Objective(beta=0.5), clock=0.1)


def _field():
    from grpo_theory.predict import PromptField

    return PromptField(Objective(beta=1.0), [0.25, 0.5])


def _report():
    from grpo_theory.convergence import check_trajectories

    steps = np.arange(1, 201)
    return check_trajectories(steps, 0.9 - 0.8 * np.exp(-steps / 20.0))


def _case(beta=1.0):
    from grpo_theory.sweep import Case

    return Case(f"beta={beta}", _q2(), Objective(beta=beta))


def _flow_table():
    from grpo_theory.predict import flow_table

    return flow_table([0.2, 0.5], Objective(beta=1.0), n_times=50)


def _trajectory_steps():
    steps = np.arange(1, 101)
    return steps, 0.9 - 0.8 * np.exp(-steps / 20.0)


_HISTORY = [{"step": s, "p_best_q0": 0.9 - 0.8 * np.exp(-s / 20.0)} for s in range(1, 101)]

VALID = {
    "grpo_theory.predict.core:Prediction.write": lambda: dict(self=_prediction(), out_dir="prediction_out",
                                                             plots=False),
    # ---- grpo_theory (the package's front door)
    "grpo_theory.problem:Objective": lambda: dict(beta=0.1, kl_estimator="k1", kl_placement="advantage"),
    "grpo_theory.problem:Objective.describe": lambda: dict(self=Objective(beta=0.5, group_size=8)),
    "grpo_theory._question:Question": lambda: dict(pi_ref=[0.1, 0.3, 0.6], rewards=[1, 0, 0], answers=["AB", "AC", "D"]),
    "grpo_theory._question:Question.pairwise_preference": lambda: dict(self=_q3()),
    "grpo_theory._question:Question.confidence_margin": lambda: dict(self=_q3(), a=0, b=2),
    "grpo_theory.solvers.collapse:clamp_critical_beta": lambda: dict(
        q=_q2(0.5), obj=Objective(beta=0.001, group_size=5, std_ddof=1, std_eps=1e-06, kl_estimator="k3",
                                  kl_log_ratio_clamp=20.0, kl_value_clamp=10.0)),
    "grpo_theory.solvers.baselines:log_pooling": lambda: dict(pi_ref=[0.2, 0.8], rewards=[1, 0], beta=0.5),
    "grpo_theory.solvers.baselines:nash_equilibrium": lambda: dict(q=_q2(0.2), beta=0.5),
    "grpo_theory.solvers.baselines:rlhf_optimum": lambda: dict(q=_q2(0.2), beta=0.5),
    "grpo_theory.solvers.baselines:nash_residual": lambda: dict(q=_q2(0.2), beta=0.5, pi=[0.5, 0.5]),
    "grpo_theory.monte_carlo:monte_carlo_preference": lambda: dict(q=_q2(0.2), obj=Objective(beta=1.0), pi=[0.2, 0.8],
                                                                 n_groups=400),
    "grpo_theory.preference:reward_preference": lambda: dict(q=_q2(0.2), obj=Objective(beta=1.0, group_size=inf),
                                                            pi=[0.2, 0.8]),
    "grpo_theory.solvers.gradient:stationarity_residual": lambda: dict(q=_q2(), obj=Objective(beta=1.0), pi=[0.3, 0.7]),
    "grpo_theory.solvers.search:stationary_points": lambda: dict(q=_q2(0.2), obj=Objective(beta=0.5), n_grid=201,
                                                                n_starts=4),
    "grpo_theory.solvers.search:stationary_policy": lambda: dict(q=_tree_q(), obj=Objective(beta=0.5)),
    # ---- advantage, preference
    "grpo_theory.advantage:changes_regulariser": lambda: dict(obj=Objective(beta=1.0, entropy_coef=0.1)),
    "grpo_theory.advantage:entropy_logit_bounds": lambda: dict(z_ref=-1.0, penalty_bounds=(-inf, inf), delta_max=2.0,
                                                              obj=Objective(beta=0.0, entropy_coef=0.5), cap=740.0),
    "grpo_theory.advantage:node_entropy_slope": lambda: dict(log_cond=np.log([0.5, 0.5]), node_weight=np.array([1.0, 1.0]),
                                                            obj=Objective(beta=0.0, entropy_coef=1.0)),
    "grpo_theory.advantage:regularisation_scale": lambda: dict(obj=Objective(beta=0.0, entropy_coef=0.2)),
    "grpo_theory.advantage:rloo_expectations": lambda: dict(v=np.array([0.0, 1.0]), log_w=np.log([[0.7, 0.3]]),
                                                           obj=Objective(beta=1.0, advantage="rloo")),
    "grpo_theory.advantage:reinforce_pp_expectations": lambda: dict(
        v=np.array([0.0, 1.0]), log_w=np.log([[0.7, 0.3]]), obj=Objective(beta=1.0, group_size=4,
                                                                          advantage="reinforce_pp")),
    "grpo_theory.advantage:pass_at_k_expectations": lambda: dict(
        v=np.array([0.0, 1.0]), log_w=np.log([[0.7, 0.3]]), obj=Objective(beta=1.0, group_size=4, advantage="pass_at_k",
                                                                          pass_k=2)),
    "grpo_theory.advantage:pass_at_k_bound": lambda: dict(span=1.0, obj=Objective(beta=1.0, group_size=4,
                                                                                 advantage="pass_at_k", pass_k=2)),
    "grpo_theory.advantage:pass_at_k_table": lambda: dict(n_pass=np.array([0, 1, 2, 3]), G=4, k=2),
    "grpo_theory.advantage:tie_free_probability": lambda: dict(R=np.array([[1.0, 0.0], [0.0, 1.0]]), log_w=np.log([[0.7, 0.3]]),
                                                              group_size=4),
    "grpo_theory.advantage_enumeration:signed_part": lambda: dict(a=np.array([-1.0, 0.5]), part="positive"),
    "grpo_theory.preference:level_expectations": lambda: dict(levels=np.array([0.0, 1.0]), log_w=np.log([0.8, 0.2]),
                                                             obj=Objective(beta=1.0)),
    "grpo_theory.preference:expectations_evaluator": lambda: dict(levels=np.array([0.0, 1.0]), obj=Objective(beta=1.0)),
    "grpo_theory.preference:max_abs_advantage": lambda: dict(n_levels_span=1.0, obj=Objective(beta=0.1, group_size=5)),
    "grpo_theory.preference:n_count_vectors": lambda: dict(group_size=64, n_levels=3),
    "grpo_theory.monte_carlo:sampled_advantages": lambda: dict(r=np.array([[1.0, 0.0], [1.0, 1.0]]), obj=Objective(beta=1.0)),
    "grpo_theory.preference:pooled_expectations": lambda: dict(q=_q3(), obj=Objective(beta=1.0, group_size=4),
                                                              log_w=np.log([[0.2, 0.3, 0.5]])),
    "grpo_theory.monte_carlo:sample_rewards": lambda: dict(q=_q3(), outputs=np.array([[0, 1], [2, 0]]),
                                                         rng=np.random.default_rng(0)),
    # ---- closed forms
    "grpo_theory.closed_form:binary_entropy": lambda: dict(pi_ref_a=0.3, beta=1e-12, entropy_coef=1.0, penalty="direct"),
    "grpo_theory.closed_form:binary_entropy_condition": lambda: dict(x=0.5, pi_ref_a=0.3, beta=0.5, entropy_coef=0.1),
    "grpo_theory.closed_form:binary_large_group": lambda: dict(pi_ref_a=[0.2, 0.5], beta=0.5),
    "grpo_theory.closed_form:binary_pairwise": lambda: dict(pi_ref_a=0.25, beta=0.5),
    "grpo_theory.closed_form:binary_pairwise_direct": lambda: dict(pi_ref_a=0.2, beta=0.5),
    "grpo_theory.closed_form:binary_pairwise_filtered": lambda: dict(pi_ref_a=0.05, beta=0.5),
    "grpo_theory.closed_form:binary_preference": lambda: dict(x=[0.2], group_size=8),
    "grpo_theory.closed_form:binary_rloo": lambda: dict(pi_ref_a=0.3, beta=0.5),
    "grpo_theory.closed_form:binary_shift_direct": lambda: dict(pi_ref_a=0.2, beta=0.5, group_size=2),
    "grpo_theory.closed_form:large_group_direct_h": lambda: dict(x=0.5, pi_ref_a=0.5, beta=1.0),
    "grpo_theory.closed_form:large_group_direct_turning_point": lambda: dict(beta=1.0),
    # ---- convergence
    "grpo_theory.convergence:check_trajectories": lambda: dict(zip(("steps", "values"), _trajectory_steps())),
    "grpo_theory.convergence:check_history": lambda: dict(history=[dict(h) for h in _HISTORY], n_prompts=1),
    "grpo_theory.convergence:largest_drop": lambda: dict(steps=[1, 2, 3, 4, 5], values=[0.2, 0.8, 0.4, 0.5, 0.7]),
    "grpo_theory.convergence:report_columns": lambda: dict(report=_report(), q=0),
    "grpo_theory.convergence:ConvergenceReport.columns": lambda: dict(self=_report(), q=0),
    "grpo_theory.convergence:ConvergenceReport.reason": lambda: dict(self=_report(), q=0),
    "grpo_theory.convergence:summarise_convergence": lambda: dict(errors=[0.01, 0.02], status=["converged", "converged"]),
    "grpo_theory.convergence:summary_columns": lambda: dict(table=pd.DataFrame(
        [{**__import__("grpo_theory.convergence", fromlist=["x"]).report_columns(_report(), 0), "question": 0,
          "error": 0.01}])),
    # ---- dynamics, proximal
    "grpo_theory.proximal:arcsin_potential": lambda: dict(p=[0.0, 0.5, 1.0]),
    "grpo_theory.dynamics:ascent": lambda: dict(q=_q2(), obj=Objective(beta=1.0), pi0=np.array([0.3, 0.7]), lr=0.5,
                                               steps=40, with_points=False),
    "grpo_theory.dynamics:basins": lambda: dict(q=_q2(0.2), obj=Objective(beta=1.0, group_size=inf, penalty="direct")),
    "grpo_theory.dynamics:flow": lambda: dict(q=_q2(0.2), obj=Objective(beta=1.0, group_size=inf, penalty="direct"),
                                             pi0=np.array([0.2, 0.8]), t=np.array([0.0, 20.0, 40.0]), with_points=False),
    "grpo_theory.dynamics:grpo_steps": lambda: dict(q=_q2(), obj=Objective(beta=1.0, group_size=4), pi0=[0.3, 0.7], lr=0.1,
                                                   n_batches=5, n_groups=8),
    "grpo_theory.proximal:map_fixed_points": lambda: dict(q=_q2(0.003), obj=Objective(beta=0.5, group_size=inf,
                                                                                       penalty="direct")),
    "grpo_theory.proximal:map_cycles": lambda: dict(q=_q2(0.003), obj=Objective(beta=0.5, group_size=inf, penalty="direct"),
                                                   n_grid=401),
    "grpo_theory.solvers.gradient:output_gradient": lambda: dict(q=_q2(), obj=Objective(beta=1.0), pi=[0.55, 0.45]),
    "grpo_theory.proximal:potential_objective": lambda: dict(q=_q2(0.2), obj=Objective(beta=1.0, group_size=inf),
                                                            pi=np.array([0.2, 0.8])),
    "grpo_theory.proximal:proximal_map": lambda: dict(q=_q2(), obj=Objective(beta=1.0)),
    # ---- integrations
    "grpo_theory.integrations.mapping:defaults_for": lambda: dict(
        table=[("0.1.0", {"beta": 0.04, "eps": 0.0001}, "a"), ("0.19.0", {"beta": 0.0}, "b")], version="0.20.1",
        framework="TRL"),
    "grpo_theory.integrations.mapping:explain": lambda: dict(
        mapping=__import__("grpo_theory.integrations.trl", fromlist=["x"]).read_trl_config({"beta": 0.5},
                                                                                          trl_version="0.19"),
        question=_q2(0.2)),
    "grpo_theory.integrations.mapping:parse_version": lambda: dict(v="2"),
    "grpo_theory.integrations.mapping:load_config_file": lambda: dict(framework="TRL", path=_config_file()),
    "grpo_theory.integrations.openrlhf:read_openrlhf_config": lambda: dict(
        args=["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "8", "--init_kl_coef", "0.1"]),
    "grpo_theory.integrations.trl:Probe": lambda: dict(prompt="Q0 ?", answers=("A", "B"), rewards=(1.0, 0.0)),
    "grpo_theory.integrations.trl:read_trl_config": lambda: dict(config={"beta": 0.04, "max_completion_length": 1},
                                                                trl_version="1.9.0"),
    "grpo_theory.integrations.verl:read_verl_config": lambda: dict(config={
        "algorithm": {"adv_estimator": "grpo"},
        "actor_rollout_ref": {"rollout": {"n": 5}, "actor": {"use_kl_loss": True, "kl_loss_coef": 0.1}}}),
    "grpo_theory.integrations.cmdline:detached_arguments": lambda: dict(
        commands=[(["python3", "-m", "verl.trainer.main_ppo", "a.b=1"], None), (["c.d=2"], None)], c=0),
    "grpo_theory.integrations.trl:as_trl_parser_reads": lambda: dict(values={"beta": "1e-3", "num_generations": "8"}),
    "grpo_theory.integrations.trl:load_config_as_read": lambda: dict(framework="TRL", path=_config_file()),
    "grpo_theory.integrations.mapping:unwrap_logged_config": lambda: dict(
        data={"wandb_version": 1, "beta": {"desc": None, "value": 0.04}}),
    "grpo_theory.integrations.cmdline:trainer_arguments": lambda: dict(
        text="accelerate launch --num_processes 2 train_grpo.py --beta 0.1\n", source="run.sh", hints=("grpo",)),
    "grpo_theory.integrations.cmdline:script_tokens": lambda: dict(text="python train.py --beta 0.1 --n 4\n",
                                                                  source="run.sh"),
    "grpo_theory.integrations.cmdline:hydra_overrides": lambda: dict(tokens=["algorithm.adv_estimator=grpo"],
                                                                    source="run.sh"),
    "grpo_theory.integrations.cmdline:argparse_flags": lambda: dict(tokens=["--beta", "0.1"], source="run.sh"),
    "grpo_theory.integrations.cmdline:looks_like_command": lambda: dict(text="python train.py --beta 0.1"),
    "grpo_theory.integrations.cmdline:check_set": lambda: dict(values={"rollout.n": "8", "data.path": "$HOME/d"},
                                                               read=["rollout.n"], source="run.sh"),
    # ---- kl
    **{f"grpo_theory.kl:{name}": (lambda: dict(obj=Objective(beta=1.0, kl_estimator="k3"),
                                               lr=np.array([-0.69, 0.0, 0.69])))
       for name in ("coefficient", "estimator_value", "flow_log_ratio", "value_slope", "value_shift")},
    "grpo_theory.kl:discontinuities": lambda: dict(obj=Objective(beta=0.1)),
    "grpo_theory.kl:effective_penalty": lambda: dict(estimator="k3", placement="loss", log_ratio_clamp=20, value_clamp=10),
    # ---- predict
    "grpo_theory.predict.samples:read_samples": lambda: dict(source=_samples_file()),
    "grpo_theory.predict.samples:samples_from_counts": lambda: dict(n=[10, 4], correct=[3, 0]),
    "grpo_theory.predict.samples:check_counts": lambda: dict(index=np.array([0, 1]), k=np.array([3, 0]),
                                                            m=np.array([10, 4]), N=2),
    "grpo_theory.predict.core:predict": lambda: dict(samples=_samples(), obj=Objective(beta=0.5)),
    "grpo_theory.predict.core:reward_kl_tradeoff": lambda: dict(samples=_samples(), obj=Objective(beta=0.5),
                                                               betas=[0.25, 1.0, 4.0]),
    "grpo_theory.predict.core:objective_for": lambda: dict(obj={"beta": 0.5, "group_size": 4}),
    "grpo_theory.predict.core:Prediction.curves": lambda: dict(self=_prediction(), ks=[1, 2]),
    "grpo_theory.predict.core:Prediction.pass_at": lambda: dict(self=_prediction(), k=4),
    "grpo_theory.predict.core:Prediction.at_step": lambda: dict(self=_prediction(), step=10.0),
    "grpo_theory.predict.intervals:binomial_interval": lambda: dict(correct=[0, 5], n=[100, 10]),
    "grpo_theory.predict.intervals:pass_at_k": lambda: dict(x=0.5, k=3),
    "grpo_theory.predict.intervals:unbiased_pass_at_k": lambda: dict(n=[4, 8], correct=[1, 1], k=8),
    "grpo_theory.predict.intervals:check_k": lambda: dict(k=[1, 8]),
    "grpo_theory.predict.response:binary_question": lambda: dict(p=0.25),
    "grpo_theory.predict.response:binary_rewards": lambda: dict(rewards=(1.0, -1.0)),
    "grpo_theory.predict.response:zero_limit": lambda: dict(obj=Objective(beta=0.25, group_size=2)),
    "grpo_theory.predict.response:Response": lambda: dict(obj=Objective(beta=1.0)),
    "grpo_theory.predict.response:Response.solve": lambda: dict(
        self=__import__("grpo_theory.predict", fromlist=["x"]).Response(Objective(beta=1.0)), p=0.25),
    "grpo_theory.predict.response:Response.wrong": lambda: dict(
        self=__import__("grpo_theory.predict", fromlist=["x"]).Response(Objective(beta=1.0)), ps=[0.25], xs=[0.5]),
    "grpo_theory.predict.clock:flow_table": lambda: dict(starts=[0.2, 0.5], obj=Objective(beta=1.0), n_times=50),
    "grpo_theory.predict.clock:FlowTable.at": lambda: dict(self=_flow_table(), p=[0.2, 0.5], t=1.0),
    "grpo_theory.predict.clock:fit_clock": lambda: dict(table=_flow_table(), p=[0.2, 0.5], step=100.0, mean_reward=0.5),
    "grpo_theory.predict.field:PromptField": lambda: dict(obj=Objective(beta=1.0), p=[0.25]),
    "grpo_theory.predict.field:PromptField.h": lambda: dict(self=_field(), z=np.array([0.0, 0.1])),
    "grpo_theory.predict.field:PromptField.dh": lambda: dict(self=_field(), z=np.array([0.0, 0.1])),
    "grpo_theory.predict.field:PromptField.with_p": lambda: dict(self=_field(), p=[0.3, 0.6]),
    "grpo_theory.predict.coupled:time_grid": lambda: dict(t_max=100.0, n=20),
    "grpo_theory.predict.coupled:check_kernel": lambda: dict(K=np.eye(2), n=2),
    "grpo_theory.predict.coupled:solve_rho": lambda: dict(field=_field(), rho=0.5, times=np.array([0.0, 1.0, 2.0])),
    "grpo_theory.predict.coupled:solve_kernel": lambda: dict(field=_field(), K=np.eye(2), times=np.array([0.0, 1.0, 2.0])),
    "grpo_theory.predict.coupled:shift_stationary": lambda: dict(field=_field()),
    "grpo_theory.predict.calibrate:clock_from_mean_reward": lambda: dict(
        times=np.array([0.0, 1.0, 2.0]), p_path=np.array([[0.2, 0.5], [0.4, 0.6], [0.6, 0.7]]), mean_reward=0.5),
    "grpo_theory.predict.calibrate:clock_band": lambda: dict(
        times=np.array([0.0, 1.0, 2.0]), p_path=np.array([[0.2, 0.5], [0.4, 0.6], [0.6, 0.7]]), t_lo=0.5, t_hi=1.5),
    "grpo_theory.predict.calibrate:start_logits": lambda: dict(n=[10, 4], correct=[3, 0]),
    "grpo_theory.predict.conformal:calibration_split": lambda: dict(size=10),
    "grpo_theory.predict.conformal:jeffreys_logit": lambda: dict(k=[3, 0], m=[10, 4]),
    "grpo_theory.predict.conformal:conformal_offsets": lambda: dict(p_pred=[0.3, 0.5, 0.7, 0.2], k=[3, 5, 7, 2],
                                                                   m=[10, 10, 10, 10]),
    "grpo_theory.predict.scoring:sampling_floor": lambda: dict(q=[0.5], m=[2]),
    "grpo_theory.predict.calibrate:fit_shift": lambda: dict(z0=[0.0, 0.5], k=[6, 7], m=[10, 10]),
    # ---- problem
    "grpo_theory.problem:as_objective": lambda: dict(obj={"beta": 0.5, "group_size": 8}),
    "grpo_theory._regularised:require_regularised": lambda: dict(obj=Objective(beta=0.5), query="stationary_policy"),
    "grpo_theory._question:as_question": lambda: dict(q=_q2()),
    "grpo_theory.problem:shaped_question": lambda: dict(q=_q2(0.5), shift=[0.25, 0.0]),
    # ---- solvers
    "grpo_theory.solvers.tree:AnswerTree.build": lambda: dict(answers=[("A", "B"), ("A", "C"), ("D",)]),
    "grpo_theory.solvers.classes:ClassProblem": lambda: dict(q=_q3(), obj=Objective(beta=0.5)),
    "grpo_theory.solvers.tree:TreeProblem": lambda: dict(q=_tree_q(), obj=Objective(beta=0.5, level="token")),
    "grpo_theory.solvers.token_weights:answer_weights": lambda: dict(
        q=Question(pi_ref=[0.5, 0.5], rewards=[1.0, 0.0], answers=[("A", "B"), ("C",)]),
        obj=Objective(beta=0.1, level="token"), pi=[0.5, 0.5]),
    "grpo_theory.solvers.token_weights:monte_carlo_answer_weights": lambda: dict(
        q=Question(pi_ref=[0.5, 0.5], rewards=[1.0, 0.0], answers=[("A", "B"), ("C",)]),
        obj=Objective(beta=0.1, level="token"), pi=[0.5, 0.5], n_samples=200),
    "grpo_theory.predict.graded:graded_solve_seconds": lambda: dict(n_levels=3, group_size=8),
    "grpo_theory.solvers.certify:certification_scope": lambda: dict(
        q=Question(pi_ref=[0.5, 0.5], reward_levels=[0.0, 1.0], reward_probs=[[0.1, 0.9], [0.6, 0.4]]),
        obj=Objective(beta=1.0)),
    "grpo_theory.solvers.certify:certified_stationary_points": lambda: dict(
        q=Question(pi_ref=[0.6, 0.2, 0.2], rewards=[1.0, 0.5, 0.0]),
        obj=Objective(beta=2.0, group_size=inf, penalty="direct"), max_boxes=2000),
    "grpo_theory.solvers.full_space:full_space_flow": lambda: dict(q=_q2(), obj=Objective(beta=1.0), t_max=100.0),
    "grpo_theory.solvers.full_space:full_space_stability": lambda: dict(q=_q2(), obj=Objective(beta=1.0), pi=[0.55, 0.45]),
    "grpo_theory.solvers.full_space:jump_repeller": lambda: dict(q=_q2(), obj=Objective(beta=1.0), pi=[0.55, 0.45]),
    "grpo_theory.solvers.full_space:logit_flow": lambda: dict(q=_q2(), obj=Objective(beta=1.0),
                                                             theta=np.array([-0.6, -0.8]), support=np.array([0, 1])),
    "grpo_theory.solvers.full_space:logit_newton_step": lambda: dict(q=_q2(), obj=Objective(beta=1.0), pi=[0.5, 0.5]),
    "grpo_theory.solvers.full_space:one_sided_repeller": lambda: dict(q=_q2(), obj=Objective(beta=1.0), pi=[0.55, 0.45]),
    "grpo_theory.solvers.full_space:perturbed_ends": lambda: dict(q=_q2(), obj=Objective(beta=1.0), pi=[0.55, 0.45],
                                                                 t_max=1e4),
    "grpo_theory.solvers.kinks:kink_answers": lambda: dict(
        q=Question(pi_ref=[0.3, 0.3, 0.4], rewards=[0.5, 1.0, 0.0]),
        obj=Objective(beta=0.4, group_size=8, normalization="shift", kl_estimator="abs"), pi=[0.3, 0.3, 0.4]),
    "grpo_theory.solvers.kinks:kink_slide": lambda: dict(
        q=Question(pi_ref=[0.3, 0.3, 0.4], rewards=[0.5, 1.0, 0.0]),
        obj=Objective(beta=0.4, group_size=8, normalization="shift", kl_estimator="abs"), pi=[0.3, 0.3, 0.4]),
    "grpo_theory.solvers.kinks:sliding_end": lambda: dict(
        q=Question(pi_ref=[0.3, 0.3, 0.4], rewards=[0.5, 1.0, 0.0]),
        obj=Objective(beta=0.4, group_size=inf, normalization="shift", kl_estimator="abs"),
        pi=[0.3, 0.3, 0.4], t_max=1e4),
    "grpo_theory.solvers.full_space_end:class_reduction_exact": lambda: dict(
        q=Question(pi_ref=[0.2, 0.3, 0.5], rewards=[1.0, 1.0, 0.0]),
        obj=Objective(beta=0.5, kl_estimator="k3", kl_placement="reward")),
    "grpo_theory.solvers.full_space_end:full_space_end": lambda: dict(
        q=Question(pi_ref=[0.2, 0.3, 0.5], rewards=[0.4, 1.0, 1.0]),
        obj=Objective(beta=1.3, normalization="shift", kl_estimator="k3", kl_placement="reward"), horizon=1e6),
    "grpo_theory.solvers.batch:stationary_policies": lambda: dict(questions=[_q2(), _q2(0.6)],
                                                                 objectives=[Objective(beta=1.0)] * 2),
    "grpo_theory.solvers.batch:stationary_policy_batch": lambda: dict(
        questions=[_q3(), _q3()], objectives=[Objective(beta=0.5, group_size=8), Objective(beta=2.0, group_size=8)]),
    "grpo_theory.solvers.search:token_level": lambda: dict(
        q=Question(pi_ref=[0.5, 0.5], rewards=[1.0, 0.0], answers=[("A", "B"), ("C",)]), obj=Objective(beta=0.1)),
    "grpo_theory.solvers.tree:tree_stationary_policy": lambda: dict(q=_tree_q(), obj=Objective(beta=0.5, level="token")),
    "grpo_theory.solvers.tree_search:tree_search": lambda: dict(
        q=_tree_q(), obj=Objective(beta=1.0, group_size=8, penalty="direct", level="token"), n_starts=2),
    "grpo_theory.solvers.tie_jump_end:has_tie_jumps": lambda: dict(
        obj=Objective(beta=1.0, group_size=8, kl_estimator="k1", kl_placement="reward")),
    "grpo_theory.solvers.work:count_vectors": lambda: dict(q=_q3(), obj=Objective(beta=0.5, group_size=8)),
    "grpo_theory.solvers.work:search_work_checked": lambda: dict(q=_q3(), obj=Objective(beta=0.5, group_size=8)),
    "grpo_theory.solvers.collapse:may_collapse": lambda: dict(obj=Objective(beta=1.0)),
    "grpo_theory.solvers.collapse:unbounded_preference": lambda: dict(obj=Objective(beta=1.0)),
    "grpo_theory.studies.free_prompts:choose_betas": lambda: dict(p_ref=[0.1, 0.3], candidates=(0.5, 2.0, 4.0)),
    "grpo_theory.studies.free_prompts:normalise": lambda: dict(text="The answer is 7"),
    "grpo_theory.studies.free_prompts:select_prompts": lambda: dict(correct=[0, 2, 8, 16, 24, 30, 32], n=32, n_keep=3),
    "grpo_theory.studies.free_scoring:fit_shift": lambda: dict(p_ref=[0.2, 0.5], measured=[0.5, 0.8]),
    "grpo_theory.studies.free_scoring:tail_rewards": lambda: dict(
        history=pd.DataFrame({"step": [1, 2, 3, 4], "p_best_q0": [0.0, 0.5, 0.25, 0.75]}), group_size=4),
    # ---- sweep
    "grpo_theory.sweep:Case": lambda: dict(key="a", question=_q2(), objective=Objective(beta=1.0)),
    "grpo_theory.sweep:cases_from_grid": lambda: dict(grid={"questions": [{"name": "q", "pi_ref": [0.3, 0.7],
                                                                           "rewards": [1, 0]}],
                                                            "objectives": {"beta": [0.5, 1.0], "group_size": "inf"}}),
    "grpo_theory.sweep:check_grid": lambda: dict(grid={"questions": [{"pi_ref": [0.3, 0.7], "rewards": [1, 0]}]}),
    "grpo_theory.sweep:grid_size": lambda: dict(grid={"questions": [{"pi_ref": [0.3, 0.7], "rewards": [1, 0]}],
                                                      "objectives": {"beta": [0.5, 1.0]}}),
    "grpo_theory.sweep:evaluate_case": lambda: dict(case=_case()),
    "grpo_theory.sweep:sweep": lambda: dict(cases=[_case(0.5), _case(1.0)], executor="serial", progress=False),
    # ---- symbolic
    "grpo_theory.symbolic:binary_finite_group_condition": lambda: dict(group_size=2),
    "grpo_theory.symbolic:derive_log_pooling": lambda: dict(n_outputs=2),
    "grpo_theory.symbolic:derive_entropy_binary": lambda: dict(penalty="reverse"),
    # ---- variants
    "grpo_theory.variants:lookup": lambda: dict(kind="advantage", name="rloo"),
    "grpo_theory.variants:names": lambda: dict(kind="advantage"),
    "grpo_theory.variants:entries": lambda: dict(kind="advantage"),
    "grpo_theory.variants:note_penalty": lambda: dict(name="reverse"),
}


def _config_file():
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp(prefix="api_contract_")) / "config.json"
    path.write_text('{"beta": 0.1}')
    return str(path)


def _samples_file():
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp(prefix="api_contract_")) / "s.csv"
    path.write_text("prompt_id,n,correct\na,10,3\nb,4,1\n")
    return path


#: ``(key, argument)`` pairs that take any object by design, and why.
ANY_VALUE: dict = {
    ("grpo_theory.sweep:Case", "key"): "a case's key is any label the user chooses (a row's name in the table)",
}
#: Arguments (by name, in any callable) that take any object by design.
ANY_VALUE_ARGS: dict = {}
#: ``(key, argument)`` pairs where NaN in the result is the answer by design for some values (documented, or NaN
#: in, NaN out of an elementwise helper the solvers call on trial points).
DOCUMENTED_NAN = {
    ("grpo_theory.predict.core:Prediction.pass_at", "k"): "unbiased pass@k is NaN where k > n (documented)",
    ("grpo_theory.predict.core:Prediction.curves", "ks"): "unbiased pass@k is NaN where k > n (documented)",
    ("grpo_theory.predict.intervals:unbiased_pass_at_k", "k"): "NaN where k > n (documented)",
    ("grpo_theory.advantage_enumeration:signed_part", "a"): "elementwise: a NaN entry (a solver's trial point) "
                                                             "gives NaN there",
    ("grpo_theory.advantage:node_entropy_slope", "log_cond"): "elementwise: a NaN entry gives NaN there",
    ("grpo_theory.advantage:node_entropy_slope", "node_weight"): "elementwise: a NaN entry gives NaN there",
    ("grpo_theory.predict.field:PromptField.h", "z"): "elementwise in z: a NaN logit (an integrator's trial point) gives "
                                                      "NaN there",
    ("grpo_theory.predict.field:PromptField.dh", "z"): "elementwise in z, as PromptField.h",
    ("grpo_theory.convergence:report_columns", "report"): "report=None gives the columns of a run without a report: "
                                                          "NaN (its doctest)",
    ("grpo_theory.convergence:check_trajectories", "tail"): "a tail of fewer than MIN_TAIL_POINTS steps: status "
                                                            "'moving' with NaN drift and spread (no test is possible)",
    ("grpo_theory.advantage:rloo_expectations", "log_w"): "elementwise in log_w: a NaN log-weight (a solver's trial "
                                                          "point) gives NaN there",
    ("grpo_theory.advantage:reinforce_pp_expectations", "log_w"): "elementwise in log_w, as rloo_expectations",
    ("grpo_theory.advantage:pass_at_k_expectations", "log_w"): "elementwise in log_w, as rloo_expectations",
    ("grpo_theory.advantage:tie_free_probability", "log_w"): "elementwise in log_w, as rloo_expectations",
    **{(f"grpo_theory.kl:{name}", "lr"): "the unchecked twin (documented): NaN in, NaN out, and k3's inf - inf at "
                                         "lr = -inf is NaN (the checked twin gives the limit)"
       for name in ("flow_value", "flow_coefficient", "flow_value_slope", "flow_value_shift", "floored_log_ratio")},
    ("grpo_theory.predict.graded:predict_graded", "ks"): "unbiased pass@k is NaN where k > n (documented)",
    ("grpo_theory.solvers.kinks:kink_answers", "pi"): "NaN marks an answer on no jump (documented: 'NaN elsewhere'); a "
                                                      "float16 policy rounds the answers off the valid call's jumps",
}
#: Callables whose two valid calls may give different results (unseeded draws, clocks): a value holding the valid
#: numbers in another container is not compared with the valid call's result there.
NOT_REPEATABLE: dict = {}
#: Calls known to break the contract, left open with the reason: the slow test expects them to break (and fails
#: once one is fixed, so the entry goes).
KNOWN_OPEN: dict = {
    ("grpo_theory.solvers.kinks:sliding_end", "t_max", "1e308"): "correct, in about 12 s of CPU: the flow is followed "
        "in log time to log1p(t_max) = 709 (solvers/ is frozen: its numbers are the fuzz-measured ones)",
    ("grpo_theory.solvers.kinks:sliding_end", "t_max", "10**30"): "as t_max=1e308",
    ("grpo_theory.advantage:rloo_expectations", "log_w", "inf inside"): "a log-weight of +inf (a probability above "
        "1) reaches the arithmetic with NumPy's RuntimeWarning; refusing it on this hot path would turn a solver's "
        "overflowing trial point (NaN today) into an error",
    ("grpo_theory.advantage:reinforce_pp_expectations", "log_w", "inf inside"): "as rloo_expectations",
    ("grpo_theory.solvers.certify:CertifiedSet", "unresolved", "tuple"): "tuple() of the valid call's empty (0, 3) "
        "array is (): the record stores what it is given (any array of numbers), so an empty array's shape is lost",
}
#: Other names a message may use for an argument: ``(key, argument) -> names`` (the concept the argument holds).
ALIASES: dict = {
    ("grpo_theory.predict.samples:read_samples", "source"): ("samples",),
    ("grpo_theory.predict.core:predict", "obj"): ("objective",),
    ("grpo_theory.predict.core:objective_for", "obj"): ("objective",),
    ("grpo_theory.predict.core:reward_kl_tradeoff", "obj"): ("objective",),
    ("grpo_theory.problem:as_objective", "obj"): ("objective",),
    ("grpo_theory._question:as_question", "q"): ("question",),
    ("grpo_theory.predict.coupled:check_kernel", "K"): ("kernel",),
    ("grpo_theory.predict.coupled:solve_kernel", "K"): ("kernel",),
    ("grpo_theory.kl:effective_penalty", "estimator"): ("kl_estimator",),
    ("grpo_theory.kl:effective_penalty", "placement"): ("kl_placement",),
    ("grpo_theory.variants:lookup", "name"): ("advantage",),
    ("grpo_theory.variants:note_penalty", "name"): ("penalty",),
    ("grpo_theory.integrations.verl:read_verl_config", "config"): ("verl overrides",),
    ("grpo_theory.integrations.openrlhf:read_openrlhf_config", "args"): ("argv",),
    ("grpo_theory.integrations.cmdline:hydra_overrides", "tokens"): ("overrides",),
    ("grpo_theory.solvers.classes:ClassProblem", "obj"): ("objective",),
    ("grpo_theory.solvers.search:stationary_points", "obj"): ("objective",),
    ("grpo_theory.solvers.search:stationary_policy", "obj"): ("objective",),
    ("grpo_theory.predict.clock:fit_clock", "p"): ("dataset",),
    ("grpo_theory.predict.clock:fit_clock", "fixed"): ("dataset",),
}

_RESULT = "a result record the library builds and returns; its fields are not an input path"
_TORCH = "trains or loads a model (torch, minutes); its arguments are checked by `grpo-theory validate`"
_INTERNAL = "a solver building block that takes a ClassProblem/TreeProblem/Problem the solvers build"
_NO_ARGS = "takes no arguments"
_EXC = "an exception or warning type"
_ENUM = "an enumeration (its members are looked up, not built)"
_REGISTRY = ("a registry entry type: the extension point's constructor takes callables by design; "
             "register/lookup/names/entries are covered")
_FIGURES = ("draws figures with matplotlib (seconds each) from a Prediction or the package's tables; "
            "`grpo-theory figures`/`predict` reach it")

#: Public callables without an entry in VALID, and why (a prefix ending in ``:`` or ``.`` covers a module).
SKIPPED = {
    "grpo_theory.errors:": _EXC,
    "grpo_theory.predict.samples:PredictWarning": _EXC,
    "grpo_theory.figures": _FIGURES,
    "grpo_theory.predict.report:": _FIGURES,
    "grpo_theory.sweep:SweepInterrupted": _EXC,
    "grpo_theory.training": _TORCH,
    "grpo_theory.studies.small": _TORCH,
    "grpo_theory.studies.kl": _TORCH,
    "grpo_theory.studies.smollm2": _TORCH,
    "grpo_theory.studies.trl": _TORCH,
    "grpo_theory.studies.trl_stationary": _TORCH,
    "grpo_theory.studies.kernel": _TORCH,
    "grpo_theory.studies.free:": _TORCH,
    "grpo_theory.studies.free_backend": _TORCH,
    "grpo_theory.studies.tree": _TORCH,
    "grpo_theory.studies.predictions": _TORCH,
    "grpo_theory.studies.free_prompts:candidate_pool": _NO_ARGS,
    "grpo_theory.studies.free_prompts:greeting_pool": _NO_ARGS,
    "grpo_theory.studies.free_prompts:count_correct": _TORCH,
    "grpo_theory.integrations.trl:next_token_probs": _TORCH,
    "grpo_theory.integrations.trl:make_tracking_callback": _TORCH,
    "grpo_theory.integrations.trl:draw_tracking_figure": _FIGURES,
    "grpo_theory.integrations.trl:installed_trl_version": _NO_ARGS,
    "grpo_theory.symbolic:derive_": _NO_ARGS,
    "grpo_theory.symbolic:family_derivations": _NO_ARGS,
    "grpo_theory.symbolic:all_": _NO_ARGS,
    "grpo_theory.symbolic:render_markdown": _NO_ARGS,
    "grpo_theory.symbolic:Derivation": _RESULT,
    "grpo_theory.symbolic:Proof": _RESULT,
    "grpo_theory.symbolic_proofs:Derivation": _RESULT,
    "grpo_theory.symbolic_proofs:Proof": _RESULT,
    "grpo_theory.symbolic_identities:": _NO_ARGS,
    "grpo_theory.convergence:window_tests": "check_trajectories' inner test on its own windows",
    "grpo_theory.dynamics:Basin": _RESULT,
    "grpo_theory.proximal:MapCycle": _RESULT,
    "grpo_theory.solvers.common:Problem": "a typing.Protocol: the interface ClassProblem and TreeProblem implement "
                                          "(both covered); it has no instances and no code to call",
    "grpo_theory.studies.free_more:more_": _TORCH,
    "grpo_theory.predict.response:Response.monotone": _NO_ARGS,
    "grpo_theory.solvers.search:Method": _ENUM,
    "grpo_theory.solvers.results:Method": _ENUM,
    "grpo_theory.solvers.results:Status": _ENUM,
    "grpo_theory.solvers.search:Status": _ENUM,
    "grpo_theory.variants:": _REGISTRY,
}


def skip_reason(key: str) -> str | None:
    """Why ``key`` has no valid call, or None when it is not skipped."""
    if key in SKIPPED:
        return SKIPPED[key]
    best = max((p for p in SKIPPED if key.startswith(p)), key=len, default=None)
    return SKIPPED[best] if best else None


# ---------------------------------------------------------------- the calls round 16 added (contract16)
# Rule: a public callable is covered unless it trains or loads a model, draws a figure, takes no argument, or is an
# exception, warning or enumeration type. "It takes what the library builds" is no reason: a user can build a
# ClassProblem, a StationaryPoint list, a Fit or a ConformalOffsets with the public API and hand over anything.
def _cp3():
    from grpo_theory.solvers.classes import ClassProblem

    return ClassProblem(_q3(), Objective(beta=0.5))


def _cp2(beta=0.5):
    from grpo_theory.solvers.classes import ClassProblem

    return ClassProblem(_q2(), Objective(beta=beta, group_size=8))


def _tp():
    from grpo_theory.solvers.tree import TreeProblem

    return TreeProblem(_tree_q(), Objective(beta=0.5, level="token"))


def _points():
    from grpo_theory import stationary_points

    return list(stationary_points(Question([0.14, 0.86], rewards=[1, 0]),
                                  Objective(beta=1.0, group_size=inf, penalty="direct")).points)


def _point():
    from grpo_theory import stationary_policy

    return stationary_policy(_q2(), Objective(beta=0.5))


def _coarse_field():
    from grpo_theory.predict.field import PromptField

    return PromptField(Objective(beta=0.5), [0.2, 0.5, 0.7], z_step=1.0, tol=1.0)


def _fit():
    from grpo_theory.predict.calibrate import fit_flow

    return fit_flow(_coarse_field(), [0, 1], [1, 3], [4, 4], n_boot=4)


def _offsets():
    from grpo_theory.predict.conformal import conformal_offsets

    return conformal_offsets([0.5, 0.4, 0.3], [1, 2, 1], [4, 4, 4])


def _two_batch():
    from grpo_theory.solvers.two_class_batch import TwoClassBatch

    return TwoClassBatch([_cp2(0.5), _cp2(2.0)])


def _multi_batch():
    from grpo_theory.solvers.multi_class_batch import MultiClassFlowBatch
    from grpo_theory.solvers.classes import ClassProblem

    q = Question([0.2, 0.3, 0.5], rewards=[1.0, 0.5, 0.0])
    return MultiClassFlowBatch([ClassProblem(q, Objective(beta=b, group_size=inf)) for b in (0.1, 2.0)])


def _free_prompts():
    return pd.DataFrame(dict(prompt=range(4), label=list("abcd"), answer=list("1234"),
                             p_ref=[0.3, 0.05, 0.6, 0.2], p_ref_n=400))


def _free_measured():
    rows = []
    for b in (0.5, 2.0):
        for q in range(4):
            rows += [dict(seed=0, beta=b, prompt=q, measured=0.2 + 0.1 * q, measured_n=200, step=st,
                          kind="intermediate") for st in (10, 20)]
            rows.append(dict(seed=0, beta=b, prompt=q, measured=0.3 + 0.1 * q, measured_n=400, step=90, kind="final",
                             conv_status="converged"))
    return pd.DataFrame(rows)


def _free_table():
    from grpo_theory.studies.free_scoring import assemble

    return assemble(_free_measured(), _free_prompts(), group_size=2, t_max=50.0)


_ETA3 = lambda: np.array([0.1, -0.2])          # noqa: E731 - class logits of _cp3 (3 classes, 2 free)

VALID.update({
    # ---- solvers.common
    "grpo_theory.solvers.common:sinh_grid": lambda: dict(center=0.0, lo=-100.0, hi=100.0, n=5),
    "grpo_theory.solvers.common:verdict": lambda: dict(top=-0.3, tol=1e-9, what="J"),
    "grpo_theory.solvers.common:dedupe": lambda: dict(points=_points()),
    "grpo_theory.solvers.common:face_kkt": lambda: dict(problem=_cp3(), pi=np.array([0.0, 0.4, 0.6])),
    "grpo_theory.solvers.common:point_at": lambda: dict(problem=_cp3(), x=_ETA3(), method="flow"),
    "grpo_theory.solvers.common:polish": lambda: dict(problem=_cp3(), x0=_ETA3(), prefix="flow+root"),
    # ---- solvers.search
    "grpo_theory.solvers.search:kkt_checked": lambda: dict(q=_q2(), obj=Objective(beta=0.5), p=_point()),
    "grpo_theory.solvers.search:basins_of": lambda: dict(points=_points(), best=np.array([True, False])),
    "grpo_theory.solvers.large_beta:reference_in_rounding": lambda: dict(q=_q2(), obj=Objective(beta=1e300),
                                                                        cp=_cp2(1e300)),
    "grpo_theory.solvers.large_beta:reference_point": lambda: dict(q=_q2(), obj=Objective(beta=1e300)),
    # ---- two and many classes
    "grpo_theory.solvers.two_class:needs_log_space": lambda: dict(cp=_cp2()),
    "grpo_theory.solvers.two_class:log_space": lambda: dict(cp=_cp2()),
    "grpo_theory.solvers.two_class:two_class_points": lambda: dict(cp=_cp2(), n_grid=101),
    "grpo_theory.solvers.two_class:flow_root_from": lambda: dict(cp=_cp2(), z0=0.0),
    "grpo_theory.solvers.two_class_batch:supports": lambda: dict(cp=_cp2()),
    "grpo_theory.solvers.two_class_batch:TwoClassBatch": lambda: dict(problems=[_cp2(0.5), _cp2(2.0)]),
    "grpo_theory.solvers.two_class_batch:TwoClassBatch.drift": lambda: dict(self=_two_batch(), z=np.array([0.3, -1.0])),
    "grpo_theory.solvers.two_class_batch:batch_brentq": lambda: dict(
        f=lambda x, rows: x ** 2 - np.array([2.0, 3.0])[rows], a=np.zeros(2), b=np.full(2, 2.0),
        fa=np.array([-2.0, -3.0]), fb=np.array([2.0, 1.0])),
    "grpo_theory.solvers.two_class_batch:batch_flow_roots": lambda: dict(batch=_two_batch()),
    "grpo_theory.solvers.two_class_batch:batch_flow_policies": lambda: dict(batch=_two_batch()),
    "grpo_theory.solvers.multi_class:multi_class_policy": lambda: dict(cp=_cp3()),
    "grpo_theory.solvers.multi_class:multi_class_points": lambda: dict(cp=_cp3(), n_starts=2, seed=0),
    "grpo_theory.solvers.multi_class_batch:supports_flow": lambda: dict(cp=_cp3()),
    "grpo_theory.solvers.multi_class_batch:MultiClassFlowBatch": lambda: dict(problems=[_cp3(), _cp3()]),
    "grpo_theory.solvers.multi_class_batch:MultiClassFlowBatch.free_flow": lambda: dict(
        self=_multi_batch(), eta=np.array([[0.3, -1.0], [2.0, 0.5]]), rows=np.arange(2)),
    "grpo_theory.solvers.multi_class_batch:MultiClassFlowBatch.log_pi": lambda: dict(
        self=_multi_batch(), eta=np.array([[0.3, -1.0], [2.0, 0.5]])),
    "grpo_theory.solvers.multi_class_batch:batch_flow_endpoints": lambda: dict(problems=[_cp3(), _cp3()], t_max=100.0),
    # ---- ClassProblem's and TreeProblem's methods
    **{f"grpo_theory.solvers.classes:ClassProblem.{m}": (lambda: dict(self=_cp3(), eta=_ETA3()))
       for m in ("free_flow", "kkt", "log_pi", "policy", "residual", "stability")},
    **{f"grpo_theory.solvers.classes:ClassProblem.{m}": (lambda: dict(self=_cp3(), log_pi_c=np.log([0.2, 0.3, 0.5])))
       for m in ("class_preference", "flow", "gradient", "gradient_jacobian")},
    "grpo_theory.solvers.classes:ClassProblem.drift": lambda: dict(self=_cp2(), z=0.3),
    "grpo_theory.solvers.classes:ClassProblem.expand": lambda: dict(self=_cp3(), pi_c=np.array([0.2, 0.3, 0.5])),
    "grpo_theory.solvers.classes:ClassProblem.output_preference": lambda: dict(self=_cp3(), pi=np.array([0.2, 0.3, 0.5])),
    "grpo_theory.solvers.classes:ClassProblem.jump_logits": lambda: dict(self=_cp2()),
    "grpo_theory.solvers.classes:ClassProblem.logit_bounds": lambda: dict(self=_cp2()),
    **{f"grpo_theory.solvers.tree:TreeProblem.{m}": (lambda: dict(self=_tp(), x=np.array([0.1, -0.2])))
       for m in ("edge_gradient", "free_flow", "kkt", "log_cond", "logit_gradient", "policy", "residual",
                 "stability")},
    "grpo_theory.solvers.tree:TreeProblem.x_from_policy": lambda: dict(self=_tp(), pi=[0.25, 0.25, 0.5]),
    "grpo_theory.solvers.tree:TreeProblem.x_from_log_cond": lambda: dict(
        self=_tp(), log_cond=_tp().log_cond(np.array([0.1, -0.2]))),
    "grpo_theory.solvers.tree:TreeProblem.centred": lambda: dict(
        self=_tp(), g=np.array([0.1, -0.2, 0.3, 0.4]), cond=np.exp(_tp().log_cond(np.array([0.1, -0.2])))),
    # ---- advantage, kl
    "grpo_theory.advantage:regularised_gradient": lambda: dict(
        P=np.array([0.1, -0.1]), penalty_slope=np.array([0.2, -0.3]), log_pi=np.log([0.4, 0.6]),
        obj=Objective(beta=0.5), u=None),
    "grpo_theory.advantage:level_expectations": lambda: dict(v=np.array([0.0, 1.0]), log_w=np.log([[0.7, 0.3]]),
                                                            obj=Objective(beta=1.0, group_size=4)),
    **{f"grpo_theory.kl:{name}": (lambda: dict(obj=Objective(beta=1.0, kl_estimator="k3"),
                                               lr=np.array([-0.69, 0.0, 0.69])))
       for name in ("flow_coefficient", "flow_value", "flow_value_shift", "flow_value_slope", "floored_log_ratio")},
    # ---- predict
    "grpo_theory.predict.calibrate:fit_flow": lambda: dict(field=_coarse_field(), index=[0, 1], k=[1, 3], m=[4, 4],
                                                          n_boot=4),
    "grpo_theory.predict.calibrate:fit_flows": lambda: dict(field=_coarse_field(), index=[0, 1], k=[1, 3], m=[4, 4],
                                                           n_boot=4),
    "grpo_theory.predict.calibrate:predictive_interval": lambda: dict(fit=_fit(), m=4),
    "grpo_theory.predict.calibrate:Fit.summary": lambda: dict(self=_fit()),
    "grpo_theory.predict.conformal:conformal_interval": lambda: dict(p=[0.3, 0.6], offsets=_offsets(), m=4),
    "grpo_theory.predict.conformal:ConformalOffsets.summary": lambda: dict(self=_offsets()),
    "grpo_theory.predict.scoring:score_table": lambda: dict(predictions={"a": [0.5, 0.4]}, k=[1, 2], m=[4, 4],
                                                           n_boot=20),
    "grpo_theory.predict.graded:predict_graded": lambda: dict(
        samples=__import__("grpo_theory.predict", fromlist=["x"]).read_samples(
            pd.DataFrame({"prompt_id": ["a", "a", "b", "b"], "reward": [0.0, 0.5, 1.0, 0.5]})),
        obj=Objective(beta=0.5), ks=(1, 2), progress=False),
    "grpo_theory.predict.finite:match_measured": lambda: dict(
        samples=samples_from_counts_([64, 64], [3, 30], ["a", "b"]), after=samples_from_counts_([64], [10], ["a"])),
    "grpo_theory.predict.finite:predict_finite": lambda: dict(
        samples=samples_from_counts_([64, 64], [3, 30], ["a", "b"]), obj=Objective(beta=0.5), mean_reward=0.4, n_boot=4),
    "grpo_theory.predict.field:PromptField.engine_h": lambda: dict(self=_field(), z=np.array([0.0, 0.1]), i=0),
    "grpo_theory.predict.response:Response.range_over": lambda: dict(
        self=__import__("grpo_theory.predict", fromlist=["x"]).Response(Objective(beta=1.0)),
        lo=np.array([0.1]), hi=np.array([0.4]), x_lo=np.array([0.3]), x_hi=np.array([0.6])),
    # ---- integrations
    "grpo_theory.integrations.family:trl_family": lambda: dict(get={"entropy_coef": 0.01}.get),
    "grpo_theory.integrations.family:verl_family": lambda: dict(get={"algorithm.adv_estimator": "grpo"}.get,
                                                               kl_in_reward=False),
    "grpo_theory.integrations.family:openrlhf_family": lambda: dict(get={"algo.advantage.estimator": "group_norm"}.get),
    "grpo_theory.integrations.mapping:mapping_of": lambda: dict(obj=Objective(beta=0.5), warns=[], framework="TRL",
                                                               version="0.19"),
    "grpo_theory.integrations.trl:Probe.question": lambda: dict(
        self=__import__("grpo_theory.integrations.trl", fromlist=["x"]).Probe("Q0 ?", ("A", "B"), (1.0, 0.0)),
        probs=np.array([0.3, 0.6, 0.1])),
    # ---- symbolic_proofs
    "grpo_theory.symbolic_proofs:prove_zero": lambda: dict(expr=_sym_x() - _sym_x(), statement="x - x = 0"),
    "grpo_theory.symbolic_proofs:prove_positive": lambda: dict(expr=_sym_x() ** 2 + 1, var=_sym_x(),
                                                               statement="x^2 + 1 > 0"),
    "grpo_theory.symbolic_proofs:prove_sign": lambda: dict(expr=_sym_x() * (1 - _sym_x()), sign=1, statement="s",
                                                           symbols_ranges={_sym_x(): (0.01, 0.99)}, n_points=20),
    # ---- studies' pure helpers
    "grpo_theory.studies.free_scoring:assemble": lambda: dict(measured=_free_measured(), prompts=_free_prompts(),
                                                              group_size=2, t_max=50.0),
    "grpo_theory.studies.free_scoring:score": lambda: dict(table=_free_table()),
    "grpo_theory.studies.free_scoring:fit_clock_lsq": lambda: dict(
        table=_flow_table(), p_ref=[0.2, 0.5], steps=[10.0, 10.0],
        measured=_flow_table().at(np.array([0.2, 0.5]), 0.3)),
    "grpo_theory.studies.free_more:pool_counts": lambda: dict(
        value=pd.Series([0.5, 0.1]), n=pd.Series([100, 100]),
        more=pd.DataFrame(dict(prompt=[0, 1], correct_more=[30, 0], n_more=100)), prompt=pd.Series([0, 1])),
})


def samples_from_counts_(n, correct, ids=None):
    from grpo_theory.predict import samples_from_counts

    return samples_from_counts(n, correct, ids)


def _sym_x():
    import sympy as sp

    return sp.Symbol("x", positive=True)


# ---------------------------------------------------------------- result records built by hand (contract16)
# A user can build any record (its constructor is public) and hand it to what takes one (kkt_checked, dedupe,
# basins_of, predictive_interval, conformal_interval, predict, fit_clock, the records' own methods): a record
# built outside the package has its fields' types checked where it is built (_checks.checked_record).
def _fields(obj) -> dict:
    import dataclasses

    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


def _point_set():
    from grpo_theory import stationary_points

    return stationary_points(Question([0.14, 0.86], rewards=[1, 0]),
                             Objective(beta=1.0, group_size=inf, penalty="direct"))


def _certified():
    from grpo_theory.solvers.certify import certified_stationary_points

    return certified_stationary_points(Question(pi_ref=[0.6, 0.2, 0.2], rewards=[1.0, 0.5, 0.0]),
                                       Objective(beta=2.0, group_size=inf, penalty="direct"), max_boxes=2000)


def _record(build):
    """The valid call of a record's constructor: the fields of one the library built (built once: a fit takes
    half a second)."""
    built = []

    def call():
        if not built:
            built.append(build())
        return _fields(built[0])
    return call


VALID.update({
    "grpo_theory.solvers.results:StationaryPoint": _record(_point),
    "grpo_theory.solvers.results:StationaryPointSet": _record(_point_set),
    "grpo_theory.solvers.results:Basin": _record(lambda: _point_set().basins[0]),
    "grpo_theory.predict.calibrate:Fit": _record(_fit),
    "grpo_theory.predict.conformal:ConformalOffsets": _record(_offsets),
    "grpo_theory.predict.samples:SampleTable": _record(_samples),
    "grpo_theory.predict.clock:FlowTable": _record(_flow_table),
    "grpo_theory.convergence:ConvergenceReport": _record(_report),
    "grpo_theory.convergence:Drop": _record(lambda: __import__("grpo_theory.convergence", fromlist=["x"]).largest_drop(
        [1, 2, 3, 4, 5], [0.2, 0.8, 0.4, 0.5, 0.7])),
    "grpo_theory.dynamics:Trajectory": _record(lambda: __import__("grpo_theory.dynamics", fromlist=["x"]).flow(
        _q2(0.2), Objective(beta=1.0, group_size=inf, penalty="direct"), np.array([0.2, 0.8]),
        np.array([0.0, 20.0, 40.0]), with_points=False)),
    "grpo_theory.predict.core:Prediction": _record(_prediction),
    "grpo_theory.predict.finite:FinitePrediction": _record(lambda: __import__(
        "grpo_theory.predict.finite", fromlist=["x"]).predict_finite(
        samples_from_counts_([64, 64], [3, 30], ["a", "b"]), Objective(beta=0.5), mean_reward=0.4, n_boot=4)),
    "grpo_theory.predict.coupled:CoupledTrajectory": _record(lambda: __import__(
        "grpo_theory.predict.coupled", fromlist=["x"]).solve_rho(_field(), 0.5, np.array([0.0, 1.0, 2.0]))),
    "grpo_theory.proximal:MapFixedPoint": _record(lambda: __import__("grpo_theory.proximal", fromlist=["x"])
                                                  .map_fixed_points(_q2(0.003), Objective(
                                                      beta=0.5, group_size=inf, penalty="direct"))[0]),
    "grpo_theory.solvers.certify:CertifiedSet": _record(_certified),
    "grpo_theory.solvers.certify:CertifiedRoot": _record(lambda: _certified().roots[0]),
    "grpo_theory.solvers.certify:Certificate": _record(lambda: next(r.certificate for r in _certified().roots
                                                                    if r.certificate is not None)),
    "grpo_theory.solvers.full_space:FullSpaceStability": _record(lambda: __import__(
        "grpo_theory.solvers.full_space", fromlist=["x"]).full_space_stability(_q2(), Objective(beta=1.0),
                                                                               [0.55, 0.45])),
    "grpo_theory.integrations.mapping:TheoryMapping": _record(lambda: __import__(
        "grpo_theory.integrations.trl", fromlist=["x"]).read_trl_config({"beta": 0.5, "max_completion_length": 1},
                                                                        trl_version="1.9.0")),
    "grpo_theory.solvers.tree:AnswerTree": _record(lambda: __import__(
        "grpo_theory.solvers.tree", fromlist=["x"]).AnswerTree.build([("A", "B"), ("A", "C"), ("D",)])),
})
ANY_VALUE.update({
    ("grpo_theory.solvers.results:StationaryPoint", "certificate"): "any object (a certificate of a certifier)",
    ("grpo_theory.solvers.results:Basin", "point"): "declared object",
    ("grpo_theory.predict.core:Prediction", "finite"): "declared object (the finite-time prediction, if any)",
})
#: A record stores the numbers it is given: NaN in a number field is NaN in the record (the library's own records
#: hold NaN where nothing was computed, e.g. a short tail's drift), not a NaN the record computed.
DOCUMENTED_NAN.update({(key, f.name): "a record stores the numbers it is given (NaN: not computed)"
                       for key in [k for k in VALID if k.split(":")[1] in (
                           "StationaryPoint", "StationaryPointSet", "Basin", "Fit", "ConformalOffsets", "SampleTable",
                           "FlowTable", "ConvergenceReport", "Drop", "Trajectory", "Prediction", "FinitePrediction",
                           "CoupledTrajectory", "MapFixedPoint", "CertifiedSet", "CertifiedRoot", "Certificate",
                           "FullSpaceStability", "TheoryMapping", "AnswerTree")]
                       for f in __import__("dataclasses").fields(getattr(__import__(
                           key.split(":")[0], fromlist=["x"]), key.split(":")[1]))})


def _centred_table(v, total, obj):
    """A count table (enumerated_expectations): member 1's reward less the group's mean reward."""
    return v[:, None] - (total @ v) / obj.group_size


VALID["grpo_theory.advantage_enumeration:enumerated_expectations"] = lambda: dict(
    v=np.array([0.0, 1.0]), log_w=np.log([[0.7, 0.3]]), obj=Objective(beta=1.0, group_size=4, advantage="rloo"),
    count_table=_centred_table)
DOCUMENTED_NAN[("grpo_theory.advantage_enumeration:enumerated_expectations", "count_table")] = (
    "the caller's count table is averaged as given: a table that holds NaN gives NaN")
