"""Independent (adaptive) composition: CGFs add (docs/math.md §1)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from certdp.enclose import Ball, to_ball
from certdp.errors import InvalidArgument, LimitExceeded, invalid
from certdp.pairs.base import PrivacyPair, decay_sup, require_positive_t
from certdp.pairs.params import integer

#: Most distinct parts of a composition (a CGF evaluation costs one evaluation per part).
MAX_PARTS = 10_000


@dataclass(frozen=True)
class Composition(PrivacyPair):
    """The composition of ``count`` runs of each pair in ``parts`` (a tuple of (pair, count)).

    K(t) = sum_i count_i K_i(t). The result is again a privacy pair, with real orders only if
    every part has them. At most MAX_PARTS distinct parts (each CGF evaluation visits every part;
    LimitExceeded beyond); counts are integers >= 1 (stored as int).
    """

    parts: tuple[tuple[PrivacyPair, int], ...]

    mechanism: ClassVar[str] = "composition"

    def __post_init__(self) -> None:
        if not isinstance(self.parts, tuple | list):
            raise invalid("parts", repr(self.parts), "must be a tuple of (pair, count) items")
        if not self.parts:
            raise InvalidArgument("parts=() must be non-empty")
        if len(self.parts) > MAX_PARTS:
            raise LimitExceeded(f"parts has {len(self.parts)} distinct pairs: at most {MAX_PARTS} may be composed")
        normal = []
        for item in self.parts:
            if not isinstance(item, tuple | list) or len(item) != 2:
                raise invalid("part", repr(item), "must be a (pair, count) item")
            pair, count = item
            if not isinstance(pair, PrivacyPair) or isinstance(pair, Composition):
                raise invalid("part", repr(pair), "must be a (non-composed) privacy pair")
            normal.append((pair, integer("steps", count, ge=1)))
        object.__setattr__(self, "parts", tuple(normal))

    @property
    def real_orders(self) -> bool:  # type: ignore[override]
        """Contract: True iff every part has real orders."""
        return all(p.real_orders for p, _ in self.parts)

    @property
    def grid_by_default(self) -> bool:  # type: ignore[override]
        """Contract: True iff some part searches an integer grid by default."""
        return any(p.grid_by_default for p, _ in self.parts)

    @property
    def rho_attained_at_infinity(self) -> bool:  # type: ignore[override]
        """Contract: True iff every part's ratio tends to its rho."""
        return all(p.rho_attained_at_infinity for p, _ in self.parts)

    def max_t(self) -> Fraction | None:
        """Contract: the smallest order limit of the parts (None when no part has one)."""
        limits = [lim for lim in (p.max_t() for p, _ in self.parts) if lim is not None]
        return min(limits) if limits else None

    def check_order(self, t: Ball) -> None:
        """Contract: returns only for orders every part can evaluate."""
        for p, _ in self.parts:
            p.check_order(t)

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains sum_i n_i K_i(t) (each K_i as its pair's contract)."""
        require_positive_t(t)
        acc = to_ball(0)
        for pair, n in self.parts:
            acc += n * pair.cgf_ball(t)
        return acc

    def kl_ball(self) -> Ball:
        """Contract: contains sum_i n_i KL_i (KL adds under independent composition)."""
        acc = to_ball(0)
        for pair, n in self.parts:
            acc += n * pair.kl_ball()
        return acc

    def rho_closed_form(self) -> Ball | None:
        """Contract: contains the composed rho_star = sup_t sum_i n_i K_i(t)/(t(t+1)) when

        (a) there is one part: rho_star = n rho_1; or (b) every part has a closed-form rho that
        its ratio approaches as t -> inf: then sum n_i rho_i is both an upper bound (sup of a sum)
        and the limit of the composed ratio. Otherwise None (certified search instead).
        """
        closed = [(p.rho_closed_form(), n) for p, n in self.parts]
        if any(r is None for r, _ in closed):
            return None
        if len(self.parts) > 1 and not self.rho_attained_at_infinity:
            return None
        acc = to_ball(0)
        for r, n in closed:
            acc += n * r
        return acc

    def _weighted_sum(self, part_value: Callable[[PrivacyPair], Ball | None]) -> Ball | None:
        """sum_i n_i part_value(pair_i), or None as soon as a part has no value."""
        acc = to_ball(0)
        for pair, n in self.parts:
            v = part_value(pair)
            if v is None:
                return None
            acc += n * v
        return acc

    def ratio_upper_bound(self) -> Ball | None:
        """Contract: sum_i n_i bound_i, an upper bound of sup_t K(t)/(t(t+1)) (the ratio of a sum
        of CGFs is the sum of the parts' ratios); None when a part has none."""
        return self._weighted_sum(lambda p: p.ratio_upper_bound())

    def ratio_tail_bound(self, T: float) -> Ball | None:
        """The smaller of sum_i n_i tail_i(T) (sup of a sum <= sum of sups) and the sup over
        [T, inf) of the summed decay forms (:meth:`ratio_tail_decay`), when every part has one.

        Contract: upper end >= sup_{t >= T} K(t)/(t(t+1)) (both bounds are; proofs above).
        """
        plain = self._weighted_sum(lambda p: p.ratio_tail_bound(T))
        form = self.ratio_tail_decay(T)
        if form is None:
            return plain
        decay = decay_sup(form, T)
        return decay if plain is None else plain.min(decay)

    def ratio_tail_decay(self, T: float) -> tuple[Ball, Ball] | None:
        """Contract: (sum_i n_i L_i, sum_i n_i c_i): ratios add, so the forms do (None when a part
        has none)."""
        forms = [(p.ratio_tail_decay(T), n) for p, n in self.parts]
        if any(f is None for f, _ in forms):
            return None
        L, c = to_ball(0), to_ball(0)
        for f, n in forms:
            L += n * f[0]  # type: ignore[index]
            c += n * f[1]  # type: ignore[index]
        return L, c

    def ratio_tail_witness(self) -> Ball | None:
        """Contract: liminf of a sum >= sum of liminfs: sum_i n_i witness_i, where a part without a
        witness counts 0 (its ratio K_i(t)/(t(t+1)) is >= 0, as K_i >= 0); None when no part has one."""
        if all(p.ratio_tail_witness() is None for p, _ in self.parts):
            return None
        return self._weighted_sum(lambda p: p.ratio_tail_witness() or to_ball(0))

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball] | None:
        """Contract: cumulants add over independent losses: sum_i n_i kappa_j,i (None when a part
        has none)."""
        per_part = {pair: pair.loss_cumulants() for pair, _ in self.parts}
        if any(k is None for k in per_part.values()):
            return None
        sums = [self._weighted_sum(lambda p, j=j: per_part[p][j]) for j in range(4)]  # type: ignore[index]
        return sums[0], sums[1], sums[2], sums[3]  # type: ignore[return-value]

    def curvature_upper(self, a: float, b: float) -> Ball | None:
        """Contract: K'' adds, so sum_i n_i of the parts' bounds on [a, b] (None when a part has none)."""
        return self._weighted_sum(lambda p: p.curvature_upper(a, b))

    def max_loss_ball(self) -> Ball | None:
        """Contract: D_inf adds under composition: sum_i n_i D_inf,i."""
        return self._weighted_sum(lambda p: p.max_loss_ball())

    def params(self) -> dict[str, str]:
        """Contract: each part described with its count."""
        return {f"part{i}": f"{p.describe()} x {n}" for i, (p, n) in enumerate(self.parts)}


