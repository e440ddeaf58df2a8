"""Audit output: the terminal summary and the HTML report (tables and matplotlib plots, PNGs
embedded so that the file stands alone). Printing only: no number here is certified beyond what
the rows carry."""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from certdp.audit.run import AuditResult, Row, relative_position
from certdp.audit.verdict import VERDICTS
from certdp.errors import Unsupported
from certdp.fileio import write_atomic as write_atomic_bytes

KIND_TITLES = {
    "rdp": "Renyi divergence at given orders",
    "eps-rdp": "epsilon from RDP accountants (their orders and conversion)",
    "eps-pld": "epsilon from PLD / PRV / GDP accountants (against the exact epsilon)",
    "delta-pld": "delta(eps) and attack advantage (against the exact delta)",
    "sigma-rdp": "calibrated sigma, RDP accountants",
    "sigma-pld": "calibrated sigma, exact accounting",
    "eps-allocation": "random-allocation epsilon, both ends of the peers' bands (against the exact epsilon)",
}
COLORS = {
    "UNSOUND": "#d62828",
    "estimate": "#e76f51",
    "roundoff": "#b5838d",
    "exact": "#2a9d4b",
    "conservative": "#2b6cb0",
    "inconclusive": "#888888",
}
MARKERS = {
    "dp_accounting": "o",
    "prv": "s",
    "opacus": "D",
    "autodp": "^",
    "riskcal": "v",
    "pld_accounting": "P",
    "random_allocation": "X",
}


def _where(row: Row) -> str:
    order = f" alpha={float(row.peer.order):g}" if row.peer.order is not None else ""
    return f"{row.case.id} {row.peer.method}{order}"


def _finding(f: dict[str, object]) -> str:
    order = f" alpha={f['order']}" if "order" in f else ""
    rel = "" if f["relative"] is None else f" ({float(f['relative']):.3g} relative)"  # type: ignore[arg-type]
    where = f"{f['peer']} {f['method']} at {f['case']}{order}"
    if f.get("side") == "lower":  # a peer's lower bound above the truth
        return f"{where}: lower bound {f['value']} > certified upper end {f['upper']}{rel}"
    return f"{where}: {f['value']} < certified lower end {f['lower']}{rel}"


def headline(result: AuditResult) -> list[str]:
    """Contract: the material findings as lines, first: the UNSOUND values (each with its
    certified lower end), then the estimates below the truth, then one line for the roundoff
    rows (how many, the largest), then the verdict totals."""
    f = result.findings()
    unsound: list[dict[str, object]] = f["unsound"]  # type: ignore[assignment]
    estimates: list[dict[str, object]] = f["estimates_below_truth"]  # type: ignore[assignment]
    roundoff: dict[str, object] = f["roundoff"]  # type: ignore[assignment]
    lines = [
        f"UNSOUND: {len(unsound)} value{'s' * (len(unsound) != 1)} below the certified lower end of the same "
        "quantity (a peer's lower bound: above the upper end) by more than the float error of the peer's method"
        + (":" if unsound else " (no violation found).")
    ]
    lines += [f"  {_finding(x)}" for x in unsound]
    if estimates:
        lines.append(
            f"Estimates below the truth (documented as estimates by their peers, not guarantees; not counted): "
            f"{len(estimates)}:"
        )
        lines += [f"  {_finding(x)}" for x in estimates]
    if roundoff["count"]:
        largest = roundoff["largest"]
        lines.append(
            f"Roundoff (below the truth by no more than the float error of the peer's method; not counted): "
            f"{roundoff['count']}, the largest {float(largest['relative']):.3g} relative at "  # type: ignore[index]
            f"{largest['peer']} {largest['method']} {largest['case']}"  # type: ignore[index]
            + (f" alpha={largest['order']}" if "order" in largest else "")  # type: ignore[operator]
        )
    counts = f["counts"]
    lines.append("All values: " + ", ".join(f"{v} {counts[v]}" for v in VERDICTS))  # type: ignore[index]
    return lines


def render_text(result: AuditResult) -> str:
    """Contract: a human summary that leads with the material findings (:func:`headline`), then
    per peer the verdict counts and worst finding, then every inconclusive row's reason."""
    lines = [f"certdp audit: {len(result.cases)} cases, {len(result.rows)} peer values, {result.seconds:.0f} s"]
    lines += headline(result)
    lines.append("Per peer:")
    for name, info in result.summary().items():
        peer = result.peers[name]
        counts = ", ".join(f"{v} {info['counts'][v]}" for v in VERDICTS)  # type: ignore[index]
        lines.append(f"  {name} {peer['version']} ({peer['path']}): {counts}")
        worst = info["worst"]
        if worst:
            order = f" alpha={worst['order']}" if "order" in worst else ""  # type: ignore[operator]
            lines.append(
                f"    worst guarantee: {worst['verdict']} by {float(worst['relative']):.3g} relative at "  # type: ignore[index]
                f"{worst['case']} {worst['method']} {worst['kind']}{order}"  # type: ignore[index]
            )
    env = result.env or {}
    if env:
        lines.append(
            f"Environment: python {env.get('python')}, numpy {env.get('numpy')}, scipy {env.get('scipy')}, "
            f"{env.get('machine')} (recorded with every peer call in --json)"
        )
    for r in result.rows:
        if r.judgement.verdict == "inconclusive":
            lines.append(f"  inconclusive: {r.peer.peer} {_where(r)}: {r.peer.error or r.judgement.why}")
    return "\n".join(lines)


