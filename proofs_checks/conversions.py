"""(eps, delta) from a CGF (docs/math.md §3); TV, chi-square and random allocation (§8, §9)."""

from __future__ import annotations

import sympy as sp

from proofs_checks.registry import check

t, x, eps, delta, K = sp.symbols("t x epsilon delta K", positive=True)


@check(
    "ct_max",
    "c_t = t^t/(1+t)^{1+t} is the maximum over x of (1 - e^x) e^{t x} (critical point x = log(t/(1+t)))",
    where="docs/math.md §3; arXiv:2610.02414 Lemma B.1",
)
def ct_max() -> bool:
    xr = sp.symbols("xr", real=True)  # the maximiser log(t/(1+t)) is negative
    g = (1 - sp.exp(xr)) * sp.exp(t * xr)
    crit = sp.solve(sp.diff(g, xr), xr)
    if len(crit) != 1 or sp.simplify(crit[0] - sp.log(t / (1 + t))) != 0:
        return False
    value = sp.simplify(g.subs(xr, crit[0]) - t**t / (1 + t) ** (1 + t))
    # g'' at the critical point is -t e^{t x*} < 0: a maximum (the only critical point)
    second = sp.simplify(sp.diff(g, xr, 2).subs(xr, crit[0]) + t * (t / (1 + t)) ** t)
    return sp.simplify(value) == 0 and second == 0


@check(
    "fr_equals_cks",
    "F_R(t) = (K + log c_t - log delta)/t equals the Balle et al. / CKS conversion at alpha = t + 1",
    where="docs/math.md §3; Balle et al. 2020, Canonne-Kamath-Steinke 2020",
)
def fr_equals_cks() -> bool:
    a = t + 1
    fr = (K + sp.log(t**t / (1 + t) ** (1 + t)) - sp.log(delta)) / t
    cks = K / (a - 1) - (sp.log(delta) + sp.log(a)) / (a - 1) + sp.log((a - 1) / a)
    return sp.simplify(sp.expand_log(fr - cks, force=True)) == 0


@check(
    "log_ct_convex",
    "log c_t = t log t - (1+t) log(1+t) is convex: second derivative 1/t - 1/(1+t) > 0",
    where="docs/math.md §3",
)
def log_ct_convex() -> bool:
    h = t * sp.log(t) - (1 + t) * sp.log(1 + t)
    d2 = sp.simplify(sp.diff(h, t, 2))
    return sp.simplify(d2 - (1 / t - 1 / (1 + t))) == 0 and sp.simplify(d2 - 1 / (t * (1 + t))) == 0


@check(
    "ra_chi2_one_epoch",
    "Random allocation: chi^2 of one epoch = E L^2 - 1 = (e^{1/sigma^2} - 1)/M",
    where="docs/math.md §9.2; arXiv:2610.09651 Prop. 3.1",
)
def ra_chi2_one_epoch() -> bool:
    M, sig = sp.symbols("M sigma", positive=True)
    ey2 = sp.exp(1 / sig**2)  # E Y^2 = e^{t^2}, E Y = 1, Y_j independent
    el2 = (M * ey2 + M * (M - 1)) / M**2
    return sp.simplify(el2 - 1 - (sp.exp(1 / sig**2) - 1) / M) == 0


@check(
    "ra_sigma_closed_form",
    "Solving U(c_E) = lambda for sigma gives [ln(1 + M((1+c_lambda)^{1/E} - 1))]^{-1/2}",
    where="docs/math.md §9.2; arXiv:2610.09651 Cor. 3.4",
)
def ra_sigma_closed_form() -> bool:
    M, E, c, _sig = sp.symbols("M E c sigma", positive=True)
    sigma_cf = 1 / sp.sqrt(sp.log(1 + M * ((1 + c) ** (1 / E) - 1)))
    c_e = (1 + (sp.exp(1 / sigma_cf**2) - 1) / M) ** E - 1
    return sp.simplify(sp.powdenest(c_e, force=True) - c) == 0


