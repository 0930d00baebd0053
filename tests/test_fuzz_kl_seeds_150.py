"""Seeds 150-299 of the KL fuzz suite's 300 default cases (tests/test_fuzz_kl.py says what is checked, and why
the 300 are two files)."""

from __future__ import annotations

import pytest
from fuzz_kl_cases import new_or_changed


@pytest.mark.timeout(900)
def test_kl_fuzz_seeds_150_to_299_have_no_new_crash_or_silent_answer():
    new, changed = new_or_changed(range(150, 300))
    assert not new, new[:3]
    assert not changed, changed[:3]
