"""Cooperative checkpoints: long computations call :func:`checkpoint` between units of work.

A search (an order optimisation, a precision loop, a numeric TV lattice) does not know how long
it will run. The caller decides: inside ``with checkpoints(check):`` every checkpoint calls
``check()``, which may raise (a wall-time budget does: certdp.budget), so the computation stops
between two units of work with that error, never with a partial result. Outside any such block a
checkpoint does nothing. Nested blocks call every active check, outermost first. The state is a
context variable, so each thread (and asyncio task) has its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from certdp.enclose.work import tick

_ACTIVE: ContextVar[tuple[Callable[[], None], ...]] = ContextVar("certdp_checkpoints", default=())


def checkpoint() -> None:
    """Call the active checks (none outside a :func:`checkpoints` block).

    Contract: returns None, or propagates the first exception a check raises (or the
    BudgetExhausted of an active work meter, which counts one unit here: certdp.enclose.work);
    computes nothing.
    """
    tick()
    for check in _ACTIVE.get():
        check()


@contextmanager
def checkpoints(check: Callable[[], None]) -> Iterator[None]:
    """Within the block, every :func:`checkpoint` also calls ``check``.

    Contract: only adds calls of ``check``; the values computed in the block are unchanged.
    """
    token = _ACTIVE.set((*_ACTIVE.get(), check))
    try:
        yield
    finally:
        _ACTIVE.reset(token)
