"""Budgets of time and memory (``--max-seconds``, ``--max-memory``), and their defaults.

A calibration is a search: its length depends on where the answer lies, which is not known
before the search has found it. Work limits (certdp.cert.limits, certdp.notions.tv_numeric)
refuse each single evaluation that would be too large, but a search of affordable evaluations
can still run for minutes. A :class:`Deadline` lets the caller bound that: the search checks it
between evaluations and stops with certdp.errors.BudgetExhausted (exit code 3), never with a guess.

Every command of the CLI runs under DEFAULT_MAX_SECONDS and DEFAULT_MAX_MEMORY unless the flags
say otherwise (docs/cli.md, "Budgets"). Memory is enforced by estimates made before each large
step (certdp.enclose.work: a product's peak bytes, the lattice accountant's composed length,
certdp.notions.cost), so a run that would pass it stops before the step; the console script also
caps its address space (:func:`address_space_cap`) as a backstop.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING

from certdp.errors import BudgetExhausted, fmt_value

if TYPE_CHECKING:  # the parser reads this module's defaults: no flint at --help
    from certdp.pairs.params import Number

#: Largest budget accepted (about four months): beyond it the flag is a typo, not a budget.
MAX_SECONDS = Fraction(10**7)

#: Default wall-time budget of every command, in seconds (--max-seconds): long enough for the
#: committed calibrations (about a minute each), short enough that a forgotten run ends.
DEFAULT_MAX_SECONDS = 900

#: Default memory budget of every command (--max-memory): under the 2 GiB the verifier promises
#: for its own work (certdp.cert.limits) times two, and well under a laptop's memory.
DEFAULT_MAX_MEMORY = "4GiB"

#: Smallest and largest memory budget accepted (below 64 MiB the interpreter alone does not fit).
MIN_MEMORY = 64 << 20
MAX_MEMORY = 1 << 40

#: Address space allowed beyond --max-memory when the console script caps it (RLIMIT_AS): the
#: interpreter, its libraries and its threads reserve ~0.3 GB of address space they never touch
#: (measured: VmPeak 0.32 GB at 0.10 GB resident for an eps run).
ADDRESS_SPACE_HEADROOM = 1 << 30

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "kib": 1 << 10, "m": 10**6, "mb": 10**6, "mib": 1 << 20}
_UNITS.update({"g": 10**9, "gb": 10**9, "gib": 1 << 30, "t": 10**12, "tb": 10**12, "tib": 1 << 40})


def parse_memory(text: str, name: str = "max-memory") -> int:
    """Bytes of a memory budget written as an integer with an optional unit (``4GiB``, ``500MB``,
    ``2g``, ``1073741824``; binary units KiB/MiB/GiB/TiB, decimal KB/MB/GB/TB and k/m/g/t).

    Contract: an int in [MIN_MEMORY, MAX_MEMORY] from ASCII digits, or InvalidArgument naming
    ``name`` and the value.
    """
    from certdp.errors import InvalidArgument

    raw = str(text).strip()
    digits = raw.rstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ").strip()
    unit = raw[len(digits) :].strip().lower() if digits else ""
    # isdigit() alone accepts Arabic-Indic and full-width digits (which Fraction reads): ASCII only,
    # as for --max-seconds and every number flag
    plain = digits.isascii() and digits.replace(".", "", 1).isdigit()
    if not digits or len(digits) > 20 or unit not in _UNITS or not plain:
        raise InvalidArgument(f"{name}={fmt_value(text)} must be a size such as 4GiB, 500MB or 1073741824 (bytes)")
    value = int(Fraction(digits) * _UNITS[unit])
    if not MIN_MEMORY <= value <= MAX_MEMORY:
        raise InvalidArgument(f"{name}={fmt_value(text)} must be between 64MiB and 1TiB")
    return value


def address_space_cap(memory: int) -> None:
    """Cap this process's address space (RLIMIT_AS) at ``memory`` + ADDRESS_SPACE_HEADROOM, where
    the platform allows it: a Python allocation past it raises MemoryError, which the console
    script reports as exit 3. The estimates of certdp.enclose.work refuse large steps before
    this is reached; the cap only backs them up (a FLINT allocation past it aborts the process).

    Contract: lowers the soft limit only (never raises a limit already lower); returns None.
    """
    try:
        import resource
    except ImportError:  # not on this platform
        return
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = memory + ADDRESS_SPACE_HEADROOM
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        if soft == resource.RLIM_INFINITY or want < soft:
            resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError):
        return


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
            from certdp.pairs.params import real

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
