"""Gaussian differential privacy (docs/math.md §6) and the zCDP -> GDP conversion (§7)."""

from __future__ import annotations

import sympy as sp

from proofs_checks.registry import check

t, z, mu, eps = sp.symbols("t z mu epsilon", positive=True)
x = sp.symbols("x", real=True)


def Phi(v: sp.Expr) -> sp.Expr:
    return (1 + sp.erf(v / sp.sqrt(2))) / 2


def dens(v: sp.Expr) -> sp.Expr:
    return sp.exp(-(v**2) / 2) / sp.sqrt(2 * sp.pi)


@check(
    "gdp_rr_kl",
    "KL of randomized response with eps = t (p = e^t/(1+e^t) vs 1-p) equals t tanh(t/2)",
    where="docs/math.md §7; arXiv:2611.01218",
)
def gdp_rr_kl() -> bool:
    p = sp.exp(t) / (1 + sp.exp(t))
    kl = p * sp.log(p / (1 - p)) + (1 - p) * sp.log((1 - p) / p)
    diff = sp.simplify(sp.expand_log(kl, force=True) - t * sp.tanh(t / 2))
    return sp.simplify(diff.rewrite(sp.exp)) == 0


@check(
    "gdp_root_monotone",
    "g(t) = t tanh(t/2): g' = tanh(t/2) + (t/2) sech^2(t/2) (> 0 for t > 0), and g(t) = t - 2t/(e^t + 1)",
    where="docs/math.md §7",
)
def gdp_root_monotone() -> bool:
    g = t * sp.tanh(t / 2)
    d = sp.simplify((sp.diff(g, t) - (sp.tanh(t / 2) + t / 2 / sp.cosh(t / 2) ** 2)).rewrite(sp.exp))
    form = sp.simplify((g - (t - 2 * t / (sp.exp(t) + 1))).rewrite(sp.exp))
    return d == 0 and form == 0


@check(
    "gdp_corner_point",
    "RR trade-off corner a* = 1/(1+e^t) has f(a*) = a*; G_mu(a*) = a* at mu = 2 Phi^-1(1 - a*) = 2 Phi^-1(e^t/(1+e^t))",
    where="docs/math.md §7; arXiv:2611.01218",
)
def gdp_corner_point() -> bool:
    a = 1 / (1 + sp.exp(t))
    corner = sp.simplify(1 - sp.exp(t) * a - a) == 0 and sp.simplify(sp.exp(-t) * (1 - a) - a) == 0
    # G_mu(a) = Phi(Phi^-1(1 - a) - mu); with q = Phi^-1(1 - a*) and mu = 2q: Phi(-q) = 1 - Phi(q) = a*
    q = sp.symbols("q", real=True)
    g_at_corner = sp.simplify(Phi(q - 2 * q) - (1 - Phi(q)))
    return corner and g_at_corner == 0 and sp.simplify(1 - a - sp.exp(t) / (1 + sp.exp(t))) == 0


@check(
    "gdp_inverse",
    "with p = Phi(mu/2): tanh(logit(p)/2) = 2p - 1 and logit(p) = 2 atanh(2p - 1), so rho = logit(p)(2p - 1)",
    where="docs/math.md §7",
)
def gdp_inverse() -> bool:
    p = sp.symbols("p", positive=True)
    logit = sp.log(p / (1 - p))
    a = sp.simplify((sp.tanh(logit / 2) - (2 * p - 1)).rewrite(sp.exp))
    b = sp.simplify(sp.expand_log(2 * sp.atanh(2 * p - 1).rewrite(sp.log) - logit, force=True))
    return a == 0 and b == 0


@check(
    "gdp_asymptotics",
    "mu^2/rho -> pi as rho -> 0 and mu^2/rho -> 8 as rho -> inf (parametrised by z = mu/2: exact limits)",
    where="docs/math.md §7; arXiv:2611.01218",
)
def gdp_asymptotics() -> bool:
    tz = sp.log(Phi(z)) - sp.log(sp.erfc(z / sp.sqrt(2)) / 2)
    rho = tz * (2 * Phi(z) - 1)
    return sp.limit(4 * z**2 / rho, z, 0) == sp.pi and sp.limit(z**2 / (2 * rho), z, sp.oo) == 1


