"""Case files, claims and the ``certdp audit`` command: bad input is one line naming the field and
exits 2; a claim's verdict sets the exit code; reports are written whole or not at all."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from certdp.audit.cases import case_from_dict, default_suite, load_cases, parse_cases
from certdp.audit.claim import parse_claim
from certdp.cli import main
from certdp.errors import InvalidArgument

TOML = """
[[case]]
id = "a"
q = 0.01
sigma = 1.1
steps = 1000
delta = 1e-6
orders = [1.5, 2]
checks = ["rdp", "eps-rdp"]
"""


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_toml_and_json_read_the_same_exact_case(tmp_path):
    t = tmp_path / "c.toml"
    t.write_text(TOML)
    (toml_case,) = load_cases(t)
    j = tmp_path / "c.json"
    j.write_text(json.dumps({"case": [toml_case.to_dict()]}))
    (json_case,) = load_cases(j)
    assert toml_case == json_case
    assert toml_case.q == Fraction(1, 100) and toml_case.delta == Fraction(1, 10**6)  # decimals, not floats
    assert toml_case.orders == (Fraction(3, 2), Fraction(2))


def test_default_suite_covers_the_issue_ranges():
    suite = default_suite()
    assert len(suite) >= 30
    sigmas = [c.sigma for c in suite if c.sigma is not None]
    assert min(sigmas) <= Fraction(1, 2) and max(sigmas) >= 20
    assert min(c.steps for c in suite) == 1 and max(c.steps for c in suite) >= 10**5
    deltas = [c.delta for c in suite if c.delta is not None]
    assert max(deltas) >= Fraction(1, 10**3) and min(deltas) <= Fraction(1, 10**12)
    orders = {o for c in suite for o in c.orders}
    assert any(o.denominator != 1 for o in orders) and any(o.denominator == 1 for o in orders)
    assert {"rdp", "eps-rdp", "eps-pld", "delta-pld", "sigma"} <= {k for c in suite for k in c.checks}
    assert min(c.q for c in suite) <= Fraction(1, 1000) and max(c.q for c in suite) == 1


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("sigma", -1, "a.sigma=-1 must be >= 0.0001"),
        ("q", 2, "a.q=2 must be <= 1"),
        ("q", "nan", "a.q=nan"),
        ("steps", 2.5, "a.steps=2.5 must be an integer"),
        ("delta", 1, "a.delta=1 must be < 1"),
        ("orders", [1, 2], "a.orders=1 must be > 1"),
        ("checks", ["rdp", "bogus"], "bogus"),
        ("colour", "red", "'colour' is not a case field"),
    ],
)
def test_bad_case_fields_are_named(field, value, message):
    raw = {"id": "a", "q": 0.01, "sigma": 1, "steps": 10, "delta": 1e-5, field: value}
    with pytest.raises(InvalidArgument) as exc:
        case_from_dict(raw, "case 1")
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_case_rules():
    with pytest.raises(InvalidArgument, match=r"a\.delta is required by the check 'eps-rdp'"):
        case_from_dict({"id": "a", "q": 0.1, "sigma": 1, "steps": 1, "checks": ["eps-rdp"]}, "case 1")
    with pytest.raises(InvalidArgument, match="has no sigma"):
        case_from_dict({"id": "a", "q": 0.1, "sigma": 1, "steps": 1, "eps": 1, "delta": 1e-5, "checks": ["sigma"]}, "c")
    with pytest.raises(InvalidArgument, match="appears twice"):
        parse_cases(TOML + TOML, "toml", "x.toml")
    with pytest.raises(InvalidArgument, match=r"cases=x\.toml is not valid TOML"):
        parse_cases("[[case]\nq=", "toml", "x.toml")
    with pytest.raises(InvalidArgument, match="non-empty list"):
        parse_cases("{}", "json", "x.json")


def test_claim_grammar():
    c = parse_claim("opacus prv eps=1.753 sigma=1.1 q=0.01 steps=1000 delta=1e-6")
    assert (c.peer, c.method, c.reported, c.kind, c.value) == ("opacus", "prv", "eps", "eps-pld", Fraction("1.753"))
    c = parse_claim("lib rdp rdp=0.0044 alpha=1.5 sigma=5 q=0.2 steps=1")
    assert c.kind == "rdp" and c.order == Fraction(3, 2)
    c = parse_claim("lib rdp eps=2 orders=2,4,8 sigma=1 q=0.01 steps=100 delta=1e-5")
    assert c.kind == "eps-rdp" and c.orders == (2, 4, 8)
    c = parse_claim("lib prv sigma=0.74 eps=3 delta=1e-5 q=0.01 steps=500")
    assert c.kind == "sigma-pld" and c.case.sigma is None
    for bad, msg in [
        ("opacus", "must read"),
        ("opacus prv q=0.01 eps=1 sigma=1 steps=1 delta=1e-5", "first KEY=VALUE"),
        ("opacus prv eps=1 sigma=-1 q=0.01 steps=10 delta=1e-6", "claim.sigma=-1 must be >= 0.0001"),
        ("opacus prv eps=1 sigma=1 q=0.01 steps=10", "claim.delta is required"),
        ("opacus prv eps=1 sigma=1 q=0.01 steps=10 delta=1e-6 color=red", "KEY=VALUE"),
        ("lib rdp rdp=0.1 sigma=1 q=0.1 steps=1", "needs its order"),
        # found by the attack review: huge reported values crashed with OverflowError, tiny sigma exited 3
        ("opacus prv eps=1e400 sigma=1 q=0.01 steps=1000 delta=1e-5", "eps=1e400 must be <= 10000"),
        ("opacus prv sigma=1e400 eps=1 q=0.01 steps=10 delta=1e-5", "sigma=1e400 must be <= 1000000"),
        ("opacus prv eps=1 sigma=1e-300 q=0.01 steps=1000 delta=1e-5", "claim.sigma=1e-300 must be >= 0.0001"),
        ("opacus prv eps=1 sigma=1 q=0.01 steps=1000 delta=1e-400", "claim.delta=1e-400 must be >= 1e-300"),
    ]:
        with pytest.raises(InvalidArgument) as exc:
            parse_claim(bad)
        assert msg in str(exc.value), (bad, str(exc.value))


def test_cli_claim_exit_codes(capsys):
    base = "sigma=5 q=0.2 steps=1 alpha=1.5"
    code, out, _ = run(["audit", "--claim", f"lib rdp rdp=0.004417 {base}"], capsys)
    assert code == 0 and "conservative" in out
    code, out, _ = run(["audit", "--claim", f"lib rdp rdp=0.0012 {base}", "--json"], capsys)
    rec = json.loads(out)
    assert code == 1 and rec["verdict"] == "UNSOUND" and Fraction(rec["lower"]) > Fraction("0.0012")
    code, out, _ = run(["audit", "--claim", f"lib rdp rdp=0.00121932982748022 {base}", "--json"], capsys)
    assert code == 0 and json.loads(out)["verdict"] == "exact"
    code, _, err = run(["audit", "--claim", "lib rdp rdp=0.1 sigma=0 q=0.2 steps=1 alpha=2"], capsys)
    assert code == 2 and err.count("\n") == 1 and "claim.sigma=0 must be >= 0.0001" in err


def test_cli_bad_inputs_exit_2(capsys, tmp_path):
    code, _, err = run(["audit", "--cases", str(tmp_path / "missing.toml")], capsys)
    assert code == 2 and "cannot be read" in err
    code, _, err = run(["audit", "--suite", "default", "--peers", "nosuchpeer"], capsys)
    assert code == 2 and "nosuchpeer" in err
    code, _, err = run(["audit"], capsys)
    assert code == 2
    code, _, err = run(["audit", "--claim", "a prv eps=1 sigma=1 q=0.1 steps=1 delta=1e-5", "--html", "x.html"], capsys)
    assert code == 2 and "does not apply to --claim" in err


def test_missing_peer_is_named(monkeypatch):
    from certdp.audit import adapters

    with pytest.raises(adapters.PeerMissing) as exc:
        adapters.require("certdp_no_such_module", "fake", "fake-package")
    assert "pip install fake-package" in str(exc.value) and "\n" not in str(exc.value)


def test_write_atomic_leaves_no_partial_file(tmp_path, monkeypatch):
    from certdp.audit import report

    target = tmp_path / "r.html"
    target.write_text("old")

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report.os, "replace", boom)
    with pytest.raises(InvalidArgument, match=r"html=.* cannot be written"):
        report.write_atomic(target, "new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.html"]
