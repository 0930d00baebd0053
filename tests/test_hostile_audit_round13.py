"""The thirteenth hostile audit (``tests/hostile_audit_round13.py``, docs/reliability.md "Hostile input, thirteenth
round") as a test: slow, not in the default run (several minutes on two loaded cores). Every row that is neither
clean nor correct must be a mistake of the harness listed, with its reason, in ``HARNESS_MISTAKES``, or one of the
round's open library findings listed in ``OPEN_FINDINGS`` (docs/reliability.md): a new defect fails it, and so
does a listed finding once fixed (its row turns clean and must leave the list)."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_the_thirteenth_audit_leaves_no_unlisted_library_finding(tmp_path):
    import hostile_audit_fresh as fresh
    import hostile_audit_round13 as audit

    fresh.assert_only_open_findings(audit, tmp_path, minimum=500)
