"""`certdp eps|delta --event FILE` for the DpEvents that are not one privacy pair: sampling without
replacement, mixtures of Gaussians, randomized response, Poisson-sampled Laplace, NonPrivate,
compositions of these (certdp.integrations.dp_events.account_event; docs/integrations.md).

An event that is one pair (a Gaussian, a Poisson-sampled Gaussian, their compositions, under
add_or_remove_one) keeps the mechanism path of certdp.cli.run_notions, where every flag of
eps/delta applies; the others are split into their remove and add compositions, each accounted by
certdp's one rule, and the answer is the larger of each end.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from certdp.cli.common import enclosure_record
from certdp.enclose import Enclosure, current_prec, workprec
from certdp.errors import InvalidArgument, LimitExceeded, PrecisionExhausted, Unsupported, fmt_value, prefixed
from certdp.notions.accountant import LOWER_TRIVIAL, PLD_PREC
from certdp.pairs import PrivacyPair
from certdp.pairs.params import real

#: flags that steer the accountant of one pair; an event of several parts takes the default rule
_ONE_PAIR_FLAGS = ("via", "h", "orders")


def event_pair_or_doc(args: argparse.Namespace) -> tuple[PrivacyPair | None, dict[str, Any], str]:
    """(the pair of the event file when it is one pair under add_or_remove_one, else None; the
    event's dict form; the relation name). Refusals (an event certdp does not account, a malformed
    file) are one line naming the file."""
    from certdp.integrations.dp_accounting import from_event
    from certdp.integrations.dp_events import load_any_event, relation_name

    if args.mechanism is not None:
        raise InvalidArgument(
            f"mechanism={fmt_value(args.mechanism)} and event={fmt_value(args.event)} are exclusive: the event "
            "describes the mechanism"
        )
    relation = relation_name(getattr(args, "relation", None) or "add_or_remove_one")
    try:
        doc = load_any_event(args.event, relation)
        if relation == "add_or_remove_one":
            try:
                return from_event(doc), doc, relation
            except (Unsupported, InvalidArgument):
                # several parts or directions, or values only account_event reads (a count of 0
                # releases nothing; a zero noise is not private: eps = inf), as load_any_event checked
                pass
    except InvalidArgument as exc:  # a field's error names the file too, as the reader's errors do
        prefix = f"event={fmt_value(args.event)}: "
        if str(exc).startswith(prefix):
            raise
        raise type(exc)(prefix + str(exc)) from None
    return None, doc, relation


def run_event_answer(args: argparse.Namespace, doc: dict[str, Any], relation: str) -> dict[str, object]:
    """eps(delta) or delta(eps) of an event that is not one pair, as one enclosure record.

    Contract: ``lower``/``upper`` bound the event's true value under ``relation``
    (certdp.integrations.dp_events.account_event); ``sides`` says whether the lower end is proved
    (``upper``: it is the trivial 0); ``status`` infinite prints ``inf`` for eps.
    """
    from certdp.integrations.dp_events import account_event

    given = [f"--{name.replace('_', '-')}" for name in _ONE_PAIR_FLAGS if getattr(args, name, None) is not None]
    if given:
        raise InvalidArgument(
            f"{', '.join(given)}: only for an event of one pair; event={fmt_value(args.event)} has several "
            "parts, directions or sides (sampling with replacement has two pairs), each accounted by certdp's "
            "default rule: drop the flag"
        )
    raw_rw = getattr(args, "rel_width", None)
    rel_width = None if raw_rw is None else real("rel-width", raw_rw, gt=0, lt=1)
    inputs: dict[str, object] = {
        "mechanism": "dp_accounting-event",
        "event": args.event,
        "relation": relation,
        "params": {"relation": relation},
    }
    with workprec(max(current_prec(), PLD_PREC)):
        try:
            if args.command == "eps":
                ans = account_event(doc, delta=args.delta, relation=relation, rel_width=rel_width)
                inputs["delta"] = args.delta
            else:
                ans = account_event(doc, eps=args.eps, relation=relation, rel_width=rel_width)
                inputs["eps"] = args.eps
        except (LimitExceeded, PrecisionExhausted, Unsupported) as exc:
            # the accountant's advice names --h and --via, which this path refuses (attack review)
            if "--via" in str(exc) or "larger h" in str(exc):
                raise prefixed(
                    exc,
                    "this event is accounted by certdp's default rule (--h and --via are read only "
                    "for an event of one pair); the part that failed",
                ) from None
            raise
        prec = current_prec()
    extra: dict[str, object] = {
        ans.quantity: "inf" if ans.upper == math.inf else None,  # the sound value, set below
        "via": "event",
        "route": f"{ans.status}, {ans.sides}",
        "status": ans.status,
        "sides": ans.sides,
        "reason": ans.reason,
        "directions": list(ans.directions),
        "notes": list(ans.notes),
        "via_note": "; ".join(ans.notes) or None,  # the text output's "note:" line (how the event was read)
        "lower_from": LOWER_TRIVIAL if ans.lower is None else ans.reason,
        "upper_from": ans.reason
        if ans.sides != "upper"
        else "a sound upper end (" + "; ".join(part.split(" (")[0] for part in ans.reason.split("; ")) + " conversion)",
    }
    if ans.upper == math.inf:  # a non-private event: eps = inf is the stated answer
        ends = {"lower": "inf", "upper": "inf", "width": "0", "prec_bits": prec}
        return {"quantity": ans.quantity, **ends, **inputs, **extra}
    lower = 0 if ans.lower is None else ans.lower
    enc = Enclosure.from_bounds(lower, ans.upper, prec)  # type: ignore[arg-type]
    extra[ans.quantity] = enc.upper_str()
    return enclosure_record(ans.quantity, enc, inputs, **extra)
