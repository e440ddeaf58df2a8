"""Poisson-subsampled Gaussian (DP-SGD): P = (1-q) N(0, z^2) + q N(1, z^2), Q = N(0, z^2).

``direction`` selects the divergence: ``remove`` is D(P||Q), ``add`` is D(Q||P), ``both`` is
the larger of the two at each order (K = max of the two CGFs, sound for either neighbour).
Integer orders use the exact binomial sum (remove); every other case is a rigorous integral with
analytic tail bounds. Conversions default to a named integer-order grid (``grid_by_default``),
as peer accountants do, so that results compare like for like; pass real orders explicitly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, binomial, current_prec, integrate_real, phi, pi, to_ball
from certdp.errors import Unsupported, invalid
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.params import Number, real
from certdp.pairs.tails import cumulants_from_central, gaussian_poly_tail

DIRECTIONS = ("remove", "add", "both")


@dataclass(frozen=True, init=False)
class SubsampledGaussian(PrivacyPair):
    """Poisson-subsampled Gaussian with sampling rate q in (0, 1] and noise multiplier sigma."""

    q: Fraction
    sigma: Fraction
    direction: str

    mechanism = "subsampled-gaussian"
    grid_by_default = True

    @property
    def rho_attained_at_infinity(self) -> bool:  # type: ignore[override]
        """Contract: True for remove and both (proof in rho_closed_form)."""
        return self.direction != "add"

    def __init__(self, q: Number, sigma: Number, direction: str = "both") -> None:
        object.__setattr__(self, "q", real("q", q, gt=0, le=1))
        object.__setattr__(self, "sigma", real("sigma", sigma, gt=0))
        if direction not in DIRECTIONS:
            raise invalid("direction", direction, f"must be one of {', '.join(DIRECTIONS)}")
        object.__setattr__(self, "direction", direction)

    # -- remove direction: exact finite sum ---------------------------------------------------
    def _cgf_remove(self, alpha: int) -> Ball:
        """K(alpha-1) for D(P||Q): log1p(sum_{k>=2} C(alpha,k)(1-q)^{alpha-k} q^k expm1(k(k-1)/(2 z^2))).

        Contract: exact finite sum (MATH.md section 2, binomial expansion; proofs_checks
        ``subsampled_binomial``, ``subsampled_k1``). The
        k = 0, 1 terms have expm1(0) = 0 and the binomial weights sum to 1, so this is
        log of the MATH.md sum, kept free of cancellation for small q.
        """
        q = to_ball(self.q)
        p = 1 - q
        h = 1 / (2 * to_ball(self.sigma) ** 2)
        acc = to_ball(0)
        for k in range(2, alpha + 1):
            acc += binomial(alpha, k) * p ** (alpha - k) * q**k * (h * (k * (k - 1))).expm1()
        return acc.log1p()

    # -- add direction: rigorous integral -----------------------------------------------------
    def _cgf_add(self, alpha: int) -> Ball:
        """K(alpha-1) for D(Q||P) = log E_{G~N(0,1)}[rho(G)^{-(alpha-1)}], rho(g) = 1-q+q e^{g/z - 1/(2z^2)}.

        Contract: the integrand is meromorphic (integer power), integrated over [-L, L] by
        acb.integral. Tails: rho >= 1-q everywhere and rho >= 1 for g >= 1/(2z), so the left
        tail lies in [0, (1-q)^{-(alpha-1)} Phi(-L)] and the right tail in [0, Phi(-L)], with
        L >= 1/(2z). The expectation is >= 1 (Jensen: x^{-m} convex, E rho = 1), so K >= 0.
        """
        m = alpha - 1
        q = to_ball(self.q)
        z = to_ball(self.sigma)
        qf, zf = float(self.q), float(self.sigma)
        prec = current_prec()
        lead = -m * math.log1p(-qf) if qf < 1 else math.inf
        if not math.isfinite(lead):
            return to_ball(0).union(to_ball("inf"))  # q = 1: Q has mass where P has none
        L = max(1 / (2 * zf) + 1, math.sqrt(2 * ((prec + 10) * math.log(2) + lead)) + 1)
        shift = 1 / (2 * z * z)
        norm = 1 / (2 * pi()).sqrt()

        def f(g, analytic):  # noqa: ANN001 - acb callback signature
            rho = 1 - q + q * (g / z - shift).exp()
            return norm * (-g * g / 2).exp() * rho ** (-m)

        Lb = to_ball(L)
        body = integrate_real(f, -Lb, Lb, what="subsampled-gaussian add-direction CGF")
        tail_mass = phi(-Lb)
        tail = to_ball(0).union(((1 - q) ** (-m) + 1) * tail_mass)
        return (body + tail).log()

    def _moment_real(self, power: Ball) -> Ball:
        """E_{G~N(0,1)}[rho(G)^power] for a real exponent, rho(g) = 1 - q + q W(g), W = e^{g/z - 1/(2z^2)}.

        Contract: contains the expectation for every power in the ball. The integrand
        phi(g) exp(power log rho) uses Arb's log with the analyticity flag (non-finite where the
        complex ball touches the branch cut), integrated on [-L, R]. Tails (both >= 0):
        left, g <= -L <= 0: rho in [1-q, 1], so rho^p <= max(1, (1-q)^p) and the tail is at most
        that times Phi(-L); right, g >= R >= 1/(2z): rho <= W when W >= 1, so for p > 0
        rho^p <= W^p and the tail is at most e^{p(p-1)/(2z^2)} Phi(-(R - p/z)) (completing the
        square), and for p < 0, rho >= 1 gives rho^p <= 1 and the tail is at most Phi(-R).
        """
        q = to_ball(self.q)
        z = to_ball(self.sigma)
        zf, qf, pf = float(self.sigma), float(self.q), float(power.mid())
        prec = current_prec()
        bits = (prec + 10) * math.log(2)
        low_factor = max(0.0, -pf * math.log1p(-qf)) if qf < 1 else 0.0
        L = math.sqrt(2 * (bits + low_factor)) + 1
        R = max(1 / (2 * zf), max(pf, 0.0) / zf) + math.sqrt(2 * (bits + max(pf * (pf - 1), 0.0) / (2 * zf * zf))) + 1
        shift = 1 / (2 * z * z)
        norm = 1 / (2 * pi()).sqrt()

        def f(g, analytic):  # noqa: ANN001 - acb callback signature
            rho = 1 - q + q * (g / z - shift).exp()
            return norm * (-g * g / 2 + power * rho.log(analytic=analytic)).exp()

        body = integrate_real(f, to_ball(-L), to_ball(R), what=f"subsampled-gaussian moment {pf:g}")
        left_factor = to_ball(1).max((1 - q) ** power) if self.q < 1 else to_ball(1)
        left = left_factor * phi(to_ball(-L))
        if pf > 0:
            right = (power * (power - 1) / (2 * z * z)).exp() * phi(-(to_ball(R) - power / z))
        else:
            right = phi(to_ball(-R))
        return body + to_ball(0).union(left + right)

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) of the chosen direction for every t > 0 in the ball: the exact
        binomial sum at integer t (remove), else log of the integral of :meth:`_moment_real`
        (remove: exponent t+1; add: exponent -t, as D(Q||P) = log E_Q[rho^{-t}]/t)."""
        require_positive_t(t)
        self.check_order(t)
        if t.is_exact() and t.is_integer():
            alpha = int(t.unique_fmpz()) + 1
            if self.direction == "remove":
                return self._cgf_remove(alpha)
            if self.direction == "add":
                return self._cgf_add(alpha)
            return self._cgf_remove(alpha).max(self._cgf_add(alpha))
        if self.q == 1:
            return t * (t + 1) / (2 * to_ball(self.sigma) ** 2) if self.direction != "add" else to_ball("inf")
        remove = lambda: self._moment_real(t + 1).log()  # noqa: E731
        add = lambda: self._moment_real(-t).log()  # noqa: E731
        if self.direction == "remove":
            return remove()
        if self.direction == "add":
            return add()
        return remove().max(add())

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball]:
        """Contract: contains kappa_1..kappa_4 of the loss of the chosen direction (remove:
        L = log rho under P, E_P h(L) = E_G[rho h(log rho)]; add: L = -log rho under Q,
        E_Q h(L) = E_G[h(-log rho)]), kappa_1 = KL, kappa_2..3 central moments, kappa_4 = mu_4 - 3 mu_2^2.
        Central moments by acb.integral on [-L, L]; tails: log(1-q) <= log rho <= max(0, g/z), so
        |L - kappa_1| <= A + |g|/z with A = -log(1-q) + |kappa_1|; the weight is at most
        phi(g) + phi(g - 1/z) <= 2 phi(|g| - 1/z) for |g| >= 1/z (rho <= 1 + W, W phi(g) = phi(g - 1/z));
        so both tails together are at most 4 phi(L - c)(A + L/z)^k/delta, c = 1/z,
        delta = (L - c) - k/L > 0 (log-slope bound, as for the Gaussian mixture). ``both`` has no
        single loss: Unsupported. q = 1: remove is the Gaussian pair, add has infinite KL."""
        if self.direction == "both":
            raise Unsupported("subsampled-gaussian: loss cumulants need one direction (remove or add), not both")
        z = to_ball(self.sigma)
        if self.q == 1:
            if self.direction == "add":
                raise Unsupported("subsampled-gaussian: q=1 add direction has infinite KL")
            c = 1 / (2 * z * z)
            return c, 2 * c, to_ball(0), to_ball(0)
        q = to_ball(self.q)
        k1 = self._kl(self.direction)
        zf, qf = float(self.sigma), float(self.q)
        a = -(1 - q).log() + abs(k1)
        af = -math.log1p(-qf) + abs(float(k1.mid())) + 1
        bits = (current_prec() + 10) * math.log(2)
        c = 1 / zf
        big = c + math.sqrt(2 * (bits + 4 * math.log(af + (c + 50) / zf) + 10)) + 4 + c
        shift = 1 / (2 * z * z)
        norm = 1 / (2 * pi()).sqrt()
        remove = self.direction == "remove"
        out = []
        for k in (2, 3, 4):

            def f(g, analytic, k=k):  # noqa: ANN001 - acb callback signature
                rho = 1 - q + q * (g / z - shift).exp()
                lg = rho.log(analytic=analytic)
                weight = norm * (-g * g / 2).exp() * (rho if remove else 1)
                return weight * ((lg if remove else -lg) - k1) ** k

            Lb = to_ball(big)
            body = integrate_real(f, -Lb, Lb, what=f"subsampled-gaussian loss moment {k}")
            tail = 4 * gaussian_poly_tail(Lb, 1 / z, a, 1 / z, k, "subsampled-gaussian cumulants")
            out.append(body + (-tail).union(tail))
        return cumulants_from_central(k1, *out)

    def kl_ball(self) -> Ball:
        """Contract: contains KL of the chosen direction (max of the two for ``both``).

        remove: E_{G}[rho log rho]; add: E_{G}[-log rho], rho as in :meth:`_cgf_add`, integrated
        over [-L, L] with log's branch cut checked on complex balls. Tails (L >= 1/(2z) + 2/z):
        for g <= -L, rho in [1-q, 1] so |rho log rho|, |log rho| <= -log(1-q), times Phi(-L);
        for g >= L, 0 <= rho log rho <= rho(rho-1) <= qW + q^2 W^2 and 0 <= log rho <= qW with
        W = e^{g/z - 1/(2z^2)}, E[W; G >= L] = Phi(1/z - L), E[W^2; G >= L] = e^{1/z^2} Phi(2/z - L).
        """
        if self.direction == "both":
            return self._kl("remove").max(self._kl("add"))
        return self._kl(self.direction)

    def _kl(self, direction: str) -> Ball:
        q = to_ball(self.q)
        z = to_ball(self.sigma)
        if self.q == 1:
            if direction == "add":
                return to_ball("inf")
            return 1 / (2 * z * z)  # Gaussian KL
        prec = current_prec()
        zf = float(self.sigma)
        L = 2 / zf + 1 / (2 * zf) + math.sqrt(2 * (prec + 10) * math.log(2)) + 1
        shift = 1 / (2 * z * z)
        norm = 1 / (2 * pi()).sqrt()

        def f(g, analytic):  # noqa: ANN001 - acb callback signature
            rho = 1 - q + q * (g / z - shift).exp()
            lg = rho.log(analytic=analytic)
            core = rho * lg if direction == "remove" else -lg
            return norm * (-g * g / 2).exp() * core

        Lb = to_ball(L)
        body = integrate_real(f, -Lb, Lb, what=f"subsampled-gaussian {direction} KL")
        left = -(1 - q).log() * phi(-Lb)
        if direction == "remove":
            right = q * phi(1 / z - Lb) + q * q * (1 / (z * z)).exp() * phi(2 / z - Lb)
            tail = (-left).union(left + right)
        else:
            right = q * phi(1 / z - Lb)
            tail = (-right).union(left)
        return body + tail

    def rho_closed_form(self) -> Ball | None:
        """Contract: contains rho = 1/(2 sigma^2) for directions ``remove`` and ``both``
        (proofs_checks ``subsampled_rho_limit``).

        Proof. Upper bound, both directions: E_Q[(p/Q)^alpha] is convex in p, and
        sum P^{1-alpha} Q^alpha is jointly convex (a perspective), so mixing with weight q gives
        e^{(alpha-1) D_alpha} <= (1-q) + q e^{alpha(alpha-1)/(2 z^2)} <= e^{alpha(alpha-1)/(2z^2)},
        i.e. K(t)/(t(t+1)) <= 1/(2 z^2). Lower bound, remove direction: the k = alpha term of the
        binomial sum gives K(t) >= (t+1) log q + t(t+1)/(2 z^2), so the ratio tends to 1/(2 z^2).
        For ``add`` alone the sup sits at a finite order: certdp.notions.zcdp searches it over real orders.
        """
        if self.direction == "add":
            return None
        return 1 / (2 * to_ball(self.sigma) ** 2)

    def ratio_tail_bound(self, T: float) -> Ball:
        """1/(2 sigma^2) bounds the ratio in every direction (upper bound in rho_closed_form); for
        ``add`` the loss is also bounded: D_inf(Q||P) = -log(1-q), so the ratio is <= D_inf/(T+1).

        Contract: sup_{t>=T} K(t)/(t(t+1)) <= the upper end (proofs above and in the base class).
        """
        glob = 1 / (2 * to_ball(self.sigma) ** 2)
        loss = self.max_loss_ball()
        return glob if loss is None else glob.min(loss / (to_ball(T) + 1))

    def max_loss_ball(self) -> Ball | None:
        """Contract: contains D_inf for ``add`` with q < 1: sup log(Q/P) = -log(1-q), approached as
        g -> -inf (rho -> 1-q, rho >= 1-q everywhere); None otherwise (unbounded loss)."""
        if self.direction != "add" or self.q == 1:
            return None
        return -(1 - to_ball(self.q)).log()
