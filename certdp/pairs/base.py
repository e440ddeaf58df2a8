"""The privacy-pair protocol: frozen, validated descriptions that can evaluate their CGF.

A pair (P, Q) is described by exact parameters and evaluated at the current working precision.
Evaluation never mutates the description (dp_accounting's DpEvent idea). Every method returning
a ball states its enclosure contract.
"""

from __future__ import annotations

import abc
import functools
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

from certdp.enclose import Ball, current_prec, to_ball, upper_float
from certdp.errors import Unsupported, invalid
from certdp.pairs.curvature import TiltedPoint, curvature_on, tilted_point
from certdp.pairs.domain import work_limit
from certdp.pairs.params import exact_str

if TYPE_CHECKING:
    import numpy as np


def decay_sup(form: tuple[Ball, Ball], T: float) -> Ball:
    """sup over t >= T of L + c/t for the form (L, c) of :meth:`PrivacyPair.ratio_tail_decay`.

    Contract: upper end >= L + c/t for every t >= T > 0: L + c/T when c >= 0, L when c < 0
    (c/t increases to 0); a c straddling 0 takes max(c, 0)/T.
    """
    L, c = form
    return L + c.max(to_ball(0)) / to_ball(T)


@dataclass(frozen=True)
class LossGrid:
    """The arithmetic progression anchor + spacing Z that holds every atom of a pair's loss
    (:meth:`PrivacyPair.loss_grid`); ``atomic``: the loss has no continuous part."""

    spacing: Fraction
    anchor: Fraction
    atomic: bool


