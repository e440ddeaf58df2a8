"""zCDP to GDP, certified (arXiv:2611.01218; docs/math.md §7).

Every rho-zCDP mechanism is mu(rho)-GDP with

    mu(rho) = 2 Phi^{-1}(1/(1 + e^{-t})),   t = t_rho the unique root of t tanh(t/2) = rho,

and the conversion is optimal. Reading: t tanh(t/2) is the KL divergence of randomized response
with eps = t, and 2 Phi^{-1}(e^t/(1+e^t)) is the smallest mu whose trade-off curve G_mu lies below
randomized response's (its corner point; proofs_checks ``gdp_rr_kl``, ``gdp_corner_point``).

Uniqueness of t_rho: g(t) = t tanh(t/2) has g'(t) = tanh(t/2) + (t/2) sech^2(t/2) > 0 for t > 0,
g(0) = 0 and g(t) -> inf (proofs_checks ``gdp_root_monotone``). Brackets used below:
t tanh(t/2) < min(t, t^2/2) gives t_rho > max(rho, sqrt(2 rho)); t tanh(t/2) > t - 2 gives
t_rho < rho + 2; tanh x >= x - x^3/3 gives t_rho < 2 sqrt(rho) for rho < 3/2.

Stable evaluation: Phi^{-1}(1/(1+e^{-t})) = sqrt 2 erfinv(tanh(t/2)) (small t, no 1 - tiny) and
= sqrt 2 erfcinv(2 e^{-t}/(1 + e^{-t})) (large t; the argument underflows no double: Arb's
exponent range is unbounded), so rho up to 1e4 and beyond is fine.

Supported range: rho in [RHO_MIN, RHO_MAX] = [1e-100, 1e20] for every function here
(InvalidArgument outside, naming rho and the range): the root bracket and the bisection
tolerance are chosen with floats, and at rho = 1e50 the conversions to (eps, delta) no longer
settle. (Before, rho = 1e20 failed with "root bracket hi=1e+20: f(hi) > 0 is not certified":
the bracket end rho + 2 needs more than 64 bits; the bracket check now reports an undecided
sign as PrecisionExhausted, so certdp.enclose.refine retries at a higher precision.)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import (
    DEFAULT_TARGET,
    Ball,
    Enclosure,
    Target,
    Verdict,
    certify_positive,
    current_prec,
    lower_float,
    lt,
    mills_ratio,
    pi,
    refine,
    root_increasing,
    to_ball,
)
from certdp.errors import InvalidArgument, Undecided, invalid
from certdp.notions.orders import require_numbers
from certdp.pairs.params import Number, real

RhoInput = Number | Enclosure

#: Supported range of rho (module docstring).
RHO_MIN = Fraction(1, 10**100)
RHO_MAX = Fraction(10**20)
_RHO_RANGE = "must lie in [1e-100, 1e20] (the supported range of the zCDP conversions)"


def rho_value(rho: Number, name: str = "rho") -> Fraction:
    """Exact rho in the supported range of the module docstring.

    Contract: the exact value, or InvalidArgument ``rho=... must ...`` naming the range.
    """
    r = real(name, rho, gt=0)
    if not RHO_MIN <= r <= RHO_MAX:
        raise invalid(name, rho, _RHO_RANGE)
    return r


#: Supported range of a GDP parameter mu: at mu = 1e6 eps(delta) needs e^{mu^2/2} (certdp.notions.gdp).
MU_MIN = Fraction(1, 10**100)
MU_MAX = Fraction(10**4)


def mu_value(mu: Number, name: str = "mu") -> Fraction:
    """Exact mu in [MU_MIN, MU_MAX] = [1e-100, 1e4].

    Contract: the exact value, or InvalidArgument ``mu=... must ...`` naming the range.
    """
    m = real(name, mu, gt=0)
    if not MU_MIN <= m <= MU_MAX:
        raise invalid(name, mu, "must lie in [1e-100, 1e4] (the supported range of GDP parameters)")
    return m


def _rho_ball(rho: RhoInput) -> Ball:
    if isinstance(rho, Enclosure):
        if rho.lower <= 0:
            raise InvalidArgument(f"rho={rho} must be > 0")
        if rho.lower < RHO_MIN or rho.upper > RHO_MAX:
            raise invalid("rho", rho, _RHO_RANGE)
        return rho.ball()
    return to_ball(rho_value(rho))


def _t_ball(r: Ball, bits: int) -> Ball:
    """Ball containing t_rho for every rho in r (certified bisection; module docstring brackets)."""
    lo = (r.lower().max((2 * r.lower()).sqrt().lower()) * 999 / 1000).lower()
    top = r.upper()
    hi = (2 * top.sqrt()).upper() if top < 1.5 else (top + 2).upper()
    tol = lower_float(lo) * 2.0 ** -(bits - 6)
    return root_increasing(lambda t: t * (t / 2).tanh() - r, lo, hi, tol=tol, straddle_ok=True)


def _z_of_t(t: Ball) -> Ball:
    """Phi^{-1}(1/(1 + e^{-t})) = Phi^{-1}(e^t/(1 + e^t)), stable for small and large t."""
    sqrt2 = to_ball(2).sqrt()
    if t < 1:
        return sqrt2 * (t / 2).tanh().erfinv()
    e = (-t).exp()
    return sqrt2 * (2 * e / (1 + e)).erfcinv()


def mu_randomized_response(eps: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified GDP parameter of randomized response with eps: 2 Phi^{-1}(e^eps/(1 + e^eps)).

    Contract: contains the smallest mu with G_mu below the randomized-response trade-off curve
    (its corner point; proofs_checks ``gdp_corner_point``), evaluated stably (module docstring).
    """
    e = real("eps", eps, gt=0)
    return refine(lambda: 2 * _z_of_t(to_ball(e)), target, what="mu")


