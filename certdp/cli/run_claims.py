"""The ``claims`` command: check the paper-claims registry (certdp.claims)."""

from __future__ import annotations

import argparse

from certdp.audit.report import write_atomic
from certdp.claims import check_claims, load_claims, shipped_claims
from certdp.claims.model import summarize, summary_line
from certdp.claims.report import render_html, render_text
from certdp.claims.run import MAX_WORKERS
from certdp.cli.common import progress_bar
from certdp.errors import InvalidArgument
from certdp.pairs.params import integer


def run_claims_command(args: argparse.Namespace) -> dict[str, object]:
    """Runner of ``certdp claims check|list``. Contract: the record printed (--json) or rendered;
    ``exit_code`` 1 when a claim is refuted, else 3 when one is imprecise, else 0; a claim whose
    parameters are invalid (an InvalidArgument from its computation) raises InvalidArgument (exit 2)."""
    if args.files:
        if args.paper is not None:
            raise InvalidArgument(f"paper={args.paper} does not apply to --file (a file is one paper)")
        claims = tuple(c for f in args.files for c in load_claims(f))
        uids = [c.uid for c in claims]
        dup = next((u for u in uids if uids.count(u) > 1), None)
        if dup is not None:
            raise InvalidArgument(f"claim {dup} appears in more than one --file")
    else:
        claims = shipped_claims(args.paper)
    if args.action == "list":
        rows = [
            {
                "id": c.uid,
                "kind": c.kind,
                "category": c.category,
                "where": c.where,
                "printed": c.printed,
                "statement": c.statement,
            }
            for c in claims
        ]
        summary = summarize(claims)
        rec: dict[str, object] = {
            "quantity": "claims",
            "total": len(rows),
            "categories": summary["all"],
            "papers": {k: v for k, v in summary.items() if k != "all"},
            "claims": rows,
            "exit_code": 0,
        }
        if not args.json:
            lines = [f"{r['id']:<50} {r['category']:<12} {r['printed']:<20} {r['where']}" for r in rows]
            lines += ["", f"{len(rows)} claims: {summary_line(summary['all'])}"]
            lines += [f"  {k}: {summary_line(v)}" for k, v in summary.items() if k != "all"]
            rec["text"] = "\n".join(lines)
        return rec
    jobs = None if args.jobs is None else integer("jobs", args.jobs, ge=1)
    if jobs is not None and jobs > MAX_WORKERS:
        raise InvalidArgument(f"jobs={jobs} must be at most {MAX_WORKERS}")
    with progress_bar(args) as note:
        report = check_claims(claims, note, jobs)
    bad = next((r for r in report.results if r.bad_input), None)
    if bad is not None:  # the claim file is at fault (a parameter out of its domain), not certdp: exit 2
        raise InvalidArgument(f"claim {bad.claim.uid}: {bad.error.removeprefix('InvalidArgument: ')}")
    rec = report.to_dict()
    if args.html is not None:
        write_atomic(args.html, render_html(report))
        rec["html"] = args.html
    counts = report.counts()
    rec["exit_code"] = 1 if counts["refuted"] else 3 if counts["imprecise"] else 0
    if not args.json:
        rec["text"] = render_text(report) + (f"\n\nreport written to {args.html}" if args.html else "")
    return rec
