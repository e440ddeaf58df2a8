"""A grouped Markdown summary of the failing fuzz cases (set CERTDP_FUZZ_REPORT=path to write it)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from tests.fuzz.harness import Case, Outcome

GROUPS = (
    ("hang", "Killed or over the time budget (hangs)"),
    ("memory", "Over the memory budget"),
    ("traceback", "Tracebacks / exceptions escaping main or the API, crashes"),
    ("result", "Exit 0 with a wrong result (closed form missed, field wrong or missing)"),
    ("accepted", "Accepted (exit 0) where a usage error naming the parameter was expected"),
    ("message", "Right exit code, bad message (not one line, too long, parameter not named)"),
    ("exit", "Wrong exit code / refused where an answer was expected"),
    ("api", "Python API: wrong exception class / message, or no exception"),
)


def group_of(case: Case, out: Outcome) -> str:
    text = " ".join(out.problems)
    if out.kill_reason.startswith("RSS") or "peak RSS" in text:
        return "memory"
    if out.killed or "s CPU (" in text:
        return "hang"
    if "traceback" in text or "died of signal" in text or "escaped" in text:
        return "traceback"
    if case.api is not None:
        return "api"
    if (out.exit == 0 and "wrong result" in text) or "result check" in text or "JSON" in text:
        return "result"
    if out.exit == 0:
        return "accepted"
    codes = {"ok": 0, "usage": 2, "exhausted": 3, "invalid": 1}
    allowed = {codes[alt.partition(":")[0]] for alt in case.expect.split("|")}
    if out.exit in allowed:
        return "message"
    return "exit"


def _argv(out: Outcome) -> str:
    if out.argv is None:
        return "(Python API)"
    text = "certdp " + " ".join(shlex.quote(a) for a in out.argv).replace("\n", "\\n")
    return text if len(text) <= 220 else text[:200] + f"... ({len(text)} chars)"


def _entry(c: Case, o: Outcome) -> list[str]:
    sig = f", signal {o.signal}" if o.signal else ""
    cost = f"{o.seconds:.2f} s wall ({o.cpu_seconds:.2f} s CPU), peak RSS {o.maxrss_kb / 1024:.0f} MiB"
    out = [f"- **{c.id}** — `{_argv(o)}`", f"  - expected `{c.expect}`; exit {o.exit}{sig}, {cost}"]
    first = o.first_err_line()
    if first and not first.startswith("Traceback"):
        out.append(f"  - stderr: `{first[:240]}`")
    out += [f"  - {p[:400]}" for p in o.problems]
    return out


def render(cases: Sequence[Case], results: dict[str, Outcome], seconds: float, harness_rss_mb: float) -> str:
    failing = [(c, results[c.id]) for c in cases if c.id in results and not results[c.id].ok]
    n_cli = sum(1 for c in cases if c.api is None)
    lines = [
        "# certdp fuzz corpus (issue 13): failures",
        "",
        f"{len(cases)} cases ({n_cli} CLI, {len(cases) - n_cli} Python API); {len(failing)} failing; "
        f"corpus wall time {seconds:.1f} s; harness (parent) peak RSS {harness_rss_mb:.0f} MiB; "
        f"slowest case {max((o.seconds for o in results.values()), default=0):.1f} s; largest child peak RSS "
        f"{max((o.maxrss_kb for o in results.values()), default=0) / 1024:.0f} MiB.",
        "",
        "Re-run: `CERTDP_FUZZ_REPORT=/tmp/fuzz_failures.md python -m pytest -q tests/fuzz` (one case: `-k 'case-id'`).",
        "",
    ]
    by_group: dict[str, list[tuple[Case, Outcome]]] = {}
    for c, o in failing:
        by_group.setdefault(group_of(c, o), []).append((c, o))
    for key, title in GROUPS:
        items = by_group.get(key, [])
        if not items:
            continue
        lines += [f"## {title} ({len(items)})", ""]
        # a sweep (one parameter through the hostile values) failing alike: one entry, the first case in full
        families: dict[str, list[tuple[Case, Outcome]]] = {}
        for c, o in items:
            families.setdefault(c.note or c.id, []).append((c, o))
        for fam in families.values():
            if len(fam) >= 3:
                labels = ", ".join(c.id.rsplit("-", 1)[-1] for c, _ in fam)
                lines.append(f"- **sweep `{fam[0][0].note}`**: {len(fam)} values fail alike ({labels}); the first:")
                fam = fam[:1]
            for c, o in fam:
                lines += _entry(c, o)
        lines.append("")
    return "\n".join(lines) + "\n"
