"""rho, gap, composition and (eps, delta) against independent references."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import certdp
from certdp.enclose import root_increasing, to_ball, workprec
from certdp.errors import InvalidArgument, Unsupported
from certdp.notions import conversion_delta, conversion_epsilon
from certdp.pairs import RandomAllocation
from tests import refs
from tests.test_order_search import eps_reference, laplace_cgf


def dec(lo: str, hi: str, places: int = 3) -> st.SearchStrategy[str]:
    return st.decimals(Decimal(lo), Decimal(hi), places=places).map(str)


# ---------------------------------------------------------------- rho


@given(dec("0.05", "3"), dec("0.5", "3"))
def test_laplace_rho_is_kl(shift: str, scale: str) -> None:
    enc = certdp.rho(certdp.Laplace(scale, shift))
    with mp.workdps(60):
        u = mp.mpf(shift) / mp.mpf(scale)
        ref = u + mp.exp(-u) - 1
    assert refs.contains(enc, ref)
    assert enc.width <= Fraction(1, 10**15)


def test_laplace_rho_done_criterion() -> None:
    enc = certdp.rho(certdp.Laplace(shift="0.7"))
    assert enc.width <= Fraction(1, 10**15)
    # the issue states 0.19658530379140951...: the enclosure lies in that 17-digit cell
    assert Fraction("0.19658530379140951") <= enc.lower and enc.upper <= Fraction("0.19658530379140952")


@given(dec("0.2", "5"), dec("0.001", "1", 3))
def test_subsampled_rho_is_half_inverse_sigma_squared(sigma: str, q: str) -> None:
    res = certdp.rho_detail(certdp.SubsampledGaussian(q, sigma))
    assert res.method == "closed-form" and res.argmax == float("inf")
    with mp.workdps(60):
        ref = 1 / (2 * mp.mpf(sigma) ** 2)
    assert refs.contains(res.enclosure, ref)
    # the ratio at integer orders stays below rho and approaches it (the sup is at t -> inf)
    pair = certdp.SubsampledGaussian(q, sigma, "remove")
    encs = [certdp.cgf(pair, t) for t in (1, 8, 64)]
    lows = [e.lower / (t * (t + 1)) for e, t in zip(encs, (1, 8, 64), strict=False)]
    highs = [e.upper / (t * (t + 1)) for e, t in zip(encs, (1, 8, 64), strict=False)]
    assert all(lo <= res.enclosure.upper for lo in lows)
    assert lows[0] <= highs[1] and lows[1] <= highs[2]


def _rho_reference(cgf, ts) -> mp.mpf:
    """sup_t K(t)/(t(t+1)) by the dense mpmath search refs.sup_ratio; the sup must lie inside ts."""
    ref, arg = refs.sup_ratio(cgf, ts)
    assert arg < ts[-1], ("the ratio still grows at the top of the grid", arg)
    return ref


@settings(max_examples=6, deadline=None)
@given(dec("0.2", "3"), st.integers(1, 3))
def test_discrete_laplace_rho_search_brackets_dense_grid(a: str, r: int) -> None:
    """Both ends of the certified rho against a dense mpmath search of the ratio (t = 1e-30, then 4
    points a decade on [1e-3, 1e2] and golden-section refinement) over the brute-force CGF sum."""
    res = certdp.rho_detail(certdp.DiscreteLaplace(a, r))
    assert res.method == "search"
    ref = _rho_reference(lambda t: refs.discrete_laplace_cgf(a, r, t), refs.log_grid(-3, 2, 4))
    assert refs.contains(res.enclosure, ref, slack=1e-25), (a, r, mp.nstr(ref, 30), res.enclosure)
    assert res.enclosure.width <= Fraction(1, 10**15)


@given(dec("0.3", "3"), st.integers(1, 3))
def test_discrete_gaussian_rho_closed_form_matches_search(sigma: str, r: int) -> None:
    pair = certdp.DiscreteGaussian(sigma, r)
    closed = certdp.rho_detail(pair)
    assert closed.method == "closed-form"
    loose = certdp.Target(rel_tol=1e-6, abs_tol=1e-30)
    found = certdp.rho_detail(pair, loose, method="search")
    assert found.enclosure.lower <= closed.enclosure.upper and closed.enclosure.lower <= found.enclosure.upper


def test_heterogeneous_composition_rho_search() -> None:
    comp = certdp.compose([certdp.Gaussian(2), certdp.Laplace(shift="0.5")])
    res = certdp.rho_detail(comp)
    assert res.method == "search"
    g = Fraction(1, 8)
    with mp.workdps(60):
        lap = refs.laplace_kl(1, "0.5")
        lap_at1 = refs.laplace_cgf(1, "0.5", 1) / 2
    # rho_star <= rho_1 + rho_2, and >= the ratio at t = 1
    assert res.enclosure.lower <= g + Fraction(mp.nstr(lap, 40)) + Fraction(1, 10**30)
    assert res.enclosure.upper >= g + Fraction(mp.nstr(lap_at1, 40)) - Fraction(1, 10**30)


def test_rho_of_add_direction_is_a_certified_search() -> None:
    pair = certdp.SubsampledGaussian("0.1", 1, "add")
    res = certdp.rho_detail(pair)
    assert res.method == "search"
    # independent: a dense mpmath search of K(t)/(t(t+1)) over the 60-digit quadrature of the definition
    ref = _rho_reference(lambda t: refs.subsampled_cgf("0.1", "1", t + 1, "add"), refs.log_grid(-3, 2))
    assert refs.contains(res.enclosure, ref, slack=1e-25), (mp.nstr(ref, 30), res.enclosure)
    assert res.enclosure.upper <= Fraction(1, 2)  # <= 1/(2 sigma^2), the remove direction's rho
    assert res.enclosure.width < Fraction(1, 10**15)


# ---------------------------------------------------------------- gap


@given(dec("0.1", "10"), dec("0.1", "5"), dec("0.01", "20", 2))
def test_gaussian_gap_is_exactly_zero(sigma: str, shift: str, t: str) -> None:
    enc = certdp.gap(certdp.Gaussian(sigma, shift), t)
    assert enc.contains(0) and enc.width <= Fraction(1, 10**30)


@given(dec("0.05", "2"), dec("0.05", "10", 2))
def test_laplace_gap_matches_reference_and_is_nonnegative(shift: str, t: str) -> None:
    enc = certdp.gap(certdp.Laplace(1, shift), t)
    with mp.workdps(60):
        s, tt = mp.mpf(shift), mp.mpf(t)
        ref = (s + mp.exp(-s) - 1) * tt * (tt + 1) - refs.laplace_cgf(1, shift, t)
    assert refs.contains(enc, ref, slack=1e-30)
    assert enc.upper >= 0


def _laplace_shift_for_rho(rho: Fraction) -> Fraction:
    """Exact dyadic shift s with s + e^{-s} - 1 = rho to 1e-40 (certified root, increasing in s)."""
    with workprec(256):
        root = root_increasing(lambda s: s + (-s).expm1() - to_ball(rho), to_ball(0.001), to_ball(20), tol=1e-45)
        return _mid_fraction(root)


def _mid_fraction(x) -> Fraction:
    man, exp = x.mid().man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def test_laplace_allocation_numbers_of_math_md() -> None:
    """n = 8 releases, rho_sum = 1/2, t = 1: Gamma(1) summed over releases (arXiv:2610.02414 §4.3)."""
    s_uniform = _laplace_shift_for_rho(Fraction(1, 16))
    s_conc = _laplace_shift_for_rho(Fraction(1, 2))
    uniform = certdp.gap(certdp.Laplace(1, s_uniform), 1)
    conc = certdp.gap(certdp.Laplace(1, s_conc), 1)
    # s is exact to 1e-40, so rho(s) and Gamma(s) differ from the targets by < 1e-38
    total_uniform = 8 * uniform.mid
    assert abs(total_uniform - Fraction("0.037202015")) < Fraction(5, 10**10)
    assert abs(conc.mid - Fraction("0.193535993")) < Fraction(5, 10**10)
    assert uniform.width < Fraction(1, 10**15) and conc.width < Fraction(1, 10**15)


# ---------------------------------------------------------------- composition


def _discrete_laplace_pld(a: mp.mpf, r: int) -> dict[int, mp.mpf]:
    """The privacy-loss distribution of DiscreteLaplace(a, r) under P: L = a k on the atoms
    k = |z| - |z - r| in {-r, -r + 2, ..., r}; masses by summing the pmf of P (z ~ r + DLap(a))."""
    lam = mp.exp(-a)
    c = (1 - lam) / (1 + lam)
    pld = {-r: lam**r / (1 + lam), r: 1 / (1 + lam)}  # z <= 0 and z >= r: geometric tails of P
    for z in range(1, r):
        pld[2 * z - r] = pld.get(2 * z - r, 0) + c * lam ** abs(z - r)
    return pld


def _convolve(x: dict[int, mp.mpf], y: dict[int, mp.mpf]) -> dict[int, mp.mpf]:
    out: dict[int, mp.mpf] = {}
    for i, u in x.items():
        for j, v in y.items():
            out[i + j] = out.get(i + j, 0) + u * v
    return out


@settings(max_examples=10, deadline=None)
@given(dec("0.2", "3"), st.integers(1, 3), st.integers(1, 40), dec("0.3", "2"), st.integers(1, 4), dec("0.1", "8", 2))
def test_composition_cgf_is_the_cgf_of_the_convolved_loss(a1: str, r1: int, n1: int, a2: str, r2: int, t: str) -> None:
    """compose([(DLap(a1, r1), n1), DLap(a2, r2)]): the CGF against log E[e^{t L}] for L the sum of the
    independent losses, its distribution (on the lattice a1 Z + a2 Z) formed by convolving the
    per-release privacy-loss distributions (brute force at 60 digits), not by adding CGFs."""
    pair = certdp.compose([(certdp.DiscreteLaplace(a1, r1), n1), certdp.DiscreteLaplace(a2, r2)])
    with mp.workdps(60):
        x1, x2, tt = mp.mpf(a1), mp.mpf(a2), mp.mpf(t)
        pld: dict[int, mp.mpf] = {0: mp.mpf(1)}
        for _ in range(n1):
            pld = _convolve(pld, _discrete_laplace_pld(x1, r1))
        assert abs(mp.fsum(pld.values()) - 1) < mp.mpf(10) ** -50
        ref = mp.log(
            mp.fsum(
                w1 * w2 * mp.exp(tt * (x1 * k1 + x2 * k2))
                for k1, w1 in pld.items()
                for k2, w2 in _discrete_laplace_pld(x2, r2).items()
            )
        )
    enc = certdp.cgf(pair, t)
    assert refs.contains(enc, ref, slack=1e-40), (pair.describe(), t, mp.nstr(ref, 30), enc)
    assert enc.rel_width() <= 1e-15
    assert certdp.compose(certdp.compose(certdp.DiscreteLaplace(a1, r1), 2), 3) == certdp.compose(
        certdp.DiscreteLaplace(a1, r1), 6
    )


@settings(max_examples=6, deadline=None)
@given(dec("0.3", "5"), dec("0.1", "3"), st.integers(1, 1000), dec("0.3", "5"), dec("0.1", "3"), dec("0.1", "8", 2))
def test_gaussian_composition_is_one_gaussian_of_the_joint_shift(
    sigma1: str, s1: str, n1: int, sigma2: str, s2: str, t: str
) -> None:
    """n1 releases of N(s1, sigma1^2) and one of N(s2, sigma2^2) are, after scaling each coordinate by
    its sigma, the pair N(mu, I) vs N(0, I) with |mu|^2 = n1 (s1/sigma1)^2 + (s2/sigma2)^2; rotating mu
    onto an axis leaves the one-dimensional pair N(|mu|, 1) vs N(0, 1), whose CGF is taken by
    60-digit quadrature of the definition (refs.gaussian_cgf)."""
    pair = certdp.compose([(certdp.Gaussian(sigma1, s1), n1), certdp.Gaussian(sigma2, s2)])
    with mp.workdps(60):
        mu = mp.sqrt(n1 * (mp.mpf(s1) / mp.mpf(sigma1)) ** 2 + (mp.mpf(s2) / mp.mpf(sigma2)) ** 2)
        ref = refs.gaussian_cgf(1, mp.nstr(mu, 60), t)
    enc = certdp.cgf(pair, t)
    assert refs.contains(enc, ref, slack=1e-40), (pair.describe(), t, mp.nstr(ref, 30), enc)


def test_compose_validates_steps() -> None:
    with pytest.raises(InvalidArgument, match="steps=0 must be >= 1"):
        certdp.compose(certdp.Gaussian(1), 0)


# ---------------------------------------------------------------- (eps, delta)


def _mp_F(cgf, t, delta) -> mp.mpf:
    t = mp.mpf(t)
    return (cgf(t) + t * mp.log(t) - (1 + t) * mp.log(1 + t) - mp.log(mp.mpf(delta))) / t


@given(dec("0.5", "10", 2), st.integers(1, 200), st.sampled_from(["1e-5", "1e-8", "0.01"]))
def test_gaussian_eps_rdp_equals_zcdp_and_beats_classic(sigma: str, n: int, delta: str) -> None:
    pair = certdp.compose(certdp.Gaussian(sigma), n)
    via_rdp = conversion_epsilon(pair, delta)
    via_zcdp = conversion_epsilon(pair, delta, via="zcdp")
    assert via_rdp.enclosure.lower <= via_zcdp.enclosure.upper and via_zcdp.enclosure.lower <= via_rdp.enclosure.upper
    classic = certdp.classic_zcdp_epsilon(certdp.rho(pair), delta)
    assert via_rdp.sound < classic.lower
    # independent check: the closed-form optimum over real t (mpmath minimiser)
    with mp.workdps(50):
        rho = mp.mpf(n) / (2 * mp.mpf(sigma) ** 2)
        f = lambda t: _mp_F(lambda u: rho * u * (u + 1), t, delta)  # noqa: E731
        tstar = mp.findroot(lambda t: mp.diff(f, t), mp.mpf(via_rdp.order) - 1)
        ref = f(tstar)
    assert refs.contains(via_rdp.enclosure, ref, slack=1e-25)


@settings(max_examples=10, deadline=None)
@given(dec("0.1", "2"), st.integers(1, 50), st.sampled_from(["1e-5", "1e-3"]))
def test_laplace_eps_is_the_infimum(shift: str, n: int, delta: str) -> None:
    """The certified epsilon contains min_t F(t), F(t) = (K(t) + t log t - (1+t) log(1+t) + log(1/delta))/t,
    found in mpmath without certdp's order: a grid 2^(k/4) in t, then a golden-section search in
    log t (tests.test_order_search.eps_reference, 260 steps, 60 digits) around the best grid point."""
    pair = certdp.compose(certdp.Laplace(1, shift), n)
    res = conversion_epsilon(pair, delta)
    # K = n K_Laplace: the closed form of tests.test_order_search, itself checked against quadrature there
    with mp.workdps(60):
        s = mp.mpf(shift)
        K = lambda u: n * laplace_cgf(s, u)  # noqa: E731
        F = lambda t: _mp_F(K, t, delta)  # noqa: E731
        grid = [mp.mpf(2) ** (mp.mpf(k) / 4) for k in range(-40, 120)]
        t_guess = min(grid, key=F)
    assert grid[0] < t_guess < grid[-1]
    ref = eps_reference(K, delta, t_guess)
    enc = res.signed_infimum if res.signed_infimum is not None else res.enclosure
    assert refs.contains(enc, ref, slack=1e-30), (shift, n, delta, mp.nstr(ref, 30), enc)
    assert enc.width <= Fraction(1, 10**9) * max(1, abs(Fraction(mp.nstr(ref, 30))))


@given(dec("0.001", "0.2", 3), dec("0.6", "3", 2), st.integers(1, 2000))
def test_subsampled_eps_on_integer_grid_matches_brute_force(q: str, sigma: str, n: int) -> None:
    pair = certdp.compose(certdp.SubsampledGaussian(q, sigma, "remove"), n)
    orders = [2, 3, 4, 6, 8, 12, 16, 24, 32]
    res = conversion_epsilon(pair, "1e-5", orders=orders)
    assert res.grid == "explicit" and [int(o) for o in res.orders] == orders
    with mp.workdps(60):
        qq, s = mp.mpf(q), mp.mpf(sigma)

        def K(alpha):
            terms = [
                mp.binomial(alpha, k) * (1 - qq) ** (alpha - k) * qq**k * mp.exp(k * (k - 1) / (2 * s * s))
                for k in range(alpha + 1)
            ]
            return n * mp.log(mp.fsum(terms))

        # the Balle et al. / CKS form, independent of certdp's F_R form
        ref = min((K(a) - (mp.log(mp.mpf("1e-5")) + mp.log(a))) / (a - 1) + mp.log(mp.mpf(a - 1) / a) for a in orders)
    assert refs.contains(res.enclosure, ref, slack=1e-30)


def test_main_job_epsilon_uses_named_grid() -> None:
    # the RDP conversion itself (certdp.epsilon picks PLD for this pair: tests/test_accountant.py)
    res = conversion_epsilon(certdp.compose(certdp.SubsampledGaussian("0.01", "1.0"), 500), "1e-5")
    assert res.grid.startswith("integer:") and len(res.orders) == 75
    assert 1.6 < float(res.sound) < 1.7 and res.enclosure.rel_width() < 1e-12


@given(dec("0.5", "5", 2), dec("0.1", "5", 2))
def test_delta_matches_mpmath_and_inverts_epsilon(sigma: str, eps: str) -> None:
    pair = certdp.Gaussian(sigma)
    res = conversion_delta(pair, eps)
    with mp.workdps(50):
        rho = 1 / (2 * mp.mpf(sigma) ** 2)
        G = lambda t: rho * t * (t + 1) - t * mp.mpf(eps) + t * mp.log(t) - (1 + t) * mp.log(1 + t)  # noqa: E731
        grid = min(G(mp.mpf(2) ** (k / 8)) for k in range(-80, 80))
        at = mp.exp(G(mp.mpf(res.order) - 1))
    assert res.enclosure.lower <= Fraction(mp.nstr(mp.exp(grid), 40)) * (1 + Fraction(1, 10**30))
    assert refs.contains(res.enclosure, at, slack=1e-25)
    if res.sound < Fraction(1, 2):
        back = conversion_epsilon(pair, res.sound)
        assert back.enclosure.lower <= Fraction(eps) * (1 + Fraction(1, 10**9))


def test_pure_dp_delta_is_zero() -> None:
    res = conversion_delta(certdp.Laplace(1, 1), 1)
    assert res.enclosure.upper == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"delta": 0}, "delta=0 must be > 0"),
        ({"delta": "1"}, "delta=1 must be < 1"),
        ({"delta": "1e-5", "via": "gdp"}, "via=gdp must be rdp or zcdp"),
    ],
)
def test_epsilon_validates(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        conversion_epsilon(certdp.Gaussian(1), **kwargs)
    if "via" in kwargs:  # the routed API names its own routes
        with pytest.raises(InvalidArgument, match=r"^via=gdp must be one of exact, pld, rdp, zcdp$"):
            certdp.epsilon(certdp.Gaussian(1), **kwargs)
    assert str(info.value) == message


def test_fractional_order_rdp_of_the_subsampled_gaussian_done_criterion() -> None:
    """issue 5: order 10.5 at q = 0.01, sigma = 1.0 to width <= 1e-12, against mpmath at 50 digits."""
    enc = certdp.rdp(certdp.SubsampledGaussian("0.01", "1.0"), "10.5")
    assert enc.width <= Fraction(1, 10**12)
    with mp.workdps(50):
        remove = refs.subsampled_cgf("0.01", "1.0", mp.mpf("10.5"), "remove") / mp.mpf("9.5")
        add = refs.subsampled_cgf("0.01", "1.0", mp.mpf("10.5"), "add") / mp.mpf("9.5")
    assert refs.contains(enc, max(remove, add), slack=1e-40)


def test_random_allocation_real_orders_are_unsupported() -> None:
    with pytest.raises(Unsupported, match="integer orders only"):
        certdp.rdp(RandomAllocation(10, 1, 2), "10.5")