@check(
    "ra_u_continuity",
    "U(c) = sqrt(c)/2 (c <= 1) and c/(1+c) (c >= 1) agree at c = 1 and U(c_lambda) = lambda",
    where="docs/math.md §8; arXiv:2610.09651 §3",
)
def ra_u_continuity() -> bool:
    lam = sp.symbols("lambda", positive=True)
    low = sp.sqrt(4 * lam**2) / 2
    high = (lam / (1 - lam)) / (1 + lam / (1 - lam))
    return (
        sp.sqrt(1) / 2 == sp.Rational(1, 2) == 1 / sp.Integer(2)
        and sp.simplify(low - lam) == 0
        and sp.simplify(high - lam) == 0
    )


@check(
    "ra_sqrt_pi_over_2",
    "The closed form over the exact TV tends to (s/2)/(s/sqrt(2 pi)) = sqrt(pi/2)",
    where="docs/math.md §9.4; arXiv:2610.09651 App. C.6",
)
def ra_sqrt_pi_over_2() -> bool:
    s = sp.symbols("s", positive=True)
    exact = 2 * (sp.erf(s / 2 / sp.sqrt(2)) + 1) / 2 - 1  # 2 Phi(s/2) - 1
    return sp.simplify(sp.limit((s / 2) / exact, s, 0) - sp.sqrt(sp.pi / 2)) == 0


@check("rr_kl", "Randomized response with eps = t: KL = t tanh(t/2)", where="docs/math.md §7; arXiv:2611.01218")
def rr_kl() -> bool:
    p = sp.exp(t) / (1 + sp.exp(t))
    kl = p * sp.log(p / (1 - p)) + (1 - p) * sp.log((1 - p) / p)
    diff = sp.expand_log(sp.simplify(kl), force=True) - t * sp.tanh(t / 2)
    return sp.simplify(diff.rewrite(sp.exp)) == 0


@check(
    "ra_m1_identity",
    "Random allocation, M = 1: TV(N(0,1), N(a,1)) = 2 Phi(a/2) - 1 with a = t sqrt(E)",
    where="docs/math.md §9.4; arXiv:2610.09651 App. C.4",
)
def ra_m1_identity() -> bool:
    a, y = sp.symbols("a y", positive=True)
    phi = lambda u: sp.exp(-(u**2) / 2) / sp.sqrt(2 * sp.pi)  # noqa: E731
    # the densities cross at a/2; TV = int_{-inf}^{a/2} (phi(y) - phi(y - a)) dy
    tv = sp.integrate(phi(y) - phi(y - a), (y, -sp.oo, a / 2))
    target = 2 * (1 + sp.erf(a / 2 / sp.sqrt(2))) / 2 - 1
    return sp.simplify((tv - target).rewrite(sp.erf)) == 0


@check(
    "ra_c_e_bounds",
    "x <= c_E = (1 + x/E)^E - 1 <= e^x - 1 for x >= 0, E >= 1 (Bernoulli; log(1+u) <= u)",
    method="numeric fallback",
    where="docs/math.md §9.2; arXiv:2610.09651 App. B.2",
)
def ra_c_e_bounds() -> bool:
    # sympy proves neither inequality outright; check a grid exactly in rationals at the lower
    # side and with 50-digit mpmath at the upper side. NOT a proof: the docstring proofs stand.
    import mpmath as mp

    with mp.workdps(50):
        for e in (1, 2, 3, 10, 40, 1000):
            for k in range(0, 60):
                xv = mp.mpf(k) / 4
                c = (1 + xv / e) ** e - 1
                if not (xv <= c + mp.mpf(10) ** -45 and c <= mp.expm1(xv) + mp.mpf(10) ** -45):
                    return False
    return True


@check(
    "ra_product_epochs",
    "chi^2 over E independent epochs: 1 + c_E = E_Q[prod L_e^2] = (1 + x)^E, x = chi^2 of one",
    where="docs/math.md §9.2; arXiv:2610.09651 §3",
)
def ra_product_epochs() -> bool:
    xs = sp.symbols("x", positive=True)
    ls = sp.symbols("l1:5", positive=True)  # E = 4 epochs, E_Q L_e^2 = 1 + x each, independent
    second = sp.prod([sp.Symbol(f"m{i}") for i in range(4)])
    return sp.expand(second.subs({sp.Symbol(f"m{i}"): 1 + xs for i in range(4)}) - (1 + xs) ** 4) == 0 and len(ls) == 4


