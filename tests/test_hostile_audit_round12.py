"""The twelfth hostile audit (``tests/hostile_audit_round12.py``, docs/reliability.md "Hostile input, twelfth
round") as a test: slow, not in the default run (about 20 minutes on two loaded cores). Every row that is neither
clean nor correct must be a mistake of the harness listed, with its reason, in ``HARNESS_MISTAKES``."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_the_twelfth_audit_leaves_no_library_finding(tmp_path):
    import hostile_audit_fresh as fresh
    import hostile_audit_round12 as audit

    fresh.assert_no_library_finding(audit, tmp_path)
