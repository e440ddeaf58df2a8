"""Pairs accounted by their loss distribution alone (no CGF implemented): the lattice accountant
(--via pld) takes them; the RDP and zCDP routes refuse them in one line."""

from __future__ import annotations

from certdp.enclose import Ball
from certdp.errors import Unsupported
from certdp.pairs.base import PrivacyPair

__all__ = ["LossOnlyPair"]


class LossOnlyPair(PrivacyPair):
    """A privacy pair with ``loss_tail`` but no CGF: ``cgf_ball`` and ``kl_ball`` refuse."""

    def _no_cgf(self) -> Unsupported:
        return Unsupported(
            f"{self.mechanism}: no CGF is implemented; certdp accounts it by its loss distribution (--via pld)"
        )

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: never returns (Unsupported: no CGF is implemented for this pair)."""
        raise self._no_cgf()

    def kl_ball(self) -> Ball:
        """Contract: never returns (Unsupported: no CGF is implemented for this pair)."""
        raise self._no_cgf()