@check(
    "ra_u_tight",
    "U(c) is attained: P = (1/2 + d, 1/2 - d) vs uniform has chi^2 = 4d^2 and TV = d = sqrt(c)/2; "
    "P = (1, 0) vs Q = (1/(1+c), c/(1+c)) has chi^2 = c and TV = c/(1+c)",
    where="docs/math.md §8; arXiv:2610.09651 App. B.2",
)
def ra_u_tight() -> bool:
    d, c = sp.symbols("d c", positive=True)
    chi_a = ((sp.Rational(1, 2) + d) ** 2 + (sp.Rational(1, 2) - d) ** 2) / sp.Rational(1, 2) - 1
    tv_a = d
    q0 = 1 / (1 + c)
    chi_b = 1 / q0 - 1
    tv_b = 1 - q0
    return (
        sp.simplify(chi_a - 4 * d**2) == 0
        and sp.simplify(tv_a - sp.sqrt(chi_a) / 2) == 0
        and sp.simplify(chi_b - c) == 0
        and sp.simplify(tv_b - c / (1 + c)) == 0
    )


@check(
    "ra_gdp_limit",
    "GDP limit: log(1 + u) = u - u^2/2 + O(u^3) with E u = 0, Var u = v gives E log L = -v/2 + O(v^{3/2}) and "
    "Var log L = v + O(v^{3/2}); over E epochs mu^2 = E v = (E/M)(e^{1/sigma^2} - 1)",
    where="docs/math.md §9.4; arXiv:2610.09651 Thm 3.5",
)
def ra_gdp_limit() -> bool:
    u, v, m, sg, e = sp.symbols("u v M sigma E", positive=True)
    ser = sp.series(sp.log(1 + u), u, 0, 3).removeO()
    mean = ser.coeff(u, 1) * 0 + ser.coeff(u, 2) * v  # E u = 0, E u^2 = v
    var_lead = sp.expand(ser**2).coeff(u, 2) * v  # leading term of E (log L)^2
    mu2 = e * (sp.exp(1 / sg**2) - 1) / m
    return (
        sp.simplify(mean + v / 2) == 0
        and sp.simplify(var_lead - v) == 0
        and sp.simplify(mu2 - e * ((sp.exp(1 / sg**2) - 1) / m)) == 0
    )


@check(
    "ra_u_cauchy_schwarz",
    "TV <= sqrt(c)/2 since 2 TV = E_Q|L - 1| <= sqrt(E_Q (L - 1)^2) (Cauchy-Schwarz); on two-point pairs "
    "(p, 1-p) vs (q, 1-q): chi^2 = (p-q)^2/(q(1-q)) and 4 q(1-q) <= 1, so |p - q| <= sqrt(chi^2)/2",
    where="docs/math.md §8; arXiv:2610.09651 App. B.2",
)
def ra_u_cauchy_schwarz() -> bool:
    p, q = sp.symbols("p q", positive=True)
    chi = p**2 / q + (1 - p) ** 2 / (1 - q) - 1
    ok = sp.simplify(chi - (p - q) ** 2 / (q * (1 - q))) == 0
    # sqrt(c)/2 >= TV  <=>  (p-q)^2/(q(1-q)) >= 4 (p-q)^2  <=>  q(1-q) <= 1/4 = ((q - (1-q))^2 + 4q(1-q))/4
    return ok and sp.simplify(sp.Rational(1, 4) - q * (1 - q) - (2 * q - 1) ** 2 / 4) == 0


