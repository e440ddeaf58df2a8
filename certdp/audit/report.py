"""Audit output: the terminal summary and the HTML report (tables and matplotlib plots, PNGs
embedded so that the file stands alone). Printing only: no number here is certified beyond what
the rows carry."""

from __future__ import annotations

import base64
import html
import io
import math
import os
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from certdp.audit.run import AuditResult, Row, relative_position
from certdp.audit.verdict import VERDICTS
from certdp.errors import InvalidArgument, Unsupported

KIND_TITLES = {
    "rdp": "Renyi divergence at given orders",
    "eps-rdp": "epsilon from RDP accountants (their orders and conversion)",
    "eps-pld": "epsilon from PLD / PRV / GDP accountants (against the exact epsilon)",
    "delta-pld": "delta(eps) and attack advantage (against the exact delta)",
    "sigma-rdp": "calibrated sigma, RDP accountants",
    "sigma-pld": "calibrated sigma, exact accounting",
}
COLORS = {"exact": "#2a9d4b", "conservative": "#2b6cb0", "UNSOUND": "#d62828", "inconclusive": "#888888"}
MARKERS = {"dp_accounting": "o", "prv": "s", "opacus": "D", "autodp": "^", "riskcal": "v"}


def _where(row: Row) -> str:
    order = f" alpha={float(row.peer.order):g}" if row.peer.order is not None else ""
    return f"{row.case.id} {row.peer.method}{order}"


