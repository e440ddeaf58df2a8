"""Curvature bounds sup_{[a,b]} K'' (certdp.pairs.curvature) and the rho search's curvature cover
(certdp.enclose.optimize.sup_cgf_ratio): soundness against brute force and quadrature, tightness,
and the near-Gaussian rho of issue 14 (generalized Gaussian, beta = 1.99)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import certdp
from certdp.enclose import DEFAULT_TARGET, Ball, refine, sup_cgf_ratio, to_ball, workprec
from certdp.notions.zcdp import rho_detail
from certdp.pairs.curvature import curvature_on, tilted_point
from tests import refs

# A finite loss distribution: atoms l_i with weights p_i (dyadic, so every ball below is exact).
Atoms = list[tuple[Fraction, Fraction]]


def _atoms() -> st.SearchStrategy[Atoms]:
    value = st.integers(-96, 96).map(lambda k: Fraction(k, 32))
    weight = st.integers(1, 64)

    def normalise(raw: list[tuple[Fraction, int]]) -> Atoms:
        total = sum(w for _, w in raw)
        return [(v, Fraction(w, total)) for v, w in raw]

    return st.lists(st.tuples(value, weight), min_size=2, max_size=5, unique_by=lambda x: x[0]).map(normalise)


def _ball_cgf(atoms: Atoms, t: Ball) -> Ball:
    return sum((to_ball(p) * (t * to_ball(v)).exp() for v, p in atoms), to_ball(0)).log()


def _ball_moment(atoms: Atoms, t: Ball, c: Ball) -> Ball:
    # (v - c) * (v - c), not ** 2: Arb's power of a ball that straddles 0 is nan
    terms = (to_ball(p) * (t * to_ball(v)).exp() * (to_ball(v) - c) * (to_ball(v) - c) for v, p in atoms)
    return sum(terms, to_ball(0))


def _mp_second_derivative(atoms: Atoms, t: mp.mpf) -> mp.mpf:
    """Var_t(L) of the finite distribution, from the definition (60 digits)."""
    ws = [mp.mpf(p.numerator) / p.denominator * mp.exp(t * mp.mpf(v.numerator) / v.denominator) for v, p in atoms]
    vs = [mp.mpf(v.numerator) / v.denominator for v, _ in atoms]
    z = mp.fsum(ws)
    m1 = mp.fsum(w * v for w, v in zip(ws, vs, strict=True)) / z
    return mp.fsum(w * (v - m1) ** 2 for w, v in zip(ws, vs, strict=True)) / z


def _point(atoms: Atoms, t: Fraction, centre: float):
    k = to_ball(0) if t == 0 else _ball_cgf(atoms, to_ball(t))
    return tilted_point(t, k, centre, lambda tt, c: _ball_moment(atoms, tt, c))


@settings(max_examples=60, deadline=None)
@given(
    _atoms(),
    st.integers(0, 160).map(lambda k: Fraction(k, 32)),
    st.integers(1, 64).map(lambda k: Fraction(k, 32)),
    st.floats(-3, 3),
)
def test_curvature_on_bounds_the_second_derivative_of_a_finite_loss(
    atoms: Atoms, a: Fraction, h: Fraction, centre: float
) -> None:
    """sup_{[a, a+h]} K'' <= curvature_on for finite distributions (any atoms, weights, and a
    centre for the moments that may be far off): K'' by its definition at 65 points of the
    interval (mpmath, 60 digits). A wrong sign in the tangents, the chord of log N or the recovery
    of M1 makes the bound fall below K'' at some point."""
    b = a + h
    with workprec(64):
        bound = curvature_on(_point(atoms, a, centre), _point(atoms, b, -centre))
    assert bound is not None
    with mp.workdps(refs.DPS):
        lo, width = mp.mpf(a.numerator) / a.denominator, mp.mpf(h.numerator) / h.denominator
        worst = max(_mp_second_derivative(atoms, lo + width * k / 64) for k in range(65))
        assert worst <= mp.mpf(bound.upper().str(30, radius=False)) * (1 + mp.mpf(10) ** -15)


def _pair_cases() -> list[tuple[certdp.PrivacyPair, object]]:
    gg = lambda beta, s: lambda t: refs.ggauss_tilted_variance(beta, s, t)  # noqa: E731
    st_ = lambda nu, s: lambda t: refs.student_t_tilted_variance(nu, s, t)  # noqa: E731
    return [
        (certdp.GeneralizedGaussian("1.99", "0.5"), gg("1.99", "0.5")),
        (certdp.GeneralizedGaussian("1.3", "0.7"), gg("1.3", "0.7")),
        (certdp.StudentT("2.5", "0.5"), st_("2.5", "0.5")),
    ]


@pytest.mark.parametrize(
    ("case", "a", "b"), [(i, a, b) for i in range(3) for a, b in ((0, 0.0625), (0.5, 0.75), (3, 3.5))]
)
def test_pair_curvature_upper_against_quadrature(case: int, a: float, b: float) -> None:
    """curvature_upper(a, b) >= K''(t) (mpmath quadrature of the tilted variance) at 3 points of
    [a, b] (soundness), and it exceeds max K'' by at most 0.6 (max K'' (b - a))^2 + 1e-9 (the
    slack of docs/math.md §1, property 6: (K'' h/2)^2 from the moments' centre plus the tangents'
    and the chord's second-order errors), which a cruder bound (e.g. dropping e^{-K}) misses."""
    pair, ref = _pair_cases()[case]
    with workprec(64):
        bound = pair.curvature_upper(a, b)
    assert bound is not None
    up = mp.mpf(bound.upper().str(30, radius=False))
    with mp.workdps(30):
        values = [ref(mp.mpf(a) + (mp.mpf(b) - a) * k / 2) for k in range(3)]
        top = max(values)
        assert top <= up * (1 + mp.mpf(10) ** -12), (pair.describe(), a, b, top, up)
        assert up - top <= mp.mpf("0.6") * (top * (b - a)) ** 2 + mp.mpf(10) ** -9, (pair.describe(), a, b, top, up)


def test_laplace_and_composition_curvature_upper() -> None:
    """Laplace (series on the closed form over sub-balls of [a, b]) and a composition (the weighted
    sum of its parts): the bound contains K'' (mpmath quadrature of the tilted variance of the
    Laplace loss) at 3 points, exceeds its max by less than 60% (series arithmetic on sub-balls is
    loose: 0.69 on the whole interval), and the composition's is 3 x the part's."""
    lap = certdp.Laplace(1, "0.4")
    with workprec(64):
        single = lap.curvature_upper(1.0, 1.25)
        triple = certdp.compose([(lap, 3)]).curvature_upper(1.0, 1.25)
    up = mp.mpf(single.upper().str(30, radius=False))
    with mp.workdps(30):
        s = mp.mpf("0.4")
        density = lambda x: mp.exp(-abs(x - s)) / 2  # noqa: E731
        loss = lambda x: abs(x) - abs(x - s)  # noqa: E731
        values = [refs.tilted_variance(density, loss, t, (0, s)) for t in (1, "1.125", "1.25")]
        assert max(values) <= up <= max(values) * mp.mpf("1.6"), (values, up)
    assert triple.overlaps(3 * single) and triple.upper() <= (3 * single).upper() * (1 + 2.0**-50)


def _finite_pair_search(atoms: Atoms) -> tuple[object, certdp.Enclosure, mp.mpf]:
    """rho of a finite loss by sup_cgf_ratio with the curvature cover, raising the precision as
    certdp.rho does (certdp.enclose.refine, the default target), and a dense mpmath search."""
    lmax = max(v for v, _ in atoms)
    found: list[object] = []

    def compute() -> Ball:
        kl = sum((to_ball(p) * to_ball(v) for v, p in atoms), to_ball(0))
        cache: dict[Fraction, object] = {}

        def point(t: float):
            key = Fraction(t)
            if key not in cache:
                centre = float(kl.mid()) if key == 0 else float(_ball_cgf(atoms, to_ball(key)).mid()) / t
                cache[key] = _point(atoms, key, centre)
            return cache[key]

        res = sup_cgf_ratio(
            lambda t: _ball_cgf(atoms, t),
            head_witness=kl,
            tail_bound=lambda T: to_ball(lmax) / (to_ball(T) + 1),  # K(t) <= t max L
            curvature=lambda a, b: curvature_on(point(a), point(b)),  # type: ignore[arg-type]
            tol=DEFAULT_TARGET.tolerance_for(float(kl.mid())) / 4,
        )
        found.append(res)
        return res.value

    enc = refine(compute, DEFAULT_TARGET, what="rho")
    with mp.workdps(refs.DPS):

        def cgf(t: mp.mpf) -> mp.mpf:
            terms = (
                mp.mpf(p.numerator) / p.denominator * mp.exp(t * mp.mpf(v.numerator) / v.denominator) for v, p in atoms
            )
            return mp.log(mp.fsum(terms))

        # 20 grid points a decade: the ratio of a finite loss can have an interior maximum above
        # its value at t -> 0 that a coarse grid steps over (atoms 0, 1/2 with weights 28, 1:
        # the sup 0.017447 sits at t ~ 13, KL = 0.017241). 120 golden steps: the bracket shrinks
        # to 1e-25 in log t, so an interior sup is attained to ~1e-50 relative; 40 steps leave
        # 1e-21, above the default target
        ref, _ = refs.sup_ratio(cgf, refs.log_grid(-3, 3, per_decade=20), steps=120)
    return found[-1], enc, ref


def _binomial_loss(n: int, c: Fraction, j: int) -> Atoms:
    """L = c (B - n/2) + mu with B ~ Binomial(n, 1/2) and mu = Var/2 + j c^2/64 (Var = n c^2/4):
    a loss shaped like a privacy loss (KL near Var/2, as for Gaussian noise). j > 0 puts the sup
    of the ratio at t -> 0 with the ratio nearly flat there; j < 0 puts it at a finite order.
    (j = 0 is the Gaussian case, flat to second order at t -> 0: neither a cover nor chords settle
    it at a relative tolerance of 2^-62, which is why Gaussian-like pairs have closed forms.)"""
    mu = n * c * c / 8 + j * c * c / 64
    return [(c * (k - Fraction(n, 2)) + mu, Fraction(math.comb(n, k), 2**n)) for k in range(n + 1)]


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(
        _atoms().filter(lambda atoms: sum(v * p for v, p in atoms) > Fraction(1, 64)),
        st.builds(
            _binomial_loss,
            st.integers(2, 8),
            st.integers(1, 32).map(lambda k: Fraction(k, 32)),
            st.integers(-4, 4).filter(bool),
        ),
    )
)
@example([(Fraction(0), Fraction(28, 29)), (Fraction(1, 2), Fraction(1, 29))])  # sup inside, above KL
def test_sup_cgf_ratio_with_the_cover_contains_a_dense_search(atoms: Atoms) -> None:
    """rho of a finite loss (any atoms with E L > 0, and privacy-loss-shaped binomial losses whose
    sup sits at t -> 0 with a nearly flat ratio or at a finite order) by the search with the
    curvature cover contains the dense mpmath search's sup, at the default target: the cover
    never claims a bound below a ratio that is attained."""
    _, enc, ref = _finite_pair_search(atoms)
    assert refs.contains(enc, ref, slack=1e-30), (atoms, enc, mp.nstr(ref, 30))


