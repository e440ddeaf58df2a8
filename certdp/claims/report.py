"""Render a claims run: a terminal summary and a self-contained HTML report grouped by paper."""

from __future__ import annotations

import html
from collections.abc import Sequence

from certdp.claims.check import ClaimResult
from certdp.claims.model import STATUSES, UNKNOWN_QUOTE, summary_line
from certdp.claims.run import ClaimsReport

COLORS = {"confirmed": "#1a7f37", "refuted": "#cf222e", "imprecise": "#9a6700", "out of scope": "#57606a"}


def _by_paper(results: Sequence[ClaimResult]) -> dict[str, list[ClaimResult]]:
    out: dict[str, list[ClaimResult]] = {}
    for r in results:
        out.setdefault(r.claim.paper.id, []).append(r)
    return out


def _certified(r: ClaimResult) -> str:
    if r.value is None:
        return "-"
    text = r.value.text()
    return text if r.other is None else f"{text} vs {r.other.text()}"


def render_text(report: ClaimsReport) -> str:
    """Contract: counts by status, then per paper one line per claim (status, id, printed, certified);
    refuted and imprecise claims also show their evidence and note."""
    counts = report.counts()
    summary = report.summary()
    lines = [
        f"{len(report.results)} claims in {report.seconds:.0f} s ({report.workers} workers): "
        + ", ".join(f"{counts[s]} {s}" for s in STATUSES),
        f"  {summary_line(summary['all'])}",
    ]
    for pid, rows in _by_paper(report.results).items():
        lines.append(f"\n{rows[0].claim.paper.cite()}")
        lines.append(f"  {summary_line(summary[pid])}")
        for r in rows:
            c = r.claim
            tag = " [derived]" if c.category == "derived" else ""
            lines.append(f"  {r.status:<12} {c.id + tag:<34} printed {c.printed:<22} certified {_certified(r)}")
            if r.status in ("refuted", "imprecise"):
                lines.append(f"  {'':<12} {r.evidence}")
                if c.note:
                    lines.append(f"  {'':<12} note: {c.note}")
    return "\n".join(lines)


def _e(x: object) -> str:
    return html.escape(str(x))


def render_html(report: ClaimsReport, unregistered: Sequence[dict[str, object]] = ()) -> str:
    """Contract: one HTML page: the status counts, then per paper its citation, its counts and a
    table of claims (where, statement, printed, the interval it stands for, certified enclosure,
    status, evidence, computation, note); then the ``unregistered`` printed numbers (records with
    paper, numbers, text and reason), if any."""
    counts = report.counts()
    summary = report.summary()
    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>certdp claims report</title><style>",
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:110em}table{border-collapse:collapse;width:100%}",
        "td,th{border:1px solid #d0d7de;padding:4px 6px;vertical-align:top;font-size:13px}th{background:#f6f8fa}",
        "code{font-size:12px}.s{font-weight:bold;white-space:nowrap}",
        "</style></head><body><h1>certdp: paper claims, certified</h1>",
        f"<p>{len(report.results)} claims checked in {report.seconds:.0f} s on {report.workers} workers "
        f"({report.computations} computations). Every <em>confirmed</em> status rests on a certified "
        "(ball-arithmetic) enclosure or a symbolic proof; a straddling enclosure is <em>imprecise</em>.</p>",
        "<table><tr>" + "".join(f"<th>{_e(s)}</th>" for s in STATUSES) + "</tr><tr>",
        "".join(f"<td class='s' style='color:{COLORS[s]}'>{counts[s]}</td>" for s in STATUSES) + "</tr></table>",
        f"<p><strong>Counted apart:</strong> {_e(summary_line(summary['all']))}. A <em>printed</em> number is "
        "one the source prints (claims that check one printed range at several settings count once); a "
        "<em>derived</em> check tests a consequence the page does not state in those words (its reasoning "
        "is shown); an <em>identity</em> is a formula proved symbolically (proofs_checks).</p>",
    ]
    for pid, rows in _by_paper(report.results).items():
        p = rows[0].claim.paper
        pc = {s: sum(r.status == s for r in rows) for s in STATUSES}
        out.append(f"<h2>{_e(pid)}: {_e(p.title)}</h2><p>{_e(p.cite())}<br>")
        out.append(", ".join(f"<span style='color:{COLORS[s]}'>{pc[s]} {_e(s)}</span>" for s in STATUSES))
        out.append(f"<br>{_e(summary_line(summary[pid]))}</p>")
        out.append(
            "<table><tr><th>id</th><th>where</th><th>statement</th><th>printed</th><th>stands for</th>"
            "<th>certified</th><th>status</th><th>evidence and computation</th></tr>"
        )
        for r in rows:
            c = r.claim
            claimed = c.target.text() if c.target is not None else "-"
            comp = "; ".join(ref.label() for ref in c.refs) or (c.check or "")
            extra = f"<br><em>note:</em> {_e(c.note)}" if c.note else ""
            if c.reasoning:
                extra += f"<br><em>derived:</em> {_e(c.reasoning)}"
            quote = f"<br><q>{_e(c.quote)}</q>" if c.quote else ""
            if c.quote.startswith(UNKNOWN_QUOTE):  # a marker, not the source's words: no quotation marks
                quote = f"<br><em>quote unknown:</em> {_e(c.quote[len(UNKNOWN_QUOTE) :])}"
            tag = "<br><em>derived</em>" if c.category == "derived" else ""
            out.append(
                f"<tr><td><code>{_e(c.id)}</code>{tag}</td><td>{_e(c.where)}{quote}</td><td>{_e(c.statement)}</td>"
                f"<td><code>{_e(c.printed)}</code></td><td><code>{_e(claimed)}</code></td>"
                f"<td><code>{_e(_certified(r))}</code></td>"
                f"<td class='s' style='color:{COLORS[r.status]}'>{_e(r.status)}</td>"
                f"<td>{_e(r.evidence)}<br><code>{_e(comp)}</code>{extra}</td></tr>"
            )
        out.append("</table>")
    if unregistered:
        out.append(
            f"<h2>Printed numbers not registered ({len(unregistered)} sentences or rows)</h2>"
            "<table><tr><th>paper</th><th>numbers</th><th>text</th><th>why not checked</th></tr>"
        )
        for u in unregistered:
            nums = ", ".join(str(n) for n in u.get("numbers", []))  # type: ignore[attr-defined]
            out.append(
                f"<tr><td>{_e(u.get('paper'))}</td><td><code>{_e(nums)}</code></td>"
                f"<td>{_e(u.get('text'))}</td><td>{_e(u.get('reason'))}</td></tr>"
            )
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out)
