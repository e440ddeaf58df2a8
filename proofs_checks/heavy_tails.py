"""Student-t and generalized Gaussian noise (docs/math.md §4.4); the curvature bound of the rho search (§1).

The substitution, the loss range, the tail bounds and the rho tail bound of certdp.pairs.student_t /
generalized_gaussian; and the curvature head bound of the rho search."""

from __future__ import annotations

import sympy as sp

from proofs_checks.registry import check

th = sp.symbols("theta", real=True)
nu, s, w, c, u, A, X, y, k, a, beta, gam, eps, t = sp.symbols(
    "nu s w c u A X y k a beta gamma epsilon t", positive=True
)


@check(
    "student_t_substitution",
    "Student-t, x = sqrt(nu) tan(theta): f(x) dx = C cos^{nu-1} d theta with C = Gamma((nu+1)/2)/(sqrt(pi) "
    "Gamma(nu/2)) (normalised for nu = 1..6), and (nu + (x-s)^2)/(nu + x^2) = 1 - (s/sqrt nu) sin 2theta "
    "+ (s^2/nu) cos^2 theta",
    where="docs/math.md §4.4; proof in certdp.pairs.student_t",
)
def student_t_substitution() -> bool:
    x = sp.sqrt(nu) * sp.tan(th)
    # 1 + tan^2 = sec^2, so (1 + x^2/nu)^{-(nu+1)/2} dx/dtheta = cos^{nu+1} sqrt(nu) sec^2 (cos > 0 inside)
    sec_sq = sp.simplify(1 + sp.tan(th) ** 2 - 1 / sp.cos(th) ** 2) == 0
    jac = sp.simplify(sp.diff(x, th) - sp.sqrt(nu) / sp.cos(th) ** 2) == 0
    powers = sp.simplify(sp.powsimp((1 / c**2) ** (-(nu + 1) / 2) / c**2, force=True) - c ** (nu - 1)) == 0
    const_ok = True
    for n in range(1, 7):
        cn = sp.gamma(sp.Rational(n + 1, 2)) / (sp.sqrt(sp.pi) * sp.gamma(sp.Rational(n, 2)))
        total = sp.integrate(sp.cos(th) ** (n - 1), (th, -sp.pi / 2, sp.pi / 2))
        const_ok = const_ok and sp.simplify(cn * total - 1) == 0
        dens_c = sp.gamma(sp.Rational(n + 1, 2)) / (sp.sqrt(n * sp.pi) * sp.gamma(sp.Rational(n, 2)))
        const_ok = const_ok and sp.simplify(dens_c * sp.sqrt(n) - cn) == 0
    ratio = (nu + (x - s) ** 2) / (nu + x**2)
    D = 1 - s / sp.sqrt(nu) * sp.sin(2 * th) + s**2 / nu * sp.cos(th) ** 2
    d_ok = sp.simplify(sp.trigsimp(ratio - D)) == 0
    return sec_sq and jac and powers and const_ok and d_ok


@check(
    "student_t_dinf",
    "Student-t: D = 1 + w + w cos 2theta - sqrt(2w) sin 2theta (w = s^2/(2 nu)) ranges over "
    "[1 + w -+ sqrt(w^2 + 2w)], whose ends multiply to 1 and are e^{-+acosh(1 + w)}; so D_inf = "
    "(nu+1)/2 acosh(1 + s^2/(2 nu))",
    where="docs/math.md §4.4; proof in certdp.pairs.student_t",
)
def student_t_dinf() -> bool:
    D = 1 - s / sp.sqrt(nu) * sp.sin(2 * th) + s**2 / nu * sp.cos(th) ** 2
    form = 1 + w + w * sp.cos(2 * th) - sp.sqrt(2 * w) * sp.sin(2 * th)
    same = sp.simplify(sp.expand_trig(D - form.subs(w, s**2 / (2 * nu)))) == 0
    # A cos(phi) - B sin(phi) = R cos(phi + psi) ranges over [-R, R], R^2 = A^2 + B^2
    amplitude = sp.simplify(w**2 + sp.sqrt(2 * w) ** 2 - (w**2 + 2 * w)) == 0
    lo, hi = 1 + w - sp.sqrt(w**2 + 2 * w), 1 + w + sp.sqrt(w**2 + 2 * w)
    product = sp.simplify(sp.expand(lo * hi)) == 1
    acosh = sp.simplify(sp.cosh(sp.log(hi)).rewrite(sp.exp) - (1 + w)) == 0
    return same and amplitude and product and acosh


