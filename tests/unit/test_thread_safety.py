"""Certified computations in threads give exactly the serial results (issue 12, item 13).

python-flint's working precision (ctx.prec) and series cap (ctx.cap) are process-wide; before
certdp.enclose.context guarded them with a lock, a thread's workprec changed the precision of the
others mid-computation: results, widths and the reported prec_bits differed from a serial run.
"""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import pytest

import certdp
from certdp import Target
from certdp.enclose.ball import Enclosure, to_ball
from certdp.enclose.context import _scoped, current_cap, current_prec, workcap, workprec
from certdp.enclose.refine import refine
from certdp.enclose.special import taylor_coefficients

THREADS = 8
PAIR = certdp.SubsampledGaussian(q="0.01", sigma="1.0")
COMPOSED = certdp.compose(PAIR, 100)


def _target(prec: int) -> Target:
    # Met at the first precision tried, so each thread's results are at its own precision.
    return Target(rel_tol=2.0 ** -(prec - 40), abs_tol=0, start_prec=prec, max_prec=4096)


def _work(i: int) -> list[tuple[Fraction, Fraction, int]]:
    """A few certified quantities at a precision (and a series cap) that depends on the thread."""
    prec = 64 + 16 * i
    terms = 3 + i
    tg = _target(prec)
    results: list[Enclosure] = []
    for _ in range(3):
        results.append(certdp.rdp(PAIR, 2 + i, target=tg))
        results.append(certdp.epsilon(COMPOSED, delta="1e-5", orders=[2, 4, 8, 16, 32], target=tg).enclosure)
        results.append(refine(lambda: to_ball(Fraction(1, 3)).exp(), tg))
        # ctx.cap: the coefficient of x^terms of exp(x^2) at 1/3 needs a series of terms + 1 terms.
        results.append(
            refine(lambda: taylor_coefficients(lambda s: (s * s).exp(), to_ball(Fraction(1, 3)), terms)[terms], tg)
        )
    return [(e.lower, e.upper, e.prec_bits) for e in results]


@pytest.fixture
def busy_switching():
    # Switch threads often, so that any unguarded use of the shared context shows up in one run.
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def test_threads_reproduce_the_serial_results(busy_switching) -> None:
    serial = [_work(i) for i in range(THREADS)]
    with ThreadPoolExecutor(THREADS) as pool:
        threaded = list(pool.map(_work, range(THREADS)))
    for i in range(THREADS):
        assert threaded[i] == serial[i], f"thread {i} (prec {64 + 16 * i}) differs from the serial run"
        assert all(p == 64 + 16 * i for _, _, p in threaded[i])


def test_workprec_nests_in_one_thread_and_restores() -> None:
    outer = current_prec()
    with workprec(200):
        with workprec(100):
            assert current_prec() == 100
            with workcap(4):
                assert current_cap() == 4
        assert current_prec() == 200
    assert current_prec() == outer


def test_another_thread_waits_for_a_workprec_block() -> None:
    inside = threading.Event()
    seen: list[int] = []

    def other() -> None:
        inside.wait()
        with workprec(300):
            seen.append(current_prec())

    def waiting_at_the_lock() -> bool:  # its innermost frame: _scoped, acquiring FLINT_LOCK
        frame = sys._current_frames().get(t.ident)  # type: ignore[arg-type]
        return frame is not None and frame.f_code is _scoped.__wrapped__.__code__  # type: ignore[attr-defined]

    t = threading.Thread(target=other)
    t.start()
    with workprec(100):
        inside.set()
        # synchronised on the event (the other thread is waiting for the lock), not on a sleep;
        # the timeout is a safety net only
        deadline = time.monotonic() + 600
        while not waiting_at_the_lock() and time.monotonic() < deadline:
            time.sleep(0.001)
        assert waiting_at_the_lock()  # it is blocked: it cannot change our precision
        assert t.is_alive() and current_prec() == 100
    t.join()
    assert seen == [300]


def test_workcap_rejects_a_bad_cap() -> None:
    with pytest.raises(certdp.InvalidArgument, match=r"^cap=0 must be an integer"):
        with workcap(0):
            pass
