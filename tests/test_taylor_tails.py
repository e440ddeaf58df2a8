"""The loss tails by Taylor models (certdp.enclose.taylor, SubsampledGaussian.loss_tails) against
an independent mpmath reference at 50 digits and against the pointwise Arb tails, over
hypothesis-drawn subsampled Gaussians and lattices; and the model's refusals."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from certdp.enclose import to_ball, workprec
from certdp.enclose.taylor import MIN_BLOCK, taylor_values
from certdp.pairs import SubsampledGaussian


def _mp_tails(q: Fraction, sigma: Fraction, direction: str, ell: Fraction) -> tuple[mp.mpf, mp.mpf]:
    """(P(L > ell), Q(L > ell)) from the mixture's definition, written here from scratch:
    remove: P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2), L(x) = log(1 - q + q e^{(2x-1)/(2s^2)});
    add: the roles swapped, L(x) = -that. The loss is increasing in x, so L > ell iff x > x*(ell)."""
    with mp.workdps(50):
        qq, s, e = (
            mp.mpf(q.numerator) / q.denominator,
            mp.mpf(sigma.numerator) / sigma.denominator,
            mp.mpf(ell.numerator) / ell.denominator,
        )
        y = e if direction == "remove" else -e
        arg = mp.exp(y) - (1 - qq)
        if arg <= 0:
            return (mp.mpf(1), mp.mpf(1)) if direction == "remove" else (mp.mpf(0), mp.mpf(0))
        x = s**2 * mp.log(arg / qq) + mp.mpf(1) / 2

        def above(m: int) -> mp.mpf:  # N(m, s^2)(X > x)
            return mp.erfc((x - m) / (s * mp.sqrt(2))) / 2

        if direction == "remove":
            return (1 - qq) * above(0) + qq * above(1), above(0)
        below0, below1 = 1 - above(0), 1 - above(1)
        return below0, (1 - qq) * below0 + qq * below1


def _contains(ball: object, value: mp.mpf) -> bool:
    lo, hi = ball.lower(), ball.upper()  # type: ignore[attr-defined]
    with mp.workdps(60):
        return (
            mp.mpf(lo.str(60, radius=False)) - mp.mpf(10) ** -45
            <= value
            <= mp.mpf(hi.str(60, radius=False)) + mp.mpf(10) ** -45
        )


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["0.00001", "0.001", "0.00512", "0.05", "0.5", "1"]),
    st.sampled_from(["0.3", "0.8", "1.1", "4", "50"]),
    st.sampled_from(["remove", "add"]),
    st.integers(9, 17),
    st.integers(-3000, 3000) | st.integers(20000, 400000),
    st.integers(0, 7),
)
@example(q="0.00001", sigma="50", direction="remove", k=9, start=48839, off=0)  # CI's draw, 2026-12-06
def test_taylor_tails_contain_the_reference_and_match_pointwise(
    q: str, sigma: str, direction: str, k: int, start: int, off: int
) -> None:
    """Every tail from the Taylor route overlaps the pointwise Arb tail and contains the mpmath
    value at 12 sampled points; its radius is at most 2^-100 of its value (tiny deltas need
    tiny tails to all their bits)."""
    pair = SubsampledGaussian(q, sigma, direction)
    h = Fraction(1, 2**k)
    offset = Fraction(off, 8) * h
    n = 600
    with workprec(128):
        points = [to_ball(offset + h * (start + i)) for i in range(n)]
        fast = pair.loss_tails(points)
        for i in range(0, n, 7):
            slow = pair.loss_tail(points[i])
            assert fast[i][0].overlaps(slow[0]) and fast[i][1].overlaps(slow[1])
            # relative accuracy, as the pointwise tails (delta may be 1e-300): 2^-100, or twice the
            # pointwise route's own where that is wider (at q = 1e-5, sigma = 50, tails near
            # 1e-6334661, erfc at 128 bits keeps only about 100 bits: CI's draw, 2026-12-06)
            for ball, point in zip(fast[i], slow, strict=True):
                own = point.rad() / abs(point.mid()) if point.mid() != 0 else to_ball(0)
                assert ball.rad() <= abs(ball.mid()) * (to_ball(2) ** -100).max(2 * own)
        for i in range(0, n, n // 12):
            ref = _mp_tails(pair.q, pair.sigma, direction, offset + h * (start + i))
            assert _contains(fast[i][0], ref[0]) and _contains(fast[i][1], ref[1]), (i, fast[i], ref)


def test_taylor_route_is_used_in_the_bulk() -> None:
    """At CIFAR-10's scale the models cover the bulk (the route is not silently pointwise)."""
    pair = SubsampledGaussian("256/50000", "1.1", "remove")
    h = Fraction(1, 2**13)
    with workprec(128):
        points = [to_ball(h * i) for i in range(2048)]
        got = taylor_values(lambda s: (s.exp(),), points)
        assert all(g is not None for g in got)
        calls = {"n": 0}
        real = pair.loss_tail

        def counted(ell: object) -> object:
            calls["n"] += 1
            return real(ell)  # type: ignore[arg-type]

        object.__setattr__(pair, "loss_tail", counted)
        pair.loss_tails(points)
        assert calls["n"] < len(points) // 4


