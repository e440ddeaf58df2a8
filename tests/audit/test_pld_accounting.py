"""The pld-accounting peer (Feldman and Shenfeld, arXiv:2602.17284) in the audit, with the real
package (skipped cleanly when it is not installed): its two-sided random-allocation epsilon and
its Poisson-subsampled PLD, each held against certdp's certified enclosure; its band is also an
independent float check of certdp's random-allocation reference."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from certdp.audit.adapters import PeerMissing, load_adapter
from certdp.audit.cases import case_from_dict
from certdp.audit.run import run_audit

ALLOC = {"id": "a", "steps": 10, "epochs": 1, "sigma": 1, "delta": 1e-5, "checks": ["eps-allocation"]}
PLD = {"id": "p", "q": 0.5, "sigma": 5, "steps": 10, "delta": 1e-3, "checks": ["eps-pld"]}
DELTA = {"id": "d", "q": 0.05, "sigma": 1, "steps": 50, "eps": 1, "checks": ["delta-pld"]}


@pytest.fixture(scope="module")
def adapter():
    if importlib.util.find_spec("PLD_accounting") is None:
        pytest.skip("pld-accounting is not installed")
    return load_adapter("pld_accounting")


def rows_by_method(result):
    return {(r.peer.method, r.peer.kind): r for r in result.rows}


def test_allocation_band_both_ends_judged_and_replayed(adapter):
    pytest.importorskip("certdp.notions.allocation_dp")
    res = run_audit([case_from_dict(ALLOC, "c")], [adapter])
    rows = rows_by_method(res)
    upper, lower = rows[("allocation-upper", "eps-allocation")], rows[("allocation-lower", "eps-allocation")]
    assert upper.peer.side == "upper" and lower.peer.side == "lower"
    assert lower.peer.value <= upper.peer.value
    ref = upper.reference
    assert ref.lower is not None and ref.upper is not None and lower.reference is ref
    # the peer's float band and certdp's certified enclosure are independent: they must overlap
    assert lower.peer.value <= float(ref.upper) and float(ref.lower) <= upper.peer.value
    assert upper.judgement.verdict in ("exact", "conservative")
    assert lower.judgement.verdict in ("exact", "conservative")
    assert res.unsound == 0
    # the recorded call makes the same number again (one call gives both ends)
    for row in (upper, lower):
        call = row.peer.call
        assert call["args"]["result"] in ("upper", "lower") and "epsilon_accuracy" in call["defaults"]
        adapter._last = None
        assert adapter.replay(call) == row.peer.value


def test_poisson_subsampled_pld_against_the_exact_values(adapter):
    res = run_audit([case_from_dict(PLD, "c"), case_from_dict(DELTA, "c")], [adapter])
    rows = rows_by_method(res)
    eps = rows[("subsample-pld", "eps-pld")]
    assert eps.judgement.verdict in ("exact", "conservative"), eps.judgement
    assert eps.peer.call["args"]["value_discretization_interval"] == adapter.default_vdi
    delta = rows[("subsample-pld", "delta-pld")]
    assert delta.judgement.verdict in ("exact", "conservative"), delta.judgement
    assert adapter.replay(eps.peer.call) == eps.peer.value


def test_poisson_case_with_a_vdi_and_other_checks(adapter):
    """The case's pld_vdi is passed; checks pld-accounting does not answer give no rows."""
    res = run_audit([case_from_dict({**PLD, "pld_vdi": 1e-3, "checks": ["eps-pld", "rdp"]}, "c")], [adapter])
    assert [(r.peer.method, r.peer.kind) for r in res.rows] == [("subsample-pld", "eps-pld")]
    assert res.rows[0].peer.call["args"]["value_discretization_interval"] == 1e-3
    calib = case_from_dict({"id": "s", "q": 0.01, "steps": 10, "eps": 1, "delta": 1e-5, "checks": ["sigma"]}, "c")
    assert adapter.evaluate(calib) == []


def test_missing_package_is_a_one_line_peer_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "PLD_accounting", None)  # its import raises ImportError
    with pytest.raises(PeerMissing) as exc:
        load_adapter("pld_accounting")
    message = str(exc.value)
    assert "pld-accounting" in message and "\n" not in message
