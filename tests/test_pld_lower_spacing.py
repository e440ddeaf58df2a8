"""The lower side's own spacing (docs/math.md §10, "The lower side's own spacing"): below some h
the balancing of the lower bound leaves much unbalanced next to the subsampled Gaussian's hard
edge log(1 - q), for every offset; pld_bounds then puts the lower side on a coarser lattice that
balances. Checked: the choice itself (it moves only when the imbalance is large), and that the
resulting enclosure is sound against the independent float reference and tight."""

from __future__ import annotations

from fractions import Fraction

import pytest

from certdp.enclose import workprec
from certdp.notions import pld as pld_mod
from certdp.notions.accountant import PLD_PREC
from certdp.notions.pld import LOWER_IMBALANCE, _lower_spacing, pld_bounds
from certdp.notions.pld_lattice import lattice_for, tuned_offset
from certdp.pairs import SubsampledGaussian, compose
from tests import pld_reference as ref


@pytest.fixture(autouse=True)
def _balanced_lower_side(monkeypatch: pytest.MonkeyPatch) -> None:
    # the lower side's own spacing belongs to the balancing; eps queries take the merged lower side
    # on wide lattices by default (certdp.notions.pld.LOWER_SIDE)
    monkeypatch.setattr(pld_mod, "LOWER_SIDE", "balanced")


def _imbalance_per_h2(pair: SubsampledGaussian, h: Fraction) -> float:
    with workprec(PLD_PREC):
        _, imbalance = tuned_offset(pair, h, base=lattice_for(pair, h, 40, max_cells=1 << 40))
    return imbalance / float(h) ** 2


def test_a_balanced_spacing_is_kept() -> None:
    # CIFAR-10's one step balances at its refined spacing: nothing to move
    pair = SubsampledGaussian("256/50000", "1.1", "remove")
    h = Fraction(11, 2**17)
    assert _imbalance_per_h2(pair, h) <= LOWER_IMBALANCE
    with workprec(PLD_PREC):
        assert _lower_spacing(pair, h)[0] == h


def test_an_unbalanced_spacing_moves_to_a_coarser_balanced_one() -> None:
    pair = SubsampledGaussian("0.001", "0.8", "remove")
    h = Fraction(1, 2**15)
    assert _imbalance_per_h2(pair, h) > LOWER_IMBALANCE  # the breakdown this rule is for
    with workprec(PLD_PREC):
        hl, offset = _lower_spacing(pair, h)
    assert h < hl <= 2 * h and 0 <= offset < hl
    assert _imbalance_per_h2(pair, hl) <= LOWER_IMBALANCE


def test_the_enclosure_with_a_lower_lattice_of_its_own_is_sound_and_tight(monkeypatch: pytest.MonkeyPatch) -> None:
    q, sigma, steps, delta = "0.001", "0.8", 10_000, "1e-8"
    pair = compose(SubsampledGaussian(q, sigma, "remove"), steps)
    with workprec(PLD_PREC):
        res = pld_bounds(pair, delta=delta, h=Fraction(1, 2**15))
    grid = res.grid["remove"]
    assert "lower_lattice" in grid and Fraction(grid["lower_lattice"]["h"]) > Fraction(1, 2**15)
    lo, up = res.enclosure.lower, res.enclosure.upper
    # the single lattice at 2^-15 gave [1.4765346, 1.4767350] (rel. width 1.4e-4) before the rule
    assert up - lo <= Fraction(1, 10**4) * up
    r = ref.reference_eps(float(q), float(sigma), steps, float(delta), "remove", rel_target=5e-5, max_levels=3)
    assert Fraction(r.lo) <= up and lo <= Fraction(r.hi), (float(lo), float(up), r)
    # without the rule the lower end is the single lattice's, looser by more than the width
    monkeypatch.setattr(pld_mod, "LOWER_IMBALANCE", float("inf"))
    with workprec(PLD_PREC):
        old = pld_bounds(pair, delta=delta, h=Fraction(1, 2**15))
    assert "lower_lattice" not in old.grid["remove"] and old.enclosure.lower < lo