def _plot(kind: str, rows: Sequence[Row]) -> str:
    """PNG (base64) of the peers' values relative to the certified band, one column per row, the
    columns of a case side by side (the case is named under its first column)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(min(16.0, max(7.0, 0.12 * len(rows) + 4)), 4.6), dpi=110)
    ticks: list[tuple[int, str]] = []
    for i, r in enumerate(rows):
        if i == 0 or rows[i - 1].case.id != r.case.id:
            ticks.append((i, r.case.id))
            if i:
                ax.axvline(i - 0.5, color="#eeeeee", linewidth=0.8, zorder=0)
        ref = r.reference
        if ref.lower is not None and ref.upper is not None and (ref.lower + ref.upper) != 0:
            mid = (ref.lower + ref.upper) / 2
            half = max(float((ref.upper - ref.lower) / 2 / abs(mid)), 1e-12)
            ax.plot([i, i], [-half, half], color="#bbbbbb", linewidth=5, solid_capstyle="butt", zorder=1)
        if r.peer.value == math.inf:
            ax.annotate("inf", (i, 0.98), xycoords=("data", "axes fraction"), ha="center", va="top", fontsize=6)
            continue
        y = relative_position(r.peer.value, ref)
        if y is None:
            continue
        color = COLORS[r.judgement.verdict]
        marker = MARKERS.get(r.peer.peer, "o")
        face = "none" if r.peer.estimate else color  # estimates by design: hollow markers
        ax.scatter([i], [y], facecolors=face, edgecolors=color, marker=marker, s=26, zorder=2)
    ax.set_yscale("symlog", linthresh=1e-9)
    ax.axhline(0, color="#444444", linewidth=0.6)
    ax.set_xticks([t for t, _ in ticks])
    ax.set_xticklabels([name for _, name in ticks], rotation=90, fontsize=6)
    ax.set_xlim(-1, len(rows))
    ax.set_ylabel("(peer value - certified mid) / mid\n(symlog; linear within 1e-9)", fontsize=8)
    ax.set_title(
        KIND_TITLES.get(kind, kind) + "\ngrey: certified band; color: verdict; marker: peer; hollow: estimate",
        fontsize=9,
    )
    handles = [ax.scatter([], [], color=c, label=v) for v, c in COLORS.items()]
    handles += [ax.scatter([], [], color="black", marker=m, label=p) for p, m in MARKERS.items()]
    ax.legend(handles=handles, fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _e(x: object) -> str:
    return html.escape("" if x is None else str(x))


def render_html(result: AuditResult) -> str:
    """Contract: a standalone HTML page: versions, one table per peer (counts by verdict, worst
    relative distance and where), one plot per quantity, and every row. Needs matplotlib
    (Unsupported, naming it, when absent)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise Unsupported('--html needs matplotlib: pip install "certdp[audit]" (or pip install matplotlib)') from None
    rec = result.to_dict()
    env: dict[str, str] = rec["environment"]  # type: ignore[assignment]
    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>certdp audit</title><style>",
        "body{font-family:sans-serif;margin:2em;max-width:1200px} table{border-collapse:collapse;margin:1em 0}",
        "td,th{border:1px solid #ccc;padding:3px 6px;font-size:12px} th{background:#f0f0f0}",
        ".UNSOUND{color:#d62828;font-weight:bold} .estimate{color:#e76f51} .roundoff{color:#b5838d}",
        ".conservative{color:#2b6cb0} .exact{color:#2a9d4b}",
        ".inconclusive{color:#888} img{max-width:100%} .lead{border:2px solid #d62828;padding:0 1em}</style>",
        "</head><body>",
        "<h1>certdp audit</h1>",
        f"<p>certdp {_e(rec['certdp_version'])}; {len(result.cases)} cases, {len(result.rows)} peer values; "
        f"{result.seconds:.0f} s; generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; python "
        f"{_e(env.get('python'))}, numpy {_e(env.get('numpy'))}, scipy {_e(env.get('scipy'))}, "
        f"{_e(env.get('machine'))}.</p>",
        _findings_html(result),
        "<p>Every peer value is held against certdp's certified enclosure [lower, upper] of the SAME quantity "
        "(ball arithmetic, python-flint/Arb). Below the certified lower end, the value is below the truth: "
        "<b>UNSOUND</b> when it is further below than the float error of the peer's own method (the tolerance of "
        "each row is recorded; docs/audit.md gives the rule per quantity), <span class='roundoff'>roundoff</span> "
        "when it is within it, <span class='estimate'>estimate</span> when the peer documents the value as an "
        "estimate, not a guarantee (dp_accounting's optimistic PLD, the PRV point estimate, Opacus's GDP "
        "accountant). <b>conservative</b>: above the upper end; <b>exact</b>: inside (up to 2<sup>-40</sup> "
        "relative float slack); <b>inconclusive</b>: certdp has one side only, or the peer failed. Only UNSOUND "
        "values fail the run.</p>",
        "<h2>Peers</h2><table><tr><th>peer</th><th>version</th><th>loaded</th>"
        + "".join(f"<th>{v}</th>" for v in VERDICTS)
        + "<th>worst guarantee (relative)</th><th>where</th></tr>",
    ]
    for name, info in rec["summary"].items():  # type: ignore[union-attr]
        peer = rec["peers"][name]  # type: ignore[index]
        worst = info["worst"]
        cells = "".join(f"<td class='{v}'>{info['counts'][v]}</td>" for v in VERDICTS)
        if worst:
            order = f" alpha={worst['order']}" if "order" in worst else ""
            w = f"<td class='{worst['verdict']}'>{worst['verdict']} {float(worst['relative']):.3g}</td>"
            where = f"<td>{_e(worst['case'])} {_e(worst['method'])} {_e(worst['kind'])}{_e(order)}</td>"
        else:
            w, where = "<td>-</td>", "<td>-</td>"
        out.append(
            f"<tr><td>{_e(name)}</td><td>{_e(peer['version'])}</td><td>{_e(peer['path'])}</td>{cells}{w}{where}</tr>"
        )
    out.append(
        "</table><p>Environment (a rerun of the recorded peer calls must match it to reproduce the floats "
        "bit for bit): " + _e(", ".join(f"{k} {v}" for k, v in env.items())) + "</p>"
    )
    kinds = [k for k in KIND_TITLES if any(r.peer.kind == k for r in result.rows)]
    for kind in kinds:
        rows = [r for r in result.rows if r.peer.kind == kind]
        out.append(f"<h2>{_e(KIND_TITLES[kind])}</h2>")
        out.append(f"<img alt='{_e(kind)}' src='data:image/png;base64,{_plot(kind, rows)}'>")
    out.append(
        "<h2>All values</h2><table><tr><th>case</th><th>peer</th><th>method</th><th>quantity compared</th>"
        "<th>order</th><th>peer value</th><th>certified lower</th><th>certified upper</th><th>verdict</th>"
        "<th>relative</th><th>roundoff tolerance</th><th>peer s</th><th>certdp s</th><th>note</th>"
        "<th>peer call</th></tr>"
    )
    for row in rec["rows"]:  # type: ignore[union-attr]
        v = row["verdict"]
        shown = v + (" (estimate)" if row.get("estimate") and v != "estimate" else "")
        call = row.get("call") or {}
        call_text = f"{call.get('function', '')}({json.dumps(call.get('args', {}))})" if call else ""
        rel = "" if row["relative"] is None else f"{float(row['relative']):.3g}"
        note = "; ".join(str(x) for x in (row.get("error"), row.get("note"), row.get("reason")) if x)
        out.append(
            f"<tr><td>{_e(row['case'])}</td><td>{_e(row['peer'])}</td><td>{_e(row['method'])}</td>"
            f"<td>{_e(row['compared'])}</td><td>{_e(row.get('order'))}</td><td>{_e(row['value'])}</td>"
            f"<td>{_e(row['lower'])}</td><td>{_e(row['upper'])}</td><td class='{v}'>{shown}</td><td>{rel}</td>"
            f"<td>{_e(row.get('roundoff_tolerance'))}</td><td>{row['peer_seconds']}</td>"
            f"<td>{row['certdp_seconds']}</td><td>{_e(note)}</td><td>{_e(call_text)}</td></tr>"
        )
    out.append("</table><h2>Cases</h2><pre>")
    for c in result.cases:
        out.append(_e(f"{c.id}: {c.label()} checks={','.join(c.checks)}" + (f"  ({c.note})" if c.note else "")))
    out.append("</pre></body></html>")
    return "\n".join(out)


def _findings_html(result: AuditResult) -> str:
    """The lead section: the material findings (:func:`headline`), each heading line with its items."""
    groups: list[tuple[str, list[str]]] = []
    for line in headline(result):
        if line.startswith("  ") and groups:
            groups[-1][1].append(line.strip())
        else:
            groups.append((line, []))
    out = ["<div class='lead'><h2>Findings</h2>"]
    for head, items in groups:
        cls = " class='UNSOUND'" if head.startswith("UNSOUND") and items else ""
        out.append(f"<p{cls}>{_e(head)}</p>")
        if items:
            out.append("<ul>" + "".join(f"<li>{_e(x)}</li>" for x in items) + "</ul>")
    return "".join(out) + "</div>"


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through certdp.fileio.write_atomic (a temporary file in the same
    folder and a rename, the target checked to be a regular file right before it), so that no
    half-written file is ever left and a device or FIFO is never replaced. Contract: the file holds
    all of ``text`` or is untouched; InvalidArgument naming the path when it cannot be written."""
    umask = os.umask(0)
    os.umask(umask)
    # a report is an ordinary file: the mode a plain open() would give it
    write_atomic_bytes(path, text.encode("utf-8"), what="html", mode=0o666 & ~umask)