@check(
    "gdp_convexity_formula",
    "rho(z) = t e, t = log(Phi(z)/Phi(-z)), e = 2Phi(z) - 1: t' = phi/(Phi Phi(-z)), t'' = t'(e t' - z), "
    "e'' = -2 z phi, and d^2(4 z^2)/d rho^2 = 8 (rho' - z rho'')/rho'^3",
    where="docs/math.md §7; arXiv:2611.01218",
)
def gdp_convexity_formula() -> bool:
    tz = sp.log(Phi(z) / Phi(-z))
    e = 2 * Phi(z) - 1
    t1 = dens(z) / (Phi(z) * Phi(-z))
    ok = sp.simplify(sp.diff(tz, z) - t1) == 0
    ok = ok and sp.simplify(sp.diff(t1, z) - t1 * (e * t1 - z)) == 0
    ok = ok and sp.simplify(sp.diff(e, z) - 2 * dens(z)) == 0 and sp.simplify(sp.diff(e, z, 2) + 2 * z * dens(z)) == 0
    # chain rule for a generic rho(z), M(z) = 4 z^2
    r = sp.Function("r")(z)
    m = 4 * z**2
    d2 = sp.diff(sp.diff(m, z) / sp.diff(r, z), z) / sp.diff(r, z)
    ok = ok and sp.simplify(d2 - 8 * (sp.diff(r, z) - z * sp.diff(r, z, 2)) / sp.diff(r, z) ** 3) == 0
    return ok


@check(
    "gdp_delta_formula",
    "N(mu,1) vs N(0,1): loss mu x - mu^2/2 exceeds eps iff x > eps/mu + mu/2, so "
    "delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2); delta(0) = 2 Phi(mu/2) - 1 = TV",
    where="docs/math.md §6; Dong-Roth-Su 2022",
)
def gdp_delta_formula() -> bool:
    xs = sp.solve(sp.Eq(mu * x - mu**2 / 2, eps), x)
    thr = eps / mu + mu / 2
    p_tail = 1 - Phi(thr - mu)  # P(X > thr), X ~ N(mu, 1)
    q_tail = 1 - Phi(thr)  # P(X > thr), X ~ N(0, 1)
    delta = p_tail - sp.exp(eps) * q_tail
    target = Phi(-eps / mu + mu / 2) - sp.exp(eps) * Phi(-eps / mu - mu / 2)
    at0 = sp.simplify((Phi(mu / 2) - Phi(-mu / 2)) - (2 * Phi(mu / 2) - 1))
    deriv = sp.simplify(sp.diff(target, eps) + sp.exp(eps) * Phi(-eps / mu - mu / 2))
    return (
        len(xs) == 1 and sp.simplify(xs[0] - thr) == 0 and sp.simplify(delta - target) == 0 and at0 == 0 and deriv == 0
    )


@check("gdp_tv_tanh", "2 sigma(t) - 1 = tanh(t/2): the TV of mu(rho)-GDP equals tanh(t_rho/2)", where="docs/math.md §7")
def gdp_tv_tanh() -> bool:
    s = 1 / (1 + sp.exp(-t))
    return sp.simplify((2 * s - 1 - sp.tanh(t / 2)).rewrite(sp.exp)) == 0


@check(
    "mills_ode",
    "Mills ratio Q = (1 - Phi)/phi satisfies Q' = x Q - 1, hence Q'' = Q + x Q'",
    where="docs/math.md §7 (Mills ratio)",
)
def mills_ode() -> bool:
    q = (1 - Phi(x)) / dens(x)
    first = sp.simplify(sp.diff(q, x) - (x * q - 1))
    second = sp.simplify(sp.diff(q, x, 2) - (q + x * sp.diff(q, x)))
    return first == 0 and second == 0


@check(
    "br_garbling",
    "Bounded range: with w = (e^L - e^a)/(e^b - e^a) the kernel K(hi) = Q w/q, K(lo) = Q (1-w)/(1-q) maps "
    "the two-point pair (q, p = q e^b) to (Q, P = Q e^L), where q = (1 - e^a)/(e^b - e^a), 1 - p = (1 - q) e^a",
    where="docs/math.md §7 (bounded range); arXiv:2611.01218",
)
def br_garbling() -> bool:
    a, b, ell = sp.symbols("a b ell", real=True)
    q = (1 - sp.exp(a)) / (sp.exp(b) - sp.exp(a))
    p = q * sp.exp(b)
    w = (sp.exp(ell) - sp.exp(a)) / (sp.exp(b) - sp.exp(a))
    to_q = sp.simplify(q * (w / q) + (1 - q) * ((1 - w) / (1 - q)) - 1)
    to_p = sp.simplify(p * (w / q) + (1 - p) * ((1 - w) / (1 - q)) - sp.exp(ell))
    return to_q == 0 and to_p == 0 and sp.simplify(1 - p - (1 - q) * sp.exp(a)) == 0


@check(
    "br_two_point_mu",
    "Two-point pair with corner (q, 1 - p): G_mu(q) = Phi(Phi^-1(1-q) - mu) = 1 - p exactly at "
    "mu = Phi^-1(p) - Phi^-1(q)",
    where="docs/math.md §7 (bounded range); arXiv:2611.01218",
)
def br_two_point_mu() -> bool:
    u, v = sp.symbols("u v", real=True)  # u = Phi^-1(q), v = Phi^-1(p); Phi^-1(1 - q) = -u
    m = v - u
    return sp.simplify(Phi(-u - m) - (1 - Phi(v))) == 0
