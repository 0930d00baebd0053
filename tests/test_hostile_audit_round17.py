"""Slow: the seventeenth hostile audit (``tests/hostile_audit_round17.py``; docs/reliability.md, "Hostile input,
seventeenth round") must leave no library row outside its ``OPEN_FINDINGS``, and no listed row fixed but kept."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_the_seventeenth_audit_leaves_no_unlisted_library_finding(tmp_path):
    import hostile_audit_fresh as fresh
    import hostile_audit_round17 as audit

    fresh.assert_only_open_findings(audit, tmp_path, minimum=500)
