"""Local expansion of the zCDP-RDP gap (Thm 3.1 of arXiv:2610.02414) and the leading coefficients
of two tail families (arXiv:2610.02414 §4.4). Derivations: docs/math.md §5.1 to §5.3.

Student-t_nu (arXiv:2610.02414 Prop. 4.4, App. C.6): Gamma(t) = -kappa_4(S_nu)/24 [t(t+1)]^2 s^4 + O(|s|^5)
with S_nu = (nu+1) Z/(nu + Z^2) and E S^{2j} = (nu+1)^{2j}/nu^j (1/2)_j (nu/2)_j/((nu+1)/2)_{2j}
(proofs_checks ``student_t_moments``), so kappa_4 = mu_4 - 3 mu_2^2 and the quartic coefficient is

    c(nu) = -(mu_4 - 3 mu_2^2)/24 = (nu+1)^2 [nu(nu+5)(nu+7) - (nu+1)(nu+2)(nu+3)] / (8 nu (nu+3)^2 (nu+5)(nu+7)).

Its derivative has numerator -6(nu+1) p(nu), p(nu) = nu^6 + 8nu^5 - 19nu^4 - 288nu^3 - 613nu^2 - 72nu - 105
(proofs_checks ``student_t_argmax``); c increases while p < 0 and decreases after, and the
argmax is the root of p in [5, 7].

Generalized Gaussian (arXiv:2610.02414 Prop. 4.5, eq. (4.7)): chi_beta = beta^{4-4/beta}/(24 Gamma(1/beta)^2)
{3 Gamma(2 - 1/beta)^2 - Gamma(4 - 3/beta) Gamma(1/beta)} (proofs_checks ``ggauss_chi``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import (
    DEFAULT_TARGET,
    Ball,
    Enclosure,
    Target,
    current_prec,
    refine,
    root_increasing,
    to_ball,
    upper_float,
)
from certdp.errors import InvalidArgument, Unsupported
from certdp.notions.gap import gap as gap_of
from certdp.notions.orders import require_pair, require_target, t_of
from certdp.notions.zcdp import rho as rho_of
from certdp.pairs import PrivacyPair
from certdp.pairs.params import Number, real

_P_COEFFS = (1, 8, -19, -288, -613, -72, -105)  # p(nu), highest degree first


_DP_COEFFS = tuple(c * (len(_P_COEFFS) - 1 - i) for i, c in enumerate(_P_COEFFS[:-1]))


def _horner(coeffs: tuple[int, ...], nu: Ball) -> Ball:
    acc = to_ball(0)
    for c in coeffs:
        acc = acc * nu + c
    return acc


def _p(nu: Ball) -> Ball:
    return _horner(_P_COEFFS, nu)


def _range(coeffs: tuple[int, ...], a: Ball, b: Ball) -> tuple[Ball, Ball]:
    """(lower, upper) bounds of the polynomial on [a, b], 0 <= a <= b: each monomial is monotone
    there, so the positive terms are smallest at a and the negative ones at b (no dependency)."""
    deg = len(coeffs) - 1
    low, high = to_ball(0), to_ball(0)
    for i, c in enumerate(coeffs):
        k = deg - i
        low += c * (a if c > 0 else b) ** k
        high += c * (b if c > 0 else a) ** k
    return low, high


def student_t_quartic(nu: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified quartic gap coefficient c(nu) = -kappa_4(S_nu)/24 of Student-t noise (nu >= 1).

    Contract: contains c(nu) (module docstring; proofs_checks ``student_t_moments``).
    """
    v = real("nu", nu, ge=1)

    def compute() -> Ball:
        n = to_ball(v)
        num = (n + 1) ** 2 * (n * (n + 5) * (n + 7) - (n + 1) * (n + 2) * (n + 3))
        return num / (8 * n * (n + 3) ** 2 * (n + 5) * (n + 7))

    return refine(compute, target, what="c(nu)")


