"""Randomized response over k buckets (dp_accounting's ``RandomizedResponseDpEvent``): a pair with
finite support, so every quantity is a finite sum of exact masses (docs/math.md §12.1).

With noise p, the mechanism outputs its input bucket with probability 1 - p and a uniform bucket
with probability p: the input's bucket has mass a = 1 - p + p/k, every other bucket c = p/k.

* ``replace_one`` (input x replaced by x'): P = R(x), Q = R(x'); the outcomes x, x' and the
  k - 2 others have (P, Q) masses (a, c), (c, a) and ((k-2)c, (k-2)c). The pair is symmetric
  (swapping P and Q relabels x and x'), so one direction covers the relation.
* ``replace_special`` (x replaced by a special input whose output is uniform, Kairouz et al.
  arXiv:2103.00039 Def. 1.1): ``remove`` is P = R(x), Q = uniform, masses (a, 1/k) on x and
  ((k-1)c, (k-1)/k) on the others; ``add`` swaps P and Q.

These are the mechanism's own output laws on the worst pair of inputs (any two inputs give the
same laws up to relabelling), so the pair is tight, not only dominating.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, to_ball
from certdp.errors import Unsupported, invalid
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.params import Number, integer, real

RELATIONS = ("replace_one", "replace_special")
#: Largest number of buckets (the masses are exact rationals; k only enters them as a factor).
MAX_BUCKETS = 10**12

Masses = tuple[tuple[Fraction, Fraction], ...]


def finite_loss_tail(masses: Masses, ell: Ball) -> tuple[Ball, Ball]:
    """(P(L > ell), Q(L > ell)) of a pair with finitely many outcomes of exact masses (p_i, q_i).

    Contract: contains both tails for every ell in the ball. Outcome i has loss log(p_i/q_i)
    (+inf when q_i = 0); L > ell iff p_i > q_i e^ell. An outcome whose comparison the ball does
    not decide is counted as [0, its mass] (the union of both cases).
    """
    e = ell.exp()
    p_tail, q_tail, p_open, q_open = Fraction(0), Fraction(0), Fraction(0), Fraction(0)
    for p, q in masses:
        if p == 0:  # loss -inf: never above ell
            continue
        if q == 0:  # loss +inf: always above ell
            p_tail += p
            continue
        if p == q:
            # loss exactly 0 (the replace_one outcomes that neither record favours): decided
            # exactly, since a ball of p - q e^ell straddles 0 at the lattice point ell = 0 and
            # counted the whole mass as open there (a composed delta upper end of 2218 at 10 steps)
            if ell < 0:
                p_tail, q_tail = p_tail + p, q_tail + q
            elif not ell >= 0:
                p_open, q_open = p_open + p, q_open + q
            continue
        diff = to_ball(p) - to_ball(q) * e
        if diff > 0:
            p_tail, q_tail = p_tail + p, q_tail + q
        elif not diff <= 0:
            p_open, q_open = p_open + p, q_open + q
    zero = to_ball(0)
    return (
        to_ball(p_tail) + zero.union(to_ball(p_open)),
        to_ball(q_tail) + zero.union(to_ball(q_open)),
    )


@dataclass(frozen=True, init=False)
class RandomizedResponse(PrivacyPair):
    """Randomized response with noise p in (0, 1] over k >= 2 buckets (module docstring).

    ``relation`` replace_one (symmetric pair: ``direction`` is ``both`` and needs no split) or
    replace_special (``direction`` remove, add or both; both is split by the caller into the two
    pairs). p = 0 is not a private mechanism (refused here; the DpEvent adapter answers eps = inf).
    """

    noise: Fraction
    buckets: int
    relation: str
    direction: str

    mechanism = "randomized-response"

    def __init__(self, noise: Number, buckets: Number, relation: str = "replace_one", direction: str = "both") -> None:
        object.__setattr__(self, "noise", real("noise", noise, gt=0, le=1))
        k = integer("buckets", buckets, ge=2)
        if k > MAX_BUCKETS:
            raise invalid("buckets", k, f"must be <= {MAX_BUCKETS}")
        object.__setattr__(self, "buckets", k)
        if relation not in RELATIONS:
            raise invalid("relation", relation, f"must be one of {', '.join(RELATIONS)}")
        object.__setattr__(self, "relation", relation)
        allowed = ("both",) if relation == "replace_one" else ("remove", "add", "both")
        if direction not in allowed:
            raise invalid("direction", direction, f"must be one of {', '.join(allowed)} for relation {relation}")
        object.__setattr__(self, "direction", direction)

    def directed(self, direction: str) -> RandomizedResponse:
        """Contract: the pair of one direction (replace_one: itself, symmetric)."""
        if self.relation == "replace_one":
            return self
        return RandomizedResponse(self.noise, self.buckets, self.relation, direction)

    def masses(self) -> Masses:
        """Contract: the exact (P, Q) masses of the outcomes (module docstring); Unsupported for
        ``both`` under replace_special (two pairs)."""
        p, k = self.noise, self.buckets
        a, c = 1 - p + p / k, p / k
        if self.relation == "replace_one":
            out = [(a, c), (c, a)]
            if k > 2:
                out.append(((k - 2) * c, (k - 2) * c))
            return tuple(out)
        if self.direction == "both":
            raise Unsupported("randomized-response: relation replace_special has two directions: use remove and add")
        pq = ((a, Fraction(1, k)), ((k - 1) * c, Fraction(k - 1, k)))
        return pq if self.direction == "remove" else tuple((q, p_) for p_, q in pq)

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) = log sum_i p_i^{t+1} q_i^{-t} (a finite sum; every q_i > 0
        since p > 0)."""
        require_positive_t(t)
        total = to_ball(0)
        for p, q in self.masses():
            if p:
                pb, qb = to_ball(p), to_ball(q)
                total += pb * ((pb / qb).log() * t).exp()
        return total.log()

    def kl_ball(self) -> Ball:
        """Contract: contains sum_i p_i log(p_i/q_i) (finite sum)."""
        total = to_ball(0)
        for p, q in self.masses():
            if p:
                total += to_ball(p) * (to_ball(p) / to_ball(q)).log()
        return total

    def max_loss_ball(self) -> Ball:
        """Contract: contains D_inf = max_i log(p_i/q_i) over outcomes with p_i > 0."""
        best = None
        for p, q in self.masses():
            if p:
                v = (to_ball(p) / to_ball(q)).log()
                best = v if best is None else best.max(v)
        return best  # type: ignore[return-value]

    def loss_tail(self, ell: Ball) -> tuple[Ball, Ball]:
        """Contract: contains (P(L > ell), Q(L > ell)) (:func:`finite_loss_tail` on :meth:`masses`)."""
        return finite_loss_tail(self.masses(), ell)