def compose(pairs: PrivacyPair | Iterable[PrivacyPair | tuple[PrivacyPair, int]], steps: int = 1) -> Composition:
    """Compose a pair ``steps`` times, or a list of pairs / (pair, count) items.

    Contract: the returned Composition's CGF is the sum of the parts' CGFs (exact identity for
    independent composition; docs/math.md §1). Nested compositions are flattened. Anything but a
    pair or an iterable of pairs and (pair, count) items raises InvalidArgument.
    """
    n = integer("steps", steps, ge=1)
    if isinstance(pairs, PrivacyPair):
        items: list[tuple[PrivacyPair, int]] = [(pairs, 1)]
    elif isinstance(pairs, str | bytes) or not isinstance(pairs, Iterable):
        raise invalid("pairs", repr(pairs), "must be a privacy pair or an iterable of pairs and (pair, count) items")
    else:
        items = []
        for x in pairs:
            if isinstance(x, PrivacyPair):
                items.append((x, 1))
            elif isinstance(x, tuple | list) and len(x) == 2 and isinstance(x[0], PrivacyPair):
                items.append((x[0], integer("steps", x[1], ge=1)))
            else:
                raise invalid("pairs", repr(x), "items must be privacy pairs or (pair, count) items")
            if len(items) > MAX_PARTS:
                raise LimitExceeded(f"pairs has more than {MAX_PARTS} items: at most {MAX_PARTS} may be composed")
    flat: list[tuple[PrivacyPair, int]] = []
    for pair, count in items:
        if isinstance(pair, Composition):
            flat += [(p, c * count * n) for p, c in pair.parts]
        else:
            flat.append((pair, count * n))
    merged: dict[PrivacyPair, int] = {}
    for pair, count in flat:
        merged[pair] = merged.get(pair, 0) + count
    return Composition(tuple(merged.items()))