def student_t_quartic_argmax(target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified maximiser of the Student-t quartic coefficient over nu >= 1 (arXiv:2610.02414: 6.013052641).

    Contract: contains the argmax of c over [1, inf): c' has the sign of -p, and here p < 0 on
    [1, 5] (interval evaluation), p(5) < 0 < p(7) with p' > 0 on [5, 64] (interval evaluation on
    unit pieces) and on [64, inf) (6 nu^5 > 90 nu^3 bounds the negative terms of p'), so p has
    one root, found by certified bisection. Raises InvalidArgument if a check fails.
    """

    def compute() -> Ball:
        five, seven = to_ball(5), to_ball(7)
        pieces = [(to_ball(k) / 8, to_ball(k + 1) / 8) for k in range(8, 512)]  # [1, 64] in steps of 1/8
        for a, b in pieces:
            if b <= 5 and not _range(_P_COEFFS, a, b)[1] < 0:
                raise InvalidArgument(f"student-t argmax: p not certified negative near nu={float(a.mid()):g}")
            if a >= 5 and not _range(_DP_COEFFS, a, b)[0] > 0:
                raise InvalidArgument(f"student-t argmax: p' not certified positive near nu={float(a.mid()):g}")
        tol = 2.0 ** -(current_prec() - 4)
        return root_increasing(_p, five, seven, tol=tol)

    return refine(compute, target, what="argmax nu")


def ggauss_chi(beta: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified generalized-Gaussian quartic coefficient chi_beta, beta in [1, 2] (chi_1 = 1/12, chi_2 = 0).

    Contract: contains chi_beta (module docstring; proofs_checks ``ggauss_chi``).
    """
    b = real("beta", beta, ge=1, le=2)

    def compute() -> Ball:
        bb = to_ball(b)
        inv = 1 / bb
        lead = (bb.log() * (4 - 4 * inv)).exp() / (24 * inv.gamma() ** 2)
        return lead * (3 * (2 - inv).gamma() ** 2 - (4 - 3 * inv).gamma() * inv.gamma())

    return refine(compute, target, what="chi_beta")


@dataclass(frozen=True)
class LocalExpansion:
    """Thm 3.1 of arXiv:2610.02414 (docs/math.md §5.1) at order t: Gamma(t) = first + third + fourth + R, with
    first = t(t+1)(rho - E_P L), third = -t^2(t+1) kappa_3/6, fourth = t^2(1-t^2) kappa_4/24 and
    |R| <= M_T (t^2 + t^5)|s|^5/120 (not computed: M_T is pair-specific). ``gap`` is the exact
    certified Gamma(t) for comparison; ``kappas`` are kappa_1..kappa_4 of L under P."""

    t: Fraction
    kappas: tuple[Enclosure, Enclosure, Enclosure, Enclosure]
    rho: Enclosure
    first: Enclosure
    third: Enclosure
    fourth: Enclosure
    total: Enclosure
    gap: Enclosure


def local_expansion(pair: PrivacyPair, t: Number, target: Target = DEFAULT_TARGET) -> LocalExpansion:
    """Certified terms of the local expansion of the gap at order t (docs/math.md §5.1).

    Contract: each term encloses its formula (proofs_checks ``thm31_expansion``) with rho from
    certdp.notions.rho and kappa_1..kappa_4 from the pair's ``loss_cumulants`` (Gaussian exact;
    Laplace by Taylor arithmetic; discrete Laplace and discrete Gaussian by exact or tail-bounded
    sums; Gaussian mixture, Student-t, generalized Gaussian and the subsampled Gaussian (one
    direction) by quadrature with proved tails; compositions add them). The terms
    are the expansion, not a bound on Gamma: the remainder is not enclosed. Raises Unsupported
    for pairs without cumulants.
    """
    require_pair(pair), require_target(target)
    tt = t_of(t)
    cache: dict[int, tuple[Ball, Ball, Ball, Ball]] = {}

    def cumulants() -> tuple[Ball, Ball, Ball, Ball]:
        # integral pairs pay one quadrature per cumulant: compute them once per precision
        prec = current_prec()
        if prec not in cache:
            got = pair.loss_cumulants()
            if got is None:
                raise Unsupported(f"mechanism={pair.mechanism}: loss cumulants (kappa_3, kappa_4) are not implemented")
            cache[prec] = got
        return cache[prec]

    cumulants()
    r = rho_of(pair, target)
    # a term may be exactly 0 (rho = E_P L): its width is then set by rho's, relative to rho
    # a float in [0, 1e300] whatever t and rho are (t^4 overflows floats at t ~ 1e77)
    scale = min(upper_float(to_ball(tt * (tt + 1) * tt * tt + 1) * r.ball()), 1e300)
    terms_target = Target(target.rel_tol, max(target.abs_tol, 2.0**-50 * scale), target.start_prec, target.max_prec)
    kappas = tuple(refine(lambda j=j: cumulants()[j], target, what=f"kappa_{j + 1}") for j in range(4))

    def terms() -> tuple[Ball, Ball, Ball]:
        tb, k = to_ball(tt), cumulants()
        return (
            tb * (tb + 1) * (r.ball() - k[0]),
            -tb * tb * (tb + 1) * k[2] / 6,
            tb * tb * (1 - tb * tb) * k[3] / 24,
        )

    def term(which: int) -> Enclosure:
        return refine(lambda: terms()[which], terms_target, what="expansion term")

    total = refine(lambda: sum(terms(), to_ball(0)), terms_target, what="expansion")
    return LocalExpansion(
        tt,
        kappas,
        r,
        term(0),
        term(1),
        term(2),
        total,
        gap_of(pair, tt, terms_target, rho=r),  # type: ignore[arg-type]
    )
