"""Sampling without replacement (fixed batches, substitution): certdp's enclosure against brute force.

For a dataset of n one-dimensional records in [-1, 1] (norm bound C = 1) and its neighbour with
record 0 replaced, the output of one step is the mixture over all C(n, b) batches of the noise
centred at the batch sum. Its hockey-stick divergence delta(eps), in both orders, is computed by
mpmath quadrature at 50 digits, independently of certdp's pair (docs/math.md §12.3):

* on any dataset it is at most certdp's upper end (the pair dominates);
* on the extremal dataset (every other record -1, record 0 moved from -1 to +1) it is at least
  certdp's lower end (the pair is tight).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from certdp.integrations.dp_events import account_event

de = pytest.importorskip("dp_accounting.dp_event")


def _mp(x: Fraction | float) -> mpmath.mpf:
    """An exact rational as an mpmath number (at the working precision)."""
    x = Fraction(x)
    with mpmath.workdps(60):  # the value keeps these digits: comparisons with it are exact
        return mpmath.mpf(x.numerator) / x.denominator


def _densities(records: list[Fraction], b: int, noise: str, scale: Fraction, draws=itertools.combinations):
    """The output density of one step on ``records`` (mpmath function) and the batch sums, every
    batch of ``draws(range(n), b)`` equally likely (combinations: without replacement; a caller
    passes ordered draws with replacement)."""
    sums = [_mp(sum(records[i] for i in s)) for s in draws(range(len(records)), b)]
    s = _mp(scale)
    if noise == "gaussian":

        def kernel(x, m):
            return mpmath.npdf(x, m, s)
    else:

        def kernel(x, m):
            return mpmath.exp(-abs(x - m) / s) / (2 * s)

    def density(x):
        return mpmath.fsum(kernel(x, m) for m in sums) / len(sums)

    return density, sums


def _hockey(f, g, eps: Fraction, points: list, scale: Fraction) -> mpmath.mpf:
    """int (f - e^eps g)_+ over the line: the sign changes of f - e^eps g are located on a grid
    (plus the kinks ``points``) and refined by a bracketing root finder, so that every piece
    handed to the quadrature is smooth and of one sign (a kink inside a piece costs digits)."""
    e = mpmath.exp(_mp(eps))

    def h(x):
        return f(x) - e * g(x)

    # beyond 100 scales both densities are below e^-100 (Laplace) or far less (Gaussian)
    margin = 100 * _mp(scale) + 10
    lo, hi = min(points) - margin, max(points) + margin
    steps = int((hi - lo) / (_mp(min(scale, 1)) / 2)) + 1
    grid = sorted(set([lo, *points, hi] + [lo + (hi - lo) * k / steps for k in range(steps + 1)]))
    cuts = [lo, *points, hi]  # the kinks of the Laplace densities
    for a, c in itertools.pairwise(grid):
        ha, hc = h(a), h(c)
        if ha * hc < 0:
            cuts.append(mpmath.findroot(h, (a, c), solver="anderson"))
        elif ha == 0:  # a root on the grid itself
            cuts.append(a)
    cuts = sorted(set(cuts))
    total = mpmath.mpf(0)
    for a, c in itertools.pairwise(cuts):
        if h((a + c) / 2) > 0:
            total += mpmath.quad(h, [a, c])
    return total


def brute_delta(records: list[Fraction], new: Fraction, b: int, noise: str, scale: Fraction, eps: Fraction):
    """max over the two orders of delta(eps) between the dataset and its neighbour (record 0 -> new)."""
    with mpmath.workdps(50):
        f, s1 = _densities(records, b, noise, scale)
        g, s2 = _densities([new, *records[1:]], b, noise, scale)
        pts = sorted(set(s1 + s2))
        return max(_hockey(f, g, eps, pts, scale), _hockey(g, f, eps, pts, scale))


def certdp_delta(n: int, b: int, noise: str, scale: float, eps: Fraction):
    inner = de.GaussianDpEvent(scale) if noise == "gaussian" else de.LaplaceDpEvent(scale)
    ans = account_event(de.SampledWithoutReplacementDpEvent(n, b, inner), eps=eps, relation="replace_one")
    assert ans.status == "certified" and ans.sides == "two-sided"
    return ans


SETTINGS = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def batch_setting(draw):
    n = draw(st.integers(2, 6))
    b = draw(st.integers(1, min(3, n)))
    noise = draw(st.sampled_from(["gaussian", "laplace"]))
    scale = draw(st.sampled_from([0.75, 1.0, 1.5, 2.0]))
    eps = draw(st.sampled_from([Fraction(0), Fraction(1, 4), Fraction(1, 2), Fraction(1)]))
    return n, b, noise, scale, eps


@SETTINGS
@given(batch_setting(), st.data())
def test_any_dataset_is_below_the_upper_end(setting, data) -> None:
    n, b, noise, scale, eps = setting
    grid = st.sampled_from([Fraction(k, 4) for k in range(-4, 5)])
    records = [data.draw(grid) for _ in range(n)]
    new = data.draw(grid)
    ans = certdp_delta(n, b, noise, scale, eps)
    ref = brute_delta(records, new, b, noise, Fraction(scale), eps)
    with mpmath.workdps(60):
        assert ref <= _mp(ans.upper) + mpmath.mpf(10) ** -40


@SETTINGS
@given(batch_setting())
# b = n (q = 1): the upper end was the trivial 1 (CI's draw of 2026-12-06); a full batch is the
# inner mechanism itself, now exact
@example((2, 2, "laplace", 1.0, Fraction(0)))
@example((3, 3, "gaussian", 1.5, Fraction(1, 2)))
def test_the_extremal_dataset_reaches_the_lower_end(setting) -> None:
    n, b, noise, scale, eps = setting
    records = [Fraction(-1)] * n
    ans = certdp_delta(n, b, noise, scale, eps)
    ref = brute_delta(records, Fraction(1), b, noise, Fraction(scale), eps)
    with mpmath.workdps(60):
        assert _mp(ans.lower) - mpmath.mpf(10) ** -40 <= ref <= _mp(ans.upper) + mpmath.mpf(10) ** -40
    # and the enclosure is informative: the exact value pins it to a few percent
    assert ans.upper - ans.lower <= Fraction(5, 100) * ans.upper + Fraction(1, 10**6)


def test_full_batch_is_the_replacement_gaussian() -> None:
    # b = n samples every record: the Gaussian with a replacement shift of 2 (closed form)
    eps = Fraction(1, 2)
    ans = certdp_delta(4, 4, "gaussian", 2.0, eps)
    mu = mpmath.mpf(2) / 2  # shift 2C over sigma 2
    with mpmath.workdps(50):
        e = _mp(eps)
        exact = mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
        assert _mp(ans.lower) <= exact <= _mp(ans.upper)
