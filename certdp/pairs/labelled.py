"""A mixture of pairs whose component is revealed with the output (docs/math.md §12.6):

    P = sum_k v_k (k, P_k),   Q = sum_k v_k (k, Q_k),

exact weights v_k >= 0 summing to 1. Given the label k the output is drawn from P_k or Q_k, so
the loss of an output (k, x) is the component's loss L_k(x), and every quantity of the loss
distribution is the weighted sum of the components':

    P(L > l) = sum_k v_k P_k(L_k > l),   Q(L > l) = sum_k v_k Q_k(L_k > l),
    E_P e^{tL} = sum_k v_k E_{P_k} e^{t L_k},   KL = sum_k v_k KL_k.

certdp uses it for sampling with replacement (the label is the number of copies of the record in
the batch), where revealing it gives a pair that dominates the mechanism.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from certdp.enclose import Ball, to_ball
from certdp.errors import invalid
from certdp.pairs.base import PrivacyPair
from certdp.pairs.params import exact_str

if TYPE_CHECKING:
    import numpy as np

#: Most components (each loss tail evaluates every component).
MAX_LABELS = 64


@dataclass(frozen=True, init=False)
class LabelledMixture(PrivacyPair):
    """P = sum_k v_k (k, P_k), Q = sum_k v_k (k, Q_k) with the label k revealed (module docstring).

    Domain: 1 to MAX_LABELS components, each a pair of one direction (not ``both``); exact
    weights >= 0 summing to 1 exactly.
    """

    components: tuple[PrivacyPair, ...]
    weights: tuple[Fraction, ...]

    mechanism = "labelled-mixture"

    def __init__(self, components: tuple[PrivacyPair, ...], weights: tuple[Fraction, ...]) -> None:
        if not components or len(components) != len(weights):
            raise invalid("components", len(components), f"must be as many as the weights ({len(weights)}), >= 1")
        if len(components) > MAX_LABELS:
            raise invalid("components", len(components), f"must be at most {MAX_LABELS}")
        for i, c in enumerate(components):
            if getattr(c, "direction", None) == "both":
                raise invalid(f"components[{i}].direction", "both", "must be one direction (remove or add)")
        ws = tuple(Fraction(w) for w in weights)
        if any(w < 0 for w in ws) or sum(ws) != 1:
            raise invalid("weights", f"sum {float(sum(ws))!r}", "must be >= 0 and sum to 1 exactly")
        object.__setattr__(self, "components", tuple(components))
        object.__setattr__(self, "weights", ws)
        object.__setattr__(self, "_balls", {})

    def _w(self) -> list[Ball]:
        from certdp.enclose import current_prec

        cache = self._balls  # type: ignore[attr-defined]
        prec = current_prec()
        if prec not in cache:
            cache[prec] = [to_ball(w) for w in self.weights]
        return cache[prec]

    def params(self) -> dict[str, str]:
        """Contract: the components' descriptions and the exact weights."""
        return {
            "components": "; ".join(c.describe() for c in self.components),
            "weights": ",".join(exact_str(w) for w in self.weights),
        }

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) = log sum_k v_k e^{K_k(t)} (module docstring), each K_k from the
        component's own enclosure."""
        total = to_ball(0)
        for w, c in zip(self._w(), self.components, strict=True):
            total += w * c.cgf_ball(t).exp()
        return total.log()

    def max_t(self) -> Fraction | None:
        """Contract: the least order limit of the components (None: none has one)."""
        limits = [m for m in (c.max_t() for c in self.components) if m is not None]
        return min(limits) if limits else None

    def kl_ball(self) -> Ball:
        """Contract: contains KL = sum_k v_k KL_k (module docstring)."""
        total = to_ball(0)
        for w, c in zip(self._w(), self.components, strict=True):
            total += w * c.kl_ball()
        return total

    def loss_tail(self, ell: Ball) -> tuple[Ball, Ball] | None:
        """Contract: contains (P(L > ell), Q(L > ell)) = the weighted sums of the components'
        enclosures (module docstring); None when a component has no loss distribution."""
        p, q = to_ball(0), to_ball(0)
        for w, c in zip(self._w(), self.components, strict=True):
            t = c.loss_tail(ell)
            if t is None:
                return None
            p, q = p + w * t[0], q + w * t[1]
        return p, q

    def loss_tails(self, ells: list[Ball]) -> list[tuple[Ball, Ball] | None]:
        """Contract: as :meth:`loss_tail` at each of the sorted ``ells``, from the components'
        own (faster) loss_tails."""
        out: list[tuple[Ball, Ball] | None] = [(to_ball(0), to_ball(0)) for _ in ells]
        for w, c in zip(self._w(), self.components, strict=True):
            for i, t in enumerate(c.loss_tails(ells)):
                acc = out[i]
                if t is None or acc is None:
                    out[i] = None
                else:
                    out[i] = (acc[0] + w * t[0], acc[1] + w * t[1])
        return out

    def loss_tail_float(self, ell: float) -> tuple[float, float] | None:
        """Contract: floats near the tails (weighted sums of the components'); steering only."""
        p = q = 0.0
        for w, c in zip(self.weights, self.components, strict=True):
            t = c.loss_tail_float(ell)
            if t is None:
                return None
            p, q = p + float(w) * t[0], q + float(w) * t[1]
        return p, q

    def loss_tails_float(self, ells: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Contract: float arrays near the tails at ``ells``; steering only."""
        p = q = None
        for w, c in zip(self.weights, self.components, strict=True):
            t = c.loss_tails_float(ells)
            if t is None:
                return None
            p = float(w) * t[0] if p is None else p + float(w) * t[0]
            q = float(w) * t[1] if q is None else q + float(w) * t[1]
        return p, q
