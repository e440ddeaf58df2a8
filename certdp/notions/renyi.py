"""CGF, Renyi divergence and KL of a privacy pair, as enclosures refined to a target width."""

from __future__ import annotations

from certdp.enclose import DEFAULT_TARGET, Enclosure, Target, refine
from certdp.notions.orders import require_pair, require_target, t_ball, t_from_order, t_of
from certdp.pairs import PrivacyPair
from certdp.pairs.params import Number


def cgf(pair: PrivacyPair, t: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Enclosure of K(t) = log E_P[e^{tL}] = t D_{t+1}(P||Q).

    Contract: contains K(t) for the exact rational t; width per ``target``. Proof: the pair's
    ``cgf_ball`` contract (docs/math.md §4).
    """
    require_pair(pair), require_target(target)
    tt = t_of(t)
    t_ball(pair, tt)
    return refine(lambda: pair.cgf_ball(t_ball(pair, tt)), target, what="cgf")


def rdp(pair: PrivacyPair, alpha: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Enclosure of the Renyi divergence D_alpha(P||Q) = K(alpha-1)/(alpha-1), alpha > 1.

    Contract: contains D_alpha for the exact rational alpha (docs/math.md §1).
    """
    require_pair(pair), require_target(target)
    tt = t_from_order(alpha)
    t_ball(pair, tt)

    def compute():
        tb = t_ball(pair, tt)
        return pair.cgf_ball(tb) / tb

    return refine(compute, target, what="rdp")


def kl(pair: PrivacyPair, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Enclosure of KL(P||Q) = lim_{t->0} K(t)/t. Contract: the pair's ``kl_ball`` contract."""
    require_pair(pair), require_target(target)
    return refine(pair.kl_ball, target, what="kl")
