"""The zCDP-RDP information gap of arXiv:2610.02414 (docs/math.md §5) and the rho of several pairs (§4).

Local expansion (Thm 3.1), tail families, budget allocation, Example 2.3, and the rho of the Gaussian
mixture, subsampled Gaussian and discrete Gaussian pairs.

Checks whose claimed value is a parameter (``*_holds``) are called with a wrong value by
tests/test_proofs_checks.py, to show that they can fail.
"""

from __future__ import annotations

import sympy as sp

from proofs_checks.registry import check

t, s, r, nu, x = sp.symbols("t s r nu x", positive=True)


# --- Example 2.3: two pairs with the same max-curve but different RDP -------------------------
def _example_pmfs(left_ratio_0: sp.Expr, left_ratio: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """Noise pmf g with likelihood ratio W(k) = g(k-1)/g(k) = 4 (k >= 1), left_ratio_0 (k = 0),
    left_ratio (k <= -1): returns (Q mass of k >= 1, of k = 0, of k <= -1) after normalising."""
    g0 = sp.Symbol("g0", positive=True)
    right = g0 * sp.Rational(1, 3)  # sum_{k>=1} g0 4^{-k}
    gm1 = g0 * left_ratio_0  # g(-1) = W(0) g(0)
    left = gm1 / (1 - left_ratio)  # sum_{k<=-1} g(-1) W^{-(k+1)}, W = left_ratio < 1
    g0v = sp.solve(sp.Eq(right + g0 + left, 1), g0)[0]
    return (right.subs(g0, g0v), g0v, left.subs(g0, g0v))


def example23_holds(d2_a: sp.Expr | None = None, d2_b: sp.Expr | None = None) -> bool:
    d2_a = sp.Rational(265, 88) if d2_a is None else d2_a
    d2_b = sp.Integer(3) if d2_b is None else d2_b
    qa, qb = _example_pmfs(sp.Rational(1, 4), sp.Rational(1, 2)), _example_pmfs(sp.Rational(1, 3), sp.Rational(1, 3))
    ratios_a, ratios_b = (4, sp.Rational(1, 4), sp.Rational(1, 2)), (4, sp.Rational(1, 3), sp.Rational(1, 3))
    e = sp.Symbol("e", positive=True)  # e = e^eps
    ok = all(
        sp.simplify(sum(m * w**2 for m, w in zip(qm, ws, strict=True)) - d2) == 0
        for qm, ws, d2 in ((qa, ratios_a, d2_a), (qb, ratios_b, d2_b))
    )
    for qm, ws in ((qa, ratios_a), (qb, ratios_b)):
        ok = ok and sp.simplify(qm[0] - sp.Rational(2, 11)) == 0  # forward curve (2/11)(4 - e^eps)_+
        ok = ok and sp.simplify(sum(m * w for m, w in zip(qm, ws, strict=True)) - 1) == 0  # E_Q W = 1
        ok = ok and sp.simplify(qm[0] * (4 - e) - sp.Rational(2, 11) * (4 - e)) == 0
    rev_a = sum(m * sp.Max(0, 1 - 3 * w) for m, w in zip(qa, ratios_a, strict=True))
    rev_b = sum(m * sp.Max(0, 1 - 3 * w) for m, w in zip(qb, ratios_b, strict=True))
    return bool(ok and rev_a == sp.Rational(3, 22) and rev_b == 0)


@check(
    "example23",
    "Example 2.3 (same two-sided (eps, delta) curve, different RDP curves), rebuilt from the likelihood-ratio "
    "table W = 4 | 1/4 | 1/2 and 4 | 1/3 | 1/3 (k >= 1 | k = 0 | k <= -1): both normalise, share "
    "delta(eps) = (2/11)(4 - e^eps)_+, reverse delta at log 3 is 3/22 vs 0, exp D_2 = 265/88 vs 3",
    where="docs/math.md §5.5; arXiv:2610.02414 Example 2.3, App. A.4",
)
def example23() -> bool:
    return example23_holds()


# --- Theorem 3.1: local expansion from the cumulant series -----------------------------------
def thm31_holds(c3: sp.Expr | None = None, c4: sp.Expr | None = None) -> bool:
    """The expansion with kappa_3 coefficient c3 and kappa_4 coefficient c4 (default: the paper's)."""
    k1, k2, k3, k4, rho = sp.symbols("kappa1 kappa2 kappa3 kappa4 rho")
    c3 = -(t**2) * (t + 1) / 6 if c3 is None else c3
    c4 = t**2 * (1 - t**2) / 24 if c4 is None else c4
    K = lambda u: k1 * u + k2 * u**2 / 2 + k3 * u**3 / 6 + k4 * u**4 / 24  # noqa: E731
    k2v = sp.solve(sp.Eq(K(-1), 0), k2)[0]  # E_P e^{-L} = 1
    gap = (rho * t * (t + 1) - K(t)).subs(k2, k2v)
    return sp.expand(gap - (t * (t + 1) * (rho - k1) + c3 * k3 + c4 * k4)) == 0


@check(
    "thm31_expansion",
    "With K(t) = sum_j kappa_j t^j/j! (P-cumulants of L) and K(-1) = 0: rho t(t+1) - K(t) = t(t+1)(rho - kappa_1) "
    "- t^2(t+1) kappa_3/6 + t^2(1-t^2) kappa_4/24 up to 5th-order cumulants",
    where="docs/math.md §5.1; arXiv:2610.02414 Thm 3.1",
)
def thm31_expansion() -> bool:
    return thm31_holds()


# --- Generalized Gaussian: chi_beta ------------------------------------------------------------
def ggauss_chi_holds(chi1: sp.Expr | None = None, chi2: sp.Expr | None = None) -> bool:
    chi1 = sp.Rational(1, 12) if chi1 is None else chi1
    chi2 = sp.Integer(0) if chi2 is None else chi2
    b = sp.Symbol("beta", positive=True)
    chi = (
        b ** (4 - 4 / b)
        / (24 * sp.gamma(1 / b) ** 2)
        * (3 * sp.gamma(2 - 1 / b) ** 2 - sp.gamma(4 - 3 / b) * sp.gamma(1 / b))
    )
    return sp.simplify(chi.subs(b, 1) - chi1) == 0 and sp.simplify(chi.subs(b, 2) - chi2) == 0


@check(
    "ggauss_chi",
    "Generalized Gaussian quartic gap coefficient chi_beta: chi_1 = 1/12 (Laplace), chi_2 = 0 (Gaussian)",
    where="docs/math.md §5.3; arXiv:2610.02414 Prop. 4.5",
)
def ggauss_chi() -> bool:
    return ggauss_chi_holds()


# --- Student-t ----------------------------------------------------------------------------------
def student_mu(j: int) -> sp.Expr:
    """E S^{2j}, S = (nu+1) Z/(nu + Z^2), Z ~ t_nu (arXiv:2610.02414 App. C.6)."""
    return (nu + 1) ** (2 * j) / nu**j * sp.rf(sp.Rational(1, 2), j) * sp.rf(nu / 2, j) / sp.rf((nu + 1) / 2, 2 * j)


@check(
    "student_t_moments",
    "Student-t: S^2 = ((nu+1)^2/nu) W(1-W) with W = Z^2/(nu+Z^2) ~ Beta(1/2, nu/2), so E S^{2j} = "
    "(nu+1)^{2j}/nu^j (1/2)_j (nu/2)_j/((nu+1)/2)_{2j} (j = 1..3, Beta-function ratios)",
    where="docs/math.md §5.2; arXiv:2610.02414 Prop. 4.4, App. C.6",
)
def student_t_moments() -> bool:
    zz = sp.Symbol("z", positive=True)
    w = zz**2 / (nu + zz**2)
    ok = sp.simplify(((nu + 1) * zz / (nu + zz**2)) ** 2 - (nu + 1) ** 2 / nu * w * (1 - w)) == 0
    a, b = sp.Rational(1, 2), nu / 2
    for j in (1, 2, 3):
        beta_ratio = (
            sp.gamma(a + j) * sp.gamma(b + j) / sp.gamma(a + b + 2 * j) * sp.gamma(a + b) / (sp.gamma(a) * sp.gamma(b))
        )
        ok = ok and sp.simplify(sp.expand_func((nu + 1) ** (2 * j) / nu**j * beta_ratio - student_mu(j))) == 0
    return ok


def student_quartic() -> sp.Expr:
    """Gamma(t) ~ -kappa_4(S_nu)/24 [t(t+1)]^2 s^4; kappa_4 = mu_4 - 3 mu_2^2 (S symmetric)."""
    return sp.simplify(-(student_mu(2) - 3 * student_mu(1) ** 2) / 24)


@check(
    "student_t_argmax",
    "Student-t: the quartic coefficient -kappa_4(S_nu)/24 has a unique critical point in [5, 7], enclosed by "
    "certified bisection on its symbolic derivative: nu = 6.013052641...",
    method="symbolic derivative + certified root",
    where="docs/math.md §5.2; arXiv:2610.02414 §4.4",
)
def student_t_argmax() -> bool:
    from fractions import Fraction

    from certdp.enclose import root_increasing, to_ball, workprec

    c = student_quartic()
    num = sp.factor(sp.numer(sp.together(sp.diff(c, nu))))
    f = sp.lambdify(nu, -num, modules=[{"sqrt": lambda v: v.sqrt()}])
    with workprec(128):  # read the ends inside: at 53 bits .lower() would round them
        root = root_increasing(lambda v: f(v), to_ball(5), to_ball(7), tol=1e-30)
        lo, hi = Fraction(root.lower().str(40, radius=False)), Fraction(root.upper().str(40, radius=False))
    target = Fraction("6.013052641")
    poly = sp.Poly(num, nu)
    roots_in = [rt for rt in poly.real_roots() if 5 <= rt <= 7]
    return len(roots_in) == 1 and abs((lo + hi) / 2 - target) < Fraction(1, 10**9) and hi - lo < Fraction(1, 10**20)


# --- Laplace: Prop. 4.3 curvature ----------------------------------------------------------------
@check(
    "laplace_prop43_curvature",
    "Laplace: Phi_1(x) = 2x - K_{r(x)}(1), rho(r) = r + e^{-r} - 1: d^2 Phi_1/dx^2 at x = rho(r) equals "
    "2e^{2r}(2e^{3r}+6e^{2r}+3e^r+1)/(2e^{3r}+1)^2",
    where="docs/math.md §5.4; arXiv:2610.02414 Prop. 4.3, App. C.5",
)
def laplace_prop43_curvature() -> bool:
    k1 = sp.log(sp.Rational(2, 3) * sp.exp(r) + sp.Rational(1, 3) * sp.exp(-2 * r))  # K_r(1), laplace_cgf at t = 1
    rho = r + sp.exp(-r) - 1
    d1, d2 = sp.diff(rho, r), sp.diff(rho, r, 2)
    k_xx = (sp.diff(k1, r, 2) * d1 - sp.diff(k1, r) * d2) / d1**3  # d^2 K / d x^2 with x = rho(r)
    paper = (
        2 * sp.exp(2 * r) * (2 * sp.exp(3 * r) + 6 * sp.exp(2 * r) + 3 * sp.exp(r) + 1) / (2 * sp.exp(3 * r) + 1) ** 2
    )
    return sp.simplify(sp.simplify(-k_xx - paper).rewrite(sp.exp)) == 0


# --- Discrete Gaussian: period of the gap --------------------------------------------------------
@check(
    "discrete_gaussian_period",
    "Discrete Gaussian, integer shift r: Gamma(t) = -log(Theta(t r)/Theta(0)), "
    "Theta(a) = sum_z e^{-(z-a)^2/(2 sigma^2)}; t -> t + 1/r shifts a by 1 (reindex z -> z + 1): period 1/r",
    where="docs/math.md §4.6; arXiv:2610.02414 Prop. 4.6",
)
def discrete_gaussian_period() -> bool:
    zz = sp.Symbol("z", integer=True)
    sg = sp.Symbol("sigma", positive=True)
    term = lambda tt: sp.exp(-((zz - tt * r) ** 2) / (2 * sg**2))  # noqa: E731
    return sp.simplify(term(t + 1 / r) - term(t).subs(zz, zz - 1)) == 0


# --- Poisson-subsampled Gaussian: the limit at infinity ------------------------------------------
@check(
    "subsampled_rho_limit",
    "Subsampled Gaussian: q^{t+1} e^{t(t+1)/(2z^2)} <= e^{K(t)} <= 1 + e^{t(t+1)/(2z^2)}, and both bounds give "
    "K(t)/(t(t+1)) -> 1/(2 z^2) as t -> inf",
    where="docs/math.md §4.7; arXiv:2610.02414 Prop. 4.2",
)
def subsampled_rho_limit() -> bool:
    q, zz = sp.symbols("q z", positive=True)
    a = t * (t + 1) / (2 * zz**2)
    low = ((t + 1) * sp.log(q) + a) / (t * (t + 1))
    high = sp.log(1 + sp.exp(a)) / (t * (t + 1))
    return sp.limit(low, t, sp.oo) == 1 / (2 * zz**2) and sp.limit(high, t, sp.oo) == 1 / (2 * zz**2)


@check(
    "subsampled_ratio_decay",
    "Subsampled Gaussian (remove): E_Q[W^{t+1}] = e^{t(t+1)/(2z^2)} for W = e^{(2x-1)/(2z^2)}, Q = N(0, z^2), so "
    "Minkowski gives e^{K(t)} <= (1 - q + q e^{t/(2z^2)})^{t+1}; 1 - q + q e^{a} = e^{a}(q + (1-q)e^{-a}), so the "
    "ratio is <= 1/(2z^2) + g(t)/t with g(t) = log(q + (1-q) e^{-t/(2z^2)}), and g' < 0 (g(t) <= g(T), t >= T)",
    where="docs/math.md §4.7; certdp.pairs.subsampled.SubsampledGaussian.ratio_tail_decay",
)
def subsampled_ratio_decay() -> bool:
    q, zz = sp.symbols("q z", positive=True)
    xr = sp.Symbol("xr", real=True)
    k = t + 1
    density = sp.exp(-(xr**2) / (2 * zz**2)) / (sp.sqrt(2 * sp.pi) * zz)
    moment = sp.integrate(density * sp.exp(k * (2 * xr - 1) / (2 * zz**2)), (xr, -sp.oo, sp.oo), conds="none")
    norm_ok = sp.simplify(moment - sp.exp(t * (t + 1) / (2 * zz**2))) == 0
    a = t / (2 * zz**2)
    factor_ok = sp.simplify(sp.exp(a) * (q + (1 - q) * sp.exp(-a)) - (1 - q + q * sp.exp(a))) == 0
    g = sp.log(q + (1 - q) * sp.exp(-a))
    slope = -(1 - q) * sp.exp(-a) / (2 * zz**2 * (q + (1 - q) * sp.exp(-a)))  # < 0 for 0 < q < 1
    slope_ok = sp.simplify(sp.diff(g, t) - slope) == 0
    return norm_ok and factor_ok and slope_ok


# --- Gaussian mixture -------------------------------------------------------------------------------
@check(
    "mixture_tail",
    "Mixture: cosh(a - b) <= cosh(a) e^{|b|}, and phi(u) e^{-m^2/2} cosh(m(u + c)) = "
    "(phi(u - m) e^{mc} + phi(u + m) e^{-mc})/2 (the tail bound of certdp.pairs.mixture)",
    where="docs/math.md §4.3; proof in certdp.pairs.mixture",
)
def mixture_tail() -> bool:
    a, b, u, c, m = sp.symbols("a b u c m", real=True)
    addition = sp.simplify((sp.cosh(a - b) - (sp.cosh(a) * sp.cosh(b) - sp.sinh(a) * sp.sinh(b))).rewrite(sp.exp))
    # |sinh a| <= cosh a and cosh|b| + sinh|b| = e^{|b|}
    ends = sp.simplify((sp.cosh(b) + sp.sinh(b) - sp.exp(b)).rewrite(sp.exp))
    dens = lambda v: sp.exp(-(v**2) / 2) / sp.sqrt(2 * sp.pi)  # noqa: E731
    split = sp.simplify(
        (dens(u) * sp.exp(-(m**2) / 2) * sp.cosh(m * (u + c))).rewrite(sp.exp)
        - (dens(u - m) * sp.exp(m * c) + dens(u + m) * sp.exp(-m * c)) / 2
    )
    return addition == 0 and ends == 0 and split == 0


@check(
    "mixture_rho_bounds",
    "Mixture: phi(x - s)^{t+1} phi(x)^{-t} = phi(x - (t+1)s) e^{t(t+1)s^2/2} (so K = t(t+1)s^2/2 + log I); "
    "the lower bound 2^{-(t+1)} e^{t(t+1)s^2/2} Phi(m + (t+1)s) gives K/(t(t+1)) -> s^2/2",
    where="docs/math.md §4.3; arXiv:2610.02414 Prop. 4.1",
)
def mixture_rho_bounds() -> bool:
    xx, m = sp.symbols("x m", real=True)
    dens = lambda v: sp.exp(-(v**2) / 2) / sp.sqrt(2 * sp.pi)  # noqa: E731
    ident = sp.simplify(
        sp.expand_log(sp.log(dens(xx - s) ** (t + 1) * dens(xx) ** (-t)), force=True)
        - sp.expand_log(sp.log(dens(xx - (t + 1) * s) * sp.exp(t * (t + 1) * s**2 / 2)), force=True)
    )
    low = s**2 / 2 - sp.log(2) / t + sp.log((1 + sp.erf((m + (t + 1) * s) / sp.sqrt(2))) / 2) / (t * (t + 1))
    return ident == 0 and sp.limit(low.subs(m, 1), t, sp.oo) == s**2 / 2


@check(
    "mixture_kl_second_order",
    "Gaussian mixture, KL to second order in the shift: (log f_m)' = -x + m tanh(mx), (log f_m)'' = "
    "-1 + m^2 sech^2(mx), so d^2 KL/ds^2 at s = 0 is E[1 - m^2 sech^2(mZ)] (= I_m = E S_m^2 by parts). Only "
    "these derivatives are checked, not the cumulant expansions of the paper's proof",
    where="docs/math.md §4.3; arXiv:2610.02414 Prop. 4.1, App. C.3",
)
def mixture_kl_second_order() -> bool:
    xx, m = sp.symbols("x m", real=True)
    logf = -(xx**2) / 2 - m**2 / 2 + sp.log(sp.cosh(m * xx)) - sp.log(sp.sqrt(2 * sp.pi))
    d1 = sp.simplify(sp.diff(logf, xx) - (-xx + m * sp.tanh(m * xx)))
    d2 = sp.simplify((sp.diff(logf, xx, 2) - (-1 + m**2 / sp.cosh(m * xx) ** 2)).rewrite(sp.exp))
    # d^2/ds^2 [log f(z) - log f(z + s)] at s = 0 is -(log f)''(z)
    ss = sp.symbols("s", real=True)
    second = sp.simplify(sp.diff(-logf.subs(xx, xx + ss), ss, 2).subs(ss, 0) + sp.diff(logf, xx, 2))
    return d1 == 0 and d2 == 0 and second == 0