@check(
    "ra_tpr_bound",
    "TPR <= a + sqrt(c a (1-a)) at FPR a: for a test A with Q(A) = a, P(A) - Q(A) = E_Q[(L - 1) 1_A] = "
    "E_Q[(L - 1)(1_A - a)] <= sqrt(c) sqrt(Var_Q 1_A) = sqrt(c a(1-a))",
    where="docs/math.md §8; arXiv:2610.09651 Prop. B.2",
)
def ra_tpr_bound() -> bool:
    a = sp.symbols("a", positive=True)
    var = a * (1 - a) ** 2 + (1 - a) * a**2  # E_Q (1_A - a)^2 with Q(A) = a
    return sp.simplify(var - a * (1 - a)) == 0


@check(
    "ra_solve_e_m",
    "c_E = (1 + x/M')^E - 1 = c_lambda solved for E gives ln(1+c_lambda)/ln(1+x_1), for M gives "
    "(e^{1/sigma^2} - 1)/((1+c_lambda)^{1/E} - 1), with x_1 = (e^{1/sigma^2} - 1)/M",
    where="docs/math.md §9.2; arXiv:2610.09651 §3",
)
def ra_solve_e_m() -> bool:
    e, m, sg, c = sp.symbols("E M sigma c", positive=True)
    x1 = (sp.exp(1 / sg**2) - 1) / m
    e_star = sp.log(1 + c) / sp.log(1 + x1)
    m_star = (sp.exp(1 / sg**2) - 1) / ((1 + c) ** (1 / e) - 1)
    ok_e = sp.simplify(sp.expand_log(e_star * sp.log(1 + x1), force=True) - sp.log(1 + c)) == 0
    ok_m = sp.simplify((1 + (sp.exp(1 / sg**2) - 1) / m_star) ** e - (1 + c)) == 0
    return ok_e and ok_m


@check(
    "ra_pinsker_d2",
    "D_2 of E epochs = E ln(1 + x) = ln(1 + c_E); Pinsker TV <= sqrt(KL/2) <= sqrt(D_2/2) solved for sigma: "
    "sigma = [ln(1 + M expm1(2 lambda^2/E))]^{-1/2}",
    where="docs/math.md §8 and §9.2; arXiv:2610.09651 App. B.2",
)
def ra_pinsker_d2() -> bool:
    e, m, sg, lam = sp.symbols("E M sigma lambda", positive=True)
    x1 = (sp.exp(1 / sg**2) - 1) / m
    d2 = e * sp.log(1 + x1)
    sigma = 1 / sp.sqrt(sp.log(1 + m * (sp.exp(2 * lam**2 / e) - 1)))
    return sp.simplify(sp.sqrt(d2 / 2).subs(sg, sigma) - lam) == 0


@check(
    "lattice_mass_splitting",
    "alpha_a = (w - p e^{-b})/(e^{-a} - e^{-b}), alpha_b = p - alpha_a keep both masses (alpha_a + alpha_b = p, "
    "alpha_a e^{-a} + alpha_b e^{-b} = w); both are >= 0 when w/p is in [e^{-b}, e^{-a}]; and for a, b >= eps "
    "alpha_a g(a) + alpha_b g(b) = p - e^eps w, g(l) = 1 - e^{eps - l} (the split is exact at n = 1); a group of "
    "fractions u, v of two cells has P - e^l Q = u B + v A (balancing)",
    where="docs/math.md §10; certdp.notions.pld",
)
def lattice_mass_splitting() -> bool:
    a, b, p, lam = sp.symbols("a b p lam", positive=True)
    ea, eb = sp.exp(-a), sp.exp(-b)
    w = p * (lam * ea + (1 - lam) * eb)  # w/p between e^{-b} and e^{-a}: lam in [0, 1]
    alpha_a = (w - p * eb) / (ea - eb)
    alpha_b = p - alpha_a
    keeps_q = sp.simplify(alpha_a * ea + alpha_b * eb - w) == 0
    # alpha_a = lam p and alpha_b = (1 - lam) p: both in [0, p] exactly when lam is in [0, 1]
    shares = sp.simplify(alpha_a - lam * p) == 0 and sp.simplify(alpha_b - (1 - lam) * p) == 0
    g = lambda ell: 1 - sp.exp(eps - ell)  # noqa: E731
    affine = sp.simplify(alpha_a * g(a) + alpha_b * g(b) - (p - sp.exp(eps) * w)) == 0
    # balancing (the lower bound): a group of fractions u, v of two cells (p1, w1), (p2, w2) has
    # P - e^l Q = u (p1 - e^l w1) + v (p2 - e^l w2), so its loss is >= l when u |B| <= v A
    u, v, p1, p2, w1, w2, ell = sp.symbols("u v p1 p2 w1 w2 ell", positive=True)
    group = (u * p1 + v * p2) - sp.exp(ell) * (u * w1 + v * w2)
    balance = sp.expand(group - (u * (p1 - sp.exp(ell) * w1) + v * (p2 - sp.exp(ell) * w2))) == 0
    return keeps_q and shares and affine and balance