def test_the_cover_settles_a_near_gaussian_head() -> None:
    """A binomial loss with KL = Var/2 + Var/32 (the ratio falls only ~3% from its sup KL at
    t -> 0 to t = 1): the cover proves the ratio <= KL + tol beyond t = 1, so the chords start there
    (domain[0] >= 1), and the result contains the dense search's sup."""
    res, enc, ref = _finite_pair_search(_binomial_loss(6, Fraction(1, 8), 1))
    assert res.domain[0] >= 1.0, res  # type: ignore[attr-defined]
    assert refs.contains(enc, ref, slack=1e-30)


def test_rho_of_a_near_gaussian_generalized_gaussian() -> None:
    """Issue 14: rho generalized-gaussian beta = 1.99, shift 0.5 (the ratio stays within 6e-4 of its
    sup KL up to t ~ 1). The enclosure contains the dense mpmath search's sup (t -> 0 end: KL),
    is at the default width, and the search needed few evaluations of K at full precision
    (the curvature cover settles the head; chords needed about 200 before)."""
    pair = certdp.GeneralizedGaussian("1.99", "0.5")
    res = rho_detail(pair, method="search")
    ref = refs.ggauss_kl("1.99", "0.5")
    assert res.argmax == 0.0
    assert refs.contains(res.enclosure, ref, slack=1e-30)
    assert res.enclosure.width <= Fraction(1, 2**60) * Fraction(1, 8)
    assert res.evaluations <= 40, res.evaluations
