"""The README's one-line summary of the claims registry states the committed report's counts."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_claims_line_matches_the_committed_report():
    rec = json.loads((ROOT / "claims_report" / "report.json").read_text())
    cat = rec["categories"]
    line = next(ln for ln in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if "Paper claims" in ln)
    m = re.search(
        r"(\d+) claims from (\d+) papers and library docs: (\d+) distinct printed numbers \((\d+) confirmed, "
        r"(\d+) refuted, (\d+) imprecise\), (\d+) derived checks, (\d+) identities and (\d+) out of scope",
        line,
    )
    assert m, line
    got = [int(x) for x in m.groups()]
    p = cat["printed"]
    want = [
        rec["total"],
        len(rec["papers"]),
        p["numbers"],
        p["confirmed"],
        p["refuted"],
        p["imprecise"],
        cat["derived"]["claims"],
        cat["identity"]["claims"],
        cat["out of scope"]["claims"],
    ]
    assert got == want
