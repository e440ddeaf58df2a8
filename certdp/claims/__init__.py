"""The paper-claims registry: what published papers and library docs state, checked with
certified enclosures (``certdp claims check``).

Claims are data (``certdp/claims/*.toml``, one file per paper; :mod:`certdp.claims.model`);
each names a registered computation (:mod:`certdp.claims.quantities`) whose certified interval is
compared with the interval the printed number stands for (:mod:`certdp.claims.rounding`). A
claim is confirmed, refuted, imprecise (the enclosure straddles the claim's boundary) or out of
scope (it needs data or training runs). See docs/claims.md.
"""

from certdp.claims.check import ClaimResult
from certdp.claims.model import Claim, Paper, load_claims, parse_claims, shipped_claims
from certdp.claims.run import ClaimsReport, check_claims

__all__ = [
    "Claim",
    "ClaimResult",
    "ClaimsReport",
    "Paper",
    "check_claims",
    "load_claims",
    "parse_claims",
    "shipped_claims",
]