def test_taylor_values_refuses_what_it_cannot_bound() -> None:
    """A function with a pole inside the block, a non-finite series, or fewer points than a block
    leaves the points to the caller (None), never a guess."""
    with workprec(128):
        near_pole = [to_ball(Fraction(i, 64)) for i in range(-64, 64)]  # 1/x: pole at 0
        got = taylor_values(lambda s: (1 / s,), near_pole)
        assert got[64] is None  # the block holding 0
        assert all(
            g is None for g in taylor_values(lambda s: (s.log(),), [to_ball(Fraction(-i, 8)) for i in range(1, 200)])
        )
        few = [to_ball(Fraction(i, 1024)) for i in range(MIN_BLOCK - 1)]
        assert all(g is None for g in taylor_values(lambda s: (s.exp(),), few))
        # where it answers, exp is enclosed
        pts = [to_ball(Fraction(i, 4096)) for i in range(300)]
        for p, g in zip(pts, taylor_values(lambda s: (s.exp(),), pts), strict=True):
            assert g is not None and g[0].overlaps(p.exp()) and float(g[0].rad()) < 2.0**-110


def test_loss_tails_refuses_both_directions() -> None:
    from certdp.errors import Unsupported

    with pytest.raises(Unsupported, match="direction=both"):
        SubsampledGaussian("0.1", "1", "both").loss_tails([to_ball(0)])


def test_unsorted_and_spread_points_are_enclosed_or_left_to_the_caller() -> None:
    """Attack review: a block's ball and radius come from all of its points (an unsorted run once
    gave e^5 a tiny ball that missed it, and P(L > 3) a negative one); a spread that overflows the
    float steering is no model, not an OverflowError."""
    from flint import arb

    with workprec(128):
        pts = [arb(0)] * 33 + [arb(5)] * 30 + [arb(0)]
        for p, g in zip(pts, taylor_values(lambda s: (s.exp(),), pts), strict=True):
            assert g is None or g[0].overlaps(p.exp())
        pair = SubsampledGaussian("0.01", "1", "remove")
        ells = [to_ball(Fraction(1, 8))] * 33 + [to_ball(3)] * 30 + [to_ball(Fraction(1, 8))]
        for ell, got in zip(ells, pair.loss_tails(ells), strict=True):
            want = pair.loss_tail(ell)
            assert got[0].overlaps(want[0]) and got[1].overlaps(want[1]) and got[0] >= 0
        wide = [to_ball(k * 10**14) for k in range(64)]
        assert len(pair.loss_tails(wide)) == 64
        assert all(g is None for g in taylor_values(lambda s: (s.exp(),), [arb(k * 10**13) for k in range(64)]))
