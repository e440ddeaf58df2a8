"""Independent mpmath references at 50+ digits: quadrature and brute-force sums.

None of these reuse certdp's closed forms: each evaluates the definition
e^{K(t)} = E_Q[(dP/dQ)^{t+1}] (or E_P[log dP/dQ] for KL) directly.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp

DPS = 60


def mpf(x) -> mp.mpf:
    return mp.mpf(str(x))


def contains(enc, ref: mp.mpf, slack: float = 1e-45) -> bool:
    """True when ref lies in the enclosure up to the reference's own error (slack * max(1,|ref|))."""
    r = Fraction(mp.nstr(ref, DPS - 5, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf))
    s = Fraction(slack) * max(1, abs(r))
    return enc.lower - s <= r <= enc.upper + s


def gaussian_cgf(sigma, shift, t) -> mp.mpf:
    with mp.workdps(DPS):
        s, sh, t = mpf(sigma), mpf(shift), mpf(t)

        def pdf(x, m):
            return mp.npdf(x, m, s)

        f = lambda x: pdf(x, sh) ** (t + 1) * pdf(x, 0) ** (-t)  # noqa: E731
        peak = (t + 1) * sh  # the integrand is a Gaussian bump of width sigma centred here
        pts = sorted({mp.mpf(0), sh, peak - 8 * s, peak, peak + 8 * s})
        return mp.log(mp.quad(f, [-mp.inf, *pts, mp.inf]))


def laplace_cgf(scale, shift, t) -> mp.mpf:
    with mp.workdps(DPS):
        b, s, t = mpf(scale), mpf(shift), mpf(t)

        def pdf(x):
            return mp.exp(-abs(x) / b) / (2 * b)

        f = lambda x: pdf(x - s) ** (t + 1) * pdf(x) ** (-t)  # noqa: E731
        pts = sorted({mp.mpf(0), s})
        return mp.log(mp.quad(f, [-mp.inf, *pts, mp.inf]))


def laplace_kl(scale, shift) -> mp.mpf:
    with mp.workdps(DPS):
        b, s = mpf(scale), mpf(shift)

        def pdf(x):
            return mp.exp(-abs(x) / b) / (2 * b)

        f = lambda x: pdf(x - s) * (abs(x) - abs(x - s)) / b  # noqa: E731
        pts = sorted({mp.mpf(0), s})
        return mp.quad(f, [-mp.inf, *pts, mp.inf])


def _discrete(pmf_p, pmf_q, lo: int, hi: int, t) -> mp.mpf:
    return mp.fsum(pmf_p(z) ** (t + 1) * pmf_q(z) ** (-t) for z in range(lo, hi + 1))


def discrete_laplace_cgf(a, r: int, t) -> mp.mpf:
    with mp.workdps(DPS):
        a, t = mpf(a), mpf(t)
        lam = mp.exp(-a)
        # tail beyond Z: terms ~ lam^{|z|}; choose Z so lam^Z < 1e-70
        Z = r + int(mp.ceil(75 * mp.log(10) / a)) + 2
        norm = mp.fsum(lam ** abs(z) for z in range(-Z - r, Z + r + 1))
        p = lambda z: lam ** abs(z - r) / norm  # noqa: E731
        q = lambda z: lam ** abs(z) / norm  # noqa: E731
        return mp.log(_discrete(p, q, -Z, Z + r, t))


def discrete_laplace_kl(a, r: int) -> mp.mpf:
    with mp.workdps(DPS):
        a = mpf(a)
        lam = mp.exp(-a)
        Z = r + int(mp.ceil(75 * mp.log(10) / a)) + 2
        norm = mp.fsum(lam ** abs(z) for z in range(-Z - r, Z + r + 1))
        return mp.fsum(lam ** abs(z - r) / norm * a * (abs(z) - abs(z - r)) for z in range(-Z, Z + r + 1))


def discrete_gaussian_cgf(sigma, r: int, t) -> mp.mpf:
    with mp.workdps(DPS):
        s, t = mpf(sigma), mpf(t)
        # the terms peak near z = r (1 + t); keep 20 sigma + 20 on either side of it
        Z = int(r * (1 + t)) + int(mp.ceil(20 * s)) + 20
        w = lambda z: mp.exp(-(mp.mpf(z) ** 2) / (2 * s * s))  # noqa: E731
        norm = mp.fsum(w(z) for z in range(-3 * Z, 3 * Z + 1))
        p = lambda z: w(z - r) / norm  # noqa: E731
        q = lambda z: w(z) / norm  # noqa: E731
        return mp.log(_discrete(p, q, -Z, Z + r, t))


