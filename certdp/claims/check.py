"""Judge one claim from the certified intervals of its quantities (three-valued: a straddling
enclosure is ``imprecise``, never ``confirmed``)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from certdp.claims.interval import Interval, above, below, combine, inside, outside
from certdp.claims.model import Claim, Ref
from certdp.pairs.params import exact_str


@dataclass(frozen=True)
class Outcome:
    """What a computation produced: an interval, or the one-line reason it could not (``error``)."""

    interval: Interval | None
    error: str = ""
    seconds: float = 0.0
    #: the error is the claim's input's fault (an InvalidArgument: exit 2), not certdp's precision
    bad_input: bool = False


@dataclass(frozen=True)
class ClaimResult:
    """The status of one claim with its evidence: the certified ``value`` (the left side of a
    relation), ``other`` (its right side), the interval the printed number stands for
    (``claim.target``), and one sentence."""

    claim: Claim
    status: str
    evidence: str
    value: Interval | None = None
    other: Interval | None = None
    error: str = ""
    seconds: float = 0.0
    bad_input: bool = False

    def to_dict(self) -> dict[str, object]:
        """Contract: a JSON-ready record: ids, source, printed number, status, enclosures, evidence."""
        c = self.claim
        rec: dict[str, object] = {
            "id": c.uid,
            "paper": c.paper.id,
            "where": c.where,
            "printed": c.printed,
            "statement": c.statement,
            "kind": c.kind,
            "category": c.category,
            "number": c.number_key,
            "status": self.status,
            "evidence": self.evidence,
            "computation": [r.label() for r in c.refs],
            "seconds": round(self.seconds, 3),
        }
        if c.target is not None:
            rec["claimed"] = c.target.to_dict()
        if self.value is not None:
            rec["certified"] = self.value.to_dict()
        if self.other is not None:
            rec["certified_right"] = self.other.to_dict()
        if c.rounded:
            rec["rounded_inputs"] = {path: iv.to_dict() for path, iv in c.rounded}
        for key, val in (
            ("quote", c.quote),
            ("reasoning", c.reasoning),
            ("op", c.op),
            ("check", c.check),
            ("reason", c.reason),
            ("note", c.note),
            ("error", self.error),
        ):
            if val:
                rec[key] = val
        if self.bad_input:
            rec["bad_input"] = True
        return rec


def _side(x: Ref | Fraction | None, results: dict[str, Outcome]) -> Outcome:
    if isinstance(x, Ref):
        return results[x.key]
    assert x is not None
    return Outcome(Interval.point(x, exact_str(x)))


def _less(a: Interval, b: Interval, strict: bool) -> bool:
    """Certified a < b (strict) or a <= b, for every point of each."""
    if a.upper is None or b.lower is None:
        return False
    if a.upper < b.lower:
        return True
    return a.upper == b.lower and (not strict or a.upper_open or b.lower_open)


def _compare(op: str, a: Interval, b: Interval) -> str:
    if op == "==":
        if a.two_sided and a.lower == a.upper == b.lower == b.upper:
            return "confirmed"
        return "refuted" if (_less(a, b, True) or _less(b, a, True)) else "imprecise"
    strict = op in ("<", ">")
    lo, hi = (a, b) if op in ("<", "<=") else (b, a)
    if _less(lo, hi, strict):
        return "confirmed"
    return "refuted" if _less(hi, lo, not strict) else "imprecise"


def _hull(xs: list[Interval], detail: str) -> Interval:
    """The least interval holding every interval of ``xs`` (a missing end stays missing)."""
    lows, highs = [x.lower for x in xs], [x.upper for x in xs]
    lo = None if any(v is None for v in lows) else min(lows)  # type: ignore[type-var]
    hi = None if any(v is None for v in highs) else max(highs)  # type: ignore[type-var]
    return Interval(lo, hi, detail)


def _measure(claim: Claim, results: dict[str, Outcome]) -> tuple[list[Interval], float, Outcome | None]:
    """The certified intervals a claim is judged on: [value] (an aggregate combined), or [left,
    right] of a relation; with the seconds spent and the first failed outcome (None when none)."""
    sides = [_side(claim.left, results), _side(claim.right, results)] if claim.kind == "relation" else []
    outs = sides or [results[r.key] for r in claim.refs]
    seconds = sum(o.seconds for o in outs)
    failed = [o for o in outs if o.error]
    if failed:
        return [], seconds, failed[0]
    ivs = [o.interval for o in outs]
    assert all(iv is not None for iv in ivs)
    if claim.kind == "relation" or claim.aggregate is None:
        return ivs[:2] if claim.kind == "relation" else ivs[:1], seconds, None  # type: ignore[return-value]
    return [combine(ivs, claim.aggregate, f"{claim.aggregate} over {len(ivs)} settings")], seconds, None  # type: ignore[arg-type]


def judge(claim: Claim, results: dict[str, Outcome], identities: dict[str, Outcome]) -> ClaimResult:
    """The status of ``claim`` given the outcomes of its computations.

    Contract: "confirmed" only when the certified intervals prove the claim (value: the enclosure
    lies inside the printed number's rounding interval; bound and relation: the comparison holds
    for every point; identity: the proofs_checks check passed symbolically); "refuted" only when
    they prove its negation; otherwise "imprecise" (a failed computation included, with its
    reason); "out of scope" for claims certdp cannot compute. With rounded inputs the enclosure is
    the hull of those at the corners of the inputs' box (each quantity on the way is monotone in
    them): confirmed if every value of the inputs confirms, refuted if every value refutes.
    """
    if claim.kind == "out-of-scope":
        return ClaimResult(claim, "out of scope", claim.reason)
    if claim.kind == "identity":
        out = identities[claim.check or ""]
        if out.error:
            return ClaimResult(claim, "imprecise", f"proofs_checks {claim.check}: {out.error}", error=out.error)
        assert out.interval is not None
        ok = out.interval.lower == 1
        text = out.interval.detail
        return ClaimResult(
            claim, "confirmed" if ok else "imprecise", f"proofs_checks {claim.check}: {text}", seconds=out.seconds
        )
    seconds, ivs = 0.0, []
    for part in claim.corners or (claim,):
        got, secs, failed = _measure(part, results)
        seconds += secs
        if failed is not None:
            error = failed.error
            why = "its input is invalid" if failed.bad_input else "certdp could not certify it"
            return ClaimResult(
                claim, "imprecise", f"{why}: {error}", error=error, seconds=seconds, bad_input=failed.bad_input
            )
        ivs.append(got)
    over = ""
    if claim.corners:
        ends = "; ".join(f"{path.split('.', 1)[-1]} in {iv.text()}" for path, iv in claim.rounded)
        over = f" over the rounded inputs ({ends})"
        merged = [_hull([g[i] for g in ivs], f"hull over {len(ivs)} corners{over}") for i in range(len(ivs[0]))]
    else:
        merged = ivs[0]
    if claim.kind == "relation":
        a, b = merged
        status = _compare(claim.op or "", a, b)
        ev = f"left {a.text()} {claim.op} right {b.text()}{over}"
        return ClaimResult(claim, status, ev, a, b, seconds=seconds)
    x = merged[0]
    assert claim.target is not None
    t = claim.target
    if claim.kind == "bound":
        v = t.lower
        assert v is not None
        op = claim.op or ""
        if op in ("<=", "<"):
            ok, bad = below(x, v, op == "<"), above(x, v, op == "<=")
        else:
            ok, bad = above(x, v, op == ">"), below(x, v, op == ">=")
        if claim.one_sided:  # the quantity bounds the property from the safe side only: no refutation
            bad = False
        status = "confirmed" if ok else "refuted" if bad else "imprecise"
        return ClaimResult(claim, status, f"certified {x.text()} {op} {claim.printed}?{over}", x, seconds=seconds)
    status = "confirmed" if inside(x, t) else "refuted" if outside(x, t) else "imprecise"
    ev = f"certified {x.text()}{over}; printed {claim.printed} stands for {t.text()}"
    return ClaimResult(claim, status, ev, x, seconds=seconds)
