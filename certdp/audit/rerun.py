"""Rerunning a report: every row's recorded peer call made again (``certdp audit --rerun
REPORT.json``), the value compared bit for bit with the recorded one and judged again against the
recorded certified ends.

The recorded ends are outward-rounded decimals (the lower end rounded down, the upper end up), so
they still enclose the quantity: a verdict against them is as proved as the original one. The
roundoff tolerance is recomputed from the row's quantity and case (certdp.audit.tolerance).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from certdp.audit.adapters import Adapter, PeerMissing, call_peer, environment, load_adapter
from certdp.audit.reference import Reference
from certdp.audit.tolerance import tolerance
from certdp.audit.verdict import FLOAT_SLACK, Judgement, judge
from certdp.errors import InvalidArgument


def _float(text: object) -> float:
    return float(str(text))  # repr of a float, or "inf" / "nan"


def _case_int(case: dict[str, object], name: str) -> int:
    """The case's integer field ``name`` (1 when absent): an int, or a float or string holding an
    integer exactly; InvalidArgument naming the case and the field otherwise (1.5, "two", inf)."""
    raw = case.get(name, 1)
    bad = InvalidArgument(f"case {case.get('id')}: {name}={raw!r} must be an integer >= 1")
    if isinstance(raw, bool) or not isinstance(raw, int | str | float):
        raise bad
    try:
        value = Fraction(str(raw).strip())
    except (ValueError, ZeroDivisionError):
        raise bad from None
    if value.denominator != 1 or value < 1:
        raise bad
    return int(value)


def _cases(cases: list[object]) -> dict[str, dict[str, object]]:
    """The report's cases by id (a non-empty string); InvalidArgument for a malformed or repeated one."""
    out: dict[str, dict[str, object]] = {}
    for i, c in enumerate(cases):
        if not isinstance(c, dict) or not isinstance(c.get("id"), str) or not c.get("id"):
            raise InvalidArgument(f"report: case {i + 1} must be an object with a string id")
        if c["id"] in out:
            raise InvalidArgument(f"report: case id {c['id']!r} appears twice")
        for name in ("steps", "epochs", "k"):
            _case_int(c, name)
        out[str(c["id"])] = c
    return out


def recorded_call(record: dict[str, object]) -> dict[str, object]:
    """Contract: the row's recorded peer call; InvalidArgument naming the row when it has none."""
    call = record.get("call")
    if not isinstance(call, dict):
        where = f"{record.get('case')} {record.get('peer')} {record.get('method')}"
        raise InvalidArgument(f"row {where}: call is missing (a report written before calls were recorded)")
    return call


def rerun_row(record: dict[str, object], adapter: Adapter | None = None) -> float:
    """The value of one report row computed again from its recorded call.

    Contract: ``adapter`` (default: load_adapter of the row's peer) replays the row's ``call``;
    InvalidArgument when the row records no call, PeerMissing when the peer is not installed."""
    call = recorded_call(record)
    peer = adapter if adapter is not None else load_adapter(str(record.get("peer")))
    return peer.replay(call)


def rejudge(
    record: dict[str, object], value: float, steps: int, orders: tuple[Fraction, ...] = (), *, wide: bool = False
) -> Judgement:
    """Contract: certdp.audit.verdict.judge of ``value`` against the row's recorded ends (exact
    Fractions of their decimals), with the report's slack, the roundoff tolerance of the row's
    quantity at ``steps`` (and ``orders``, the peer's RDP orders for eps-rdp), its estimate
    mark and its side (a lower bound is judged mirrored). The ends are judged ``wide`` when the
    row says so or ``wide`` is given (the case's k > 1: the mark is derived from the case too, so
    a row whose mark was deleted is not judged exact)."""
    f = lambda x: None if x is None else Fraction(str(x))  # noqa: E731
    wide = wide or record.get("wide") is True
    ref = Reference(str(record.get("compared", "")), f(record.get("lower")), f(record.get("upper")), 0.0, wide=wide)
    order = f(record.get("order"))
    kind = str(record.get("kind"))
    v = Fraction(value) if math.isfinite(value) else Fraction(0)
    tol = tolerance(kind, v, steps, order, orders if kind == "eps-rdp" else ())
    side = record.get("side", "upper")
    if side not in ("upper", "lower"):
        raise InvalidArgument(f"row {record.get('case')} {record.get('peer')}: side={side!r} must be upper or lower")
    return judge(value, ref, FLOAT_SLACK, tol.bound, bool(record.get("estimate")), str(side))


