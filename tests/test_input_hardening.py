"""Input hardening: extreme or unrecordable inputs (huge exponents, sigmas a certificate cannot
record, widths out of reach, hand-edited dyadic ends) are refused early with a message that says
what to change, and calibrate and verify say what they proved. Each test names the failure it
guards against ("Finding N" in the comments numbers them)."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

import certdp
from certdp.cli import main, run_certs
from certdp.errors import InvalidArgument
from tests.counters import peak_traced_bytes
from tests.hostile_certificates import _body_edit, _set, sg_body


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("text", ["1E+999999999", "1E-99999999", "-1E+9999999"])
def test_a_decimal_with_a_huge_exponent_is_refused_at_once(text: str) -> None:
    # Finding 4: Fraction(Decimal("1E+999999999")) built a billion-digit integer (a hang). Measured,
    # not timed: refused within 1 MB of Python memory (that integer is 400 MB, 1E-99999999's 40 MB).
    error, peak = peak_traced_bytes(lambda: certdp.Gaussian(sigma=Decimal(text)))
    assert isinstance(error, InvalidArgument), error
    assert re.match(r"^sigma=.* must be a number between 1e-1000 and 1e1000", str(error)), error
    assert peak < 1 << 20, peak
    assert certdp.Gaussian(sigma=Decimal("1.5")).sigma == Fraction(3, 2)


def test_calibrate_never_goes_below_the_sigma_a_certificate_records(capsys: pytest.CaptureFixture[str]) -> None:
    # Finding 6: sigma = 0.000317 was returned (exit 0) and failed as a certificate (exit 1).
    code, out, err = run("calibrate subsampled-gaussian --q 0.5 --steps 1 --epsilon 1e7 --delta 0.5".split(), capsys)
    assert code == 2 and out == "" and "epsilon=1e7" in err and "sigma=0.001" in err, err


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [("step", "3/70", "no finite decimal"), ("q", "1/3", "no finite decimal"), ("delta", "1e-300", "302 decimal")],
)
def test_out_refuses_an_unrecordable_input_before_the_search(
    flag: str,
    value: str,
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Finding 7: found only after the search, and named an internal path or sigma.
    args = {"q": "0.01", "epsilon": "3", "delta": "1e-5", "step": "0.01", flag: value}
    argv = ["calibrate", "subsampled-gaussian", "--steps", "10", *[f"--{k}={v}" for k, v in args.items()]]
    out = tmp_path / "c.json"

    def search(*args: object, **kwargs: object) -> None:
        raise AssertionError("the search ran before the input was refused")

    for name in ("calibrate_epsilon", "calibrate_pld", "calibrate_tv"):  # counted, not timed: never called
        monkeypatch.setattr(run_certs, name, search)
    code, _, err = run([*argv, "--out", str(out)], capsys)
    assert code == 2 and err.startswith(f"certdp: error: {flag}={value}") and says in err, err
    assert not out.exists()


def test_certified_tv_messages_name_the_default_and_the_width_to_ask(capsys: pytest.CaptureFixture[str]) -> None:
    # Finding 8: "ask for a smaller --width" (larger is what helps), width=1e-6 never passed.
    code, _, err = run("tv random-allocation --steps 1 --epochs 37 --sigma 3.3 --method certified".split(), capsys)
    assert code == 2 and "width=1e-6 (the default)" in err, err
    long = "0.000000000001" + "0" * 1000
    code, _, err = run(["tv", "random-allocation", "--steps", "10", "--sigma", "1", "--method", "certified",
                        f"--width={long}"], capsys)  # fmt: skip
    assert code == 2 and len(err) < 400, err


def test_the_closed_form_tv_at_a_tiny_sigma_is_answered(capsys: pytest.CaptureFixture[str]) -> None:
    # Finding 9: chi^2 = e^{10^4} has a width beyond the float range, which was read as "not met".
    code, out, err = run("tv random-allocation --steps 1 --epochs 1 --sigma 0.01 --json".split(), capsys)
    assert code == 0, err
    rec = json.loads(out)
    assert Fraction(rec["lower"]) > Fraction("0.999999") and Fraction(rec["upper"]) >= 1


def test_calibrate_offers_no_precision_flags(capsys: pytest.CaptureFixture[str]) -> None:
    # Finding 11: --help listed --prec and --max-prec, which calibrate then refused.
    code, out, _ = run(["calibrate", "--help"], capsys)
    assert code == 0 and "--max-seconds" in out and "--prec" not in out


@pytest.mark.parametrize(
    ("field", "value"),
    [("upper_dyadic", ["1", 0]), ("lower_dyadic", ["-5", 0]), ("upper_dyadic", ["9" * 100000, 0]),
     ("lower_dyadic", ["1", 10**9])],
)  # fmt: skip
def test_verify_checks_the_recorded_dyadic_ends(
    field: str, value: list[object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Finding 12: the dyadic ends were never read, so a file could display a bound it did not prove.
    path = tmp_path / "c.json"
    path.write_bytes(_body_edit(sg_body(), _set(f"claim/result/{field}", value)))
    code, _, err = run(["verify", str(path), "--allow-untrusted"], capsys)
    assert code in (1, 2) and "body/claim/result" in err, err


def test_a_refutation_beyond_the_limits_leaves_the_claim_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    # Attack round 2: calibrate certified the claim for a minute, then exited 2 because the
    # refutation's lower-side grid was beyond the memory limit. The claim stands on its own.
    import certdp.calibrate.random_allocation as ra
    from certdp.errors import LimitExceeded

    real_grid_work = ra.grid_work

    def lower_side_too_big(steps: int, epochs: int, sigma: float, grid: object, side: str) -> None:
        if side == "lower":
            raise LimitExceeded("grid estimated memory=2e9 exceeds the verifier limit (injected)")
        real_grid_work(steps, epochs, sigma, grid, side)  # type: ignore[arg-type]

    monkeypatch.setattr(ra, "grid_work", lower_side_too_big)
    res = ra.calibrate_tv(10, 1, "0.1", step="0.01")
    assert res.tv_upper.upper <= Fraction(1, 10) and res.tv_lower_at_miss is None
    assert res.miss_reason is not None and "beyond the work limits" in res.miss_reason


def test_the_verify_report_says_what_was_proved_about(capsys: pytest.CaptureFixture[str]) -> None:
    # Attack round 2: the report said only "epsilon <= 3"; an auditor had to read the file.
    repo = Path(__file__).resolve().parents[1]
    cert = repo / "certificates" / "dpsgd_q0.005_n500_eps3.json"
    body = json.loads(cert.read_text())["body"]
    code, out, err = run(["verify", str(cert), "--pubkey", str(repo / "certificates" / "certdp-project.pub")], capsys)
    assert code == 0, err
    sigma = body["claim"]["mechanism"]["params"]["sigma"]
    assert f"sigma={sigma}, direction=both) x 500 steps, delta=0.00001" in out, out
