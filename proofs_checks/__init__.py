"""Symbolic (sympy) checks of the closed forms certdp relies on. Ids are cited by Contract lines.

Run ``python -m proofs_checks`` for the table (exit code 1 on any FAIL).
"""

from proofs_checks import conversions, gdp, heavy_tails, mechanisms, seed000  # noqa: F401 - registers the checks
from proofs_checks.registry import CHECKS, Outcome, run_all

__all__ = ["CHECKS", "Outcome", "run_all"]
