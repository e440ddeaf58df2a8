"""Reference values (mpmath, 60+ digits) and the result checks built on them.

A check takes the JSON record of a successful run and raises AssertionError when the record is
wrong: an enclosure that misses the closed form, a field with the wrong value or type.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

import mpmath as mp

DPS = 60
#: Relative slack of a containment check: far above mpmath's error at DPS digits, far below any
#: enclosure width certdp reports (~1e-19 relative).
REL_SLACK = mp.mpf("1e-40")
ABS_SLACK = mp.mpf("1e-50")

Check = Callable[[dict], None]


def mpf(x: object) -> mp.mpf:
    with mp.workdps(DPS):
        return mp.mpf(x) if not isinstance(x, Fraction) else mp.mpf(x.numerator) / x.denominator


def moderate(text: str) -> bool:
    """A plain ASCII decimal of moderate magnitude (reference values are computed only for these)."""
    if not re.fullmatch(r"-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", text) or len(text) > 40:
        return False
    d = Decimal(text)
    return d == 0 or Decimal("1e-300") < d.copy_abs() < Decimal("1e300")


def assert_contains(enc: dict, ref: mp.mpf, what: str) -> None:
    """``enc['lower'] <= ref <= enc['upper']`` up to REL_SLACK (decimal strings compared in mpmath)."""
    with mp.workdps(DPS + 20):
        lo, hi = mp.mpf(enc["lower"]), mp.mpf(enc["upper"])
        slack = abs(ref) * REL_SLACK + ABS_SLACK
        assert lo - slack <= ref <= hi + slack, (
            f"{what}: reference {mp.nstr(ref, 25)} is not in [{enc['lower']}, {enc['upper']}]"
        )


def contains(ref: Callable[[], mp.mpf], what: str = "value") -> Check:
    def check(rec: dict) -> None:
        with mp.workdps(DPS):
            assert_contains(rec, ref(), what)

    return check


def all_of(*checks: Check | None) -> Check:
    def check(rec: dict) -> None:
        for c in checks:
            if c is not None:
                c(rec)

    return check


def field_equals(name: str, value: object) -> Check:
    def check(rec: dict) -> None:
        assert name in rec, f"no field {name!r}"
        assert rec[name] == value, f"{name}={rec[name]!r}, expected {value!r}"

    return check


def field_is_str(name: str) -> Check:
    def check(rec: dict) -> None:
        assert name in rec, f"no field {name!r}"
        assert isinstance(rec[name], str), f"{name}={rec[name]!r} is a {type(rec[name]).__name__}, not a string"

    return check


# -- closed forms -------------------------------------------------------------------------------


def gauss_rho(sigma: object = 1, shift: object = 1, steps: object = 1) -> mp.mpf:
    return mpf(steps) * mpf(shift) ** 2 / (2 * mpf(sigma) ** 2)


def laplace_rdp(alpha: object, b: object = 1, s: object = 1) -> mp.mpf:
    a, b, s = mpf(alpha), mpf(b), abs(mpf(s))
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * s / b) + (a - 1) / (2 * a - 1) * mp.exp(-a * s / b)) / (a - 1)


def laplace_kl(b: object = 1, s: object = 1) -> mp.mpf:
    b, s = mpf(b), abs(mpf(s))
    return s / b + mp.exp(-s / b) - 1


def dlap_rdp(alpha: object, a: object, r: int, n: int = 600) -> mp.mpf:
    """Discrete Laplace (mass c e^{-a|z|}) vs its shift by r: a direct sum over |z| <= n."""
    al, a = mpf(alpha), mpf(a)
    c = (1 - mp.exp(-a)) / (1 + mp.exp(-a))
    s = mp.fsum(mp.exp(-a * (al * abs(z) + (1 - al) * abs(z - r))) for z in range(-n, n + r + 1))
    return mp.log(c * s) / (al - 1)


def dlap_kl(a: object, r: object) -> mp.mpf:
    """KL of the discrete Laplace pair: a E_P[|z - r| - |z|] with geometric sums (any integer r >= 1)."""
    a, r = mpf(a), mpf(r)
    x = mp.exp(-a)
    c = (1 - x) / (1 + x)
    p_le0 = c / (1 - x)  # P(z <= 0)
    p_ger = c * x**r / (1 - x)  # P(z >= r)
    # sum_{z=1}^{r-1} (r - 2z) x^z = r S0 - 2 S1
    s0 = x * (1 - x ** (r - 1)) / (1 - x)
    s1 = x * (1 - r * x ** (r - 1) + (r - 1) * x**r) / (1 - x) ** 2
    return a * (r * p_le0 - r * p_ger + c * (r * s0 - 2 * s1))


def dgauss_rdp(alpha: object, sigma: object, r: int, n: int = 200) -> mp.mpf:
    """Discrete Gaussian (mass ~ e^{-z^2/(2 sigma^2)}) vs its shift by integer r: direct sums."""
    al, s2 = mpf(alpha), 2 * mpf(sigma) ** 2
    z0 = mp.fsum(mp.exp(-(z**2) / s2) for z in range(-n, n + 1))
    s = mp.fsum(mp.exp(-(al * z**2 + (1 - al) * (z - r) ** 2) / s2) for z in range(-n, n + r + 1))
    return mp.log(s / z0) / (al - 1)


def sg_remove_rdp(alpha: int, q: object, sigma: object) -> mp.mpf:
    """Poisson-subsampled Gaussian, remove direction, integer order: the exact binomial sum."""
    q, s2 = mpf(q), 2 * mpf(sigma) ** 2
    total = mp.fsum(
        mp.binomial(alpha, k) * (1 - q) ** (alpha - k) * q**k * mp.exp(k * (k - 1) / s2) for k in range(alpha + 1)
    )
    return mp.log(total) / (alpha - 1)


def log_ct(t: mp.mpf) -> mp.mpf:
    return t * mp.log(t) - (1 + t) * mp.log1p(t)


def bisect(g: Callable[[mp.mpf], mp.mpf], lo: mp.mpf, hi: mp.mpf, steps: int = 240) -> mp.mpf:
    """A root of g in [lo, hi] with g(lo) <= 0 <= g(hi) (or the reverse), by plain bisection."""
    up = g(hi) >= 0
    for _ in range(steps):
        mid = (lo + hi) / 2
        if (g(mid) >= 0) == up:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def eps_from_rho(rho: object, delta: object) -> mp.mpf:
    """inf_{t>0} (rho t(t+1) + log c_t - log delta)/t; the minimiser solves rho t^2 + log(1+t) = log(1/delta)."""
    r, d = mpf(rho), mpf(delta)
    a = -mp.log(d)
    g = lambda t: r * t * t + mp.log1p(t) - a  # noqa: E731
    hi = mp.mpf(1)
    while g(hi) < 0:
        hi *= 2
    t = bisect(g, mp.mpf(0), hi)
    return (r * t * (t + 1) + log_ct(t) + a) / t


def delta_from_rho(rho: object, eps: object) -> mp.mpf:
    """exp(inf_{t>0} rho t(t+1) - t eps + log c_t); the minimiser solves rho(2t+1) - eps + log(t/(1+t)) = 0."""
    r, e = mpf(rho), mpf(eps)
    g = lambda t: r * (2 * t + 1) - e + mp.log(t / (1 + t))  # noqa: E731
    lo, hi = mp.mpf("1e-30"), mp.mpf(1)
    while g(hi) < 0:
        hi *= 2
    t = bisect(g, lo, hi)
    return mp.exp(r * t * (t + 1) - t * e + log_ct(t))


def eps_on_orders(cgf: Callable[[mp.mpf], mp.mpf], delta: object, orders: list[object]) -> mp.mpf:
    d = mpf(delta)
    vals = []
    for o in orders:
        t = mpf(o) - 1
        vals.append((cgf(t) + log_ct(t) - mp.log(d)) / t)
    return min(vals)


def mu_of_rho(rho: object) -> mp.mpf:
    """The GDP mu of a rho-zCDP mechanism: t tanh(t/2) = rho, mu = 2 sqrt(2) erfinv(tanh(t/2))."""
    r = mpf(rho)
    with mp.workdps(DPS + 60):
        g = lambda t: t * mp.tanh(t / 2) - r  # noqa: E731
        hi = mp.mpf(1)
        while g(hi) < 0:
            hi *= 2
        t = bisect(g, mp.mpf(0), hi)
        return +(2 * mp.sqrt(2) * mp.erfinv(mp.tanh(t / 2)))


def gdp_delta(mu: object, eps: object) -> mp.mpf:
    m, e = mpf(mu), mpf(eps)
    return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


def gdp_eps(mu: object, delta: object) -> mp.mpf:
    d = mpf(delta)
    hi = mp.mpf(1)
    while gdp_delta(mu, hi) > d:
        hi *= 2
    return bisect(lambda e: gdp_delta(mu, e) - d, mp.mpf(0), hi)


def gdp_tv(mu: object) -> mp.mpf:
    return 2 * mp.ncdf(mpf(mu) / 2) - 1
