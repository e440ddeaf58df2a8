"""Work counters for tests that must not read a clock (issue 33, item 5): no test depends on the
machine's load or speed.

- :class:`TickingClock` replaces certdp.budget.clock: it advances by a fixed step at every read,
  so a ``--max-seconds`` budget runs out at a fixed check, however loaded the machine is.
- :func:`python_calls` counts the function calls (Python and builtin) made while running a
  callable: "refused before working" becomes "refused within a few hundred calls".
- :func:`peak_traced_bytes` is the peak of the memory Python allocated while running a callable:
  "no billion-digit integer was built" needs no stopwatch.
"""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest


class TickingClock:
    """A clock that reads ``step`` seconds later at every read (starting at ``step``)."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.reads * self.step


def ticking_budget(monkeypatch: pytest.MonkeyPatch, step: float) -> TickingClock:
    """Make every certdp.budget.Deadline read a :class:`TickingClock` (undone with monkeypatch).

    A Deadline reads the clock once when it starts and once per check (twice on the check that
    raises: once more for its message), so a budget of ``B`` seconds raises at the ``B / step``-th
    check (for ``B / step`` an integer and ``step`` a power of two: no rounding)."""
    import certdp.budget

    clock = TickingClock(step)
    monkeypatch.setattr(certdp.budget, "clock", clock)
    return clock


def python_calls(fn: Callable[[], Any]) -> tuple[Exception | None, int]:
    """Run ``fn`` and count its calls (Python functions and builtins) with sys.setprofile.

    Returns the exception it raised (None if it returned) and the count. Deterministic for a given
    code path; caches filled by an earlier test can only lower it."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    error: Exception | None = None
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn()
    except Exception as exc:  # returned to the caller, who asserts on it
        error = exc
    finally:
        sys.setprofile(previous)
    return error, count


def peak_traced_bytes(fn: Callable[[], Any]) -> tuple[Exception | None, int]:
    """Run ``fn`` under tracemalloc; the exception it raised (None if it returned) and the peak
    number of bytes Python held for it (Python objects, integers included; not flint's memory)."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    error: Exception | None = None
    try:
        fn()
    except Exception as exc:  # returned to the caller, who asserts on it
        error = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1] - base
        if not was_tracing:
            tracemalloc.stop()
    return error, peak


def counted_cli(argv: list[str], limit: int | None = None) -> tuple[int, str, str, int]:
    """Run ``certdp argv`` in process under a work meter of ``limit`` units (None: unlimited):
    (exit code, stdout, stderr, work units used)."""
    import contextlib
    import io

    from certdp.cli import main
    from certdp.enclose.work import metered

    out: list[str] = []
    err = io.StringIO()
    with metered(limit=limit) as meter, contextlib.redirect_stderr(err):
        code = main(argv, out=out.append)
    return code, "".join(out), err.getvalue(), meter.used
