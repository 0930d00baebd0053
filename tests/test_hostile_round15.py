"""The fifteenth hostile audit's library findings that the readers and the docs fix (docs/reliability.md, "Hostile
input, fifteenth round"): fast regression tests."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

from grpo_theory.errors import InvalidInputError
from grpo_theory.integrations.mapping import command_config
from grpo_theory.integrations.openrlhf import read_openrlhf_config
from grpo_theory.integrations.trl import read_trl_config
from grpo_theory.integrations.verl import read_verl_config

ROOT = Path(__file__).resolve().parent.parent
VERL = {"actor_rollout_ref": {"actor": {"use_kl_loss": True, "kl_loss_coef": 0.02}, "rollout": {"n": 4}},
        "algorithm": {"adv_estimator": "grpo"}}


def _read(reader, config):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return reader(config)


@pytest.mark.parametrize("extra", [{"defaults": [{"actor@actor_rollout_ref.actor": "dp_actor"}, "_self_"]},
                                   {"hydra": {"searchpath": ["file://verl/trainer/config"]}},
                                   {"defaults": ["ppo_trainer", "_self_"], "hydra": {"run": {"dir": "."}}}])
def test_verl_hydra_nodes_are_not_unknown_sections(extra):
    m = _read(read_verl_config, {**extra, **VERL})
    assert (m.objective.beta, m.objective.group_size) == (0.02, 4)
    assert not [w for w in m.warnings if "unknown" in w], m.warnings
    composes = isinstance(extra.get("defaults"), list) and any(d != "_self_" for d in extra["defaults"])
    assert any("defaults list is not composed" in w for w in m.warnings) == composes


def test_verl_unknown_section_still_named():
    m = _read(read_verl_config, {"actr_rollout_ref": {"actor": {"kl_loss_coef": 0.3}}, **VERL})
    assert any("unknown top-level key 'actr_rollout_ref'" in w for w in m.warnings)


def test_openrlhf_misspelt_group_size_is_named():
    with pytest.raises(InvalidInputError, match=r"n_samples_per_prompt=1.*'n_samples_per_promt' is not an OpenRLHF flag"):
        _read(read_openrlhf_config, {"advantage_estimator": "group_norm", "n_samples_per_promt": 4, "init_kl_coef": 0.01})


def test_openrlhf_ignored_flag_gets_its_closest_name():
    m = _read(read_openrlhf_config, {"advantage_estimator": "group_norm", "n_samples_per_prompt": 4,
                                     "init_kl_cof": 0.01, "foo": 1})
    assert any("'init_kl_cof'" in w and "did you mean 'init_kl_coef'?" in w for w in m.warnings)
    assert any("'foo'" in w and "did you mean" not in w for w in m.warnings)


@pytest.mark.parametrize("line", ["accelerate launch --num_processes 8 -m trl.cli grpo --beta 0.02 --num_generations 4",
                                  "python -m trl.cli grpo --beta 0.02 --num_generations 4",
                                  "trl grpo --beta 0.02 --num_generations 4"])
def test_trl_command_after_a_launcher(line):
    m = _read(read_trl_config, command_config("trl", line, "run.sh"))
    assert (m.objective.beta, m.objective.group_size) == (0.02, 4)


def test_predict_docs_first_block_runs_as_written():
    block = re.findall(r"```python\n(.*?)```", (ROOT / "docs/predict.md").read_text(encoding="utf-8"), flags=re.S)[0]
    df = pd.DataFrame({"prompt_id": ["a"] * 4 + ["b"] * 4, "reward": [1, 0, 0, 1, 1, 1, 1, 0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(block, "docs/predict.md block 1", "exec"), {"df": df})   # noqa: S102 - the docs' own code
