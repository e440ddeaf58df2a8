"""The ``audit`` command: peers against certified enclosures (certdp.audit)."""

from __future__ import annotations

import argparse
import json
from fractions import Fraction

from certdp.audit.adapters import PEERS, Adapter, PeerMissing, load_adapter
from certdp.audit.cases import default_suite, load_cases
from certdp.audit.claim import check_claim, parse_claim, sentence
from certdp.audit.report import render_html, render_text, write_atomic
from certdp.audit.rerun import rerun_report
from certdp.audit.run import run_audit
from certdp.audit.verdict import FLOAT_SLACK
from certdp.cli.common import progress_bar
from certdp.errors import InvalidArgument, fmt_value
from certdp.fileio import read_text
from certdp.pairs.params import exact_str, real


def _adapters(spec: str | None) -> tuple[list[Adapter], list[str]]:
    """The requested peers' adapters (a missing one is an error), or every installed peer (the
    missing ones are listed as skipped)."""
    if spec is None:
        found, skipped = [], []
        for name in PEERS:
            try:
                found.append(load_adapter(name))
            except PeerMissing as exc:
                skipped.append(f"{name}: {exc}")
        if not found:
            raise PeerMissing('no peer accountant is installed: pip install "certdp[audit]"')
        return found, skipped
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise InvalidArgument(f"peers={fmt_value(spec)} must name at least one peer ({', '.join(PEERS)})")
    for n in names:
        if n not in PEERS:
            raise InvalidArgument(f"peers: {fmt_value(n)} must be one of {', '.join(PEERS)}")
    return [load_adapter(n) for n in dict.fromkeys(names)], []


def run_audit_command(args: argparse.Namespace) -> dict[str, object]:
    """Runner of ``certdp audit``. Contract: the record printed (--json) or rendered; its
    ``exit_code`` is 1 when a value is UNSOUND (or a --rerun verdict differs), 3 for an inconclusive
    --claim, else 0."""
    slack = FLOAT_SLACK if args.slack is None else real("slack", args.slack, ge=0, lt=Fraction(1, 100))
    if args.claim is not None:
        for flag in ("peers", "html"):
            if getattr(args, flag) is not None:
                raise InvalidArgument(f"{flag}={fmt_value(getattr(args, flag))} does not apply to --claim")
        claim = parse_claim(args.claim)
        ref, j = check_claim(claim, slack)
        code = {"UNSOUND": 1, "inconclusive": 3}.get(j.verdict, 0)
        return {
            "quantity": "claim",
            "claim": claim.text,
            "peer": claim.peer,
            "method": claim.method,
            "reported": claim.reported,
            "value": exact_str(claim.value),
            "case": claim.case.to_dict(),
            **ref.to_dict(),
            "slack": repr(float(slack)),
            "verdict": j.verdict,
            "relative": None if j.relative is None else repr(j.relative),
            "sentence": sentence(claim, ref, j),
            "certdp_seconds": round(ref.seconds, 3),
            "exit_code": code,
        }
    if getattr(args, "rerun", None) is not None:
        return _rerun(args)
    cases = default_suite() if args.suite else load_cases(args.cases)
    adapters, skipped = _adapters(args.peers)
    if args.html is not None:
        # fail before the long run, not after it
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise PeerMissing(
                '--html needs matplotlib: pip install "certdp[audit]" (or pip install matplotlib)'
            ) from None
    with progress_bar(args) as note:
        result = run_audit(cases, adapters, note, slack)
    rec = result.to_dict()
    rec["skipped_peers"] = skipped
    if args.html is not None:
        write_atomic(args.html, render_html(result))
        rec["html"] = args.html
    rec["exit_code"] = 1 if result.unsound else 0
    if not args.json:  # the terminal summary (certdp.cli.render prints it)
        rec["text"] = render_text(result) + "".join(f"\n  skipped {s}" for s in skipped)
        if rec.get("html"):
            rec["text"] += f"\n  report written to {args.html}"
    return rec


#: Largest report --rerun reads (the committed one is about 1 MB).
MAX_REPORT_BYTES = 64 << 20


def _rerun(args: argparse.Namespace) -> dict[str, object]:
    """``certdp audit --rerun REPORT``: every recorded peer call made again (certdp.audit.rerun).
    Exit code 0 when every verdict is reproduced, 1 otherwise."""
    for flag in ("html", "slack"):
        if getattr(args, flag) is not None:
            raise InvalidArgument(f"{flag}={fmt_value(getattr(args, flag))} does not apply to --rerun")
    text = read_text(args.rerun, "rerun", MAX_REPORT_BYTES)
    try:
        report = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise InvalidArgument(f"rerun={fmt_value(args.rerun)} is not valid JSON: {exc}") from None
    if not isinstance(report, dict):
        raise InvalidArgument(f"rerun={args.rerun} must hold one JSON object (certdp audit --json)")
    peers = None if args.peers is None else [n.strip() for n in args.peers.split(",") if n.strip()]
    with progress_bar(args) as note:
        rec = rerun_report(report, peers, note)
    rows: list[dict[str, object]] = rec["rows"]  # type: ignore[assignment]
    rec["exit_code"] = 0 if rec["same_verdict"] == rec["rerun"] else 1
    if not args.json:
        lines = [
            f"certdp audit --rerun {args.rerun}: {rec['rerun']} rows rerun from their recorded calls; "
            f"{rec['same_value']} reproduce the recorded value bit for bit, {rec['same_verdict']} its verdict"
        ]
        for r in rows:
            if not r["same_value"] or not r["same_verdict"]:
                order = f" alpha={r['order']}" if "order" in r else ""
                lines.append(
                    f"  {r['case']} {r['peer']} {r['method']}{order}: recorded {r['recorded']} "
                    f"({r['recorded_verdict']}), now {r['value']} ({r['verdict']})"
                )
        old, new = rec["recorded_environment"] or {}, rec["environment"]
        changed = [f"{k} {old.get(k)} -> {v}" for k, v in new.items() if old.get(k) != v]  # type: ignore[union-attr,attr-defined]
        if changed:
            lines.append("  environment changed: " + "; ".join(changed))
        for name, why in rec["skipped_peers"].items():  # type: ignore[attr-defined]
            lines.append(f"  skipped {name}: {why}")
        rec["text"] = "\n".join(lines)
    return rec
