"""Issue 39 (attack review): a signed PLD certificate whose lattice lies far below the losses
(lo = -2^40 cells, or -10^7) made `certdp verify` exit 3 with "ball nan is not finite", naming no
field: every loss is above such a lattice, so its +inf atom holds P-mass whose ball reaches 1, and
1 - (1 - p_inf)^n was formed as -expm1(n log1p(-p_inf)) = nan. That term is at most 1, so the
composition now counts it as 1 (certdp.notions.pld_fixed): the bound is >= 1, the recorded end is
not proved, and verify says which field in one line (exit 1, as for any end not proved).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from certdp.cert.crypto import digest_hex
from certdp.cli import main

CERT = Path(__file__).resolve().parents[1] / "certificates" / "dpsgd_pld_q0.05_n500_eps3.json"


@pytest.mark.parametrize("lo", [-(2**40), -(10**7)])
def test_a_lattice_below_every_loss_is_not_proved_and_names_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lo: int
) -> None:
    key = tmp_path / "k.key"
    assert main(["keygen", "--out", str(key)]) == 0
    doc = json.loads(CERT.read_text())
    lattice = doc["body"]["claim"]["method"]["lattices"]["remove"]
    lattice["lo"], lattice["hi"] = lo, lo + 7000  # within the verifier's cell limit, below every loss
    doc["digest"]["value"] = digest_hex(doc["body"])
    cert = tmp_path / "far.json"
    cert.write_text(json.dumps(doc, indent=2))
    assert main(["sign", str(cert), "--key", str(key)]) == 0
    capsys.readouterr()
    code = main(["verify", str(cert), "--allow-untrusted"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "nan" not in err and err.count("\n") == 1
    assert err.startswith("certdp: error: field body/claim/result/upper: ") and "(remove)" in err
    assert "delta_upper 1.0" in err  # the +inf atom counted at its bound 1, not as nan
