"""Registry of checks: each has an id (cited by Contract lines), a statement, a method and ``where``:
the section of docs/math.md that derives the statement, and its source when it comes from a paper.

A check function returns True (proved / passed) or False. ``method`` is "symbolic" only when
sympy proves the statement (simplify to 0, exact limits or integrals); a numeric fallback is
labelled "numeric fallback" and is never presented as a proof.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    id: str
    statement: str
    method: str
    fn: Callable[[], bool]
    where: str = ""


CHECKS: list[Check] = []


def check(
    id: str, statement: str, method: str = "symbolic", *, where: str = ""
) -> Callable[[Callable[[], bool]], Callable[[], bool]]:
    """Register a check under ``id`` (unique); ``where`` names the docs/math.md section and the source."""

    def wrap(fn: Callable[[], bool]) -> Callable[[], bool]:
        if any(c.id == id for c in CHECKS):
            raise ValueError(f"id={id} is registered twice")
        CHECKS.append(Check(id, statement, method, fn, where))
        return fn

    return wrap


@dataclass(frozen=True)
class Outcome:
    check: Check
    passed: bool
    seconds: float
    error: str | None = None


def run_one(c: Check) -> Outcome:
    """Run one check; an exception counts as FAIL with its message."""
    start = time.perf_counter()
    try:
        ok, err = bool(c.fn()), None
    except Exception as exc:
        ok, err = False, f"{exc.__class__.__name__}: {exc}"
    return Outcome(c, ok, time.perf_counter() - start, err)


def run_all(ids: list[str] | None = None) -> list[Outcome]:
    """Run every registered check (or only those named in ``ids``, in registry order)."""
    if ids is not None:
        unknown = sorted(set(ids) - {c.id for c in CHECKS})
        if unknown:
            raise ValueError(f"id={unknown[0]} is not a registered check (python -m proofs_checks --list names them)")
    return [run_one(c) for c in CHECKS if ids is None or c.id in ids]
