"""Regressions of the attack review of issue 39 (helper H4): huge rationals are never spelled out,
valid inputs never exit 2 on an internal overflow, exit codes name their cause, audit honours its
budget, and input checks are uniform (duplicate keys, non-ASCII digits, control characters)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.audit.adapters import Adapter, PeerValue, call_peer
from certdp.audit.cases import Case, parse_cases
from certdp.audit.reference import sigma_interval
from certdp.audit.run import run_audit
from certdp.budget import parse_memory
from certdp.cli import main
from certdp.enclose import lower_float, to_ball, upper_float, workprec
from certdp.errors import BudgetExhausted, InvalidArgument, Unsupported, fmt_value
from certdp.notions.eps_delta import EXP_KEPT, _exp_at_most_1
from certdp.notions.tv_numeric import approx_tv_monte_carlo
from certdp.pairs.params import MAX_RATIO_BITS, exact_str


def test_exact_str_of_a_huge_ratio_is_short_and_never_raises() -> None:
    # 3^200000 / (7 * 2^317000 + 1): str() of either term exceeds CPython's 4300-digit limit
    v = Fraction(3**200000, 7 * 2**317000 + 1)
    text = exact_str(v)
    assert text.startswith("~") and len(text) < 80, text
    # the shown digits agree with the value: log10 v = 200000 log10 3 - 317000 log10 2 - log10 7
    mant, exp = text[1:].split()[0].split("e")
    shown = Fraction(mant) * Fraction(10) ** int(exp)
    assert abs(shown / v - 1) < Fraction(1, 10**4)
    assert "317003-bit" in text
    neg = exact_str(-v)
    assert neg.startswith("~-") and neg[2:] == text[1:]


def test_exact_str_stays_exact_below_the_limit() -> None:
    for v in (Fraction(1, 3), Fraction(2**MAX_RATIO_BITS - 1, 3), Fraction(-5, 2 ** (MAX_RATIO_BITS - 2) * 3)):
        assert Fraction(exact_str(v)) == v


def test_sigma_bracket_probes_stay_short_and_undecided_is_one_short_line() -> None:
    probes: list[Fraction] = []

    def meets(s: Fraction) -> bool | None:
        probes.append(s)
        return None if len(probes) == 39 else False  # never met; undecided at the last probe

    lo, hi, reason = sigma_interval(meets, Fraction(1), Fraction(1, 10**7))
    assert len(probes) == 39 and hi is None and lo == probes[-2]
    # exact products of 1001/1000 squared and squared again grew past 200k bits before
    assert max(max(p.numerator.bit_length(), p.denominator.bit_length()) for p in probes) < 200
    assert reason.startswith("undecided at sigma=") and "\n" not in reason and len(reason) < 60
    assert Fraction(reason.split("=")[1]) == probes[-1]


# F2: a delta and a TV are at most 1; a conversion bound or chi^2 past the enclosure range
# (e^1000000) gave exit 2 "exceeds the range of certdp enclosures" on valid input.


def _run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object]]:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else {})


@pytest.mark.parametrize(
    "argv",
    [
        ["--q", "1e-5", "--sigma", "0.03", "--steps", "1000", "--eps", "0.001", "--via", "rdp"],
        ["--q", "0.999999", "--sigma", "0.01", "--steps", "1000000", "--eps", "1e-6", "--via", "rdp"],
    ],
)
def test_delta_past_the_enclosure_range_is_capped_at_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, rec = _run_json(["delta", "subsampled-gaussian", *argv], capsys)
    assert code == 0, rec
    assert Fraction(str(rec["upper"])) == 1 and Fraction(str(rec["lower"])) >= 0
    assert any("capped at 1" in w for w in rec["warnings"]), rec  # type: ignore[union-attr]


@settings(max_examples=60, deadline=None)
@given(st.floats(-1e7, 1e7), st.floats(0, 1e3))
def test_exp_at_most_1_contains_min_1_exp(mid: float, rad: float) -> None:
    lo, hi = mid - rad, mid + rad
    with workprec(64):
        ball = to_ball(lo).union(to_ball(hi))
        got = _exp_at_most_1(ball)
        kept = hi < EXP_KEPT  # below it e^g itself (the signed infimum shows how far above 1)
        for x in (lo, mid, hi):
            truth = mpmath.exp(mpmath.mpf(x)) if kept else min(mpmath.mpf(1), mpmath.exp(mpmath.mpf(x)))
            assert lower_float(got) <= truth <= upper_float(got)
        if not kept:  # never e^hi itself (which overflows the enclosure range): 1 plus ball rounding at most
            assert upper_float(got) <= 1 + 2.0**-20


def test_tv_closed_form_at_a_tiny_sigma_answers_with_the_log_of_chi2(capsys: pytest.CaptureFixture[str]) -> None:
    code, rec = _run_json(["tv", "random-allocation", "--steps", "10", "--epochs", "1", "--sigma", "0.001"], capsys)
    assert code == 0, rec
    assert Fraction(str(rec["upper"])) <= 1 and Fraction(str(rec["accuracy_upper"])) <= 1
    assert rec["chi2_upper"] is None
    with mpmath.workdps(60):  # log(1 + (e^{1/sigma^2} - 1)/M), E = 1
        truth = mpmath.log1p(mpmath.expm1(mpmath.mpf(10) ** 6) / 10)
        got = mpmath.mpf(str(rec["log1p_chi2_upper"]))
        assert truth <= got <= truth * (1 + mpmath.mpf(10) ** -15)


# F4: a claim whose parameter is outside its domain is the file's fault (exit 2), not imprecise (3).
CLAIM_FILE = """[paper]
id = "x"
title = "t"
authors = "a"
arxiv = "1607.00133"