def subsampled_moment(q, sigma, power, *, add: bool) -> mp.mpf:
    """E_{X~N(0,sigma^2)}[(1-q+q W)^power], W = N(1,s^2)/N(0,s^2) density ratio, by quadrature."""
    with mp.workdps(DPS):
        q, s = mpf(q), mpf(sigma)

        def f(x):
            ratio = 1 - q + q * mp.exp((2 * x - 1) / (2 * s * s))
            return mp.npdf(x, 0, s) * ratio**power

        peak = abs(power) * 1.0 + 1
        # the ratio W switches over a width s^2 at x = 1/2: break there too (needed at sigma <= 0.1)
        half = [mp.mpf(1) / 2 + d for d in (-s, 0, s)]
        return mp.quad(f, [-mp.inf, -8 * s, 0, *half, 1, peak, 2 * peak + 8 * s, mp.inf])


def subsampled_cgf(q, sigma, alpha, direction: str) -> mp.mpf:
    with mp.workdps(DPS):
        if direction == "remove":
            return mp.log(subsampled_moment(q, sigma, alpha, add=False))
        return mp.log(subsampled_moment(q, sigma, -(alpha - 1), add=True))


def subsampled_kl(q, sigma, direction: str) -> mp.mpf:
    with mp.workdps(DPS):
        q, s = mpf(q), mpf(sigma)

        def f(x):
            ratio = 1 - q + q * mp.exp((2 * x - 1) / (2 * s * s))
            core = ratio * mp.log(ratio) if direction == "remove" else -mp.log(ratio)
            return mp.npdf(x, 0, s) * core

        half = [mp.mpf(1) / 2 + d for d in (-s, 0, s)]
        return mp.quad(f, [-mp.inf, -8 * s, 0, *half, 1, 8 * s + 2, mp.inf])


def gaussian_kl(sigma, shift) -> mp.mpf:
    with mp.workdps(DPS):
        s, sh = mpf(sigma), mpf(shift)
        f = lambda x: mp.npdf(x, sh, s) * (mp.log(mp.npdf(x, sh, s)) - mp.log(mp.npdf(x, 0, s)))  # noqa: E731
        return mp.quad(f, [-mp.inf, 0, sh, mp.inf])


def discrete_gaussian_kl(sigma, r: int) -> mp.mpf:
    with mp.workdps(DPS):
        s = mpf(sigma)
        Z = r + int(mp.ceil(20 * s)) + 20
        w = lambda z: mp.exp(-(mp.mpf(z) ** 2) / (2 * s * s))  # noqa: E731
        norm = mp.fsum(w(z) for z in range(-3 * Z, 3 * Z + 1))
        return mp.fsum(w(z - r) / norm * (mp.log(w(z - r)) - mp.log(w(z))) for z in range(-Z, Z + r + 1))


def mixture_cgf(m, shift, t) -> mp.mpf:
    """log int f(x-s)^{t+1} f(x)^{-t} dx, f = (N(-m,1) + N(m,1))/2, by quadrature of the definition."""
    with mp.workdps(DPS):
        mm, s, t = mpf(m), mpf(shift), mpf(t)
        f = lambda x: (mp.npdf(x, mm, 1) + mp.npdf(x, -mm, 1)) / 2  # noqa: E731
        g = lambda x: mp.exp((t + 1) * mp.log(f(x - s)) - t * mp.log(f(x)))  # noqa: E731
        peak = (t + 1) * s
        pts = sorted({mp.mpf(0), s, peak - mm - 10, peak - mm, peak, peak + mm, peak + mm + 10})
        return mp.log(mp.quad(g, [-mp.inf, *pts, mp.inf]))


def mixture_kl(m, shift) -> mp.mpf:
    """int f(x-s) log(f(x-s)/f(x)) dx by quadrature."""
    with mp.workdps(DPS):
        mm, s = mpf(m), mpf(shift)
        f = lambda x: (mp.npdf(x, mm, 1) + mp.npdf(x, -mm, 1)) / 2  # noqa: E731
        g = lambda x: f(x - s) * (mp.log(f(x - s)) - mp.log(f(x)))  # noqa: E731
        return mp.quad(g, [-mp.inf, *sorted({-mm - 10, -mm, mp.mpf(0), s, mm + s, mm + s + 10}), mp.inf])