@check(
    "ggauss_tails",
    "Generalized Gaussian tails: (x-s)^beta >= x^beta - beta s x^{beta-1} (y^beta convex), "
    "x^beta - (t+1) beta s x^{beta-1} - x^beta/2 = x^{beta-1}(x/2 - (t+1) beta s), "
    "int_X^inf e^{-X^{beta-1} x/(2 beta)} dx = 2 beta X^{1-beta} e^{-X^beta/(2 beta)}, "
    "k s/(a + s y) <= k/y, and int_0^inf e^{-x^beta/beta} dx = beta^{1/beta-1} Gamma(1/beta)",
    where="docs/math.md §4.4; proof in certdp.pairs.generalized_gaussian",
)
def ggauss_tails() -> bool:
    yy = sp.symbols("yy", positive=True)
    convex = sp.simplify(sp.diff(yy**beta, yy, 2) - beta * (beta - 1) * yy ** (beta - 2)) == 0
    split = sp.simplify(
        X**beta - (t + 1) * beta * s * X ** (beta - 1) - X**beta / 2 - X ** (beta - 1) * (X / 2 - (t + 1) * beta * s)
    )
    xx = sp.symbols("xx", positive=True)
    tail = sp.integrate(sp.exp(-(X ** (beta - 1)) * xx / (2 * beta)), (xx, X, sp.oo), conds="none")
    tail_ok = sp.simplify(sp.powsimp(tail - 2 * beta * X ** (1 - beta) * sp.exp(-(X**beta) / (2 * beta)), force=True))
    slope = sp.simplify(k / y - k * s / (a + s * y) - k * a / (y * (a + s * y))) == 0
    norm_ok = True
    for b in (sp.Rational(3, 2), sp.Rational(5, 4), sp.Integer(2)):
        val = 2 * sp.integrate(sp.exp(-(xx**b) / b), (xx, 0, sp.oo))
        norm_ok = norm_ok and sp.simplify(val - 2 * b ** (1 / b - 1) * sp.gamma(1 / b)) == 0
    return convex and split == 0 and tail_ok == 0 and slope and norm_ok


@check(
    "ggauss_ratio_tail",
    "Generalized Gaussian rho tail: A u^gamma - c u^{1+gamma} is maximal at u* = gamma A/((1+gamma) c) with "
    "value A u*^gamma/(1+gamma); with A = (1+gamma) s (1+c) this is s (1+c)^{1+gamma} (gamma s/c)^gamma; "
    "and int e^{-eps |y|^beta/beta} dy = eps^{-1/beta} int e^{-|y|^beta/beta} dy",
    where="docs/math.md §4.4; proof in certdp.pairs.generalized_gaussian",
)
def ggauss_ratio_tail() -> bool:
    g = A * u**gam - c * u ** (1 + gam)
    ustar = gam * A / ((1 + gam) * c)
    stationary = sp.simplify(sp.diff(g, u).subs(u, ustar)) == 0
    # g' = u^{gamma-1}(gamma A - (1+gamma) c u): positive before u*, negative after
    sign_form = sp.simplify(sp.diff(g, u) - u ** (gam - 1) * (gam * A - (1 + gam) * c * u)) == 0
    value = sp.simplify(sp.expand_power_base(g.subs(u, ustar) - A * ustar**gam / (1 + gam), force=True)) == 0
    A_sub = (1 + gam) * s * (1 + c)
    closed = sp.simplify(
        sp.expand_power_base(
            (A_sub * (gam * A_sub / ((1 + gam) * c)) ** gam / (1 + gam))
            - s * (1 + c) ** (1 + gam) * (gam * s / c) ** gam,
            force=True,
        )
    )
    closed_ok = closed == 0
    yy = sp.symbols("yy", positive=True)
    b = sp.Rational(3, 2)
    scaled = sp.integrate(sp.exp(-eps * yy**b / b), (yy, 0, sp.oo))
    plain = sp.integrate(sp.exp(-(yy**b) / b), (yy, 0, sp.oo))
    scale_ok = sp.simplify(scaled - eps ** (-1 / b) * plain) == 0
    return stationary and sign_form and value and closed_ok and scale_ok


