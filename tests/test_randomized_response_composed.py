"""Composed randomized response against brute-force sums over the outcome counts (mpmath, 50
digits): the lattice enclosure of delta(eps) contains the exact value and is tight. Regression:
the loss-0 outcomes of replace_one were undecided at the lattice point 0, which made the composed
delta upper end 2218 at 10 steps (noise 1/2, 10 buckets)."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.enclose import to_ball, workprec
from certdp.notions.pld import pld_bounds
from certdp.pairs import compose
from certdp.pairs.randomized_response import RandomizedResponse


def brute_delta(pair: RandomizedResponse, steps: int, eps: Fraction) -> mp.mpf:
    """sum over the multiset of outcomes of P (1 - e^{eps - L})_+, L the summed losses."""
    mp.mp.dps = 50
    atoms = [(mp.mpf(p.numerator) / p.denominator, mp.mpf(q.numerator) / q.denominator) for p, q in pair.masses()]
    # the composed P-pmf of the loss, keyed by the count of each outcome (exact multinomials)
    dist = {(): mp.mpf(1)}
    for _ in range(steps):
        nxt: dict[tuple[int, ...], mp.mpf] = {}
        for key, w in dist.items():
            for i, (p, _q) in enumerate(atoms):
                k = tuple(sorted((*key, i)))
                nxt[k] = nxt.get(k, mp.mpf(0)) + w * p
        dist = nxt
    e = mp.mpf(eps.numerator) / eps.denominator
    total = mp.mpf(0)
    for key, w in dist.items():
        loss = mp.fsum(mp.log(atoms[i][0] / atoms[i][1]) for i in key)
        if loss > e:
            total += w * (1 - mp.exp(e - loss))
    return total


@settings(max_examples=12, deadline=None)
@given(
    noise=st.sampled_from([Fraction(1, 4), Fraction(1, 2), Fraction(9, 10)]),
    buckets=st.integers(2, 12),
    steps=st.integers(1, 8),
    eps=st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1), Fraction(2)]),
)
def test_composed_replace_one_delta_contains_brute_force(
    noise: Fraction, buckets: int, steps: int, eps: Fraction
) -> None:
    pair = RandomizedResponse(noise, buckets, "replace_one")
    with workprec(128):
        res = pld_bounds(compose(pair, steps), eps=eps)
    exact = brute_delta(pair, steps, eps)
    lo, up = res.enclosure.lower, res.enclosure.upper
    assert mp.mpf(lo.numerator) / lo.denominator <= exact <= mp.mpf(up.numerator) / up.denominator
    assert up - lo <= Fraction(1, 10**3)  # tight: the atoms cost first order in h only


def test_loss_zero_outcomes_are_decided_at_the_lattice_point_zero() -> None:
    pair = RandomizedResponse(Fraction(1, 2), 10, "replace_one")
    with workprec(128):
        p_tail, q_tail = pair.loss_tail(to_ball(0))
    # above 0: only the outcome the first record favours (mass 0.55 under P, 0.05 under Q), to
    # the working precision (it was the ball [+/- 0.951] before)
    assert float(p_tail.rad()) < 1e-15 and float(q_tail.rad()) < 1e-15
    assert abs(float(p_tail.mid()) - 0.55) < 1e-15 and abs(float(q_tail.mid()) - 0.05) < 1e-15
