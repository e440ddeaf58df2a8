"""A Gaussian against a mixture of shifted Gaussians (dp_accounting's ``MixtureOfGaussiansDpEvent``):
P = sum_i p_i N(c_i, s^2), Q = N(0, s^2), shifts c_i >= 0 (docs/math.md §12.4).

``remove`` is (P, Q), ``add`` is (Q, P), ``both`` the two together (the caller splits it,
:meth:`GaussianShifts.directed`). The loss of ``remove`` is

    r(x) = log sum_i p_i exp((2 c_i x - c_i^2)/(2 s^2)),

a log-sum-exp of nondecreasing affine functions: nondecreasing and convex, strictly increasing
when some c_i > 0, with inf r = log p_0 (p_0 the weight of the shifts equal to 0; -inf when
there is none) and sup r = +inf. So L > y iff x > x(y), the unique root of r(x) = y, and the
tails are Gaussian tails at x(y). The root is enclosed between two exact rationals xl < xr with
r(xl) < y < r(xr) proved in ball arithmetic; the tails at xr and xl then bracket the tails at the
root (each tail is monotone in x), so their union encloses them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, current_prec, to_ball
from certdp.errors import PrecisionExhausted, Unsupported, invalid
from certdp.pairs.domain import bounded
from certdp.pairs.loss_only import LossOnlyPair
from certdp.pairs.params import Number, real

DIRECTIONS = ("remove", "add", "both")
#: Most mixture components (each loss tail costs a root search over all of them).
MAX_COMPONENTS = 1000


@dataclass(frozen=True, init=False)
class GaussianShifts(LossOnlyPair):
    """Noise N(0, sigma^2); the neighbour's output is shifted by c_i >= 0 with probability p_i
    (module docstring). Weights are exact and must sum to 1 exactly.

    Domain: sigma in [1e-4, 1e100], shifts in [0, 1e6], at most MAX_COMPONENTS components, some
    positive shift with positive weight. CGF and KL are not implemented (Unsupported): certdp
    accounts this pair by its loss distribution (the PLD lattice).
    """

    sigma: Fraction
    shifts: tuple[Fraction, ...]
    weights: tuple[Fraction, ...]
    direction: str

    mechanism = "gaussian-shifts"

    def __init__(
        self, sigma: Number, shifts: tuple[Number, ...], weights: tuple[Number, ...], direction: str = "both"
    ) -> None:
        object.__setattr__(self, "sigma", bounded("sigma", sigma, self.mechanism, gt=0, low=Fraction(1, 10**4)))
        if len(shifts) != len(weights) or not shifts:
            raise invalid("shifts", len(shifts), f"must be as many as the weights ({len(weights)}), at least one")
        if len(shifts) > MAX_COMPONENTS:
            raise invalid("shifts", len(shifts), f"must be at most {MAX_COMPONENTS} components")
        cs = tuple(real(f"shifts[{i}]", c, ge=0, le=10**6) for i, c in enumerate(shifts))
        ws = tuple(real(f"weights[{i}]", w, ge=0, le=1) for i, w in enumerate(weights))
        if sum(ws) != 1:
            raise invalid("weights", f"sum {float(sum(ws))!r}", "must sum to 1 exactly")
        if not any(c > 0 and w > 0 for c, w in zip(cs, ws, strict=True)):
            raise invalid("shifts", "all 0", "must have a positive shift with positive weight (else P = Q)")
        # merge equal shifts and drop empty components: one canonical description
        merged: dict[Fraction, Fraction] = {}
        for c, w in zip(cs, ws, strict=True):
            if w:
                merged[c] = merged.get(c, Fraction(0)) + w
        order = sorted(merged)
        object.__setattr__(self, "shifts", tuple(order))
        object.__setattr__(self, "weights", tuple(merged[c] for c in order))
        if direction not in DIRECTIONS:
            raise invalid("direction", direction, f"must be one of {', '.join(DIRECTIONS)}")
        object.__setattr__(self, "direction", direction)
        # floats of the shifts, log weights and 2 sigma^2: they only steer the root search (not a
        # field: equality and hashing stay those of the exact description)
        floats = ([float(c) for c in order], [math.log(w) for w in self.weights], 2 * float(self.sigma) ** 2)
        object.__setattr__(self, "_floats", floats)
        object.__setattr__(self, "_cache", {})

    def directed(self, direction: str) -> GaussianShifts:
        """Contract: the same pair with one direction."""
        return GaussianShifts(self.sigma, self.shifts, self.weights, direction)

    def params(self) -> dict[str, str]:
        """Contract: exact decimal strings of every field (lists joined by commas)."""
        from certdp.pairs.params import exact_str

        return {
            "sigma": exact_str(self.sigma),
            "shifts": ",".join(exact_str(c) for c in self.shifts),
            "weights": ",".join(exact_str(w) for w in self.weights),
            "direction": self.direction,
        }

    def max_loss_ball(self) -> Ball | None:
        """Contract: contains D_inf of ``add`` when some shift is 0: sup(-r) = -log p_0; None
        otherwise (the loss is unbounded)."""
        p0 = self.weights[0] if self.shifts[0] == 0 else Fraction(0)
        if self.direction != "add" or p0 == 0:
            return None
        return -to_ball(p0).log()

    # -- the loss r(x) and its root --------------------------------------------------------------------
    def _r_ball(self, x: Fraction) -> Ball:
        """r(x) in ball arithmetic (module docstring)."""
        return _log_sum(self._terms(to_ball(x)))

    def _balls(self) -> tuple[list[Ball], list[Ball], Ball, Ball]:
        """Balls of the weights, the shifts, 1/(2 sigma^2) and 1/(sigma sqrt 2) at the working
        precision, kept per precision on the instance (loss_tail runs once per lattice point:
        converting the Fractions every time dominated its cost)."""
        prec = current_prec()
        cache = self._cache  # type: ignore[attr-defined]
        if prec not in cache:
            z = to_ball(self.sigma)
            cache[prec] = (
                [to_ball(w) for w in self.weights],
                [to_ball(c) for c in self.shifts],
                1 / (2 * z * z),
                1 / (z * to_ball(2).sqrt()),
            )
        return cache[prec]

    def _terms(self, xb: Ball) -> list[Ball]:
        """The terms p_i exp((2 c_i x - c_i^2)/(2 s^2)) of e^{r(x)}."""
        ws, cs, inv_s2, _ = self._balls()
        return [w * ((2 * c * xb - c * c) * inv_s2).exp() for c, w in zip(cs, ws, strict=True)]

    def _root_float(self, y: float) -> float:
        """Float root of r(x) = y (only a starting point). Newton runs on z = e^{c1 x / s^2}
        (c1 the least positive shift), where e^{r} = sum_i p_i e^{-c_i^2/(2 s^2)} z^{c_i/c1} is a
        convex increasing function of z (exponents 0 or >= 1): from a start right of the root,
        the iterates decrease monotonically to it, and quickly (one step when there are two
        shifts, 0 and c1). Each positive-shift term alone reaches e^y at its x_i, and e^r is at
        least that term, so the least x_i is such a start. Steps are taken in log z to avoid
        overflow."""
        cs, logws, s2 = self._floats  # type: ignore[attr-defined]
        c1 = min(c for c in cs if c > 0)
        x = min((y - lw) * s2 / (2 * c) + c / 2 for c, lw in zip(cs, logws, strict=True) if c > 0)
        for _ in range(100):
            logs = [lw + (2 * c * x - c * c) / s2 for c, lw in zip(cs, logws, strict=True)]
            m = max(max(logs), y)
            es = [math.exp(t - m) for t in logs]
            slope = sum(e * c / c1 for e, c in zip(es, cs, strict=True))  # z G'(z), scaled by e^-m
            ratio = 1 - (sum(es) - math.exp(y - m)) / slope
            if not ratio > 0:
                break
            dx = math.log(ratio) * s2 / (2 * c1)
            x += dx
            if abs(dx) <= 1e-15 * max(1.0, abs(x)):
                break
        return x

    def _root_bracket(self, y: Ball) -> tuple[Fraction, Fraction]:
        """Exact xl < xr with r(xl) < y < r(xr) proved (y strictly inside r's range).

        Newton steps in ball midpoints from the float root reach the working precision; the bracket
        is then widened until both inequalities are proved.
        """
        x = Fraction(self._root_float(float(y.mid())))
        # the float root is usually within 2^-45 relative: a bracket of that width costs two
        # evaluations, and its tails are then exact to about 1e-13 relative (each tail and its
        # density scale together), far below what the lattice resolves
        w = Fraction(max(1, abs(math.floor(x))) if x else 1) / 2**45
        if self._r_ball(x - w) < y and self._r_ball(x + w) > y:
            return x - w, x + w
        _, cs, inv_s2, _ = self._balls()
        for _ in range(8):  # Newton: r'(x) = 2 sum_i t_i c_i / (2 s^2 sum_i t_i)
            terms = self._terms(to_ball(x))
            total = sum(terms[1:], terms[0])
            slope = sum((t * c for t, c in zip(terms, cs, strict=True)), to_ball(0)) * 2 * inv_s2 / total
            mid = ((total.log() - y) / slope).mid()
            if not mid.is_finite():
                break
            x -= Fraction(*_dyadic(mid))
            if abs(float(mid)) <= 2.0 ** (-current_prec()) * max(1.0, abs(float(x))):
                break
        w = Fraction(max(1, abs(math.floor(x))) if x else 1) / 2 ** (current_prec() - 8)
        for _ in range(200):
            xl, xr = x - w, x + w
            if self._r_ball(xl) < y and self._r_ball(xr) > y:
                return xl, xr
            w *= 4
        raise PrecisionExhausted(f"{self.mechanism}: the loss level y={y} could not be located (raise the precision)")

    def _tails_at(self, x: Fraction) -> tuple[Ball, Ball]:
        """(P(X > x) under the mixture, P(X > x) under N(0, sigma^2))."""
        ws, cs, _, c = self._balls()
        xb = to_ball(x)
        base = (xb * c).erfc() / 2
        mix = to_ball(0)
        for cc, w in zip(cs, ws, strict=True):
            mix += w * ((xb - cc) * c).erfc() / 2
        return mix, base

    def loss_tail(self, ell: Ball) -> tuple[Ball, Ball]:
        """Contract: contains (P(L > ell), Q(L > ell)) of the chosen direction (not ``both``).

        remove: L = r(X) under P: L > ell iff X > x(ell); (1, 1) when ell < log p_0 (r > log p_0
        everywhere). add: P' = N(0, s^2), Q' = the mixture, L = -r(X): L > ell iff
        r(X) < -ell iff X < x(-ell); (0, 0) when -ell <= log p_0. The root is bracketed by
        :meth:`_root_bracket` and the tails at the two ends united (module docstring).
        """
        if self.direction == "both":
            raise Unsupported("direction=both: the loss distribution is per direction; use remove and add")
        remove = self.direction == "remove"
        y = ell if remove else -ell
        p0 = self.weights[0] if self.shifts[0] == 0 else Fraction(0)
        one, zero = to_ball(1), to_ball(0)
        if p0:
            floor = to_ball(p0).log()
            if y < floor or (not remove and y <= floor):
                return (one, one) if remove else (zero, zero)
            if not y > floor:
                raise PrecisionExhausted(f"loss_tail: ell={ell} is within the ball's width of the loss's end log p_0")
        xl, xr = self._root_bracket(y)
        (m_l, b_l), (m_r, b_r) = self._tails_at(xl), self._tails_at(xr)
        mix, base = m_r.union(m_l), b_r.union(b_l)
        return (mix, base) if remove else (1 - base, 1 - mix)


def _log_sum(terms: list[Ball]) -> Ball:
    return sum(terms[1:], terms[0]).log()


def _dyadic(x: Ball) -> tuple[int, int]:
    """(numerator, denominator) of an exact arb midpoint."""
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return (man * 2**exp, 1) if exp >= 0 else (man, 2**-exp)
