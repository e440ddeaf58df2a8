"""Print every check, grouped by topic: id, PASS/FAIL, time, method, statement, and where the
statement is derived (a section of docs/math.md) with its source; exit 1 on any FAIL.

    python -m proofs_checks            every check
    python -m proofs_checks ID [ID..]  only these (an unknown id exits 2)
    python -m proofs_checks --list     the ids and statements, nothing run
"""

import sys

from proofs_checks import CHECKS, run_all

HEADER = """\
proofs_checks: sympy checks of the formulas certdp relies on (derivations in docs/math.md).
Each check: its id (cited by certdp's docstrings), PASS or FAIL, the time, the method
("symbolic": sympy proves the statement; "numeric fallback": evidence on a grid, not a proof),
the statement, and below it the docs/math.md section that derives it and its source."""


def _topic(module_name: str) -> str:
    """First paragraph of the check module's docstring, on one line."""
    doc = sys.modules[module_name].__doc__ or module_name
    return " ".join(doc.strip().split("\n\n")[0].split())


def main(argv: list[str]) -> int:
    if argv == ["--list"]:
        for c in CHECKS:
            print(f"{c.id}  [{c.method}]  {c.statement}")
        return 0
    bad = next((a for a in argv if a.startswith("-")), None)
    if bad is not None:
        why = "takes no other argument" if bad == "--list" else "is not an option"
        print(f"python -m proofs_checks: {bad} {why} (usage: [--list | ID ...])", file=sys.stderr)
        return 2
    try:
        outcomes = run_all(argv or None)
    except ValueError as exc:
        print(f"python -m proofs_checks: {exc}", file=sys.stderr)
        return 2
    width = max(len(o.check.id) for o in outcomes)
    print(HEADER)
    topic = None
    for o in outcomes:
        this = _topic(o.check.fn.__module__)
        if this != topic:
            topic = this
            print(f"\n== {topic}")
        status = "PASS" if o.passed else "FAIL"
        print(f"{o.check.id:<{width}}  {status}  {o.seconds:6.2f}s  [{o.check.method}]  {o.check.statement}")
        if o.check.where:
            print(f"{'':<{width}}  see {o.check.where}")
        if o.error:
            print(f"{'':<{width}}  error while checking: {o.error}")
        elif not o.passed:
            print(f"{'':<{width}}  not confirmed: the identity did not reduce to the claimed value")
    failed = sum(not o.passed for o in outcomes)
    print(f"\n{len(outcomes) - failed} passed, {failed} failed")
    return 1 if failed else 0


sys.exit(main(sys.argv[1:]))
