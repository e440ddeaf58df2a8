"""One reported number, checked: ``certdp audit --claim "opacus prv eps=1.753 sigma=1.1 q=0.01
steps=1000 delta=1e-6"``.

Grammar: ``PEER METHOD KEY=VALUE ...``. The FIRST key=value is the reported number (``eps``,
``delta``, ``sigma`` or ``rdp``); the others are the setting: ``q``, ``sigma``, ``steps``,
``delta``, ``eps``, ``order`` (or ``alpha``, for rdp), ``orders`` (comma-separated, for an RDP
accountant's epsilon or sigma), ``conversion`` (cks or basic). PEER is a free label (a known peer
name supplies its default orders for RDP claims); METHOD says which quantity it is:

* ``rdp``: a Renyi divergence (reported ``rdp``), or an RDP accountant's ``eps`` / ``sigma``,
  compared with the same conversion over the same orders;
* anything else (``prv``, ``pld``, ``gdp``, ``exact``, ...): the exact ``eps`` at delta, ``delta``
  at eps, or the smallest ``sigma`` meeting (eps, delta), compared with the certified PLD.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from fractions import Fraction

from certdp.audit.adapters import PeerMissing, PeerValue, load_adapter
from certdp.audit.cases import Case, case_from_dict
from certdp.audit.reference import CLAIM_REL_WIDTH, Reference
from certdp.audit.run import References
from certdp.audit.tolerance import RULES, tolerance
from certdp.audit.verdict import FLOAT_SLACK, Judgement, judge
from certdp.errors import InvalidArgument, fmt_value
from certdp.pairs.params import exact_str, real

REPORTED = ("eps", "delta", "sigma", "rdp")
#: Largest reported value accepted (beyond, a number is a typo, not a claim; delta is a probability).
REPORTED_MAX = {"eps": Fraction(10**4), "delta": Fraction(1), "sigma": Fraction(10**6), "rdp": Fraction(10**12)}
_KEYS = {"q", "sigma", "steps", "delta", "eps", "order", "alpha", "orders", "conversion", "rdp"}


@dataclass(frozen=True)
class Claim:
    """A parsed claim: who reported which number, and the case it is about."""

    peer: str
    method: str
    reported: str
    value: Fraction
    text: str
    case: Case
    kind: str
    order: Fraction | None
    orders: tuple[Fraction, ...]
    conversion: str


def _peer_orders(peer: str, what: str) -> tuple[Fraction, ...]:
    try:
        adapter = load_adapter(peer)
    except (PeerMissing, InvalidArgument):
        raise InvalidArgument(
            f"claim: an RDP {what} needs the accountant's orders: give orders=a,b,c (or name an installed peer: "
            "dp_accounting, opacus)"
        ) from None
    orders = getattr(adapter, "orders", None)
    if not orders:
        raise InvalidArgument(f"claim: peer={peer} has no default RDP orders: give orders=a,b,c")
    return orders  # type: ignore[no-any-return]


def parse_claim(text: str) -> Claim:
    """Contract: a Claim whose case is validated like a case file's (certdp.audit.cases); anything
    malformed raises InvalidArgument naming the offending word."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise InvalidArgument(f"claim={fmt_value(text)} cannot be split into words: {exc}") from None
    if len(words) < 3 or "=" in words[0] or "=" in words[1]:
        raise InvalidArgument(f'claim={fmt_value(text)} must read "PEER METHOD QUANTITY=VALUE KEY=VALUE ..."')
    peer, method = words[0], words[1]
    pairs: dict[str, str] = {}
    for w in words[2:]:
        key, sep, value = w.partition("=")
        if not sep or key not in _KEYS:
            raise InvalidArgument(f"claim: {fmt_value(w)} must be KEY=VALUE with KEY one of {', '.join(sorted(_KEYS))}")
        if key in pairs:
            raise InvalidArgument(f"claim: {key} is given twice")
        pairs[key] = value
    reported = words[2].partition("=")[0]
    if reported not in REPORTED:
        raise InvalidArgument(
            f"claim: the first KEY=VALUE ({fmt_value(words[2])}) is the reported number: eps, delta, sigma or rdp"
        )
    value = real(reported, pairs.pop(reported), ge=0, le=REPORTED_MAX[reported])
    if "alpha" in pairs:
        if "order" in pairs:
            raise InvalidArgument("claim: give order or alpha, not both")
        pairs["order"] = pairs.pop("alpha")
    order = real("order", pairs.pop("order"), gt=1) if "order" in pairs else None
    conversion = pairs.pop("conversion", "basic" if peer == "autodp" else "cks")
    if conversion not in ("cks", "basic"):
        raise InvalidArgument(f"conversion={fmt_value(conversion)} must be cks or basic")
    orders_text = pairs.pop("orders", None)
    rdp_method = method == "rdp"
    fields: dict[str, object] = {"id": "claim", **pairs}
    if reported == "sigma":
        if "sigma" in fields:
            raise InvalidArgument("claim: a reported sigma is the calibration's answer; the setting has no sigma")
        fields["checks"] = ["sigma"]
        kind = "sigma-rdp" if rdp_method else "sigma-pld"
    elif reported == "rdp":
        if order is None:
            raise InvalidArgument("claim: a reported rdp needs its order (order=... or alpha=...)")
        fields.update(checks=["rdp"], orders=[exact_str(order)])
        kind = "rdp"
    elif reported == "eps":
        fields.update(checks=["eps-rdp" if rdp_method else "eps-pld"])
        kind = "eps-rdp" if rdp_method else "eps-pld"
    else:
        if rdp_method:
            raise InvalidArgument("claim: delta from an RDP accountant is not audited; use method pld (exact delta)")
        if "eps" not in fields:
            raise InvalidArgument("claim: a reported delta needs eps=...")
        fields.update(checks=["delta-pld"])
        kind = "delta-pld"
    case = case_from_dict(fields, "claim")
    orders: tuple[Fraction, ...] = ()
    if kind in ("eps-rdp", "sigma-rdp") and conversion == "cks":
        if orders_text is not None:
            orders = tuple(real("orders", o, gt=1) for o in orders_text.split(",") if o.strip())
            if not orders:
                raise InvalidArgument(f"orders={fmt_value(orders_text)} must list at least one order")
        else:
            orders = _peer_orders(peer, "epsilon" if kind == "eps-rdp" else "sigma")
    return Claim(peer, method, reported, value, text, case, kind, order, orders, conversion)