[[claim]]
id = "c1"
where = "w"
printed = "1.0"
quote = "q"
statement = "s"
kind = "value"
quantity = "eps_rdp_grid"
params = {{ q = "{q}", sigma = "4", steps = 10, delta = "1e-5", grid = "moments-2-32", conversion = "classic" }}
"""


def test_claim_with_a_parameter_out_of_its_domain_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(CLAIM_FILE.format(q="1e-999"))
    html = tmp_path / "r.html"
    assert main(["claims", "check", "--file", str(bad), "--jobs", "1", "--html", str(html)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "c1" in err and "q=" in err and "1e-100" in err, err
    assert not html.exists()  # refused before any report is written
    good = tmp_path / "good.toml"  # the same file with a q in range computes (refuted or imprecise: not 2)
    good.write_text(CLAIM_FILE.format(q="0.01"))
    assert main(["claims", "check", "--file", str(good), "--jobs", "1"]) in (0, 1, 3)


# F5: certdp's own budget is never a peer's failure nor an inconclusive row: the audit stops, exit 3.


def test_a_budget_spent_inside_a_peer_call_propagates() -> None:
    def peer() -> float:
        raise BudgetExhausted("max-seconds=30 ran out")

    with pytest.raises(BudgetExhausted):
        call_peer(peer)
    value, _, error, _ = call_peer(lambda: 1 / 0)  # a peer's own failure is still a row
    assert error.startswith("ZeroDivisionError") and value != value


def test_a_budget_spent_in_a_reference_propagates(monkeypatch: pytest.MonkeyPatch) -> None:
    import certdp.audit.reference as reference

    def spent(*args: object, **kwargs: object) -> None:
        raise BudgetExhausted("max-memory=64MiB: the next product does not fit")

    monkeypatch.setattr(reference, "pld_bounds", spent)
    with pytest.raises(BudgetExhausted, match="max-memory"):
        reference.eps_pld_reference(Fraction(1, 100), Fraction(1), 10, Fraction(1, 10**5))

    def refused(*args: object, **kwargs: object) -> None:
        raise Unsupported("the lattice refuses")

    monkeypatch.setattr(reference, "pld_bounds", refused)  # certdp's other failures: the RDP side, a reason
    ref = reference.eps_pld_reference(Fraction(1, 100), Fraction(1), 10, Fraction(1, 10**5))
    assert ref.lower is None and ref.upper is not None and "lattice refuses" in ref.reason


class _SpentPeer(Adapter):
    name = "spent"
    package = "none"

    def __init__(self) -> None:
        self.path = "-"

    def version(self) -> str:
        return "0"

    def evaluate(self, case: Case) -> list[PeerValue]:
        return [self.value("m", "eps-pld", lambda: (_ for _ in ()).throw(BudgetExhausted("max-seconds=1 ran out")))]


def test_run_audit_stops_at_certdp_budget_saying_how_far_it_got() -> None:
    case = Case(id="c", q=Fraction(1, 100), steps=10, checks=("eps-pld",), sigma=Fraction(1), delta=Fraction(1, 10**5))
    with pytest.raises(BudgetExhausted) as info:
        run_audit([case], [_SpentPeer()])
    msg = str(info.value)
    assert "max-seconds=1 ran out" in msg and "0 of 1 case-peer runs" in msg and "peer spent" in msg


# F6: the documented sigma range [1e-3, 1e4] of the numeric TV methods includes its ends (the float
# 1e-3 is above 1/1000), and a sigma whose e^(1/sigma^2) overflows a float is refused with the
# lattice's true reason, not an OverflowError traceback (sigma = 0.01 printed one).


@pytest.mark.parametrize("sigma", ["0.001", "0.01", "0.03"])
def test_tv_lattice_at_a_tiny_sigma_is_refused_for_its_size(sigma: str, capsys: pytest.CaptureFixture[str]) -> None:
    for method in ("certified", "exact"):
        argv = ["tv", "random-allocation", "--steps", "10", "--epochs", "1", "--sigma", sigma, "--method", method]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "outside" not in err and "more than 1e308" in err, err


def test_tv_sigma_range_ends_are_inside() -> None:
    from certdp.notions.tv_numeric import _sigma_in_range

    assert _sigma_in_range("0.001") == 0.001 and _sigma_in_range("10000") == 1e4
    for outside in ("0.000999", "10000.001"):
        with pytest.raises(InvalidArgument, match="is outside"):
            _sigma_in_range(outside)
    value, se = approx_tv_monte_carlo(10, 1, "0.001", n=100)  # the end itself is computed
    assert value == 1.0 and se == 0.0


# F7: a JSON case file that names a key twice is refused (the last one won silently), like
# certificates and events.
ROW = '"q": 0.01, "sigma": 1, "steps": 10, "delta": 1e-5, "checks": ["eps-rdp"]'


@pytest.mark.parametrize(
    "text",
    [
        '[{"id": "a", ' + ROW + ', "id": "b"}]',
        '{"case": [{"id": "a", ' + ROW + '}], "case": []}',
        '[{"id": "a", ' + ROW + ', "sigma": 2}]',
    ],
)
def test_json_cases_with_a_duplicate_key_exit_2(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cases.json"
    path.write_text(text)
    assert main(["audit", "--cases", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "duplicate key" in err and str(path) in err, err
    assert parse_cases(
        text.replace(', "id": "b"', "").replace(', "case": []', "").replace(', "sigma": 2', ""), "json", "x"
    )


# F8: --max-memory takes ASCII digits only, like --max-seconds (٤GiB was accepted as 4 GiB).


@pytest.mark.parametrize("text", ["\u0664GiB", "\uff14GiB", "\u0664\u0660\u0660MB", "1\u0660GiB"])
def test_max_memory_refuses_non_ascii_digits(text: str) -> None:
    with pytest.raises(InvalidArgument, match=r"max-memory=.* must be a size"):
        parse_memory(text)


def test_max_memory_still_reads_ascii_sizes() -> None:
    assert parse_memory("4GiB") == 4 << 30 and parse_memory("500MB") == 500 * 10**6
    assert parse_memory("1.5GiB") == 3 << 29


# F9: one form for every file error ("event=FILE: ...", "cases='' must be a file path"), and a
# control character in a path is echoed escaped.


def test_an_event_field_error_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # (-0.0 is a noise of 0: not private, answered eps = inf like 0.0; a negative noise is an error)
    ev = tmp_path / "neg.json"
    ev.write_text('{"class_name": "GaussianDpEvent", "noise_multiplier": -1.0}')
    assert main(["eps", "--event", str(ev), "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err.strip()
    # the path as messages echo it (fmt_value caps a long one: the xdist workers' paths are long)
    assert err.startswith(f"certdp: error: event={fmt_value(str(ev))}: ")
    assert "noise_multiplier" in err and err.count("event=") == 1


def test_audit_cases_empty_path_is_named_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--cases", ""]) == 2
    assert "cases='' must be a file path" in capsys.readouterr().err


def test_keygen_echoes_a_control_character_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "a\x01b"
    assert main(["keygen", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "\x01" not in text and "a\\x01b" in text
