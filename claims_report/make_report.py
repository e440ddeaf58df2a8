"""Regenerate the committed claims report: check the whole shipped registry and write
claims_report/report.json (the run as one JSON object), claims_report/report.html (grouped by
paper) and claims_report/findings.md (counts, and every refuted or imprecise claim with its
evidence).

Run: python claims_report/make_report.py [--jobs N]   (about 12 minutes on 2 cores)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from pathlib import Path

from certdp.audit.report import write_atomic
from certdp.claims import check_claims, shipped_claims
from certdp.claims.model import STATUSES
from certdp.claims.report import render_html, render_text

HERE = Path(__file__).resolve().parent


def unregistered() -> list[dict[str, object]]:
    """The printed numbers of the three source papers the registry does not check (unregistered.toml)."""
    rows = tomllib.loads((HERE / "unregistered.toml").read_text(encoding="utf-8")).get("unregistered", [])
    assert isinstance(rows, list)
    return rows


def findings(rec: dict[str, object], unreg: list[dict[str, object]] | None = None) -> str:
    """Markdown: status counts per paper, the counts by category (distinct printed numbers, derived
    checks, identities, out of scope), every refuted and imprecise claim with its evidence, and
    the printed numbers not registered with the reason."""
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
    out += [
        "",
        "Counted apart: a *printed* number is one the source prints (claims that check one printed range at",
        "several settings count once; its status is the worst of its claims); a *derived* check tests a",
        "consequence the page does not state in those words; an *identity* is a formula proved symbolically.",
        "",
        "| paper | printed numbers (claims) | derived | identities | out of scope |",
        "|---|---|---|---|---|",
    ]
    for pid, p in [*papers.items(), ("all", {"categories": rec["categories"]})]:
        cat = p["categories"]  # type: ignore[index]

        def st(e: dict[str, int]) -> str:
            return ", ".join(f"{e[s]} {s}" for s in STATUSES if e.get(s) and s != "out of scope")

        pr, de, ide, oos = (cat[k] for k in ("printed", "derived", "identity", "out of scope"))
        out.append(
            f"| {pid} | {pr['numbers']} ({pr['claims']}): {st(pr)} | {de['claims']}: {st(de)} | "
            f"{ide['claims']}: {st(ide)} | {oos['claims']} |"
        )
    claims = rec["claims"]
    assert isinstance(claims, list)
    for status in ("refuted", "imprecise"):
        rows = [c for c in claims if c["status"] == status]
        out += ["", f"## {status.capitalize()} ({len(rows)})", ""]
        for c in rows:
            out.append(f"- **{c['id']}** ({c['where']}): printed `{c['printed']}`. {c['evidence']}.")
            if c.get("note"):
                out.append(f"  {c['note']}")
    if unreg:
        out += ["", f"## Printed numbers not registered ({len(unreg)} sentences or rows)", ""]
        out.append("Every decimal number of the three source papers' text that no registered claim holds, by sentence:")
        out.append("")
        for u in unreg:
            nums = ", ".join(str(n) for n in u["numbers"])  # type: ignore[attr-defined]
            out.append(f"- **{u['paper']}** `{nums}`: {u['reason']}. ({u['text']})")
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
    unreg = unregistered()
    rec["unregistered"] = unreg
    write_atomic(HERE / "report.json", json.dumps(rec, indent=1) + "\n")
    write_atomic(HERE / "report.html", render_html(report, unreg))
    write_atomic(HERE / "findings.md", findings(rec, unreg))
    print(render_text(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