def _student_t_density(nu: mp.mpf):
    c = mp.gamma((nu + 1) / 2) / (mp.sqrt(nu * mp.pi) * mp.gamma(nu / 2))
    return lambda x: c * (1 + x * x / nu) ** (-(nu + 1) / 2)


def student_t_cgf(nu, shift, t) -> mp.mpf:
    """log int f(x-s)^{t+1} f(x)^{-t} dx for the Student-t density, quadrature on the real line."""
    with mp.workdps(DPS):
        n, s, t = mpf(nu), mpf(shift), mpf(t)
        f = _student_t_density(n)
        g = lambda x: f(x - s) ** (t + 1) * f(x) ** (-t)  # noqa: E731
        # at large t the integrand is a bump of width ~1/sqrt(t) at the loss's critical points
        # x = (s +- sqrt(s^2 + 4 nu))/2: break the range there too
        w = 10 / mp.sqrt(t + 1)
        crit = [(s + k * mp.sqrt(s * s + 4 * n)) / 2 for k in (1, -1)]
        near = {c + d for c in crit for d in (-1, -w, 0, w, 1)}
        pts = sorted({mp.mpf(v) for v in (-100, -10, 0, s, 10, 100)} | near)
        return mp.log(mp.quad(g, [-mp.inf, *pts, mp.inf]))


def student_t_kl(nu, shift) -> mp.mpf:
    with mp.workdps(DPS):
        n, s = mpf(nu), mpf(shift)
        f = _student_t_density(n)
        g = lambda x: f(x - s) * (mp.log(f(x - s)) - mp.log(f(x)))  # noqa: E731
        return mp.quad(g, [-mp.inf, *sorted({mp.mpf(v) for v in (-100, -10, 0, 10, 100)} | {s}), mp.inf])


def _ggauss_density(beta: mp.mpf):
    c = beta ** (1 - 1 / beta) / (2 * mp.gamma(1 / beta))
    return lambda x: c * mp.exp(-(abs(x) ** beta) / beta)


def ggauss_cgf(beta, shift, t) -> mp.mpf:
    """log int f(x-s)^{t+1} f(x)^{-t} dx, f proportional to e^{-|x|^beta/beta}; breakpoints at the kinks."""
    with mp.workdps(DPS):
        b, s, t = mpf(beta), mpf(shift), mpf(t)
        c = b ** (1 - 1 / b) / (2 * mp.gamma(1 / b))
        g = lambda x: c * mp.exp(-((t + 1) * abs(x - s) ** b - t * abs(x) ** b) / b)  # noqa: E731
        peak = max((t + 1) * abs(s), 1)
        # the integrand's maximum for x > s > 0, beta > 1: t x^(beta-1) = (t+1)(x-s)^(beta-1)
        top = abs(s) / -mp.expm1(mp.log(t / (t + 1)) / (b - 1)) if b > 1 else peak
        pts = sorted({mp.mpf(0), s, -5, 5, 3 * peak, 10 * peak, top / 2, top, 2 * top})
        return mp.log(mp.quad(g, [-mp.inf, *pts, mp.inf]))


def ggauss_kl(beta, shift) -> mp.mpf:
    with mp.workdps(DPS):
        b, s = mpf(beta), mpf(shift)
        f = _ggauss_density(b)
        g = lambda x: f(x - s) * (abs(x) ** b - abs(x - s) ** b) / b  # noqa: E731
        # sorted: a shift beyond 5 must not reverse an interval (mpmath would integrate it backwards)
        return mp.quad(g, [-mp.inf, *sorted({mp.mpf(-5), mp.mpf(0), s, mp.mpf(5)}), mp.inf])


def sup_ratio(cgf, ts, steps: int = 40) -> tuple[mp.mpf, mp.mpf]:
    """(sup, argmax) of R(t) = K(t)/(t(t+1)) over [min ts, max ts] by a dense search: R at every t
    of the increasing grid ``ts``, then, when the best grid point is interior, a golden-section
    search in log t between its neighbours (``steps`` steps, bracket x0.618 each: 40 steps leave
    1e-8 in log t, so 1e-16 relative in R at a smooth maximum). ``cgf(t)`` is one of the
    references above (60 digits). The value is an attained ratio, hence <= the true sup up to
    quadrature error; a sup attained as t -> 0 (R -> KL) is approached to O(min ts), so start the
    grid at a t such as 1e-30. The caller checks that the argmax is not the top of the grid."""
    with mp.workdps(DPS):

        def ratio(u: mp.mpf) -> mp.mpf:
            t = mp.exp(u)
            return cgf(t) / (t * (t + 1))

        us = [mp.log(mpf(t)) for t in ts]
        vals = [ratio(u) for u in us]
        i = max(range(len(us)), key=vals.__getitem__)
        if i in (0, len(us) - 1):
            return vals[i], mp.exp(us[i])
        (c, fc), (d, fd), _ = golden(ratio, us[i - 1], us[i + 1], steps, maximize=True)
        best, arg = max((vals[i], us[i]), (fc, c), (fd, d))
        return best, mp.exp(arg)


