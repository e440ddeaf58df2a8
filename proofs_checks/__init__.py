"""Symbolic (sympy) checks of the closed forms certdp relies on. Ids are cited by Contract lines; each
check names the section of docs/math.md that derives its statement, and the source paper.

Run ``python -m proofs_checks`` for the table (exit code 1 on any FAIL).
"""

from proofs_checks import conversions, gdp, heavy_tails, information_gap, mechanisms  # noqa: F401 - registers
from proofs_checks.registry import CHECKS, Outcome, run_all, run_one

__all__ = ["CHECKS", "Outcome", "run_all", "run_one"]