def _mu_ball(r: Ball) -> Ball:
    """mu for every rho in the ball r, at the current precision."""
    return 2 * _z_of_t(_t_ball(r, current_prec()))


def t_of_rho(rho: RhoInput, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Enclosure of t_rho, the unique root of t tanh(t/2) = rho (rho > 0).

    Contract: contains t_rho for every rho in the input (exact or an Enclosure); certified
    bisection on a strictly increasing function (proofs_checks ``gdp_root_monotone``).
    """

    def compute() -> Ball:
        return _t_ball(_rho_ball(rho), current_prec())

    return refine(compute, target, what="t_rho")


def mu_from_rho(rho: RhoInput, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified mu(rho) = 2 Phi^{-1}(1/(1 + e^{-t_rho})): every rho-zCDP mechanism is mu-GDP.

    Contract: contains mu(rho) for every rho in the input; optimal conversion (arXiv:2611.01218;
    docs/math.md §7; proofs_checks ``gdp_corner_point``, ``gdp_root_monotone``). Stable for
    rho from 1e-12 to 1e4 (module docstring). Raises PrecisionExhausted if the target width
    cannot be met (e.g. an input Enclosure that is too wide).
    """

    return refine(lambda: _mu_ball(_rho_ball(rho)), target, what="mu")


def zcdp_tv_upper(rho: RhoInput, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified TV bound of a rho-zCDP mechanism through mu(rho)-GDP: 2 Phi(mu/2) - 1 = tanh(t_rho/2).

    With z = mu/2 = Phi^{-1}(sigma(t)), 2 Phi(z) - 1 = 2 sigma(t) - 1 = tanh(t/2): the TV of
    randomized response with eps = t_rho. Attack accuracy is 1/2 + TV/2 = 1/(1 + e^{-t_rho}).
    Contract: contains tanh(t_rho/2) for every rho in the input; an upper bound on the TV of
    every rho-zCDP mechanism (arXiv:2611.01218 via GDP; docs/math.md §7; proofs_checks ``gdp_tv_tanh``).
    """

    def compute() -> Ball:
        return (_t_ball(_rho_ball(rho), current_prec()) / 2).tanh()

    return refine(compute, target, what="tv")


def rho_from_mu(mu: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified inverse of :func:`mu_from_rho`: the smallest rho with mu(rho) = mu.

    With z = mu/2 and e = 2 Phi(z) - 1 = erf(z/sqrt 2): t = logit Phi(z) = 2 atanh(e) (small
    mu) = log((1 + e)/erfc(z/sqrt 2)) (large mu), and rho = t tanh(t/2) = t e.
    Contract: contains rho(mu) (docs/math.md §7; proofs_checks ``gdp_inverse``).
    """
    m = mu_value(mu)

    def compute() -> Ball:
        z = to_ball(m) / 2 / to_ball(2).sqrt()
        e = z.erf()
        t = 2 * e.atanh() if m < 2 else (1 + e).log() - z.erfc().log()
        return t * e

    return refine(compute, target, what="rho")


def mu_bounds(rho: Number, target: Target = DEFAULT_TARGET) -> tuple[Enclosure, Enclosure]:
    """(sqrt(pi rho), sqrt(8 rho)): the sharp bounds of arXiv:2611.01218, sqrt(pi rho) <= mu(rho) <= sqrt(8 rho).

    Contract: enclosures of the two closed forms (proofs_checks ``gdp_asymptotics`` for the
    limits that make the constants sharp).
    """
    r = rho_value(rho)
    low = refine(lambda: (pi() * to_ball(r)).sqrt(), target, what="sqrt(pi rho)")
    high = refine(lambda: (8 * to_ball(r)).sqrt(), target, what="sqrt(8 rho)")
    return low, high


@dataclass(frozen=True)
class CompositionOrder:
    """mu of a composition of zCDP mechanisms converted before (sqrt(sum mu(rho_i)^2)) and after
    (mu(sum rho_i)) composing; ``before_is_tighter`` is the certified comparison before < after."""

    before: Enclosure
    after: Enclosure
    before_is_tighter: Verdict


def compare_composition_order(rhos: Iterable[Number], target: Target = DEFAULT_TARGET) -> CompositionOrder:
    """Certified mu's of converting each rho_i to GDP before composing, and after.

    Contract: ``before`` contains sqrt(sum_i mu(rho_i)^2) (GDP composition), ``after`` contains
    mu(sum_i rho_i) (zCDP composition then conversion); both are valid GDP parameters of the
    composition. Strict convexity of mu^2 with mu(0) = 0 makes ``before`` smaller for two or
    more terms (arXiv:2611.01218; docs/math.md §7; see :func:`check_mu_squared_convex`). Verdict is three-valued.
    """
    rs = [rho_value(r) for r in require_numbers("rhos", rhos)]  # type: ignore[arg-type]
    if not rs:
        raise InvalidArgument("rhos=[] must hold at least one value")
    total = sum(rs, Fraction(0))

    def before_ball() -> Ball:
        acc = to_ball(0)
        for r in rs:
            acc += _mu_ball(to_ball(r)) ** 2
        return acc.sqrt()

    before = refine(before_ball, target, what="mu before composition")
    after = mu_from_rho(total, target)
    return CompositionOrder(before, after, lt(before, after))


def _convexity_numerator(x: Ball) -> Ball:
    """C(z) = rho'(z) - z rho''(z) in the parametrisation by z = mu/2 (' = d/dz): with M = mu^2 =
    4 z^2, d^2 M / d rho^2 = 8 C / rho'^3 and rho' > 0, so mu^2 is strictly convex in rho where
    C > 0. rho = t e with e = 2 Phi(z) - 1, t = log(Phi(z)/Phi(-z)); t' = phi/(Phi(z) Phi(-z)),
    t'' = t'(e t' - z), e' = 2 phi, e'' = -2 z phi (proofs_checks ``gdp_convexity_formula``).
    Phi(-z) is written phi(z) Q(z) with the Mills ratio Q (certdp.enclose.mills_ratio), so a
    ball in z never divides two exponentially small balls (that dependency made the check cost
    ~1e5 pieces at z ~ 40). Accepts an arb_series (Taylor arithmetic for the remainder form)."""
    s2 = to_ball(2).sqrt()
    big = (-x / s2).erfc() / 2  # Phi(z)
    dens = (-x * x / 2).exp() / (2 * pi()).sqrt()  # phi(z)
    q = mills_ratio(x)  # Phi(-z) = phi(z) Q(z): no ratio of two tiny balls below
    e = big - dens * q
    t = big.log() + x * x / 2 + (2 * pi()).sqrt().log() - q.log()
    t1 = 1 / (big * q)
    t2 = t1 * (e * t1 - x)
    e1 = 2 * dens
    e2 = -2 * x * dens
    r1 = t1 * e + t * e1
    r2 = t2 * e + 2 * t1 * e1 + t * e2
    return r1 - x * r2


@dataclass(frozen=True)
class ConvexityCheck:
    """Result of :func:`check_mu_squared_convex`: the z = mu/2 interval covered and the pieces used."""

    rho_lo: Fraction
    rho_hi: Fraction
    z_interval: tuple[float, float]
    pieces: int


def check_mu_squared_convex(
    rho_lo: Number, rho_hi: Number, *, max_pieces: int = 100_000, target: Target = DEFAULT_TARGET
) -> ConvexityCheck:
    """Certify that rho -> mu(rho)^2 is strictly convex on [rho_lo, rho_hi] (0 < rho_lo < rho_hi).

    The z-interval [mu(rho_lo)/2, mu(rho_hi)/2] (outward) is split adaptively until C(z) > 0 is
    certified on every piece (:func:`_convexity_numerator`; certdp.enclose.certify_positive).
    Raises Undecided if that needs more than ``max_pieces`` pieces, and InvalidArgument with the
    witness if C < 0 is certified somewhere (which would refute the claim of arXiv:2611.01218).
    Contract: returns only if d^2 mu^2 / d rho^2 > 0 on the whole interval (proofs_checks
    ``gdp_convexity_formula`` for C).
    """
    lo = rho_value(rho_lo, "rho_lo")
    hi = rho_value(rho_hi, "rho_hi")
    if not hi > lo:
        raise invalid("rho_hi", rho_hi, f"must be > rho_lo={rho_lo}")
    za = to_ball(mu_from_rho(lo, target).lower) / 2
    zb = to_ball(mu_from_rho(hi, target).upper) / 2
    res = certify_positive(_convexity_numerator, za, zb, max_pieces=max_pieces)
    if res.verdict == "negative_somewhere":
        raise InvalidArgument(f"rho in [{rho_lo}, {rho_hi}]: mu^2 is not convex near z={res.witness:.6g}")
    if res.verdict != "positive":
        raise Undecided(f"max_pieces={max_pieces}: convexity not decided near z={res.witness:.6g}")
    return ConvexityCheck(lo, hi, (lower_float(za), float(zb.upper())), res.pieces)


@dataclass(frozen=True)
class RandomizedResponseCheck:
    """Randomized response with eps = t: KL from the definition, t tanh(t/2), mu(KL) and the
    corner-point mu 2 Phi^{-1}(e^t/(1+e^t)) of its trade-off curve."""

    kl_definition: Enclosure
    kl_closed_form: Enclosure
    mu_of_kl: Enclosure
    mu_corner: Enclosure
    agree: bool


def randomized_response_check(t: Number, target: Target = DEFAULT_TARGET) -> RandomizedResponseCheck:
    """Certified check of the randomized-response reading of mu(rho) (docs/math.md §7) at eps = t.

    KL(P||Q) with P = (p, 1-p), Q = (1-p, p), p = e^t/(1+e^t), from the definition
    p log(p/(1-p)) + (1-p) log((1-p)/p); mu of the KL (as an input ball) and the corner mu.
    Contract: ``agree`` is True only if the two KL enclosures overlap and the two mu enclosures
    overlap (the values are then equal up to the enclosure widths; proofs_checks ``gdp_rr_kl``).
    """
    tv = real("t", t, gt=0)

    def kl_def() -> Ball:
        tb = to_ball(tv)
        p = 1 / (1 + (-tb).exp())
        q = 1 - p
        return p * (p / q).log() + q * (q / p).log()

    kl_a = refine(kl_def, target, what="KL (definition)")
    kl_b = refine(lambda: to_ball(tv) * (to_ball(tv) / 2).tanh(), target, what="t tanh(t/2)")
    loose = Target(rel_tol=max(target.rel_tol, 2.0**-50), abs_tol=target.abs_tol)
    mu_kl = mu_from_rho(kl_a, loose)
    mu_c = mu_randomized_response(tv, target)
    overlap = not (kl_a.upper < kl_b.lower or kl_b.upper < kl_a.lower) and not (
        mu_kl.upper < mu_c.lower or mu_c.upper < mu_kl.lower
    )
    return RandomizedResponseCheck(kl_a, kl_b, mu_kl, mu_c, overlap)
