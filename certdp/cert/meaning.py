"""What a recomputed certificate check proves, in one sentence (certdp verify's output)."""

from __future__ import annotations

from typing import Any

__all__ = ["means"]

#: what a recomputed check proves (a PLD refutation is about the mechanism itself)
MEANS = {
    ("pld-upper", "<="): "the mechanism is (epsilon, delta)-DP at this sigma (PLD lattice upper bound)",
    ("pld-lower", ">"): "the mechanism is NOT (epsilon, delta)-DP at this sigma: a proved violation that no "
    "sound accountant can certify away (PLD lattice lower bound)",
    ("rdp-orders", "<="): "the mechanism is (epsilon, delta)-DP at this sigma (RDP conversion over the orders)",
    ("hockey-upper", "<="): "random allocation is (epsilon, delta)-DP at this sigma (hockey-stick lattice upper bound)",
    ("hockey-lower", ">"): "random allocation is NOT (epsilon, delta)-DP at this sigma: a proved violation "
    "(hockey-stick lattice lower bound)",
    ("rdp-orders", ">"): "the RDP conversion over these orders cannot certify the target here (a statement "
    "about this accountant, not a DP violation)",
}


def means(check: Any) -> str:
    """The sentence of MEANS for a check's method and relation, scoped to the one neighbouring
    direction a one-direction check covers (attack review: an ``add``-only certificate read as DP
    of the whole mechanism, whose add-or-remove epsilon was 11.4 against the certified 5).

    Contract: a sentence ("" for a pair of method and relation without one); no enclosure.
    """
    text = MEANS.get((check.method, check.relation), "")
    k = check.mechanism.params.get("k", 1)
    if text and k != 1 and k == check.mechanism.params["steps"]:  # k = M: the reduced run is the run
        text += (
            f"; each record in all k=M={k} steps per epoch, computed on the equal run of 1 step and M E epochs "
            "(the same Gaussian pair)"
        )
    elif text and k != 1:  # only hockey-upper checks carry k for k < M (checks.py)
        text += (
            f"; each record in k={k} of the M steps per epoch, bounded through the decomposition of Feldman "
            "and Shenfeld (arXiv:2502.08202) into k E epochs of 1-of-floor(M/k) allocation"
        )
    direction = check.mechanism.params.get("direction", "both")
    if text and direction in ("remove", "add"):
        text += (
            f"; for the {direction} direction only (one neighbouring relation), NOT for add-or-remove "
            "neighbours (direction both)"
        )
    return text