def rerun_report(
    report: dict[str, object],
    peers: list[str] | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> dict[str, object]:
    """Every row of a report (certdp.audit.run.AuditResult.to_dict) rerun from its recorded call.

    Contract: per row the recorded and new value, ``same_value`` (bit for bit) and ``same_verdict``
    (:func:`rejudge` of the new value equals the recorded verdict); rows of peers that are not
    installed, or not in ``peers``, are counted as skipped; the recorded and the current
    environment side by side. InvalidArgument for a malformed report."""
    rows = report.get("rows")
    cases = report.get("cases")
    if not isinstance(rows, list) or not isinstance(cases, list):
        raise InvalidArgument("report: rows and cases must be lists (the --json output of certdp audit)")
    by_id = _cases(cases)
    # compositions per case (the tolerance's n): a random-allocation case composes steps x epochs times
    steps = {i: _case_int(c, "steps") * _case_int(c, "epochs") for i, c in by_id.items()}
    # a k > 1 random-allocation case has a proved but wide reference (certdp.audit.reference)
    wide = {i for i, c in by_id.items() if _case_int(c, "k") > 1}
    adapters: dict[str, Adapter | None] = {}
    out: list[dict[str, object]] = []
    skipped: dict[str, str] = {}
    for i, rec in enumerate(rows):
        if not isinstance(rec, dict):
            raise InvalidArgument(f"report: row {i + 1} must be an object")
        if rec.get("case") not in by_id:
            # its steps (the tolerance) and its k (a wide reference) would be guessed
            raise InvalidArgument(f"report: row {i + 1} names case {rec.get('case')!r}, which is not in cases")
        name = str(rec.get("peer"))
        if progress:
            progress(f"{rec.get('case')}: {name} {rec.get('method')}", i / max(1, len(rows)))
        if peers is not None and name not in peers:
            skipped.setdefault(name, "not requested")
            continue
        if name not in adapters:
            try:
                adapters[name] = load_adapter(name)
            except (PeerMissing, InvalidArgument) as exc:
                adapters[name], skipped[name] = None, str(exc)
        adapter = adapters[name]
        if adapter is None:
            continue
        call = recorded_call(rec)
        # as in the audit: the peer's warnings are captured, its failure is a NaN with the error
        value, _, error, _ = call_peer(lambda adapter=adapter, call=call: adapter.replay(call))  # type: ignore[misc]
        recorded = _float(rec.get("value"))
        same = value == recorded or (math.isnan(value) and math.isnan(recorded))
        j = rejudge(rec, value, steps[rec["case"]], getattr(adapter, "orders", ()), wide=rec["case"] in wide)
        out.append(
            {
                "case": rec.get("case"),
                "peer": name,
                "method": rec.get("method"),
                "kind": rec.get("kind"),
                **({"order": rec["order"]} if "order" in rec else {}),
                "recorded": rec.get("value"),
                "value": repr(value),
                "same_value": same,
                "recorded_verdict": rec.get("verdict"),
                "verdict": j.verdict,
                "same_verdict": j.verdict == rec.get("verdict"),
                **({"error": error} if error else {}),
            }
        )
    if progress:
        progress("done", 1.0)
    return {
        "quantity": "audit",
        "mode": "rerun",
        "rows": out,
        "rerun": len(out),
        "same_value": sum(bool(r["same_value"]) for r in out),
        "same_verdict": sum(bool(r["same_verdict"]) for r in out),
        "skipped_peers": skipped,
        "recorded_environment": report.get("environment"),
        "environment": environment(),
        "recorded_peers": report.get("peers"),
        "peers": {n: {"version": a.version(), "path": a.path} for n, a in adapters.items() if a is not None},
    }
