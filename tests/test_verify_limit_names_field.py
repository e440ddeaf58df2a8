"""A PLD recomputation past the product limit names the check, the field and the direction
(issue 39, attacker finding 4): it said only "a power's product of 4530784 coefficients exceeds
the limit 4194304", while verify messages name the first failing field.

The crafted files that reach the real limit (2^22 coefficients) take about a minute to get there,
so the limit is lowered here: the committed certificate's recomputation then meets it at once,
through the same code path.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from certdp.cert import recompute
from certdp.cli import main

ROOT = Path(__file__).resolve().parents[1]
CERT = ROOT / "certificates" / "dpsgd_pld_q0.005_n500_eps3.json"


@pytest.mark.parametrize("limit", [64, 4096])
def test_product_limit_names_check_field_and_direction(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    monkeypatch.setattr(recompute, "MAX_PLD_PRODUCT", limit)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["verify", str(CERT), "--pubkey", str(ROOT / "certificates" / "certdp-project.pub")])
    line = err.getvalue().strip()
    assert code == 2 and "\n" not in line, line
    lattices = json.loads(CERT.read_text())["body"]["claim"]["method"]["lattices"]
    found = re.search(r"field body/claim/method/lattices/(\w+) \((\w+) direction\): a power's product of (\d+) ", line)
    assert found is not None, line
    assert found.group(1) == found.group(2) and found.group(1) in lattices
    assert int(found.group(3)) > limit and f"exceeds the limit {limit}" in line