def golden(f, lo: mp.mpf, hi: mp.mpf, steps: int, *, maximize: bool):
    """Golden-section search of a unimodal f on [lo, hi]: returns the two interior points with
    their values, ((c, f(c)), (d, f(d))), and the final bracket (a, b); the bracket shrinks by
    0.618 per step."""
    better = (lambda x, y: x > y) if maximize else (lambda x, y: x < y)
    g = (mp.sqrt(5) - 1) / 2
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(steps):
        if better(fc, fd):
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = f(d)
    return (c, fc), (d, fd), (lo, hi)


def log_grid(lo_exp: int, hi_exp: int, per_decade: int = 3, t0: str = "1e-30") -> list[mp.mpf]:
    """t0, then 10^(k/per_decade) for lo_exp*per_decade <= k <= hi_exp*per_decade (60 digits)."""
    with mp.workdps(DPS):
        ks = range(lo_exp * per_decade, hi_exp * per_decade + 1)
        return [mpf(t0), *(mp.mpf(10) ** (mp.mpf(k) / per_decade) for k in ks)]


def tilted_variance(density_p, loss, t, points, dps: int = 30) -> mp.mpf:
    """K''(t) = Var_t(L) under the tilted law e^{tL} dP / E_P[e^{tL}], by three quadratures of the
    definition (E_t L^k = int p e^{tL} L^k / int p e^{tL}); ``points`` break the real line at the
    kinks and peaks. 30 digits: the callers compare with bounds at a relative margin >= 1e-12."""
    with mp.workdps(dps):
        t = mpf(t)
        w = lambda x: density_p(x) * mp.exp(t * loss(x))  # noqa: E731
        pts = [-mp.inf, *sorted({mpf(p) for p in points}), mp.inf]
        z = mp.quad(w, pts)
        m1 = mp.quad(lambda x: w(x) * loss(x), pts) / z
        return mp.quad(lambda x: w(x) * (loss(x) - m1) ** 2, pts) / z


def ggauss_tilted_variance(beta, shift, t) -> mp.mpf:
    """K''(t) of the generalized Gaussian pair (P = Law(Z + s)), by :func:`tilted_variance`."""
    b, s = mpf(beta), mpf(shift)
    f = _ggauss_density(b)
    return tilted_variance(lambda x: f(x - s), lambda x: (abs(x) ** b - abs(x - s) ** b) / b, t, (-8, 0, s, 8))


def student_t_tilted_variance(nu, shift, t) -> mp.mpf:
    """K''(t) of the Student-t pair (P = Law(Z + s)), by :func:`tilted_variance`."""
    n, s = mpf(nu), mpf(shift)
    f = _student_t_density(n)
    return tilted_variance(lambda x: f(x - s), lambda x: mp.log(f(x - s)) - mp.log(f(x)), t, (-100, -10, 0, s, 10, 100))


def gaussian_delta(mu, eps) -> mp.mpf:
    """delta(eps) of N(0,1) vs N(mu,1) (Balle and Wang 2018), at the caller's mp.dps."""
    mu, eps = mpf(mu), mpf(eps)
    return mp.ncdf(mu / 2 - eps / mu) - mp.exp(eps) * mp.ncdf(-mu / 2 - eps / mu)


def gaussian_eps(mu_sq, delta) -> mp.mpf:
    """eps(delta) of N(0,1) vs N(mu,1), given mu^2 (exact rational or decimal string): the root of
    delta(eps) = delta by bisection at 60 digits (0 when delta >= TV)."""
    with mp.workdps(60):
        mu, delta = mp.sqrt(mpf(Fraction(mu_sq).numerator) / mpf(Fraction(mu_sq).denominator)), mpf(delta)
        if gaussian_delta(mu, 0) <= delta:
            return mp.mpf(0)
        lo, hi = mp.mpf(0), mu * mu / 2 + mu * 40 + 1
        for _ in range(400):
            mid = (lo + hi) / 2
            if gaussian_delta(mu, mid) > delta:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2
