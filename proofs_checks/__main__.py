"""Print id, statement, method, PASS/FAIL and time of every check; exit 1 on any FAIL."""

import sys

from proofs_checks import run_all


def main() -> int:
    outcomes = run_all()
    width = max(len(o.check.id) for o in outcomes)
    for o in outcomes:
        status = "PASS" if o.passed else "FAIL"
        print(f"{o.check.id:<{width}}  {status}  {o.seconds:6.2f}s  [{o.check.method}]  {o.check.statement}")
        if o.error:
            print(f"{'':<{width}}        {o.error}")
    failed = sum(not o.passed for o in outcomes)
    print(f"{len(outcomes) - failed} passed, {failed} failed")
    return 1 if failed else 0


sys.exit(main())
