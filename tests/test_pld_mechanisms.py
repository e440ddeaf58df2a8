"""The lattice (PLD) bounds beyond the Gaussians (issue 15): Laplace (a continuous loss with two
atoms), discrete Laplace and discrete Gaussian (purely atomic losses, put on a lattice just below
their atoms), and heterogeneous compositions (a product of lattice pmfs).

References are independent of certdp: hockey-stick curves E_P[(1 - e^{eps - L})_+] of the exact
loss distributions in mpmath at 50 digits (brute-force convolution of the atoms; for Laplace, the
atoms plus mpmath quadrature of the continuous part).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.cli import main
from certdp.enclose import workprec
from certdp.errors import InvalidArgument
from certdp.notions.pld import PldResult, aligned_spacing, common_grid, default_spacing, directions, pld_bounds
from certdp.pairs import Composition, DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, SubsampledGaussian
from certdp.pairs.base import LossGrid

DPS = 50


def _mp(x: Fraction | int | str) -> mp.mpf:
    x = Fraction(x)
    return mp.mpf(x.numerator) / x.denominator


def _ends(enc) -> tuple[mp.mpf, mp.mpf]:
    return _mp(enc.lower), _mp(enc.upper)


# -- exact loss distributions (P-masses keyed by exact loss) --------------------------------


def _dl_atoms(a: Fraction, r: int) -> dict[Fraction, mp.mpf]:
    """P = DL centred at r, Q at 0, masses (1 - lam)/(1 + lam) lam^|x|: summed over outputs x in
    [-60/a - r, 60/a + 2r] (the rest is below 1e-50 of the total), each with its loss."""
    lam = mp.e ** (-_mp(a))
    c = (1 - lam) / (1 + lam)
    out: dict[Fraction, mp.mpf] = {}
    span = int(130 / a) + 2 * r
    for x in range(-span, span + r):
        loss = a * (abs(x) - abs(x - r))
        out[loss] = out.get(loss, mp.mpf(0)) + c * lam ** abs(x - r)
    return out


def _dg_atoms(sigma: Fraction, r: int) -> dict[Fraction, mp.mpf]:
    """P = DG centred at r, Q at 0, over |x| <= 40 sigma + r (the rest is below e^-800)."""
    s = _mp(sigma)
    span = int(40 * sigma) + 2 * r + 2
    total = mp.fsum(mp.e ** (-(mp.mpf(z) ** 2) / (2 * s * s)) for z in range(-span, span + 1))
    out: dict[Fraction, mp.mpf] = {}
    for x in range(-span + r, span + r + 1):
        loss = Fraction(r * (2 * x - r)) / (2 * sigma**2)
        out[loss] = out.get(loss, mp.mpf(0)) + mp.e ** (-(mp.mpf(x - r) ** 2) / (2 * s * s)) / total
    return out


def _convolve(a: dict[Fraction, mp.mpf], b: dict[Fraction, mp.mpf]) -> dict[Fraction, mp.mpf]:
    out: dict[Fraction, mp.mpf] = {}
    for la, pa in a.items():
        for lb, pb in b.items():
            out[la + lb] = out.get(la + lb, mp.mpf(0)) + pa * pb
    return out


def _composed(parts: list[tuple[dict[Fraction, mp.mpf], int]]) -> dict[Fraction, mp.mpf]:
    acc = {Fraction(0): mp.mpf(1)}
    for atoms, n in parts:
        for _ in range(n):
            acc = _convolve(acc, atoms)
    return acc


def _delta_atoms(atoms: dict[Fraction, mp.mpf], eps: mp.mpf) -> mp.mpf:
    return mp.fsum(p * (1 - mp.e ** (eps - _mp(loss))) for loss, p in atoms.items() if _mp(loss) > eps)


def _laplace_delta(u: mp.mpf, eps: mp.mpf, steps: int) -> mp.mpf:
    """delta(eps) of 1 or 2 Laplace steps with u = |s|/b: L has atoms e^{-u}/2 at -u and 1/2 at u
    and density f(l) = e^{-(u - l)/2}/4 on (-u, u) (the derivative of P(L > l))."""
    atoms = {-u: mp.e ** (-u) / 2, u: mp.mpf(1) / 2}

    def f(x: mp.mpf) -> mp.mpf:
        return mp.e ** (-(u - x) / 2) / 4

    def g(x: mp.mpf) -> mp.mpf:
        return 1 - mp.e ** (eps - x) if x > eps else mp.mpf(0)

    def one_cont(c: mp.mpf) -> mp.mpf:  # int_{-u}^{u} f(l) g(c + l) dl
        lo = max(-u, eps - c)
        return mp.quad(lambda x: f(x) * g(c + x), [lo, u]) if lo < u else mp.mpf(0)

    if steps == 1:
        return sum(m * g(a) for a, m in atoms.items()) + one_cont(mp.mpf(0))
    total = sum(ma * mb * g(a + b) for a, ma in atoms.items() for b, mb in atoms.items())
    total += 2 * sum(m * one_cont(a) for a, m in atoms.items())

    def inner(x1: mp.mpf) -> mp.mpf:  # int f(x2) g(x1 + x2) dx2 over x2 > eps - x1, in closed form
        lo = max(-u, eps - x1)
        if lo >= u:
            return mp.mpf(0)
        first = 2 * (1 - mp.e ** ((lo - u) / 2))
        second = mp.e ** (eps - x1 - u / 2) * 2 * (mp.e ** (-lo / 2) - mp.e ** (-u / 2))
        return (first - second) / 4

    cuts = sorted({-u, u, *(c for c in (eps - u, eps + u) if -u < c < u)})
    return total + mp.quad(lambda x: f(x) * inner(x), cuts)


def _assert_exact(
    pair: Composition, parts: Callable[[], list[tuple[dict[Fraction, mp.mpf], int]]], eps: Fraction
) -> PldResult:
    """delta(eps) of an atomic composition: the exact convolution of the atoms ``parts()`` (built
    at DPS digits: a callable, so that the reference is not formed at mpmath's default 15) lies in
    the enclosure, which is essentially exact (width <= 1e-8: the lattice is the atoms' grid)."""
    with workprec(128):
        res = pld_bounds(pair, eps=eps)
    with mp.workdps(DPS):
        ref = _delta_atoms(_composed(parts()), _mp(eps))
        low, up = _ends(res.enclosure)
        assert low - mp.mpf(10) ** -45 <= ref <= up + mp.mpf(10) ** -45, (res.enclosure, ref)
        assert up - low <= mp.mpf(10) ** -8, (res.enclosure, ref)
    return res


# -- soundness against the references --------------------------------------------------------

A_VALUES = [Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(3, 2)]
SIGMAS = [Fraction(7, 10), Fraction(1), Fraction(3, 2), Fraction(2)]


@settings(max_examples=8, deadline=None)
@given(
    st.sampled_from(A_VALUES),
    st.integers(1, 3),
    st.integers(1, 4),
    st.fractions(0, 3).map(lambda x: x.limit_denominator(64)),
)
def test_discrete_laplace_delta_contains_the_exact_convolution(a: Fraction, r: int, steps: int, eps: Fraction) -> None:
    """delta(eps) of n discrete Laplace steps: the exact convolution of the atoms lies in the
    enclosure, and the enclosure is tight (the lattice is the atoms' own grid)."""
    _assert_exact(Composition(((DiscreteLaplace(a, r), steps),)), lambda: [(_dl_atoms(a, r), steps)], eps)


@settings(max_examples=8, deadline=None)
@given(
    st.sampled_from(SIGMAS),
    st.integers(1, 2),
    st.integers(1, 3),
    st.fractions(0, 3).map(lambda x: x.limit_denominator(64)),
)
def test_discrete_gaussian_delta_contains_the_exact_convolution(
    sigma: Fraction, r: int, steps: int, eps: Fraction
) -> None:
    """delta(eps) of n discrete Gaussian steps against the brute-force convolution."""
    _assert_exact(Composition(((DiscreteGaussian(sigma, r), steps),)), lambda: [(_dg_atoms(sigma, r), steps)], eps)


@settings(max_examples=6, deadline=None)
@given(
    st.sampled_from([(1, 1), (2, 1), (3, 2), (1, Fraction(1, 2))]),
    st.integers(1, 2),
    st.fractions(0, 2).map(lambda x: x.limit_denominator(16)),
)
def test_laplace_delta_contains_quadrature(scale_shift: tuple, steps: int, eps: Fraction) -> None:
    """delta(eps) of one or two Laplace steps against mpmath (atoms and quadrature), with the
    relative width of a second-order lattice (the atoms sit just above lattice points)."""
    scale, shift = (Fraction(v) for v in scale_shift)
    pair = Composition(((Laplace(scale, shift), steps),))
    with workprec(128):
        enc = pld_bounds(pair, eps=eps).enclosure
    with mp.workdps(30):
        ref = _laplace_delta(_mp(shift / scale), _mp(eps), steps)
        low, up = _ends(enc)
        assert low - mp.mpf(10) ** -25 <= ref <= up + mp.mpf(10) ** -25, (enc, ref)
        # second order: h^2 = 2.4e-7 times the loss density (measured worst: 1.9e-6 relative at
        # u = 2/3, eps = 9/14, n = 1)
        assert up - low <= 2 * mp.mpf(10) ** -5 * max(ref, mp.mpf(10) ** -3), (enc, ref)


def test_discrete_epsilon_ends_are_a_sound_value_and_a_proved_violation() -> None:
    """eps at delta: the exact delta curve is <= delta at the upper end and > delta at the lower."""
    delta = Fraction(1, 10**5)
    pair = Composition(((DiscreteLaplace(Fraction(1, 2), 2), 6),))
    with workprec(128):
        enc = pld_bounds(pair, delta=delta).enclosure
    with mp.workdps(DPS):
        atoms = _composed([(_dl_atoms(Fraction(1, 2), 2), 6)])
        low, up = _ends(enc)
        assert _delta_atoms(atoms, up) <= _mp(delta) < _delta_atoms(atoms, low)
        assert up - low <= mp.mpf(10) ** -9 * up


@settings(max_examples=4, deadline=None)
@given(
    st.sampled_from(A_VALUES),
    st.sampled_from(SIGMAS),
    st.integers(1, 3),
    st.integers(1, 3),
    st.fractions(0, 4).map(lambda x: x.limit_denominator(32)),
)
def test_heterogeneous_atomic_composition_contains_the_exact_convolution(
    a: Fraction, sigma: Fraction, n1: int, n2: int, eps: Fraction
) -> None:
    """A discrete Laplace and a discrete Gaussian composed: their atoms share the grid of the gcd
    of spacings and anchor differences, so the product of the lattice pmfs is exact up to the gap."""
    pair = Composition(((DiscreteLaplace(a, 1), n1), (DiscreteGaussian(sigma, 1), n2)))
    res = _assert_exact(pair, lambda: [(_dl_atoms(a, 1), n1), (_dg_atoms(sigma, 1), n2)], eps)
    parts = res.grid["pair"]["parts"]  # type: ignore[index]
    assert [p["steps"] for p in parts] == [n1, n2] and len({p["h"] for p in parts}) == 1


def test_heterogeneous_composition_of_equal_losses_agrees_with_the_power() -> None:
    """Laplace(1, 1) then Laplace(2, 2) (the same loss law, u = 1) is two Laplace(1, 1) steps: the
    product of two lattice pmfs and the power of one must give overlapping enclosures, both with
    the quadrature value inside; a Gaussian with a Laplace (no common grid) stays sound."""
    with workprec(128):
        two = pld_bounds(Composition(((Laplace(1, 1), 2),)), eps=Fraction(1, 2)).enclosure
        mixed = pld_bounds(Composition(((Laplace(1, 1), 1), (Laplace(2, 2), 1))), eps=Fraction(1, 2)).enclosure
    with mp.workdps(30):
        ref = _laplace_delta(mp.mpf(1), mp.mpf(1) / 2, 2)
        for enc in (two, mixed):
            low, up = _ends(enc)
            assert low <= ref <= up and up - low <= mp.mpf(10) ** -6, (enc, ref)


def test_gaussian_with_laplace_is_sound() -> None:
    """A Gaussian part (no atoms) and a Laplace part share the spacing h: the upper end is at least
    each part's exact delta alone (composing more never lowers delta), and the enclosure is narrow."""
    h = Fraction(1, 2**8)
    with workprec(128):
        both = pld_bounds(Composition(((Gaussian(4, 1), 1), (Laplace(1, 1), 1))), eps=Fraction(1, 2), h=h).enclosure
    with mp.workdps(30):
        lap = _laplace_delta(mp.mpf(1), mp.mpf(1) / 2, 1)
        gau = mp.ncdf(mp.mpf(1) / 8 - 2) - mp.e ** (mp.mpf(1) / 2) * mp.ncdf(-mp.mpf(1) / 8 - 2)
        low, up = _ends(both)
        assert up >= max(lap, gau) and low <= 1
        assert up - low <= mp.mpf(10) ** -3, both


# -- the lattice choice ----------------------------------------------------------------------


def test_aligned_spacing_puts_points_just_below_the_atoms() -> None:
    """Every atom anchor + k d is atom_gap() spacings above a lattice point when the spacing
    divides d (atomic losses: the grid itself; a continuous part: d / ceil(d/h) <= h)."""
    h = Fraction(1, 2**11)
    with workprec(128):
        for grid in (LossGrid(Fraction(2, 3), Fraction(-1, 3), False), LossGrid(Fraction(2), Fraction(-1), True)):
            spacing, offset = aligned_spacing(grid, h, Fraction(4))
            assert spacing <= max(h, grid.spacing) and (grid.spacing / spacing).denominator == 1
            for k in range(-3, 4):
                atom = grid.anchor + k * grid.spacing
                assert 0 < (atom - offset) % spacing <= spacing / 2**64
        # atoms closer than h: the grid itself up to ATOMIC_CELLS cells, else a multiple of it
        spacing, _ = aligned_spacing(LossGrid(Fraction(1, 10**6), Fraction(0), True), h, Fraction(1, 100))
        assert spacing == Fraction(1, 10**6)
        spacing, _ = aligned_spacing(LossGrid(Fraction(1, 10**6), Fraction(0), True), h, Fraction(10))
        assert spacing > Fraction(1, 10**6) and (spacing * 10**6).denominator == 1 and spacing <= h


def test_common_grid_of_atomic_parts() -> None:
    """The gcd of spacings and anchor differences: DL(1, 1) (atoms -1, 1) and DG(1, 1) (atoms
    -1/2 + Z) share the grid -1 + (1/2) Z; with a pair without atoms there is none."""
    grid = common_grid([DiscreteLaplace(1, 1), DiscreteGaussian(1, 1)])
    assert grid is not None and grid.spacing == Fraction(1, 2) and grid.atomic
    assert common_grid([DiscreteLaplace(1, 1), Gaussian(1, 1)]) is None
    assert common_grid([DiscreteLaplace(1, 1)]) == DiscreteLaplace(1, 1).loss_grid()


def test_both_directions_turn_every_both_part() -> None:
    """A subsampled Gaussian with direction both inside a composition: one remove and one add
    composition, the other parts unchanged."""
    sg = SubsampledGaussian(Fraction(1, 100), 1, "both")
    comps = directions(Composition(((sg, 3), (Gaussian(2, 1), 2))))
    assert set(comps) == {"remove", "add"}
    for d, parts in comps.items():
        assert parts[0][0].direction == d and parts[0][1] == 3 and parts[1] == (Gaussian(2, 1), 2)
    assert set(directions(Composition(((Laplace(1, 1), 2),)))) == {"pair"}


def test_cli_pld_for_discrete_pairs_records_an_exact_lattice(capsys: pytest.CaptureFixture[str]) -> None:
    """certdp eps discrete-gaussian ... --via pld: the grid's h is the atoms' spacing, exactly
    (here 1/9 = r/sigma^2, written p/q), and the enclosure holds the exact convolution."""
    argv = "eps discrete-gaussian --sigma 3 --shift 1 --steps 3 --delta 1e-3 --via pld --json".split()
    assert main(argv) == 0
    rec = json.loads(capsys.readouterr().out)
    assert Fraction(rec["grid"]["pair"]["h"]) == Fraction(1, 9)
    with mp.workdps(DPS):
        atoms = _composed([(_dg_atoms(Fraction(3), 1), 3)])
        assert _delta_atoms(atoms, mp.mpf(rec["upper"])) <= mp.mpf("1e-3") < _delta_atoms(atoms, mp.mpf(rec["lower"]))


def test_the_default_spacing_refines_where_one_steps_losses_are_tiny() -> None:
    """q = 0.001, sigma = 2, 1000 steps, delta = 1e-8: at h = 2^-11 one step's lattice has ~150
    cells and eps is resolved to 16% only; the default (auto_h) halves h until the lattice has
    2048 cells, which must give a 50x narrower enclosure that lies inside the fixed-h one."""
    pair = Composition(((SubsampledGaussian(Fraction(1, 1000), 2, "remove"), 1000),))
    delta = Fraction(1, 10**8)
    with workprec(128):
        fixed = pld_bounds(pair, delta=delta, h=Fraction(1, 2**11))
        auto = pld_bounds(pair, delta=delta)
    assert Fraction(auto.grid["remove"]["h"]) < Fraction(1, 2**11)  # type: ignore[index]
    assert fixed.enclosure.lower <= auto.enclosure.lower <= auto.enclosure.upper <= fixed.enclosure.upper
    assert auto.enclosure.width * 50 <= fixed.enclosure.width
    assert auto.enclosure.width <= auto.enclosure.upper / 500


# -- regressions of the attack on the new mechanisms ------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"delta": Fraction(0)}, "delta"),
        ({"delta": Fraction(-1, 10)}, "delta"),
        ({"delta": Fraction(3, 2)}, "delta"),
        ({"eps": Fraction(-1)}, "eps"),
        ({"eps": Fraction(1), "h": Fraction(0)}, "h"),
        ({"eps": Fraction(1), "h": Fraction(-1, 100)}, "h"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs: dict, name: str) -> None:
    """delta outside (0, 1), eps < 0 and h <= 0 are refused up front (they crashed with
    ZeroDivisionError or a math domain error, or were silently accepted)."""
    with pytest.raises(InvalidArgument, match=f"^{name}="), workprec(128):
        pld_bounds(DiscreteLaplace(1, 1), **kwargs)


def test_tiny_delta_and_the_pure_dp_cap() -> None:
    """delta = 1e-40 at 128 bits: the +inf tail term is formed as -expm1(n log1p(-p_inf)) (it
    carried a 2^-128 radius that refused every delta below it), and the upper end of a loss with
    a largest value never exceeds the pure-DP eps = n D_inf (an atom's spill into the next cell
    had pushed it to 4.5 instead of 1.5)."""
    tiny = Fraction(1, 10**40)
    with workprec(128):
        dg = pld_bounds(Composition(((DiscreteGaussian(2, 1), 3),)), delta=tiny).enclosure
        dl = pld_bounds(Composition(((DiscreteLaplace(Fraction(1, 2), 1), 3),)), delta=tiny).enclosure
    assert dg.upper - dg.lower <= Fraction(1, 10**8)
    assert dl.upper <= Fraction(3, 2) and Fraction(3, 2) - dl.lower <= Fraction(1, 10**11)
    with mp.workdps(DPS):
        atoms = _composed([(_dg_atoms(Fraction(2), 1), 3)])
        assert _delta_atoms(atoms, _mp(dg.upper)) <= _mp(tiny) < _delta_atoms(atoms, _mp(dg.lower))


def test_close_atoms_and_tiny_laplace_shifts_stay_tight() -> None:
    """A discrete Gaussian with sigma = 300 (atoms 1/90000 apart, below h) is put on its own grid
    and is exact; a Laplace with u = 1e-4 (below h) gets a spacing below u, and its delta(0)
    = 1 - e^{-u/2} is enclosed tightly (it was [0, 7.5e-5] around 5e-5); delta lower ends are
    never below 0."""
    with workprec(128):
        dg = pld_bounds(DiscreteGaussian(300, 1), eps=Fraction(0)).enclosure
        lap = pld_bounds(Laplace(1, Fraction(1, 10**4)), eps=Fraction(0)).enclosure
        zero = pld_bounds(Laplace(1, 1), eps=Fraction(1)).enclosure
    with mp.workdps(DPS):
        ref = _delta_atoms(_dg_atoms(Fraction(300), 1), mp.mpf(0))
        assert _mp(dg.lower) <= ref <= _mp(dg.upper) and dg.width <= Fraction(1, 10**15)
        u = mp.mpf(1) / 10**4
        ref = -mp.expm1(-u / 2)  # delta(0) = TV of two Laplace laws = 1 - e^{-u/2}
        assert _mp(lap.lower) <= ref <= _mp(lap.upper) and _mp(lap.width) <= ref / 10**6
    assert zero.lower >= 0 and zero.upper == 0  # eps = u = D_inf: delta = 0 exactly


def test_atoms_next_to_a_gaussian_keep_the_lower_end_tight() -> None:
    """Discrete Laplace steps composed with Gaussian steps: the Gaussian part takes the atoms'
    grid spacing (<= h) with a tuned offset, so the atoms stay just above points and the lower end
    stays second order (it was 4e-4 low). Reference: E over the discrete Laplace loss of the
    Gaussian curve, delta(eps) = sum_a m_a [Phi(mu/2 - (eps - a)/mu) - e^{eps - a} Phi(-mu/2 - (eps - a)/mu)]."""
    pair = Composition(((DiscreteLaplace(Fraction(1, 2), 1), 3), (Gaussian(2, 1), 2)))
    with workprec(128):  # the lattice of the default spacing (the refinement would stop at 1e-4 relative)
        enc = pld_bounds(pair, eps=Fraction(0), h=default_spacing(pair)).enclosure
    with mp.workdps(DPS):
        mu = mp.sqrt(2) / 2
        atoms = _composed([(_dl_atoms(Fraction(1, 2), 1), 3)])

        def gauss(e: mp.mpf) -> mp.mpf:
            return mp.ncdf(mu / 2 - e / mu) - mp.e**e * mp.ncdf(-mu / 2 - e / mu)

        ref = mp.fsum(m * gauss(-_mp(a)) for a, m in atoms.items())
        assert _mp(enc.lower) <= ref <= _mp(enc.upper), (enc, ref)
        assert _mp(enc.width) <= ref * mp.mpf(10) ** -6, (enc, ref)


def test_tiny_q_and_tiny_delta_run_or_refuse_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Second attack round: at q = 1e-4 the default spacing (auto_h, 2^-15) made the offset search
    build a 140-bit lattice of more than 2^17 cells (exit 2); it now stays inside the base lattice
    and the enclosure holds the single-step value, which for one step is a Gaussian mixture's
    eps: checked here against a float reference of delta at the two ends. delta = 1e-400 crashed
    with OverflowError (1/delta as a float); it is now refused in one line."""
    import math

    from scipy.special import ndtr

    assert (
        main("eps subsampled-gaussian --q 1e-4 --sigma 1 --delta 1e-5 --direction remove --via pld --json".split()) == 0
    )
    rec = json.loads(capsys.readouterr().out)
    low, up = float(rec["lower"]), float(rec["upper"])
    assert 0 < low <= up <= low * 1.01

    def delta_remove(eps: float, q: float = 1e-4, s: float = 1.0) -> float:
        # remove: P = (1-q) N(0,s^2) + q N(1,s^2), Q = N(0,s^2); L > eps iff x > x(eps)
        x = s * s * math.log((math.exp(eps) - 1 + q) / q) + 0.5
        p_tail = (1 - q) * ndtr(-x / s) + q * ndtr(-(x - 1) / s)
        return p_tail - math.exp(eps) * ndtr(-x / s)

    assert delta_remove(up) <= 1e-5 * (1 + 1e-9) and delta_remove(low) >= 1e-5 * (1 - 1e-9)
    # the refinement's first lattice (4 x auto_h) fits and meets the default 1e-4; a fine explicit
    # spacing needs more than 2^17 cells and is refused in one line
    assert main("eps gaussian --sigma 1 --delta 1e-400 --via pld --json".split()) == 0
    rec = json.loads(capsys.readouterr().out)
    assert Fraction(rec["lower"]) <= Fraction(rec["upper"]) <= Fraction(rec["lower"]) * (1 + Fraction(1, 10**4))
    assert main("eps gaussian --sigma 1 --delta 1e-400 --via pld --h 1/4096 --json".split()) == 2
    assert "lattice cells" in capsys.readouterr().err
