"""The merged lower side of the PLD accountant (certdp.notions.pld_merged,
certdp.enclose.fixed_pair): the fixed-point invariants against exact integer arithmetic, and the
lower end against closed forms in mpmath at 50 digits over hypothesis-drawn settings."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import mpmath as mp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from certdp.enclose.fixed import FixedPoly
from certdp.enclose.fixed_pair import FixedPair, _prune_pair, merge_two, pair_power
from certdp.notions import pld as pld_mod
from certdp.notions.pld import LatticeBounds, pld_bounds
from certdp.notions.pld_grid import lattice_for
from certdp.pairs import Gaussian, SubsampledGaussian, compose


def _pair(offset: int, p: list[int], q: list[int], bits: int, err: int = 0) -> FixedPair:
    return FixedPair(
        FixedPoly.from_units(offset, p, bits), FixedPoly(offset, FixedPoly.from_units(0, q, bits).poly, bits, err)
    )


def _conv(a: list[int], b: list[int]) -> list[int]:
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out


def test_merge_two_sums_pairs_of_indices_in_both_arrays() -> None:
    rng = random.Random(5)
    for _ in range(50):
        off = rng.randint(-7, 7)
        n = rng.randint(1, 12)
        p = [rng.randint(0, 99) for _ in range(n)]
        q = [rng.randint(0, 99) for _ in range(n)]
        got = merge_two(_pair(off, p, q, 8, err=3))
        for arr, fp in ((p, got.p), (q, got.q)):
            want: dict[int, int] = {}
            for i, v in enumerate(arr):
                want[(off + i) // 2] = want.get((off + i) // 2, 0) + v
            have = {fp.offset + i: v for i, v in enumerate(fp.coeffs())}
            for k in set(want) | set(have):
                assert want.get(k, 0) == have.get(k, 0)
        assert got.q.err == 3


def test_pruning_drops_the_same_indices_from_both_arrays() -> None:
    rng = random.Random(9)
    for _ in range(50):
        n = rng.randint(2, 20)
        p = [rng.choice([0, 1, 2, 50]) for _ in range(n)]
        p[rng.randrange(n)] = 1000
        q = [rng.randint(0, 9) for _ in range(n)]
        got = _prune_pair(_pair(3, p, q, 16), allowance=rng.randint(0, 6), weight=1)
        lo = got.offset - 3
        kept_p = got.p.coeffs()
        assert p[lo : lo + len(kept_p)] == kept_p
        kept_q = got.q.coeffs()
        assert q[lo : lo + len(kept_q)] == kept_q  # the same indices (or fewer at the top)
        assert len(kept_q) <= max(len(kept_p), 1)


def _product_hockey(p: list[int], q: list[int], n: int, c: Fraction) -> Fraction:
    """sup over events of P^n(S) - c Q^n(S) in the product space of n coordinates (units of p and q
    taken as masses), by brute force over the tuples: the positive part of each outcome."""
    num, den = c.numerator, c.denominator
    total = 0
    for tup in itertools.product(range(len(p)), repeat=n):
        a = b = 1
        for i in tup:
            a *= p[i]
            b *= q[i]
        total += max(0, den * a - num * b)
    return Fraction(total, den)


@given(st.integers(1, 9), st.integers(0, 2**31), st.integers(2, 6))
@settings(max_examples=40, deadline=None)
def test_power_gives_a_lower_hockey_stick_of_the_exact_power(n: int, seed: int, length: int) -> None:
    # without merging or pruning the index map is the plain sum. p <= exact P^n pointwise; indices
    # past a partial power's last nonzero unit of p leave both arrays: a restriction to an event of
    # the n coordinates (every partial sum within its kept range), so for every c and every start
    # j, sum_{k >= j} (p_k - c q_k) - c q_err (units 2^-bits) is P^n(S) - c Q^n(S) or less for an
    # event S, hence at most the product space's hockey-stick divergence. That is the exact
    # reference: with arbitrary arrays the index is not the likelihood ratio, so the hockey-stick of
    # the index-sum law can be smaller (n = 5, seed 10715243, length 5 drew such a case); for a PLD,
    # whose index is the privacy loss, the two coincide
    assume(length**n <= 4096)
    rng = random.Random(seed)
    bits = 20
    p = [rng.randint(0, 2**bits // length) for _ in range(length)]
    q = [rng.randint(0, 2**bits // length) for _ in range(length)]
    got, scale = pair_power(_pair(0, p, q, bits), n, None, 0, None, lambda c, ln: 24)
    assert scale == 1 and got.offset == 0
    ep = p
    for _ in range(n - 1):
        ep = _conv(ep, p)
    unit = Fraction(1, 2**got.bits)
    exact_p = [Fraction(v, 2 ** (bits * n)) for v in ep]
    cp = got.p.coeffs() + [0] * len(ep)
    cq = got.q.coeffs() + [0] * len(ep)
    for k in range(len(ep)):
        assert cp[k] * unit <= exact_p[k]
    for c in (Fraction(1, 3), Fraction(1), Fraction(2), Fraction(7)):
        exact = _product_hockey(p, q, n, c) / 2 ** (bits * n)
        for j in range(len(ep)):
            bound = (sum(cp[j : len(ep)]) - c * (sum(cq[j : len(ep)]) + got.q.err)) * unit
            assert bound <= exact


def test_the_restricted_power_of_a_drawn_pair_is_below_the_product_space_divergence() -> None:
    """The example hypothesis drew (n = 5, seed 10715243, length 5): its bound at c = 1/3 exceeds
    the index-sum law's hockey-stick by 7 units, and lies below the product space's."""
    rng = random.Random(10715243)
    p = [rng.randint(0, 2**20 // 5) for _ in range(5)]
    q = [rng.randint(0, 2**20 // 5) for _ in range(5)]
    got, _ = pair_power(_pair(0, p, q, 20), 5, None, 0, None, lambda c, ln: 24)
    c = Fraction(1, 3)
    bound = (sum(got.p.coeffs()) - c * (sum(got.q.coeffs()) + got.q.err)) / Fraction(2**got.bits)
    ep, eq = p, q
    for _ in range(4):
        ep, eq = _conv(ep, p), _conv(eq, q)
    index_law = sum(max(Fraction(0), a - c * b) for a, b in zip(ep, eq, strict=True)) / Fraction(2**100)
    assert index_law < bound <= _product_hockey(p, q, 5, c) / Fraction(2**100)


def _gauss_delta(mu: mp.mpf, eps: mp.mpf) -> mp.mpf:
    # delta of (N(mu, 1), N(0, 1)) at eps: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)


@given(
    st.sampled_from(["0.5", "1", "2", "4"]),
    st.integers(1, 64),
    st.sampled_from([Fraction(1, 2**8), Fraction(1, 2**10), Fraction(3, 2**11)]),
    st.sampled_from(["0.1", "0.5", "1", "2"]),
)
@settings(max_examples=25, deadline=None)
def test_merged_lower_delta_is_below_the_gaussian_closed_form(sigma: str, n: int, h: Fraction, eps: str) -> None:
    # n Gaussian steps of sensitivity 1 compose to one with mu = sqrt(n)/sigma: delta in mpmath
    mp.mp.dps = 50
    pair = Gaussian(sigma)
    bounds = LatticeBounds(pair, n, lattice_for(pair, h, 60), Fraction(1, 2**90), lower="merged")
    low = bounds.delta("lower", Fraction(eps))
    up = bounds.delta("upper", Fraction(eps))
    exact = _gauss_delta(mp.sqrt(n) / mp.mpf(sigma), mp.mpf(eps))
    assert mp.mpf(low.upper().mid().str(40, radius=False)) <= exact
    assert exact <= mp.mpf(up.upper().mid().str(40, radius=False))
    # second order: within a few (n h^2) of the true delta, relative to delta + 1e-12
    assert mp.mpf(low.lower().mid().str(40, radius=False)) >= exact * (1 - 40 * n * float(h) ** 2) - mp.mpf(1e-12)


def _subsampled_delta_one_step(q: mp.mpf, sigma: mp.mpf, eps: mp.mpf) -> mp.mpf:
    # remove: P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2); P - e^eps Q > 0 iff x > x0
    c = mp.e**eps
    if c <= 1 - q:
        return 1 - c  # P - cQ > 0 everywhere: sum (1 - c) over the whole space... not reached here
    x0 = sigma**2 * mp.log((c - 1 + q) / q) + mp.mpf(1) / 2
    tail_q = mp.ncdf(-x0 / sigma)
    tail_p = (1 - q) * tail_q + q * mp.ncdf(-(x0 - 1) / sigma)
    return tail_p - c * tail_q


@given(
    st.sampled_from(["0.001", "0.01", "0.1", "0.5", "1"]),
    st.sampled_from(["0.5", "0.8", "1.5", "4"]),
    st.sampled_from(["0.01", "0.3", "1", "2.5"]),
)
@settings(max_examples=25, deadline=None)
def test_merged_lower_delta_of_one_subsampled_step_against_mpmath(q: str, sigma: str, eps: str) -> None:
    mp.mp.dps = 50
    pair = SubsampledGaussian(q, sigma, "remove")
    bounds = LatticeBounds(pair, 1, lattice_for(pair, Fraction(1, 2**12), 60), Fraction(1, 2**90), lower="merged")
    low = bounds.delta("lower", Fraction(eps))
    exact = _subsampled_delta_one_step(mp.mpf(q), mp.mpf(sigma), mp.mpf(eps))
    assert mp.mpf(low.upper().mid().str(40, radius=False)) <= exact
    # one cell straddles eps: it loses at most about h of its mass (2^-12 here)
    # (the lattice ends at tails of 2^-60: a delta below that is not resolved)
    assert mp.mpf(low.lower().mid().str(40, radius=False)) >= exact * (1 - 1e-3) - mp.mpf(2) ** -55


def test_merged_lower_end_beats_the_balanced_one_on_the_cifar_row() -> None:
    # the same lattice (h = 7 2^-16, offset 0) for both lower sides; eps(1e-5) of CIFAR-10's remove
    pair = SubsampledGaussian("256/50000", "1.1", "remove")
    lat = lattice_for(pair, Fraction(7, 2**16), 60)
    d = Fraction(1, 10**5)
    floor = Fraction(1, 2**90)
    merged = LatticeBounds(pair, 9766, lat, floor, lower="merged")
    balanced = LatticeBounds(pair, 9766, lat, floor)
    up = merged.eps("upper", d)
    lo_m, lo_b = merged.eps("lower", d), balanced.eps("lower", d)
    assert lo_b < lo_m < up
    assert (up - lo_m) / up < Fraction(1, 10**4)


def test_the_merged_switch_meets_the_default_width_without_a_lower_lattice(monkeypatch) -> None:
    monkeypatch.setattr(pld_mod, "LOWER_SIDE", "merged")
    res = pld_bounds(compose(SubsampledGaussian("0.01", "0.8", "remove"), 500), delta=Fraction(1, 10**5))
    enc = res.enclosure
    assert (enc.upper - enc.lower) / enc.upper <= Fraction(1, 10**4)
    assert "lower_lattice" not in res.grid["remove"]  # type: ignore[operator]
    # it contains the balanced default's enclosure's overlap: both are proved
    monkeypatch.setattr(pld_mod, "LOWER_SIDE", "balanced")
    other = pld_bounds(compose(SubsampledGaussian("0.01", "0.8", "remove"), 500), delta=Fraction(1, 10**5))
    assert max(enc.lower, other.enclosure.lower) <= min(enc.upper, other.enclosure.upper)


def test_a_delta_query_at_an_eps_past_the_float_range_answers() -> None:
    # attack review: the merged side's units hint took float(eps) and overflowed at eps = 1e400
    res = pld_bounds(Gaussian("1"), eps=Fraction(10**400))
    assert res.enclosure.lower == 0 and 0 <= res.enclosure.upper < Fraction(1, 10**30)