@dataclass(frozen=True)
class PrivacyPair(abc.ABC):
    """Base class. Subclasses set ``mechanism`` and implement :meth:`cgf_ball` and :meth:`kl_ball`.

    Conventions (docs/math.md §1): K(t) = log E_P[exp(t L)], L = log dP/dQ, t > 0; Renyi order
    alpha = t + 1; rho = sup_t K(t)/(t(t+1)).
    """

    mechanism: ClassVar[str] = ""
    #: False for pairs whose CGF is only available at integer t (integer Renyi orders).
    real_orders: ClassVar[bool] = True
    #: True when conversions should search a named integer-order grid unless orders are given
    #: (peer accountants work on such grids; results then compare like for like).
    grid_by_default: ClassVar[bool] = False
    #: True when K(t)/(t(t+1)) tends to the closed-form rho as t -> inf (used by composition).
    rho_attained_at_infinity: ClassVar[bool] = False
    #: Why the pair has an order limit (see :meth:`max_t`), for the LimitExceeded message.
    order_limit_reason: ClassVar[str] = "its evaluation cost grows with the order"

    @abc.abstractmethod
    def cgf_ball(self, t: Ball) -> Ball:
        """Ball containing K(t) for every t in the ball (t > 0).

        Contract: contains K(t) for every t in the ball; proof in the subclass docstring.
        """

    @abc.abstractmethod
    def kl_ball(self) -> Ball:
        """Ball containing KL(P||Q) = lim_{t->0} K(t)/t.

        Contract: contains KL(P||Q); proof in the subclass docstring.
        """

    def rho_closed_form(self) -> Ball | None:
        """Ball containing rho when a proof of its closed form exists (see the subclass), else None.

        Contract: contains rho when not None; the proof is in the subclass docstring.
        """
        return None

    def ratio_upper_bound(self) -> Ball | None:
        """Ball whose upper end bounds K(t)/(t(t+1)) for every t > 0, or None when unknown.

        The order search caps every interval bound with it, so a ratio that is flat just below
        its sup (a near-Gaussian pair: chords would need millions of points) is settled as soon
        as a probe comes within the tolerance. Default: a proved closed-form rho.

        Contract: sup_{t>0} K(t)/(t(t+1)) <= upper end (the closed form's proof; overrides state theirs).
        """
        return self.rho_closed_form()

    def ratio_tail_bound(self, T: float) -> Ball | None:
        """Ball whose upper end bounds sup_{t >= T} K(t)/(t(t+1)); None when no bound is known.

        A proved closed-form rho bounds the ratio everywhere; otherwise, with bounded loss,
        K(t)/(t(t+1)) = D_{t+1}/(t+1) <= D_inf/(T+1) for t >= T.

        Contract: sup_{t>=T} K(t)/(t(t+1)) <= upper end (proof above).
        """
        rho = self.rho_closed_form()
        if rho is not None:
            return rho
        loss = self.max_loss_ball()
        return None if loss is None else loss / (to_ball(T) + 1)

    def ratio_tail_decay(self, T: float) -> tuple[Ball, Ball] | None:
        """(L, c) such that K(t)/(t(t+1)) <= L + c/t for every t >= T, or None when unknown.

        The form lets a composition add its parts' tails (certdp.pairs.composition): a part whose
        ratio approaches its limit from below (c < 0, the subsampled Gaussian) can then absorb
        another part's c > 0, where a sum of the parts' sups over [T, inf) could not. Default: a
        proved closed-form rho gives (rho, 0); a bounded loss gives (0, D_inf), as
        K(t)/(t(t+1)) = D_{t+1}/(t+1) <= D_inf/t. When both exist, the one whose sup over
        [T, inf) (L + max(c, 0)/T) is smaller is returned.

        Contract: for every t >= T, K(t)/(t(t+1)) <= upper(L) + upper(c)/t (proofs above; the
        subclasses' overrides state theirs).
        """
        rho = self.rho_closed_form()
        loss = self.max_loss_ball()
        forms = []
        if rho is not None:
            forms.append((rho, to_ball(0)))
        if loss is not None:
            forms.append((to_ball(0), loss))
        if not forms:
            return None
        return min(forms, key=lambda f: upper_float(decay_sup(f, T)))

    def ratio_tail_witness(self) -> Ball | None:
        """Ball whose lower end is <= limsup_{t->inf} K(t)/(t(t+1)); None when unknown.

        Contract: lower end <= limsup_{t->inf} K(t)/(t(t+1)).
        """
        return self.rho_closed_form() if self.rho_attained_at_infinity else None

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball] | None:
        """Balls containing the cumulants kappa_1..kappa_4 of L under P (K(t) = sum kappa_j t^j/j!),
        when the pair implements them (the local expansion of docs/math.md §5.1); else None.

        Contract: contains kappa_1..kappa_4 when not None (subclass docstring).
        """
        return None

    def curvature_upper(self, a: float, b: float) -> Ball | None:
        """Ball whose upper end bounds sup_{a<=t<=b} K''(t) (0 <= a < b exact floats), or None
        when the pair has none.

        Default, for pairs with :meth:`tilted_square_moment`: K''(t) = Var_t(L) <= N_c(t) e^{-K(t)},
        with log N_c below its chord and K above its tangents at a and b
        (certdp.pairs.curvature.curvature_on). The data at each end (K, K' and the moments) are
        computed once per order and precision: the rho search asks for adjacent intervals.

        Contract: upper end >= sup_{a<=t<=b} K''(t) when not None (proofs_checks
        ``tilted_curvature``, ``tilted_log_convexity``; docs/math.md §1, property 5).
        """
        if not 0 <= a < b:
            raise invalid("interval", (a, b), "must satisfy 0 <= a < b")
        pa, pb = _tilted_point(self, Fraction(a), current_prec()), _tilted_point(self, Fraction(b), current_prec())
        return None if pa is None or pb is None else curvature_on(pa, pb)

    def tilted_square_moment(self, t: Ball, c: Ball) -> Ball | None:
        """Ball containing N(t) = E_P[e^{tL}(L - c)^2], or None when the pair does not implement it.

        Contract: contains N(t) when not None (subclass docstring).
        """
        return None

    def loss_tail(self, ell: Ball) -> tuple[Ball, Ball] | None:
        """(P(L > ell), Q(L > ell)) for an exact real ell, or None when the pair does not implement
        its loss distribution (the lattice accountant, certdp.notions.pld, then refuses it).

        Contract: contains the two tail masses of the privacy loss L = log dP/dQ (L = +inf where
        Q has no density) when not None (subclass docstring).
        """
        return None

    def loss_tails(self, ells: list[Ball]) -> list[tuple[Ball, Ball] | None]:
        """:meth:`loss_tail` at each of the sorted losses ``ells`` (pairs override it with a faster
        route; this default loops).

        Contract: entry i contains the two tails at ells[i], or is None when the pair does not
        implement its loss distribution (as :meth:`loss_tail`).
        """
        return [self.loss_tail(ell) for ell in ells]

    def loss_tail_float(self, ell: float) -> tuple[float, float] | None:
        """(P(L > ell), Q(L > ell)) in floats, for steering only (the lattice offset search:
        certdp.notions.pld_lattice.tuned_offset), or None when the pair has no float version.

        Contract: floats near the two tails of :meth:`loss_tail`; no enclosure (nothing
        certified is computed from them).
        """
        return None

    def loss_tails_float(self, ells: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`loss_tail_float` at every loss of the float array ``ells`` (pairs override it with
        vectorised formulas; this default loops), or None when the pair has no float version.

        Contract: two float arrays near the two tails of :meth:`loss_tail` at ``ells``; no
        enclosure (steering only).
        """
        import numpy as np  # lazily: only the lattice accountant's steering needs it

        if self.loss_tail_float(0.0) is None:
            return None
        pairs = [self.loss_tail_float(float(e)) for e in ells]
        if any(t is None for t in pairs):
            return None
        out = np.array(pairs, dtype=float).reshape(len(pairs), 2)
        return out[:, 0], out[:, 1]

    def loss_grid(self) -> LossGrid | None:
        """Where the atoms of the loss lie, for pairs whose loss has atoms (point masses): every
        atom of L (under P, hence under Q) is in anchor + spacing Z. None: no atoms (or unknown).

        The lattice accountant (certdp.notions.pld) puts its lattice just below these atoms, so
        that they cost it nothing; ``atomic`` says L has no continuous part (the lattice is then
        the grid itself, or a multiple of its spacing).

        Contract: exact (spacing > 0, anchor, atomic) with every atom of L in anchor + spacing Z,
        and L supported on that set when atomic (subclass docstring).
        """
        return None

    def max_loss_ball(self) -> Ball | None:
        """Ball containing D_inf(P||Q) = ess sup L when it is finite and known, else None.

        Contract: contains D_inf when not None (subclass docstring).
        """
        return None

    def max_t(self) -> Fraction | None:
        """The largest t = order - 1 this pair evaluates (a work limit), or None for no limit.

        Contract: None, or a bound beyond which :meth:`check_order` raises LimitExceeded.
        """
        return None

    def check_order(self, t: Ball) -> None:
        """Raise Unsupported when t is not an order this pair can evaluate, and LimitExceeded
        when it is beyond the pair's work limit (:meth:`max_t`, reason ``order_limit_reason``).

        Contract: returns only for orders this pair can evaluate within its work limit.
        """
        if not self.real_orders and not t.is_integer():
            raise Unsupported(f"{self.mechanism} is supported at integer orders only: t={t}")
        limit = self.max_t()
        if limit is not None and not t <= to_ball(limit):
            raise work_limit("order", float(t.mid()) + 1, float(limit + 1), self.mechanism, self.order_limit_reason)

    def params(self) -> dict[str, str]:
        """Exact parameter values as canonical decimal strings (serialisable description).

        Contract: exact decimal strings (or p/q) of every field.
        """
        out: dict[str, str] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = exact_str(v) if isinstance(v, Fraction) else str(v)
        return out

    def describe(self) -> str:
        """Contract: mechanism name and exact parameters."""
        inner = ", ".join(f"{k}={v}" for k, v in self.params().items())
        return f"{self.mechanism}({inner})"


@functools.lru_cache(maxsize=512)
def _tilted_point(pair: PrivacyPair, t: Fraction, prec: int) -> TiltedPoint | None:
    """PrivacyPair.curvature_upper's data at t and this precision, or None without moments."""
    if type(pair).tilted_square_moment is PrivacyPair.tilted_square_moment:
        return None
    if t == 0:
        k, centre = to_ball(0), upper_float(pair.kl_ball())  # K(0) = 0; K'(0) = KL
    else:
        k = pair.cgf_ball(to_ball(t))
        centre = upper_float(k) / float(t)  # the mean slope on [0, t]: near K'(t) for moderate t
    return tilted_point(t, k, centre, pair.tilted_square_moment)  # type: ignore[arg-type]


def require_positive_t(t: Ball) -> None:
    """Contract: returns only if every point of t is > 0."""
    if not t > 0:
        raise invalid("t", t, "must be > 0")
