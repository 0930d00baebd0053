"""Slow: the nineteenth hostile audit (``tests/hostile_audit_round19.py``; docs/reliability.md, "Hostile input,
nineteenth round") must leave no library row outside its ``OPEN_FINDINGS``, and no listed row fixed but kept."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_the_nineteenth_audit_leaves_no_unlisted_library_finding(tmp_path):
    import hostile_audit_fresh as fresh
    import hostile_audit_round19 as audit

    fresh.assert_only_open_findings(audit, tmp_path, minimum=500)
