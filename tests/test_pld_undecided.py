"""Issue 34 item 5: a lattice loss whose ball cannot be placed against eps still counts in the
upper sum (it was dropped: the upper bound could miss c_i (1 - e^{eps - l_i}), ~1e-38)."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp

from certdp.enclose import Enclosure, to_ball, workprec
from certdp.notions.pld import Composed


def _composed(c: list[Fraction], h: Fraction, shift: Fraction) -> Composed:
    s0, s1 = [], []
    for i in range(len(c)):
        s0.append(sum((to_ball(x) for x in c[i:]), to_ball(0)))
        s1.append(sum((to_ball(x) * to_ball(-(shift + h * k)).exp() for k, x in enumerate(c) if k >= i), to_ball(0)))
    return Composed(h, shift, 0, s0, s1, to_ball(0))


def test_an_undecided_loss_is_counted_in_the_upper_sum() -> None:
    # losses 1/3 and 4/3 (not dyadic: their balls have a radius at 64 bits); eps a hair below 4/3,
    # closer than the radius, so the ball of loss 4/3 straddles eps
    h, shift, c = Fraction(1), Fraction(1, 3), [Fraction(1, 2), Fraction(1, 2)]
    eps = Fraction(4, 3) - Fraction(1, 10**30)
    with workprec(64):
        comp = _composed(c, h, shift)
        assert not to_ball(comp.loss(1)) > to_ball(eps)  # undecided at this precision: the case
        upper = comp.delta_upper(to_ball(eps))
    with mp.workdps(60):
        exact = mp.mpf(1) / 2 * (1 - mp.exp(mp.mpf(eps.numerator) / eps.denominator - mp.mpf(4) / 3))
    assert exact > 0
    assert Fraction(mp.nstr(exact, 50)) * (1 - Fraction(1, 10**40)) <= Enclosure.from_ball(upper).upper
