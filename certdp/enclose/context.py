"""Scoped working precision (the mpmath/python-flint ``workprec`` idiom)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from flint import ctx

from certdp.errors import invalid

MIN_PREC = 16
MAX_PREC = 1 << 16


def current_prec() -> int:
    """The working precision in bits.

    Contract: the precision that the next ball operation uses.
    """
    return int(ctx.prec)


@contextmanager
def workprec(bits: int) -> Iterator[int]:
    """Run a block at ``bits`` bits of working precision and restore the old value after.

    Contract: on exit, normal or by exception, the precision is what it was on entry.
    """
    if not isinstance(bits, int) or isinstance(bits, bool) or not MIN_PREC <= bits <= MAX_PREC:
        raise invalid("prec", bits, f"must be an integer in [{MIN_PREC}, {MAX_PREC}]")
    old = ctx.prec
    ctx.prec = bits
    try:
        yield bits
    finally:
        ctx.prec = old