@check(
    "lattice_atom_tails",
    "loss tails of the pairs with atoms: Laplace (u = s/b) P(L > l) = 1 - e^{-(u - y0)}/2, Q(L > l) = e^{-y0}/2 "
    "with y0 = (l + u)/2 for -u <= l < u (integrals of the densities above y0); discrete Laplace "
    "P(X >= m) = (1 + lam - lam^{r-m+1})/(1 + lam), Q(X >= m) = lam^m/(1 + lam) for 1 <= m <= r (geometric sums of "
    "(1 - lam)/(1 + lam) lam^{|x - r|} and lam^{|x|}); the discrete Gaussian's tail bound "
    "int_M^inf e^{-x^2/(2 s^2)} dx <= (s^2/M) e^{-M^2/(2 s^2)} (the integrand's x/M >= 1)",
    where="docs/math.md §10 (pairs with atoms); certdp.pairs.additive.Laplace, certdp.pairs.discrete",
)
def lattice_atom_tails() -> bool:
    y, y0, u = sp.symbols("y y0 u", positive=True)
    # Laplace: P has density e^{-|y - u|}/2, Q e^{-|y|}/2 (units of b); y0 in [0, u)
    p_tail = sp.integrate(sp.exp(-(u - y)) / 2, (y, y0, u)) + sp.integrate(sp.exp(-(y - u)) / 2, (y, u, sp.oo))
    q_tail = sp.integrate(sp.exp(-y) / 2, (y, y0, sp.oo))
    laplace = sp.simplify(p_tail - (1 - sp.exp(-(u - y0)) / 2)) == 0 and sp.simplify(q_tail - sp.exp(-y0) / 2) == 0
    # discrete Laplace: S(m) = sum_{x=m}^{r-1} lam^{r-x} = lam (1 - lam^{r-m})/(1 - lam) (by induction:
    # S(r) = 0 and S(m) - S(m+1) = lam^{r-m}); the terms x >= r add 1/(1 - lam); Q sums lam^x for x >= m
    lam = sp.symbols("lam", positive=True)
    m, r = sp.symbols("m r", integer=True, positive=True)
    c = (1 - lam) / (1 + lam)
    geo = lam * (1 - lam ** (r - m)) / (1 - lam)
    induction = geo.subs(m, r) == 0 and sp.simplify(geo - geo.subs(m, m + 1) - lam ** (r - m)) == 0
    p_dl = c * (geo + 1 / (1 - lam))
    q_dl = c * lam**m / (1 - lam)
    disc = induction and sp.simplify(p_dl - (1 + lam - lam ** (r - m + 1)) / (1 + lam)) == 0
    disc = disc and sp.simplify(q_dl - lam**m / (1 + lam)) == 0
    # discrete Gaussian tail: int_M^inf e^{-x^2/(2 s^2)} <= int_M^inf (x/M) e^{-x^2/(2 s^2)} = (s^2/M) e^{-M^2/(2 s^2)}
    xx, M, s = sp.symbols("xx M s", positive=True)
    mills = sp.simplify(
        sp.integrate(xx / M * sp.exp(-(xx**2) / (2 * s**2)), (xx, M, sp.oo)) - s**2 / M * sp.exp(-(M**2) / (2 * s**2))
    )
    return laplace and disc and mills == 0
