"""pytest runs the symbolic checks of proofs_checks/ (python -m proofs_checks prints the table)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from proofs_checks import CHECKS, run_all


def test_ids_are_unique_and_statements_present() -> None:
    ids = [c.id for c in CHECKS]
    assert len(ids) == len(set(ids)) and all(c.statement for c in CHECKS)
    assert all(c.method in ("symbolic", "numeric fallback") for c in CHECKS)


@pytest.mark.parametrize("outcome", run_all(), ids=lambda o: o.check.id)
def test_check_passes(outcome) -> None:
    assert outcome.passed, outcome.error or outcome.check.statement


def test_module_entry_point_prints_the_table() -> None:
    done = subprocess.run([sys.executable, "-m", "proofs_checks"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stdout.strip().splitlines()[-1].endswith("passed, 0 failed")
