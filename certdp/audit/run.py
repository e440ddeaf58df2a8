"""Running an audit: every peer on every case, each number against the certified reference of the
same quantity (certdp.audit.reference), judged three-valued plus inconclusive (certdp.audit.verdict).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from certdp import __version__
from certdp.audit.adapters import Adapter, PeerValue, environment
from certdp.audit.cases import Case
from certdp.audit.reference import (
    PLD_REL_WIDTH,
    Reference,
    delta_pld_reference,
    eps_allocation_reference,
    eps_pld_reference,
    eps_rdp_reference,
    rdp_reference,
    sigma_pld_reference,
    sigma_rdp_reference,
)
from certdp.audit.tolerance import Tolerance, tolerance
from certdp.audit.verdict import FLOAT_SLACK, VERDICTS, Judgement, judge
from certdp.errors import BudgetExhausted
from certdp.pairs.params import exact_str

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Row:
    """One peer number, its certified reference, the roundoff tolerance of the peer's method
    (certdp.audit.tolerance) and the verdict."""

    case: Case
    peer: PeerValue
    reference: Reference
    judgement: Judgement
    tolerance: Tolerance | None = None

    def to_dict(self) -> dict[str, object]:
        """Contract: a JSON-ready record; the reference's ends are outward-rounded decimal strings;
        ``call`` is the recorded peer call (function, every argument, the peer's other defaults)."""
        p, j = self.peer, self.judgement
        rec: dict[str, object] = {
            "case": self.case.id,
            "peer": p.peer,
            "method": p.method,
            "kind": p.kind,
            "value": _float_text(p.value),
            **self.reference.to_dict(),
            "verdict": j.verdict,
            "relative": None if j.relative is None else _float_text(j.relative),
            "why": j.why,
            "peer_seconds": round(p.seconds, 4),
            "certdp_seconds": round(self.reference.seconds, 4),
        }
        if p.estimate:
            rec["estimate"] = True
        if p.side != "upper":
            rec["side"] = p.side  # a lower bound: judged mirrored (certdp.audit.verdict.judge_lower)
        if p.order is not None:
            rec["order"] = exact_str(p.order)
        if p.error:
            rec["error"] = p.error
        if p.note:
            rec["note"] = p.note
        if self.tolerance is not None:
            rec.update(self.tolerance.to_dict())
        if p.call is not None:
            rec["call"] = p.call
        return rec

    def brief(self) -> dict[str, object]:
        """Contract: where the row is and how far off (case, peer, method, kind, order, value,
        certified lower end, relative distance, quantity compared): a finding's record; a peer's
        lower bound (side "lower") adds its side and the certified upper end."""
        p, j = self.peer, self.judgement
        out: dict[str, object] = {"case": self.case.id, "peer": p.peer, "method": p.method, "kind": p.kind}
        if p.order is not None:
            out["order"] = exact_str(p.order)
        out.update(
            value=_float_text(p.value),
            lower=self.reference.to_dict()["lower"],
            relative=None if j.relative is None else _float_text(j.relative),
            compared=self.reference.quantity,
        )
        if p.side != "upper":
            out.update(side=p.side, upper=self.reference.to_dict()["upper"])
        return out


def _float_text(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else str(x)


@dataclass
class AuditResult:
    """All rows of an audit, with the peers' versions and load paths and the total time."""

    cases: tuple[Case, ...]
    rows: list[Row]
    peers: dict[str, dict[str, str]]
    seconds: float
    slack: Fraction = FLOAT_SLACK
    env: dict[str, str] | None = None

    def findings(self) -> dict[str, object]:
        """Contract: the material findings first: every UNSOUND row (largest relative shortfall
        first), then every estimate below the truth, then the roundoff rows (count, largest
        relative shortfall and where), and the count of each verdict over all rows."""

        def by_shortfall(verdict: str) -> list[Row]:
            rows = [r for r in self.rows if r.judgement.verdict == verdict]
            return sorted(rows, key=lambda r: -(r.judgement.relative or 0.0))

        roundoff = by_shortfall("roundoff")
        return {
            "unsound": [r.brief() for r in by_shortfall("UNSOUND")],
            "estimates_below_truth": [r.brief() for r in by_shortfall("estimate")],
            "roundoff": {"count": len(roundoff), "largest": roundoff[0].brief() if roundoff else None},
            "counts": {v: sum(r.judgement.verdict == v for r in self.rows) for v in VERDICTS},
        }

    def summary(self) -> dict[str, dict[str, object]]:
        """Contract: per peer, the count of each verdict, the UNSOUND count among guarantees (rows
        not marked ``estimate``), and the worst relative distance among guarantees (largest
        UNSOUND if any, else largest conservative) with where it was."""
        out: dict[str, dict[str, object]] = {}
        for name in self.peers:
            rows = [r for r in self.rows if r.peer.peer == name]
            counts = {v: sum(r.judgement.verdict == v for r in rows) for v in VERDICTS}
            guarantees = [r for r in rows if not r.peer.estimate]
            worst = None
            for verdict in ("UNSOUND", "conservative"):
                judged = [r for r in guarantees if r.judgement.verdict == verdict]
                if judged:
                    w = max(judged, key=lambda r: r.judgement.relative or 0.0)
                    worst = {
                        "verdict": verdict,
                        "relative": _float_text(w.judgement.relative or 0.0),
                        "case": w.case.id,
                        "method": w.peer.method,
                        "kind": w.peer.kind,
                        **({"order": exact_str(w.peer.order)} if w.peer.order is not None else {}),
                    }
                    break
            unsound = sum(r.judgement.verdict == "UNSOUND" for r in guarantees)
            out[name] = {"counts": counts, "unsound_guarantees": unsound, "worst": worst}
        return out

    @property
    def unsound(self) -> int:
        """Contract: the number of UNSOUND rows that are guarantees (not marked ``estimate``)."""
        return sum(r.judgement.verdict == "UNSOUND" and not r.peer.estimate for r in self.rows)

    def to_dict(self) -> dict[str, object]:
        """Contract: the audit as one JSON object (the CLI's --json output): the findings first,
        then the peers' versions and the environment (python, numpy, scipy, CPU features) that a
        rerun must match, the cases and every row with its recorded peer call."""
        return {
            "quantity": "audit",
            "certdp_version": __version__,
            "findings": self.findings(),
            "peers": self.peers,
            "environment": self.env if self.env is not None else environment(),
            "cases": [c.to_dict() for c in self.cases],
            "slack": repr(float(self.slack)),
            "summary": self.summary(),
            "rows": [r.to_dict() for r in self.rows],
            "seconds": round(self.seconds, 2),
        }


class References:
    """Certified references, computed once per quantity (its parameters, not the case's id: two
    cases of the same setting share them) and shared by the peers."""

    def __init__(self, pld_rel_width: Fraction = PLD_REL_WIDTH) -> None:
        self._cache: dict[tuple[object, ...], Reference] = {}
        self.pld_rel_width = pld_rel_width

    def for_value(self, case: Case, pv: PeerValue) -> Reference:
        """Contract: the reference of the quantity ``pv`` reports (certdp.audit.reference)."""
        q, s, n = case.q, case.sigma, case.steps
        key: tuple[object, ...]
        if pv.kind == "rdp":
            assert s is not None and pv.order is not None
            key = ("rdp", q, s, n, pv.order)
            make = lambda: rdp_reference(q, s, n, pv.order)  # type: ignore[arg-type]  # noqa: E731
        elif pv.kind == "eps-rdp":
            assert s is not None and case.delta is not None
            key = ("eps-rdp", q, s, n, case.delta, pv.orders if pv.conversion == "cks" else (), pv.conversion)
            make = lambda: eps_rdp_reference(q, s, n, case.delta, pv.orders, pv.conversion)  # type: ignore[arg-type]  # noqa: E731
        elif pv.kind == "eps-pld":
            assert s is not None and case.delta is not None
            key = ("eps-pld", q, s, n, case.delta)
            make = lambda: eps_pld_reference(q, s, n, case.delta, self.pld_rel_width)  # type: ignore[arg-type]  # noqa: E731
        elif pv.kind == "delta-pld":
            assert s is not None and case.eps is not None
            key = ("delta-pld", q, s, n, case.eps)
            make = lambda: delta_pld_reference(q, s, n, case.eps, self.pld_rel_width)  # type: ignore[arg-type]  # noqa: E731
        elif pv.kind == "sigma-rdp":
            assert case.eps is not None and case.delta is not None
            key = ("sigma-rdp", q, n, case.eps, case.delta, pv.orders, pv.conversion)
            guess = pv.value if math.isfinite(pv.value) else 1.0
            make = lambda: sigma_rdp_reference(q, n, case.eps, case.delta, pv.orders, pv.conversion, guess)  # type: ignore[arg-type]  # noqa: E731
        elif pv.kind == "eps-allocation":
            assert s is not None and case.delta is not None
            key = ("eps-allocation", s, n, case.epochs, case.delta, case.k)
            make = lambda: eps_allocation_reference(s, n, case.epochs, case.delta, case.k)  # type: ignore[arg-type]  # noqa: E731
        elif pv.kind == "sigma-pld":
            assert case.eps is not None and case.delta is not None
            key = ("sigma-pld", q, n, case.eps, case.delta)
            make = lambda: sigma_pld_reference(q, n, case.eps, case.delta)  # type: ignore[arg-type]  # noqa: E731
        else:
            return Reference(pv.kind, None, None, 0.0, f"no reference for kind {pv.kind!r}")
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


def run_audit(
    cases: Sequence[Case],
    adapters: Sequence[Adapter],
    progress: Progress | None = None,
    slack: Fraction = FLOAT_SLACK,
) -> AuditResult:
    """Ask every adapter every case and judge each number.

    Contract: one Row per PeerValue; each verdict is certdp.audit.verdict.judge of the value
    against the certified reference of the same quantity (References.for_value), with the float
    ``slack`` (relative; default certdp.audit.verdict.FLOAT_SLACK), the roundoff tolerance of the
    peer's method (certdp.audit.tolerance.tolerance) and the value's ``estimate`` mark.
    A case that names ``peers`` is asked of those adapters only. ``progress`` (description,
    fraction done) is called as the work advances. certdp's own BudgetExhausted (a reference or a
    checkpoint past --max-seconds or --max-memory) is never a row: it propagates, saying how far
    the audit got."""
    start = time.perf_counter()
    refs = References()
    rows: list[Row] = []
    total = max(1, len(cases) * len(adapters))
    done = 0
    for case in cases:
        for adapter in adapters:
            if progress:
                progress(f"{case.id}: {adapter.name}", done / total)
            if case.peers and adapter.name not in case.peers:
                done += 1
                continue
            try:
                for pv in adapter.evaluate(case):
                    ref = refs.for_value(case, pv)
                    tol = row_tolerance(case, pv)
                    judgement = judge(pv.value, ref, slack, tol.bound, pv.estimate, pv.side)
                    rows.append(Row(case, pv, ref, judgement, tol))
            except BudgetExhausted as exc:  # certdp's own budget (--max-seconds, --max-memory): exit 3
                raise BudgetExhausted(
                    f"{exc} (audit: {done} of {total} case-peer runs done, {len(rows)} rows; "
                    f"stopped at case {case.id}, peer {adapter.name})"
                ) from None
            done += 1
    if progress:
        progress("done", 1.0)
    peers = {a.name: {"version": a.version(), "path": a.path} for a in adapters}
    return AuditResult(tuple(cases), rows, peers, time.perf_counter() - start, slack, environment())


def row_tolerance(case: Case, pv: PeerValue) -> Tolerance:
    """Contract: certdp.audit.tolerance.tolerance of the value's quantity at the case's steps (a
    non-finite value gets the bound of 0: it is judged without one); a random-allocation case
    composes steps x epochs times."""
    value = Fraction(pv.value) if math.isfinite(pv.value) else Fraction(0)
    return tolerance(pv.kind, value, case.steps * case.epochs, pv.order, pv.orders)


def relative_position(value: float, ref: Reference) -> float | None:
    """Contract: (value - mid)/mid of the reference as a float (None without both ends or for
    non-finite values): the y coordinate of the report's plots; no enclosure (plotting only)."""
    if ref.lower is None or ref.upper is None or not math.isfinite(value):
        return None
    mid = (ref.lower + ref.upper) / 2
    if mid == 0:
        return None
    return float((Fraction(value) - mid) / mid)
