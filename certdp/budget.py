"""Wall-clock budgets for long searches (``--max-seconds``).

A calibration is a search: its length depends on where the answer lies, which is not known
before the search has found it. Work limits (certdp.cert.limits, certdp.notions.tv_numeric)
refuse each single evaluation that would be too large, but a search of affordable evaluations
can still run for minutes. A :class:`Deadline` lets the caller bound that: the search checks it
between evaluations and stops with certdp.errors.BudgetExhausted (exit code 3), never with a guess.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from fractions import Fraction

from certdp.errors import BudgetExhausted, fmt_value
from certdp.pairs.params import Number, real

#: Largest budget accepted (about four months): beyond it the flag is a typo, not a budget.
MAX_SECONDS = Fraction(10**7)

#: The clock every Deadline reads (seconds, monotonic). certdp always uses time.monotonic; it is a
#: module attribute, read at each use, only so that tests can replace it with a clock that advances
#: by a fixed step per read: a budget then runs out at a fixed check, whatever the machine's load.
clock: Callable[[], float] = time.monotonic


def as_deadline(max_seconds: Number | Deadline | None) -> Deadline:
    """Contract: ``max_seconds`` itself if it is a Deadline, else a new one started now."""
    return max_seconds if isinstance(max_seconds, Deadline) else Deadline(max_seconds)


class Deadline:
    """A wall-clock budget started at construction; ``None`` means no budget.

    Contract: :meth:`check` returns while less than ``max_seconds`` have passed since the
    construction, and raises BudgetExhausted afterwards. It is checked between evaluations, so a
    search may overrun the budget by the length of one evaluation (its progress phases, for a
    certified TV bound).
    """

    def __init__(self, max_seconds: Number | None = None, name: str = "max_seconds"):
        self.name = name
        self.limit: float | None = None
        if max_seconds is not None:
            value = real(name, max_seconds, gt=0, le=MAX_SECONDS)
            self.limit = float(value)
            self.shown = fmt_value(max_seconds)
        self.start = clock()

    def elapsed(self) -> float:
        """Contract: seconds since construction (monotonic clock)."""
        return clock() - self.start

    def check(self, doing: str) -> None:
        """Raise BudgetExhausted if the budget has run out (``doing`` says where the search was).

        Contract: returns only if no budget was set or less than it has passed.
        """
        if self.limit is not None and not self.elapsed() < self.limit:
            raise BudgetExhausted(
                f"{self.name}={self.shown} ran out after {math.floor(self.elapsed() * 10) / 10} s while {doing}; "
                "no certified answer (raise the budget, or relax the target)"
            )
