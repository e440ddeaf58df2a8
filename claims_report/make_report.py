"""Regenerate the committed claims report: check the whole shipped registry and write
claims_report/report.json (the run as one JSON object), claims_report/report.html (grouped by
paper) and claims_report/findings.md (counts, and every refuted or imprecise claim with its
evidence).

Run: python claims_report/make_report.py [--jobs N]   (about 25 minutes on 2 loaded cores)

``--refresh`` rewrites the three files from the committed run without recomputing: each claim's
texts (where, quote, statement, note, reasoning, citation) come from the shipped registry and its
verdict and enclosures from report.json. It refuses (exit 2) unless every claim checks exactly what
it checked in the committed run (same id, kind, printed number, target interval, computations,
operator, one-sidedness, rounded inputs and identity check, compared with the claim files of the
commit that last wrote report.json): a claim whose check changed needs the full run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tomllib
from fractions import Fraction
from pathlib import Path

from certdp.audit.report import write_atomic
from certdp.claims import check_claims, shipped_claims
from certdp.claims.check import ClaimResult
from certdp.claims.interval import Interval
from certdp.claims.model import STATUSES, Claim, parse_claims
from certdp.claims.report import render_html, render_text
from certdp.claims.run import ClaimsReport

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


def _checked(c: Claim) -> tuple[object, ...]:
    """What a claim's verdict depends on (everything but its texts)."""
    return (
        c.uid,
        c.kind,
        c.printed,
        c.category,
        c.target,
        c.op,
        c.left,
        c.right,
        c.check,
        c.refs,
        c.aggregate,
        c.over,
        c.one_sided,
        c.rounded,
        c.number_key,
    )


def _interval(d: object) -> Interval | None:
    """An enclosure of report.json: its exact ends (the decimal ends, rounded outward, where an exact
    end was too long to print)."""
    if not isinstance(d, dict):
        return None

    def end(side: str) -> Fraction | None:
        exact, dec = d.get(f"{side}_exact"), d.get(side)
        return Fraction(exact) if exact is not None else (None if dec is None else Fraction(dec))

    return Interval(end("lower"), end("upper"), str(d.get("detail", "")), bool(d["lower_open"]), bool(d["upper_open"]))


def refreshed(rec: dict[str, object]) -> ClaimsReport:
    """The committed run with the shipped registry's texts; SystemExit(2) if any claim's check changed."""
    rev = subprocess.run(
        ["git", "log", "-1", "--format=%H", "--", "claims_report/report.json"],
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    then: dict[str, Claim] = {}
    for path in sorted((HERE.parent / "certdp" / "claims").glob("*.toml")):
        rel = path.relative_to(HERE.parent).as_posix()
        old = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=HERE.parent, capture_output=True, text=True)
        if old.returncode == 0:
            then.update((c.uid, c) for c in parse_claims(old.stdout, path.name))
    rows = rec["claims"]
    assert isinstance(rows, list)
    now = shipped_claims()
    if [c.uid for c in now] != [r["id"] for r in rows]:
        raise SystemExit("claims were added, removed or reordered since the committed run: run without --refresh")
    changed = [c.uid for c in now if c.uid not in then or _checked(then[c.uid]) != _checked(c)]
    if changed:
        raise SystemExit(
            f"{len(changed)} claims check something else since the committed run ({changed[0]}, ...): "
            "run without --refresh"
        )
    results = tuple(
        ClaimResult(
            c,
            r["status"],
            r["evidence"],
            _interval(r.get("certified")),
            _interval(r.get("certified_right")),
            r.get("error", ""),
            r["seconds"],
        )
        for c, r in zip(now, rows, strict=True)
    )
    timings = rec["timings"]
    assert isinstance(timings, dict)
    return ClaimsReport(
        results,
        float(rec["seconds"]),
        int(rec["workers"]),
        int(rec["computations"]),  # type: ignore[arg-type]
        tuple(timings.items()),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: the CPU count)")
    ap.add_argument(
        "--refresh", action="store_true", help="rewrite the texts from the registry, reusing the committed verdicts"
    )
    args = ap.parse_args()

    def note(what: str, frac: float) -> None:
        sys.stderr.write(f"\r{what} {100 * frac:5.1f}%")
        sys.stderr.flush()

    if args.refresh:
        try:
            report = refreshed(json.loads((HERE / "report.json").read_text(encoding="utf-8")))
        except SystemExit as exc:
            sys.stderr.write(f"make_report: {exc}\n")
            return 2
    else:
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
