"""The random-allocation peer (Feldman and Shenfeld, arXiv:2502.08202) in the audit, with the real
package (skipped cleanly when it or pandas, which its package imports, is absent): its combined
upper bound and its one-epoch lower bound against certdp's certified enclosure."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from certdp.audit.adapters import PeerMissing, load_adapter
from certdp.audit.cases import case_from_dict
from certdp.audit.run import run_audit
from certdp.cli import main

ALLOC = {"id": "a", "steps": 10, "epochs": 1, "sigma": 1, "delta": 1e-5, "checks": ["eps-allocation"]}


@pytest.fixture(scope="module")
def adapter():
    for module in ("random_allocation", "pandas"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    return load_adapter("random_allocation")


def test_combined_upper_and_lower_bound_against_the_enclosure(adapter):
    pytest.importorskip("certdp.notions.allocation_dp")
    res = run_audit([case_from_dict(ALLOC, "c")], [adapter])
    rows = {r.peer.method: r for r in res.rows}
    assert set(rows) == {"combined", "lower-bound"}
    combined, lower = rows["combined"], rows["lower-bound"]
    assert combined.peer.side == "upper" and lower.peer.side == "lower"
    assert combined.judgement.verdict in ("exact", "conservative"), combined.judgement
    assert lower.judgement.verdict in ("exact", "conservative"), lower.judgement
    assert lower.peer.value <= combined.peer.value
    assert combined.peer.call["args"]["allocation_direct_alpha_orders"] == list(range(2, 61))


def test_several_epochs_have_no_lower_bound_row_and_printing_is_captured(adapter, capsys):
    """The package's lower bound is one-epoch only; what the package prints (alpha at the edge of
    its orders) becomes the row's note, not output."""
    case = case_from_dict({**ALLOC, "epochs": 10, "sigma": 0.5}, "c")
    rows = adapter.evaluate(case)
    assert [r.method for r in rows] == ["combined"]
    assert capsys.readouterr().out == ""
    assert "alpha" in rows[0].note
    poisson = case_from_dict({"id": "p", "q": 0.1, "sigma": 1, "steps": 10, "delta": 1e-5, "checks": ["eps-pld"]}, "c")
    assert adapter.evaluate(poisson) == []


def test_missing_package_is_a_one_line_peer_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "random_allocation.random_allocation_scheme", None)
    with pytest.raises(PeerMissing) as exc:
        load_adapter("random_allocation")
    assert "random-allocation" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.slow  # a second run of the combined bound (about 15 s)
def test_cli_audit_of_an_allocation_case(adapter, tmp_path, capsys):
    pytest.importorskip("certdp.notions.allocation_dp")
    cases = tmp_path / "cases.toml"
    cases.write_text('[[case]]\nid = "a"\nsteps = 10\nsigma = 1\ndelta = 1e-5\nchecks = ["eps-allocation"]\n')
    code = main(["audit", "--cases", str(cases), "--peers", "random_allocation", "--json"])
    rec = json.loads(capsys.readouterr().out)
    assert code == 0 and rec["cases"][0] == {
        "id": "a",
        "steps": 10,
        "checks": ["eps-allocation"],
        "epochs": 1,
        "sigma": "1",
        "delta": "0.00001",
    }
    sides = {row["method"]: row.get("side", "upper") for row in rec["rows"]}
    assert sides == {"combined": "upper", "lower-bound": "lower"}