def render_text(result: AuditResult) -> str:
    """Contract: a human summary: per peer the verdict counts and worst finding, then every
    UNSOUND row and every inconclusive row's reason."""
    lines = [f"certdp audit: {len(result.cases)} cases, {len(result.rows)} peer values, {result.seconds:.0f} s"]
    for name, info in result.summary().items():
        peer = result.peers[name]
        counts = ", ".join(f"{v} {info['counts'][v]}" for v in VERDICTS)  # type: ignore[index]
        lines.append(f"  {name} {peer['version']} ({peer['path']}): {counts}")
        estimates = info["counts"]["UNSOUND"] - info["unsound_guarantees"]  # type: ignore[index,operator]
        if estimates:
            lines.append(f"    ({estimates} of the UNSOUND values are estimates by design, not guarantees)")
        worst = info["worst"]
        if worst:
            order = f" alpha={worst['order']}" if "order" in worst else ""  # type: ignore[operator]
            lines.append(
                f"    worst: {worst['verdict']} by {float(worst['relative']):.3g} relative at "  # type: ignore[index]
                f"{worst['case']} {worst['method']} {worst['kind']}{order}"  # type: ignore[index]
            )
    unsound = [r for r in result.rows if r.judgement.verdict == "UNSOUND"]
    if unsound:
        lines.append("UNSOUND (below the certified lower end of the same quantity; * an estimate by design):")
        for r in unsound:
            ref = r.reference.to_dict()
            star = "*" if r.peer.estimate else ""
            lines.append(
                f"  {star}{r.peer.peer} {_where(r)}: {r.peer.value!r} < {ref['lower']} "
                f"({r.judgement.relative:.3g} relative; {r.reference.quantity})"
                + (f" [{r.peer.note}]" if r.peer.note else "")
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
    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>certdp audit</title><style>",
        "body{font-family:sans-serif;margin:2em;max-width:1200px} table{border-collapse:collapse;margin:1em 0}",
        "td,th{border:1px solid #ccc;padding:3px 6px;font-size:12px} th{background:#f0f0f0}",
        ".UNSOUND{color:#d62828;font-weight:bold} .conservative{color:#2b6cb0} .exact{color:#2a9d4b}",
        ".inconclusive{color:#888} img{max-width:100%}</style></head><body>",
        "<h1>certdp audit</h1>",
        f"<p>certdp {_e(rec['certdp_version'])}; {len(result.cases)} cases, {len(result.rows)} peer values; "
        f"{result.seconds:.0f} s; generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.</p>",
        "<p>Every peer value is held against certdp's certified enclosure [lower, upper] of the SAME quantity "
        "(ball arithmetic, python-flint/Arb). <b>UNSOUND</b>: below the certified lower end (the peer claims more "
        "privacy than that quantity allows); <b>conservative</b>: above the upper end; <b>exact</b>: inside "
        "(up to 2<sup>-40</sup> relative float slack); <b>inconclusive</b>: certdp has one side only, or the peer "
        "failed.</p>",
        "<h2>Peers</h2><table><tr><th>peer</th><th>version</th><th>loaded</th>"
        + "".join(f"<th>{v}</th>" for v in VERDICTS)
        + "<th>UNSOUND guarantees</th><th>worst guarantee (relative)</th><th>where</th></tr>",
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
        bad = info["unsound_guarantees"]
        cells += f"<td class='{'UNSOUND' if bad else 'exact'}'>{bad}</td>"
        out.append(
            f"<tr><td>{_e(name)}</td><td>{_e(peer['version'])}</td><td>{_e(peer['path'])}</td>{cells}{w}{where}</tr>"
        )
    out.append(
        "</table><p>Estimates by design (dp_accounting's optimistic PLD, prv_accountant's point estimate) are "
        "judged too and counted under their verdict, but they are not guarantees: the UNSOUND guarantees column "
        "and the worst finding leave them out.</p>"
    )
    kinds = [k for k in KIND_TITLES if any(r.peer.kind == k for r in result.rows)]
    for kind in kinds:
        rows = [r for r in result.rows if r.peer.kind == kind]
        out.append(f"<h2>{_e(KIND_TITLES[kind])}</h2>")
        out.append(f"<img alt='{_e(kind)}' src='data:image/png;base64,{_plot(kind, rows)}'>")
    out.append(
        "<h2>All values</h2><table><tr><th>case</th><th>peer</th><th>method</th><th>quantity compared</th>"
        "<th>order</th><th>peer value</th><th>certified lower</th><th>certified upper</th><th>verdict</th>"
        "<th>relative</th><th>peer s</th><th>certdp s</th><th>note</th></tr>"
    )
    for row in rec["rows"]:  # type: ignore[union-attr]
        v = row["verdict"]
        shown = v + (" (estimate)" if row.get("estimate") else "")
        rel = "" if row["relative"] is None else f"{float(row['relative']):.3g}"
        note = "; ".join(str(x) for x in (row.get("error"), row.get("note"), row.get("reason")) if x)
        out.append(
            f"<tr><td>{_e(row['case'])}</td><td>{_e(row['peer'])}</td><td>{_e(row['method'])}</td>"
            f"<td>{_e(row['compared'])}</td><td>{_e(row.get('order'))}</td><td>{_e(row['value'])}</td>"
            f"<td>{_e(row['lower'])}</td><td>{_e(row['upper'])}</td><td class='{v}'>{shown}</td><td>{rel}</td>"
            f"<td>{row['peer_seconds']}</td><td>{row['certdp_seconds']}</td><td>{_e(note)}</td></tr>"
        )
    out.append("</table><h2>Cases</h2><pre>")
    for c in result.cases:
        out.append(_e(f"{c.id}: {c.label()} checks={','.join(c.checks)}" + (f"  ({c.note})" if c.note else "")))
    out.append("</pre></body></html>")
    return "\n".join(out)


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename, so
    that no half-written file is ever left. Contract: the file holds all of ``text`` or is untouched;
    InvalidArgument naming the path when it cannot be written."""
    p = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes the file private; a report is an ordinary file
        os.replace(tmp, p)
    except OSError as exc:
        try:
            os.unlink(tmp)  # type: ignore[possibly-undefined]
        except (OSError, NameError):
            pass
        raise InvalidArgument(f"html={path} cannot be written: {exc.strerror or exc}") from None
