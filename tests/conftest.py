"""Hypothesis profiles: CI runs a derandomized (reproducible) profile; local runs explore randomly."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


import sys  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """One torch thread for the tests' small models: on 2 busy cores two threads fight and run
    several times slower (the TRL test went from 49 s to 579 s under load)."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    yield
