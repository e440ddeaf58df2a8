"""CGFs of the mechanisms (docs/math.md §4) checked with sympy."""

from __future__ import annotations

import sympy as sp

from proofs_checks.registry import check

x, s, t, sig, q, z = sp.symbols("x s t sigma q z", positive=True)


def _normal(x_: sp.Expr, mean: sp.Expr, sd: sp.Expr) -> sp.Expr:
    return sp.exp(-((x_ - mean) ** 2) / (2 * sd**2)) / (sd * sp.sqrt(2 * sp.pi))


@check(
    "gaussian_cgf",
    "Gaussian: log int p(x-s)^{t+1} p(x)^{-t} dx = t(t+1) s^2/(2 sigma^2)",
    where="docs/math.md §4.1; arXiv:2610.02414 Prop. 4.1",
)
def gaussian_cgf() -> bool:
    integrand = sp.simplify(_normal(x, s, sig) ** (t + 1) * _normal(x, 0, sig) ** (-t))
    val = sp.integrate(
        sp.expand_power_base(sp.powsimp(integrand, force=True), force=True), (x, -sp.oo, sp.oo), conds="none"
    )
    return sp.simplify(sp.log(val) - t * (t + 1) * s**2 / (2 * sig**2)) == 0


@check(
    "gaussian_rho_gap",
    "Gaussian: K(t)/(t(t+1)) = s^2/(2 sigma^2) for all t, so rho = s^2/(2 sigma^2) and Gamma = 0",
    where="docs/math.md §4.1; arXiv:2610.02414 Prop. 4.1",
)
def gaussian_rho_gap() -> bool:
    K = t * (t + 1) * s**2 / (2 * sig**2)
    rho = s**2 / (2 * sig**2)
    return sp.simplify(K / (t * (t + 1)) - rho) == 0 and sp.simplify(rho * t * (t + 1) - K) == 0


@check(
    "laplace_cgf",
    "Laplace (scale 1): int p(x-s)^{t+1} p(x)^{-t} = (t+1)/(2t+1) e^{ts} + t/(2t+1) e^{-(t+1)s}",
    where="docs/math.md §4.2; arXiv:2610.02414 Prop. 4.1",
)
def laplace_cgf() -> bool:
    def f(region: str) -> sp.Expr:
        # |x - s| and |x| on the three pieces x < 0, 0 < x < s, x > s (s > 0)
        ax_s, ax = {"lo": (s - x, -x), "mid": (s - x, x), "hi": (x - s, x)}[region]
        return sp.exp(-(t + 1) * ax_s + t * ax) / 2

    total = (
        sp.integrate(f("lo"), (x, -sp.oo, 0), conds="none")
        + sp.integrate(f("mid"), (x, 0, s))
        + sp.integrate(f("hi"), (x, s, sp.oo), conds="none")
    )
    target = (t + 1) / (2 * t + 1) * sp.exp(t * s) + t / (2 * t + 1) * sp.exp(-(t + 1) * s)
    return sp.simplify(total - target) == 0


@check(
    "laplace_kl",
    "Laplace: KL = lim_{t->0} K(t)/t = s + e^{-s} - 1, and the rho search's head limit equals it",
    where="docs/math.md §4.2; arXiv:2610.02414 Prop. 4.1",
)
def laplace_kl() -> bool:
    K = sp.log((t + 1) / (2 * t + 1) * sp.exp(t * s) + t / (2 * t + 1) * sp.exp(-(t + 1) * s))
    kl = sp.limit(K / t, t, 0)
    ratio0 = sp.limit(K / (t * (t + 1)), t, 0)
    return sp.simplify(kl - (s + sp.exp(-s) - 1)) == 0 and sp.simplify(ratio0 - kl) == 0


def _moment_w(k: int) -> sp.Expr:
    """E_Q[W^k], Q = N(0, z^2), W = e^{(2x-1)/(2z^2)}: one exponential, so sympy completes the square."""
    integrand = sp.exp(sp.expand(k * (2 * x - 1) / (2 * z**2) - x**2 / (2 * z**2))) / (z * sp.sqrt(2 * sp.pi))
    val = sp.integrate(integrand, (x, -sp.oo, sp.oo), conds="none")
    return sp.simplify(val.rewrite(sp.erf))


@check(
    "subsampled_k1",
    "Subsampled Gaussian: e^{K(1)} = E_Q[(1-q+qW)^2] = 1 + (e^{1/z^2} - 1) q^2",
    where="docs/math.md §4.7; arXiv:2610.02414 Prop. 4.2",
)
def subsampled_k1() -> bool:
    m1, m2 = _moment_w(1), _moment_w(2)
    val = (1 - q) ** 2 + 2 * q * (1 - q) * m1 + q**2 * m2
    return sp.simplify(val - (1 + (sp.exp(1 / z**2) - 1) * q**2)) == 0


@check(
    "subsampled_binomial",
    "Subsampled Gaussian at integer alpha: E_Q[W^k] = e^{k(k-1)/(2z^2)}, hence the binomial sum (k = 0..6)",
    where="docs/math.md §4.7; arXiv:2610.02414 Prop. 4.2",
)
def subsampled_binomial() -> bool:
    for k in range(7):
        if sp.simplify(_moment_w(k) - sp.exp(k * (k - 1) / (2 * z**2))) != 0:
            return False
    return True


@check(
    "discrete_laplace_sum",
    "Discrete Laplace: the loss atoms' expm1 form equals the finite sum of docs/math.md §4.5 (r = 1..4)",
    where="docs/math.md §4.5; arXiv:2610.02414 Prop. 4.6",
)
def discrete_laplace_sum() -> bool:
    a = sp.symbols("a", positive=True)
    lam = sp.exp(-a)
    c = (1 - lam) / (1 + lam)
    for r in range(1, 5):
        math_md = c * (
            sp.exp(t * a * r) / (1 - lam)
            + sp.exp(-t * a * r) * lam**r / (1 - lam)
            + sum(lam**j * sp.exp(t * a * (r - 2 * j)) for j in range(1, r))
        )
        atoms = (
            1
            + ((sp.exp(t * a * r) - 1) + lam**r * (sp.exp(-t * a * r) - 1)) / (1 + lam)
            + c * sum(lam ** (r - j) * (sp.exp(t * a * (2 * j - r)) - 1) for j in range(1, r))
        )
        if sp.simplify(sp.expand(math_md - atoms)) != 0:
            return False
    return True


@check(
    "discrete_gaussian_square",
    "Discrete Gaussian: (t+1)(z-r)^2 - t z^2 = (z - (t+1) r)^2 - t(t+1) r^2, so "
    "e^{K} = e^{r^2 t(t+1)/(2 sigma^2)} Theta((t+1) r)/Theta(0) = ... Theta(t r)/Theta(0) (integer r, period 1)",
    where="docs/math.md §4.6; arXiv:2610.02414 Prop. 4.6",
)
def discrete_gaussian_square() -> bool:
    zz, r = sp.symbols("z r", real=True)
    return sp.expand((t + 1) * (zz - r) ** 2 - t * zz**2 - ((zz - (t + 1) * r) ** 2 - t * (t + 1) * r**2)) == 0
