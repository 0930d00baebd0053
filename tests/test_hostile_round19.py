"""The nineteenth hostile audit's library rows, fixed (docs/reliability.md, "Hostile input, nineteenth round")."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grpo_theory import Objective, Question
from grpo_theory.errors import InvalidInputError


def test_monte_carlo_groups_at_g_inf_name_n_groups_and_its_value():
    from grpo_theory.dynamics import grpo_steps

    q = Question([0.3, 0.7], rewards=[1, 0])
    with pytest.raises(InvalidInputError, match=r"n_groups=4 .*group_size=inf; leave n_groups out"):
        grpo_steps(q, Objective(beta=0.5, group_size=math.inf), q.pi_ref, lr=0.1, n_batches=3, n_groups=4)


def test_start_logits_takes_one_count_per_prompt_not_a_broadcast_one():
    from grpo_theory.predict.calibrate import start_logits

    with pytest.raises(InvalidInputError, match=r"n and correct must have one length \(one entry per prompt\), "
                                                r"got lengths n 2, correct 1"):
        start_logits([4, 5], [1])
    # the valid call: logit(c/n), the Jeffreys mean (c + 1/2)/(n + 1) at c = 0 and c = n
    got = start_logits([4, 5, 6], [1, 0, 6])
    want = [math.log(0.25 / 0.75), math.log((0.5 / 6) / (1 - 0.5 / 6)), math.log((6.5 / 7) / (1 - 6.5 / 7))]
    np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("text, want", [("v1.2", (1, 2, 0)), ("1.2.3.4", (1, 2, 3)), ("V0.26.0.dev0", (0, 26, 0))])
def test_parse_version_takes_what_its_docstring_says(text, want):
    from grpo_theory.integrations.mapping import parse_version

    assert parse_version(text) == want


@pytest.mark.parametrize("text", ["1.2.3.4.5", "vv1.2", "1..2"])
def test_parse_version_refuses_the_rest_naming_it(text):
    from grpo_theory.integrations.mapping import parse_version

    with pytest.raises(InvalidInputError, match=r"up to four numbers.*got " + repr(text).replace(".", r"\.")):
        parse_version(text)