@check(
    "tilted_curvature",
    "K'' = E_t[L^2] - E_t[L]^2 for K = log sum_i w_i e^{t l_i} (three atoms), E_t[(L-c)^2] - Var_t(L) = "
    "(E_t L - c)^2 >= 0, and d^2/dt^2 e^{t l}(l - c)^2 = l^2 e^{t l}(l - c)^2 >= 0 (N convex)",
    where="docs/math.md §1 (property 5) and §2",
)
def tilted_curvature() -> bool:
    tt = sp.symbols("tt", real=True)
    ws = sp.symbols("w1:4", positive=True)
    ls = sp.symbols("l1:4", real=True)
    cc = sp.symbols("cc", real=True)
    Z = sum(wi * sp.exp(tt * li) for wi, li in zip(ws, ls, strict=True))
    m1 = sum(wi * li * sp.exp(tt * li) for wi, li in zip(ws, ls, strict=True)) / Z
    m2 = sum(wi * li**2 * sp.exp(tt * li) for wi, li in zip(ws, ls, strict=True)) / Z
    var_ok = sp.simplify(sp.diff(sp.log(Z), tt, 2) - (m2 - m1**2)) == 0
    shift_ok = sp.simplify((m2 - 2 * cc * m1 + cc**2) - (m2 - m1**2) - (m1 - cc) ** 2) == 0
    li = ls[0]
    convex_ok = (
        sp.simplify(sp.diff(sp.exp(tt * li) * (li - cc) ** 2, tt, 2) - li**2 * sp.exp(tt * li) * (li - cc) ** 2) == 0
    )
    return var_ok and shift_ok and convex_ok


@check(
    "tilted_log_convexity",
    "N(t) = sum_i w_i e^{t l_i}(l_i - c)^2 (three atoms): N N'' - N'^2 = sum_{i<j} w_i w_j e^{t(l_i+l_j)} "
    "(l_i - c)^2 (l_j - c)^2 (l_i - l_j)^2 >= 0 (log N convex); N_c = M0 c^2 - 2 M1 c + M2, so "
    "N_c = N_c1 + (c - c1)(M0 (c + c1) - 2 M1) and M1 = (M0 (c1 + c2) - (N_c1 - N_c2)/(c1 - c2))/2",
    where="docs/math.md §1 (property 6) and §2; certdp.pairs.curvature",
)
def tilted_log_convexity() -> bool:
    tt, cc, c1, c2 = sp.symbols("tt cc c1 c2", real=True)
    ws = sp.symbols("w1:4", positive=True)
    ls = sp.symbols("l1:4", real=True)
    terms = [wi * sp.exp(tt * li) for wi, li in zip(ws, ls, strict=True)]
    N = sum(term * (li - cc) ** 2 for term, li in zip(terms, ls, strict=True))
    lagrange = sum(
        ws[i] * ws[j] * sp.exp(tt * (ls[i] + ls[j])) * (ls[i] - cc) ** 2 * (ls[j] - cc) ** 2 * (ls[i] - ls[j]) ** 2
        for i in range(3)
        for j in range(i + 1, 3)
    )
    log_convex = sp.simplify(sp.expand(N * sp.diff(N, tt, 2) - sp.diff(N, tt) ** 2 - lagrange)) == 0
    m0 = sum(terms)
    m1 = sum(term * li for term, li in zip(terms, ls, strict=True))
    m2 = sum(term * li**2 for term, li in zip(terms, ls, strict=True))

    def n_at(c: sp.Expr) -> sp.Expr:
        return sum(term * (li - c) ** 2 for term, li in zip(terms, ls, strict=True))

    quadratic = sp.simplify(sp.expand(n_at(cc) - (m0 * cc**2 - 2 * m1 * cc + m2))) == 0
    recentre = sp.simplify(sp.expand(n_at(cc) - (n_at(c1) + (cc - c1) * (m0 * (cc + c1) - 2 * m1)))) == 0
    recovered = (m0 * (c1 + c2) - (n_at(c1) - n_at(c2)) / (c1 - c2)) / 2
    first_moment = sp.simplify(recovered - m1) == 0
    return log_convex and quadratic and recentre and first_moment
