"""Regenerate the committed claims report: check the whole shipped registry and write
claims_report/report.json (the run as one JSON object), claims_report/report.html (grouped by
paper) and claims_report/findings.md (counts, and every refuted or imprecise claim with its
evidence).

Run: python claims_report/make_report.py [--jobs N]   (about 10 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from certdp.audit.report import write_atomic
from certdp.claims import check_claims, shipped_claims
from certdp.claims.model import STATUSES
from certdp.claims.report import render_html, render_text

HERE = Path(__file__).resolve().parent


def findings(rec: dict[str, object]) -> str:
    """Markdown: status counts per paper, then every refuted and imprecise claim with its evidence."""
    counts = rec["counts"]
    assert isinstance(counts, dict)
    out = [
        "# Findings of the committed claims run",
        "",
        f"Made by `python claims_report/make_report.py` on {time.strftime('%Y-%m-%d')}: {rec['total']} claims, "
        f"{rec['seconds']} s on {rec['workers']} workers. The full records are in `report.json`, the "
        "readable report in `report.html`.",
        "",
        "| paper | " + " | ".join(STATUSES) + " |",
        "|---|" + "---|" * len(STATUSES),
    ]
    papers = rec["papers"]
    assert isinstance(papers, dict)
    for pid, p in papers.items():
        out.append(f"| {pid} | " + " | ".join(str(p[s]) for s in STATUSES) + " |")
    out.append("| all | " + " | ".join(str(counts[s]) for s in STATUSES) + " |")
    claims = rec["claims"]
    assert isinstance(claims, list)
    for status in ("refuted", "imprecise"):
        rows = [c for c in claims if c["status"] == status]
        out += ["", f"## {status.capitalize()} ({len(rows)})", ""]
        for c in rows:
            out.append(f"- **{c['id']}** ({c['where']}): printed `{c['printed']}`. {c['evidence']}.")
            if c.get("note"):
                out.append(f"  {c['note']}")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: the CPU count)")
    args = ap.parse_args()

    def note(what: str, frac: float) -> None:
        sys.stderr.write(f"\r{what} {100 * frac:5.1f}%")
        sys.stderr.flush()

    report = check_claims(shipped_claims(), note, args.jobs)
    sys.stderr.write("\n")
    rec = report.to_dict()
    write_atomic(HERE / "report.json", json.dumps(rec, indent=1) + "\n")
    write_atomic(HERE / "report.html", render_html(report))
    write_atomic(HERE / "findings.md", findings(rec))
    print(render_text(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
