"""Config readers validate every field they read, once, naming the field and the value (issue 25)."""

import math

import pytest

from grpo_theory import InvalidInputError
from grpo_theory.integrations.openrlhf import OPENRLHF_FIELDS, read_openrlhf_config
from grpo_theory.integrations.trl import TRL_FIELDS, read_trl_config
from grpo_theory.integrations.verl import VERL_FIELDS, read_verl_config


def _verl(**actor):
    return {"algorithm": {"adv_estimator": "grpo"},
            "actor_rollout_ref": {"rollout": {"n": 4}, "actor": {"use_kl_loss": True, **actor}}}


@pytest.mark.parametrize("field,value", [
    ("max_completion_length", "abc"), ("top_entropy_quantile", "abc"), ("steps_per_generation", "4"),
    ("num_generations", 1), ("beta", math.nan), ("beta", -1.0), ("temperature", 0.0), ("top_p", 1.5),
    ("mask_truncated_completions", "yes"), ("num_iterations", 2.5), ("sync_ref_model", 1),
])
def test_trl_bad_field_is_named(field, value):
    with pytest.raises(InvalidInputError, match=rf"TRL config: {field} = ") as info:
        read_trl_config({field: value}, trl_version="1.16.0")
    assert "np.float64" not in str(info.value)


@pytest.mark.parametrize("config", [None, 3, "beta: 1", ["beta", 1]])
def test_trl_rejects_non_configs(config):
    with pytest.raises(InvalidInputError, match="a TRL config must be"):
        read_trl_config(config)


def test_trl_lists_every_bad_field_at_once():
    with pytest.raises(InvalidInputError) as info:
        read_trl_config({"max_completion_length": "abc", "top_entropy_quantile": "abc", "beta": -1})
    for field in ("max_completion_length", "top_entropy_quantile", "beta"):
        assert field in str(info.value)


@pytest.mark.parametrize("actor,field", [
    ({"kl_loss_coef": "abc"}, "kl_loss_coef"), ({"ppo_epochs": "2"}, "ppo_epochs"),
    ({"kl_loss_coef": -0.1}, "kl_loss_coef"), ({"use_kl_loss": "true"}, "use_kl_loss"),
])
def test_verl_bad_field_is_named(actor, field):
    with pytest.raises(InvalidInputError, match=rf"verl config: actor_rollout_ref\.actor\.{field} = "):
        read_verl_config(_verl(**actor))


@pytest.mark.parametrize("args,field", [
    (["--advantage_estimator", "group_norm", "--n_samples_per_prompt", "4", "--temperature", "nan"], "temperature"),
    ({"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "init_kl_coef": [1]}, "init_coef"),
    ({"advantage_estimator": "group_norm", "n_samples_per_prompt": "4x"}, "n_samples_per_prompt"),
    ({"advantage_estimator": "group_norm", "n_samples_per_prompt": 4, "max_epochs": 0}, "max_epochs"),
])
def test_openrlhf_bad_field_is_named(args, field):
    with pytest.raises(InvalidInputError, match=field):
        read_openrlhf_config(args)


def test_tables_cover_what_the_readers_read():
    """Each table names the fields the reader looks up (the source's string literals), so none escapes the check."""
    import inspect
    import re

    from grpo_theory.integrations import openrlhf, trl, verl

    trl_src = inspect.getsource(trl.read_trl_config)
    read = set(re.findall(r'_(?:get|number)\(config, "(\w+)"', trl_src))
    read |= {m for m in re.findall(r'\("(\w+)", [^)]*\)', trl_src) if m in ("top_p", "top_k", "min_p",
                                                                                "repetition_penalty")}
    assert read and read <= set(TRL_FIELDS), read - set(TRL_FIELDS)
    verl_read = set(re.findall(r'get\("([\w.]+)"\)', inspect.getsource(verl._read_flat)))
    assert verl_read and verl_read <= set(VERL_FIELDS), verl_read - set(VERL_FIELDS)
    assert set(openrlhf.OPENRLHF_DEFAULTS) <= set(OPENRLHF_FIELDS)
