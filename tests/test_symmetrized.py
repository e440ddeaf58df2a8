"""The symmetric pair of a subsampled pair (certdp.pairs.symmetrized; docs/math.md §12.3, "Every
order, and composition"), the upper end of sampling without (and with) replacement.

Independent references: a float loss distribution of the subsampled Gaussian pair (numpy, a fine
grid of the output, losses rounded to a lattice of 1e-3, composed by FFT), written here and not
sharing certdp's lattice code. From it:

* the n-fold compositions that an adaptive analyst can reach by flipping the record's contribution
  (k steps like (P^, Q^), n - k like (Q^, P^)) are all below certdp's composed upper end;
* the symmetric pair built from the float remove distribution matches certdp's upper end, and is
  clearly above the remove pair's own composition (so the remove pair alone is not a proved bound
  for a composition, which is why the symmetric pair is used).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import norm

from certdp.enclose import to_ball, workprec
from certdp.errors import InvalidArgument
from certdp.integrations.dp_events import account_event
from certdp.notions.accountant import delta as delta_of
from certdp.pairs import compose
from certdp.pairs.subsampled import SubsampledGaussian
from certdp.pairs.subsampled_laplace import SubsampledLaplace
from certdp.pairs.symmetrized import Symmetrized

de = pytest.importorskip("dp_accounting.dp_event")

H = 1e-3  # float reference lattice
ETA, SCALE, STEPS = 0.05, 0.5, 20  # rate, noise of the unit-shift pair


def _pmf(direction: str):
    x = np.linspace(-14 * SCALE - 1, 14 * SCALE + 2, 1_000_001)
    dx = x[1] - x[0]
    p = (1 - ETA) * norm.pdf(x, 0, SCALE) + ETA * norm.pdf(x, 1, SCALE)
    q = norm.pdf(x, 0, SCALE)
    loss, w = (np.log(p / q), p * dx) if direction == "remove" else (np.log(q / p), q * dx)
    idx = np.round(loss / H).astype(int)
    pmf = np.bincount(idx - idx.min(), weights=w)
    return idx.min(), pmf / pmf.sum()


def _symmetric(off, pmf):
    ks = off + np.arange(len(pmf))
    kp, wp = ks[ks > 0], pmf[ks > 0]
    top = kp.max()
    out = np.zeros(2 * top + 1)
    out[top + kp] = wp
    out[top - kp] = wp * np.exp(-kp * H)
    out[top] += 1 - wp.sum() - (wp * np.exp(-kp * H)).sum()
    return -top, out


def _compose(parts):
    off, pmf = 0, np.array([1.0])
    for o, p in parts:
        n = len(pmf) + len(p) - 1
        size = 1 << int(np.ceil(np.log2(n)))
        pmf = np.maximum(np.fft.irfft(np.fft.rfft(pmf, size) * np.fft.rfft(p, size), size)[:n], 0)
        off += o
    return off, pmf


def _delta(off, pmf, eps):
    loss = (off + np.arange(len(pmf))) * H
    return float(np.sum(pmf * np.maximum(0, 1 - np.exp(np.minimum(eps - loss, 50)))))


@pytest.fixture(scope="module")
def certdp_upper():
    pair = Symmetrized(SubsampledGaussian(Fraction(1, 20), Fraction(1, 2), "remove"))
    return {e: delta_of(compose([(pair, STEPS)]), Fraction(e)).enclosure for e in (0, 1)}


@pytest.mark.slow
def test_adaptive_flips_stay_below_the_composed_upper_end(certdp_upper) -> None:
    remove, add = _pmf("remove"), _pmf("add")
    for eps in (0, 1):
        upper = float(certdp_upper[eps].upper)
        for k in (0, 5, 10, 15, 20):
            ref = _delta(*_compose([remove] * k + [add] * (STEPS - k)), eps)
            assert ref <= upper * (1 + 1e-3) + 1e-6, (eps, k, ref, upper)


@pytest.mark.slow
def test_the_symmetric_pair_matches_an_independent_construction(certdp_upper) -> None:
    remove = _pmf("remove")
    sym = _compose([_symmetric(*remove)] * STEPS)
    pure = _compose([remove] * STEPS)
    for eps in (0, 1):
        enc = certdp_upper[eps]
        ref = _delta(*sym, eps)
        assert abs(ref - float(enc.upper)) <= 2e-3 * ref, (eps, ref, float(enc.lower), float(enc.upper))
        # the remove pair's own composition is far below: it is not the upper end
        assert _delta(*pure, eps) < 0.9 * float(enc.lower)


def test_one_step_keeps_the_curve_at_eps_at_least_0() -> None:
    for base in (
        SubsampledGaussian(Fraction(1, 20), Fraction(1, 2), "remove"),
        SubsampledLaplace(Fraction(1, 20), Fraction(1, 2), "remove"),
    ):
        sym = Symmetrized(base)
        with workprec(128):
            for ell in (Fraction(0), Fraction(1, 3), Fraction(5, 2)):
                ps, qs = sym.loss_tail(to_ball(ell))
                pb, qb = base.loss_tail(to_ball(ell))
                assert ps.overlaps(pb) and qs.overlaps(qb)
            # mirrored below 0: P_S(L > -l) = 1 - Q(L >= l)
            ps, qs = sym.loss_tail(to_ball(Fraction(-1, 3)))
            pb, qb = base.loss_tail(to_ball(Fraction(1, 3)))
            assert ps.overlaps(1 - qb) and qs.overlaps(1 - pb)
    with pytest.raises(InvalidArgument, match="one direction"):
        Symmetrized(SubsampledGaussian(Fraction(1, 20), Fraction(1, 2), "both"))


@pytest.mark.slow
def test_sampling_without_replacement_is_bracketed_by_the_two_pairs() -> None:
    """The event's lower end is the remove pair's composition (attained), its upper end the
    symmetric pair's: at 20 steps they differ, and both are proved."""
    event = de.SelfComposedDpEvent(de.SampledWithoutReplacementDpEvent(40, 2, de.GaussianDpEvent(1.0)), STEPS)
    ans = account_event(event, eps=Fraction(0), relation="replace_one")
    base = SubsampledGaussian(Fraction(1, 20), Fraction(1, 2), "remove")
    pure = delta_of(compose([(base, STEPS)]), Fraction(0)).enclosure
    assert ans.sides == "two-sided" and "symmetric pair" in ans.reason
    assert ans.lower <= pure.upper and pure.lower <= ans.upper
    assert ans.upper > Fraction(5, 4) * pure.upper  # 0.3528 against 0.2735
