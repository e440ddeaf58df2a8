"""Scoped working precision and series length (the mpmath/python-flint ``workprec`` idiom), thread-safe.

python-flint keeps the working precision ``ctx.prec`` and the power-series length ``ctx.cap`` in
one process-wide context, not one per thread: a thread that sets it changes the precision of every
other thread's next ball operation (a result computed at the wrong precision, a misreported
``prec_bits``). certdp therefore guards that context with one process-wide re-entrant lock,
:data:`FLINT_LOCK`, and this is the only module that touches ``flint.ctx``:

* :func:`workprec`, :func:`workcap` and :func:`prec_at_least` hold the lock for their whole block,
  so nothing else can change the context while it runs; nesting them in one thread is fine;
* :func:`pinned` holds it without changing anything (code that reads the precision and then
  computes with it); :func:`current_prec` and :func:`current_cap` read under it.

Consequence: certified computations started in several threads run one at a time (each block is
correct; they are serialized, not parallel). For parallel speed use processes, each of which has
its own FLINT context. Ball arithmetic outside any of these blocks runs at whatever precision the
context holds at that moment, which another thread may be changing: run certified work inside
:func:`workprec`. A block must end in the thread that started it (the lock is owned by a thread).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flint import ctx

from certdp.errors import invalid

MIN_PREC = 16
MAX_PREC = 1 << 16
MAX_CAP = 1 << 16

#: Guards python-flint's process-wide ``ctx`` (prec and cap). Re-entrant, so the blocks nest.
FLINT_LOCK = threading.RLock()


def current_prec() -> int:
    """The working precision in bits.

    Contract: the precision that the next ball operation of this thread uses, provided it runs
    inside a block of this module (outside one, another thread may change it at any time).
    """
    with FLINT_LOCK:
        return int(ctx.prec)


def current_cap() -> int:
    """The power-series length (number of terms) that arb_series operations keep.

    Contract: the cap of the next arb_series operation of this thread, inside a block of this module.
    """
    with FLINT_LOCK:
        return int(ctx.cap)


@contextmanager
def pinned() -> Iterator[int]:
    """Hold the FLINT context for a block without changing it; yields the working precision.

    Contract: no other thread changes ctx.prec or ctx.cap while the block runs.
    """
    with FLINT_LOCK:
        yield int(ctx.prec)


@contextmanager
def _scoped(attr: str, value: int) -> Iterator[None]:
    """Set ctx.<attr> for a block under FLINT_LOCK and restore it on exit (normal or not)."""
    with FLINT_LOCK:
        old = getattr(ctx, attr)
        setattr(ctx, attr, value)
        try:
            yield
        finally:
            setattr(ctx, attr, old)


@contextmanager
def workprec(bits: int) -> Iterator[int]:
    """Run a block at ``bits`` bits of working precision and restore the old value after.

    Contract: inside the block the precision is ``bits`` and no other thread can change it (the
    block holds FLINT_LOCK); on exit, normal or by exception, the precision is what it was on entry.
    """
    if not isinstance(bits, int) or isinstance(bits, bool) or not MIN_PREC <= bits <= MAX_PREC:
        raise invalid("prec", bits, f"must be an integer in [{MIN_PREC}, {MAX_PREC}]")
    with _scoped("prec", bits):
        yield bits


@contextmanager
def prec_at_least(bits: int) -> Iterator[int]:
    """Run a block at max(current precision, ``bits``); yields the precision in force on entry.

    Unlike :func:`workprec` there is no upper bound: it serves exact conversions that must keep
    every bit of an operand (rounding an endpoint of a ball at least as wide as its midpoint).

    Contract: inside the block the precision is max(entry precision, bits), held against other
    threads; on exit it is the entry precision again.
    """
    with FLINT_LOCK:
        old = int(ctx.prec)
        with _scoped("prec", max(old, bits)):
            yield old


@contextmanager
def workcap(terms: int) -> Iterator[int]:
    """Run a block with arb_series truncated to ``terms`` terms and restore the old cap after.

    Contract: inside the block ctx.cap is ``terms``, held against other threads (FLINT_LOCK); on
    exit, normal or by exception, the cap is what it was on entry.
    """
    if not isinstance(terms, int) or isinstance(terms, bool) or not 1 <= terms <= MAX_CAP:
        raise invalid("cap", terms, f"must be an integer in [1, {MAX_CAP}]")
    with _scoped("cap", terms):
        yield terms