#: Methods that name an estimate by design (documented so by their peers), not a guarantee.
ESTIMATE_METHODS = ("gdp", "pld-optimistic", "optimistic", "prv-estimate", "estimate")


def check_claim(claim: Claim, slack: Fraction = FLOAT_SLACK) -> tuple[Reference, Judgement]:
    """Contract: the certified reference of the claim's quantity and the verdict of its value
    (certdp.audit.verdict.judge with ``slack``, the roundoff tolerance of the quantity
    (certdp.audit.tolerance) and the estimate mark of a method in ESTIMATE_METHODS; exact
    comparison of the decimal as written)."""
    pv = PeerValue(
        claim.peer, claim.method, claim.kind, float(claim.value), 0.0, claim.order, claim.orders, claim.conversion
    )
    ref = References(CLAIM_REL_WIDTH).for_value(claim.case, pv)
    tol = tolerance(claim.kind, claim.value, claim.case.steps, claim.order, claim.orders)
    return ref, judge(claim.value, ref, slack, tol.bound, claim.method in ESTIMATE_METHODS)


NAMES = {"eps": "epsilon", "delta": "delta", "sigma": "sigma", "rdp": "RDP"}


def sentence(claim: Claim, ref: Reference, j: Judgement) -> str:
    """Contract: the verdict in one sentence, with the certified ends it rests on."""
    d = ref.to_dict()
    head = f"{claim.peer} {claim.method}: {NAMES[claim.reported]} = {exact_str(claim.value)} at {claim.case.label()}"
    if claim.order is not None:
        head += f", alpha={exact_str(claim.order)}"
    band = f"[{d['lower']}, {d['upper']}]"
    if j.verdict == "exact":
        return f"{head} is exact: it lies in the certified {ref.quantity} {band} (up to the float slack)."
    if j.verdict == "conservative":
        rel = "infinitely" if j.relative == float("inf") else f"{j.relative:.3g} relative"
        return (
            f"{head} is conservative (sound): {rel} above the certified upper end {d['upper']} of the {ref.quantity}."
        )
    if j.verdict == "UNSOUND":
        meaning = {
            "eps-pld": "the mechanism is proved NOT to satisfy it",
            "delta-pld": "the mechanism is proved NOT to satisfy it",
            "sigma-pld": "this sigma is proved NOT to reach the target",
            "rdp": "the Renyi divergence is larger",
        }.get(claim.kind, "the value is below what the same RDP conversion gives with the true RDP values")
        return (
            f"{head} is UNSOUND: {j.relative:.3g} relative below the certified lower end {d['lower']} of the "
            f"{ref.quantity}; {meaning}."
        )
    if j.verdict == "roundoff":
        return (
            f"{head} is roundoff: {j.relative:.3g} relative below the certified lower end {d['lower']} of the "
            f"{ref.quantity}, within the float error of the method ({tolerance_rule(claim.kind)}); not a violation."
        )
    if j.verdict == "estimate":
        return (
            f"{head} is an estimate below the truth: {j.relative:.3g} relative below the certified lower end "
            f"{d['lower']} of the {ref.quantity}; method {claim.method} is documented as an estimate, not a "
            "guarantee."
        )
    return f"{head} is inconclusive: {j.why}."


def tolerance_rule(kind: str) -> str:
    """Contract: the roundoff rule of a quantity in words (certdp.audit.tolerance.RULES)."""
    return RULES.get(kind, "none")
